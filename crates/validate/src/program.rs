//! Checks over the whole program once the walk is done: one launch size per kernel, the
//! capacities of run-time lengths (through `toX`, `let`, packs and maps), nested arrays of filter
//! results, and constant indices.

use super::*;

impl Validator<'_> {
    /// Rules about single primitives, wherever they are.
    pub(super) fn shapes(&mut self) {
        let mut seen = BTreeSet::new();
        let mut stack = vec![self.prog.body];
        let mut stored_tuple_of_arrays = false;
        while let Some(e) = stack.pop() {
            if !seen.insert(e) {
                continue;
            }
            stack.extend(self.prog.children(e));
            // both branches are evaluated and their C values selected; an array has no C value.
            // A host section chooses on the host, each array in buffers of its own.
            if matches!(self.prog.expr(e), Expr::If { .. })
                && self.info.host.section(e).is_none()
                && self.ty(e).is_some_and(tuple_with_array)
            {
                self.err(e, TUPLE_OF_ARRAYS_IF);
                continue;
            }
            let Expr::Prim { prim, args } = self.prog.expr(e) else {
                continue;
            };
            let tuple = |v: &Self, x: ExprId| matches!(v.ty(x), Some(Type::Tuple(_)));
            // A tuple of scalars and vectors pads and generates component by component; a
            // tuple holding arrays has no C value to fill with or return.
            let tuple_of_arrays = |v: &Self, x: ExprId| v.ty(x).is_some_and(tuple_with_array);
            match prim {
                Prim::Pad(..) if tuple_of_arrays(self, args[0]) => {
                    self.err(args[0], "padding with tuples containing arrays is not supported yet")
                }
                Prim::Generate(_) => {
                    let Some(body) = self.lambda(args[0]) else { continue };
                    if tuple_of_arrays(self, body) {
                        self.err(args[0], "generate of tuples containing arrays is not supported yet");
                    } else if self.is_array(body) {
                        self.err(args[0], "generate of arrays is not supported yet");
                    } else if self.has_statements(body) {
                        // With statements (`let`s, `at`'s bounds check) the function becomes a
                        // C function of the index, called where an element is read, with the
                        // scalars and vectors it reads from outside and the buffers of the
                        // arrays it reads as arguments: it may read nothing else, and compute
                        // only scalars.
                        let captured = ir::host::free_vars(self.prog, args[0]);
                        // Arrays of fixed lengths are read through their views, whose buffers
                        // and indices the C function takes as arguments; an array of filter
                        // results has its rows' lengths elsewhere.
                        let array = captured.iter().find(|v| match self.info.var_ty(**v) {
                            Type::Scalar(_) | Type::Vector(..) => false,
                            t @ Type::Array(..) => t.has_existential(),
                            Type::Tuple(_) | Type::Exists(_) | Type::Fun(..) => true,
                        });
                        if let Some(v) = array {
                            let name = self.prog.var(*v).name.clone();
                            self.err(
                                args[0],
                                format!("the function of `generate` binds names with `let` or reads with `at`, so it may read only its index, scalars, vectors and arrays of fixed lengths from outside, not `{name}` of type {}", self.info.var_ty(*v)),
                            );
                        } else if self.has_array_work(body) {
                            self.err(
                                args[0],
                                "the function of `generate` must compute its element from scalars: array primitives inside it are not supported yet",
                            );
                        }
                    }
                }
                Prim::Scan(kind) => {
                    // The accumulator is one C value: a private variable, and for `scanGlb`
                    // an element of local and global arrays as well.
                    let acc = self.ty(args[1]).cloned();
                    let ok = match (&acc, kind) {
                        (Some(Type::Scalar(_) | Type::Vector(..)), _) => true,
                        (Some(Type::Tuple(ts)), ScanKind::Seq | ScanKind::Plain) => {
                            ts.iter().all(|t| matches!(t, Type::Scalar(_) | Type::Vector(..)))
                        }
                        _ => false,
                    };
                    if !ok {
                        let what = acc.map_or_else(String::new, |t| format!(" of {t}"));
                        self.err(
                            e,
                            format!("`{}`{what} is not supported yet: a scan's accumulator is a scalar or a vector (inside a work-item also a tuple of them)", prim.name()),
                        );
                    }
                }
                Prim::Map(MapKind::Vec) => {
                    if let Some(body) = self.lambda(args[0]).filter(|b| tuple(self, *b)) {
                        self.err(body, "mapVec functions return scalars");
                    }
                }
                _ => {}
            }
            // Tuples holding arrays are stored as one buffer per component (struct of arrays),
            // with no room for run-time lengths; an accumulator is copied between steps as C
            // values, and a filter moves whole C elements.
            match prim {
                Prim::Map(_) if !self.layout_map(e) => {
                    let why = self.ty(e).and_then(tuple_storage_unsupported);
                    if let (Some(why), Some(body)) = (why, self.lambda(args[0])) {
                        self.err(body, why);
                        stored_tuple_of_arrays = true;
                    }
                }
                Prim::Reduce(_) => {
                    if let Some(body) = self
                        .lambda(args[0])
                        .filter(|b| self.ty(*b).is_some_and(tuple_with_array))
                    {
                        self.err(body, TUPLE_OF_ARRAYS_ACC);
                        stored_tuple_of_arrays = true;
                    }
                }
                Prim::Iterate(_) | Prim::IterateUntil(_)
                    if self.ty(e).is_some_and(|t| tuple_with_array(innermost(t))) =>
                {
                    self.err(e, TUPLE_OF_ARRAYS_ITERATE);
                    stored_tuple_of_arrays = true;
                }
                _ => {}
            }
        }
        let body = self.prog.body;
        if !stored_tuple_of_arrays && self.result_tuple(body).is_none() {
            if let Some(why) = self.ty(body).and_then(tuple_storage_unsupported) {
                self.err(body, why);
            }
        }
    }

    /// Buffers for filter results are allocated at their capacity, the length of the input
    /// they are filtered from: every run-time length the back end allocates for (the program's
    /// result, values unpacked by `let`) must lead back to a filter through the forms that
    /// carry it.
    pub(super) fn capacities(&mut self) {
        let body = self.prog.body;
        // A host section's values are bounded by the driver (`lift::host`), unit by unit.
        let res = match self.ty(body) {
            _ if self.has_section(body) => Ok(()),
            Some(Type::Exists(_)) => self.cap(body, 0),
            Some(Type::Array(el, _)) if matches!(**el, Type::Exists(_)) => self.row_cap(body, 0),
            Some(Type::Array(..)) => match self.rows_of_rows(body).last().and_then(|m| self.map_body(*m)) {
                Some(inner) => self.row_cap(inner, 0),
                None => Ok(()),
            },
            Some(Type::Tuple(_)) => match self.result_tuple(body) {
                Some(args) => args.into_iter().try_for_each(|a| match self.ty(a) {
                    Some(Type::Exists(_)) => self.cap(a, 0),
                    Some(Type::Array(r, _)) if matches!(**r, Type::Exists(_)) => self.row_cap(a, 0),
                    _ => Ok(()),
                }),
                None => Ok(()),
            },
            _ => Ok(()),
        };
        let mut found: Vec<(ExprId, &'static str)> = res.err().into_iter().collect();
        let lets: Vec<ExprId> = self
            .info
            .unpacks
            .keys()
            .filter_map(|b| match b {
                Binder::Let(l) => Some(*l),
                Binder::Param(..) => None,
            })
            .collect();
        for l in lets {
            if let Expr::Let { value, .. } = self.prog.expr(l) {
                if self.has_section(*value) {
                    continue;
                }
                if let Err(f) = self.cap(*value, 0) {
                    found.push(f);
                }
            }
        }
        for (e, msg) in found {
            self.err(e, msg);
        }
    }

    /// The components of the program's result when it is a `tuple` (below `let`s and `toX`)
    /// holding filter results only as whole components (or rows of them), each stored as a
    /// result of its own with its own length(s); `None` otherwise.
    pub(super) fn result_tuple(&self, e: ExprId) -> Option<Vec<ExprId>> {
        match self.prog.expr(e) {
            Expr::Let { body, .. } => self.result_tuple(*body),
            Expr::Prim {
                prim: Prim::To(_),
                args,
            } => self.result_tuple(args[0]),
            Expr::Op { op: Op::Tuple, args } => {
                let stored = |x: &Type| !exist_inside(x) && tuple_storage_unsupported(x).is_none();
                let whole = |a: &ExprId| match self.ty(*a) {
                    Some(Type::Exists(x)) => stored(x),
                    Some(Type::Array(r, _)) if matches!(&**r, Type::Exists(x) if stored(x)) => true,
                    Some(t) => !exist_inside(t),
                    None => false,
                };
                let exist = args.iter().any(|a| self.ty(*a).is_some_and(exist_inside));
                (exist && args.iter().all(whole)).then(|| args.clone())
            }
            Expr::Var(_)
            | Expr::Lit(_)
            | Expr::Lambda { .. }
            | Expr::Prim { .. }
            | Expr::Op { .. }
            | Expr::If { .. }
            | Expr::Pack(_) => None,
        }
    }

    /// The program's result when it is a map (below `let`s and `toX`) of maps whose elements are
    /// filter results (`[[∃X. T]m]n`): stored with a length per row of each row. The nodes from
    /// the body down to the outer map; empty otherwise.
    pub(super) fn rows_of_rows(&self, body: ExprId) -> Vec<ExprId> {
        let mut chain = vec![body];
        let mut e = body;
        loop {
            e = match self.prog.expr(e) {
                Expr::Prim {
                    prim: Prim::To(_),
                    args,
                } => args[0],
                Expr::Let { body, .. } => *body,
                Expr::Var(_)
                | Expr::Lit(_)
                | Expr::Lambda { .. }
                | Expr::Prim { .. }
                | Expr::Op { .. }
                | Expr::If { .. }
                | Expr::Pack(_) => break,
            };
            chain.push(e);
        }
        let rows = |x: ExprId| matches!(self.ty(x), Some(Type::Array(el, _)) if matches!(&**el, Type::Exists(t) if !t.has_existential()));
        let two = matches!(self.ty(e), Some(Type::Array(el, _)) if matches!(&**el, Type::Array(r, _) if matches!(&**r, Type::Exists(t) if !t.has_existential())));
        let inner_map = self.map_body(e).map(|b| self.strip_to(b));
        let ok = two
            && inner_map.is_some_and(|m| rows(m) && matches!(self.prog.expr(m), Expr::Prim { prim: Prim::Map(_), .. }));
        if ok {
            chain
        } else {
            vec![]
        }
    }

    /// The body of the function of `e` when `e` is a map.
    fn map_body(&self, e: ExprId) -> Option<ExprId> {
        if let Expr::Prim {
            prim: Prim::Map(_),
            args,
        } = self.prog.expr(e)
        {
            return self.lambda(args[0]);
        }
        None
    }

    /// `e` without the `toX` around it.
    fn strip_to(&self, e: ExprId) -> ExprId {
        if let Expr::Prim {
            prim: Prim::To(_),
            args,
        } = self.prog.expr(e)
        {
            return self.strip_to(args[0]);
        }
        e
    }

    /// Arrays of filter results have one level of run-time lengths (a length per row); an array
    /// of arrays of them would need lengths per row of each row, which only the program's
    /// result has ([`Self::rows_of_rows`]).
    pub(super) fn nested_rows(&mut self) {
        fn depth(t: &Type) -> usize {
            match t {
                Type::Array(el, _) if el.has_existential() => 1 + depth(el),
                Type::Scalar(_)
                | Type::Vector(..)
                | Type::Tuple(_)
                | Type::Array(..)
                | Type::Exists(_)
                | Type::Fun(..) => 0,
            }
        }
        let result = self.rows_of_rows(self.prog.body);
        let mut stack = vec![self.prog.body];
        while let Some(e) = stack.pop() {
            if matches!(self.prog.expr(e), Expr::Lambda { .. }) {
                stack.extend(self.prog.children(e));
                continue;
            }
            match self.ty(e) {
                Some(t) if depth(t) >= 2 && !result.contains(&e) => {
                    let t = t.clone();
                    self.err(
                        e,
                        format!("arrays of arrays of filter results ({t}) are not supported yet by the OpenCL back end: only one level of rows with their own lengths is"),
                    );
                }
                _ => stack.extend(self.prog.children(e)),
            }
        }
    }

    /// `at c xs` with a literal index `c` out of range where the length is known (a literal,
    /// fixed by the built-in sizes, or at some step of an `iterate`) fails on every run that
    /// reaches it: refused here, at its place. (Within range, the code generator drops its
    /// run-time check; elsewhere the check stays.)
    pub(super) fn constant_indices(&mut self) {
        for i in 0..self.prog.exprs.len() {
            let e = ExprId(i as u32);
            let Expr::Op { op: Op::At, args } = self.prog.expr(e) else {
                continue;
            };
            let Some((c, at)) = int_literal(self.prog, args[0]) else {
                continue;
            };
            if c < 0 {
                self.err(at, format!("the index of `at` is {c}, below 0"));
                continue;
            }
            let Some(Type::Array(_, n)) = self.ty(args[1]) else {
                continue;
            };
            let n = n.clone();
            let out = |d: &[ir::ArithExpr]| Some(i64::from(d[0].as_cst().is_some_and(|len| c >= len)));
            if let Some((1, shown)) = self.largest(std::slice::from_ref(&n), out) {
                self.err(
                    at,
                    format!(
                        "the index of `at` is {c}, out of range for an array of length {}",
                        shown[0]
                    ),
                );
            }
        }
    }

    /// Whether the capacity of the filter result `e` is known: followed through `toX`, `let`
    /// bodies, packs, `at` of an array of filter results, and the binders of the run-time
    /// lengths in its input's length.
    pub(super) fn cap(&self, e: ExprId, depth: usize) -> Result<(), (ExprId, &'static str)> {
        if depth > MAX_CAP_DEPTH {
            return Err((e, "the OpenCL back end cannot bound the length of this filter result"));
        }
        if self.info.packs.contains(&e) {
            return self.close_caps(e, depth);
        }
        match self.prog.expr(e) {
            Expr::Prim {
                prim: Prim::Filter(_),
                args,
            } => self.close_caps(args[1], depth),
            Expr::Prim {
                prim: Prim::To(_),
                args,
            } => self.cap(args[0], depth + 1),
            Expr::Pack(inner) => self.close_caps(*inner, depth),
            Expr::Let { body, .. } => self.cap(*body, depth + 1),
            Expr::Op { op: Op::At, args } => self.row_cap(args[1], depth + 1),
            Expr::Var(_) | Expr::Lit(_) | Expr::Lambda { .. } | Expr::Prim { .. } | Expr::Op { .. } | Expr::If { .. } => Err((
                e,
                "the OpenCL back end cannot bound the length of this filter result: it must come from a filter through let, toX or `at`",
            )),
        }
    }

    /// The run-time lengths in the length of array `e`, each bounded through its binder.
    pub(super) fn close_caps(&self, e: ExprId, depth: usize) -> Result<(), (ExprId, &'static str)> {
        let Some(Type::Array(_, n)) = self.ty(e) else {
            return Ok(());
        };
        for v in n.free_vars() {
            let Some(binder) = self.info.unpacks.iter().find(|(_, x)| **x == v).map(|(b, _)| *b) else {
                continue;
            };
            match binder {
                Binder::Let(l) => {
                    if let Expr::Let { value, .. } = self.prog.expr(l) {
                        self.cap(*value, depth + 1)?;
                    }
                }
                Binder::Param(lam, _) => {
                    let map = (0..self.prog.exprs.len() as u32).map(ExprId).find(
                        |id| matches!(self.prog.expr(*id), Expr::Prim { args, .. } if args.first() == Some(&lam)),
                    );
                    if let Some(Expr::Prim { args, .. }) = map.map(|m| self.prog.expr(m)) {
                        if args.len() > 1 {
                            self.row_cap(args[1], depth + 1)?;
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// Whether the capacity of the rows of the array of filter results `e` is known.
    pub(super) fn row_cap(&self, e: ExprId, depth: usize) -> Result<(), (ExprId, &'static str)> {
        if depth > MAX_CAP_DEPTH {
            return Err((e, "the OpenCL back end cannot bound the length of these filter results"));
        }
        match self.prog.expr(e) {
            Expr::Prim {
                prim: Prim::Map(_),
                args,
            } => match self.lambda(args[0]) {
                Some(body) => self.cap(body, depth + 1),
                None => Ok(()),
            },
            Expr::Prim {
                prim: Prim::To(_),
                args,
            } => self.row_cap(args[0], depth + 1),
            Expr::Let { body, .. } => self.row_cap(*body, depth + 1),
            Expr::Var(v) => {
                let def = (0..self.prog.exprs.len() as u32)
                    .map(ExprId)
                    .find(|id| matches!(self.prog.expr(*id), Expr::Let { var, .. } if var == v));
                match def.map(|d| self.prog.expr(d)) {
                    Some(Expr::Let { value, .. }) => self.row_cap(*value, depth + 1),
                    _ => Err((
                        e,
                        "the OpenCL back end supports arrays of filter results only when bound by let",
                    )),
                }
            }
            Expr::Lit(_) | Expr::Lambda { .. } | Expr::Prim { .. } | Expr::Op { .. } | Expr::If { .. } | Expr::Pack(_) => Err((
                e,
                "the OpenCL back end supports arrays of filter results only as the direct result of a map (or through let and toX), not rearranged",
            )),
        }
    }

    /// Whether a scalar expression needs statements in C (a binding, a loop, a temporary).
    /// Whether `e` holds an array primitive or a `pack` (work beyond scalar operators, `if`
    /// and `let`).
    pub(super) fn has_array_work(&self, e: ExprId) -> bool {
        match self.prog.expr(e) {
            // a loop over a scalar or vector state inside the work-item is statements over scalars
            Expr::Prim {
                prim: Prim::Iterate(_) | Prim::IterateUntil(_),
                ..
            } if matches!(self.ty(e), Some(Type::Scalar(_) | Type::Vector(..))) => {
                self.prog.children(e).iter().any(|c| self.has_array_work(*c))
            }
            Expr::Prim { .. } | Expr::Pack(_) => true,
            _ => self.prog.children(e).iter().any(|c| self.has_array_work(*c)),
        }
    }

    pub(super) fn has_statements(&self, e: ExprId) -> bool {
        match self.prog.expr(e) {
            Expr::Let { .. } | Expr::Prim { .. } | Expr::Pack(_) | Expr::Op { op: Op::At, .. } => true,
            _ => self.prog.children(e).iter().any(|c| self.has_statements(*c)),
        }
    }

    /// `n` as the generated code sees it: with the built-in sizes substituted (and simplified
    /// as the code generator does, so that both agree on which lengths are constants).
    pub(super) fn fixed(&self, n: &ir::ArithExpr) -> ir::ArithExpr {
        let mut n = n.clone();
        for (name, v) in self.known {
            if n.mentions(name) {
                n = n.subst(name, &ir::ArithExpr::cst(*v));
            }
        }
        n
    }

    /// Whether a length is a constant in generated code: a literal, one the built-in sizes
    /// fix, or one of an `iterate` body, typed once over a symbolic length but emitted once
    /// per step, where that length is a constant.
    pub(super) fn known(&self, n: &ir::ArithExpr) -> bool {
        let n = self.fixed(n);
        n.as_cst().is_some()
            || self.largest(std::slice::from_ref(&n), |d| d[0].as_cst()).is_some()
            || (n.free_vars().iter()).all(|v| self.info.iter_vars.contains(v) && !self.steps.contains_key(v))
    }
}
