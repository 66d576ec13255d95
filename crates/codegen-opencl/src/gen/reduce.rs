//! Reductions and `iterate`: scalar and tuple accumulators in private variables, array
//! accumulators in a buffer with a second one for each step, `iterate` unrolled over two
//! alternating buffers, and whole-array reductions in one launch (`last_group`: per-group
//! results, then the group that finishes last combines them).
//!
//! Measured (NVIDIA H200, `lift bench --repeats 20`, sum of 10^8 floats, medians; see
//! `bench/results/runs/nvidia-h200-2026-11-24-sum-onekernel.md`): 1056 groups of 256 in one
//! launch 0.1013 ms; the same with the last group's work as a launch of its own 0.1031 ms
//! (0.0995 and 0.0036); the two kernels this replaced (625 groups, then one work-item summing
//! 625 results) 0.1108 ms (0.1000 and 0.0108); `torch.sum` in the same command 0.1192 ms. 264
//! and 528 groups took 0.1965 and 0.1227 ms (too few loads in flight), 2112 groups 0.1016 ms.

use super::*;

impl Gen<'_> {
    pub(super) fn gen_reduce(&mut self, e: ExprId, f: ExprId, z: ExprId, xs: ExprId, dest: &Dest) -> Result<()> {
        let Expr::Prim {
            prim: Prim::Reduce(kind),
            ..
        } = self.prog.expr(e).clone()
        else {
            unreachable!("called on reduce")
        };
        let (params, body) = self.lambda(f)?;
        let acc_ty = self.cty(z)?;
        if let Type::Array(..) = acc_ty {
            return self.gen_reduce_array(e, kind, &params, body, z, xs, dest);
        }
        let n = self.len_of(xs)?;
        let xv = self.value(xs)?;
        let z0 = self.scalar(z)?;
        let acc = self.declare(&z0, &acc_ty, "acc")?;
        let loop_kind = match kind {
            ReduceKind::SeqUnroll => MapKind::SeqUnroll,
            ReduceKind::Seq | ReduceKind::Plain => MapKind::Seq,
        };
        let acc2 = acc.clone();
        let acc_ty2 = acc_ty.clone();
        let acc_view = self.read_view(acc.clone(), &acc_ty);
        let step = |g: &mut Self, i: ArithExpr| {
            g.bind(params[0], Bound::View(acc_view.clone()));
            let x = g.loop_elem(xv.access(i), params[1], body)?;
            g.bind(params[1], Bound::View(x));
            let r = g.scalar(body)?;
            assign(g, &acc2, &r, &acc_ty2)
        };
        if loop_kind == MapKind::Seq && self.by_four(&n) {
            self.emit_seq_loop_by_four(&n, step)?;
        } else {
            self.emit_loop(e, loop_kind, &n, step)?;
        }
        self.write(&dest.view, &[ArithExpr::cst(0)], &acc, e)
    }

    /// A reduction whose accumulator is an array: the accumulator lives in a buffer (local
    /// memory at work-group level, private memory in a work-item when its size is known, else
    /// global), each step writes the function's result into a second buffer, which is then
    /// copied back. Writing the new accumulator over the old one directly would be wrong for
    /// functions that read other elements than the one they write (e.g. `reverse acc`).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn gen_reduce_array(
        &mut self,
        e: ExprId,
        kind: ReduceKind,
        params: &[VarId],
        body: ExprId,
        z: ExprId,
        xs: ExprId,
        dest: &Dest,
    ) -> Result<()> {
        let acc_ty = self.capacity_type(&self.cty(z)?, z)?;
        if acc_ty.has_existential() {
            return Err(self.err(z, "a reduction accumulator cannot hold filter results"));
        }
        if self.gen_reduce_in_place(e, kind, params, body, z, xs, dest, &acc_ty)? {
            return Ok(());
        }
        let (acc, next) = self.two_state_buffers(("acc", "nxt"), &acc_ty, z, e)?;
        let plain = |view: &Rc<View>| Dest {
            view: view.clone(),
            len: None,
            rows: false,
        };
        let n = self.len_of(xs)?;
        let xv = self.value(xs)?;
        let loop_kind = match kind {
            ReduceKind::SeqUnroll => MapKind::SeqUnroll,
            ReduceKind::Seq | ReduceKind::Plain => MapKind::Seq,
        };
        self.emit_loop(e, loop_kind, &n, |g, i| {
            g.bind(params[0], Bound::View(acc.clone()));
            g.bind(params[1], Bound::View(xv.access(i)));
            g.gen_into(body, &plain(&next))?;
            g.sync_copy(&next, body)?;
            g.copy_acc(e, &next, &acc, &acc_ty)?;
            g.sync_copy(&acc, e)
        })?;
        self.copy_acc(e, &acc, &dest.view.access(ArithExpr::cst(0)), &acc_ty)?;
        self.sync_copy(&dest.view, e)
    }

    /// The two buffers of an array state that a loop updates (a reduction's accumulator, an
    /// `iterate`'s state): the state, holding `init` (expression `at`'s value) on return, and
    /// the next value, which a step writes whole before it is copied back, since the step may
    /// read any element of the state. Both live where every work-item that runs the loop can
    /// see them: local memory in a group, private memory in a work-item when small enough,
    /// global memory otherwise. `e` is the loop's expression, `hints` their names.
    pub(super) fn two_state_buffers(
        &mut self,
        hints: (&str, &str),
        ty: &Type,
        init: ExprId,
        e: ExprId,
    ) -> Result<(Rc<View>, Rc<View>)> {
        let space = match self.level() {
            Level::Group => AddressSpace::Local,
            Level::Item if fits_private(ty) => AddressSpace::Private,
            Level::Item | Level::Top => AddressSpace::Global,
        };
        let state = self.temp_buffer(hints.0, ty, space, init)?;
        let next = self.temp_buffer(hints.1, ty, space, e)?;
        let dest = Dest {
            view: state.clone(),
            len: None,
            rows: false,
        };
        self.gen_into(init, &dest)?;
        self.sync_copy(&state, init)?;
        Ok((state, next))
    }

    /// `iterate #k f xs`, unrolled: step `s` reads the previous step's buffer and writes a new
    /// one (the last step writes the destination), each step typed with its own length.
    pub(super) fn gen_iterate(&mut self, _e: ExprId, k: &ArithExpr, f: ExprId, xs: ExprId, dest: &Dest) -> Result<()> {
        let (params, body) = self.lambda(f)?;
        let steps = k.as_cst().unwrap_or(0);
        if steps > typeck::MAX_ITERATE {
            return Err(self.err(
                _e,
                format!(
                    "`iterate` is unrolled in generated code and limited to {} steps",
                    typeck::MAX_ITERATE
                ),
            ));
        }
        let lname = self.iter_var_of(f)?;
        let mut cur = self.value(xs)?;
        let mut len = self.len_of(xs)?;
        if steps == 0 {
            return self.gen_copy(xs, dest);
        }
        // Two buffers alternate: step `s` writes the one step `s-2` wrote, which is at least as
        // large whenever the function does not grow its input (checked on the sizes).
        let mut bufs: Vec<(Rc<View>, ArithExpr)> = vec![];
        for s in 0..steps {
            self.lengths.insert(lname.clone(), len.clone());
            self.bind(params[0], Bound::View(cur.clone()));
            if s + 1 == steps {
                self.gen_into(body, dest)?;
            } else {
                let out_ty = self.cty(body)?;
                let (dims, _) = dims_of(&out_ty);
                let need = dims.iter().fold(ArithExpr::cst(1), |a, d| a.mul(d));
                let reuse = (s >= 2)
                    .then(|| bufs[(s % 2) as usize].clone())
                    .filter(|(_, have)| need.prove_le(have));
                match reuse {
                    Some((view, _)) => {
                        self.gen_into(
                            body,
                            &Dest {
                                view: view.clone(),
                                len: None,
                                rows: false,
                            },
                        )?;
                        cur = view;
                    }
                    None => {
                        cur = self.materialize(body, None)?;
                        if s < 2 {
                            bufs.push((cur.clone(), need));
                        }
                    }
                }
            }
            len = self.len_of(body)?;
        }
        Ok(())
    }

    pub(super) fn iter_var_of(&self, f: ExprId) -> Result<String> {
        match self.info.ty(f) {
            Type::Fun(ps, _) => match &ps[0] {
                Type::Array(_, l) => l
                    .free_vars()
                    .into_iter()
                    .find(|v| v.starts_with('L'))
                    .ok_or_else(|| self.err(f, "internal: iterate length")),
                Type::Scalar(_) | Type::Vector(..) | Type::Tuple(_) | Type::Exists(_) | Type::Fun(..) => {
                    Err(self.err(f, "internal: iterate parameter"))
                }
            },
            Type::Scalar(_) | Type::Vector(..) | Type::Tuple(_) | Type::Array(..) | Type::Exists(_) => {
                Err(self.err(f, "internal: iterate function type"))
            }
        }
    }
}

pub(super) fn assign(g: &mut Gen, acc: &Read, v: &Read, ty: &Type) -> Result<()> {
    match (acc, v) {
        (Read::Expr(a), Read::Expr(x)) => {
            let (lhs, rhs) = (g.access_expr(a), g.access_expr(x));
            g.push(Stmt::assign(lhs, rhs))
        }
        (Read::Tuple(a), _) => {
            // Compute every component before assigning any: they may read the accumulator.
            let Type::Tuple(ts) = ty else {
                return Err(Diagnostic::new(Span::default(), "internal: tuple accumulator type"));
            };
            let x: Vec<Read> = match v {
                Read::Tuple(x) => x.clone(),
                Read::Expr(x) => (0..ts.len())
                    .map(|i| Read::Expr(Access::Field(Box::new(x.clone()), i)))
                    .collect(),
            };
            let tmps = x
                .iter()
                .zip(ts)
                .map(|(xv, t)| g.declare(xv, t, "t"))
                .collect::<Result<Vec<_>>>()?;
            for ((a, t), ty) in a.iter().zip(&tmps).zip(ts) {
                assign(g, a, t, ty)?;
            }
        }
        (Read::Expr(a), Read::Tuple(x)) => {
            let Type::Tuple(ts) = ty else {
                return Err(Diagnostic::new(Span::default(), "internal: tuple accumulator type"));
            };
            for ((i, xv), t) in x.iter().enumerate().zip(ts) {
                assign(g, &Read::Expr(Access::Field(Box::new(a.clone()), i)), xv, t)?;
            }
        }
    }
    Ok(())
}

/// The two stages of a one-launch whole-array reduction (`last_group_form`): the `mapWrg`
/// computing one partial result per group, and the one-group `mapWrg` combining them.
pub(super) struct LastGroup {
    first: ExprId,
    last: ExprId,
    elem: Scalar,
}

impl Gen<'_> {
    /// `let parts = join (mapWrg f xs) in join (mapWrg g (split #n parts'))`, `parts'` being
    /// `parts` or `parts` padded, `n` its length (so the second map is one work-group) and `g`
    /// reading `parts` only through its parameter, `parts` an array of 32-bit scalars: the form `rewrite` lowers a whole-array
    /// reduction to (`gridreduce`), which runs as one launch whose last group runs `g`.
    pub(super) fn last_group_form(&self, var: VarId, value: ExprId, body: ExprId) -> Option<LastGroup> {
        let wrg = |e: ExprId| -> Option<(ExprId, ExprId, ExprId)> {
            let Expr::Prim { prim: Prim::Join, args } = self.prog.expr(self.strip_to(e)) else {
                return None;
            };
            let inner = self.strip_to(args[0]);
            let Expr::Prim {
                prim: Prim::Map(MapKind::Wrg(0)),
                args,
            } = self.prog.expr(inner)
            else {
                return None;
            };
            Some((inner, args[0], args[1]))
        };
        let (first, f, _) = wrg(value)?;
        let (last, g, parts) = wrg(body)?;
        let Expr::Prim {
            prim: Prim::Split(_),
            args,
        } = self.prog.expr(parts)
        else {
            return None;
        };
        let one = matches!(self.info.ty(parts), Type::Array(_, n) if n.as_cst() == Some(1));
        let Type::Array(t, _) = self.info.ty(value) else {
            return None;
        };
        let Type::Scalar(elem @ (Scalar::Float | Scalar::Int)) = **t else {
            return None;
        };
        // `parts`, or `parts` padded with the neutral element up to a multiple of the group
        let read = match self.prog.expr(args[0]) {
            Expr::Prim {
                prim: Prim::Pad(..),
                args,
            } => args[1],
            Expr::Var(_)
            | Expr::Lit(_)
            | Expr::Lambda { .. }
            | Expr::Prim { .. }
            | Expr::Op { .. }
            | Expr::If { .. }
            | Expr::Let { .. }
            | Expr::Pack(_) => args[0],
        };
        let reads_parts = matches!(self.prog.expr(read), Expr::Var(v) if *v == var);
        if !one || !reads_parts || self.mentions_var(g, var) || self.mentions_var(f, var) {
            return None;
        }
        // results stored and read one scalar at a time (`publish`, `acquire`), not as vectors
        if self.vectors(f) || self.vectors(g) {
            return None;
        }
        // one dimension of work-items: the ticket is taken by local id 0 of dimension 0
        let hints = self.local_hints(value);
        if hints[1].is_some() || hints[2].is_some() || self.local_hints(body)[1..].iter().any(Option::is_some) {
            return None;
        }
        Some(LastGroup { first, last, elem })
    }

    fn vectors(&self, e: ExprId) -> bool {
        matches!(
            self.prog.expr(e),
            Expr::Prim {
                prim: Prim::AsVector(_) | Prim::AsScalar,
                ..
            }
        ) || self.prog.children(e).into_iter().any(|c| self.vectors(c))
    }

    fn mentions_var(&self, e: ExprId, var: VarId) -> bool {
        matches!(self.prog.expr(e), Expr::Var(v) if *v == var)
            || self.prog.children(e).into_iter().any(|c| self.mentions_var(c, var))
    }

    /// The one-launch whole-array reduction (issue 11.1; the "threadfence reduction" of CUDA's
    /// samples, CUB's single-pass reductions): every group computes its partial result as the
    /// first `mapWrg` says and publishes it with an atomic store, then its work-item 0 fences
    /// and takes a ticket with `atomic_inc` on a zeroed counter; the group that draws the last
    /// ticket (all others have published) reads the partial results with atomic loads and runs
    /// the one-group `mapWrg` over them, then zeroes the counter for the next launch. Partial
    /// results cross groups only through atomics, so Oclgrind sees no race; no group ever waits
    /// for another, so no forward-progress guarantee is needed. The last group's work costs
    /// about 2 µs on the H200 (module documentation), the launch it replaces 3.6 µs (one group)
    /// to 10.8 µs (one work-item over 625 results).
    pub(super) fn last_group(&mut self, e: ExprId, var: VarId, stages: LastGroup, dest: &Dest) -> Result<()> {
        let LastGroup { first, last, elem } = stages;
        let Expr::Let { value, .. } = *self.prog.expr(e) else {
            return Err(self.err(e, "internal: a last-group reduction is a `let`"));
        };
        self.host_prepare(first)?;
        let ty = self.capacity_type(&self.cty(value)?, value)?;
        // zeroed by the host like the counter: Oclgrind's checker of uninitialized values reads
        // an atomic exchange as combining the old word with the new one
        let (pb, parts) = self
            .alloc("t", &ty, AddressSpace::Global, &[], Role::Scratch)
            .map_err(|m| self.err(value, m))?;
        let (cb, _) = self
            .alloc("count", &Type::int(), AddressSpace::Global, &[], Role::Scratch)
            .map_err(|m| self.err(e, m))?;
        let parts_id = self.buf_ident(&self.mem.buffers[pb].name.clone());
        let count = CExpr::var(&self.buf_ident(&self.mem.buffers[cb].name.clone()));
        self.bind(var, Bound::View(parts.clone()));
        let is_last = self.fresh("last");
        let first_dest = Dest {
            view: parts,
            len: None,
            rows: false,
        };
        self.kernel(e, true, |g| {
            let (inner, d) = g.reindexed_dest(value, &first_dest)?;
            if inner != first {
                return Err(g.err(value, "internal: last-group reduction form"));
            }
            g.open_block();
            // its `float4` reads take the aligned form, also in a generic kernel
            g.aligned_reads = true;
            let r = g.gen_into(first, &d);
            g.aligned_reads = false;
            r?;
            g.close();
            let published = publish(g.last_stmt(), &parts_id, elem);
            if published == 0 {
                return Err(g.err(value, "internal: a group's result is not stored"));
            }
            let k = g.k.as_mut().expect("in kernel");
            k.decls.push(Stmt::Decl {
                ty: CType::INT,
                name: is_last.clone(),
                space: Some(AddressSpace::Local),
                len: Some(1),
                init: None,
                is_const: false,
            });
            let lid0 = CExpr::bin(
                BinOp::Eq,
                CExpr::call("get_local_id", vec![CExpr::Int(0)]),
                CExpr::Int(0),
            );
            let groups = CExpr::cast(CType::INT, CExpr::call("get_num_groups", vec![CExpr::Int(0)]));
            // Work-item 0 stored the group's result (a barrier made every store of the group
            // its own); the fence orders that store before the ticket.
            g.open_if(lid0.clone());
            g.push(Stmt::Call(CExpr::call(
                "mem_fence",
                vec![CExpr::Sym("CLK_GLOBAL_MEM_FENCE".into())],
            )));
            let ticket = CExpr::call("atomic_inc", vec![count.clone()]);
            g.push(Stmt::assign(
                CExpr::var(&is_last).index(CExpr::Int(0)),
                CExpr::bin(BinOp::Eq, ticket, CExpr::bin(BinOp::Sub, groups, CExpr::Int(1))),
            ));
            g.close();
            g.push(Stmt::Barrier(Fence::Local));
            g.open_if(CExpr::var(&is_last).index(CExpr::Int(0)));
            g.k.as_mut().expect("in kernel").one_group = true;
            g.open_block();
            let r = g.host_stage(last, body_dest(g, e, dest));
            g.close();
            g.k.as_mut().expect("in kernel").one_group = false;
            r?;
            acquire(g.last_stmt(), &parts_id, elem);
            g.open_if(lid0);
            g.push(Stmt::Call(CExpr::call("atomic_xchg", vec![count, CExpr::Int(0)])));
            g.close();
            g.close();
            Ok(())
        })
    }

    /// The statements of the one-group stage into the program's result.
    fn host_stage(&mut self, last: ExprId, dest: Result<Dest>) -> Result<()> {
        self.gen_into(last, &dest?)
    }

    /// The statement most recently closed in the open frame.
    fn last_stmt(&mut self) -> &mut Stmt {
        let k = self.k.as_mut().expect("in kernel");
        let frame = k.stack.last_mut().expect("the root frame");
        frame.body.last_mut().expect("a statement was just closed")
    }
}

/// The destination of the one-group stage: the `let`'s body is `join (mapWrg …)`, written
/// through the dual view of its `join`.
fn body_dest(g: &Gen, e: ExprId, dest: &Dest) -> Result<Dest> {
    let Expr::Let { body, .. } = g.prog.expr(e) else {
        return Err(g.err(e, "internal: a last-group reduction is a `let`"));
    };
    let join = g.strip_to(*body);
    g.reindexed_dest(join, dest).map(|(_, d)| d)
}

/// `global int*`: partial results cross groups as 32-bit words, through the `int` atomics of
/// OpenCL 1.1 (Oclgrind's checker of uninitialized values loses track of `float` ones).
fn word_ptr() -> CType {
    CType::Ptr {
        space: AddressSpace::Global,
        elem: Box::new(CType::INT),
        is_const: false,
        restrict: false,
    }
}

/// Turns the stores `buf[i] = v` in `s` into `atomic_xchg((global int*)(buf + i), as_int(v))`
/// (`v` itself for `int`s); how many there were.
fn publish(s: &mut Stmt, buf: &Ident, elem: Scalar) -> usize {
    match s {
        Stmt::Assign {
            lhs: CExpr::Index(b, i),
            op: AssignOp::Set,
            rhs,
        } if **b == CExpr::Var(buf.clone()) => {
            let at = CExpr::cast(word_ptr(), CExpr::bin(BinOp::Add, CExpr::var(buf), (**i).clone()));
            let v = match elem {
                Scalar::Float | Scalar::Uint => CExpr::call("as_int", vec![rhs.clone()]),
                // 64-bit elements never take this path (only int and float reductions do)
                Scalar::Int | Scalar::Double | Scalar::Bool | Scalar::Long | Scalar::Ulong => rhs.clone(),
            };
            *s = Stmt::Call(CExpr::call("atomic_xchg", vec![at, v]));
            1
        }
        Stmt::For { body, .. } | Stmt::Block(body) => body.iter_mut().map(|s| publish(s, buf, elem)).sum(),
        Stmt::If { then, els, .. } => then
            .iter_mut()
            .chain(els.iter_mut())
            .map(|s| publish(s, buf, elem))
            .sum(),
        Stmt::Decl { .. }
        | Stmt::Assign { .. }
        | Stmt::Call(_)
        | Stmt::Barrier(_)
        | Stmt::VStore { .. }
        | Stmt::Asm(_) => 0,
    }
}

/// Turns the reads `buf[i]` in `s` into atomic loads (`atomic_or` of 0 on the word, as an
/// `int`; `as_float` of it for floats).
fn acquire(s: &mut Stmt, buf: &Ident, elem: Scalar) {
    fn rewrite(e: &mut CExpr, buf: &Ident, elem: Scalar) {
        if let CExpr::Index(b, i) = e {
            if **b == CExpr::Var(buf.clone()) {
                let at = CExpr::bin(BinOp::Add, CExpr::var(buf), (**i).clone());
                let load = CExpr::call("atomic_or", vec![CExpr::cast(word_ptr(), at), CExpr::Int(0)]);
                *e = match elem {
                    Scalar::Float => CExpr::call("as_float", vec![load]),
                    Scalar::Uint => CExpr::call("as_uint", vec![load]),
                    Scalar::Int | Scalar::Double | Scalar::Bool | Scalar::Long | Scalar::Ulong => load,
                };
                return;
            }
        }
        for c in e.children_mut() {
            rewrite(c, buf, elem);
        }
    }
    ast::for_each_expr_mut(std::slice::from_mut(s), &mut |e| rewrite(e, buf, elem));
}
