//! Kernel boundaries and the host plan: one kernel per value computed at host level (filter
//! results bound with their device-side lengths), each kernel's launch sizes, and its parameters
//! (the buffers, scalars and sizes its tree names, in ABI order).

use super::*;
use super::{inline, lanes};

impl Gen<'_> {
    pub(super) fn host(&mut self, e: ExprId, dest: &Dest) -> Result<()> {
        if self.info.packs.contains(&e) && dest.len.is_some() && !dest.rows {
            return self.host_packed(e, dest, e);
        }
        match self.prog.expr(e).clone() {
            Expr::Let { var, value, body, .. } => {
                if let Some((filter, p, xs, f)) = self.filter_map_fusion(e, var, value, body, dest) {
                    return self.filter_glb(filter, p, xs, Some(f), dest);
                }
                if let Some(stages) = self.last_group_form(var, value, body) {
                    return self.last_group(e, var, stages, dest);
                }
                self.host_bind(e, var, value)?;
                self.host(body, dest)
            }
            Expr::Prim {
                prim: Prim::To(_),
                args,
            } => self.host(args[0], dest),
            Expr::Pack(inner) => self.host_packed(inner, dest, e),
            // A tuple holding arrays is stored one buffer per component (`types::soa_components`):
            // each component is computed like a result of its own, in kernels of its own, since
            // their lengths differ and a kernel has one launch size per dimension.
            // A filter result (or rows of them) among them, the program's result, writes its
            // length(s) at its place.
            Expr::Op { op: Op::Tuple, args } if soa_components(&self.cty(e)?).is_some() => {
                for (c, a) in args.iter().enumerate() {
                    let rows = matches!(self.info.ty(*a), Type::Array(r, _) if matches!(**r, Type::Exists(_)));
                    let exist = rows || matches!(self.info.ty(*a), Type::Exists(_));
                    let d = Dest {
                        view: dest.view.component(c),
                        len: dest.len.as_ref().filter(|_| exist).map(|l| l.component(c)),
                        rows,
                    };
                    self.host(*a, &d)?;
                }
                Ok(())
            }
            Expr::Prim {
                prim: Prim::Filter(FilterKind::Glb | FilterKind::Plain),
                args,
            } => self.filter_glb(e, args[0], args[1], None, dest),
            Expr::Prim {
                prim: Prim::Scan(ScanKind::Glb | ScanKind::Plain),
                ..
            } => self.scan_glb(e, None, None, dest),
            Expr::Prim { .. } if self.scan_map_fusion(e, dest).is_some() => {
                let (scan, h) = self.scan_map_fusion(e, dest).expect("checked");
                self.scan_glb(scan, None, Some(h), dest)
            }
            Expr::Prim { .. } if self.scan_rows_form(e, dest).is_some() => {
                let (scan, rows) = self.scan_rows_form(e, dest).expect("checked");
                self.scan_glb(scan, Some(rows), None, dest)
            }
            Expr::Prim {
                prim: Prim::Join | Prim::Split(_) | Prim::Transpose | Prim::AsScalar | Prim::AsVector(_),
                ..
            } => {
                let (inner, d) = self.reindexed_dest(e, dest)?;
                self.host(inner, &d)
            }
            Expr::Var(_)
            | Expr::Lit(_)
            | Expr::Lambda { .. }
            | Expr::Prim { .. }
            | Expr::Op { .. }
            | Expr::If { .. } => {
                // Computed inputs of this kernel come from earlier kernels: a kernel boundary is
                // the only synchronization between work-groups.
                self.host_prepare(e)?;
                // A result that only re-indexes existing data is copied by one work-item per element.
                let parallel = self.contains_parallel(e) || self.is_view(e);
                self.kernel(e, parallel, |g| g.gen_into(e, dest))
            }
        }
    }

    /// A value whose type is `[T]L` with `L` a run-time length, stored with its length.
    pub(super) fn host_packed(&mut self, e: ExprId, dest: &Dest, at: ExprId) -> Result<()> {
        let n = self.len_of(e)?;
        let parallel = self.contains_parallel(e);
        let len_view = dest
            .len
            .clone()
            .ok_or_else(|| self.err(at, "internal: packed value without a length destination"))?;
        self.kernel(e, parallel, |g| {
            g.gen_into(
                e,
                &Dest {
                    view: dest.view.clone(),
                    len: None,
                    rows: false,
                },
            )?;
            let loc = len_view.write(&[]).map_err(|m| g.err(at, m.0))?;
            g.store_uniform(&loc, arith(&n), at)
        })
    }

    pub(super) fn host_bind(&mut self, letnode: ExprId, var: VarId, value: ExprId) -> Result<()> {
        let tv = self.info.ty(value).clone();
        if let Some(x) = self.info.unpacks.get(&Binder::Let(letnode)).cloned() {
            // A filter result: data and length in device memory.
            let elem = match &tv {
                Type::Exists(e) => self.c_type_of(e)?,
                Type::Scalar(_) | Type::Vector(..) | Type::Tuple(_) | Type::Array(..) | Type::Fun(..) => {
                    return Err(self.err(value, "internal: unpack of a non-existential"))
                }
            };
            let cap = self.capacity_len(value)?;
            let ty = Type::array(elem.clone(), cap.clone());
            let (_, data_view) = self
                .alloc("t", &ty, AddressSpace::Global, &[], Role::Temp)
                .map_err(|m| self.err(value, m))?;
            let (lb, len) = self
                .alloc("len", &Type::int(), AddressSpace::Global, &[], Role::TempLength)
                .map_err(|m| self.err(value, m))?;
            self.host(
                value,
                &Dest {
                    view: data_view.clone(),
                    len: Some(len),
                    rows: false,
                },
            )?;
            let len_expr = CExpr::var(&self.buf_ident(&self.mem.buffers[lb].name)).index(CExpr::Int(0));
            let id = self.names.size(&SizeKey(x.clone()));
            let c = id.to_string();
            self.caps.insert(c.clone(), cap.clone());
            self.device_lengths.insert(c.clone(), (id, len_expr));
            let origin = self.prog.span(self.strip_to(value));
            self.length_origins.insert(c.clone(), (origin, lb));
            self.lengths.insert(
                x,
                ArithExpr::var(&c, Range::new(ArithExpr::cst(0), Some(cap.add(&ArithExpr::cst(1))))),
            );
            self.bind(var, Bound::View(data_view));
            return Ok(());
        }
        if self.is_view(value) {
            let v = self.host_view(value)?;
            self.bind(var, v);
            return Ok(());
        }
        let ty = self.capacity_type(&self.cty(value)?, value)?;
        if let Type::Array(elem, n) = &ty {
            if let Type::Exists(_) = **elem {
                let row = self.c_type_of(&exist_elem_as_array(elem, ArithExpr::cst(0)))?;
                let row = match row {
                    Type::Array(t, _) => Type::array(*t, self.capacity_len_rows(value)?),
                    t @ Type::Scalar(_)
                    | t @ Type::Vector(..)
                    | t @ Type::Tuple(_)
                    | t @ Type::Exists(_)
                    | t @ Type::Fun(..) => t,
                };
                let inner = Type::array(row, n.clone());
                let (_, data) = self
                    .alloc("t", &inner, AddressSpace::Global, &[], Role::Temp)
                    .map_err(|m| self.err(value, m))?;
                let (_, lens) = self
                    .alloc(
                        "lens",
                        &Type::array(Type::int(), n.clone()),
                        AddressSpace::Global,
                        &[],
                        Role::TempLength,
                    )
                    .map_err(|m| self.err(value, m))?;
                self.host(
                    value,
                    &Dest {
                        view: data.clone(),
                        len: Some(lens.clone()),
                        rows: true,
                    },
                )?;
                self.bind(var, Bound::Rows { data, lens });
                return Ok(());
            }
        }
        // a tuple holding arrays is stored like an array: one buffer per component
        let stored = soa_components(&ty).is_some();
        match &ty {
            Type::Tuple(_) | Type::Array(..) if stored || matches!(ty, Type::Array(..)) => {
                let (_, data) = self
                    .alloc("t", &ty, AddressSpace::Global, &[], Role::Temp)
                    .map_err(|m| self.err(value, m))?;
                self.host(
                    value,
                    &Dest {
                        view: data.clone(),
                        len: None,
                        rows: false,
                    },
                )?;
                self.bind(var, Bound::View(data));
            }
            Type::Scalar(_) | Type::Vector(..) | Type::Tuple(_) | Type::Array(..) | Type::Exists(_) | Type::Fun(..) => {
                // A scalar computed at host level is recomputed where it is used.
                let v = self.host_view(value)?;
                self.bind(var, v);
            }
        }
        Ok(())
    }

    pub(super) fn host_view(&mut self, e: ExprId) -> Result<Bound> {
        // Views at host level are built without a kernel; scalar code is not allowed to emit
        // statements here, which `value` guarantees by not materializing anything.
        let saved = self.k.take();
        self.k = Some(KernelCx::new(Level::Item));
        let r = self.value(e);
        let k = std::mem::replace(&mut self.k, saved).expect("set above");
        let v = r?;
        if k.emitted > 0 {
            return Err(self.err(
                e,
                "a scalar computation outside any map needs statements; compute it inside the map that uses it",
            ));
        }
        Ok(Bound::View(v))
    }

    /// Materializes, each by its own kernel(s), the computed data arguments of the top-level
    /// computation `e` (looking through layout primitives).
    pub(super) fn host_prepare(&mut self, e: ExprId) -> Result<()> {
        let args: Vec<ExprId> = match self.prog.expr(e) {
            Expr::Prim { args, .. } | Expr::Op { args, .. } => args
                .iter()
                .copied()
                .filter(|a| !matches!(self.prog.expr(*a), Expr::Lambda { .. }))
                .collect(),
            Expr::If { cond, then, els } => vec![*cond, *then, *els],
            Expr::Var(_) | Expr::Lit(_) | Expr::Lambda { .. } | Expr::Let { .. } | Expr::Pack(_) => vec![],
        };
        for a in args {
            if self.pre.contains_key(&a) {
                continue;
            }
            let computes = match self.prog.expr(a) {
                Expr::Prim { prim: Prim::Map(_), .. } => self.layout_map(a).is_none(),
                Expr::Prim {
                    prim: Prim::Reduce(_) | Prim::Iterate(_) | Prim::Scan(_),
                    ..
                } => true,
                Expr::Prim {
                    prim: Prim::To(_),
                    args,
                } => !self.is_view(args[0]),
                Expr::Var(_)
                | Expr::Lit(_)
                | Expr::Lambda { .. }
                | Expr::Prim { .. }
                | Expr::Op { .. }
                | Expr::If { .. }
                | Expr::Let { .. }
                | Expr::Pack(_) => false,
            };
            let ty = self.cty(a)?;
            if computes && matches!(ty, Type::Array(..)) && !ty.has_existential() {
                let ty = self.capacity_type(&ty, a)?;
                let (_, view) = self
                    .alloc("t", &ty, AddressSpace::Global, &[], Role::Temp)
                    .map_err(|m| self.err(a, m))?;
                self.host(
                    a,
                    &Dest {
                        view: view.clone(),
                        len: None,
                        rows: false,
                    },
                )?;
                self.pre.insert(a, view);
            } else if !computes {
                self.host_prepare(a)?;
            }
        }
        Ok(())
    }

    pub(super) fn contains_lcl(&self, e: ExprId) -> bool {
        matches!(
            self.prog.expr(e),
            Expr::Prim {
                prim: Prim::Map(MapKind::Lcl(_)),
                ..
            }
        ) || self.prog.children(e).iter().any(|c| self.contains_lcl(*c))
    }

    pub(super) fn contains_parallel(&self, e: ExprId) -> bool {
        if self.pre.contains_key(&e) {
            return false;
        }
        match self.prog.expr(e) {
            Expr::Prim {
                prim: Prim::Map(_),
                args,
            } if self.layout_map(e).is_some() => self.contains_parallel(args[1]),
            Expr::Prim {
                prim: Prim::Map(k),
                args,
            } => is_parallel_map(*k) || *k == MapKind::Plain || args.iter().any(|a| self.contains_parallel(*a)),
            Expr::Lambda { .. } => false,
            Expr::Var(_)
            | Expr::Lit(_)
            | Expr::Prim { .. }
            | Expr::Op { .. }
            | Expr::If { .. }
            | Expr::Let { .. }
            | Expr::Pack(_) => self.prog.children(e).iter().any(|c| self.contains_parallel(*c)),
        }
    }

    /// Runs `f` to generate the body of a new kernel, then assembles it.
    pub(super) fn kernel(&mut self, e: ExprId, parallel: bool, f: impl FnOnce(&mut Self) -> Result<()>) -> Result<()> {
        if self.k.is_some() {
            return Err(self.err(e, "internal: nested kernel"));
        }
        let mut cx = KernelCx::new(if parallel { Level::Top } else { Level::Item });
        // A work-group is as wide as its widest `mapLcl` of known length in each dimension, so
        // the maps the tile sizes shape run one index per work-item and only the others stride.
        for (d, l) in self.local_hints(e).into_iter().enumerate() {
            cx.local[d] = l;
        }
        // buffers allocated from here on are materializations inside this kernel
        cx.first_buffer = Some(self.mem.buffers.len());
        self.k = Some(cx);
        let r = f(self);
        let k = self.k.take().expect("set above");
        r?;
        self.finish_kernel(k, e)
    }

    pub(super) fn local_hints(&self, e: ExprId) -> [Option<usize>; 3] {
        // [computing maps, copies] per dimension: the widest known length of each
        let mut widest = [[None; 3]; 2];
        let mut stack = vec![e];
        while let Some(x) = stack.pop() {
            if let Expr::Prim {
                prim: Prim::Map(MapKind::Lcl(d)),
                args,
            } = self.prog.expr(x)
            {
                if let Type::Array(_, n) = self.info.ty(args[1]) {
                    if let Some(c) = n.as_cst().filter(|c| (1..=1024).contains(c)) {
                        let kind = usize::from(self.is_copy_fn(args[0]));
                        let h: &mut Option<usize> = &mut widest[kind][usize::from(*d).min(2)];
                        *h = Some(h.unwrap_or(0).max(c as usize));
                    }
                }
            }
            stack.extend(self.prog.children(x));
        }
        // Copies (staging into local memory) stride over any work-group shape, so the computing
        // maps decide it; a dimension with only copies takes their width.
        let [mut hints, copies] = widest;
        for (h, c) in hints.iter_mut().zip(copies) {
            *h = h.or(c);
        }
        // Within the work-group limit, the higher dimensions give way first (dimension 0 stays
        // wide for coalesced accesses); their maps then stride.
        for d in (0..3).rev() {
            let others: usize = (0..3).filter(|&o| o != d).filter_map(|o| hints[o]).product();
            if let Some(h) = &mut hints[d] {
                *h = (*h).min(self.wg_limit.lcl_room(d, others));
            }
        }
        hints
    }

    /// `λx. x`, or `λr. mapX (λx. x) r` and so on: a function that only copies its argument.
    pub(super) fn is_copy_fn(&self, f: ExprId) -> bool {
        let Expr::Lambda { params, body } = self.prog.expr(f) else {
            return false;
        };
        match self.prog.expr(*body) {
            Expr::Var(v) => params.len() == 1 && *v == params[0],
            Expr::Prim {
                prim: Prim::Map(_),
                args,
            } => {
                matches!(self.prog.expr(args[1]), Expr::Var(v) if params.len() == 1 && *v == params[0])
                    && self.is_copy_fn(args[0])
            }
            Expr::Lit(_)
            | Expr::Lambda { .. }
            | Expr::Prim { .. }
            | Expr::Op { .. }
            | Expr::If { .. }
            | Expr::Let { .. }
            | Expr::Pack(_) => false,
        }
    }

    pub(super) fn finish_kernel(&mut self, mut k: KernelCx, e: ExprId) -> Result<()> {
        let name = self.names.exact(&format!("KERNEL_{}", self.kernels.len()));
        let root = k
            .stack
            .pop()
            .filter(|f| k.stack.is_empty() && matches!(f.head, Head::Root));
        let Some(root) = root else {
            return Err(self.err(e, "internal: a statement was left open"));
        };
        let mut body = std::mem::take(&mut k.decls);
        let used = ast::idents(&root.body);
        for (c, (id, read)) in &self.device_lengths {
            if used.contains(c.as_str()) {
                body.push(Stmt::decl(CType::INT, id, read.clone()));
            }
        }
        let checks = self.length_checks_in(&used);
        body.extend(checks);
        body.extend(root.body);
        let private: Vec<Ident> = (self.mem.buffers.iter())
            .filter(|b| b.space == AddressSpace::Private)
            .map(|b| self.buf_ident(&b.name))
            .collect();
        vector_locals(&mut body);
        for a in &private {
            scalarize(&mut body, a, &mut self.names);
        }
        let used = ast::idents(&body);
        let (params, args) = self.kernel_params(&used)?;
        let internal: BTreeSet<String> = (self.mem.buffers.iter().skip(k.first_buffer.unwrap_or(usize::MAX)))
            .filter(|b| b.space == AddressSpace::Global && b.role == Role::Temp)
            .map(|b| self.buf_ident(&b.name).to_string())
            .collect();
        lanes::drop_dead_lanes(&mut body, &params, &internal);
        inline::inline_temporaries(&mut body, &params);
        let (global, local) = self.launch_sizes(&k, e)?;
        // Known work-group sizes are declared, so the driver can compile for them.
        let work_group = local.as_ref().map(|l| {
            [
                l.first().copied().unwrap_or(1),
                l.get(1).copied().unwrap_or(1),
                l.get(2).copied().unwrap_or(1),
            ]
        });
        let kernel = ast::Kernel {
            name: name.clone(),
            work_group,
            params,
            body,
        };
        let text = print::kernel_text(&kernel);
        self.source.push_str(&text);
        self.kernels.push(Kernel {
            name: name.to_string(),
            args,
            global,
            local,
            notes: std::mem::take(&mut k.notes),
        });
        Ok(())
    }

    pub(super) fn launch_sizes(&self, k: &KernelCx, e: ExprId) -> Result<(Vec<ArithExpr>, Option<Vec<usize>>)> {
        if k.wrg && k.glb {
            return Err(self.err(e, "a kernel cannot mix mapGlb with mapWrg/mapLcl"));
        }
        let dims = (0..3).rev().find(|d| k.global[*d].is_some()).map_or(1, |d| d + 1);
        let mut global = vec![];
        let mut local = vec![];
        for (d, l) in self.tuned_glb_local(k, dims).into_iter().enumerate() {
            let g = k.global[d].clone().unwrap_or_else(|| ArithExpr::cst(1));
            let g = self.capacity(&g);
            let lc = ArithExpr::cst(l as i64);
            if k.wrg {
                global.push(g.mul(&lc));
            } else if k.glb {
                global.push(g.add(&ArithExpr::cst(l as i64 - 1)).div(&lc).mul(&lc));
            } else {
                global.push(g);
            }
            local.push(l);
        }
        Ok((global, (k.wrg || k.glb).then_some(local)))
    }

    /// The work-group of a kernel per dimension: its own, or for a `mapGlb` kernel the tuned size
    /// ([`super::EmitOptions::glb_work_group`]) where that is safe. `mapGlb` decided its bounds
    /// check with its default size: a tuned size that divides it launches no work-item the check
    /// does not cover (a run-time length is always checked); any other size must divide a
    /// constant launch exactly. Groups beyond the device's limits keep the defaults.
    fn tuned_glb_local(&self, k: &KernelCx, dims: usize) -> Vec<usize> {
        let own: Vec<usize> = (0..dims).map(|d| k.local[d].unwrap_or(1)).collect();
        if !k.glb || k.wrg || self.glb_work_group.is_empty() {
            return own;
        }
        let tuned: Vec<usize> = own
            .iter()
            .enumerate()
            .map(|(d, &l)| match self.glb_work_group.get(d) {
                Some(&p) if p >= 1 => {
                    let exact = k.global[d]
                        .as_ref()
                        .map(|g| self.capacity(g))
                        .and_then(|g| g.as_cst())
                        .is_some_and(|c| c % p as i64 == 0);
                    if l % p == 0 || exact {
                        p
                    } else {
                        l
                    }
                }
                _ => l,
            })
            .collect();
        if self.wg_limit.admits(&tuned) {
            tuned
        } else {
            own
        }
    }

    /// Kernel parameters in ABI order, for the names the kernel text uses.
    /// Kernel parameters in ABI order, for the identifiers the kernel body uses.
    pub(super) fn kernel_params(&mut self, used: &BTreeSet<String>) -> Result<(Vec<ast::Param>, Vec<KernelArg>)> {
        let mut params = vec![];
        let mut args = vec![];
        let mut bufs: Vec<(usize, Role)> = vec![];
        for (i, b) in self.mem.buffers.iter().enumerate() {
            if b.space == AddressSpace::Global && used.contains(&b.name) {
                bufs.push((i, b.role));
            }
        }
        let rank = |r: Role| match r {
            Role::Input(k) => (0, k),
            Role::Output => (1, 0),
            Role::OutputLength => (2, 0),
            Role::Temp | Role::TempLength | Role::Scratch | Role::InputLength(_) => (3, 0),
        };
        let ptr = |space, elem, is_const, restrict| CType::Ptr {
            space,
            elem: Box::new(elem),
            is_const,
            restrict,
        };
        // Inputs and scalar parameters interleave in parameter order.
        let mut inputs: Vec<(usize, ast::Param, KernelArg)> = vec![];
        for (k, p) in self.prog.params.iter().enumerate() {
            let name = self.param_names[k].clone();
            if !used.contains(name.as_str()) {
                continue;
            }
            match &p.ty {
                Type::Scalar(s) => {
                    let ty = self.ctype(&Type::Scalar(*s))?;
                    inputs.push((k, ast::Param { ty, name }, KernelArg::Param(k)))
                }
                Type::Vector(..) | Type::Tuple(_) | Type::Array(..) | Type::Exists(_) | Type::Fun(..) => {
                    let (i, _) = bufs
                        .iter()
                        .find(|(i, _)| self.mem.buffers[*i].name == name.as_str())
                        .copied()
                        .expect("input buffer registered");
                    let elem = self.mem.buffers[i].elem.clone();
                    let t = self.buffer_ctype(&elem)?;
                    let ty = ptr(AddressSpace::Global, t, true, true);
                    inputs.push((k, ast::Param { ty, name }, KernelArg::Buffer(i)));
                }
            }
        }
        inputs.sort_by_key(|(k, _, _)| *k);
        for (_, p, a) in inputs {
            params.push(p);
            args.push(a);
        }
        let mut rest: Vec<(usize, Role)> = bufs.into_iter().filter(|(_, r)| !matches!(r, Role::Input(_))).collect();
        rest.sort_by_key(|(i, r)| (rank(*r), *i));
        for (i, _) in rest {
            let elem = self.mem.buffers[i].elem.clone();
            let t = self.buffer_ctype(&elem)?;
            // Every buffer is passed once, so no two pointers alias.
            let name = self.buf_ident(&self.mem.buffers[i].name);
            params.push(ast::Param {
                ty: ptr(AddressSpace::Global, t, false, true),
                name,
            });
            args.push(KernelArg::Buffer(i));
        }
        let dynamic_local: Vec<(usize, Type, String)> = (self.mem.buffers.iter().enumerate())
            .filter(|(_, b)| b.space == AddressSpace::Local && b.len.as_cst().is_none() && used.contains(&b.name))
            .map(|(i, b)| (i, b.elem.clone(), b.name.clone()))
            .collect();
        for (i, elem, name) in dynamic_local {
            let t = self.buffer_ctype(&elem)?;
            params.push(ast::Param {
                ty: ptr(AddressSpace::Local, t, false, true),
                name: self.buf_ident(&name),
            });
            args.push(KernelArg::Local(i));
        }
        if used.contains(self.error_flag.as_str()) {
            params.push(ast::Param {
                ty: ptr(AddressSpace::Global, CType::INT, false, false),
                name: self.error_flag.clone(),
            });
            args.push(KernelArg::ErrorFlag);
        }
        let mut sizes: Vec<&(String, Ident)> = self.size_names.iter().collect();
        sizes.sort();
        for (_, c) in sizes {
            if used.contains(c.as_str()) {
                params.push(ast::Param {
                    ty: CType::INT,
                    name: c.clone(),
                });
                args.push(KernelArg::Size(c.to_string()));
            }
        }
        Ok((params, args))
    }
}

#[cfg(test)]
mod tests {
    use crate::KernelArg;

    fn plan(src: &str) -> crate::KernelPlan {
        let prog = ir::parse(src).expect("parses");
        let info = typeck::infer(&prog).expect("types");
        crate::emit(&prog, &info).expect("generates")
    }

    fn locals(src: &str, wg: &[usize]) -> Vec<Option<Vec<usize>>> {
        let prog = ir::parse(src).expect("parses");
        let info = typeck::infer(&prog).expect("types");
        let opts = crate::EmitOptions {
            glb_work_group: wg.to_vec(),
            ..crate::EmitOptions::default()
        };
        let p = crate::emit_with(&prog, &info, &opts).expect("generates");
        p.kernels.iter().map(|k| k.local.clone()).collect()
    }

    /// A tuned `mapGlb` work-group size is taken only where every work-item it launches is
    /// covered: it divides the default (the bounds check was decided with it), or it divides a
    /// constant launch exactly. A `mapWrg` kernel keeps its own.
    #[test]
    fn tuned_work_group_sizes_apply_only_where_safe() {
        let run_time = "(lift (N) ((array-type float N)) (lambda (xs) (toGlobal (mapGlb (lambda (x) (* x 2.0f)) xs))))";
        assert_eq!(locals(run_time, &[]), [Some(vec![256])]);
        assert_eq!(locals(run_time, &[64]), [Some(vec![64])]);
        // 512 launches work-items past the check that 256 decided on
        assert_eq!(locals(run_time, &[512]), [Some(vec![256])]);
        let rows = "(lift () ((array-type (array-type float 8) 1024)) (lambda (xs)                     (toGlobal (mapGlb1 (lambda (r) (mapGlb (lambda (x) (* x 2.0f)) r)) xs))))";
        assert_eq!(locals(rows, &[]), [Some(vec![256, 1])]);
        // dimension 0 has 8 items: 8 divides it exactly, 1 × 16 rows divide 1024
        assert_eq!(locals(rows, &[8, 16]), [Some(vec![8, 16])]);
        // 3 divides neither 1024 nor the default 1: dimension 1 keeps 1
        assert_eq!(locals(rows, &[8, 3]), [Some(vec![8, 1])]);
        // beyond the largest work-group: the defaults
        assert_eq!(locals(rows, &[8, 256]), [Some(vec![256, 1])]);
        let groups = "(lift () ((array-type float 1024)) (lambda (xs) (join (mapWrg (lambda (c)                       (toGlobal (mapLcl (lambda (x) (* x 2.0f)) c))) (split #64 xs)))))";
        assert_eq!(locals(groups, &[32]), [Some(vec![64])]);
    }

    /// With a device's limits (as NVIDIA's: 1024 in all, 64 along dimension 2; or a device of
    /// 64 work-items) every work-group fits them: the maps stride over the rest, and tuned sizes
    /// beyond them are not taken.
    #[test]
    fn work_groups_stay_within_the_devices_limits() {
        let with = |src: &str, wg: &[usize], limit: crate::WorkGroupLimit| {
            let prog = ir::parse(src).expect("parses");
            let info = typeck::infer(&prog).expect("types");
            let opts = crate::EmitOptions {
                glb_work_group: wg.to_vec(),
                work_group_limit: limit,
                ..crate::EmitOptions::default()
            };
            let p = crate::emit_with(&prog, &info, &opts).expect("generates");
            p.kernels.iter().map(|k| k.local.clone()).collect::<Vec<_>>()
        };
        let small = || crate::WorkGroupLimit::new(64, &[64, 64, 64]);
        let glb = "(lift (N) ((array-type float N)) (lambda (xs) (toGlobal (mapGlb (lambda (x) (* x 2.0f)) xs))))";
        assert_eq!(with(glb, &[], small()), [Some(vec![64])]);
        assert_eq!(with(glb, &[128], small()), [Some(vec![64])]);
        let lcl = "(lift () ((array-type float 1024)) (lambda (xs) (join (mapWrg (lambda (c) \
                   (toGlobal (mapLcl (lambda (x) (* x 2.0f)) c))) (split #128 xs)))))";
        assert_eq!(with(lcl, &[], small()), [Some(vec![64])]);
        // rows in dimension 1, columns in dimension 0, as `examples/maplcl_72x72.lisp`
        let tiles = "(lift (N) ((array-type (array-type float 72) N)) (lambda (xs) \
                     (join (join (join (mapWrg1 (lambda (band) (mapWrg (lambda (tile) \
                     (mapLcl1 (lambda (row) (mapLcl (lambda (x) (* x 2.0f)) row)) tile)) band)) \
                     (split #1 (split #72 xs))))))))";
        // at most `LCL_LOCAL_MAX` (256) work-items in all, as NVIDIA's driver launches them
        assert_eq!(with(tiles, &[], crate::WorkGroupLimit::default()), [Some(vec![72, 3])]);
        let narrow = crate::WorkGroupLimit::new(1024, &[1024, 2, 2]);
        assert_eq!(with(tiles, &[], narrow), [Some(vec![72, 2])]);
        assert_eq!(with(tiles, &[], small()), [Some(vec![64, 1])]);
    }

    #[test]
    fn kernels_take_only_what_their_body_names() {
        // `ys` and the size `M` are parameters of the program but no kernel reads them.
        let p = plan(
            "(lift (N M) ((array-type float N) (array-type float M) float)
               (lambda (xs ys a) (toGlobal (mapGlb (lambda (x) (* x a)) xs))))",
        );
        assert_eq!(p.kernels.len(), 1);
        let names: Vec<String> = p.kernels[0]
            .args
            .iter()
            .map(|a| match a {
                KernelArg::Buffer(b) | KernelArg::Local(b) => p.memory.buffers[*b].name.clone(),
                KernelArg::Param(k) => format!("param {k}"),
                KernelArg::Size(s) => s.clone(),
                KernelArg::ErrorFlag => "error flag".into(),
            })
            .collect();
        assert_eq!(names, ["v_xs", "param 2", "v_gout_1", "v_N"]);
        assert!(p.source.contains("float v_a,"), "{}", p.source);
    }

    #[test]
    fn user_names_never_collide_with_generated_ones() {
        // a parameter spelled like the output buffer and one like a loop index
        let p = plan(
            "(lift (N) ((array-type float N) (array-type float N))
               (lambda (gout_1 i_1) (toGlobal (mapGlb (lambda (v) (+ (get #0 v) (get #1 v))) (zip gout_1 i_1)))))",
        );
        let params: Vec<&str> = p.memory.buffers.iter().map(|b| b.name.as_str()).collect();
        let mut unique = params.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(params.len(), unique.len(), "{params:?}");
        assert!(
            p.source.contains("v_gout_2[v_i_2] = v_gout_1[v_i_2] + v_i_1[v_i_2];"),
            "{}",
            p.source
        );
    }
}
