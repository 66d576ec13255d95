//! Memory and barriers: temporaries in global, local and private memory, stores through views,
//! and barriers with the fence of the memory written (arrays rewritten after generation are in
//! `locals`).

use super::*;

impl Gen<'_> {
    pub(super) fn store(&mut self, loc: &Loc, v: &Read, at: ExprId) -> Result<()> {
        match (loc, v) {
            (Loc::Plain(l), Read::Expr(e)) => {
                // A struct is stored member by member: a whole-struct copy would also copy its
                // padding (after a float before a float4, say), which no one ever writes in a
                // temporary, so reading it is a read of uninitialized memory (Oclgrind says so).
                if let Some(Type::Tuple(ts)) = self.access_type(l) {
                    for i in 0..ts.len() {
                        let field = |a: &Access| Access::Field(Box::new(a.clone()), i);
                        self.store(&Loc::Plain(field(l)), &Read::Expr(field(e)), at)?;
                    }
                    return Ok(());
                }
                let (lhs, rhs) = (self.access_expr(l), self.access_expr(e));
                self.push(Stmt::assign(lhs, rhs))
            }
            (Loc::Plain(l), Read::Tuple(cs)) => {
                for (i, c) in cs.iter().enumerate() {
                    self.store(&Loc::Plain(Access::Field(Box::new(l.clone()), i)), c, at)?;
                }
            }
            (Loc::Vector { base, offset, w }, Read::Expr(e)) => {
                let value = self.access_expr(e);
                self.push(Stmt::VStore {
                    w: *w,
                    value,
                    ptr: CExpr::var(&self.buf_ident(base)),
                    offset: arith(offset),
                })
            }
            (Loc::Vector { .. } | Loc::Lanes(_), Read::Tuple(_)) => {
                return Err(self.err(at, "cannot store a tuple into a vector"))
            }
            (Loc::Lanes(lanes), Read::Expr(e)) => {
                for (k, l) in lanes.iter().enumerate() {
                    let lane = Access::Lane(Box::new(e.clone()), k as u8);
                    self.store(&Loc::Plain(l.clone()), &Read::Expr(lane), at)?;
                }
            }
        }
        Ok(())
    }

    /// Writes `v` to `dest` at index path `idx`, refusing writes that every work-item of a group
    /// would repeat.
    pub(super) fn write(&mut self, dest: &Rc<View>, idx: &[ArithExpr], v: &Read, at: ExprId) -> Result<()> {
        let loc = match dest.write(idx) {
            Ok(loc) => loc,
            Err(m) => match (vector_dest(dest, idx.to_vec()), v) {
                // a vector whose places are not adjacent (a copy of vectors that transposes
                // its tile) is stored lane by lane
                (Some((inner, i, w)), Read::Expr(x)) => {
                    for k in 0..w {
                        let place = i.mul(&ArithExpr::cst(i64::from(w))).add(&ArithExpr::cst(i64::from(k)));
                        let lane = Read::Expr(Access::Lane(Box::new(x.clone()), k));
                        self.write(&inner, &[place], &lane, at)?;
                    }
                    return Ok(());
                }
                _ => return Err(self.err(at, m.0)),
            },
        };
        if self.level() == Level::Group && !self.is_private(&loc) {
            return Err(self.err(at, "this value is computed directly inside `mapWrg`, so every work-item of the group would write it; distribute the work with `mapLcl`"));
        }
        self.store(&loc, v, at)
    }

    /// The type of a buffer element or of a struct member of one.
    fn access_type(&self, a: &Access) -> Option<Type> {
        match a {
            Access::Elem { buf, .. } => self.mem.by_name(buf).map(|b| b.elem.clone()),
            Access::Field(inner, c) => match self.access_type(inner)? {
                Type::Tuple(mut ts) if *c < ts.len() => Some(ts.swap_remove(*c)),
                Type::Tuple(_)
                | Type::Scalar(_)
                | Type::Vector(..)
                | Type::Array(..)
                | Type::Exists(_)
                | Type::Fun(..) => None,
            },
            Access::VLoad { .. }
            | Access::VLoadAt { .. }
            | Access::Value(_)
            | Access::Lane(..)
            | Access::DynLane { .. }
            | Access::Guard { .. }
            | Access::Vector { .. }
            | Access::Generate { .. } => None,
        }
    }

    pub(super) fn is_private(&self, loc: &Loc) -> bool {
        let name = match loc {
            Loc::Plain(l) => l.buffer(),
            Loc::Vector { base, .. } => Some(base.as_str()),
            Loc::Lanes(lanes) => lanes.first().and_then(Access::buffer),
        };
        // a location that is no buffer is a private variable
        name.and_then(|n| self.mem.by_name(n))
            .is_none_or(|b| b.space == AddressSpace::Private)
    }

    /// Stores a value every work-item agrees on (a length) from a single work-item.
    pub(super) fn store_uniform(&mut self, loc: &Loc, v: CExpr, at: ExprId) -> Result<()> {
        let first = |id: &'static str| {
            (0..3)
                .map(|d| CExpr::bin(BinOp::Eq, CExpr::call(id, vec![CExpr::Int(d)]), CExpr::Int(0)))
                .reduce(|a, b| CExpr::bin(BinOp::And, a, b))
                .expect("three dimensions")
        };
        let guard = match self.level() {
            Level::Item => None,
            Level::Group => Some(first("get_local_id")),
            Level::Top => Some(first("get_global_id")),
        };
        if let Some(g) = guard {
            self.open_if(g);
            self.store(loc, &Read::Expr(Access::Value(v)), at)?;
            self.close();
        } else {
            self.store(loc, &Read::Expr(Access::Value(v)), at)?;
        }
        Ok(())
    }

    pub(super) fn materialize(&mut self, e: ExprId, space: Option<AddressSpace>) -> Result<Rc<View>> {
        let ty = self.capacity_type(&self.cty(e)?, e)?;
        if let Type::Exists(_) = ty {
            return Err(self.err(e, "internal: materializing a filter result without its binder"));
        }
        let level = self.level();
        let space = space.or_else(|| self.space_of(e)).unwrap_or({
            let constant = dims_of(&ty).0.iter().all(|d| d.as_cst().is_some());
            if level == Level::Item && constant {
                AddressSpace::Private
            } else {
                AddressSpace::Global
            }
        });
        if space == AddressSpace::Private && level == Level::Group {
            return Err(self.err(
                e,
                "a private array at work-group level would be written by every work-item; use toLocal",
            ));
        }
        if space == AddressSpace::Private && self.contains_lcl(e) {
            return Err(self.err(
                e,
                "this array is computed by several work-items (`mapLcl`), so it cannot be kept in the private memory of one; write it to local memory with toLocal, or straight into the result",
            ));
        }
        let view = self.temp_buffer("t", &ty, space, e)?;
        let _ = writeln!(
            self.views,
            "materialize {} in {:?} memory: {}",
            self.prog.span(e).start,
            space,
            view.describe()
        );
        self.gen_into(
            e,
            &Dest {
                view: view.clone(),
                len: None,
                rows: false,
            },
        )?;
        Ok(view)
    }

    pub(super) fn kernel_bind(&mut self, letnode: ExprId, var: VarId, value: ExprId) -> Result<()> {
        if let Some(x) = self.info.unpacks.get(&Binder::Let(letnode)).cloned() {
            let cap = self.capacity_len(value)?;
            let elem = match self.info.ty(value) {
                Type::Exists(e) => self.c_type_of(e)?,
                t @ Type::Scalar(_)
                | t @ Type::Vector(..)
                | t @ Type::Tuple(_)
                | t @ Type::Array(..)
                | t @ Type::Fun(..) => return Err(self.err(value, format!("internal: unpack of {t}"))),
            };
            let ty = Type::array(elem, cap.clone());
            let level = self.level();
            let constant = cap.as_cst().is_some();
            let space = self.space_of(value).unwrap_or(if level == Level::Item && constant {
                AddressSpace::Private
            } else {
                AddressSpace::Global
            });
            let loops = self.k.as_ref().map(|k| k.loops.clone()).unwrap_or_default();
            let (_, data) = self
                .alloc("t", &ty, space, &loops, Role::Temp)
                .map_err(|m| self.err(value, m))?;
            let b = self.mem.buffers.len() - 1;
            if space == AddressSpace::Private {
                let buf = self.mem.buffers[b].clone();
                let ty = self.buffer_ctype(&buf.elem)?;
                // vectors live in a private array of their scalars (vload/vstore), so it holds
                // `w` of them per element (a filterSeq of float4 wrote past a 3-float array)
                let lanes = match buf.elem {
                    Type::Vector(_, w) => i64::from(w),
                    Type::Scalar(_) | Type::Tuple(_) | Type::Array(..) | Type::Exists(_) | Type::Fun(..) => 1,
                };
                self.push(Stmt::Decl {
                    ty,
                    name: self.buf_ident(&buf.name),
                    space: None,
                    len: buf.len.as_cst().map(|n| (n * lanes) as usize),
                    init: None,
                    is_const: false,
                });
            }
            let c = self.names.size(&SizeKey(x.clone()));
            // The length's name is its type's; the copies of an unrolled loop's body bind it
            // again in the one block they share, where it is declared already.
            if self.kernel_name(c.as_str()).is_some() {
                self.push(Stmt::assign(CExpr::var(&c), CExpr::Int(0)));
            } else {
                self.push(Stmt::decl(CType::INT, &c, CExpr::Int(0)));
            }
            let len = Rc::new(View::Value {
                expr: CExpr::var(&c),
                ty: Type::int(),
            });
            let c = c.to_string();
            self.gen_into(
                value,
                &Dest {
                    view: data.clone(),
                    len: Some(len),
                    rows: false,
                },
            )?;
            self.caps.insert(c.clone(), cap.clone());
            self.lengths.insert(
                x,
                ArithExpr::var(&c, Range::new(ArithExpr::cst(0), Some(cap.add(&ArithExpr::cst(1))))),
            );
            self.bind(var, Bound::View(data));
            return Ok(());
        }
        let ty = self.info.ty(value).clone();
        match ty {
            // a tuple holding arrays is a view of its components (struct of arrays)
            Type::Tuple(_) if soa_components(&self.cty(value)?).is_some() => {
                let v = self.value(value)?;
                self.bind(var, Bound::View(v));
            }
            Type::Scalar(_) | Type::Vector(..) | Type::Tuple(_) => {
                let r = self.scalar(value)?;
                let cty = self.cty(value)?;
                let v = self.declare(&r, &cty, &self.prog.var(var).name.clone())?;
                self.bind(var, Bound::View(self.read_view(v, &cty)));
            }
            Type::Array(..) | Type::Exists(_) | Type::Fun(..) => {
                let v = self.value(value)?;
                self.bind(var, Bound::View(v));
            }
        }
        Ok(())
    }

    pub(super) fn fence_of(&self, v: &Rc<View>) -> Fence {
        let names = v.buffers();
        let spaces: BTreeSet<AddressSpace> = names
            .iter()
            .filter_map(|n| self.mem.by_name(n))
            .map(|b| b.space)
            .collect();
        match (
            spaces.contains(&AddressSpace::Local),
            spaces.contains(&AddressSpace::Global),
        ) {
            (true, true) => Fence::Both,
            (false, true) => Fence::Global,
            (true | false, false) => Fence::Local,
        }
    }

    /// A buffer for a temporary array of type `ty` in `space`, in the current kernel.
    pub(super) fn temp_buffer(&mut self, hint: &str, ty: &Type, space: AddressSpace, at: ExprId) -> Result<Rc<View>> {
        let loops = self.k.as_ref().map(|k| k.loops.clone()).unwrap_or_default();
        let padded = (space == AddressSpace::Local).then(|| padded_tile(ty)).flatten();
        let (b, view) = self
            .alloc(hint, padded.as_ref().unwrap_or(ty), space, &loops, Role::Temp)
            .map_err(|m| self.err(at, m))?;
        // a struct of arrays (tuples holding arrays) is several buffers, allocated in a row
        for b in b..self.mem.buffers.len() {
            let buf = self.mem.buffers[b].clone();
            let Some(n) = buf.len.as_cst() else { continue };
            let ty = self.buffer_ctype(&buf.elem)?;
            let len = if let Type::Vector(_, w) = buf.elem {
                n * i64::from(w)
            } else {
                n
            };
            let decl = |space| Stmt::Decl {
                ty,
                name: self.buf_ident(&buf.name),
                space,
                len: Some(len as usize),
                init: None,
                is_const: false,
            };
            match space {
                AddressSpace::Private => {
                    let d = decl(None);
                    self.push(d)
                }
                AddressSpace::Local => {
                    let d = decl(Some(AddressSpace::Local));
                    self.k.as_mut().expect("in kernel").decls.push(d)
                }
                AddressSpace::Global => {}
            }
        }
        Ok(view)
    }

    /// At work-group level, a barrier after writes to `v` that other work-items may read.
    pub(super) fn sync_copy(&mut self, v: &Rc<View>, _at: ExprId) -> Result<()> {
        if self.level() == Level::Group {
            let barrier = Stmt::Barrier(self.fence_of(v));
            // a `mapLcl` that wrote `v` has just placed the same barrier
            let last = self.k.as_ref().and_then(|k| k.stack.last()?.body.last());
            if last != Some(&barrier) {
                self.push(barrier);
            }
        }
        Ok(())
    }

    /// Copies an array between views: at work-group level the work-items share the copy (the
    /// outer two dimensions over local ids 1 and 0 where the enclosing `mapWrg`s allow it),
    /// inside a work-item sequentially.
    pub(super) fn copy_acc(&mut self, e: ExprId, src: &Rc<View>, dst: &Rc<View>, ty: &Type) -> Result<()> {
        let (dims, _) = dims_of(ty);
        if self.level() != Level::Group || dims.is_empty() {
            return self.copy_dims(e, src, dst, &dims, vec![], MapKind::Seq);
        }
        let wrg1 = self.k.as_ref().is_some_and(|k| k.active.contains(&MapKind::Wrg(1)));
        if dims.len() >= 2 && wrg1 {
            let (d0, d1, rest) = (dims[0].clone(), dims[1].clone(), dims[2..].to_vec());
            return self.emit_loop(e, MapKind::Lcl(1), &d0, |g, i| {
                g.emit_loop(e, MapKind::Lcl(0), &d1, |g, j| {
                    g.copy_dims(e, src, dst, &rest, vec![i.clone(), j], MapKind::Seq)
                })
            });
        }
        let (d0, rest) = (dims[0].clone(), dims[1..].to_vec());
        self.emit_loop(e, MapKind::Lcl(0), &d0, |g, i| {
            g.copy_dims(e, src, dst, &rest, vec![i], MapKind::Seq)
        })
    }
}

/// The storage type of a local tile of scalars (two dimensions or more) whose rows (innermost
/// dimension) are a multiple of 8 long, or of a length known only at run time: rows one element
/// longer. A work-group that reads such a tile along its columns (a transposed copy, the column
/// tile of a matrix product, a staged block of rows, one per work-item) has neighbouring
/// work-items a row apart; rows of a multiple of 8 fall into a few of the 32 banks of local
/// memory and are served one after another, while an odd row stride spreads them over distinct
/// banks (a run-time length is padded blind: odd or even, one more costs one element a row).
/// The view of the buffer indexes through its storage dimensions, so the extra element of a
/// row is never read or written.
fn padded_tile(ty: &Type) -> Option<Type> {
    let (dims, elem) = memalloc::dims_of(ty);
    let Type::Scalar(_) = elem else { return None };
    let (cols, outer) = dims.split_last()?;
    let pad = match cols.as_cst() {
        Some(c) => c >= 8 && c % 8 == 0,
        None => true,
    };
    if outer.is_empty() || !pad {
        return None;
    }
    let mut out = Type::array(elem, cols.add(&ArithExpr::cst(1)));
    for d in outer.iter().rev() {
        out = Type::array(out, d.clone());
    }
    Some(out)
}

/// `(inner, i, w)` when writing `dest` at `idx` writes element `i` of `asVector w inner`
/// (through the accesses of maps around it).
fn vector_dest(dest: &Rc<View>, mut idx: Vec<ArithExpr>) -> Option<(Rc<View>, ArithExpr, u8)> {
    match &**dest {
        View::Access { idx: i, inner } => {
            idx.insert(0, i.clone());
            vector_dest(inner, idx)
        }
        View::AsVector { w, inner, .. } if idx.len() == 1 => Some((inner.clone(), idx.pop()?, *w)),
        View::Mem { .. }
        | View::Value { .. }
        | View::Tuple(_)
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
        | View::Nested { .. } => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_tiles_with_rows_of_a_multiple_of_8_or_a_run_time_length_are_padded() {
        let c = ArithExpr::cst;
        let matrix = |elem: Type, rows: ArithExpr, cols: ArithExpr| Type::array(Type::array(elem, cols), rows);
        assert_eq!(
            padded_tile(&matrix(Type::float(), c(32), c(32))),
            Some(matrix(Type::float(), c(32), c(33)))
        );
        let n = ArithExpr::size_var("N");
        assert_eq!(
            padded_tile(&matrix(Type::int(), c(64), n.clone())),
            Some(matrix(Type::int(), c(64), n.add(&c(1))))
        );
        // rows that already spread over the banks, one dimension, vectors: as they are
        assert_eq!(padded_tile(&matrix(Type::float(), c(16), c(12))), None);
        assert_eq!(padded_tile(&Type::array(Type::float(), c(64))), None);
        assert_eq!(
            padded_tile(&matrix(Type::Vector(ir::Scalar::Float, 4), c(16), c(16))),
            None
        );
    }
}
