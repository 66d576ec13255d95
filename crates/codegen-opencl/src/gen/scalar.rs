//! Scalar expressions: operators, literals, conditionals and tuples built as expression trees;
//! bounds-checked `at`; deep expressions bound to temporaries; `dot`/`length` of wide vectors
//! as lane arithmetic.

use super::*;

impl Gen<'_> {
    /// Declares private variables holding a value (tuples component by component).
    pub(super) fn declare(&mut self, r: &Read, ty: &Type, hint: &str) -> Result<Read> {
        match (r, ty) {
            (Read::Tuple(rs), Type::Tuple(ts)) => Ok(Read::Tuple(
                rs.iter()
                    .zip(ts)
                    .map(|(r, t)| self.declare(r, t, hint))
                    .collect::<Result<_>>()?,
            )),
            (Read::Expr(e), t) => {
                let name = self.fresh(hint);
                let ty = self.ctype(t)?;
                let init = self.access_expr(e);
                self.push(Stmt::decl(ty, &name, init));
                Ok(Read::Expr(Access::Value(CExpr::var(&name))))
            }
            (Read::Tuple(_), t) => Err(Diagnostic::new(
                Span::default(),
                format!("internal: tuple value of type {t}"),
            )),
        }
    }

    /// The element a loop binds its function's parameter to. A scalar read through a constant
    /// `pad` is a load under a condition (`j out of range ? fill : xs[j]`); substituted at each
    /// use, the same conditional load appears several times in one expression, and PoCL's LLVM
    /// (x86 with AVX-512) aborts selecting instructions for such a loop once it vectorizes the
    /// loads as masked loads under `fabs` and `-` (`difffuzz/repros/pocl_llvm_fabs_masked_load`).
    /// Read once into a private variable at the top of the loop body, an element read more than
    /// once (`x` in `body`) is one load, which that compiler builds; one read stays in place.
    pub(super) fn loop_elem(&mut self, view: Rc<View>, x: VarId, body: ExprId) -> Result<Rc<View>> {
        let ty = self.info.var_ty(x).clone();
        if self.k.is_none() || !stored_value(&ty) || !read_twice(self.prog, body, x) {
            return Ok(view);
        }
        let Ok(r) = view.read(&[]) else {
            return Ok(view);
        };
        if !read_guarded(&r) {
            return Ok(view);
        }
        let held = self.declare(&r, &ty, "p")?;
        Ok(self.read_view(held, &ty))
    }

    /// `at i xs`: the view of `xs` and the index, checked on the device (out of range sets the
    /// error flag, unless an enclosing `if` branch is not taken, and reads index 0 instead).
    /// A constant index that the length, as the kernel knows it, provably exceeds needs no
    /// check: a stencil's `at 0 nbh` of a window of 3 read 10 checks per jacobi output, and
    /// every such kernel carried the flag as an argument. (`validate` refuses a constant index
    /// out of range where the length is known.)
    pub(super) fn at_index(&mut self, e: ExprId, i_e: ExprId, xs_e: ExprId) -> Result<(Rc<View>, ArithExpr)> {
        let xs = self.value(xs_e)?;
        let n = self.len_of(xs_e)?;
        let i = self.scalar_expr(i_e)?;
        let constant = if let CExpr::Int(c) = &i {
            Some(*c)
        } else {
            int_literal(self.prog, i_e)
        };
        if let Some(c) = constant.filter(|c| *c >= 0) {
            let c = ArithExpr::cst(c);
            if c.prove_lt(&specialised(&n)) {
                return Ok((xs, c));
            }
        }
        let v = self.fresh("idx");
        let site = self.checks.len() + 1;
        self.checks.push(self.prog.span(e));
        self.push(Stmt::decl(CType::INT, &v, i));
        let out = CExpr::bin(
            BinOp::Or,
            CExpr::bin(BinOp::Lt, CExpr::var(&v), CExpr::Int(0)),
            CExpr::bin(BinOp::Ge, CExpr::var(&v), arith(&n)),
        );
        let out = self
            .guards
            .iter()
            .rev()
            .fold(out, |o, g| CExpr::bin(BinOp::And, g.clone(), o));
        self.open_if(out);
        let flag = CExpr::var(&self.error_flag);
        self.push(Stmt::Call(CExpr::call(
            "atomic_max",
            vec![flag, CExpr::Int(site as i64)],
        )));
        self.push(Stmt::assign(CExpr::var(&v), CExpr::Int(0)));
        self.close();
        let idx = ArithExpr::var(v.as_str(), Range::upto(n));
        Ok((xs, idx))
    }

    /// The view of `generate n f`: `f`'s body as an expression of its index, substituted where
    /// an element is read. A body with `let` bindings (or temporaries of deep expressions)
    /// needs statements, so it becomes a C function of the index, called there instead; the
    /// scalars and vectors it reads from outside are passed to it as arguments (`validate`
    /// admits no other reads, and no array work, in such a body).
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
        let result = match r? {
            Val::E(x) => x,
            Val::T(_) => return Err(self.err(f, "generate of tuples is not supported yet")),
        };
        if emitted == 0 && outside.is_empty() {
            return Ok(Some(Rc::new(View::Generate { param, body: result })));
        }
        if !args_of_outside {
            return Ok(None);
        }
        let mut stmts = cx.stack.into_iter().flat_map(|fr| fr.body).collect::<Vec<_>>();
        let mut all = ast::idents(&stmts);
        all.append(&mut ast::idents(&[Stmt::Call(result.clone())]));
        let foreign = all
            .iter()
            .find(|n| !fn_params.iter().any(|p| p.name.as_str() == n.as_str()) && !declares(&stmts, n.as_str()))
            .cloned();
        if let Some(n) =
            foreign.or_else(|| (self.mem.buffers.len() != buffers || !cx.decls.is_empty()).then(String::new))
        {
            return Err(self.err(
                f,
                format!("internal: the function of `generate` reads `{n}`, which its C function cannot see"),
            ));
        }
        let ty = self.cty(body)?;
        let ret = self.ctype(&ty)?;
        let name = self.names.fresh("v_generate");
        let text = print::function_text(&ret, &name, &fn_params, &std::mem::take(&mut stmts), &result);
        self.source.push_str(&text);
        Ok(Some(Rc::new(View::Generate {
            param,
            body: CExpr::call(name.to_string(), args),
        })))
    }

    /// The value of a scalar, vector or tuple expression, as C text (see `scalar_val`).
    pub(super) fn scalar(&mut self, e: ExprId) -> Result<Read> {
        Ok(self.scalar_val(e)?.into_read())
    }

    /// The value of a scalar, vector or tuple expression as expression trees (one per tuple
    /// component). Statements it needs (bounds checks, bindings) are emitted before it.
    pub(super) fn scalar_val(&mut self, e: ExprId) -> Result<Val> {
        match self.prog.expr(e).clone() {
            Expr::Var(_) | Expr::Prim { .. } => {
                let v = self.value(e)?;
                Ok(self.val_of(v.read(&[]).map_err(|m| self.err(e, m.0))?))
            }
            Expr::Lit(l) => Ok(Val::E(match l {
                Lit::Float(f) => CExpr::Float(f),
                Lit::Double(d) => {
                    self.needs_fp64 = true;
                    CExpr::Double(d)
                }
                Lit::Int(i) => CExpr::Int(i.into()),
                Lit::Bool(b) => CExpr::Int(i64::from(b)),
                l @ (Lit::Uint(_) | Lit::Long(_) | Lit::Ulong(_)) => {
                    ints::literal(&l).ok_or_else(|| self.err(e, "internal: integer literal"))?
                }
            })),
            Expr::If { cond, then, els } => {
                let c = self.scalar_expr(cond)?;
                let guarded = matches!(self.info.ty(cond), Type::Scalar(_));
                if guarded {
                    self.guards.push(c.clone());
                }
                let a = self.scalar_val(then);
                if guarded {
                    self.guards.pop();
                    self.guards.push(CExpr::un(UnOp::Not, c.clone()));
                }
                let b = self.scalar_val(els);
                if guarded {
                    self.guards.pop();
                }
                Ok(select(&c, a?, b?))
            }
            Expr::Let { var, value, body, .. } => {
                self.kernel_bind(e, var, value)?;
                self.scalar_val(body)
            }
            Expr::Pack(_) | Expr::Lambda { .. } => Err(self.err(e, "internal: not a scalar")),
            Expr::Op { op, args } => {
                let v = self.op(e, op, &args)?;
                self.bound_depth(e, v)
            }
        }
    }

    /// Binds an expression nested deeper than `MAX_DEPTH` to a `const` private variable, so
    /// generated expressions stay within what OpenCL compilers accept (clang refuses more than
    /// 256 nested brackets).
    pub(super) fn bound_depth(&mut self, e: ExprId, v: Val) -> Result<Val> {
        match v {
            Val::E(x) if x.depth() > MAX_DEPTH && self.k.is_some() => {
                let t = self.cty(e)?;
                let ty = self.ctype(&t)?;
                let name = self.names.fresh("v_t");
                self.push(Stmt::Decl {
                    ty,
                    name: name.clone(),
                    space: None,
                    len: None,
                    init: Some(x),
                    is_const: true,
                });
                Ok(Val::E(CExpr::Var(name)))
            }
            v @ Val::E(_) | v @ Val::T(_) => Ok(v),
        }
    }

    pub(super) fn scalar_expr(&mut self, e: ExprId) -> Result<CExpr> {
        match self.scalar_val(e)? {
            Val::E(s) => Ok(s),
            Val::T(_) => Err(self.err(e, "expected a scalar, found a tuple")),
        }
    }

    /// `x` as an expression that may be repeated: itself when it is a variable, else a fresh
    /// private variable holding it (a vector read from memory is loaded once).
    pub(super) fn shareable(&mut self, x: CExpr, t: &Type) -> Result<CExpr> {
        match x {
            CExpr::Var(_) => Ok(x),
            CExpr::Sym(t) => Ok(CExpr::Sym(t)),
            x @ CExpr::Int(_)
            | x @ CExpr::Float(_)
            | x @ CExpr::Double(_)
            | x @ CExpr::TypedInt(..)
            | x @ CExpr::Index(..)
            | x @ CExpr::Field(..)
            | x @ CExpr::Unary(..)
            | x @ CExpr::Binary(..)
            | x @ CExpr::Call(..)
            | x @ CExpr::Cast(..)
            | x @ CExpr::Select(..)
            | x @ CExpr::VecLit(..) => {
                let ty = self.ctype(t)?;
                let name = self.names.fresh("v_v");
                self.push(Stmt::decl(ty, &name, x));
                Ok(CExpr::Var(name))
            }
        }
    }

    pub(super) fn op(&mut self, e: ExprId, op: Op, args: &[ExprId]) -> Result<Val> {
        let t0 = self.info.ty(args[0]).clone();
        let float = matches!(t0.scalar(), Some(Scalar::Float | Scalar::Double));
        match op {
            Op::Tuple => {
                let rs = args.iter().map(|a| self.scalar_val(*a)).collect::<Result<Vec<_>>>()?;
                return Ok(Val::T(rs));
            }
            Op::Get(i) => {
                // a tuple holding arrays is no C value: its component is read through its view
                let soa = soa_components(&self.cty(args[0])?).is_some();
                return match self.prog.expr(args[0]) {
                    _ if soa => {
                        let v = self.value(args[0])?.component(i as usize);
                        Ok(self.val_of(v.read(&[]).map_err(|m| self.err(e, m.0))?))
                    }
                    Expr::Var(_) | Expr::Prim { .. } => {
                        let v = self.value(args[0])?.component(i as usize);
                        Ok(self.val_of(v.read(&[]).map_err(|m| self.err(e, m.0))?))
                    }
                    Expr::Lit(_)
                    | Expr::Lambda { .. }
                    | Expr::Op { .. }
                    | Expr::If { .. }
                    | Expr::Let { .. }
                    | Expr::Pack(_) => match self.scalar_val(args[0])? {
                        Val::T(mut rs) if (i as usize) < rs.len() => Ok(rs.swap_remove(i as usize)),
                        Val::T(_) => Err(self.err(e, "internal: get out of range")),
                        Val::E(s) => Ok(Val::E(s.component(i as usize))),
                    },
                };
            }
            Op::At => {
                let (xs, idx) = self.at_index(e, args[0], args[1])?;
                let r = xs.read(&[idx]).map_err(|m| self.err(e, m.0))?;
                // A padded element is held in a private variable, as `loop_elem` holds a loop's:
                // two `at`s of one padded element in an expression are otherwise the same
                // conditional load twice, which PoCL's LLVM can abort on.
                let ty = self.cty(e)?;
                if read_guarded(&r) && stored_value(&ty) {
                    let held = self.declare(&r, &ty, "p")?;
                    return Ok(self.val_of(held));
                }
                return Ok(self.val_of(r));
            }
            Op::Add
            | Op::Sub
            | Op::Mul
            | Op::Div
            | Op::Rem
            | Op::Lt
            | Op::Le
            | Op::Gt
            | Op::Ge
            | Op::Eq
            | Op::Ne
            | Op::And
            | Op::Or
            | Op::Not
            | Op::Neg
            | Op::Min
            | Op::Max
            | Op::Abs
            | Op::Sqrt
            | Op::Exp
            | Op::Log
            | Op::Sin
            | Op::Cos
            | Op::Pow
            | Op::Fma
            | Op::ToFloat
            | Op::ToInt
            | Op::ToDouble
            | Op::Dot
            | Op::Length
            | Op::MakeVec
            | Op::VGet(_)
            | Op::ToUint
            | Op::ToLong
            | Op::ToUlong
            | Op::As(_)
            | Op::BitAnd
            | Op::BitOr
            | Op::BitXor
            | Op::BitNot
            | Op::Shl
            | Op::Shr
            | Op::Rotl => {}
        }
        let mut a = args.iter().map(|x| self.scalar_expr(*x)).collect::<Result<Vec<_>>>()?;
        let rt = self.cty(e)?;
        if let (Type::Vector(..), true) = (&rt, is_builtin_call(op, float)) {
            // OpenCL's built-ins have no overload for every vector-and-scalar pair (`min(int,
            // int4)`, `pow(float4, float)`): a scalar operand is made the vector, so that the
            // call has exactly one match on every compiler
            let vt = self.ctype(&rt)?;
            for (x, arg) in a.iter_mut().zip(args) {
                if let Type::Scalar(_) = self.info.ty(*arg) {
                    *x = CExpr::cast(vt.clone(), std::mem::replace(x, CExpr::Int(0)));
                }
            }
        }
        let bin = |o: BinOp, a: &mut Vec<CExpr>| {
            let y = a.pop().expect("two operands");
            let x = a.pop().expect("two operands");
            CExpr::bin(o, x, y)
        };
        let call = |f: &'static str, a: Vec<CExpr>| CExpr::call(f, a);
        if let (Op::Div | Op::Rem, Type::Scalar(s), [_, y]) = (op, &rt, &mut a[..]) {
            if s.is_integer() {
                let (divisor, t1) = (std::mem::replace(y, CExpr::Int(0)), self.cty(args[1])?);
                *y = self.checked_divisor(e, divisor, &t1)?;
            }
        }
        if ints::is_int_op(op, &t0, &rt) {
            let ts = args.iter().map(|x| self.cty(*x)).collect::<Result<Vec<_>>>()?;
            return Ok(Val::E(self.int_op(e, op, &ts, &rt, a)?));
        }
        Ok(Val::E(match op {
            Op::Add => bin(BinOp::Add, &mut a),
            Op::Sub => bin(BinOp::Sub, &mut a),
            Op::Mul => bin(BinOp::Mul, &mut a),
            Op::Div => bin(BinOp::Div, &mut a),
            Op::Rem if float => call("fmod", a),
            Op::Rem => bin(BinOp::Rem, &mut a),
            Op::Lt => bin(BinOp::Lt, &mut a),
            Op::Le => bin(BinOp::Le, &mut a),
            Op::Gt => bin(BinOp::Gt, &mut a),
            Op::Ge => bin(BinOp::Ge, &mut a),
            Op::Eq => bin(BinOp::Eq, &mut a),
            Op::Ne => bin(BinOp::Ne, &mut a),
            Op::And => bin(BinOp::And, &mut a),
            Op::Or => bin(BinOp::Or, &mut a),
            Op::Not => CExpr::un(UnOp::Not, a.swap_remove(0)),
            Op::Neg => CExpr::un(UnOp::Neg, a.swap_remove(0)),
            Op::Min if float => call("fmin", a),
            Op::Max if float => call("fmax", a),
            Op::Min => call("min", a),
            Op::Max => call("max", a),
            Op::Abs if float => call("fabs", a),
            // `abs` of an int is an unsigned int in OpenCL C (of a long an unsigned long), and a
            // vector of them converts back only bit for bit (C casts between vector types are errors)
            Op::Abs => match &rt {
                Type::Vector(..) => {
                    CExpr::call(format!("as_{}", print::ctype(&self.ctype(&rt)?)), vec![call("abs", a)])
                }
                Type::Scalar(_) | Type::Tuple(_) | Type::Array(..) | Type::Exists(_) | Type::Fun(..) => {
                    CExpr::cast(self.ctype(&rt)?, call("abs", a))
                }
            },
            Op::Sqrt => call("sqrt", a),
            Op::Exp => call("exp", a),
            Op::Log => call("log", a),
            Op::Sin => call("sin", a),
            Op::Cos => call("cos", a),
            Op::Pow => call("pow", a),
            Op::Fma => call("fma", a),
            Op::ToFloat => CExpr::cast(CType::FLOAT, a.swap_remove(0)),
            // saturating, NaN to 0, as the interpreter: a cast of an out-of-range float is undefined
            Op::ToInt if float => call("convert_int_sat", a),
            Op::ToInt => CExpr::cast(CType::INT, a.swap_remove(0)),
            Op::ToDouble => {
                self.needs_fp64 = true;
                CExpr::cast(CType::Scalar(ast::Scalar::Double), a.swap_remove(0))
            }
            Op::Dot | Op::Length => {
                let w = match &t0 {
                    Type::Vector(_, w) => *w,
                    Type::Scalar(_) | Type::Tuple(_) | Type::Array(..) | Type::Exists(_) | Type::Fun(..) => 1,
                };
                if w <= 4 {
                    call(if op == Op::Dot { "dot" } else { "length" }, a)
                } else {
                    // OpenCL has `dot` and `length` only up to 4 lanes: sum the lane products.
                    let mut xs = vec![];
                    for x in a {
                        xs.push(self.shareable(x, &t0)?);
                    }
                    let (x, y) = (xs[0].clone(), xs.get(1).cloned().unwrap_or_else(|| xs[0].clone()));
                    let sum = (0..u32::from(w))
                        .map(|k| CExpr::bin(BinOp::Mul, x.clone().lane(k), y.clone().lane(k)))
                        .reduce(|s, p| CExpr::bin(BinOp::Add, s, p))
                        .expect("at least one lane");
                    if op == Op::Dot {
                        sum
                    } else {
                        call("sqrt", vec![sum])
                    }
                }
            }
            Op::MakeVec => CExpr::VecLit(self.ctype(&rt)?, a),
            Op::VGet(i) => a.swap_remove(0).lane(u32::from(i)),
            Op::Tuple | Op::Get(_) | Op::At => unreachable!("handled above"),
            Op::ToUint
            | Op::ToLong
            | Op::ToUlong
            | Op::As(_)
            | Op::BitAnd
            | Op::BitOr
            | Op::BitXor
            | Op::BitNot
            | Op::Shl
            | Op::Shr
            | Op::Rotl => {
                return Err(self.err(
                    e,
                    format!("internal: `{}` not generated as an integer operator", op.name()),
                ))
            }
        }))
    }
}

/// Whether `op` is emitted as a call of an OpenCL built-in function of several operands
/// (`float`: on floating operands) rather than as a C operator.
fn is_builtin_call(op: Op, float: bool) -> bool {
    match op {
        Op::Min | Op::Max | Op::Pow | Op::Fma => true,
        Op::Rem => float,
        Op::Add
        | Op::Sub
        | Op::Mul
        | Op::Div
        | Op::Lt
        | Op::Le
        | Op::Gt
        | Op::Ge
        | Op::Eq
        | Op::Ne
        | Op::And
        | Op::Or
        | Op::Not
        | Op::Neg
        | Op::Abs
        | Op::Sqrt
        | Op::Exp
        | Op::Log
        | Op::Sin
        | Op::Cos
        | Op::ToFloat
        | Op::ToInt
        | Op::ToDouble
        | Op::Dot
        | Op::Length
        | Op::MakeVec
        | Op::VGet(_)
        | Op::Tuple
        | Op::Get(_)
        | Op::At
        // integer operators are generated by `int_op` (`rotate` with a count vector there)
        | Op::ToUint
        | Op::ToLong
        | Op::ToUlong
        | Op::As(_)
        | Op::BitAnd
        | Op::BitOr
        | Op::BitXor
        | Op::BitNot
        | Op::Shl
        | Op::Shr
        | Op::Rotl => false,
    }
}

/// A scalar, vector or tuple value as expression trees, one per tuple component.
#[derive(Clone, Debug)]
pub(super) enum Val {
    E(CExpr),
    T(Vec<Val>),
}

impl Val {
    /// The value as a read (of values the generator holds).
    fn into_read(self) -> Read {
        match self {
            Val::E(e) => Read::Expr(Access::Value(e)),
            Val::T(vs) => Read::Tuple(vs.into_iter().map(Val::into_read).collect()),
        }
    }
}

pub(super) fn select(c: &CExpr, a: Val, b: Val) -> Val {
    match (a, b) {
        (Val::T(a), Val::T(b)) => Val::T(a.into_iter().zip(b).map(|(x, y)| select(c, x, y)).collect()),
        (Val::E(a), Val::E(b)) => Val::E(CExpr::select(c.clone(), a, b)),
        (Val::T(a), Val::E(b)) => Val::T(
            a.into_iter()
                .enumerate()
                .map(|(i, x)| select(c, x, Val::E(b.clone().component(i))))
                .collect(),
        ),
        (Val::E(a), Val::T(b)) => Val::T(
            b.into_iter()
                .enumerate()
                .map(|(i, y)| select(c, Val::E(a.clone().component(i)), y))
                .collect(),
        ),
    }
}

/// Whether a value of type `t` is scalars and vectors only (what `declare` can hold).
fn stored_value(t: &Type) -> bool {
    match t {
        Type::Scalar(_) | Type::Vector(..) => true,
        Type::Tuple(ts) => ts.iter().all(stored_value),
        Type::Array(..) | Type::Exists(_) | Type::Fun(..) => false,
    }
}

/// Whether `body` reads `x` (or one component of it) more than once: a whole `x` counts as a
/// read of every component.
fn read_twice(prog: &Program, body: ExprId, x: VarId) -> bool {
    fn count(prog: &Program, e: ExprId, x: VarId, whole: &mut usize, parts: &mut BTreeMap<u32, usize>) {
        match prog.expr(e) {
            Expr::Var(v) if *v == x => *whole += 1,
            Expr::Op { op: Op::Get(i), args } if matches!(prog.expr(args[0]), Expr::Var(v) if *v == x) => {
                *parts.entry(u32::from(*i)).or_default() += 1;
            }
            Expr::Var(_)
            | Expr::Lit(_)
            | Expr::Lambda { .. }
            | Expr::Prim { .. }
            | Expr::Op { .. }
            | Expr::If { .. }
            | Expr::Let { .. }
            | Expr::Pack(_) => {
                for c in prog.children(e) {
                    count(prog, c, x, whole, parts);
                }
            }
        }
    }
    let (mut whole, mut parts) = (0, BTreeMap::new());
    count(prog, body, x, &mut whole, &mut parts);
    whole >= 2 || parts.values().any(|n| whole + n >= 2)
}

/// Whether a read holds a pad's conditional load.
fn read_guarded(r: &Read) -> bool {
    fn guarded(a: &Access) -> bool {
        match a {
            Access::Guard { .. } => true,
            Access::Field(a, _) | Access::Lane(a, _) => guarded(a),
            Access::DynLane { vector, .. } => guarded(vector),
            Access::Vector { lanes, .. } => lanes.iter().any(guarded),
            Access::Elem { .. }
            | Access::VLoad { .. }
            | Access::VLoadAt { .. }
            | Access::Value(_)
            | Access::Generate { .. } => false,
        }
    }
    match r {
        Read::Expr(a) => guarded(a),
        Read::Tuple(rs) => rs.iter().any(read_guarded),
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

/// The value of an `int` literal, seen through `let`s binding it (a `define`d function's
/// parameters are bound so: `(cell w 0 1)` reads `at r` with `r` bound to `0`).
pub(super) fn int_literal(prog: &Program, e: ExprId) -> Option<i64> {
    let mut e = e;
    // (a chain of variables bound to variables: as deep as the program, bounded for safety)
    for _ in 0..64 {
        if let Expr::Lit(Lit::Int(c)) = prog.expr(e) {
            return Some(i64::from(*c));
        }
        let Expr::Var(v) = prog.expr(e) else {
            return None;
        };
        e = prog.exprs.iter().find_map(|x| {
            if let Expr::Let {
                kind: ir::LetKind::Let,
                var,
                value,
                ..
            } = x
            {
                (var == v).then_some(*value)
            } else {
                None
            }
        })?;
    }
    None
}

#[cfg(test)]
mod tests {
    fn source(src: &str) -> String {
        let prog = ir::parse(src).expect("parses");
        let info = typeck::infer(&prog).expect("types");
        crate::emit(&prog, &info).expect("generates").source
    }

    fn max_paren_depth(s: &str) -> i32 {
        let mut d = 0;
        let mut max = 0;
        for c in s.chars() {
            d += match c {
                '(' => 1,
                ')' => -1,
                _ => 0,
            };
            max = max.max(d);
        }
        max
    }

    #[test]
    fn deep_expressions_are_bound_to_temporaries() {
        // `(- 1.0f (- 1.0f (- … x)))`: every level needs its parentheses
        let mut body = "x".to_string();
        for _ in 0..200 {
            body = format!("(- 1.0f {body})");
        }
        let src = format!("(lift (N) ((array-type float N)) (lambda (xs) (toGlobal (mapGlb (lambda (x) {body}) xs))))");
        // the reader, type checker and generator recurse per level: more stack than a test thread
        let run = std::thread::Builder::new()
            .stack_size(256 << 20)
            .spawn(move || source(&src));
        let cl = run.expect("thread").join().expect("generates");
        assert!(cl.contains("const float v_t_1 = "), "{cl}");
        assert!(max_paren_depth(&cl) <= 70, "{cl}");
    }

    #[test]
    fn wide_dot_products_are_lane_sums() {
        let cl = source(
            "(lift (N) ((array-type float N) (array-type float N))
               (lambda (xs ys) (toGlobal (mapGlb (lambda (p) (dot (get #0 p) (get #1 p)))
                                                 (zip (asVector #8 xs) (asVector #8 ys))))))",
        );
        assert!(!cl.contains("dot("), "{cl}");
        assert!(cl.contains("v_v_1.s7 * v_v_2.s7"), "{cl}");
        // each vector is loaded once
        assert_eq!(cl.matches("vload8").count(), 2, "{cl}");
    }
}
