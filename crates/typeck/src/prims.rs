//! The types of primitives, and of `iterate` and `iterateUntil` at host level and unrolled
//! (loops inside a work-item are typed in `loops.rs`).

use super::*;
use ir::ScanKind;

impl Checker<'_> {
    pub(super) fn prim(&mut self, e: ExprId, prim: &Prim, args: &[ExprId]) -> Result<Type> {
        let span = self.span(e);
        let name = prim.name();
        Ok(match prim {
            Prim::Map(MapKind::Vec) => {
                let tv = self.infer(args[1])?;
                let Type::Vector(s, w) = tv else {
                    return Err(Diagnostic::new(
                        self.span(args[1]),
                        format!("`mapVec` maps over the lanes of a vector, but this has type {tv}"),
                    ));
                };
                match self.lambda(args[0], &[Type::Scalar(s)])? {
                    Type::Scalar(r) => Type::Vector(r, w),
                    t => {
                        return Err(Diagnostic::new(
                            self.span(args[0]),
                            format!("the function of `mapVec` must return a scalar, not {t}"),
                        ))
                    }
                }
            }
            Prim::Map(
                MapKind::Plain
                | MapKind::Glb(_)
                | MapKind::Wrg(_)
                | MapKind::Lcl(_)
                | MapKind::Seq
                | MapKind::SeqUnroll,
            ) => {
                let (elem, n) = self.array_arg(prim, args[1])?;
                let r = self.lambda(args[0], &[elem])?;
                Type::array(r, n)
            }
            Prim::Reduce(kind) => {
                let tz = self.infer(args[1])?;
                let (elem, _) = self.array_arg(prim, args[2])?;
                let acc = match kind {
                    ReduceKind::Plain => {
                        if !self.same(&tz, &elem) {
                            let (z, x) = distinct_texts(&tz, &elem);
                            return Err(Diagnostic::new(self.span(args[1]), format!("the initial value of `reduce` has type {z}, but the elements are {x}"))
                                .with_note("`reduce` combines elements of one type; use `reduceSeq` to fold into a different accumulator"));
                        }
                        elem.clone()
                    }
                    ReduceKind::Seq | ReduceKind::SeqUnroll => tz.clone(),
                };
                let r = self.lambda(args[0], &[acc.clone(), elem])?;
                if !self.same(&r, &acc) {
                    let (r, acc) = distinct_texts(&r, &acc);
                    return Err(Diagnostic::new(
                        self.span(args[0]),
                        format!("the function of `{name}` returns {r}, but the accumulator has type {acc}"),
                    ));
                }
                Type::array(acc, ArithExpr::cst(1))
            }
            Prim::Scan(kind) => {
                let tz = self.infer(args[1])?;
                let (elem, n) = self.array_arg(prim, args[2])?;
                let acc = match kind {
                    ScanKind::Plain | ScanKind::Glb => {
                        if !self.same(&tz, &elem) {
                            let (z, x) = distinct_texts(&tz, &elem);
                            return Err(Diagnostic::new(self.span(args[1]), format!("the initial value of `{name}` has type {z}, but the elements are {x}"))
                                .with_note("`scan` combines elements of one type; use `scanSeq` to scan into a different accumulator"));
                        }
                        elem.clone()
                    }
                    ScanKind::Seq => tz.clone(),
                };
                let r = self.lambda(args[0], &[acc.clone(), elem])?;
                if !self.same(&r, &acc) {
                    let (r, acc) = distinct_texts(&r, &acc);
                    return Err(Diagnostic::new(
                        self.span(args[0]),
                        format!("the function of `{name}` returns {r}, but the accumulator has type {acc}"),
                    ));
                }
                Type::array(acc, n)
            }
            Prim::Zip => {
                let mut elems = vec![];
                let mut len: Option<(ArithExpr, ExprId)> = None;
                for a in args {
                    let (t, n) = self.array_arg(prim, *a)?;
                    if let Some((m, first)) = &len {
                        if *m != n && self.norm_len(m) != self.norm_len(&n) {
                            let (mt, nt) = distinct_lengths(m, &n);
                            let mut d = Diagnostic::new(
                                self.span(*a),
                                format!("`zip` of arrays of different lengths: {mt} and {nt}"),
                            )
                            .with_label(format!("length {nt}"))
                            .with_note(format!("the first array of this zip has length {mt}"));
                            if mt.contains("/^") || nt.contains("/^") {
                                d = d.with_note("`/^` is a division that a run-time check makes exact (the length of a `split` or `asVector`); `/` rounds down");
                            }
                            let _ = first;
                            if has_exist_var(m) && has_exist_var(&n) {
                                d = d.with_note("each filter result has its own run-time length, so two different filter results cannot be zipped (thesis ch. 3); zip a filter result with a map of itself instead");
                            }
                            return Err(d);
                        }
                    } else {
                        len = Some((n, *a));
                    }
                    elems.push(t);
                }
                Type::array(Type::Tuple(elems), len.expect("zip has arguments").0)
            }
            Prim::Split(k) => {
                let (elem, n) = self.array_arg(prim, args[0])?;
                self.check(
                    span,
                    CheckKind::Divisible {
                        len: n.clone(),
                        by: k.clone(),
                        what: format!("split #{k}"),
                    },
                )?;
                Type::array(Type::array(elem, k.clone()), n.div_assume_exact(k))
            }
            Prim::Join => {
                let (elem, n) = self.array_arg(prim, args[0])?;
                match elem {
                    Type::Array(inner, m) => Type::array(*inner, n.mul(&m)),
                    Type::Exists(_) => {
                        return Err(Diagnostic::new(span, "`join` of an array of filter results is not supported yet: the rows have different run-time lengths"))
                    }
                    t => return Err(Diagnostic::new(self.span(args[0]), format!("`join` expects an array of arrays, but the elements are {t}"))),
                }
            }
            Prim::Transpose => {
                let (elem, n) = self.array_arg(prim, args[0])?;
                match elem {
                    Type::Array(inner, m) => Type::array(Type::array(*inner, n), m),
                    t => {
                        return Err(Diagnostic::new(
                            self.span(args[0]),
                            format!("`transpose` expects an array of arrays, but the elements are {t}"),
                        ))
                    }
                }
            }
            Prim::Slide(s, t) => {
                let (elem, n) = self.array_arg(prim, args[0])?;
                self.check(
                    span,
                    CheckKind::AtLeast {
                        len: n.clone(),
                        min: s.clone(),
                        what: format!("slide #{s} #{t}"),
                    },
                )?;
                // Windows that do not fit are dropped (as in Lift): `(n - s) / t + 1` with floor
                // division, written as one quotient; n >= s is checked, so C's `/` is the floor.
                let count = n.sub(s).add(t).div(t);
                Type::array(Type::array(elem, s.clone()), count)
            }
            Prim::Pad(l, r) => {
                let tv = self.infer(args[0])?;
                let (elem, n) = self.array_arg(prim, args[1])?;
                if !self.same(&tv, &elem) {
                    let (tv, elem) = distinct_texts(&tv, &elem);
                    return Err(Diagnostic::new(
                        self.span(args[0]),
                        format!("the padding value has type {tv}, but the elements are {elem}"),
                    ));
                }
                Type::array(elem, l.add(&n).add(r))
            }
            Prim::PadClamp(l, r) => {
                let (elem, n) = self.array_arg(prim, args[0])?;
                Type::array(elem, l.add(&n).add(r))
            }
            Prim::ReorderStride(s) => {
                let (elem, n) = self.array_arg(prim, args[0])?;
                self.check(
                    span,
                    CheckKind::Divisible {
                        len: n.clone(),
                        by: s.clone(),
                        what: format!("reorder-stride #{s}"),
                    },
                )?;
                Type::array(elem, n)
            }
            Prim::Reverse => {
                let (elem, n) = self.array_arg(prim, args[0])?;
                Type::array(elem, n)
            }
            Prim::Generate(n) => {
                let r = self.lambda(args[0], &[Type::int()])?;
                Type::array(r, n.clone())
            }
            Prim::Iterate(k) => self.iterate(e, k, args)?,
            Prim::IterateUntil(_) => self.iterate_until(e, args)?,
            Prim::Filter(_) => {
                let (elem, _) = self.array_arg(prim, args[1])?;
                let r = self.lambda(args[0], std::slice::from_ref(&elem))?;
                if r != Type::bool() {
                    return Err(Diagnostic::new(
                        self.span(args[0]),
                        format!("the predicate of `{name}` must return bool, but it returns {r}"),
                    )
                    .with_label(format!("returns {r}")));
                }
                Type::Exists(Box::new(elem))
            }
            Prim::AsVector(w) => {
                let (elem, n) = self.array_arg(prim, args[0])?;
                let Type::Scalar(s) = elem else {
                    return Err(Diagnostic::new(
                        self.span(args[0]),
                        format!("`asVector` needs an array of scalars, but the elements are {elem}"),
                    ));
                };
                let w = ArithExpr::cst(i64::from(*w));
                self.check(
                    span,
                    CheckKind::Divisible {
                        len: n.clone(),
                        by: w.clone(),
                        what: format!("asVector #{w}"),
                    },
                )?;
                Type::array(Type::Vector(s, w.as_cst().unwrap_or(1) as u8), n.div_assume_exact(&w))
            }
            Prim::AsScalar => {
                let (elem, n) = self.array_arg(prim, args[0])?;
                let Type::Vector(s, w) = elem else {
                    return Err(Diagnostic::new(
                        self.span(args[0]),
                        format!("`asScalar` needs an array of vectors, but the elements are {elem}"),
                    ));
                };
                Type::array(Type::Scalar(s), n.mul(&ArithExpr::cst(i64::from(w))))
            }
            Prim::To(_) => self.infer(args[0])?,
        })
    }

    /// `iterate #k f xs`: `f` is typed once on a symbolic length `L`, giving `F(L)`; the result
    /// length is `F` applied `k` times to the input length (Lift supports only `c*L` and `L+c`;
    /// substitution handles any `F`, e.g. halving).
    pub(super) fn iterate(&mut self, e: ExprId, k: &ArithExpr, args: &[ExprId]) -> Result<Type> {
        if self.info.host.is_loop(e) {
            // A host loop runs one kernel set on two buffers: the state keeps its type.
            let t = self.infer(args[1])?;
            return self.same_state(e, args[0], t, "iterate");
        }
        let state = self.infer(args[1])?;
        // a run-time count, or a state that is not an array: a loop of one work-item
        let (Some(count), false) = (k.as_cst(), Self::is_work_item_loop(k, &state)) else {
            return self.work_item_state(args[0], args[1], state, "iterate");
        };
        let (elem, n) = self.array_of(&Prim::Iterate(k.clone()), args[1], state)?;
        let mut k = self.n_iter;
        let lname = self.fresh_name("L", &mut k);
        self.n_iter = k;
        self.info.iter_vars.push(lname.clone());
        let l = ArithExpr::size_var_of_kind(VarKind::Iterate, &lname);
        let checks_before = self.info.checks.len();
        let r = self.lambda(args[0], &[Type::array(elem.clone(), l.clone())])?;
        let Type::Array(relem, f_l) = r.clone() else {
            return Err(Diagnostic::new(
                self.span(args[0]),
                format!("the function of `iterate` must return an array, but it returns {r}"),
            ));
        };
        if !self.same(&relem, &elem) {
            return Err(Diagnostic::new(
                self.span(args[0]),
                format!("the function of `iterate` must keep the element type {elem}, but it returns {r}"),
            ));
        }
        let body_checks: Vec<SizeCheck> = self.info.checks.drain(checks_before..).collect();
        // A length-preserving body needs no per-step work; others are unrolled, so bound k.
        if (f_l == l || self.norm_len(&f_l) == l) && body_checks.is_empty() {
            return Ok(Type::array(elem, n));
        }
        if count > MAX_ITERATE {
            return Err(Diagnostic::new(
                self.span(e),
                format!("`iterate #{count}` of a function that changes the length is limited to {MAX_ITERATE} steps"),
            ));
        }
        let mut len = n;
        for _ in 0..count {
            for c in &body_checks {
                let kind = match &c.kind {
                    CheckKind::Divisible { len: cl, by, what } => CheckKind::Divisible {
                        len: cl.subst(&lname, &len),
                        by: by.subst(&lname, &len),
                        what: what.clone(),
                    },
                    CheckKind::AtLeast { len: cl, min, what } => CheckKind::AtLeast {
                        len: cl.subst(&lname, &len),
                        min: min.subst(&lname, &len),
                        what: what.clone(),
                    },
                    CheckKind::Fits { len: cl } => CheckKind::Fits {
                        len: cl.subst(&lname, &len),
                    },
                };
                self.check(c.span, kind)?;
            }
            len = f_l.subst(&lname, &len);
        }
        Ok(Type::array(elem, len))
    }

    /// `(iterate-until #max (lambda (prev next) c) f x)`: `f` keeps the state's type and `c`
    /// is a `bool` or `[bool]1`.
    pub(super) fn iterate_until(&mut self, e: ExprId, args: &[ExprId]) -> Result<Type> {
        if !self.info.host.at_host(e) {
            return self.iterate_until_in_kernel(args);
        }
        let t = self.infer(args[2])?;
        let t = self.same_state(e, args[1], t, "iterate-until")?;
        let c = self.lambda(args[0], &[t.clone(), t.clone()])?;
        if c != Type::bool() && !self.is_bool1(&c) {
            return Err(Diagnostic::new(
                self.span(args[0]),
                format!("the condition of `iterate-until` must be a bool or [bool]1, but it is {c}"),
            ));
        }
        Ok(t)
    }

    /// Types the function of a host loop on the state type `t` and checks it returns `t`. An
    /// existential state `{∃X. [T]X}` (a filter in the step, or a filter result to start from)
    /// keeps its element type and may change its length every step: an array `[T]n` to start
    /// from whose step returns `{∃X. [T]X}` is that state from the first step on.
    pub(super) fn same_state(&mut self, e: ExprId, f: ExprId, t: Type, what: &str) -> Result<Type> {
        match &t {
            Type::Array(..) => {}
            Type::Exists(elem) if !elem.has_existential() => {}
            Type::Exists(_) => {
                return Err(Diagnostic::new(
                    self.span(e),
                    format!("the state of a host-level `{what}` cannot hold filter results inside its elements (not supported yet)"),
                ))
            }
            Type::Scalar(_) | Type::Vector(..) | Type::Tuple(_) | Type::Fun(..) => {
                return Err(Diagnostic::new(
                    self.span(e),
                    format!("the state of a host-level `{what}` must be an array, but it is {t}"),
                ))
            }
        }
        let checks_before = self.info.checks.len();
        let mut r = self.lambda(f, std::slice::from_ref(&t))?;
        let mut t = t;
        if let (Type::Array(elem, _), Type::Exists(relem)) = (&t, &r) {
            if self.same(elem, relem) {
                // Typed again on the existential state: what the first typing recorded for
                // the function's nodes is overwritten, and its size checks dropped.
                self.info.checks.truncate(checks_before);
                t = Type::Exists(elem.clone());
                r = self.lambda(f, std::slice::from_ref(&t))?;
            }
        }
        if !self.same(&r, &t) {
            let (t, r) = distinct_texts(&t, &r);
            return Err(Diagnostic::new(
                self.span(f),
                format!("the function of a host-level `{what}` must keep the state's type {t}, but it returns {r}"),
            )
            .with_note("the state stays in two device buffers that every step reads and writes"));
        }
        Ok(t)
    }

    pub(super) fn is_bool1(&self, t: &Type) -> bool {
        matches!(t, Type::Array(elem, n) if **elem == Type::bool() && n.as_cst() == Some(1))
    }
}
