//! Host level: the values a program computes between kernels (one kernel each), host sections
//! and their parts, bindings of filter results, and the entry into each kernel.

use super::*;

impl Validator<'_> {
    /// A host-level value written to a destination seen through `vec_dest` (see [`Cx`]).
    pub(super) fn host(&mut self, e: ExprId, vec_dest: Option<ExprId>) {
        // A host section packed by its binder (a loop over an unpacked filter result) keeps
        // its length on the device by itself (`lift::host`).
        if self.info.packs.contains(&e) && self.section_parts(e).is_none() {
            // a value packed with its run-time length is one kernel, computed arguments included
            self.in_kernel(e, |v| {
                let cx = Cx {
                    level: if v.contains_parallel(e) {
                        Level::Top
                    } else {
                        Level::Item
                    },
                    active: vec![],
                    branch: false,
                    vec_dest,
                    unrolled: 1,
                };
                v.into(e, &cx);
            });
            return;
        }
        self.section_values(e);
        if let Some(parts) = self.section_parts(e) {
            for p in parts {
                self.section_part(p);
            }
            return;
        }
        match self.prog.expr(e).clone() {
            Expr::Let { var, value, body, .. } => {
                // A `bool` read only by host `if`s is computed like their conditions.
                if ir::host::only_section_conditions(self.prog, var, body, |i| self.info.host.section(i).is_some()) {
                    self.section_part(value);
                } else {
                    self.host_bind(value);
                }
                if self.is_rows(value) && !self.is_view(value) {
                    self.rows_only_mapped(var, body);
                }
                self.host(body, vec_dest);
            }
            Expr::Pack(inner) => self.host(inner, vec_dest),
            Expr::Prim { prim, args } => match prim {
                Prim::To(_) => self.host(args[0], vec_dest),
                Prim::Join | Prim::Split(_) | Prim::Transpose | Prim::AsScalar | Prim::AsVector(_) => {
                    let vec_dest = self.through(e, vec_dest);
                    self.host(args[0], vec_dest)
                }
                Prim::Filter(FilterKind::Glb | FilterKind::Plain) => {
                    // a counting and a scattering kernel over the input; the predicate is one
                    // work-item's code
                    self.prepare(args[1]);
                    self.in_kernel(e, |v| {
                        let cx = Cx {
                            level: Level::Item,
                            active: vec![MapKind::Glb(0)],
                            branch: false,
                            vec_dest: None,
                            unrolled: 1,
                        };
                        v.func(args[0], &cx);
                        v.value(args[1], &cx);
                    });
                }
                Prim::Scan(ScanKind::Glb | ScanKind::Plain) => {
                    // one kernel over the whole array (tiles ordered by a look-back); the
                    // operator and a map fused before it are one work-item's code
                    self.prepare(args[2]);
                    if let Some(t @ Type::Tuple(_)) = self.ty(args[1]) {
                        let t = t.to_string();
                        self.err(e, format!("a scan of {t} over the whole array is not supported yet: its accumulator crosses work-groups as a scalar or a vector"));
                    }
                    self.in_kernel(e, |v| {
                        let cx = Cx {
                            level: Level::Item,
                            active: vec![MapKind::Glb(0)],
                            branch: false,
                            vec_dest: None,
                            unrolled: 1,
                        };
                        v.value(args[1], &cx);
                        v.func(args[0], &cx);
                        v.value(args[2], &cx);
                    });
                }
                // every row scanned across the device in one launch
                Prim::Map(MapKind::Glb(0) | MapKind::Plain) if self.rows_scan(args[0]).is_some() => {
                    let scan = self.rows_scan(args[0]).expect("checked");
                    self.prepare(e);
                    self.in_kernel(e, |v| {
                        let cx = Cx {
                            level: Level::Item,
                            active: vec![MapKind::Glb(0)],
                            branch: false,
                            vec_dest: None,
                            unrolled: 1,
                        };
                        if let Expr::Prim { args: sargs, .. } = v.prog.expr(scan).clone() {
                            v.value(sargs[1], &cx);
                            v.func(sargs[0], &cx);
                            v.value(sargs[2], &cx);
                        }
                    });
                }
                _ => self.kernel(e, vec_dest),
            },
            // a tuple holding arrays: each component computed like a result of its own
            Expr::Op { op: Op::Tuple, args } if self.ty(e).is_some_and(tuple_with_array) => {
                for a in args {
                    self.host(a, None);
                }
            }
            _ => self.kernel(e, vec_dest),
        }
    }

    /// The `scanGlb` that is the body of the function `f` of a map at host level (each row of
    /// the map's input scanned across the device), reading its row or a scalar map of it.
    pub(super) fn rows_scan(&self, f: ExprId) -> Option<ExprId> {
        let Expr::Lambda { params, body } = self.prog.expr(f) else {
            return None;
        };
        let mut scan = *body;
        while let Expr::Prim {
            prim: Prim::To(_),
            args,
        } = self.prog.expr(scan)
        {
            scan = args[0];
        }
        let Expr::Prim {
            prim: Prim::Scan(ScanKind::Glb),
            args,
        } = self.prog.expr(scan)
        else {
            return None;
        };
        let read = match self.prog.expr(args[2]) {
            Expr::Prim {
                prim: Prim::Map(_),
                args: m,
            } if !self.layout_map(args[2])
                && self
                    .lambda(m[0])
                    .is_some_and(|b| matches!(self.ty(b), Some(Type::Scalar(_))) && !self.contains_parallel(b)) =>
            {
                m[1]
            }
            _ => args[2],
        };
        (params.len() == 1 && self.is_view(read)).then_some(scan)
    }

    /// The destination of the argument of a layout primitive `e` written through: the `vec_dest`
    /// of that argument, after reporting a re-indexing between a vector view and its writes.
    pub(super) fn through(&mut self, e: ExprId, vec_dest: Option<ExprId>) -> Option<ExprId> {
        let vector = matches!(
            self.prog.expr(e),
            Expr::Prim {
                prim: Prim::AsScalar | Prim::AsVector(_),
                ..
            }
        );
        if let Some(v) = vec_dest {
            let (outer, name) = match self.prog.expr(v) {
                Expr::Prim { prim, .. } => (prim.name(), self.prim_name(e)),
                _ => (String::new(), String::new()),
            };
            self.err(
                e,
                format!("the result of `{name}` cannot be written through the `{outer}` around it: vector stores need `{outer}` directly around the computation that writes the elements; apply `{name}` to the inputs instead, or `{outer}` inside it"),
            );
            return None;
        }
        vector.then_some(e)
    }

    /// The parts of a host section (the type checker's `ir::host::HostPlan`: a host loop, an
    /// `if` over kernels or arrays): they run on the host, and each part is host level (the
    /// driver makes kernels of each on its own).
    pub(super) fn section_parts(&self, e: ExprId) -> Option<Vec<ExprId>> {
        self.info.host.section(e)?;
        match self.prog.expr(e) {
            Expr::Prim { args, .. } => Some(
                args.iter()
                    .map(|a| match self.prog.expr(*a) {
                        Expr::Lambda { body, .. } => *body,
                        _ => *a,
                    })
                    .collect(),
            ),
            Expr::If { cond, then, els } => Some(vec![*cond, *then, *els]),
            _ => None,
        }
    }

    /// Values that cross a host section live in device buffers: a filter result is one with
    /// its length in a buffer of its own, but arrays or tuples of them bound by `let` cannot
    /// be one yet.
    pub(super) fn section_values(&mut self, e: ExprId) {
        let exist = |v: &Self, x: ExprId| match v.ty(x) {
            Some(Type::Exists(elem)) => elem.has_existential(),
            Some(t) => t.has_existential(),
            None => false,
        };
        if !self.has_section(e) {
            return;
        }
        // Arrays or tuples of filter results computed by a host program's units are kept on
        // the host (the driver's `host::HostProgram::direct`), read back as its value; the
        // driver refuses them where a kernel or a loop reads them again.
        if let Expr::Let { value, .. } = self.prog.expr(e) {
            if exist(self, *value) {
                self.err(
                    *value,
                    "arrays or tuples of filter results bound at host level and used across a host section are not supported yet",
                );
            }
        }
    }

    /// A part of a host section. A `bool` condition that kernels compute runs as a one-element
    /// buffer (the driver binds each array it reads outside the one work-item computing it):
    /// those arrays are host-level values; the unit is validated again on its own.
    pub(super) fn section_part(&mut self, p: ExprId) {
        if self.ty(p) != Some(&Type::bool()) || !self.computes(p) {
            return self.host_bind(p);
        }
        let mut work = vec![p];
        while let Some(x) = work.pop() {
            match self.ty(x) {
                Some(Type::Array(..) | Type::Exists(_)) if self.computes(x) => self.host_bind(x),
                _ if matches!(self.prog.expr(x), Expr::Lambda { .. }) => {}
                _ => work.extend(self.prog.children(x)),
            }
        }
    }

    pub(super) fn has_section(&self, e: ExprId) -> bool {
        self.info.host.holds_section(e)
    }

    pub(super) fn prim_name(&self, e: ExprId) -> String {
        match self.prog.expr(e) {
            Expr::Prim { prim, .. } => prim.name(),
            _ => "this expression".into(),
        }
    }

    pub(super) fn host_bind(&mut self, value: ExprId) {
        let stored = self.is_array(value) || self.ty(value).is_some_and(tuple_with_array);
        if !stored && self.computes(value) {
            self.err(
                value,
                "a scalar computation outside any map needs statements; compute it inside the map that uses it",
            );
            return;
        }
        if self.is_view(value) {
            // bound without a kernel, as an expression that reads its inputs
            return;
        }
        self.host(value, None);
    }

    /// Whether `e` is an array of filter results.
    pub(super) fn is_rows(&self, e: ExprId) -> bool {
        matches!(self.ty(e), Some(Type::Array(el, _)) if matches!(**el, Type::Exists(_)))
    }

    /// An array of filter results bound at host level is a buffer of rows and one of their
    /// lengths: a map unpacks each row with its length, but no other use knows the lengths.
    pub(super) fn rows_only_mapped(&mut self, var: ir::VarId, body: ExprId) {
        let mut stack = vec![(body, false)];
        while let Some((e, mapped)) = stack.pop() {
            match self.prog.expr(e) {
                Expr::Var(v) if *v == var && !mapped => self.err(
                    e,
                    "this array of filter results can only be mapped over here (each row with its own length); to use it otherwise, compute it inside the map that uses it",
                ),
                Expr::Prim {
                    prim: Prim::Map(_),
                    args,
                } => {
                    stack.push((args[0], false));
                    stack.push((args[1], true));
                }
                _ => stack.extend(self.prog.children(e).into_iter().map(|c| (c, false))),
            }
        }
    }

    /// Computed array arguments of a top-level computation get kernels of their own first.
    pub(super) fn prepare(&mut self, e: ExprId) {
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
            if self.pre.contains(&a) {
                continue;
            }
            let computes = match self.prog.expr(a) {
                Expr::Prim { prim: Prim::Map(_), .. } => !self.layout_map(a),
                Expr::Prim {
                    prim: Prim::Reduce(_) | Prim::Iterate(_) | Prim::Scan(_),
                    ..
                } => true,
                // a host section's value is computed before the kernel that reads it
                _ if self.section_parts(a).is_some() => true,
                Expr::Prim {
                    prim: Prim::To(_),
                    args,
                } => !self.is_view(args[0]),
                _ => false,
            };
            let plain_array =
                matches!(self.ty(a), Some(Type::Array(..))) && !self.ty(a).is_some_and(Type::has_existential);
            if computes && plain_array {
                self.host(a, None);
                self.pre.insert(a);
            } else if !computes {
                self.prepare(a);
            }
        }
    }

    pub(super) fn kernel(&mut self, e: ExprId, vec_dest: Option<ExprId>) {
        self.prepare(e);
        let level = if self.contains_parallel(e) || self.is_view(e) {
            Level::Top
        } else {
            Level::Item
        };
        self.in_kernel(e, |v| {
            let cx = Cx {
                level,
                active: vec![],
                branch: false,
                vec_dest,
                unrolled: 1,
            };
            v.into(e, &cx);
        });
    }

    pub(super) fn in_kernel(&mut self, e: ExprId, f: impl FnOnce(&mut Self)) {
        let saved = self.kernel.replace(Kernel::default());
        f(self);
        let k = std::mem::replace(&mut self.kernel, saved).unwrap_or_default();
        if k.mixed && !k.misplaced {
            let at = k.wrg.or(k.glb).unwrap_or(e);
            self.err(at, "a kernel cannot mix mapGlb with mapWrg/mapLcl");
        }
    }

    // ----- kernel code -----
}
