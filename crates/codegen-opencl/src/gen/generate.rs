//! `generate`: its view, the body substituted at each index read, or a C function of the index
//! where the body needs statements (taking the scalars it reads from outside, the program's
//! input buffers it reads with `at`, the sizes and the bounds check's flag as arguments); a
//! tuple-valued body is a zip of one view per component.

use super::*;

impl Gen<'_> {
    /// The view of `generate n f`: `f`'s body as an expression of its index, substituted where
    /// an element is read. A body with `let` bindings (or temporaries of deep expressions)
    /// needs statements, so it becomes a C function of the index, called there instead; the
    /// scalars and vectors it reads from outside, and the input buffers, are passed to it as
    /// arguments (`validate` admits no other reads, and no array work, in such a body).
    pub(super) fn generate_view(&mut self, e: ExprId, f: ExprId) -> Result<Rc<View>> {
        let Expr::Lambda { body, .. } = self.prog.expr(f) else {
            return Err(self.err(e, "internal: generate"));
        };
        if has_let(self.prog, *body) {
            return self
                .generate_view_as(e, f, true)?
                .ok_or_else(|| self.err(e, "internal: generate"));
        }
        // Whether a body without `let` needs statements shows only once it is generated (a deep
        // expression gets temporaries): then it is generated again, reading from outside
        // through arguments, and what the first try recorded is dropped.
        let before = (self.checks.len(), self.source.len(), self.views.len());
        if let Some(v) = self.generate_view_as(e, f, false)? {
            return Ok(v);
        }
        self.checks.truncate(before.0);
        self.division_checks.retain(|c| *c < before.0);
        self.source.truncate(before.1);
        self.views.truncate(before.2);
        self.generate_view_as(e, f, true)?
            .ok_or_else(|| self.err(e, "internal: generate"))
    }

    /// [`Gen::generate_view`], the values read from outside passed as arguments if
    /// `args_of_outside`;
    /// `None` when the body needs statements but `args` is not set.
    fn generate_view_as(&mut self, e: ExprId, f: ExprId, args_of_outside: bool) -> Result<Option<Rc<View>>> {
        let Expr::Lambda { params, body } = self.prog.expr(f).clone() else {
            return Err(self.err(e, "internal: generate"));
        };
        let param = CExpr::var(&self.fresh("g"));
        let CExpr::Var(g) = param.clone() else {
            unreachable!("made a variable above")
        };
        self.bind(
            params[0],
            Bound::View(Rc::new(View::Value {
                expr: param.clone(),
                ty: Type::int(),
            })),
        );
        // With `let`s, every value read from outside becomes a parameter of the C function:
        // read here, where the view is made, as an inline body would read it.
        let mut fn_params = vec![ast::Param {
            ty: CType::INT,
            name: g.clone(),
        }];
        let mut args = vec![param.clone()];
        let mut outside = vec![];
        if args_of_outside {
            for v in ir::host::free_vars(self.prog, f) {
                let ty = self.info.var_ty(v).clone();
                // An array (a parameter of the program, or one made in the kernel) stays bound
                // to its view: the C function takes the buffers and the kernel's indices that
                // the view reads as arguments of their own, under the same names (see
                // `outside_names`).
                if matches!(ty, Type::Array(..)) && matches!(self.env[v.index()], Some(Bound::View(_))) {
                    continue;
                }
                let (Type::Scalar(_) | Type::Vector(..), Some(Bound::View(view))) = (&ty, self.env[v.index()].clone())
                else {
                    return Err(self.err(
                        f,
                        format!("internal: `generate` reads `{}` from outside", self.prog.var(v).name),
                    ));
                };
                let read = view.read(&[]).map_err(|m| self.err(f, m.0))?;
                let Val::E(arg) = self.val_of(read) else {
                    return Err(self.err(f, "internal: a scalar read as a tuple"));
                };
                let name = self.fresh(&self.prog.var(v).name.clone());
                fn_params.push(ast::Param {
                    ty: self.ctype(&ty)?,
                    name: name.clone(),
                });
                args.push(arg);
                outside.push((v, self.env[v.index()].take()));
                self.bind(
                    v,
                    Bound::View(Rc::new(View::Value {
                        expr: CExpr::var(&name),
                        ty,
                    })),
                );
            }
        }
        // The body is generated on a kernel context of its own, so that any statements it
        // needs land nowhere else (a `generate` may also be read outside every kernel).
        let outer = self.k.replace(KernelCx::new(Level::Item));
        let buffers = self.mem.buffers.len();
        let r = self.scalar_val(body);
        let emitted = self.emitted();
        let cx = std::mem::replace(&mut self.k, outer).expect("set above");
        for (v, b) in outside.iter().rev() {
            self.env[v.index()] = b.clone();
        }
        let result = r?;
        if emitted == 0 && outside.is_empty() {
            return Ok(Some(zip_of(&result, &|x| {
                Rc::new(View::Generate {
                    param: param.clone(),
                    body: x.clone(),
                })
            })));
        }
        if !args_of_outside {
            return Ok(None);
        }
        let stmts = cx.stack.into_iter().flat_map(|fr| fr.body).collect::<Vec<_>>();
        let mut all = ast::idents(&stmts);
        let mut leaves = vec![];
        leaves_of(&result, &mut leaves);
        all.append(&mut ast::idents(
            &leaves.into_iter().map(Stmt::Call).collect::<Vec<_>>(),
        ));
        let mut foreign = vec![];
        for n in all {
            if !fn_params.iter().any(|p| p.name.as_str() == n.as_str()) && !declares(&stmts, n.as_str()) {
                foreign.push(n);
            }
        }
        foreign.sort();
        foreign.dedup();
        let unknown = self.outside_names(&foreign, &mut fn_params, &mut args)?;
        if let Some(n) =
            unknown.or_else(|| (self.mem.buffers.len() != buffers || !cx.decls.is_empty()).then(String::new))
        {
            return Err(self.err(
                f,
                format!("internal: the function of `generate` reads `{n}`, which its C function cannot see"),
            ));
        }
        let ty = self.cty(body)?;
        let call = GenerateCall {
            param,
            params: fn_params,
            args,
            stmts,
        };
        self.generate_functions(f, &result, &ty, &call).map(Some)
    }

    /// The kernel's names that the C function of a `generate` reads, made parameters of it and
    /// passed on under the same names: buffers (the program's inputs, and the global, local or
    /// private arrays of the arrays it reads with `at`), the kernel's scalars in scope (loop
    /// indices, work-item ids, lengths read on the device), sizes, and the flag an
    /// out-of-range `at` raises. Returns the first other name (none is expected).
    fn outside_names(
        &mut self,
        names: &[String],
        params: &mut Vec<ast::Param>,
        args: &mut Vec<CExpr>,
    ) -> Result<Option<String>> {
        for n in names {
            let buffer = self
                .mem
                .buffers
                .iter()
                .find(|b| self.buf_ident(&b.name).as_str() == n.as_str())
                .map(|b| {
                    (
                        b.elem.clone(),
                        b.name.clone(),
                        b.space,
                        matches!(b.role, Role::Input(_)),
                    )
                });
            let (ty, name) = if let Some((elem, buf, space, input)) = buffer {
                let elem = self.buffer_ctype(&elem)?;
                let ty = CType::Ptr {
                    space,
                    elem: Box::new(elem),
                    is_const: input,
                    restrict: false,
                };
                (ty, self.buf_ident(&buf))
            } else if let Some((ty, name)) = self.kernel_name(n) {
                (ty, name)
            } else if self.error_flag.as_str() == n.as_str() {
                let ty = CType::Ptr {
                    space: AddressSpace::Global,
                    elem: Box::new(CType::INT),
                    is_const: false,
                    restrict: false,
                };
                (ty, self.error_flag.clone())
            } else if let Some((_, c)) = self.size_names.iter().find(|(_, c)| c.as_str() == n.as_str()) {
                (CType::INT, c.clone())
            } else {
                return Ok(Some(n.clone()));
            };
            args.push(CExpr::var(&name));
            params.push(ast::Param { ty, name });
        }
        Ok(None)
    }

    /// The type and name of `n` where it is a variable in scope at the current place of the
    /// kernel: a loop index of an open loop, a scalar declared in an open block, or an array
    /// declared there (passed as a pointer to its first element).
    pub(super) fn kernel_name(&self, n: &str) -> Option<(CType, Ident)> {
        let k = self.k.as_ref()?;
        let decl = |s: &Stmt| match s {
            Stmt::Decl {
                ty, name, space, len, ..
            } if name.as_str() == n => Some(match len {
                None => (ty.clone(), name.clone()),
                Some(_) => (
                    CType::Ptr {
                        space: space.unwrap_or(AddressSpace::Private),
                        elem: Box::new(ty.clone()),
                        is_const: false,
                        restrict: false,
                    },
                    name.clone(),
                ),
            }),
            Stmt::Decl { .. }
            | Stmt::Assign { .. }
            | Stmt::Call(_)
            | Stmt::For { .. }
            | Stmt::If { .. }
            | Stmt::Block(_)
            | Stmt::Barrier(_)
            | Stmt::VStore { .. }
            | Stmt::Asm(_) => None,
        };
        k.decls.iter().find_map(decl).or_else(|| {
            k.stack.iter().find_map(|fr| match &fr.head {
                Head::For { var, .. } if var.as_str() == n => Some((CType::INT, var.clone())),
                Head::Root | Head::Block | Head::If(_) | Head::For { .. } => fr.body.iter().find_map(decl),
            })
        })
    }

    /// One C function per scalar or vector component of a `generate`'s element `v` of type
    /// `ty`, each running the body's statements and returning its component (the statements
    /// compute scalars only, so running them once per component reads nothing twice that
    /// could differ); a tuple is the zip of its components' views.
    fn generate_functions(&mut self, f: ExprId, v: &Val, ty: &Type, call: &GenerateCall) -> Result<Rc<View>> {
        match (v, ty) {
            (Val::E(x), t) => {
                let ret = self.ctype(t)?;
                let name = self.names.fresh("v_generate");
                let text = print::function_text(&ret, &name, &call.params, &call.stmts, x);
                self.source.push_str(&text);
                Ok(Rc::new(View::Generate {
                    param: call.param.clone(),
                    body: CExpr::call(name.to_string(), call.args.clone()),
                }))
            }
            (Val::T(vs), Type::Tuple(ts)) if vs.len() == ts.len() => Ok(Rc::new(View::Zip(
                vs.iter()
                    .zip(ts)
                    .map(|(v, t)| self.generate_functions(f, v, t, call))
                    .collect::<Result<_>>()?,
            ))),
            (Val::T(_), _) => Err(self.err(f, "internal: a tuple of another type than the `generate`'s")),
        }
    }
}

/// The C function of a `generate` whose body needs statements: its index, its parameters and
/// the values passed for them, and the statements.
struct GenerateCall {
    param: CExpr,
    params: Vec<ast::Param>,
    args: Vec<CExpr>,
    stmts: Vec<Stmt>,
}

/// The view of a `generate` whose element is `v`: `leaf` of a scalar or vector, the zip of the
/// components' views of a tuple (reading index `a` reads each component at `a`).
fn zip_of(v: &Val, leaf: &dyn Fn(&CExpr) -> Rc<View>) -> Rc<View> {
    match v {
        Val::E(x) => leaf(x),
        Val::T(vs) => Rc::new(View::Zip(vs.iter().map(|c| zip_of(c, leaf)).collect())),
    }
}

/// The scalar and vector components of `v`, in order.
fn leaves_of(v: &Val, out: &mut Vec<CExpr>) {
    match v {
        Val::E(x) => out.push(x.clone()),
        Val::T(vs) => vs.iter().for_each(|c| leaves_of(c, out)),
    }
}

/// Whether `e` holds a `let`.
fn has_let(prog: &Program, e: ExprId) -> bool {
    matches!(prog.expr(e), Expr::Let { .. }) || prog.children(e).iter().any(|c| has_let(prog, *c))
}

/// Whether `stmts` declare `name` (a variable or a loop index).
fn declares(stmts: &[Stmt], name: &str) -> bool {
    stmts.iter().any(|s| match s {
        Stmt::Decl { name: n, .. } => n.as_str() == name,
        Stmt::For { var, body, .. } => var.as_str() == name || declares(body, name),
        Stmt::If { then, els, .. } => declares(then, name) || declares(els, name),
        Stmt::Block(b) => declares(b, name),
        Stmt::Assign { .. } | Stmt::Call(_) | Stmt::Barrier(_) | Stmt::VStore { .. } | Stmt::Asm(_) => false,
    })
}
