//! Maps and work distribution: `mapGlb`/`mapWrg`/`mapLcl` over work-item, group and local ids
//! (a block or an `if` when the launch covers the length, a strided loop otherwise), coarsened
//! outermost `mapGlb`s over run-time lengths, sequential and unrolled loops, and copies.

use super::*;

impl Gen<'_> {
    /// Copies a view (no computation) element by element.
    pub(super) fn gen_copy(&mut self, e: ExprId, dest: &Dest) -> Result<()> {
        let src = self.value(e)?;
        let ty = self.cty(e)?;
        let (dims, _) = dims_of(&ty);
        if self.level() == Level::Group && !dims.is_empty() {
            return Err(self.err(
                e,
                "copying an array directly inside `mapWrg` would be done by every work-item; use `mapLcl` to copy it",
            ));
        }
        let kind = if self.level() == Level::Top {
            MapKind::Glb(0)
        } else {
            MapKind::Seq
        };
        self.copy_dims(e, &src, &dest.view, &dims, vec![], kind)
    }

    pub(super) fn copy_dims(
        &mut self,
        e: ExprId,
        src: &Rc<View>,
        dst: &Rc<View>,
        dims: &[ArithExpr],
        idx: Vec<ArithExpr>,
        kind: MapKind,
    ) -> Result<()> {
        if dims.is_empty() {
            let r = src.read(&idx).map_err(|m| self.err(e, m.0))?;
            return self.write(dst, &idx, &r, e);
        }
        let (n, rest) = (dims[0].clone(), dims[1..].to_vec());
        self.emit_loop(e, kind, &n, |g, i| {
            let mut idx = idx.clone();
            idx.push(i);
            g.copy_dims(e, src, dst, &rest, idx, MapKind::Seq)
        })
    }

    /// Emits a loop of `kind` over `0..n`, calling `body` with the index expression.
    pub(super) fn emit_loop(
        &mut self,
        e: ExprId,
        kind: MapKind,
        n: &ArithExpr,
        mut body: impl FnMut(&mut Self, ArithExpr) -> Result<()>,
    ) -> Result<()> {
        let zero = ArithExpr::cst(0);
        let level = self.level();
        match kind {
            MapKind::Seq | MapKind::Plain | MapKind::Vec => {
                if n.as_cst() == Some(0) {
                    return Ok(());
                }
                if n.as_cst() == Some(1) {
                    self.open_block();
                    self.push_loop(zero.clone(), n.clone(), LoopKind::Sequential);
                    body(self, zero)?;
                    self.pop_loop();
                    self.close();
                    return Ok(());
                }
                let v = self.fresh("i");
                let i = ArithExpr::var(v.as_str(), Range::upto(n.clone()));
                self.open_for(&v, CExpr::Int(0), arith(n), CExpr::Int(1), false);
                self.push_loop(i.clone(), n.clone(), LoopKind::Sequential);
                body(self, i)?;
                self.pop_loop();
                self.close();
            }
            MapKind::SeqUnroll => {
                // a length fixed by the built-in sizes unrolls too (`validate_with` admits it)
                let Some(c) = specialised(n).as_cst() else {
                    return Err(self.err(
                        e,
                        format!("`mapSeqUnroll`/`reduceSeqUnroll` need a length known at compile time, not {n}"),
                    ));
                };
                // Unrolling inlines the body once per index; each copy gets a constant index, so
                // private arrays indexed by it become plain registers.
                if c > 0 {
                    self.open_block();
                    for k in 0..c {
                        self.push_loop(ArithExpr::cst(k), n.clone(), LoopKind::Sequential);
                        body(self, ArithExpr::cst(k))?;
                        self.pop_loop();
                    }
                    self.close();
                }
            }
            MapKind::Glb(d) | MapKind::Wrg(d) | MapKind::Lcl(d) => {
                let d = d as usize;
                let (getid, getsize, lk, inner_level) = match kind {
                    MapKind::Glb(_) => ("get_global_id", "get_global_size", LoopKind::Global, Level::Item),
                    MapKind::Wrg(_) => ("get_group_id", "get_num_groups", LoopKind::WorkGroup, Level::Group),
                    MapKind::Plain | MapKind::Lcl(_) | MapKind::Seq | MapKind::SeqUnroll | MapKind::Vec => {
                        ("get_local_id", "get_local_size", LoopKind::Local, Level::Item)
                    }
                };
                let active = self.k.as_ref().map(|k| k.active.clone()).unwrap_or_default();
                let same_dim = |f: fn(MapKind) -> Option<u8>| active.iter().any(|a| f(*a) == Some(d as u8));
                let ok = match kind {
                    // Nested global/group maps are fine in other dimensions (2-D and 3-D kernels).
                    MapKind::Glb(_) => {
                        (level == Level::Top
                            || (level == Level::Item
                                && !active.is_empty()
                                && active.iter().all(|a| matches!(a, MapKind::Glb(_)))))
                            && !same_dim(|a| if let MapKind::Glb(x) = a { Some(x) } else { None })
                    }
                    MapKind::Wrg(_) => {
                        (level == Level::Top
                            || (level == Level::Group && active.iter().all(|a| matches!(a, MapKind::Wrg(_)))))
                            && !same_dim(|a| if let MapKind::Wrg(x) = a { Some(x) } else { None })
                    }
                    MapKind::Plain | MapKind::Lcl(_) | MapKind::Seq | MapKind::SeqUnroll | MapKind::Vec => {
                        same_dim(|a| if let MapKind::Wrg(x) = a { Some(x) } else { None })
                            && !same_dim(|a| if let MapKind::Lcl(x) = a { Some(x) } else { None })
                    }
                };
                if !ok {
                    let name = ir::Prim::Map(kind).name();
                    return Err(self.err(e, match kind {
                        MapKind::Glb(_) => format!("`{name}` must be the outermost map of a kernel, or directly inside `mapGlb` of other dimensions"),
                        MapKind::Wrg(_) => format!("`{name}` must be the outermost map of a kernel, or directly inside `mapWrg` of other dimensions"),
                        MapKind::Plain | MapKind::Lcl(_) | MapKind::Seq | MapKind::SeqUnroll | MapKind::Vec => format!("`{name}` must be inside `mapWrg{}` (and not inside another `{name}`)", dim_suffix(d)),
                    }));
                }
                let cap = self.capacity(n);
                if kind == MapKind::Glb(0) && active.is_empty() && cap.as_cst().is_none() && self.coarsen_scalars {
                    return self.coarsened_glb(n, &cap, body);
                }
                let k = self.k.as_mut().expect("in kernel");
                // The launch covers the map's (capacity) length exactly: one id per index.
                let size = match kind {
                    MapKind::Glb(_) => {
                        k.glb = true;
                        if let Some(g) = &k.global[d] {
                            if *g != cap {
                                return Err(Diagnostic::new(
                                    Span::default(),
                                    "two mapGlb of different lengths in one dimension of one kernel",
                                ));
                            }
                        }
                        k.global[d] = Some(cap.clone());
                        // Work-groups of 256 along dimension 0 (coalesced; fewer where the device
                        // allows fewer), 1 elsewhere; the launch is rounded up to whole groups, so
                        // only an exact fit needs no guard.
                        let l = self.wg_limit.glb_local(d);
                        k.local[d] = Some(l);
                        match cap.as_cst() {
                            Some(c) if c % l as i64 == 0 => cap.clone(),
                            _ => ArithExpr::size_var(self.rounded_launch.as_str()),
                        }
                    }
                    MapKind::Wrg(_) if k.one_group && n.as_cst() == Some(1) => n.clone(),
                    MapKind::Wrg(_) => {
                        k.wrg = true;
                        k.global[d] = Some(cap.clone());
                        cap.clone()
                    }
                    MapKind::Plain | MapKind::Lcl(_) | MapKind::Seq | MapKind::SeqUnroll | MapKind::Vec => {
                        // The work-group is the product of the mapLcl sizes of all dimensions:
                        // kept within the device's limits, the loops stride over what one
                        // work-item per index would exceed.
                        let others: usize = (0..3).filter(|&o| o != d).filter_map(|o| k.local[o]).product();
                        let room = self.wg_limit.lcl_room(d, others);
                        let l = *k.local[d].get_or_insert_with(|| match cap.as_cst() {
                            Some(c) if c >= 1 && c as usize <= room => c as usize,
                            _ => room.min(128),
                        });
                        ArithExpr::cst(l as i64)
                    }
                };
                let v = self.fresh(match kind {
                    MapKind::Glb(_) => "gl_id",
                    MapKind::Wrg(_) => "wg_id",
                    MapKind::Plain | MapKind::Lcl(_) | MapKind::Seq | MapKind::SeqUnroll | MapKind::Vec => "l_id",
                });
                // the one index of a map of length 1 is 0 (a column block's `mapWrg1` over its
                // one chunk, the `mapLcl1` of the row of work-items that finishes it): indices
                // then do not add an id that is always 0
                let i = if n.as_cst() == Some(1) {
                    ArithExpr::cst(0)
                } else {
                    ArithExpr::var(v.as_str(), Range::upto(n.clone()))
                };
                let old = self.set_level(inner_level);
                let dim = || vec![CExpr::Int(d as i64)];
                let one_group = self.k.as_ref().is_some_and(|k| k.one_group)
                    && matches!(kind, MapKind::Wrg(_))
                    && n.as_cst() == Some(1);
                if size == *n && one_group {
                    self.open_block();
                    self.push(Stmt::decl(CType::INT, &v, CExpr::Int(0)));
                } else if size == *n {
                    self.open_block();
                    self.push(Stmt::decl(CType::INT, &v, CExpr::call(getid, dim())));
                } else if n.prove_le(&size) || cap == size || matches!(kind, MapKind::Glb(_) | MapKind::Wrg(_)) {
                    // Global and group launches always cover the capacity of the map's length.
                    self.push(Stmt::decl(CType::INT, &v, CExpr::call(getid, dim())));
                    self.open_if(CExpr::bin(BinOp::Lt, CExpr::var(&v), arith(n)));
                } else {
                    self.open_for(
                        &v,
                        CExpr::call(getid, dim()),
                        arith(n),
                        CExpr::call(getsize, dim()),
                        false,
                    );
                }
                self.push_loop(i.clone(), n.clone(), lk);
                self.k.as_mut().expect("in kernel").active.push(kind);
                let r = body(self, i);
                self.k.as_mut().expect("in kernel").active.pop();
                self.pop_loop();
                self.close();
                self.set_level(old);
                r?;
            }
        }
        Ok(())
    }

    /// The outermost `mapGlb` over a length known only at run time: each work-item handles
    /// `GLB_COARSEN` indices a launch apart, so loads stay coalesced and each work-item keeps
    /// several independent memory accesses in flight (one per work-item cannot saturate HBM).
    pub(super) fn coarsened_glb(
        &mut self,
        n: &ArithExpr,
        cap: &ArithExpr,
        mut body: impl FnMut(&mut Self, ArithExpr) -> Result<()>,
    ) -> Result<()> {
        let c = GLB_COARSEN as i64;
        {
            let k = self.k.as_mut().expect("in kernel");
            k.glb = true;
            k.global[0] = Some(cap.add(&ArithExpr::cst(c - 1)).div(&ArithExpr::cst(c)));
            k.local[0] = Some(self.wg_limit.glb_local(0));
        }
        let gid = self.fresh("gl_id");
        let rep = self.fresh("c");
        let v = self.fresh("i");
        let i = ArithExpr::var(v.as_str(), Range::upto(n.clone()));
        let old = self.set_level(Level::Item);
        self.push(Stmt::decl(
            CType::INT,
            &gid,
            CExpr::call("get_global_id", vec![CExpr::Int(0)]),
        ));
        self.open_for(&rep, CExpr::Int(0), CExpr::Int(c), CExpr::Int(1), true);
        let size = CExpr::cast(CType::INT, CExpr::call("get_global_size", vec![CExpr::Int(0)]));
        let at = CExpr::bin(
            BinOp::Add,
            CExpr::var(&gid),
            CExpr::bin(BinOp::Mul, CExpr::var(&rep), size),
        );
        self.push(Stmt::decl(CType::INT, &v, at));
        self.open_if(CExpr::bin(BinOp::Lt, CExpr::var(&v), arith(n)));
        self.push_loop(i.clone(), n.clone(), LoopKind::Global);
        self.k.as_mut().expect("in kernel").active.push(MapKind::Glb(0));
        let r = body(self, i);
        self.k.as_mut().expect("in kernel").active.pop();
        self.pop_loop();
        self.close();
        self.close();
        self.set_level(old);
        r
    }

    /// Whether a sequential loop over `0..n` is taken four indices an iteration: `n` is a
    /// multiple of 4 (at least 8) only through the sizes built into the kernel. Four steps of
    /// a reduction in one iteration issue four independent reads (md's gathers of the
    /// neighbours' positions, 0.0770 → 0.0667 ms on the H200 written by hand) where the driver
    /// unrolls a loop of 128 by 2. Loops of a constant length in the program itself stay as
    /// they were (their kernels do not change with sizes).
    pub(super) fn by_four(&self, n: &ArithExpr) -> bool {
        n.as_cst().is_none() && types::specialised(n).as_cst().is_some_and(|c| c >= 8 && c % 4 == 0)
    }

    /// A sequential loop of `n / 4` iterations (`by_four`), each running `body` at the four
    /// indices `4j .. 4j + 3` in order: the same steps in the same order as the plain loop.
    pub(super) fn emit_seq_loop_by_four(
        &mut self,
        n: &ArithExpr,
        mut body: impl FnMut(&mut Self, ArithExpr) -> Result<()>,
    ) -> Result<()> {
        let quarter = n.div_assume_exact(&ArithExpr::cst(4));
        let v = self.fresh("i");
        let j = ArithExpr::var(v.as_str(), Range::upto(quarter.clone()));
        self.open_for(&v, CExpr::Int(0), arith(&quarter), CExpr::Int(1), false);
        for k in 0..4 {
            let i = j.mul(&ArithExpr::cst(4)).add(&ArithExpr::cst(k));
            self.push_loop(i.clone(), n.clone(), LoopKind::Sequential);
            body(self, i)?;
            self.pop_loop();
        }
        self.close();
        Ok(())
    }

    pub(super) fn push_loop(&mut self, var: ArithExpr, len: ArithExpr, kind: LoopKind) {
        self.k
            .as_mut()
            .expect("in kernel")
            .loops
            .push(Enclosing { var, len, kind });
    }

    pub(super) fn pop_loop(&mut self) {
        self.k.as_mut().expect("in kernel").loops.pop();
    }

    pub(super) fn gen_map(&mut self, e: ExprId, kind: MapKind, f: ExprId, xs: ExprId, dest: &Dest) -> Result<()> {
        if let Some(tile) = self.mma_tile(kind, f, xs)? {
            return self.gen_mma_tile(e, &tile, dest);
        }
        let (params, body) = self.lambda(f)?;
        if kind == MapKind::Vec {
            let Type::Vector(s, w) = self.cty(xs)? else {
                return Err(self.err(xs, "internal: mapVec"));
            };
            let v = match self.scalar(xs)? {
                Read::Expr(v) => v,
                Read::Tuple(_) => return Err(self.err(xs, "internal: mapVec of a tuple")),
            };
            let v = self.declare(&Read::Expr(v), &Type::Vector(s, w), "v")?;
            let Read::Expr(v) = v else {
                unreachable!("declare of a vector")
            };
            let v = self.access_expr(&v);
            let mut lanes = vec![];
            let mut rt = s;
            for k in 0..w {
                self.bind(
                    params[0],
                    Bound::View(Rc::new(View::Value {
                        expr: v.clone().lane(u32::from(k)),
                        ty: Type::Scalar(s),
                    })),
                );
                match self.scalar_val(body)? {
                    Val::E(x) => lanes.push(x),
                    Val::T(_) => return Err(self.err(body, "mapVec functions return scalars")),
                }
                if let Some(t) = self.cty(body)?.scalar() {
                    rt = t;
                }
            }
            let vec = CExpr::VecLit(CType::Vector(types::ast_scalar(rt), w), lanes);
            let r = Read::Expr(Access::Value(vec));
            return self.write(&dest.view, &[], &r, e);
        }
        let n = self.len_of(xs)?;
        let kind = match kind {
            MapKind::Plain => {
                if self.level() == Level::Top {
                    MapKind::Glb(0)
                } else {
                    MapKind::Seq
                }
            }
            k @ MapKind::Glb(_)
            | k @ MapKind::Wrg(_)
            | k @ MapKind::Lcl(_)
            | k @ MapKind::Seq
            | k @ MapKind::SeqUnroll
            | k @ MapKind::Vec => k,
        };
        // An array of filter results is mapped row by row, each row unpacked with its length.
        let rows = match self.prog.expr(xs) {
            Expr::Var(v) => match &self.env[v.index()] {
                Some(Bound::Rows { data, lens }) => Some((data.clone(), lens.clone())),
                _ => None,
            },
            Expr::Lit(_)
            | Expr::Lambda { .. }
            | Expr::Prim { .. }
            | Expr::Op { .. }
            | Expr::If { .. }
            | Expr::Let { .. }
            | Expr::Pack(_) => None,
        };
        let xv = if rows.is_some() { None } else { Some(self.value(xs)?) };
        let level = self.level();
        // elements that are filter results, or rows of them (the result's rows of rows)
        let elem_exist = matches!(self.cty(e)?, Type::Array(ref t, _) if matches!(**t, Type::Exists(_))
            || matches!(&**t, Type::Array(r, _) if matches!(**r, Type::Exists(_))));
        self.coarsen_scalars = !matches!(self.cty(xs)?, Type::Array(ref t, _) if matches!(**t, Type::Vector(..)));
        self.emit_loop(e, kind, &n, |g, i| {
            match (&rows, &xv) {
                (Some((data, lens)), _) => {
                    let Some(x) = g.info.unpacks.get(&Binder::Param(f, 0)).cloned() else {
                        return Err(g.err(f, "internal: row parameter without unpack"));
                    };
                    let c = g.fresh(&x);
                    let len = lens.read(std::slice::from_ref(&i)).map_err(|m| g.err(xs, m.0))?;
                    let len = g.expr_of(len, xs)?;
                    g.push(Stmt::decl(CType::INT, &c, len));
                    let c = c.to_string();
                    let Type::Array(_, _) = g.cty(xs)? else {
                        return Err(g.err(xs, "internal: rows"));
                    };
                    let cap = match &**data {
                        View::Mem { dims, .. } if dims.len() >= 2 => dims[1].clone(),
                        View::Mem { .. }
                        | View::Value { .. }
                        | View::Tuple(_)
                        | View::Access { .. }
                        | View::Split { .. }
                        | View::Join { .. }
                        | View::Transpose { .. }
                        | View::Slide { .. }
                        | View::Pad { .. }
                        | View::Reorder { .. }
                        | View::Reverse { .. }
                        | View::Zip(_)
                        | View::Component { .. }
                        | View::Generate { .. }
                        | View::AsVector { .. }
                        | View::AsScalar { .. }
                        | View::Nested { .. } => g.capacity_len_rows(xs).unwrap_or_else(|_| ArithExpr::cst(1)),
                    };
                    g.caps.insert(c.clone(), cap.clone());
                    g.lengths.insert(
                        x,
                        ArithExpr::var(&c, Range::new(ArithExpr::cst(0), Some(cap.add(&ArithExpr::cst(1))))),
                    );
                    g.bind(params[0], Bound::View(data.access(i.clone())));
                }
                (None, Some(xv)) => {
                    if let Some(x) = g.info.unpacks.get(&Binder::Param(f, 0)).cloned() {
                        return Err(g.err(f, format!("internal: unpacking parameter {x} of a view")));
                    }
                    let elem = g.loop_elem(xv.access(i.clone()), params[0], body)?;
                    g.bind(params[0], Bound::View(elem));
                }
                (None, None) => unreachable!("one of rows or value is set"),
            }
            let d = Dest {
                view: dest.view.access(i.clone()),
                len: if elem_exist {
                    dest.len.as_ref().map(|l| l.access(i.clone()))
                } else {
                    None
                },
                rows: false,
            };
            g.gen_into(body, &d)
        })?;
        if matches!(kind, MapKind::Lcl(_)) && level == Level::Group {
            let fence = self.fence_of(&dest.view);
            self.push(Stmt::Barrier(fence));
        }
        Ok(())
    }
}
