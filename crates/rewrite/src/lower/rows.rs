//! Rows read whole by each work-item: their strided reads from global memory, their staging
//! in local memory (`stage`, `stagev`), and a sequential fold over joined pieces.

use super::*;

impl Lowerer<'_> {
    /// Elements of the transposed matrix a kernel over `x` moves with a stride of a row, when
    /// it copies the rows of a transpose element by element (`row_fn` maps an element function
    /// over each): the reads along a row of the transpose, or else the writes of the rows, are
    /// strided. Only such element-wise copies pay it: a kernel that reduces over its rows (gemv
    /// T, atax, a convolution) reads a transpose's columns with consecutive work-items at
    /// consecutive addresses and writes one element per row, and a broader penalty (every
    /// kernel over a transpose's rows) pushed those kernels' fast variants out of `lift tune`'s top-k.
    pub(super) fn strided(&self, row_fn: &Term, x: &Term) -> f64 {
        /// Whether `f` maps its argument to an array element by element, nothing reduced.
        fn elementwise(f: &Term) -> bool {
            match &f.op {
                TOp::Lam => array_body(&f.kids[1]),
                TOp::MapF => matches!(f.kids[0].op, TOp::Sym(_)) || elementwise(&f.kids[0]),
                TOp::Comp => elementwise(&f.kids[0]) && elementwise(&f.kids[1]),
                _ => false,
            }
        }
        fn array_body(b: &Term) -> bool {
            match &b.op {
                TOp::Map => (matches!(b.kids[0].op, TOp::Sym(_)) || elementwise(&b.kids[0])) && layout_only(&b.kids[1]),
                TOp::Join | TOp::AsScalar => array_body(&b.kids[0]),
                _ => false,
            }
        }
        fn layout_only(t: &Term) -> bool {
            match &t.op {
                TOp::Sym(_) | TOp::Num(_) => true,
                TOp::Split(_) | TOp::AsVector(_) | TOp::Join | TOp::AsScalar | TOp::Transpose => {
                    t.kids.iter().all(|k| layout_only(k))
                }
                _ => false,
            }
        }
        let mut a = x;
        loop {
            match a.op {
                TOp::Split(_) | TOp::AsVector(_) => a = &a.kids[1],
                TOp::Join | TOp::AsScalar => a = &a.kids[0],
                _ => break,
            }
        }
        if self.is_transpose(a) && elementwise(row_fn) {
            self.len(a) * self.eval(a.inner.as_ref()) * STRIDED
        } else {
            0.0
        }
    }

    /// The rows of `x` (`x` itself, or the rows beside a vector in `zip a rows`) that a kernel
    /// mapping one element of `x` per work-item reads from global memory a row apart, and
    /// their length; as `egraph::staged_rows` decides (a stageable length, not a transpose).
    pub(super) fn read_rows<'t>(&self, x: &'t Rc<Term>) -> Option<RowsRead<'t>> {
        let stageable = |r: &Rc<Term>| {
            let len = self.eval(r.inner.as_ref());
            // a variable, as in `egraph::staged_rows` (a view such as `slide`'s windows may
            // have whole rows of a matrix as elements)
            let variable = matches!(&r.op, TOp::Sym(s) if !self.origin.contains_key(s));
            (variable && r.inner.is_some() && len >= 8.0 && len * 4.0 <= crate::sizes::STAGED_ROW_BYTES as f64)
                .then_some(len)
        };
        if let TOp::Other(s) = &x.op {
            if self.leaf_text(s) == "zip" && x.kids.len() == 2 && x.kids[0].inner.is_none() {
                return stageable(&x.kids[1]).map(|l| (&x.kids[1], Some(&x.kids[0]), l));
            }
        }
        stageable(x).map(|l| (x, None, l))
    }

    /// Extra cost of a kernel whose `threads` work-items each read a row of `x` (split into
    /// chunks or not), where `stage-rows` offers the staged alternative: neighbouring work-items
    /// read addresses a row apart, so each load instruction touches one memory segment per
    /// work-item instead of one for all. Charged only where staging is possible (rows of at
    /// most `sizes::STAGED_ROW_BYTES`), so the estimates of programs without the alternative keep
    /// their order.
    pub(super) fn row_reads(&self, x: &Rc<Term>, threads: f64) -> f64 {
        let x = match x.op {
            TOp::Split(_) => &x.kids[1],
            _ => x,
        };
        self.read_rows(x)
            .map_or(0.0, |(_, _, len)| (threads / self.lanes).ceil() * len * ROW_STRIDED)
    }

    /// `map (mapf f) (stage (split t X))` (see the rule `stage-rows`, `rules::staging`): `mapWrg (λc. let l =
    /// toLocal (split L (mapLcl0 (λx. x) (join c))) in mapLcl0 f l) (split t X)`: the work-group
    /// copies its `t` rows of length `L` as one contiguous block, consecutive work-items at
    /// consecutive addresses, then each work-item computes from its row in local memory (whose
    /// rows code generation pads against bank conflicts). For `X = zip a R` only `R` is staged:
    /// `mapWrg (λc. let l = … (get 1 c) … in mapLcl0 f (zip (get 0 c) l)) (zip (split t a)
    /// (split t R))`.
    /// With `vec` (rule `stage-rows-vec`, float rows, `4 | t`) the block is copied as float4
    /// into local memory read as `split L (asScalar l)`: `l = toLocal (mapLcl0 (λx. x)
    /// (asVector 4 (join c)))`, a quarter of the copy's loads and stores and no padding,
    /// whose index into a row of run-time length divides every element's position by it.
    pub(super) fn host_staged_rows(&mut self, f: &Rc<Term>, split: &Rc<Term>, vec: bool) -> Out {
        let TOp::Split(t) = split.op else {
            unreachable!("host() checked the split")
        };
        let x = &split.kids[1];
        let Some((rows, beside, len)) = self.read_rows(x) else {
            // not a block of rows this lowering stages (the rule's estimate and the lowering's
            // may differ): the unstaged kernel
            let plain = Term::new(
                TOp::Map,
                vec![Term::new(TOp::MapF, vec![f.clone()], None, None), split.clone()],
                split.len.clone(),
                None,
            );
            return self.host(&plain);
        };
        let (rows, beside) = (rows.clone(), beside.cloned());
        let n = self.len(split);
        let threads = n * t as f64;
        let row_len = rows.inner.clone().expect("read_rows checked the row length");
        let elem_len = self.eval(split.kids[1].inner.as_ref());
        let (g, gc) = self.func(f, elem_len);
        let (rt, rc, rbind) = self.kernel_arg(&rows);
        let rs = self.b.prim(Prim::Split(arith::ArithExpr::cst(t)), vec![rt]);
        let (chunks, ac, abind) = match &beside {
            Some(a) => {
                let (at, ac, abind) = self.kernel_arg(a);
                let as_ = self.b.prim(Prim::Split(arith::ArithExpr::cst(t)), vec![at]);
                (self.b.prim(Prim::Zip, vec![as_, rs]), ac, abind)
            }
            None => (rs, 0.0, vec![]),
        };
        let (c, l, x) = (self.name("chunk"), self.name("l"), self.name("x"));
        let cv = self.b.bind(&c);
        let block = match beside {
            Some(_) => self.get(1, cv),
            None => self.b.var(cv),
        };
        let flat = self.b.prim(Prim::Join, vec![block]);
        let xv = self.b.bind(&x);
        let xe = self.b.var(xv);
        self.b.unbind(xv);
        let id = self.b.lambda(vec![xv], xe);
        let (staged, lv, le) = if vec {
            let flat = self.b.prim(Prim::AsVector(VEC_COPY as u8), vec![flat]);
            let copied = self.b.prim(Prim::Map(MapKind::Lcl(0)), vec![id, flat]);
            let staged = self.b.to(AddressSpace::Local, copied);
            let lv = self.b.bind(&l);
            let le = self.b.var(lv);
            let le = self.b.prim(Prim::AsScalar, vec![le]);
            (staged, lv, self.b.prim(Prim::Split(row_len.clone()), vec![le]))
        } else {
            let copied = self.b.prim(Prim::Map(MapKind::Lcl(0)), vec![id, flat]);
            let copied = self.b.prim(Prim::Split(row_len.clone()), vec![copied]);
            let staged = self.b.to(AddressSpace::Local, copied);
            let lv = self.b.bind(&l);
            let le = self.b.var(lv);
            (staged, lv, le)
        };
        let items = match beside {
            Some(_) => {
                let a = self.get(0, cv);
                self.b.prim(Prim::Zip, vec![a, le])
            }
            None => le,
        };
        let body = self.b.prim(Prim::Map(MapKind::Lcl(0)), vec![g, items]);
        self.b.unbind(lv);
        let body = self.b.let_(lv, staged, body);
        self.b.unbind(cv);
        let chunk_fn = self.b.lambda(vec![cv], body);
        let e = self.b.prim(Prim::Map(MapKind::Wrg(0)), vec![chunk_fn, chunks]);
        let e = self.b.to(AddressSpace::Global, e);
        let e = self.wrap(abind, e);
        let e = self.wrap(rbind, e);
        let under = if t < 32 { 1.25 } else { 1.0 };
        let waves = (threads / self.lanes).ceil();
        let writes = self.extra_writes(f, threads);
        let cost = writes
            + if vec {
                self.notes.push(format!(
                    "mapWrg {n} groups × mapLcl {t}, rows staged in local memory as float4"
                ));
                // a quarter of the copy's instructions and no division; the compute's reads of
                // rows of an even length share banks (see `row_bank_ways`), each extra way a read
                // of local memory
                let copy = waves * (len * STAGED_COPY / VEC_COPY as f64 + 2.0);
                let conflicts = waves * (row_bank_ways(&row_len, self.sizes) - 1.0) * len * LOCAL_READ;
                under * waves * gc + threads * MEM + copy + conflicts
            } else {
                self.notes
                    .push(format!("mapWrg {n} groups × mapLcl {t}, rows staged in local memory"));
                // each work-item copies a row's worth of elements, then waits at one barrier
                let copy = waves * (len * STAGED_COPY + 2.0);
                under * waves * gc + threads * MEM + copy
            };
        (e, rc + ac + cost + LAUNCH)
    }
}

impl Lowerer<'_> {
    /// Whether `t` is `reduce f z (join (map (λx. b) xs))` with `b` of one element: what
    /// [`Self::seq_fold_join`] folds without the joined array (k-means' argmin over the
    /// centres, each centre's distance a one-element reduction).
    pub(super) fn folds_pieces(&self, t: &Term) -> bool {
        let j = &t.kids[2];
        if j.op != TOp::Join || j.kids[0].op != TOp::Map {
            return false;
        }
        let h = &j.kids[0].kids[0];
        h.op == TOp::Lam && h.kids[1].len.as_ref().and_then(|l| l.as_cst()) == Some(1)
    }

    /// `reduce f z (join (map h xs))`, `h` giving one element, in one work-item:
    /// `reduceSeq (λacc x. at 0 (reduceSeq f acc (h x))) z xs`. Folding a concatenation is
    /// folding its pieces in order, so this is the same fold; the pieces are never stored
    /// (as a sequential `join` of them would be, in a temporary array in global memory: k-means
    /// features-major at P = 819200 on an H200, 0.067 ms against 0.100).
    pub(super) fn seq_fold_join(&mut self, t: &Rc<Term>) -> Out {
        let (f, z, m) = (&t.kids[0], &t.kids[1], &t.kids[2].kids[0]);
        let (h, xs) = (&m.kids[0], &m.kids[1]);
        let n = self.len(xs);
        let (ze, _) = self.seq(z);
        let (xe, xc) = self.seq(xs);
        let (acc, x) = (self.name("acc"), self.name("x"));
        let accv = self.b.bind(&acc);
        let xv = self.b.bind(&x);
        let x_term = Term::new(TOp::Sym(Symbol::from(x.as_str())), vec![], xs.inner.clone(), None);
        let piece = self.apply(h, x_term);
        let fold = Term::new(TOp::Reduce, vec![f.clone(), sym(&acc), piece], t.len.clone(), None);
        let (fold, fc) = self.seq(&fold);
        let first = self.b.int(0);
        let step = self.b.op(Op::At, vec![first, fold]);
        self.b.unbind(xv);
        self.b.unbind(accv);
        let step = self.b.lambda(vec![accv, xv], step);
        self.notes.push("reduce∘join fused".into());
        (
            self.b.prim(Prim::Reduce(ReduceKind::Seq), vec![step, ze, xe]),
            xc + n * (fc + 1.0),
        )
    }
}
