//! Application during elaboration: functions and builtins applied to their arguments (partly,
//! fully or beyond), closures called, functions reified into lambdas, size arithmetic, and
//! primitives built in K-normal form.

use super::*;

impl Elab {
    /// Applies a function value to arguments; too few makes a partial application, too many
    /// applies the result to the rest.
    pub(super) fn apply(&mut self, f: Val, args: Vec<(Val, Span)>, span: Span, head_span: Span) -> Result<Val> {
        let f = match f {
            Val::Fun(f) => f,
            Val::Deferred(d) => {
                let v = self.elab(&d.0, &d.1)?;
                return self.apply(v, args, span, head_span);
            }
            Val::Size(_) => return Err(Diagnostic::new(head_span, "a size cannot be applied to arguments")),
            Val::Expr(_) | Val::Var(_) => {
                return Err(Diagnostic::new(
                    head_span,
                    "this is a value, not a function, so it cannot be applied to arguments",
                ))
            }
        };
        match &*f {
            Fun::Closure(c, given) => {
                let mut all: Vec<Val> = given.clone();
                let mut rest = args.into_iter();
                let mut spans = vec![];
                while all.len() < c.params.len() {
                    match rest.next() {
                        Some((v, s)) => {
                            all.push(v);
                            spans.push(s);
                        }
                        None => return Ok(Val::Fun(Rc::new(Fun::Closure(c.clone(), all)))),
                    }
                }
                let result = self.call_closure(c, all, span)?;
                let takes = c.params.len();
                self.apply_rest(result, rest.collect(), span, head_span, takes)
            }
            Fun::Builtin(b, given, bspan) => {
                let shape = match b {
                    Builtin::Prim(p) => p.shape(),
                    Builtin::Op(o) => op_shape(*o),
                };
                let mut all: Vec<(Val, Span)> = given.iter().map(|v| (v.clone(), *bspan)).collect();
                let Some(n_args) = shape.args else {
                    // Variadic builtins take all their arguments in one application.
                    all.extend(args);
                    return self.build_builtin(b, all, span, head_span);
                };
                let need = shape.sizes + n_args;
                let mut rest = args.into_iter();
                while all.len() < need {
                    match rest.next() {
                        Some(a) => all.push(a),
                        None => {
                            let vals = all.into_iter().map(|(v, _)| v).collect();
                            return Ok(Val::Fun(Rc::new(Fun::Builtin(b.clone(), vals, head_span))));
                        }
                    }
                }
                let result = self.build_builtin(b, all, span, head_span)?;
                self.apply_rest(result, rest.collect(), span, head_span, need)
            }
            Fun::Place(space, inner, pspan) => {
                let v = self.apply(Val::Fun(inner.clone()), args, span, head_span)?;
                match v {
                    Val::Fun(g) => Ok(Val::Fun(Rc::new(Fun::Place(*space, g, *pspan)))),
                    v => {
                        let e = self.expr(v, span)?;
                        Ok(Val::Expr(self.prog.push(
                            Expr::Prim {
                                prim: Prim::To(*space),
                                args: vec![e],
                            },
                            span,
                        )))
                    }
                }
            }
        }
    }

    /// Applies the result of a saturated call to the arguments left over; `takes` is how many
    /// the called function took, for the message when the result is not a function.
    pub(super) fn apply_rest(
        &mut self,
        result: Val,
        rest: Vec<(Val, Span)>,
        span: Span,
        head_span: Span,
        takes: usize,
    ) -> Result<Val> {
        if rest.is_empty() {
            return Ok(result);
        }
        match result {
            Val::Fun(_) | Val::Deferred(_) => self.apply(result, rest, span, head_span),
            _ => {
                let given = takes + rest.len();
                Err(Diagnostic::new(
                    rest[0].1,
                    format!("too many arguments: this function takes {takes}, but is given {given}"),
                )
                .with_label("this argument is not expected"))
            }
        }
    }

    pub(super) fn call_closure(&mut self, c: &Closure, args: Vec<Val>, span: Span) -> Result<Val> {
        let mut env = c.env.clone();
        let mut lets = vec![];
        for ((name, pspan), v) in c.params.iter().zip(args) {
            let v = match v {
                // A computed value used by a parameter that may appear several times: share it.
                Val::Expr(e) => {
                    let var = self.prog.new_var(name, *pspan);
                    lets.push((var, e));
                    Val::Var(var)
                }
                other => other,
            };
            env.insert(name.clone(), v);
        }
        let body = self.elab(&c.body, &env)?;
        if lets.is_empty() {
            return Ok(body);
        }
        let mut e = self.expr(body, c.body.span)?;
        for (var, value) in lets.into_iter().rev() {
            e = self.prog.push(
                Expr::Let {
                    kind: LetKind::Let,
                    var,
                    value,
                    body: e,
                },
                span,
            );
        }
        Ok(Val::Expr(e))
    }

    /// Makes a lambda node of `arity` parameters from a function value (eta-expansion).
    pub(super) fn reify(&mut self, f: Val, arity: usize, span: Span) -> Result<ExprId> {
        let f = match f {
            Val::Fun(f) => f,
            Val::Deferred(d) => {
                let v = self.elab(&d.0, &d.1)?;
                return self.reify(v, arity, span);
            }
            Val::Expr(_) | Val::Var(_) | Val::Size(_) => return Err(Diagnostic::new(span, "expected a function here")
                .with_label("not a function")
                .with_note(
                    "write `(lambda (x) ...)`, a defined function, or a partially applied primitive like `(mapSeq f)`",
                )),
        };
        // A lambda of k parameters applied to one k-tuple (as Lift's user functions are).
        if let Fun::Closure(c, given) = &*f {
            let k = c.params.len() - given.len();
            if arity == 1 && k > 1 {
                let name = self.fresh_name("t");
                let tvar = self.prog.new_var(&name, span);
                let mut args: Vec<(Val, Span)> = vec![];
                for i in 0..k {
                    let t = self.prog.push(Expr::Var(tvar), span);
                    let g = self.prog.push(
                        Expr::Op {
                            op: Op::Get(i as u8),
                            args: vec![t],
                        },
                        span,
                    );
                    args.push((Val::Expr(g), span));
                }
                let body = self.apply(Val::Fun(f.clone()), args, span, span)?;
                let body = self.expr(body, span)?;
                return Ok(self.prog.push(
                    Expr::Lambda {
                        params: vec![tvar],
                        body,
                    },
                    span,
                ));
            }
        }
        let mut params = vec![];
        let mut args = vec![];
        for i in 0..arity {
            let name = match &*f {
                Fun::Closure(c, given) => c.params.get(given.len() + i).map(|p| p.0.clone()),
                Fun::Builtin(..) | Fun::Place(..) => None,
            };
            let name = name.unwrap_or_else(|| self.fresh_name("p"));
            let var = self.prog.new_var(&name, span);
            params.push(var);
            args.push((Val::Var(var), span));
        }
        let takes = self.arity(&f);
        let called = |takes: usize| {
            Diagnostic::new(
                span,
                format!("this function takes {takes} argument(s), but is called with {arity} here"),
            )
        };
        let body = match self.apply(Val::Fun(f), args, span, span) {
            Ok(body) => body,
            // Called with more arguments than it takes: say so in the caller's terms.
            Err(_) if takes.is_some_and(|t| t < arity) => {
                return Err(
                    called(takes.unwrap_or(0)).with_note("the primitive calls it with more arguments than it takes")
                )
            }
            Err(e) => return Err(e),
        };
        if let Val::Fun(h) = body {
            let d = match takes {
                Some(t) if t > arity => {
                    called(t).with_note("the primitive calls it with fewer arguments than it takes")
                }
                // It takes what it is given, but its body still waits for arguments.
                _ => {
                    let missing = match self.arity(&h) {
                        Some(k) => format!("{k} more argument(s)"),
                        None => "more arguments".to_string(),
                    };
                    Diagnostic::new(
                        span,
                        format!("this function returns a function, not a value: its body needs {missing}"),
                    )
                    .with_note("a function or primitive in the body is applied to fewer arguments than it takes")
                }
            };
            return Err(d);
        }
        let body = self.expr(body, span)?;
        Ok(self.prog.push(Expr::Lambda { params, body }, span))
    }

    /// How many more arguments a function value takes before it produces a value (`None`:
    /// variadic, or not known without applying it).
    pub(super) fn arity(&self, f: &Fun) -> Option<usize> {
        match f {
            Fun::Closure(c, given) => Some(c.params.len() - given.len()),
            Fun::Builtin(b, given, _) => {
                let shape = match b {
                    Builtin::Prim(p) => p.shape(),
                    Builtin::Op(o) => op_shape(*o),
                };
                Some(shape.sizes + shape.args? - given.len())
            }
            Fun::Place(_, inner, _) => self.arity(inner),
        }
    }

    pub(super) fn build_builtin(
        &mut self,
        b: &Builtin,
        args: Vec<(Val, Span)>,
        span: Span,
        head_span: Span,
    ) -> Result<Val> {
        let (name, shape) = match b {
            Builtin::Prim(p) => (format!("{p:?}"), p.shape()),
            Builtin::Op(o) => (o.name(), op_shape(*o)),
        };
        let _ = name;
        if let Builtin::Op(op @ (Op::Add | Op::Sub | Op::Mul | Op::Div | Op::Rem | Op::Pow)) = b {
            if args.iter().any(|(v, _)| matches!(v, Val::Size(_))) {
                return self.size_arith(*op, args, span);
            }
        }
        let mut sizes = vec![];
        let mut rest = args.into_iter();
        for _ in 0..shape.sizes {
            let (v, s) = rest.next().expect("apply collected enough arguments");
            match v {
                Val::Size(e) => sizes.push((e, s)),
                Val::Deferred(d) => match self.elab(&d.0, &d.1)? {
                    Val::Size(e) => sizes.push((e, s)),
                    _ => return Err(size_expected(s)),
                },
                _ => return Err(size_expected(s)),
            }
        }
        let rest: Vec<(Val, Span)> = rest.collect();
        if shape.args.is_none() && rest.len() < 2 {
            let what = match b {
                Builtin::Prim(_) => "`zip` takes at least two arrays",
                Builtin::Op(Op::Tuple) => "`tuple` takes at least two components",
                Builtin::Op(_) => "`vec` takes 2, 3, 4, 8 or 16 components",
            };
            return Err(Diagnostic::new(span, what));
        }
        let mut ids = vec![];
        for (i, (v, s)) in rest.into_iter().enumerate() {
            if let Some((_, arity)) = shape.funs.iter().find(|(pos, _)| *pos == i) {
                ids.push(self.reify(v, *arity, s)?);
                continue;
            }
            // `(toGlobal f)` of a function places the function's result.
            if let (Builtin::Prim(PrimHead::To(space)), Val::Fun(g)) = (b, &v) {
                return Ok(Val::Fun(Rc::new(Fun::Place(*space, g.clone(), head_span))));
            }
            ids.push(self.expr(v, s)?);
        }
        match b {
            Builtin::Op(op) => {
                let op = match op {
                    Op::VGet(_) | Op::Get(_) => {
                        let (k, s) = &sizes[0];
                        let Some(k) = k.as_cst().filter(|k| (0..16).contains(k)) else {
                            return Err(Diagnostic::new(*s, "the component index must be a literal like #0"));
                        };
                        if let Op::Get(_) = op {
                            Op::Get(k as u8)
                        } else {
                            Op::VGet(k as u8)
                        }
                    }
                    other => *other,
                };
                Ok(Val::Expr(self.prog.push(Expr::Op { op, args: ids }, span)))
            }
            Builtin::Prim(p) => {
                let size = |i: usize| sizes[i].0.clone();
                let prim = match p {
                    PrimHead::Map(k) => Prim::Map(*k),
                    PrimHead::Reduce(k) => Prim::Reduce(*k),
                    PrimHead::Zip => Prim::Zip,
                    PrimHead::Split => Prim::Split(positive(&sizes[0])?),
                    PrimHead::Join => Prim::Join,
                    PrimHead::Transpose => Prim::Transpose,
                    PrimHead::Slide => Prim::Slide(positive(&sizes[0])?, positive(&sizes[1])?),
                    PrimHead::Pad => Prim::Pad(size(0), size(1)),
                    PrimHead::PadClamp => Prim::PadClamp(size(0), size(1)),
                    PrimHead::ReorderStride => Prim::ReorderStride(positive(&sizes[0])?),
                    PrimHead::Reverse => Prim::Reverse,
                    PrimHead::Generate => Prim::Generate(positive(&sizes[0])?),
                    PrimHead::Iterate => Prim::Iterate(size(0)),
                    PrimHead::IterateUntil => Prim::IterateUntil(positive(&sizes[0])?),
                    PrimHead::Filter(k) => Prim::Filter(*k),
                    PrimHead::Scan(k) => Prim::Scan(*k),
                    PrimHead::AsVector => {
                        let (w, s) = &sizes[0];
                        match w.as_cst() {
                            Some(w @ (2 | 3 | 4 | 8 | 16)) => Prim::AsVector(w as u8),
                            _ => return Err(Diagnostic::new(*s, "the vector width must be #2, #3, #4, #8 or #16")),
                        }
                    }
                    PrimHead::AsScalar => Prim::AsScalar,
                    PrimHead::To(s) => Prim::To(*s),
                };
                let ids = self.k_normalize(&prim, ids, span);
                Ok(Val::Expr(ids))
            }
        }
    }

    /// `(* N 2)` where a size is expected: arithmetic on sizes and natural literals.
    pub(super) fn size_arith(&mut self, op: Op, args: Vec<(Val, Span)>, span: Span) -> Result<Val> {
        let mut sizes = vec![];
        for (v, s) in args {
            match v {
                Val::Size(e) => sizes.push(e),
                Val::Expr(e) => match self.prog.expr(e) {
                    Expr::Lit(Lit::Int(i)) if *i >= 0 => sizes.push(ArithExpr::cst(i64::from(*i))),
                    _ => {
                        return Err(Diagnostic::new(
                            s,
                            "sizes can only be combined with sizes and natural numbers",
                        ))
                    }
                },
                _ => {
                    return Err(Diagnostic::new(
                        s,
                        "sizes can only be combined with sizes and natural numbers",
                    ))
                }
            }
        }
        let name = match op {
            Op::Add => "+",
            Op::Sub => "-",
            Op::Mul => "*",
            Op::Div => "/",
            Op::Rem => "%",
            _ => "pow",
        };
        size_op(name, &sizes[0], &sizes[1], span)
            .expect("arithmetic operator")
            .map(Val::Size)
    }

    /// Whether an expression may produce an existential array (syntactically).
    pub(super) fn may_be_existential(&self, e: ExprId) -> bool {
        match self.prog.expr(e) {
            Expr::Prim {
                prim: Prim::Filter(_), ..
            }
            | Expr::Pack(_) => true,
            Expr::Prim {
                prim: Prim::To(_),
                args,
            } => self.may_be_existential(args[0]),
            // A let that unpacks may pack its body: always bind it.
            Expr::Let { .. } => true,
            Expr::Op {
                op: Op::At | Op::Get(_),
                ..
            } => true,
            Expr::Prim { .. }
            | Expr::Op { .. }
            | Expr::If { .. }
            | Expr::Var(_)
            | Expr::Lit(_)
            | Expr::Lambda { .. } => false,
        }
    }

    /// Binds arguments that may be existential arrays with `let`, so that the type checker can
    /// unpack them there (thesis §4.2.1 step 1). Other arguments stay nested.
    pub(super) fn k_normalize(&mut self, prim: &Prim, args: Vec<ExprId>, span: Span) -> ExprId {
        if let Prim::To(_) = prim {
            return self.prog.push(
                Expr::Prim {
                    prim: prim.clone(),
                    args,
                },
                span,
            );
        }
        let mut lets = vec![];
        let mut new_args = vec![];
        for a in args {
            if self.may_be_existential(a) {
                let name = self.fresh_name("k");
                let aspan = self.prog.span(a);
                let var = self.prog.new_var(&name, aspan);
                lets.push((var, a));
                new_args.push(self.prog.push(Expr::Var(var), aspan));
            } else {
                new_args.push(a);
            }
        }
        let mut e = self.prog.push(
            Expr::Prim {
                prim: prim.clone(),
                args: new_args,
            },
            span,
        );
        for (var, value) in lets.into_iter().rev() {
            e = self.prog.push(
                Expr::Let {
                    kind: LetKind::Let,
                    var,
                    value,
                    body: e,
                },
                span,
            );
        }
        e
    }
}
