//! Reductions and `iterate`: scalar and tuple accumulators in private variables, array
//! accumulators in a buffer with a second one for each step, and `iterate` unrolled over two
//! alternating buffers.

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
        self.emit_loop(e, loop_kind, &n, |g, i| {
            g.bind(params[0], Bound::View(acc_view.clone()));
            g.bind(params[1], Bound::View(xv.access(i)));
            let r = g.scalar(body)?;
            assign(g, &acc2, &r, &acc_ty2)
        })?;
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
        let level = self.level();
        let constant = dims_of(&acc_ty).0.iter().all(|d| d.as_cst().is_some());
        let space = match level {
            Level::Group => AddressSpace::Local,
            Level::Item if constant => AddressSpace::Private,
            Level::Item | Level::Top => AddressSpace::Global,
        };
        let acc = self.temp_buffer("acc", &acc_ty, space, z)?;
        let next = self.temp_buffer("nxt", &acc_ty, space, e)?;
        let plain = |view: &Rc<View>| Dest {
            view: view.clone(),
            len: None,
            rows: false,
        };
        self.gen_into(z, &plain(&acc))?;
        self.sync_copy(&acc, z)?;
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
