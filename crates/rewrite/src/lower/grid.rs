//! Whole-array reductions in one launch (`gridreduce`): groups a grid apart, the last group to
//! finish combining the results, and the variant whose work-items read vectors.

use super::*;

impl Lowerer<'_> {
    /// `gridreduce g s f z xs` (see `rules::reductions::GridPartial`):
    /// `let parts = join (mapWrg (λgrp. tree (join (transpose grp)))
    ///                     (split #s (transpose (split #(g·s) (pad #0 #r z xs)))))
    ///  in join (mapWrg (λc. tree c) (split #g' (pad #0 #(g'-g) z parts)))`
    /// with `r` padding `xs` with the neutral `z` to a multiple of `g·s`: work-item `l` of group
    /// `w` reduces `xs[w·s + l], xs[w·s + l + g·s], …` (every step of every group reads one
    /// contiguous run of `g·s` elements), each group combines its `s` results by the work-group
    /// tree, and one group combines the `g` results, padded with `z` to a multiple of `s` so
    /// that all its work-items read a few of them at once. The code generator runs that last
    /// group inside the first launch, in whichever group finishes last (`codegen_opencl`'s
    /// `gen/reduce.rs`).
    pub(super) fn host_grid(&mut self, g: i64, s: i64, f: &Rc<Term>, z: &Rc<Term>, x: &Rc<Term>) -> Out {
        use arith::ArithExpr as A;
        let lanes = g >> crate::sizes::GRID_LANES_SHIFT;
        if lanes > 1 {
            return self.host_grid_lanes(g & ((1 << crate::sizes::GRID_LANES_SHIFT) - 1), s, lanes, f, z, x);
        }
        let gs = g * s;
        let Some(len) = x.len.clone() else {
            self.b
                .broken
                .get_or_insert_with(|| "a grid reduction of unknown length".into());
            return (self.b.int(0), 0.0);
        };
        let rows_len = len.add(&A::cst(gs - 1)).div(&A::cst(gs));
        // xs padded by the neutral element up to the next multiple of g·s (nothing when it is one)
        let pad = A::cst(gs - 1).sub(&len.sub(&A::cst(1)).rem(&A::cst(gs)));
        // a dot product `map h (zip p q)`: p and q padded (with z = 0, where h is 0), h fused
        // into the work-items' loop; any other `map h ys`: the lanes past `ys` marked, h
        // applied only to the elements read (`Lowerer::guarded_elems`)
        let guarded = match (&x.op, x.kids.first().map(|h| &h.op)) {
            (TOp::Map, Some(TOp::Sym(h))) if !self.zero_product_dot(h, f, &x.kids[1]) => Some(*h),
            _ => None,
        };
        let (h, padded, xc, bind) = match (&x.op, x.kids.first().map(|h| &h.op)) {
            (TOp::Map, Some(TOp::Sym(_))) if guarded.is_some() => {
                (None, self.guarded_elems(&x.kids[1], &pad), 0.0, vec![])
            }
            (TOp::Map, Some(TOp::Sym(_))) => {
                let mut comps = vec![];
                for c in &x.kids[1].kids {
                    let (ct, _) = self.seq(c);
                    let (zl, _) = self.seq(z);
                    comps.push(self.b.prim(Prim::Pad(A::cst(0), pad.clone()), vec![zl, ct]));
                }
                (Some(x.kids[0].clone()), self.b.prim(Prim::Zip, comps), 0.0, vec![])
            }
            _ => {
                let (xt, xc, bind) = self.kernel_arg(x);
                let (zl, _) = self.seq(z);
                (None, self.b.prim(Prim::Pad(A::cst(0), pad), vec![zl, xt]), xc, bind)
            }
        };
        let split = self.b.prim(Prim::Split(A::cst(gs)), vec![padded]);
        let rows = self.b.prim(Prim::Transpose, vec![split]);
        let groups = self.b.prim(Prim::Split(A::cst(s)), vec![rows]);
        // a group's rows, as the flat chunk the work-group tree reads back as rows
        let grp = self.name("grp");
        let grp_t = Term::new(
            TOp::Sym(Symbol::from(grp.as_str())),
            vec![],
            Some(A::cst(s)),
            Some(rows_len.clone()),
        );
        let chunk = Term::new(
            TOp::Join,
            vec![Term::new(
                TOp::Transpose,
                vec![grp_t],
                Some(rows_len.clone()),
                Some(A::cst(s)),
            )],
            Some(rows_len.mul(&A::cst(s))),
            None,
        );
        let chunk = match h {
            Some(h) => Term::new(TOp::Map, vec![h, chunk], Some(rows_len.mul(&A::cst(s))), None),
            None => chunk,
        };
        let gv = self.b.bind(&grp);
        let (tree, tc) = self.wg_tree_by(s, f, z, &chunk, guarded.as_ref());
        let first = self.group_result(tree);
        self.b.unbind(gv);
        let first_fn = self.b.lambda(vec![gv], first);
        let first = self.b.prim(Prim::Map(MapKind::Wrg(0)), vec![first_fn, groups]);
        let first = self.b.prim(Prim::Join, vec![first]);
        self.grid_finish(g, s, f, z, (first, tc), (xc, bind))
    }

    /// The rest of `host_grid` once its first stage (`first`, one result per group, at `tc` a
    /// work-item) is built: the one-group stage over the groups' results.
    pub(super) fn grid_finish(
        &mut self,
        g: i64,
        s: i64,
        f: &Rc<Term>,
        z: &Rc<Term>,
        (first, tc): Out,
        (xc, bind): (f64, Vec<(VarId, ExprId)>),
    ) -> Out {
        use arith::ArithExpr as A;
        let gs = g * s;
        // the groups' results, padded with `z` to a multiple of `s`, combined by one group of `s`
        let whole = (g + s - 1) / s * s;
        let parts = self.name("parts");
        let pv = self.b.bind(&parts);
        let c = self.name("c");
        let c_t = Term::new(TOp::Sym(Symbol::from(c.as_str())), vec![], Some(A::cst(whole)), None);
        let cv = self.b.bind(&c);
        let (tree2, tc2) = self.wg_tree(s, f, z, &c_t);
        let last = self.group_result(tree2);
        self.b.unbind(cv);
        let last_fn = self.b.lambda(vec![cv], last);
        let mut pe = self.b.var(pv);
        if whole > g {
            let (zl, _) = self.seq(z);
            pe = self.b.prim(Prim::Pad(A::cst(0), A::cst(whole - g)), vec![zl, pe]);
        }
        let one = self.b.prim(Prim::Split(A::cst(whole)), vec![pe]);
        let last = self.b.prim(Prim::Map(MapKind::Wrg(0)), vec![last_fn, one]);
        let last = self.b.prim(Prim::Join, vec![last]);
        self.b.unbind(pv);
        let e = self.b.let_(pv, first, last);
        self.notes.push(format!(
            "one launch: {g} groups × work-group reduction by {s} reading a grid apart, the last group combining their results"
        ));
        let threads = gs as f64;
        let cost = (threads / self.lanes).ceil() * tc + g as f64 * (MEM + GRID_TICKET) + tc2;
        (self.wrap(bind, e), xc + cost + LAUNCH)
    }

    /// A work-group's value in local memory written to global memory by a `mapLcl`.
    pub(super) fn group_result(&mut self, e: ExprId) -> ExprId {
        let x = self.b.bind("x");
        let xe = self.b.var(x);
        self.b.unbind(x);
        let id = self.b.lambda(vec![x], xe);
        let copy = self.b.prim(Prim::Map(MapKind::Lcl(0)), vec![id, e]);
        self.b.to(AddressSpace::Global, copy)
    }
}

impl Lowerer<'_> {
    /// `gridreduce` whose work-items read `w`-lane vectors (`grid-reduce-v{w}-*`): as
    /// `host_grid`, over `asVector w` of the parameter (or of each component of the dot
    /// product's zip), padded with vectors of `z` (zeros for the product, which `h` keeps
    /// zero) to a multiple of `g·s` vectors; each work-item folds its vectors lane by lane
    /// (`h` applied to vectors: a product of components is one lane-wise), then its lanes.
    /// One `float4` load per input and step where `host_grid` makes four scalar ones, so
    /// four times the bytes in flight for the same work-items.
    pub(super) fn host_grid_lanes(&mut self, g: i64, s: i64, w: i64, f: &Rc<Term>, z: &Rc<Term>, x: &Rc<Term>) -> Out {
        use arith::ArithExpr as A;
        let gs = g * s;
        let Some(len) = x.len.clone() else {
            self.b
                .broken
                .get_or_insert_with(|| "a grid reduction of unknown length".into());
            return (self.b.int(0), 0.0);
        };
        let vlen = len.div_assume_exact(&A::cst(w));
        let rows_len = vlen.add(&A::cst(gs - 1)).div(&A::cst(gs));
        let pad = A::cst(gs - 1).sub(&vlen.sub(&A::cst(1)).rem(&A::cst(gs)));
        let lanes_of = |me: &mut Self, t: &Rc<Term>| {
            let (e, _) = me.seq(t);
            let v = me.b.prim(Prim::AsVector(w as u8), vec![e]);
            let fill = me.vector_of(z, w);
            me.b.prim(Prim::Pad(A::cst(0), pad.clone()), vec![fill, v])
        };
        // the rule's forms only: another term of the same class (a map split into chunks) is
        // not read as vectors
        let (h, data) = match (&x.op, x.kids.first().map(|h| &h.op)) {
            (TOp::Map, Some(TOp::Sym(h))) if self.zero_product_dot(h, f, &x.kids[1]) => {
                let h = *h;
                let comps: Vec<_> = x.kids[1].kids.iter().map(|c| lanes_of(self, c)).collect();
                (Some(h), self.b.prim(Prim::Zip, comps))
            }
            (TOp::Sym(_), _) => (None, lanes_of(self, x)),
            _ => {
                self.b
                    .broken
                    .get_or_insert_with(|| "a vector grid reduction of a computed array".into());
                return (self.b.int(0), 0.0);
            }
        };
        let split = self.b.prim(Prim::Split(A::cst(gs)), vec![data]);
        let rows = self.b.prim(Prim::Transpose, vec![split]);
        let groups = self.b.prim(Prim::Split(A::cst(s)), vec![rows]);
        let grp = self.name("grp");
        let gv = self.b.bind(&grp);
        let ge = self.b.var(gv);
        let t = self.b.prim(Prim::Transpose, vec![ge]);
        let d = self.b.prim(Prim::Join, vec![t]);
        let c = self.name("chunk");
        let unused = Term::new(TOp::Sym(Symbol::from(c.as_str())), vec![], Some(rows_len.clone()), None);
        let (tree, tc) = self.wg_tree_fold(
            s,
            f,
            z,
            (d, 0.0),
            (&c, Some(rows_len)),
            unused,
            ChunkFold::Lanes { h, w },
        );
        let first = self.group_result(tree);
        self.b.unbind(gv);
        let first_fn = self.b.lambda(vec![gv], first);
        let first = self.b.prim(Prim::Map(MapKind::Wrg(0)), vec![first_fn, groups]);
        let first = self.b.prim(Prim::Join, vec![first]);
        let out = self.grid_finish(g, s, f, z, (first, tc), (0.0, vec![]));
        if let Some(n) = self.notes.last_mut() {
            n.push_str(&format!(", {w}-lane vector loads"));
        }
        out
    }

    /// `vec z z … z` (`w` lanes).
    pub(super) fn vector_of(&mut self, z: &Rc<Term>, w: i64) -> ExprId {
        let lanes = (0..w).map(|_| self.seq(z).0).collect();
        self.b.op(Op::MakeVec, lanes)
    }

    /// A work-item's fold of its chunk `c` of `w`-lane vectors: `mapSeq (λv. f (f v.0 v.1) (f
    /// v.2 v.3)) (reduceSeq (λacc y. f acc (h y)) (vec z …) c)`, `f` applied lane-wise to the
    /// vectors (the sums `grid-reduce-v*` takes are) and then across the lanes, pairwise.
    pub(super) fn lanes_reduce(
        &mut self,
        f: &Symbol,
        z: &Rc<Term>,
        h: Option<&Symbol>,
        w: i64,
        c: VarId,
        len: Option<&arith::ArithExpr>,
    ) -> Out {
        let zv = self.vector_of(z, w);
        let (acc, t) = (self.name("acc"), self.name("t"));
        let (av, tv) = (self.b.bind(&acc), self.b.bind(&t));
        let te = self.b.var(tv);
        let y = match h {
            Some(h) => self.call(h, &[Arg::Expr(te)]),
            None => te,
        };
        let next = self.call(f, &[Arg::Var(av), Arg::Expr(y)]);
        self.b.unbind(tv);
        self.b.unbind(av);
        let lam = self.b.lambda(vec![av, tv], next);
        let ce = self.b.var(c);
        let red = self.b.prim(Prim::Reduce(ReduceKind::Seq), vec![lam, zv, ce]);
        // the lanes and the pairwise sums are `let`-bound in the order they are printed (each
        // bound before the next), and `f` applied to variables only, so that the program read
        // back from its text names its variables as this one does
        let v = self.name("v");
        let vv = self.b.bind(&v);
        let mut binds: Vec<(VarId, ExprId)> = vec![];
        let mut lanes: Vec<VarId> = vec![];
        for k in 0..w {
            let name = self.name("lane");
            let lv = self.b.bind(&name);
            let ve = self.b.var(vv);
            let value = self.b.op(Op::VGet(k as u8), vec![ve]);
            binds.push((lv, value));
            lanes.push(lv);
        }
        while lanes.len() > 1 {
            let mut next = vec![];
            for p in lanes.chunks(2) {
                match p {
                    [a, b] => {
                        let name = self.name("lanes");
                        let sv = self.b.bind(&name);
                        let value = self.call(f, &[Arg::Var(*a), Arg::Var(*b)]);
                        binds.push((sv, value));
                        next.push(sv);
                    }
                    [a] => next.push(*a),
                    _ => unreachable!("chunks of two"),
                }
            }
            lanes = next;
        }
        let mut across = self.b.var(lanes[0]);
        for (var, value) in binds.into_iter().rev() {
            self.b.unbind(var);
            across = self.b.let_(var, value, across);
        }
        self.b.unbind(vv);
        let across = self.b.lambda(vec![vv], across);
        let n = self.eval(len);
        let cost = n * (self.leaf_cost(f) + h.map_or(0.0, |h| self.leaf_cost(h))) + w as f64 * self.leaf_cost(f);
        (self.b.prim(Prim::Map(MapKind::Seq), vec![across, red]), cost)
    }
}
