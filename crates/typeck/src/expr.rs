//! Inference of an expression's type: variables, literals, lambdas and lets, packs of
//! existential lengths, array arguments, and the size checks a program's lengths need at run time.

use super::*;

impl Checker<'_> {
    pub(super) fn infer(&mut self, e: ExprId) -> Result<Type> {
        let t = match self.prog.expr(e) {
            Expr::Var(v) => match &self.info.var_types[v.index()] {
                Some(t) => t.clone(),
                None => {
                    return Err(Diagnostic::new(
                        self.span(e),
                        "internal: variable used before its binding was typed",
                    ))
                }
            },
            Expr::Lit(l) => Type::Scalar(match l {
                ir::Lit::Float(_) => Scalar::Float,
                ir::Lit::Double(_) => Scalar::Double,
                ir::Lit::Int(_) => Scalar::Int,
                ir::Lit::Bool(_) => Scalar::Bool,
                ir::Lit::Uint(_) => Scalar::Uint,
                ir::Lit::Long(_) => Scalar::Long,
                ir::Lit::Ulong(_) => Scalar::Ulong,
            }),
            Expr::Lambda { .. } => {
                return Err(Diagnostic::new(
                    self.span(e),
                    "a function cannot be used as a value here",
                ));
            }
            Expr::Let { kind, var, value, body } => {
                let (kind, var, value, body) = (*kind, *var, *value, *body);
                let tv = self.infer(value)?;
                let x = match (&tv, kind) {
                    (Type::Exists(elem), _) => {
                        let (x, len) = self.fresh_exist();
                        self.info.var_types[var.index()] = Some(Type::array((**elem).clone(), len));
                        self.info.unpacks.insert(Binder::Let(e), x.clone());
                        Some(x)
                    }
                    (_, LetKind::Unpack) => {
                        return Err(Diagnostic::new(
                            self.span(value),
                            format!("`unpack` needs an existential array (a filter result), but this has type {tv}"),
                        )
                        .with_note("use `let` to bind other values"));
                    }
                    (_, LetKind::Let) => {
                        self.info.var_types[var.index()] = Some(tv.clone());
                        None
                    }
                };
                let tb = self.infer(body)?;
                match x {
                    Some(x) => self.pack_if_needed(body, tb, &x, self.span(e))?,
                    None => tb,
                }
            }
            Expr::Pack(inner) => {
                let inner = *inner;
                match self.infer(inner)? {
                    Type::Array(elem, _) if self.escaping_exist(&elem).is_none() => Type::Exists(elem),
                    t => {
                        return Err(Diagnostic::new(
                            self.span(e),
                            format!("`pack` needs an array whose elements have a known size, but this has type {t}"),
                        ))
                    }
                }
            }
            Expr::If { cond, then, els } => {
                let (cond, then, els) = (*cond, *then, *els);
                let tc = self.infer(cond)?;
                // At host level (`ir::host::HostPlan`) `if` may select arrays and branch on `[bool]1`.
                let host = self.info.host.at_host(e);
                if tc != Type::bool() && !(host && self.is_bool1(&tc)) {
                    return Err(Diagnostic::new(
                        self.span(cond),
                        format!("the condition of `if` must be bool, but it is {tc}"),
                    ));
                }
                let ta = self.infer(then)?;
                let tb = self.infer(els)?;
                // At host level an array branch beside a filter result is packed, as a binder
                // would pack it (the driver gives it a length buffer).
                let packed = match (&ta, &tb) {
                    (Type::Exists(e), Type::Array(a, _)) | (Type::Array(a, _), Type::Exists(e))
                        if host && self.same(e, a) =>
                    {
                        Some(Type::Exists(e.clone()))
                    }
                    _ => None,
                };
                let (ta, tb) = match packed {
                    Some(t) => (t.clone(), t),
                    None => (ta, tb),
                };
                if !self.same(&ta, &tb) {
                    let (a, b) = distinct_texts(&ta, &tb);
                    return Err(Diagnostic::new(
                        self.span(e),
                        format!("the branches of `if` have different types: {a} and {b}"),
                    ));
                }
                match &ta {
                    Type::Scalar(_) | Type::Vector(..) | Type::Tuple(_) => {}
                    // At host level an `if` chooses which kernels run next.
                    Type::Array(..) | Type::Exists(_) if host => self.selects.push(e),
                    Type::Array(..) | Type::Exists(_) | Type::Fun(..) => {
                        return Err(Diagnostic::new(
                            self.span(e),
                            format!("`if` selects between scalars, tuples or vectors, not {ta}"),
                        ));
                    }
                }
                ta
            }
            Expr::Op { op, args } => {
                let (op, args) = (*op, args.clone());
                let mut ts = vec![];
                for a in &args {
                    ts.push(self.infer(*a)?);
                }
                self.op(e, op, &args, &ts)?
            }
            Expr::Prim { prim, args } => {
                let (prim, args) = (prim.clone(), args.clone());
                self.prim(e, &prim, &args)?
            }
        };
        Ok(self.set(e, t))
    }

    /// Packs `[T]L(x)` into `{∃X. [T]X}`; any other mention of `x` in the type is an escape.
    pub(super) fn pack_if_needed(&mut self, body: ExprId, t: Type, x: &str, span: Span) -> Result<Type> {
        if !t.mentions(x) {
            return Ok(t);
        }
        if let Type::Array(elem, _) = &t {
            if !elem.mentions(x) {
                self.info.packs.insert(body);
                return Ok(Type::Exists(elem.clone()));
            }
        }
        Err(Diagnostic::new(
            span,
            format!("the run-time length {x} escapes its `unpack`: the body has type {t}"),
        )
        .with_label("unpacked here")
        .with_note(format!(
            "{x} is the length of a filter result, known only inside this binding"
        ))
        .with_note(
            "only an array of length depending on it can be packed back; reduce it or keep it as the outermost array",
        ))
    }

    /// Types a lambda against known parameter types; returns its result type.
    pub(super) fn lambda(&mut self, f: ExprId, params: &[Type]) -> Result<Type> {
        let Expr::Lambda { params: vars, body } = self.prog.expr(f) else {
            return Err(Diagnostic::new(self.span(f), "expected a function here"));
        };
        let (vars, body) = (vars.clone(), *body);
        if vars.len() != params.len() {
            return Err(Diagnostic::new(
                self.span(f),
                format!(
                    "this function takes {} parameter(s), but is called with {}",
                    vars.len(),
                    params.len()
                ),
            ));
        }
        let mut xs = vec![];
        for (i, (v, t)) in vars.iter().zip(params).enumerate() {
            let t = match t {
                Type::Exists(elem) => {
                    let (x, len) = self.fresh_exist();
                    self.info.unpacks.insert(Binder::Param(f, i), x.clone());
                    xs.push(x.clone());
                    Type::array((**elem).clone(), len)
                }
                t => t.clone(),
            };
            self.info.var_types[v.index()] = Some(t);
        }
        let mut tb = self.infer(body)?;
        for x in xs {
            tb = self.pack_if_needed(body, tb, &x, self.span(f))?;
        }
        self.set(f, Type::Fun(params.to_vec(), Box::new(tb.clone())));
        Ok(tb)
    }

    pub(super) fn array_arg(&mut self, prim: &Prim, a: ExprId) -> Result<(Type, ArithExpr)> {
        let t = self.infer(a)?;
        self.array_of(prim, a, t)
    }

    /// The element type and length of `t`, the type of argument `a` of `prim`, an array.
    pub(super) fn array_of(&self, prim: &Prim, a: ExprId, t: Type) -> Result<(Type, ArithExpr)> {
        match t {
            Type::Array(elem, n) => Ok((*elem, n)),
            Type::Exists(_) => Err(Diagnostic::new(
                self.span(a),
                format!("`{}` cannot take a filter result directly here", prim.name()),
            )
            .with_note("bind it first with `let` or `unpack`")),
            t => Err(Diagnostic::new(
                self.span(a),
                format!("`{}` expects an array, but this has type {t}", prim.name()),
            )
            .with_label(format!("{t}"))),
        }
    }

    pub(super) fn check(&mut self, span: Span, kind: CheckKind) -> Result<()> {
        let check = SizeCheck { span, kind };
        // Decide at compile time where the sizes are constants.
        if let Err(msg) = check.verify(&|_| None) {
            return Err(Diagnostic::new(span, msg));
        }
        let decided = match &check.kind {
            CheckKind::Divisible { len, by, .. } => len.is_multiple_of(by),
            CheckKind::AtLeast { len, min, .. } => min.prove_le(len),
            CheckKind::Fits { len } => len.as_cst().is_some(),
        };
        if let (CheckKind::Divisible { len, by, .. }, false) = (&check.kind, decided) {
            if let (Some(l), Some(b)) = (len.as_cst(), by.as_cst()) {
                if b == 0 || l % b != 0 {
                    return Err(Diagnostic::new(span, format!("{l} is not a multiple of {b}")));
                }
            }
        }
        if !decided {
            self.info.checks.push(check);
        }
        Ok(())
    }
}
