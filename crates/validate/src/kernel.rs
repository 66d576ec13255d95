//! Inside a kernel: the execution levels (top, group, item), work-group writes and copies,
//! address spaces of temporaries, private arrays' sizes, and the nesting of maps per dimension.

use super::*;

impl Validator<'_> {
    /// `e` computed into a destination (a buffer, or the enclosing map's element).
    pub(super) fn into(&mut self, e: ExprId, cx: &Cx) {
        if self.pre.contains(&e) {
            return;
        }
        match self.prog.expr(e).clone() {
            // `let k = v in layout(k)`: `v` is computed straight into the destination seen
            // through the layout
            Expr::Let { var, value, body, .. }
                if !self.info.unpacks.contains_key(&typeck::Binder::Let(e)) && self.is_layout_of_var(body, var) =>
            {
                let mut cur = body;
                let mut cx = cx.clone();
                while let Expr::Prim { prim, args } = self.prog.expr(cur) {
                    if !matches!(prim, Prim::To(_)) {
                        cx.vec_dest = self.through(cur, cx.vec_dest);
                    }
                    cur = args[0];
                }
                self.into(value, &cx);
            }
            Expr::Let { value, body, .. } => {
                self.value(value, cx);
                self.into(body, cx);
            }
            Expr::Pack(inner) => self.into(inner, cx),
            Expr::Prim { prim, args } => match prim {
                // computed straight into the destination, which decides the address space
                Prim::To(_) => self.into(args[0], cx),
                Prim::Join | Prim::Split(_) | Prim::Transpose | Prim::AsScalar | Prim::AsVector(_) => {
                    let vec_dest = self.through(e, cx.vec_dest);
                    self.into(args[0], &Cx { vec_dest, ..cx.clone() })
                }
                Prim::Map(_) if self.writable_layout_map(e) => {
                    let vec_dest = self.through(e, cx.vec_dest);
                    self.into(args[1], &Cx { vec_dest, ..cx.clone() })
                }
                Prim::Map(kind) => self.map(e, kind, args[0], args[1], cx),
                Prim::Reduce(kind) => self.reduce(e, kind, args[0], args[1], args[2], cx),
                Prim::Filter(FilterKind::Glb) => self.err(
                    e,
                    "`filterGlb` needs several kernels, so it must be at the top level of the program (bind its result with let/unpack), not inside a map",
                ),
                Prim::Scan(ScanKind::Glb) => self.err(
                    e,
                    "`scanGlb` orders the work-groups of its own kernel, so it must be at the top level of the program, not inside a map",
                ),
                // one work-item's loop: every element written by it
                Prim::Scan(ScanKind::Seq | ScanKind::Plain) => {
                    self.group_write(e, cx);
                    self.value(args[1], cx);
                    self.value(args[2], cx);
                    self.func(args[0], &Cx { vec_dest: None, ..cx.clone() });
                }
                Prim::Filter(FilterKind::Seq | FilterKind::Plain) => {
                    self.group_write(e, cx);
                    self.func(args[0], &Cx { level: Level::Item, ..cx.clone() });
                    self.value(args[1], cx);
                }
                Prim::Iterate(_) | Prim::IterateUntil(_) if self.is_work_item_loop(e) => self.work_item_loop(e, cx),
                Prim::Iterate(k) => {
                    if k.as_cst().is_some_and(|k| k > typeck::MAX_ITERATE) {
                        self.err(
                            e,
                            format!(
                                "`iterate` is unrolled in generated code and limited to {} steps",
                                typeck::MAX_ITERATE
                            ),
                        );
                    }
                    self.iterate_steps(&k, args[0], args[1]);
                    self.func(args[0], cx);
                    self.value(args[1], cx);
                }
                Prim::IterateUntil(_) => self.err(e, "internal: `iterate-until` inside a kernel is a loop of one work-item"),
                Prim::Zip
                | Prim::Slide(..)
                | Prim::Pad(..)
                | Prim::PadClamp(..)
                | Prim::ReorderStride(_)
                | Prim::Reverse
                | Prim::Generate(_) => {
                    self.copy(e, cx);
                    for a in args {
                        self.value(a, cx);
                    }
                }
            },
            Expr::Var(_) | Expr::Lit(_) | Expr::Op { .. } | Expr::If { .. } => {
                if self.is_array(e) {
                    self.copy(e, cx);
                } else {
                    self.group_write(e, cx);
                }
                self.value(e, cx);
            }
            Expr::Lambda { .. } => {}
        }
    }

    /// A value computed at work-group level outside `mapLcl` is written by every work-item.
    pub(super) fn group_write(&mut self, e: ExprId, cx: &Cx) {
        if cx.level == Level::Group {
            self.err(e, "this value is computed directly inside `mapWrg`, so every work-item of the group would write it; distribute the work with `mapLcl`");
        }
    }

    pub(super) fn copy(&mut self, e: ExprId, cx: &Cx) {
        if cx.level == Level::Group && self.is_array(e) {
            self.err(
                e,
                "copying an array directly inside `mapWrg` would be done by every work-item; use `mapLcl` to copy it",
            );
        }
    }

    /// `e` read as an input: computed arrays are materialized into temporaries first.
    pub(super) fn value(&mut self, e: ExprId, cx: &Cx) {
        if self.pre.contains(&e) {
            return;
        }
        match self.prog.expr(e).clone() {
            Expr::Var(_) | Expr::Lit(_) => {}
            // read where it is used (`generate`'s index function)
            Expr::Lambda { body, .. } => self.value(body, cx),
            Expr::Prim {
                prim: Prim::To(space),
                args,
            } if !self.is_view(args[0]) => {
                self.space(e, space, args[0], cx);
                self.into(
                    args[0],
                    &Cx {
                        vec_dest: None,
                        ..cx.clone()
                    },
                );
            }
            Expr::Prim {
                prim: Prim::Iterate(_) | Prim::IterateUntil(_),
                args,
            } if self.is_work_item_loop(e) => {
                // an array state read as an input is a temporary in the space its step's
                // innermost `toX` asks for, as the code generator materializes it
                if let (true, Some(space)) = (self.is_array(e), self.space_of(e)) {
                    let held = self.lambda(args[args.len() - 2]).unwrap_or(e);
                    self.space(e, space, held, cx);
                }
                self.work_item_loop(e, cx)
            }
            Expr::Prim {
                prim: Prim::Map(_) | Prim::Reduce(_) | Prim::Iterate(_) | Prim::Filter(_) | Prim::Scan(_),
                ..
            } if !self.is_view(e) => {
                // a temporary in the address space its innermost `toX` asks for; an
                // `iterate`'s holds each step's result, counted at its largest step
                if let Some(space) = self.space_of(e) {
                    let held = match self.prog.expr(e) {
                        Expr::Prim {
                            prim: Prim::Iterate(k),
                            args,
                        } => {
                            let (k, f, xs) = (k.clone(), args[0], args[1]);
                            self.iterate_steps(&k, f, xs);
                            self.lambda(f).unwrap_or(e)
                        }
                        _ => e,
                    };
                    self.space(e, space, held, cx);
                }
                self.into(
                    e,
                    &Cx {
                        vec_dest: None,
                        ..cx.clone()
                    },
                )
            }
            // a layout map's function is re-indexing, not code
            Expr::Prim {
                prim: Prim::Map(_),
                args,
            } => self.value(args[1], cx),
            Expr::Let { value, body, .. } => {
                self.value(value, cx);
                self.value(body, cx);
            }
            Expr::If { cond, then, els } => {
                self.value(cond, cx);
                let branch = Cx {
                    branch: true,
                    ..cx.clone()
                };
                self.value(then, &branch);
                self.value(els, &branch);
            }
            Expr::Prim { args, .. } | Expr::Op { args, .. } => {
                for a in args {
                    self.value(a, cx);
                }
            }
            Expr::Pack(inner) => self.value(inner, cx),
        }
    }

    /// The address-space rules of `toX e`.
    pub(super) fn space(&mut self, at: ExprId, space: AddressSpace, arg: ExprId, cx: &Cx) {
        match space {
            AddressSpace::Global => {}
            AddressSpace::Local => {
                if !cx.active.iter().any(|k| matches!(k, MapKind::Wrg(_))) {
                    self.err(
                        at,
                        "`toLocal` needs a work-group: local memory exists only inside `mapWrg` (use toGlobal or toPrivate here)",
                    );
                }
            }
            AddressSpace::Private => {
                if cx.level == Level::Group {
                    self.err(
                        at,
                        "a private array at work-group level would be written by every work-item; use toLocal",
                    );
                } else if self.contains_lcl(arg) {
                    self.err(at, "this array is computed by several work-items (`mapLcl`), so it cannot be kept in the private memory of one; write it to local memory with toLocal, or straight into the result");
                } else if let Some(t) = self.ty(arg) {
                    let mut dims = vec![];
                    let mut t = t;
                    while let Type::Array(el, n) = t {
                        dims.push(n.clone());
                        t = el;
                    }
                    let unknown = dims.iter().find(|n| !self.known(n));
                    if let Some(n) = unknown {
                        self.err(
                            at,
                            format!("a private array must have a size known at compile time, but this one has length {n}; use a constant split size, toLocal or toGlobal"),
                        );
                    } else if let Some(msg) = self.private_too_large(&dims, t) {
                        self.err(at, msg);
                    }
                }
            }
        }
    }

    /// Why a private array of lengths `dims` (each known) and elements `el` is refused as too
    /// large or of a negative length; `None` when it fits. In an `iterate` body, a length
    /// that changes with the steps counts at its largest step.
    pub(super) fn private_too_large(&self, dims: &[ir::ArithExpr], el: &Type) -> Option<String> {
        if let Some((_, shown)) = self.largest(dims, |d| {
            d.iter().any(|n| n.as_cst().is_some_and(|c| c < 0)).then_some(1)
        }) {
            let at = dims
                .iter()
                .zip(&shown)
                .find(|(n, _)| self.fixed(n).as_cst().is_none_or(|c| c < 0));
            return Some(format!(
                "this private array has a negative length, {}",
                at.map_or_else(|| shown.join(" × "), |(_, s)| s.clone())
            ));
        }
        let values = |d: &[ir::ArithExpr]| {
            let mut fixed = el.clone();
            for n in d.iter().rev() {
                fixed = Type::array(fixed, ir::ArithExpr::cst(n.as_cst()?));
            }
            // (too many to count is more than any limit)
            Some(typeck::private_values(&fixed).unwrap_or(i64::MAX))
        };
        let (v, shown) = self.largest(dims, values)?;
        if v <= MAX_PRIVATE_VALUES {
            return None;
        }
        Some(format!(
            "this private array holds {} values ({} {}), more than the {MAX_PRIVATE_VALUES} a work-item may keep in private memory; use toLocal or toGlobal",
            if v == i64::MAX { "too many".to_string() } else { v.to_string() },
            if shown.len() == 1 { "length" } else { "lengths" },
            shown.join(" × ")
        ))
    }

    /// ` = c with M = 4096` where a length is fixed only by the built-in sizes, else nothing.
    pub(super) fn with_sizes(&self, n: &ir::ArithExpr) -> String {
        if n.as_cst().is_some() {
            return String::new();
        }
        let used: Vec<String> = (self.known.iter())
            .filter(|(k, _)| n.mentions(k))
            .map(|(k, v)| format!("{k} = {v}"))
            .collect();
        match self.fixed(n).as_cst() {
            Some(c) if n.as_var().is_some() => format!(" = {c}"),
            Some(c) if !used.is_empty() => format!(" = {c} with {}", used.join(", ")),
            Some(_) | None => String::new(),
        }
    }

    /// The body of a function argument, run at `cx`.
    pub(super) fn func(&mut self, f: ExprId, cx: &Cx) {
        match self.lambda(f) {
            Some(body) => self.into(body, cx),
            None => self.value(f, cx),
        }
    }

    pub(super) fn map(&mut self, e: ExprId, kind: MapKind, f: ExprId, xs: ExprId, cx: &Cx) {
        self.value(xs, cx);
        let kind = match kind {
            MapKind::Plain if cx.level == Level::Top => MapKind::Glb(0),
            MapKind::Plain => MapKind::Seq,
            k => k,
        };
        let inner = match kind {
            MapKind::Seq | MapKind::SeqUnroll | MapKind::Vec | MapKind::Plain => {
                let unrolled = if kind == MapKind::SeqUnroll {
                    self.unrolled(e, xs, cx)
                } else {
                    cx.unrolled
                };
                // a loop run at the level it is in: at work-group level its body's writes
                // must be distributed by `mapLcl`s
                Cx {
                    vec_dest: None,
                    unrolled,
                    ..cx.clone()
                }
            }
            MapKind::Glb(d) | MapKind::Wrg(d) | MapKind::Lcl(d) => {
                self.parallel(e, kind, d, xs, cx);
                let mut active = cx.active.clone();
                active.push(kind);
                Cx {
                    level: if matches!(kind, MapKind::Wrg(_)) {
                        Level::Group
                    } else {
                        Level::Item
                    },
                    active,
                    branch: cx.branch && !matches!(kind, MapKind::Wrg(_)),
                    // each element is stored whole
                    vec_dest: None,
                    unrolled: cx.unrolled,
                }
            }
        };
        self.func(f, &inner);
    }

    pub(super) fn parallel(&mut self, e: ExprId, kind: MapKind, d: u8, xs: ExprId, cx: &Cx) {
        let same = |k: fn(u8) -> MapKind| cx.active.contains(&k(d));
        let name = Prim::Map(kind).name();
        let ok = match kind {
            MapKind::Glb(_) => {
                (cx.level == Level::Top
                    || (cx.level == Level::Item
                        && !cx.active.is_empty()
                        && cx.active.iter().all(|a| matches!(a, MapKind::Glb(_)))))
                    && !same(MapKind::Glb)
            }
            MapKind::Wrg(_) => {
                (cx.level == Level::Top
                    || (cx.level == Level::Group && cx.active.iter().all(|a| matches!(a, MapKind::Wrg(_)))))
                    && !same(MapKind::Wrg)
            }
            _ => same(MapKind::Wrg) && !same(MapKind::Lcl),
        };
        if !ok {
            let msg = match kind {
                MapKind::Glb(_) => format!(
                    "`{name}` must be the outermost map of a kernel, or directly inside `mapGlb` of other dimensions"
                ),
                MapKind::Wrg(_) => format!(
                    "`{name}` must be the outermost map of a kernel, or directly inside `mapWrg` of other dimensions"
                ),
                _ => format!(
                    "`{name}` must be inside `mapWrg{}` (and not inside another `{name}`)",
                    dim_suffix(d)
                ),
            };
            self.err(e, msg);
            if let Some(k) = self.kernel.as_mut() {
                k.misplaced = true;
            }
        }
        if matches!(kind, MapKind::Lcl(_)) && cx.level == Level::Group && cx.branch {
            self.err(
                e,
                format!("`{name}` here runs only on the work-items that take this branch of `if`, but the barrier after it must be reached by the whole work-group; move it out of the `if`"),
            );
        }
        let len = match self.ty(xs) {
            Some(Type::Array(_, n)) => Some(n.clone()),
            _ => None,
        };
        let mut clash = None;
        if let Some(k) = self.kernel.as_mut() {
            match kind {
                MapKind::Glb(_) => {
                    k.glb.get_or_insert(e);
                    k.mixed |= k.wrg.is_some();
                    if let (true, Some(slot), Some(n)) = (ok, k.glb_len.get_mut(usize::from(d)), len) {
                        match slot {
                            Some(m) if *m != n => clash = Some((m.clone(), n)),
                            Some(_) => {}
                            None => *slot = Some(n),
                        }
                    }
                }
                _ => {
                    k.wrg.get_or_insert(e);
                    k.mixed |= k.glb.is_some();
                }
            }
        }
        if let Some((m, n)) = clash {
            let name = Prim::Map(kind).name();
            self.err(
                e,
                format!("this `{name}` runs over {n} elements but another `{name}` of the same kernel over {m}: a kernel's launch has one size per dimension; compute one of them in a kernel of its own (bind it with let at the top level)"),
            );
        }
    }
}
