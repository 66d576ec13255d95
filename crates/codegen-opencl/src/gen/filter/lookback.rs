//! The look-back over earlier tiles' status words, the work-group scan of a tile's packed counts,
//! the local staging of a tile, and the predicate and element reads the filter's kernel shares
//! between its two shapes.

use super::*;

impl Gen<'_> {
    /// `f_c`, the tile's count of kept elements, and `f_a`, its exclusive prefix (0 until the
    /// look-back); work-item 0 publishes the tile's aggregate.
    pub(super) fn look_back_start(&mut self, f: &Names, st: &Ident, rounds: usize, parts: usize) {
        let total = (0..parts)
            .map(|h| v(&f.roff).index(int(h * (rounds + 1) + rounds)))
            .reduce(add)
            .expect("at least one part");
        self.push(Stmt::decl(CType::INT, &f.c, total));
        self.push(Stmt::decl(CType::INT, &f.a, int(0)));
        self.open_if(Expr::bin(BinOp::Eq, v(&f.l), int(0)));
        self.push(Stmt::Call(Expr::call(
            "atomic_xchg",
            vec![add(v(st), add(int(1), v(&f.t))), add(v(&f.c), int(1))],
        )));
        self.close();
    }

    /// Decoupled look-back with a window, leaving the tile's exclusive prefix in `f_a` (the same
    /// in every work-item). Work-item 0 publishes the tile's aggregate (its parts' totals) as
    /// soon as the scan has counted it; then each of the first `LOOKBACK` work-items reads the
    /// status of one of the `LOOKBACK` tiles below the window's top at once, and the window is
    /// reduced in parallel through two local words: the nearest lane that is not an aggregate
    /// (`atomic_min` over `2 * lane + inclusive`), then the sum of the lanes before it and of
    /// that lane if it holds an inclusive prefix (`atomic_add`). The loop stops at an inclusive
    /// prefix, re-reads from the first unpublished tile, or slides past a window of aggregates.
    /// The two words alternate between trips (`f_q`): a trip resets the pair the trip before
    /// read, after the barrier that ends those reads. The last tile writes the length. Status
    /// words are only written and read with atomics, so no other memory needs ordering: the
    /// output positions depend on nothing else.
    /// `tiles`: the tiles the status words are laid out for, and those that run.
    pub(super) fn look_back(&mut self, f: &Names, st: &Ident, (tiles, live): (&ArithExpr, &ArithExpr), len_loc: Expr) {
        let w = LOOKBACK;
        let none = int(2 * w);
        let agg_at = |k: Expr| add(v(st), add(int(1), k));
        let inc_at = |k: Expr| add(v(st), add(add(int(1), arith(tiles)), k));
        let load = |p: Expr| Expr::call(STATUS_LOAD, vec![p]);
        let publish = |p: Expr, x: Expr| Stmt::Call(Expr::call("atomic_xchg", vec![p, add(x, int(1))]));
        let sub = |a: Expr, b: Expr| Expr::bin(BinOp::Sub, a, b);
        let ne0 = |x: &Ident| Expr::bin(BinOp::Ne, v(x), int(0));
        let stop_of = |q: Expr| v(&f.lb).index(q);
        let sum_of = |q: Expr| v(&f.lb).index(add(int(2), q));
        // `f_j`: the nearest tile of the window; -1 once the prefix is known.
        self.open(Head::For {
            var: f.j.clone(),
            init: sub(v(&f.t), int(1)),
            cond: Expr::bin(BinOp::Ge, v(&f.j), int(0)),
            step: (AssignOp::Add, int(0)),
            unroll: false,
        });
        // Lane `f_l` reads tile `f_w` (tiles before the first count as a prefix of 0); both
        // words are read at once: each only ever changes from 0 to its value.
        self.push(Stmt::decl(CType::INT, &f.y, int(0)));
        self.open_if(Expr::bin(BinOp::Lt, v(&f.l), int(w)));
        self.push(Stmt::decl(CType::INT, &f.w, sub(v(&f.j), v(&f.l))));
        self.push(Stmt::decl(CType::INT, &f.s, int(0)));
        self.push(Stmt::decl(CType::INT, &f.z, int(0)));
        self.open_if(Expr::bin(BinOp::Ge, v(&f.w), int(0)));
        self.push(Stmt::assign(v(&f.s), load(inc_at(v(&f.w)))));
        self.push(Stmt::assign(v(&f.z), load(agg_at(v(&f.w)))));
        self.close();
        let incl = Expr::bin(BinOp::Or, Expr::bin(BinOp::Lt, v(&f.w), int(0)), ne0(&f.s));
        let value = Expr::select(
            Expr::bin(BinOp::Lt, v(&f.w), int(0)),
            int(0),
            Expr::select(ne0(&f.s), sub(v(&f.s), int(1)), sub(v(&f.z), int(1))),
        );
        self.push(Stmt::assign(v(&f.y), value));
        self.open_if(Expr::bin(
            BinOp::Or,
            incl.clone(),
            Expr::bin(BinOp::Eq, v(&f.z), int(0)),
        ));
        let code = add(mul(int(2), v(&f.l)), Expr::select(incl, int(1), int(0)));
        self.push(Stmt::Call(Expr::call("atomic_min", vec![add(v(&f.lb), v(&f.q)), code])));
        self.close();
        self.close();
        self.push(Stmt::Barrier(Fence::Local));
        let other = sub(int(1), v(&f.q));
        self.open_if(Expr::bin(BinOp::Eq, v(&f.l), int(0)));
        self.push(Stmt::assign(stop_of(other.clone()), none.clone()));
        self.push(Stmt::assign(sum_of(other), int(0)));
        self.close();
        self.push(Stmt::decl(CType::INT, &f.s, stop_of(v(&f.q))));
        let adds = Expr::bin(
            BinOp::And,
            Expr::bin(BinOp::Lt, mul(int(2), v(&f.l)), v(&f.s)),
            Expr::bin(BinOp::Gt, v(&f.y), int(0)),
        );
        self.open_if(Expr::bin(BinOp::And, Expr::bin(BinOp::Lt, v(&f.l), int(w)), adds));
        self.push(Stmt::Call(Expr::call(
            "atomic_add",
            vec![add(v(&f.lb), add(int(2), v(&f.q))), v(&f.y)],
        )));
        self.close();
        self.push(Stmt::Barrier(Fence::Local));
        self.push(add_to(v(&f.a), sum_of(v(&f.q))));
        self.push(Stmt::assign(v(&f.s), stop_of(v(&f.q))));
        let next = Expr::select(
            Expr::bin(BinOp::Eq, v(&f.s), none),
            sub(v(&f.j), int(w)),
            Expr::select(
                Expr::bin(BinOp::BitAnd, v(&f.s), int(1)),
                Expr::Int(-1),
                sub(v(&f.j), Expr::bin(BinOp::Div, v(&f.s), int(2))),
            ),
        );
        self.push(Stmt::assign(v(&f.j), next));
        self.push(Stmt::assign(v(&f.q), sub(int(1), v(&f.q))));
        self.close();
        self.open_if(Expr::bin(BinOp::Eq, v(&f.l), int(0)));
        self.push(publish(inc_at(v(&f.t)), add(v(&f.a), v(&f.c))));
        let last = sub(arith(live), int(1));
        self.open_if(Expr::bin(BinOp::Eq, v(&f.t), last));
        self.push(Stmt::assign(len_loc, add(v(&f.a), v(&f.c))));
        self.close();
        self.close();
    }

    /// Private arrays holding one element per slot: their declarations, the leaves to load
    /// (element `f_e` into slot `f_i`), and the element as read from slot `f_i`.
    pub(super) fn stage(
        &mut self,
        f: &Names,
        r: &Read,
        ty: &Type,
        decls: &mut Vec<Stmt>,
        leaves: &mut Vec<Leaf>,
        sh: Shape,
    ) -> Result<Read> {
        match (r, ty) {
            (Read::Tuple(rs), Type::Tuple(ts)) if rs.len() == ts.len() => Ok(Read::Tuple(
                rs.iter()
                    .zip(ts)
                    .map(|(r, t)| self.stage(f, r, t, decls, leaves, sh))
                    .collect::<Result<_>>()?,
            )),
            (Read::Expr(x), t) => {
                let name = self.fresh("x");
                let ty = self.ctype(t)?;
                decls.push(Stmt::Decl {
                    ty: ty.clone(),
                    name: name.clone(),
                    space: None,
                    len: Some(sh.chunk * sh.rounds() * sh.parts),
                    init: None,
                    is_const: false,
                });
                // Element `f_e` of a buffer itself: a chunk of them is one vector.
                let vector = match (x, &ty) {
                    (Access::Elem { buf, idx }, CType::Scalar(s))
                        if idx.as_var().is_some_and(|(name, _)| name == f.e.as_str()) =>
                    {
                        Some((v(&self.buf_ident(buf)), *s))
                    }
                    _ => None,
                };
                leaves.push(Leaf {
                    array: name.clone(),
                    read: self.access_expr(x),
                    vector,
                });
                Ok(Read::Expr(Access::Value(v(&name).index(v(&f.i)))))
            }
            (Read::Tuple(_), t) => Err(ir::Diagnostic::new(
                ir::Span::default(),
                format!("internal: tuple value of type {t}"),
            )),
        }
    }

    /// Exclusive scan of the packed flags of every part `f_b` of the tile (`f_pk[f_b]`) over the
    /// work-group into `f_ex[f_b]`, and the offsets of each round's run in the part into the
    /// part's `rounds + 1` slots of `f_roff` (the last holds the part's total). All parts go
    /// through the same three barriers. The first `runs` work-items scan runs of `SCAN_RUN`
    /// work-items serially and then the run totals (a Hillis–Steele scan costs 16 barriers); runs
    /// are padded by one slot so that those serial reads hit distinct local-memory banks.
    pub(super) fn scan_tile(&mut self, f: &Names, slots: usize, runs: usize, rounds: usize, parts: usize, bits: usize) {
        let run = SCAN_RUN;
        let pad = run + 1;
        // slot of work-item `f_l` in part `f_b`'s region of `f_scan`, one pad slot per run
        let my_slot = || {
            let base = add(mul(v(&f.b), int(slots)), v(&f.l));
            v(&f.scan).index(add(base, Expr::bin(BinOp::Div, v(&f.l), int(run))))
        };
        let in_part = |arr: &Ident, k: Expr| v(arr).index(add(mul(v(&f.b), int(runs)), k));
        let each_part_unrolled = |g: &mut Self, unroll: bool| g.open_for(&f.b, int(0), int(parts), int(1), unroll);
        let each_part = |g: &mut Self| each_part_unrolled(g, true);
        each_part(self);
        self.push(Stmt::assign(my_slot(), v(&f.pk).index(v(&f.b))));
        self.close();
        self.push(Stmt::Barrier(Fence::Local));
        self.open_if(Expr::bin(BinOp::Lt, v(&f.l), int(runs)));
        each_part(self);
        self.push(Stmt::decl(CType::ULONG, &f.a, int(0)));
        self.open_for(&f.j, int(0), int(run), int(1), true);
        let s = add(add(mul(v(&f.b), int(slots)), mul(v(&f.l), int(pad))), v(&f.j));
        self.push(Stmt::decl(CType::INT, &f.s, s));
        self.push(Stmt::decl(CType::ULONG, &f.y, v(&f.scan).index(v(&f.s))));
        self.push(Stmt::assign(v(&f.scan).index(v(&f.s)), v(&f.a)));
        self.push(add_to(v(&f.a), v(&f.y)));
        self.close();
        self.push(Stmt::assign(in_part(&f.runsum, v(&f.l)), v(&f.a)));
        self.close();
        self.close();
        self.push(Stmt::Barrier(Fence::Local));
        self.open_if(Expr::bin(BinOp::Lt, v(&f.l), int(runs)));
        // Not unrolled: PoCL's and Oclgrind's Clang drop the last run's stores of `f_roff`
        // when this loop is (measured: every tile counted 0).
        each_part_unrolled(self, false);
        self.push(Stmt::decl(CType::ULONG, &f.a, int(0)));
        self.open_for(&f.j, int(0), int(runs), int(1), true);
        let before = Expr::select(
            Expr::bin(BinOp::Lt, v(&f.j), v(&f.l)),
            in_part(&f.runsum, v(&f.j)),
            int(0),
        );
        self.push(add_to(v(&f.a), before));
        self.close();
        self.push(Stmt::assign(in_part(&f.runpre, v(&f.l)), v(&f.a)));
        // The totals are added unpacked: a round's total can be 256, one more than a field holds.
        self.open_if(Expr::bin(BinOp::Eq, v(&f.l), int(runs - 1)));
        self.push(Stmt::decl(CType::ULONG, &f.z, in_part(&f.runsum, v(&f.l))));
        self.push(Stmt::decl(CType::INT, &f.run, int(0)));
        self.open_for(&f.r, int(0), int(rounds), int(1), false);
        let roff = |k: Expr| v(&f.roff).index(add(mul(v(&f.b), int(rounds + 1)), k));
        self.push(Stmt::assign(roff(v(&f.r)), v(&f.run)));
        self.push(add_to(
            v(&f.run),
            add(field(v(&f.a), &f.r, bits), field(v(&f.z), &f.r, bits)),
        ));
        self.close();
        self.push(Stmt::assign(roff(int(rounds)), v(&f.run)));
        self.close();
        self.close();
        self.close();
        self.push(Stmt::Barrier(Fence::Local));
        let run_of = Expr::bin(BinOp::Div, v(&f.l), int(run));
        each_part(self);
        self.push(Stmt::assign(
            v(&f.ex).index(v(&f.b)),
            add(in_part(&f.runpre, run_of), my_slot()),
        ));
        self.close();
    }

    /// The element type and output buffer where the GPU's shape gathers the kept elements in
    /// local memory: 4-byte scalar elements whose stored values (the element, or the fused
    /// map's scalar result of it) go to a plain buffer at the filter's positions; `None` where
    /// each is stored in place.
    pub(super) fn compact_type(
        &mut self,
        f: &Names,
        consumer: Option<ExprId>,
        elem_ty: &Type,
        rows: bool,
        dest: &Dest,
        cap: &ArithExpr,
    ) -> Result<Option<(CType, String)>> {
        if rows {
            return Ok(None);
        }
        if let Some(g) = consumer {
            let (_, body) = self.lambda(g)?;
            if !matches!(self.info.ty(body), Type::Scalar(_)) {
                return Ok(None);
            }
        }
        if !matches!(elem_ty, Type::Scalar(_)) {
            return Ok(None);
        }
        let ct = self.ctype(elem_ty)?;
        if !matches!(ct, CType::Scalar(crate::ast::Scalar::Int | crate::ast::Scalar::Float)) {
            return Ok(None);
        }
        let pos = ArithExpr::var(f.o.as_str(), Range::upto(cap.clone()));
        Ok(match dest.view.write(&[pos]) {
            Ok(Loc::Plain(Access::Elem { buf, idx })) if idx.as_var().is_some_and(|(n, _)| n == f.o.as_str()) => {
                Some((ct, buf))
            }
            Ok(_) | Err(_) => None,
        })
    }

    /// The element `f_e` of `xs` as a view (inside the filter kernels).
    pub(super) fn filter_elem(&mut self, f: &Names, xs: ExprId) -> Result<Rc<View>> {
        let n = self.len_of(xs)?;
        let xv = self.value(xs)?;
        Ok(xv.access(ArithExpr::var(f.e.as_str(), Range::upto(n))))
    }

    /// The predicate applied to the element `x`, as an int flag that is 0 past the end (the
    /// predicate is not evaluated there: it may index other arrays with the element).
    pub(super) fn filter_pred(&mut self, f: &Names, p: ExprId, x: Rc<View>, n: &ArithExpr) -> Result<Ident> {
        let (params, body) = self.lambda(p)?;
        self.bind(params[0], Bound::View(x));
        let flag = self.fresh("p");
        self.push(Stmt::decl(CType::INT, &flag, int(0)));
        self.open_if(Expr::bin(BinOp::Lt, v(&f.e), arith(n)));
        let c = self.scalar_expr(body)?;
        self.push(Stmt::assign(v(&flag), Expr::select(c, int(1), int(0))));
        self.close();
        Ok(flag)
    }

    /// The size conditions of the program (`split #k`, `slide`) on a run-time length held on
    /// the device that the kernel being finished reads (`used`), as statements of its first
    /// work-item setting the error flag; each condition is checked by the first kernel reading
    /// its length. The host reads the flag once, after all launches.
    pub(in crate::gen) fn length_checks_in(&mut self, used: &BTreeSet<String>) -> Vec<Stmt> {
        let mut out = vec![];
        for (i, c) in self.info.checks.iter().enumerate() {
            if self.length_checks.iter().any(|(j, _)| *j == i) {
                continue;
            }
            let subst = |e: &ArithExpr| {
                let mut e = e.clone();
                for (x, to) in &self.lengths {
                    if e.mentions(x) {
                        e = e.subst(x, to);
                    }
                }
                e
            };
            let (kind, cond) = match &c.kind {
                CheckKind::Divisible { len, by, what } => {
                    let (len, by) = (subst(len), subst(by));
                    let bad = Expr::bin(BinOp::Ne, Expr::bin(BinOp::Rem, arith(&len), arith(&by)), int(0));
                    let bad = match by.as_cst() {
                        Some(k) if k != 0 => bad,
                        Some(_) | None => Expr::bin(BinOp::Or, Expr::bin(BinOp::Eq, arith(&by), int(0)), bad),
                    };
                    let what = what.clone();
                    (CheckKind::Divisible { len, by, what }, bad)
                }
                CheckKind::AtLeast { len, min, what } => {
                    let (len, min) = (subst(len), subst(min));
                    let bad = Expr::bin(BinOp::Lt, arith(&len), arith(&min));
                    let what = what.clone();
                    (CheckKind::AtLeast { len, min, what }, bad)
                }
                CheckKind::Fits { .. } => continue,
            };
            let vars = match &kind {
                CheckKind::Divisible { len, by, .. } => &len.free_vars() | &by.free_vars(),
                CheckKind::AtLeast { len, min, .. } => &len.free_vars() | &min.free_vars(),
                CheckKind::Fits { .. } => continue,
            };
            // One device length, read by this kernel; every other variable is a size.
            let device: Vec<&String> = vars.iter().filter(|v| self.length_origins.contains_key(*v)).collect();
            let sizes_only = vars
                .iter()
                .all(|v| self.length_origins.contains_key(v) || self.size_names.iter().any(|(_, c)| c.as_str() == v));
            let [len_var] = device.as_slice() else { continue };
            if !sizes_only || !used.contains(len_var.as_str()) {
                continue;
            }
            let (filter, buffer) = self.length_origins[*len_var];
            let flag = self.checks.len();
            self.checks.push(c.span);
            let first = [0, 1, 2].map(|d| Expr::bin(BinOp::Eq, Expr::call("get_global_id", vec![int(d)]), int(0)));
            let first = first
                .into_iter()
                .reduce(|a, b| Expr::bin(BinOp::And, a, b))
                .expect("three");
            out.push(Stmt::If {
                cond: Expr::bin(BinOp::And, first, cond),
                then: vec![Stmt::Call(Expr::call(
                    "atomic_max",
                    vec![Expr::var(&self.error_flag), int(flag + 1)],
                ))],
                els: vec![],
            });
            self.length_checks.push((
                i,
                crate::LengthCheck {
                    flag,
                    check: typeck::SizeCheck { span: c.span, kind },
                    filter,
                    length: ((*len_var).clone(), buffer),
                },
            ));
        }
        out
    }
}
