//! The filter kernel's persistent loop over tiles: the loads of a tile (and of the next one, early,
//! on a GPU), and the stores of the kept elements, scattered or gathered through local memory.

use super::*;

impl Gen<'_> {
    /// The persistent loop over tiles of one kernel shape (see the module documentation);
    /// whether it reads its chunks with vector loads, and whether it loads the next tile early.
    pub(super) fn tile_loop(&mut self, f: &Names, sh: Shape, cx: &FilterCx) -> Result<(bool, bool)> {
        let FilterCx {
            e,
            p,
            xs,
            consumer,
            producer,
            dest,
            st,
            n,
            cap,
            wg,
            elem_ty,
            rows,
            len_loc,
            ref compact,
        } = *cx;
        let compact = compact.clone();
        let (rounds, parts, chunk) = (sh.rounds(), sh.parts, sh.chunk);
        let tile = sh.tile(wg);
        let tiles = sh.tiles(wg, cap);
        // An input whose length is only known on the device (a filter result, e.g. a loop's
        // state) is read up to that length, not its capacity: tickets past its last tile end
        // the loop and that tile publishes the result's length; at least one tile runs, so an
        // empty input still writes its length 0. The status words stay laid out by capacity.
        let live = if n == cap {
            tiles.clone()
        } else {
            ArithExpr::max(&sh.tiles(wg, n), &ArithExpr::cst(1))
        };
        let slots = wg + wg / SCAN_RUN;
        let runs = wg / SCAN_RUN;
        // Chunk `f_k = f_h * rounds + f_r` of work-item `f_l` in tile `t` is the `chunk`
        // consecutive elements from `f_g`; its elements sit in register slots `f_i`.
        let chunk_first = |t: &Ident| {
            let first = add(add(mul(v(t), int(tile / chunk)), mul(v(&f.k), int(wg))), v(&f.l));
            if chunk == 1 {
                first
            } else {
                mul(int(chunk), first)
            }
        };
        let round_k = || Stmt::decl(CType::INT, &f.k, add(mul(v(&f.h), int(rounds)), v(&f.r)));
        let slot_i = || Stmt::decl(CType::INT, &f.i, add(mul(v(&f.k), int(chunk)), v(&f.m)));
        // The bit of element `f_m` of round `f_r` in its part's mask `f_mk`, below 16.
        let bit = || add(mul(v(&f.r), int(chunk)), v(&f.m));
        let private = |ty: CType, name: &Ident| Stmt::Decl {
            ty,
            name: name.clone(),
            space: None,
            len: Some(parts),
            init: None,
            is_const: false,
        };
        // The tile's elements stay in registers (one private array per scalar component, indexed
        // only in unrolled loops) between the predicate and the store. With a map producing the
        // input, its input's elements are the ones loaded, and the map's results get slots too.
        let src = producer.map_or(xs, |(_, _, ys)| ys);
        let x = self.filter_elem(f, src)?;
        let src_ty = match self.cty(src)? {
            Type::Array(t, _) => *t,
            t @ Type::Scalar(_)
            | t @ Type::Vector(..)
            | t @ Type::Tuple(_)
            | t @ Type::Exists(_)
            | t @ Type::Fun(..) => return Err(self.err(src, format!("internal: filter of {t}"))),
        };
        let mut decls = vec![];
        let mut leaves = vec![];
        let loaded = if rows {
            Read::Tuple(vec![])
        } else {
            let read = x.read(&[]).map_err(|m| self.err(src, m.0))?;
            self.stage(f, &read, &src_ty, &mut decls, &mut leaves, sh)?
        };
        let staged = if producer.is_some() {
            let slot = Read::Expr(Access::Value(int(0)));
            self.stage(f, &slot, elem_ty, &mut decls, &mut vec![], sh)?
        } else {
            loaded.clone()
        };
        // On a GPU the next tile's elements are loaded into a second set of registers before
        // this tile's kept elements are stored, so that the group has loads in flight through
        // its stores and the next tile's ticket. A CPU gains nothing from it and PoCL loses much
        // (see the module doc), so the choice is `LIFT_GPU`'s, a constant the compiler folds.
        let mut next_decls = vec![];
        let mut next_leaves = vec![];
        if sh.prefetch && !leaves.is_empty() {
            let read = x.read(&[]).map_err(|m| self.err(src, m.0))?;
            self.stage(f, &read, &src_ty, &mut next_decls, &mut next_leaves, sh)?;
        }
        let names_of = |ds: &[Stmt]| -> Vec<Ident> {
            ds.iter()
                .filter_map(|d| {
                    if let Stmt::Decl { name, .. } = d {
                        Some(name.clone())
                    } else {
                        None
                    }
                })
                .collect()
        };
        let moves: Vec<(Ident, Ident)> = leaves
            .iter()
            .map(|l| l.array.clone())
            .zip(names_of(&next_decls))
            .collect();
        for d in decls.into_iter().chain(next_decls) {
            self.push(d);
        }
        self.push(private(CType::ULONG, &f.pk));
        self.push(private(CType::ULONG, &f.ex));
        self.push(private(CType::INT, &f.mk));
        // A whole chunk of plain buffer elements is one vector load (the buffer is aligned and
        // `f_g` a multiple of `chunk`); the chunk at the end, or any other view, is read one
        // element at a time.
        let vector = chunk > 1 && !leaves.is_empty() && leaves.iter().all(|l| l.vector.is_some());
        let load_chunk = |g: &mut Self, t: &Ident, leaves: &[Leaf]| {
            g.push(Stmt::decl(CType::INT, &f.g, chunk_first(t)));
            let each = |g: &mut Self| {
                g.open_for(&f.m, int(0), int(chunk), int(1), true);
                g.push(slot_i());
                g.push(Stmt::decl(CType::INT, &f.e, add(v(&f.g), v(&f.m))));
                g.open_if(Expr::bin(BinOp::Lt, v(&f.e), arith(n)));
                for l in leaves {
                    g.push(Stmt::assign(v(&l.array).index(v(&f.i)), l.read.clone()));
                }
                g.close();
                g.close();
            };
            if vector {
                let whole = Expr::bin(BinOp::Le, add(v(&f.g), int(chunk)), arith(n));
                g.open_if(whole);
                for l in leaves {
                    let (ptr, s) = l.vector.clone().expect("checked");
                    let at = Expr::bin(BinOp::Div, v(&f.g), int(chunk));
                    let vec_ptr = Expr::cast(
                        CType::Ptr {
                            space: AddressSpace::Global,
                            elem: Box::new(CType::Vector(s, chunk as u8)),
                            is_const: true,
                            restrict: false,
                        },
                        ptr,
                    );
                    let tmp = g.fresh("v");
                    g.push(Stmt::decl(CType::Vector(s, chunk as u8), &tmp, vec_ptr.index(at)));
                    for m in 0..chunk {
                        let slot = add(mul(v(&f.k), int(chunk)), int(m));
                        g.push(Stmt::assign(v(&l.array).index(slot), v(&tmp).lane(m as u32)));
                    }
                }
                g.close();
                g.open_if(Expr::bin(BinOp::Gt, add(v(&f.g), int(chunk)), arith(n)));
                each(g);
                g.close();
            } else {
                each(g);
            }
        };
        let load_tile = |g: &mut Self, t: &Ident, leaves: &[Leaf]| {
            g.open_for(&f.k, int(0), int(rounds * parts), int(1), true);
            load_chunk(g, t, leaves);
            g.close();
        };
        // Gathering the kept values in local memory frees their registers before the look-back,
        // so the next tile's loads are issued then, into the same registers (the first tile's
        // before the loop).
        let gather = compact.filter(|_| sh.chunk > 1 && !sh.prefetch && !leaves.is_empty());
        if !next_leaves.is_empty() || gather.is_some() {
            load_tile(self, &f.tn, &leaves);
        }
        self.open(Head::For {
            var: f.t.clone(),
            init: v(&f.tn),
            cond: Expr::bin(BinOp::Lt, v(&f.t), arith(&live)),
            step: (AssignOp::Set, v(&f.tn)),
            unroll: false,
        });
        self.open_for(&f.h, int(0), int(parts), int(1), true);
        self.push(Stmt::assign(v(&f.pk).index(v(&f.h)), int(0)));
        self.push(Stmt::assign(v(&f.mk).index(v(&f.h)), int(0)));
        self.open_for(&f.r, int(0), int(rounds), int(1), true);
        self.push(round_k());
        if !sh.prefetch && gather.is_none() && !leaves.is_empty() {
            load_chunk(self, &f.t, &leaves);
        } else {
            self.push(Stmt::decl(CType::INT, &f.g, chunk_first(&f.t)));
        }
        self.open_for(&f.m, int(0), int(chunk), int(1), true);
        self.push(slot_i());
        self.push(Stmt::decl(CType::INT, &f.e, add(v(&f.g), v(&f.m))));
        if let Some((_, g, _)) = producer {
            self.open_if(Expr::bin(BinOp::Lt, v(&f.e), arith(n)));
            let (params, body) = self.lambda(g)?;
            let input = self.read_view(loaded.clone(), &src_ty);
            self.bind(params[0], Bound::View(input));
            let value = self.scalar_expr(body)?;
            let Read::Expr(Access::Value(slot)) = &staged else {
                return Err(self.err(g, "internal: staged map result"));
            };
            self.push(Stmt::assign(slot.clone(), value));
            self.close();
        }
        let elem_view = if rows {
            self.filter_elem(f, xs)?
        } else {
            self.read_view(staged.clone(), elem_ty)
        };
        let cond = self.filter_pred(f, p, elem_view, n)?;
        // A round's count in its 16-bit field, and each element's flag in its bit of `f_mk`.
        self.push(Stmt::Assign {
            lhs: v(&f.pk).index(v(&f.h)),
            op: AssignOp::Add,
            rhs: Expr::bin(
                BinOp::Shl,
                Expr::cast(CType::ULONG, v(&cond)),
                mul(int(sh.field), v(&f.r)),
            ),
        });
        self.push(Stmt::Assign {
            lhs: v(&f.mk).index(v(&f.h)),
            op: AssignOp::Or,
            rhs: Expr::bin(BinOp::Shl, v(&cond), bit()),
        });
        self.close();
        self.close();
        self.close();
        self.scan_tile(f, slots, runs, rounds, parts, sh.field);
        self.look_back_start(f, st, rounds, parts);
        // The next ticket: where the values are gathered, taken at once (by the last work-item,
        // while the others gather) and its tile's loads issued before the look-back, so that
        // they are in flight through the look-back and the stores. Otherwise only once this
        // tile has published its prefix: a ticket taken earlier to load into a second set of
        // registers leaves its tile unpublished for a whole tile's time, and every later
        // tile's look-back waits on it (measured slower on the H200, and PoCL's two threads
        // then mostly wait on each other).
        let ticket = |g: &mut Self, lane: usize| {
            g.open_if(Expr::bin(BinOp::Eq, v(&f.l), int(lane)));
            g.push(Stmt::assign(
                v(&f.tk).index(int(1)),
                Expr::call("atomic_inc", vec![v(st)]),
            ));
            g.close();
        };
        if gather.is_some() {
            ticket(self, wg - 1);
            // Each kept element at its rank in the tile, in local memory.
            self.open_block();
            self.kept_loop(f, sh, int(0), |g| {
                let value = g.kept_value(None, &staged, elem_ty)?;
                g.push(Stmt::assign(v(&f.cb).index(v(&f.o)), value));
                Ok(())
            })?;
            self.close();
            self.push(Stmt::Barrier(Fence::Local));
            self.push(Stmt::assign(v(&f.tn), v(&f.tk).index(int(1))));
            load_tile(self, &f.tn, &leaves);
        }
        self.look_back(f, st, (&tiles, &live), len_loc.clone());
        if gather.is_none() {
            ticket(self, 0);
            self.push(Stmt::Barrier(Fence::Local));
            self.push(Stmt::assign(v(&f.tn), v(&f.tk).index(int(1))));
        } else {
            // Not needed for the order of anything; the kernel measured on the H200 (0.188 ms
            // at 10^8) has it, and one without it has not been timed.
            self.push(Stmt::Barrier(Fence::Local));
        }
        if !next_leaves.is_empty() {
            load_tile(self, &f.tn, &next_leaves);
        }
        if let Some((_, buf)) = &gather {
            // The barrier after the gathering makes every gathered value visible.
            self.gathered_store(f, buf, wg, consumer, elem_ty)?;
        } else {
            self.kept_loop(f, sh, v(&f.a), |g| {
                let pos = ArithExpr::var(f.o.as_str(), Range::upto(cap.clone()));
                if rows {
                    g.push(Stmt::decl(CType::INT, &f.e, add(chunk_first(&f.t), v(&f.m))));
                    let x = g.filter_elem(f, xs)?;
                    g.store_kept(e, &x, &dest.view.access(pos), elem_ty)?;
                } else if let Some(c) = consumer {
                    let (params, body) = g.lambda(c)?;
                    let elem = g.read_view(staged.clone(), elem_ty);
                    g.bind(params[0], Bound::View(elem));
                    let d = Dest {
                        view: dest.view.access(pos),
                        len: None,
                        rows: false,
                    };
                    g.gen_into(body, &d)?;
                } else {
                    let loc = dest.view.write(&[pos]).map_err(|m| g.err(e, m.0))?;
                    g.store(&loc, &staged, e)?;
                }
                Ok(())
            })?;
        }
        if !moves.is_empty() {
            self.open_for(&f.i, int(0), int(chunk * rounds * parts), int(1), true);
            for (cur, next) in &moves {
                self.push(Stmt::assign(v(cur).index(v(&f.i)), v(next).index(v(&f.i))));
            }
            self.close();
        }
        // The next tile's scan overwrites the local arrays this one has just read.
        self.push(Stmt::Barrier(Fence::Local));
        self.close();
        Ok((vector, !next_leaves.is_empty()))
    }

    /// For each kept element of the tile in order (slot `f_i`), `body` with `f_o` its place:
    /// `base` plus its rank among the tile's kept elements.
    pub(super) fn kept_loop(
        &mut self,
        f: &Names,
        sh: Shape,
        base: Expr,
        mut body: impl FnMut(&mut Self) -> Result<()>,
    ) -> Result<()> {
        let (rounds, parts, chunk) = (sh.rounds(), sh.parts, sh.chunk);
        // `f_ho`: where part `f_h` of the tile starts; `f_o`: where the next kept element of
        // this work-item's chunk goes.
        self.push(Stmt::decl(CType::INT, &f.ho, base));
        let roff = |h: Expr, k: Expr| v(&f.roff).index(add(mul(h, int(rounds + 1)), k));
        self.open_for(&f.h, int(0), int(parts), int(1), true);
        self.open_for(&f.r, int(0), int(rounds), int(1), true);
        self.push(Stmt::decl(CType::INT, &f.k, add(mul(v(&f.h), int(rounds)), v(&f.r))));
        let first = add(
            add(v(&f.ho), roff(v(&f.h), v(&f.r))),
            field(v(&f.ex).index(v(&f.h)), &f.r, sh.field),
        );
        self.push(Stmt::decl(CType::INT, &f.o, first));
        self.open_for(&f.m, int(0), int(chunk), int(1), true);
        self.push(Stmt::decl(CType::INT, &f.i, add(mul(v(&f.k), int(chunk)), v(&f.m))));
        let bit = add(mul(v(&f.r), int(chunk)), v(&f.m));
        let kept = Expr::bin(
            BinOp::BitAnd,
            Expr::bin(BinOp::Shr, v(&f.mk).index(v(&f.h)), bit),
            int(1),
        );
        self.open_if(kept);
        body(self)?;
        self.push(add_to(v(&f.o), int(1)));
        self.close();
        self.close();
        self.close();
        self.push(add_to(v(&f.ho), roff(v(&f.h), int(rounds))));
        self.close();
        Ok(())
    }

    /// The value stored for the kept element in slot `f_i`: the element, or the fused map's
    /// result of it (a scalar, see [`Self::compact_type`]).
    pub(super) fn kept_value(&mut self, consumer: Option<ExprId>, staged: &Read, elem_ty: &Type) -> Result<Expr> {
        match consumer {
            Some(c) => {
                let (params, body) = self.lambda(c)?;
                let elem = self.read_view(staged.clone(), elem_ty);
                self.bind(params[0], Bound::View(elem));
                self.scalar_expr(body)
            }
            None => match staged {
                Read::Expr(a) => Ok(self.access_expr(a)),
                Read::Tuple(_) => Err(ir::Diagnostic::new(ir::Span::default(), "internal: compacted tuple")),
            },
        }
    }

    /// The tile's `f_c` kept elements, gathered in `f_cb`, stored from `f_a` of `buf`, through
    /// the fused map where there is one: consecutive work-items at consecutive places, so each
    /// warp's store is one run. (Whole 4-vectors stored as `float4`, head and tail one by one,
    /// took 128 registers on the H200 against 80 and were slower: see the module doc.)
    pub(super) fn gathered_store(
        &mut self,
        f: &Names,
        buf: &str,
        wg: usize,
        consumer: Option<ExprId>,
        elem_ty: &Type,
    ) -> Result<()> {
        let out = v(&self.buf_ident(buf));
        self.open_for(&f.u, v(&f.l), v(&f.c), int(wg), false);
        let gathered = Read::Expr(Access::Value(v(&f.cb).index(v(&f.u))));
        let value = self.kept_value(consumer, &gathered, elem_ty)?;
        self.push(Stmt::assign(out.index(add(v(&f.a), v(&f.u))), value));
        self.close();
        Ok(())
    }
}
