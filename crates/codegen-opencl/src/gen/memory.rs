//! Memory and barriers: temporaries in global, local and private memory, stores through views,
//! barriers with the fence of the memory written, and private arrays indexed only by constants
//! turned into scalars.

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
            self.push(Stmt::decl(CType::INT, &c, CExpr::Int(0)));
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

/// A private array indexed only by constants (the accesses of unrolled loops) becomes one
/// scalar variable per element, so it lives in registers: `float a[2]; a[0] = x;` turns into
/// `float a_1; float a_2; a_1 = x;`. Arrays with any computed index stay arrays.
pub(super) fn scalarize(body: &mut Vec<Stmt>, array: &Ident, names: &mut Namer) {
    let Some((ty, n)) = private_array(body, array) else {
        return;
    };
    if n == 0 || n > 64 {
        return;
    }
    let mut ok = true;
    ast::for_each_expr_mut(body, &mut |e| ok &= constant_indices(e, array, n));
    if !ok {
        return;
    }
    let vars: Vec<Ident> = (0..n).map(|_| names.fresh(array.as_str())).collect();
    ast::for_each_expr_mut(body, &mut |e| to_scalars(e, array, &vars));
    split_decl(body, array, &ty, &vars);
}

/// The element type and length of the private array `a` declared in `body`.
fn private_array(body: &[Stmt], a: &Ident) -> Option<(CType, usize)> {
    body.iter().find_map(|s| match s {
        Stmt::Decl {
            ty,
            name,
            space: None,
            len: Some(n),
            init: None,
            ..
        } if name == a => Some((ty.clone(), *n)),
        Stmt::For { body, .. } | Stmt::Block(body) => private_array(body, a),
        Stmt::If { then, els, .. } => private_array(then, a).or_else(|| private_array(els, a)),
        Stmt::Decl { .. } | Stmt::Assign { .. } | Stmt::Call(_) | Stmt::Barrier(_) | Stmt::VStore { .. } => None,
    })
}

/// Whether `e` uses `a` only as `a[k]` with a constant `k < n`.
fn constant_indices(e: &CExpr, a: &Ident, n: usize) -> bool {
    match e {
        CExpr::Index(b, i) if **b == CExpr::Var(a.clone()) => {
            matches!(**i, CExpr::Int(k) if k >= 0 && (k as usize) < n)
        }
        CExpr::Var(v) => v != a,
        CExpr::Sym(t) => t != a.as_str(),
        CExpr::Int(_)
        | CExpr::Float(_)
        | CExpr::Double(_)
        | CExpr::TypedInt(..)
        | CExpr::Index(..)
        | CExpr::Field(..)
        | CExpr::Unary(..)
        | CExpr::Binary(..)
        | CExpr::Call(..)
        | CExpr::Cast(..)
        | CExpr::Select(..)
        | CExpr::VecLit(..) => e.children().all(|c| constant_indices(c, a, n)),
    }
}

fn to_scalars(e: &mut CExpr, a: &Ident, vars: &[Ident]) {
    if let CExpr::Index(b, i) = e {
        if let (CExpr::Var(v), CExpr::Int(k)) = (&**b, &**i) {
            if v == a {
                *e = CExpr::var(&vars[*k as usize]);
                return;
            }
        }
    }
    for c in e.children_mut() {
        to_scalars(c, a, vars);
    }
}

/// Replaces the declaration of the array `a` by one declaration per element.
fn split_decl(body: &mut Vec<Stmt>, a: &Ident, ty: &CType, vars: &[Ident]) {
    let Some(at) = body
        .iter()
        .position(|s| matches!(s, Stmt::Decl { name, len: Some(_), .. } if name == a))
    else {
        for s in body.iter_mut() {
            match s {
                Stmt::For { body, .. } | Stmt::Block(body) => split_decl(body, a, ty, vars),
                Stmt::If { then, els, .. } => {
                    split_decl(then, a, ty, vars);
                    split_decl(els, a, ty, vars);
                }
                Stmt::Decl { .. } | Stmt::Assign { .. } | Stmt::Call(_) | Stmt::Barrier(_) | Stmt::VStore { .. } => {}
            }
        }
        return;
    };
    let decls = vars.iter().map(|v| Stmt::Decl {
        ty: ty.clone(),
        name: v.clone(),
        space: None,
        len: None,
        init: None,
        is_const: false,
    });
    body.splice(at..=at, decls);
}

/// A local or private array of scalars that the kernel reads as `w`-lane vectors (`vloadW(i,
/// a)`: a tile of n-body's float4 positions, a work-item's float4 accumulators) becomes an
/// array of vectors, so that each such read is one vector load: `vloadW` promises only the
/// scalar's alignment, and a driver that cannot prove more splits it into `w` loads (LLVM's
/// NVPTX backend does: four `ld.shared.f32` against one `ld.shared.v4.f32` per n-body
/// interaction, read off the PTX clang 15 makes of the kernel). `vloadW(i, a)` turns into
/// `a[i]`, a vector store or load at a scalar offset that is a multiple of `w` by its form into
/// `a[offset / w]`, and any other use of `a` (a scalar element, a vector at an offset not known
/// to be aligned) reads it through `(T*)a`. Runs before `scalarize`, so that a private array
/// of vectors indexed by constants becomes vector registers.
pub(super) fn vector_locals(body: &mut [Stmt]) {
    let mut arrays = vec![];
    scalar_arrays(body, &mut arrays);
    for (a, sc, n, space) in arrays {
        let mut widths = BTreeSet::new();
        ast::for_each_expr_mut(body, &mut |e| vector_reads(e, &a, &mut widths));
        let w = match widths.iter().collect::<Vec<_>>()[..] {
            [w] if n % usize::from(*w) == 0 => *w,
            _ => continue,
        };
        retype_stmts(body, &a, (sc, space), w);
        retype_decl(body, &a, CType::Vector(sc, w), n / usize::from(w));
    }
}

/// The arrays of scalars that `body` declares without an initial value, in local or private
/// memory.
fn scalar_arrays(body: &[Stmt], out: &mut Vec<(Ident, ast::Scalar, usize, AddressSpace)>) {
    for s in body {
        match s {
            Stmt::Decl {
                ty: CType::Scalar(sc),
                name,
                space,
                len: Some(n),
                init: None,
                ..
            } => match space {
                Some(AddressSpace::Local) => out.push((name.clone(), *sc, *n, AddressSpace::Local)),
                None => out.push((name.clone(), *sc, *n, AddressSpace::Private)),
                Some(AddressSpace::Global | AddressSpace::Private) => {}
            },
            Stmt::For { body, .. } | Stmt::Block(body) => scalar_arrays(body, out),
            Stmt::If { then, els, .. } => {
                scalar_arrays(then, out);
                scalar_arrays(els, out);
            }
            Stmt::Decl { .. } | Stmt::Assign { .. } | Stmt::Call(_) | Stmt::Barrier(_) | Stmt::VStore { .. } => {}
        }
    }
}

fn retype_decl(body: &mut [Stmt], a: &Ident, to: CType, n: usize) {
    for s in body {
        match s {
            Stmt::Decl { ty, name, len, .. } if name == a => {
                *ty = to.clone();
                *len = Some(n);
            }
            Stmt::For { body, .. } | Stmt::Block(body) => retype_decl(body, a, to.clone(), n),
            Stmt::If { then, els, .. } => {
                retype_decl(then, a, to.clone(), n);
                retype_decl(els, a, to.clone(), n);
            }
            Stmt::Decl { .. } | Stmt::Assign { .. } | Stmt::Call(_) | Stmt::Barrier(_) | Stmt::VStore { .. } => {}
        }
    }
}

/// The widths `w` of the reads `vloadW(i, a)` and `vloadW(0, a + off)` in `e`. Both count:
/// a tile read only at offsets the view computed (`Access::VLoadAt`, the register-blocked
/// product's) stayed an array of scalars, and NVIDIA's compiler, unable to prove those
/// `vload4`s 16-byte aligned, split each into four `ld.shared.f32` (the PTX of the derived mm
/// had 256 scalar local loads per step of K and no `ld.shared.v4`).
fn vector_reads(e: &CExpr, a: &Ident, widths: &mut BTreeSet<u8>) {
    if let Some((w, _)) = vload_of(e, a) {
        widths.insert(w);
    }
    if let CExpr::Call(f, args) = e {
        if let (Some(w), [CExpr::Int(0), CExpr::Binary(BinOp::Add, p, _)]) =
            (f.strip_prefix("vload").and_then(|x| x.parse::<u8>().ok()), &args[..])
        {
            if **p == CExpr::Var(a.clone()) {
                widths.insert(w);
            }
        }
    }
    for c in e.children() {
        vector_reads(c, a, widths);
    }
}

/// `(w, i)` when `e` is `vloadW(i, a)`.
fn vload_of<'e>(e: &'e CExpr, a: &Ident) -> Option<(u8, &'e CExpr)> {
    let CExpr::Call(f, args) = e else { return None };
    let w: u8 = f.strip_prefix("vload")?.parse().ok()?;
    match &args[..] {
        [i, CExpr::Var(b)] if b == a => Some((w, i)),
        _ => None,
    }
}

/// `off / w` when `off` is a multiple of `w` by its form: a constant multiple, a product with
/// one, or a sum of such.
pub(super) fn over_width(off: &CExpr, w: u8) -> Option<CExpr> {
    let wi = i64::from(w);
    let times = |k: i64, e: &CExpr| match k / wi {
        1 => e.clone(),
        q => CExpr::bin(BinOp::Mul, CExpr::Int(q), e.clone()),
    };
    match off {
        CExpr::Int(k) => (k % wi == 0).then(|| CExpr::Int(k / wi)),
        CExpr::Binary(BinOp::Mul, x, y) => match (&**x, &**y) {
            (CExpr::Int(k), e) if k % wi == 0 => Some(times(*k, e)),
            (e, CExpr::Int(k)) if k % wi == 0 => Some(times(*k, e)),
            _ => None,
        },
        CExpr::Binary(BinOp::Add, x, y) => Some(CExpr::bin(BinOp::Add, over_width(x, w)?, over_width(y, w)?)),
        CExpr::Var(_)
        | CExpr::Float(_)
        | CExpr::Double(_)
        | CExpr::TypedInt(..)
        | CExpr::Index(..)
        | CExpr::Field(..)
        | CExpr::Unary(..)
        | CExpr::Binary(..)
        | CExpr::Call(..)
        | CExpr::Cast(..)
        | CExpr::Select(..)
        | CExpr::VecLit(..)
        | CExpr::Sym(_) => None,
    }
}

fn retype_stmts(body: &mut [Stmt], a: &Ident, sc: (ast::Scalar, AddressSpace), w: u8) {
    for s in body.iter_mut() {
        let store = match s {
            Stmt::VStore {
                w: sw,
                value,
                ptr,
                offset,
            } if *sw == w && *ptr == CExpr::Var(a.clone()) => over_width(offset, w).map(|k| (value.clone(), k)),
            Stmt::Decl { .. }
            | Stmt::Assign { .. }
            | Stmt::Call(_)
            | Stmt::For { .. }
            | Stmt::If { .. }
            | Stmt::Block(_)
            | Stmt::Barrier(_)
            | Stmt::VStore { .. } => None,
        };
        if let Some((mut value, mut k)) = store {
            retype(&mut value, a, sc, w);
            retype(&mut k, a, sc, w);
            *s = Stmt::assign(CExpr::var(a).index(k), value);
            continue;
        }
        match s {
            Stmt::For {
                init, cond, step, body, ..
            } => {
                for e in [init, cond, &mut step.1] {
                    retype(e, a, sc, w);
                }
                retype_stmts(body, a, sc, w);
            }
            Stmt::If { cond, then, els } => {
                retype(cond, a, sc, w);
                retype_stmts(then, a, sc, w);
                retype_stmts(els, a, sc, w);
            }
            Stmt::Block(body) => retype_stmts(body, a, sc, w),
            Stmt::Barrier(_) => {}
            Stmt::Decl { .. } | Stmt::Assign { .. } | Stmt::Call(_) | Stmt::VStore { .. } => {
                ast::for_each_expr_mut(std::slice::from_mut(s), &mut |e| retype(e, a, sc, w));
            }
        }
    }
}

/// `e` reading the array `a` of `w`-lane vectors that was an array of scalars.
fn retype(e: &mut CExpr, a: &Ident, sc: (ast::Scalar, AddressSpace), w: u8) {
    if let Some((_, i)) = vload_of(e, a) {
        let mut i = i.clone();
        retype(&mut i, a, sc, w);
        *e = CExpr::var(a).index(i);
        return;
    }
    if let CExpr::Call(f, args) = e {
        let at = match (f.strip_prefix("vload").and_then(|x| x.parse::<u8>().ok()), &args[..]) {
            (Some(vw), [CExpr::Int(0), CExpr::Binary(BinOp::Add, p, off)])
                if vw == w && **p == CExpr::Var(a.clone()) =>
            {
                over_width(off, w)
            }
            _ => None,
        };
        if let Some(mut k) = at {
            retype(&mut k, a, sc, w);
            *e = CExpr::var(a).index(k);
            return;
        }
    }
    if *e == CExpr::Var(a.clone()) {
        let ptr = CType::Ptr {
            space: sc.1,
            elem: Box::new(CType::Scalar(sc.0)),
            is_const: false,
            restrict: false,
        };
        *e = CExpr::cast(ptr, e.clone());
        return;
    }
    for c in e.children_mut() {
        retype(c, a, sc, w);
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

    fn array(ty: CType, name: &Ident, n: usize) -> Stmt {
        Stmt::Decl {
            ty,
            name: name.clone(),
            space: None,
            len: Some(n),
            init: None,
            is_const: false,
        }
    }

    #[test]
    fn local_arrays_read_as_vectors_become_arrays_of_vectors() {
        let mut names = Namer::new();
        let (a, b, i, x) = (
            names.fresh("v_lt"),
            names.fresh("v_lb"),
            names.fresh("v_i"),
            names.fresh("v_x"),
        );
        let local = |name: &Ident, n: usize| Stmt::Decl {
            ty: CType::FLOAT,
            name: name.clone(),
            space: Some(AddressSpace::Local),
            len: Some(n),
            init: None,
            is_const: false,
        };
        let four_i = CExpr::bin(BinOp::Mul, CExpr::Int(4), CExpr::var(&i));
        let vload = |k: CExpr, buf: &Ident| CExpr::call("vload4", vec![k, CExpr::var(buf)]);
        let mut body = vec![
            local(&a, 8),
            local(&b, 8),
            // a store at an offset of whole vectors, a vector read, a scalar read
            Stmt::VStore {
                w: 4,
                value: CExpr::var(&x),
                ptr: CExpr::var(&a),
                offset: four_i.clone(),
            },
            Stmt::assign(CExpr::var(&x), vload(CExpr::var(&i), &a)),
            Stmt::assign(CExpr::var(&i), CExpr::var(&a).index(CExpr::Int(5))),
            // an offset not known to be of whole vectors: through a scalar pointer
            Stmt::VStore {
                w: 4,
                value: CExpr::var(&x),
                ptr: CExpr::var(&a),
                offset: CExpr::var(&i),
            },
            // never read as vectors: as it was
            Stmt::VStore {
                w: 4,
                value: CExpr::var(&x),
                ptr: CExpr::var(&b),
                offset: four_i,
            },
        ];
        vector_locals(&mut body);
        let text = print::kernel_text(&ast::Kernel {
            name: names.exact("K"),
            work_group: None,
            params: vec![],
            body,
        });
        assert_eq!(
            text,
            "kernel void K() {\n  local float4 v_lt_1[2];\n  local float v_lb_1[8];\n  v_lt_1[v_i_1] = v_x_1;\n  v_x_1 = v_lt_1[v_i_1];\n  v_i_1 = ((local float*)v_lt_1)[5];\n  vstore4(v_x_1, 0, (local float*)v_lt_1 + v_i_1);\n  vstore4(v_x_1, 0, v_lb_1 + 4 * v_i_1);\n}\n\n"
        );
    }

    /// A tile written as scalars and read only through `vload4(0, a + off)` (the form of a
    /// read at an offset that a view computed) becomes an array of vectors too, read at
    /// `off / 4` where `off` is of whole vectors by its form: NVIDIA's compiler then loads
    /// `ld.shared.v4`, where it split the unaligned `vload4` into four scalar loads.
    #[test]
    fn local_arrays_read_as_vectors_at_offsets_become_arrays_of_vectors() {
        let mut names = Namer::new();
        let (a, i, x) = (names.fresh("v_lt"), names.fresh("v_i"), names.fresh("v_x"));
        let mut body = vec![
            Stmt::Decl {
                ty: CType::FLOAT,
                name: a.clone(),
                space: Some(AddressSpace::Local),
                len: Some(16),
                init: None,
                is_const: false,
            },
            Stmt::assign(CExpr::var(&a).index(CExpr::var(&i)), CExpr::var(&x)),
        ];
        let at = |off: CExpr| {
            let p = CExpr::bin(BinOp::Add, CExpr::var(&a), off);
            Stmt::assign(CExpr::var(&x), CExpr::call("vload4", vec![CExpr::Int(0), p]))
        };
        let whole = CExpr::bin(
            BinOp::Add,
            CExpr::bin(BinOp::Mul, CExpr::Int(8), CExpr::var(&i)),
            CExpr::Int(4),
        );
        body.push(at(whole));
        // not of whole vectors by its form: through a scalar pointer, as before
        body.push(at(CExpr::var(&i)));
        vector_locals(&mut body);
        let text = print::kernel_text(&ast::Kernel {
            name: names.exact("K"),
            work_group: None,
            params: vec![],
            body,
        });
        assert_eq!(
            text,
            "kernel void K() {\n  local float4 v_lt_1[4];\n  ((local float*)v_lt_1)[v_i_1] = v_x_1;\n  v_x_1 = v_lt_1[2 * v_i_1 + 1];\n  v_x_1 = vload4(0, (local float*)v_lt_1 + v_i_1);\n}\n\n"
        );
    }

    #[test]
    fn arrays_indexed_by_constants_become_scalars() {
        let mut names = Namer::new();
        let a = names.fresh("v_pt");
        let x = names.fresh("v_x");
        let mut body = vec![
            array(CType::FLOAT, &a, 2),
            Stmt::Block(vec![
                Stmt::assign(CExpr::var(&a).index(CExpr::Int(0)), CExpr::var(&x)),
                Stmt::assign(CExpr::var(&a).index(CExpr::Int(1)), CExpr::Float(2.0)),
            ]),
            Stmt::assign(
                CExpr::var(&x),
                CExpr::bin(
                    BinOp::Add,
                    CExpr::var(&a).index(CExpr::Int(0)),
                    CExpr::var(&a).index(CExpr::Int(1)),
                ),
            ),
        ];
        scalarize(&mut body, &a, &mut names);
        let text = print::kernel_text(&ast::Kernel {
            name: names.exact("K"),
            work_group: None,
            params: vec![],
            body,
        });
        assert_eq!(
            text,
            "kernel void K() {\n  float v_pt_1_1;\n  float v_pt_1_2;\n  {\n    v_pt_1_1 = v_x_1;\n    v_pt_1_2 = 2.0f;\n  }\n  v_x_1 = v_pt_1_1 + v_pt_1_2;\n}\n\n"
        );
    }

    #[test]
    fn arrays_with_a_computed_index_stay_arrays() {
        let mut names = Namer::new();
        let a = names.fresh("v_pt");
        let i = names.fresh("v_i");
        let mut body = vec![
            array(CType::INT, &a, 4),
            Stmt::assign(CExpr::var(&a).index(CExpr::Int(0)), CExpr::Int(1)),
            Stmt::assign(CExpr::var(&i), CExpr::var(&a).index(CExpr::var(&i))),
        ];
        let before = body.clone();
        scalarize(&mut body, &a, &mut names);
        assert_eq!(body, before);
        // an index past the end is left alone too
        let mut body = vec![
            array(CType::INT, &a, 1),
            Stmt::assign(CExpr::var(&a).index(CExpr::Int(1)), CExpr::Int(1)),
        ];
        let before = body.clone();
        scalarize(&mut body, &a, &mut names);
        assert_eq!(body, before);
    }
}
