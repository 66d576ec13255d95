//! Values as views and destinations: layout primitives (and plain maps that only re-index) never
//! compute; `value` builds their views, materializing computed arrays, and `gen_into` writes a
//! computation into a destination view, re-indexing it through layout primitives.

use super::*;

impl Gen<'_> {
    /// A value read (or computed) as the view of a value.
    pub(super) fn read_view(&self, r: Read, ty: &Type) -> Rc<View> {
        match (r, ty) {
            (Read::Expr(a), t) => Rc::new(View::Value {
                expr: self.access_expr(&a),
                ty: t.clone(),
            }),
            (Read::Tuple(rs), Type::Tuple(ts)) => Rc::new(View::Tuple(
                rs.into_iter().zip(ts).map(|(r, t)| self.read_view(r, t)).collect(),
            )),
            (Read::Tuple(rs), t) => Rc::new(View::Tuple(rs.into_iter().map(|r| self.read_view(r, t)).collect())),
        }
    }

    /// `map (λx. L x)` (a plain map) where `L` only re-indexes `x` (join, split, transpose,
    /// slide, pad-clamp, pad by a literal, and plain maps of those) is a view, not a computation:
    /// its re-indexings in the order they apply (innermost first), each with the number of
    /// outer dimensions it leaves alone. Slides and pads are read-only
    /// ([`Gen::layout_map_writable`]).
    pub(super) fn layout_map(&self, e: ExprId) -> Option<Vec<(usize, ExprId)>> {
        let mut ops = vec![];
        match self.prog.expr(e) {
            Expr::Prim {
                prim: Prim::Map(MapKind::Plain),
                args,
            } => {
                let Expr::Lambda { params, body } = self.prog.expr(args[0]) else {
                    return None;
                };
                (params.len() == 1 && self.layout_chain(*body, params[0], 1, &mut ops) && !ops.is_empty())
                    .then_some(ops)
            }
            Expr::Var(_)
            | Expr::Lit(_)
            | Expr::Lambda { .. }
            | Expr::Prim { .. }
            | Expr::Op { .. }
            | Expr::If { .. }
            | Expr::Let { .. }
            | Expr::Pack(_) => None,
        }
    }

    pub(super) fn layout_chain(&self, e: ExprId, x: VarId, skip: usize, ops: &mut Vec<(usize, ExprId)>) -> bool {
        match self.prog.expr(e) {
            Expr::Var(v) => *v == x,
            Expr::Prim {
                prim: Prim::Join | Prim::Split(_) | Prim::Transpose | Prim::Slide(..) | Prim::PadClamp(..),
                args,
            } => {
                let ok = self.layout_chain(args[0], x, skip, ops);
                ops.push((skip, e));
                ok
            }
            // a fill that is a literal is the same in every row (one that read the row would
            // need it bound where the view is read)
            Expr::Prim {
                prim: Prim::Pad(..),
                args,
            } if matches!(self.prog.expr(args[0]), Expr::Lit(_)) => {
                let ok = self.layout_chain(args[1], x, skip, ops);
                ops.push((skip, e));
                ok
            }
            Expr::Prim {
                prim: Prim::Map(MapKind::Plain),
                args,
            } => match self.prog.expr(args[0]) {
                Expr::Lambda { params, body } if params.len() == 1 => {
                    self.layout_chain(args[1], x, skip, ops) && self.layout_chain(*body, params[0], skip + 1, ops)
                }
                Expr::Var(_)
                | Expr::Lit(_)
                | Expr::Lambda { .. }
                | Expr::Prim { .. }
                | Expr::Op { .. }
                | Expr::If { .. }
                | Expr::Let { .. }
                | Expr::Pack(_) => false,
            },
            Expr::Lit(_)
            | Expr::Lambda { .. }
            | Expr::Prim { .. }
            | Expr::Op { .. }
            | Expr::If { .. }
            | Expr::Let { .. }
            | Expr::Pack(_) => false,
        }
    }

    /// The re-indexing of a join, split or transpose node; `dual` gives the one its destination
    /// is written through.
    pub(super) fn layout_of(&self, op: ExprId, dual: bool) -> Result<Layout> {
        let Expr::Prim { prim, args } = self.prog.expr(op) else {
            return Err(self.err(op, "internal: not a layout primitive"));
        };
        Ok(match (prim, dual) {
            (Prim::Join, false) | (Prim::Split(_), true) => {
                let m = match prim {
                    Prim::Split(k) => self.c_len(k),
                    Prim::Map(_)
                    | Prim::Reduce(_)
                    | Prim::Zip
                    | Prim::Join
                    | Prim::Transpose
                    | Prim::Slide(..)
                    | Prim::Pad(..)
                    | Prim::PadClamp(..)
                    | Prim::ReorderStride(_)
                    | Prim::Reverse
                    | Prim::Generate(_)
                    | Prim::Iterate(_)
                    | Prim::IterateUntil(_)
                    | Prim::Filter(_)
                    | Prim::Scan(_)
                    | Prim::AsVector(_)
                    | Prim::AsScalar
                    | Prim::To(_) => self.row_len(args[0])?,
                };
                Layout::Join(m)
            }
            (Prim::Join, true) => Layout::Split(self.row_len(args[0])?),
            (Prim::Split(k), false) => Layout::Split(self.c_len(k)),
            (Prim::Transpose, _) => Layout::Transpose,
            _ => return Err(self.err(op, "internal: not a join, split or transpose")),
        })
    }

    /// `ops` applied in order over `view`: the view of a layout map over the view of its
    /// argument, or with `dual` the view its argument is written through.
    pub(super) fn layout_map_view(
        &mut self,
        ops: &[(usize, ExprId)],
        mut view: Rc<View>,
        dual: bool,
    ) -> Result<Rc<View>> {
        for &(skip, op) in ops {
            view = match self.prog.expr(op).clone() {
                Expr::Prim {
                    prim: Prim::Slide(_, step),
                    ..
                } if !dual => Rc::new(View::Nested {
                    skip,
                    op: Layout::Slide(step),
                    inner: view,
                }),
                Expr::Prim {
                    prim: Prim::PadClamp(l, _),
                    args,
                } if !dual => Rc::new(View::Pad {
                    skip,
                    l,
                    n: self.len_of(args[0])?,
                    fill: None,
                    inner: view,
                }),
                Expr::Prim {
                    prim: Prim::Pad(l, _),
                    args,
                } if !dual => {
                    let fill = self.pad_fill(args[0])?;
                    pad_of(skip, &l, &self.len_of(args[1])?, &fill, view)
                }
                Expr::Var(_)
                | Expr::Lit(_)
                | Expr::Lambda { .. }
                | Expr::Prim { .. }
                | Expr::Op { .. }
                | Expr::If { .. }
                | Expr::Let { .. }
                | Expr::Pack(_) => Rc::new(View::Nested {
                    skip,
                    op: self.layout_of(op, dual)?,
                    inner: view,
                }),
            };
        }
        Ok(view)
    }

    /// Whether a layout map's re-indexings can be written through: each element of its result
    /// is one element of its argument and no two share one (join, split, transpose; not the
    /// overlapping windows of a slide, nor a pad's repeated or invented borders).
    pub(super) fn layout_map_writable(&self, ops: &[(usize, ExprId)]) -> bool {
        ops.iter().all(|&(_, op)| match self.prog.expr(op) {
            Expr::Prim { prim, .. } => match prim {
                Prim::Join | Prim::Split(_) | Prim::Transpose => true,
                Prim::Slide(..)
                | Prim::Pad(..)
                | Prim::PadClamp(..)
                | Prim::Map(_)
                | Prim::Reduce(_)
                | Prim::Zip
                | Prim::ReorderStride(_)
                | Prim::Reverse
                | Prim::Generate(_)
                | Prim::Iterate(_)
                | Prim::IterateUntil(_)
                | Prim::Filter(_)
                | Prim::Scan(_)
                | Prim::AsVector(_)
                | Prim::AsScalar
                | Prim::To(_) => false,
            },
            Expr::Var(_)
            | Expr::Lit(_)
            | Expr::Lambda { .. }
            | Expr::Op { .. }
            | Expr::If { .. }
            | Expr::Let { .. }
            | Expr::Pack(_) => false,
        })
    }

    /// `e` is `x` under re-indexing primitives that can be written through (join, split,
    /// transpose, asScalar, asVector, toX).
    pub(super) fn is_layout_of_var(&self, e: ExprId, x: VarId) -> bool {
        match self.prog.expr(e) {
            Expr::Var(v) => *v == x,
            Expr::Prim {
                prim: Prim::Join | Prim::Split(_) | Prim::Transpose | Prim::AsScalar | Prim::AsVector(_) | Prim::To(_),
                args,
            } => self.is_layout_of_var(args[0], x),
            Expr::Lit(_)
            | Expr::Lambda { .. }
            | Expr::Prim { .. }
            | Expr::Op { .. }
            | Expr::If { .. }
            | Expr::Let { .. }
            | Expr::Pack(_) => false,
        }
    }

    /// A layout primitive in destination position writes its argument through the dual view
    /// of the destination: `join` of rows of length m splits it, `split k` joins it,
    /// `transpose` transposes it, `asScalar` views it as vectors and `asVector` as scalars.
    pub(super) fn reindexed_dest(&self, e: ExprId, dest: &Dest) -> Result<(ExprId, Dest)> {
        let Expr::Prim { prim, args } = self.prog.expr(e) else {
            return Err(self.err(e, "internal: not a layout primitive"));
        };
        let inner = dest.view.clone();
        let view = match prim {
            Prim::Join => View::Split {
                k: self.row_len(args[0])?,
                inner,
            },
            Prim::Split(k) => View::Join {
                m: self.c_len(k),
                inner,
            },
            Prim::Transpose => View::Transpose { inner },
            Prim::AsScalar => {
                let (scalar, w) = self.vector_of(args[0])?;
                View::AsVector { w, scalar, inner }
            }
            Prim::AsVector(w) => View::AsScalar { w: *w, inner },
            Prim::Map(_)
            | Prim::Reduce(_)
            | Prim::Zip
            | Prim::Slide(..)
            | Prim::Pad(..)
            | Prim::PadClamp(..)
            | Prim::ReorderStride(_)
            | Prim::Reverse
            | Prim::Generate(_)
            | Prim::Iterate(_)
            | Prim::Filter(_)
            | Prim::Scan(_)
            | Prim::To(_) => return Err(self.err(e, "internal: not a re-indexing primitive")),
            Prim::IterateUntil(_) => return Err(self.err(e, HOST_ONLY)),
        };
        Ok((
            args[0],
            Dest {
                view: Rc::new(view),
                len: None,
                rows: false,
            },
        ))
    }

    /// Whether `e` only re-indexes existing data (no computation, no allocation).
    pub(super) fn is_view(&self, e: ExprId) -> bool {
        match self.prog.expr(e) {
            Expr::Var(_) | Expr::Lit(_) => true,
            Expr::Prim { prim, args } => match prim {
                Prim::Zip
                | Prim::Split(_)
                | Prim::Join
                | Prim::Transpose
                | Prim::Slide(..)
                | Prim::PadClamp(..)
                | Prim::ReorderStride(_)
                | Prim::Reverse
                | Prim::AsVector(_)
                | Prim::AsScalar => args.iter().all(|a| self.is_view(*a)),
                Prim::Pad(..) => args.iter().all(|a| self.is_view(*a)),
                Prim::Generate(_) => true,
                Prim::To(_) => args.iter().all(|a| self.is_view(*a)),
                Prim::Map(_) => self.layout_map(e).is_some() && self.is_view(args[1]),
                Prim::Reduce(_) | Prim::Iterate(_) | Prim::Filter(_) | Prim::Scan(_) => false,
                Prim::IterateUntil(_) => false,
            },
            // a tuple holding arrays is the tuple of its components' views (struct of arrays);
            // `at` checks its index with statements
            Expr::Op { op, args } if soa_components(self.info.ty(e)).is_some() => {
                if matches!(op, Op::Tuple) {
                    args.iter().all(|a| self.is_view(*a))
                } else {
                    matches!(op, Op::Get(_)) && self.is_view(args[0])
                }
            }
            Expr::Op { .. } | Expr::If { .. } => !matches!(self.info.ty(e), Type::Array(..) | Type::Exists(_)),
            Expr::Let { value, body, .. } => self.is_view(*value) && self.is_view(*body),
            Expr::Pack(_) | Expr::Lambda { .. } => false,
        }
    }

    /// The value of `e` as a view, materializing computed arrays into buffers.
    pub(super) fn value(&mut self, e: ExprId) -> Result<Rc<View>> {
        if let Some(v) = self.pre.get(&e) {
            return Ok(v.clone());
        }
        match self.prog.expr(e).clone() {
            Expr::Var(v) => match &self.env[v.index()] {
                Some(Bound::View(view)) => Ok(view.clone()),
                Some(Bound::Rows { .. }) => Err(self.err(e, "an array of filter results can only be mapped over here")),
                None => Err(self.err(e, "internal: unbound variable in code generation")),
            },
            // An array component of a tuple (e.g. of a zip of arrays of arrays) stays a view.
            Expr::Op { op: Op::Get(i), args }
                if (matches!(self.cty(e)?, Type::Array(..)) || soa_components(&self.cty(e)?).is_some())
                    && (matches!(self.prog.expr(args[0]), Expr::Var(_) | Expr::Prim { .. })
                        || soa_components(&self.cty(args[0])?).is_some()) =>
            {
                Ok(self.value(args[0])?.component(i as usize))
            }
            // A tuple holding arrays is the tuple of its components' views (struct of arrays,
            // see `types::soa_components`).
            Expr::Op { op: Op::Tuple, args } if soa_components(&self.cty(e)?).is_some() => {
                let vs = args.iter().map(|a| self.value(*a)).collect::<Result<Vec<_>>>()?;
                Ok(Rc::new(View::Tuple(vs)))
            }
            // A row picked by `at` stays a view of its array, read at the checked index.
            Expr::Op { op: Op::At, args }
                if matches!(self.cty(e)?, Type::Array(..)) || soa_components(&self.cty(e)?).is_some() =>
            {
                let (xs, idx) = self.at_index(e, args[0], args[1])?;
                Ok(xs.access(idx))
            }
            Expr::Lit(_) | Expr::Op { .. } | Expr::If { .. } => {
                let r = self.scalar(e)?;
                let ty = self.cty(e)?;
                Ok(self.read_view(r, &ty))
            }
            Expr::Let { var, value, body, .. } => {
                self.kernel_bind(e, var, value)?;
                self.value(body)
            }
            Expr::Pack(inner) => self.value(inner),
            Expr::Lambda { .. } => Err(self.err(e, "internal: lambda as a value")),
            Expr::Prim { prim, args } => {
                let n_of = |g: &Self, a: ExprId| g.len_of(a);
                Ok(match prim {
                    Prim::Zip => {
                        let vs = args.iter().map(|a| self.value(*a)).collect::<Result<Vec<_>>>()?;
                        Rc::new(View::Zip(vs))
                    }
                    Prim::Split(k) => Rc::new(View::Split {
                        k: self.c_len(&k),
                        inner: self.value(args[0])?,
                    }),
                    Prim::Join => Rc::new(View::Join {
                        m: self.row_len(args[0])?,
                        inner: self.value(args[0])?,
                    }),
                    Prim::Transpose => Rc::new(View::Transpose {
                        inner: self.value(args[0])?,
                    }),
                    Prim::Slide(_, step) => Rc::new(View::Slide {
                        step,
                        inner: self.value(args[0])?,
                    }),
                    Prim::Pad(l, _) => {
                        let fill = self.pad_fill(args[0])?;
                        let n = n_of(self, args[1])?;
                        pad_of(0, &l, &n, &fill, self.value(args[1])?)
                    }
                    Prim::PadClamp(l, _) => {
                        let n = n_of(self, args[0])?;
                        Rc::new(View::Pad {
                            skip: 0,
                            l,
                            n,
                            fill: None,
                            inner: self.value(args[0])?,
                        })
                    }
                    Prim::ReorderStride(s) => {
                        let s = self.c_len(&s);
                        let n = n_of(self, args[0])?;
                        Rc::new(View::Reorder {
                            s,
                            n,
                            inner: self.value(args[0])?,
                        })
                    }
                    Prim::Reverse => {
                        let n = n_of(self, args[0])?;
                        Rc::new(View::Reverse {
                            n,
                            inner: self.value(args[0])?,
                        })
                    }
                    Prim::AsVector(w) => Rc::new(View::AsVector {
                        w,
                        scalar: self.vector_of(e)?.0,
                        inner: self.value(args[0])?,
                    }),
                    Prim::AsScalar => Rc::new(View::AsScalar {
                        w: self.vector_of(args[0])?.1,
                        inner: self.value(args[0])?,
                    }),
                    Prim::Generate(_) => self.generate_view(e, args[0])?,
                    Prim::To(space) if !self.is_view(args[0]) => self.materialize(args[0], Some(space))?,
                    Prim::To(_) => self.value(args[0])?,
                    Prim::Map(_) => match self.layout_map(e) {
                        Some(ops) => {
                            let inner = self.value(args[1])?;
                            self.layout_map_view(&ops, inner, false)?
                        }
                        None => self.materialize(e, None)?,
                    },
                    // a loop of one work-item over a scalar, tuple or vector is its variables
                    Prim::Iterate(_) | Prim::IterateUntil(_)
                        if self.is_work_item_loop(e) && !matches!(self.cty(e)?, Type::Array(..)) =>
                    {
                        let r = self.loop_value(e)?;
                        let ty = self.cty(e)?;
                        self.read_view(r, &ty)
                    }
                    Prim::Reduce(_) | Prim::Iterate(_) | Prim::IterateUntil(_) | Prim::Scan(_) => {
                        self.materialize(e, None)?
                    }
                    Prim::Filter(_) => return Err(self.err(e, "internal: a filter result must be bound before use")),
                })
            }
        }
    }

    /// Where a computation's result goes by default: the space its innermost `toX` names.
    pub(super) fn space_of(&self, e: ExprId) -> Option<AddressSpace> {
        match self.prog.expr(e) {
            Expr::Prim { prim: Prim::To(s), .. } => Some(*s),
            // a map's or an iteration's elements go where its function's body puts them
            Expr::Prim {
                prim: Prim::Map(_) | Prim::Iterate(_),
                args,
            } => match self.prog.expr(args[0]) {
                Expr::Lambda { body, .. } => self.space_of(*body),
                Expr::Var(_)
                | Expr::Lit(_)
                | Expr::Prim { .. }
                | Expr::Op { .. }
                | Expr::If { .. }
                | Expr::Let { .. }
                | Expr::Pack(_) => None,
            },
            Expr::Prim {
                prim: Prim::Join | Prim::Split(_) | Prim::Transpose | Prim::AsScalar | Prim::AsVector(_),
                args,
            } => self.space_of(args[0]),
            Expr::Let { body, .. } => self.space_of(*body),
            Expr::Var(_)
            | Expr::Lit(_)
            | Expr::Lambda { .. }
            | Expr::Prim { .. }
            | Expr::Op { .. }
            | Expr::If { .. }
            | Expr::Pack(_) => None,
        }
    }

    /// Generates code computing `e` into `dest`.
    pub(super) fn gen_into(&mut self, e: ExprId, dest: &Dest) -> Result<()> {
        if self.info.packs.contains(&e) && dest.len.is_some() && !dest.rows {
            return self.gen_packed(e, dest, e);
        }
        if self.gen_parts(e, dest)? {
            return Ok(());
        }
        match self.prog.expr(e).clone() {
            // `let k = v in layout(k)` (as K-normalization leaves it): `v` is computed straight
            // into the destination seen through the layout, never into a temporary (a
            // temporary of a `mapLcl` inside another `mapLcl` would be private to each
            // work-item, though every work-item wrote part of it).
            Expr::Let { var, value, body, .. }
                if !self.info.unpacks.contains_key(&Binder::Let(e)) && self.is_layout_of_var(body, var) =>
            {
                let (mut cur, mut d) = (body, dest.clone());
                while cur != value {
                    (cur, d) = match self.prog.expr(cur).clone() {
                        Expr::Var(_) => (value, d),
                        Expr::Prim {
                            prim: Prim::To(_),
                            args,
                        } => (args[0], d),
                        Expr::Lit(_) | Expr::Lambda { .. } | Expr::Prim { .. } | Expr::Op { .. } | Expr::If { .. } | Expr::Let { .. } | Expr::Pack(_) => self.reindexed_dest(cur, &d)?,
                    };
                }
                self.gen_into(value, &d)
            }
            Expr::Let { var, value, body, .. } => {
                self.kernel_bind(e, var, value)?;
                self.gen_into(body, dest)
            }
            Expr::Pack(inner) => self.gen_packed(inner, dest, e),
            Expr::Prim { prim, args } => match prim {
                Prim::To(_) => self.gen_into(args[0], dest),
                Prim::Join | Prim::Split(_) | Prim::Transpose | Prim::AsScalar | Prim::AsVector(_) => {
                    let (inner, d) = self.reindexed_dest(e, dest)?;
                    self.gen_into(inner, &d)
                }
                Prim::Map(kind) => match self.layout_map(e) {
                    // written through the dual re-indexings, outermost first
                    Some(ops) if self.layout_map_writable(&ops) => {
                        let duals: Vec<(usize, ExprId)> = ops.into_iter().rev().collect();
                        let d = Dest {
                            view: self.layout_map_view(&duals, dest.view.clone(), true)?,
                            len: None,
                            rows: false,
                        };
                        self.gen_into(args[1], &d)
                    }
                    // copied element by element where the view has no dual (a slide's
                    // windows overlap)
                    Some(_) | None => self.gen_map(e, kind, args[0], args[1], dest),
                },
                Prim::Reduce(_) => self.gen_reduce(e, args[0], args[1], args[2], dest),
                Prim::Filter(FilterKind::Seq | FilterKind::Plain) => self.gen_filter_seq(e, args[0], args[1], dest),
                Prim::Filter(FilterKind::Glb) => Err(self.err(e, "`filterGlb` needs several kernels, so it must be at the top level of the program (bind its result with let/unpack), not inside a map")),
                Prim::Iterate(_) | Prim::IterateUntil(_) if self.is_work_item_loop(e) => self.gen_work_item_loop(e, dest),
                Prim::Scan(ScanKind::Seq | ScanKind::Plain) => self.gen_scan_seq(e, args[0], args[1], args[2], dest),
                Prim::Scan(ScanKind::Glb) => Err(self.err(e, "`scanGlb` orders the work-groups of its own kernel, so it must be at the top level of the program, not inside a map")),
                Prim::Iterate(k) => self.gen_iterate(e, &k, args[0], args[1], dest),
                Prim::IterateUntil(_) => Err(self.err(e, HOST_ONLY)),
                Prim::Zip | Prim::Slide(..) | Prim::Pad(..) | Prim::PadClamp(..) | Prim::ReorderStride(_) | Prim::Reverse | Prim::Generate(_) => {
                    self.gen_copy(e, dest)
                }
            },
            Expr::Var(_) => self.gen_copy(e, dest),
            Expr::Lit(_) | Expr::Op { .. } | Expr::If { .. } => {
                if let Type::Array(..) = self.cty(e)? {
                    return self.gen_copy(e, dest);
                }
                let r = self.scalar(e)?;
                self.write(&dest.view, &[], &r, e)
            }
            Expr::Lambda { .. } => Err(self.err(e, "internal: lambda in destination position")),
        }
    }

    pub(super) fn gen_packed(&mut self, e: ExprId, dest: &Dest, at: ExprId) -> Result<()> {
        let n = self.len_of(e)?;
        self.gen_into(
            e,
            &Dest {
                view: dest.view.clone(),
                len: None,
                rows: false,
            },
        )?;
        let len = dest
            .len
            .clone()
            .ok_or_else(|| self.err(at, "internal: packed value without a length destination"))?;
        let loc = len.write(&[]).map_err(|m| self.err(at, m.0))?;
        self.store_uniform(&loc, arith(&n), at)
    }
}

/// Host sections (`ir::host`) are split off by the driver; none reaches a kernel.
const HOST_ONLY: &str = "internal: `iterate-until` is a host section and is run by the driver, not inside a kernel";

/// The fill of a `pad`: a scalar or a tuple of them, or a row (`pad` over rows, its fill an
/// array such as `generate W (λi. 0)`) read at the column the padded view is read at.
enum Fill {
    Scalar(Val, Type),
    Row(Rc<View>),
}

impl Gen<'_> {
    fn pad_fill(&mut self, fill: ExprId) -> Result<Fill> {
        let ty = self.info.ty(fill).clone();
        Ok(match ty {
            Type::Array(..) => Fill::Row(self.value(fill)?),
            Type::Scalar(_) | Type::Vector(..) | Type::Tuple(_) | Type::Exists(_) | Type::Fun(..) => {
                Fill::Scalar(self.scalar_val(fill)?, ty)
            }
        })
    }
}

/// `pad l r fill` below the first `skip` dimensions of `inner` (of length `n` there): with a
/// tuple `fill`, the zip of each component padded with its part of `fill` (a zip reads every
/// component at the same indices, so it works at any depth).
fn pad_of(skip: usize, l: &ArithExpr, n: &ArithExpr, fill: &Fill, inner: Rc<View>) -> Rc<View> {
    let pad = |fill: Rc<View>| {
        Rc::new(View::Pad {
            skip,
            l: l.clone(),
            n: n.clone(),
            fill: Some(fill),
            inner: inner.clone(),
        })
    };
    match fill {
        Fill::Row(v) => pad(v.clone()),
        Fill::Scalar(Val::E(s), ty) => pad(Rc::new(View::Value {
            expr: s.clone(),
            ty: ty.clone(),
        })),
        Fill::Scalar(Val::T(cs), ty) => Rc::new(View::Zip(
            cs.iter()
                .enumerate()
                .map(|(c, f)| {
                    let ct = match ty {
                        Type::Tuple(ts) => ts.get(c).cloned().unwrap_or_else(|| ty.clone()),
                        Type::Scalar(_) | Type::Vector(..) | Type::Array(..) | Type::Exists(_) | Type::Fun(..) => {
                            ty.clone()
                        }
                    };
                    pad_of(skip, l, n, &Fill::Scalar(f.clone(), ct), inner.component(c))
                })
                .collect(),
        )),
    }
}
