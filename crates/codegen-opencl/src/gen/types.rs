//! Types and lengths at C level: type-level length variables become C size variables, run-time
//! lengths their capacities (for allocation), and tuple types struct typedefs.
//! Indices and lengths (`ArithExpr`) enter the kernel tree through `arith` only.

use super::*;

impl Gen<'_> {
    /// Replaces type-level length variables by their C-level lengths.
    pub(super) fn c_type_of(&self, t: &Type) -> Result<Type> {
        let mut t = t.clone();
        let mut names = BTreeSet::new();
        collect_len_vars(&t, &mut names);
        for n in names {
            let Some(by) = self.lengths.get(&n) else {
                return Err(Diagnostic::new(
                    Span::default(),
                    format!("internal: length {n} is not bound during code generation"),
                ));
            };
            t = t.subst(&n, by);
        }
        Ok(t)
    }

    pub(super) fn cty(&self, e: ExprId) -> Result<Type> {
        self.c_type_of(self.info.ty(e))
    }

    /// Array lengths with run-time lengths replaced by their capacities (for allocation).
    pub(super) fn capacity_type(&self, t: &Type, e: ExprId) -> Result<Type> {
        let mut t = t.clone();
        let mut names = BTreeSet::new();
        collect_len_vars(&t, &mut names);
        for n in names {
            if let Some(cap) = self.caps.get(&n) {
                t = t.subst(&n, cap);
            }
        }
        let mut left = BTreeSet::new();
        collect_len_vars(&t, &mut left);
        if left.iter().any(|n| !n.starts_with("v_") || self.caps.contains_key(n)) {
            return Err(self.err(e, format!("cannot bound the size of {t} for allocation")));
        }
        Ok(t)
    }

    pub(super) fn capacity(&self, len: &ArithExpr) -> ArithExpr {
        let mut l = len.clone();
        for (n, cap) in &self.caps {
            if l.mentions(n) {
                l = l.subst(n, cap);
            }
        }
        l
    }

    /// Capacity (an upper bound over the size variables) of an existential value's length:
    /// the length of the filter input it comes from, carried through packs and lets.
    pub(super) fn capacity_len(&self, e: ExprId) -> Result<ArithExpr> {
        Ok(self.c_len(&self.tcap(e, 0)?))
    }

    pub(super) fn capacity_len_rows(&self, e: ExprId) -> Result<ArithExpr> {
        Ok(self.c_len(&self.row_cap(e, 0)?))
    }

    /// A type-level length (over size variables) at C level.
    pub(super) fn c_len(&self, l: &ArithExpr) -> ArithExpr {
        let mut l = l.clone();
        for (s, c) in &self.size_names {
            if l.mentions(s) {
                l = l.subst(s, &ArithExpr::size_var(c.as_str()));
            }
        }
        l
    }

    pub(super) fn tcap(&self, e: ExprId, depth: usize) -> Result<ArithExpr> {
        if depth > 64 {
            return Err(self.err(e, "cannot bound the length of this filter result"));
        }
        let array_len = |t: &Type| match t {
            Type::Array(_, n) => Ok(n.clone()),
            t @ Type::Scalar(_)
            | t @ Type::Vector(..)
            | t @ Type::Tuple(_)
            | t @ Type::Exists(_)
            | t @ Type::Fun(..) => Err(self.err(e, format!("internal: expected an array, found {t}"))),
        };
        if self.info.packs.contains(&e) {
            return self.close_caps(&array_len(self.info.ty(e))?, depth);
        }
        match self.prog.expr(e) {
            Expr::Prim {
                prim: Prim::Filter(_),
                args,
            } => self.close_caps(&array_len(self.info.ty(args[1]))?, depth),
            Expr::Prim {
                prim: Prim::To(_),
                args,
            } => self.tcap(args[0], depth + 1),
            Expr::Pack(inner) => self.close_caps(&array_len(self.info.ty(*inner))?, depth),
            Expr::Let { body, .. } => self.tcap(*body, depth + 1),
            Expr::Op { op: Op::At, args } => self.row_cap(args[1], depth + 1),
            Expr::Var(_)
            | Expr::Lit(_)
            | Expr::Lambda { .. }
            | Expr::Prim { .. }
            | Expr::Op { .. }
            | Expr::If { .. } => Err(self.err(e, "the OpenCL back end cannot bound the length of this filter result")),
        }
    }

    /// Replaces run-time lengths by their capacities.
    pub(super) fn close_caps(&self, l: &ArithExpr, depth: usize) -> Result<ArithExpr> {
        let mut l = l.clone();
        for v in l.free_vars() {
            if let Some(cap) = self.param_caps.get(&v) {
                l = l.subst(&v, cap);
                continue;
            }
            let binder = self.info.unpacks.iter().find(|(_, x)| **x == v).map(|(b, _)| *b);
            let Some(binder) = binder else { continue };
            let cap = match binder {
                Binder::Let(letnode) => match self.prog.expr(letnode) {
                    Expr::Let { value, .. } => self.tcap(*value, depth + 1)?,
                    Expr::Var(_)
                    | Expr::Lit(_)
                    | Expr::Lambda { .. }
                    | Expr::Prim { .. }
                    | Expr::Op { .. }
                    | Expr::If { .. }
                    | Expr::Pack(_) => return Err(self.err(letnode, "internal: unpack binder")),
                },
                Binder::Param(lam, _) => {
                    let map = (0..self.prog.exprs.len() as u32).map(ExprId).find(
                        |id| matches!(self.prog.expr(*id), Expr::Prim { args, .. } if args.first() == Some(&lam)),
                    );
                    match map.map(|m| self.prog.expr(m)) {
                        Some(Expr::Prim { args, .. }) if args.len() > 1 => self.row_cap(args[1], depth + 1)?,
                        _ => return Err(self.err(lam, "internal: row parameter")),
                    }
                }
            };
            l = l.subst(&v, &cap);
        }
        Ok(l)
    }

    /// Capacity of the rows of an array of filter results.
    pub(super) fn row_cap(&self, e: ExprId, depth: usize) -> Result<ArithExpr> {
        if depth > 64 {
            return Err(self.err(e, "cannot bound the length of these filter results"));
        }
        match self.prog.expr(e) {
            Expr::Prim {
                prim: Prim::Map(_),
                args,
            } => match self.prog.expr(args[0]) {
                Expr::Lambda { body, .. } => self.tcap(*body, depth + 1),
                Expr::Var(_)
                | Expr::Lit(_)
                | Expr::Prim { .. }
                | Expr::Op { .. }
                | Expr::If { .. }
                | Expr::Let { .. }
                | Expr::Pack(_) => Err(self.err(e, "internal: map")),
            },
            Expr::Prim {
                prim: Prim::To(_),
                args,
            } => self.row_cap(args[0], depth + 1),
            Expr::Let { body, .. } => self.row_cap(*body, depth + 1),
            Expr::Var(v) => {
                let def = (0..self.prog.exprs.len() as u32)
                    .map(ExprId)
                    .find(|id| matches!(self.prog.expr(*id), Expr::Let { var, .. } if var == v));
                match def.map(|d| self.prog.expr(d)) {
                    Some(Expr::Let { value, .. }) => self.row_cap(*value, depth + 1),
                    _ => Err(self.err(
                        e,
                        "the OpenCL back end supports arrays of filter results only when bound by let",
                    )),
                }
            }
            Expr::Lit(_)
            | Expr::Lambda { .. }
            | Expr::Prim { .. }
            | Expr::Op { .. }
            | Expr::If { .. }
            | Expr::Pack(_) => Err(self.err(
                e,
                "the OpenCL back end supports arrays of filter results only as the direct result of a map",
            )),
        }
    }

    /// The length of the rows of an array of arrays.
    pub(super) fn row_len(&self, e: ExprId) -> Result<ArithExpr> {
        match self.cty(e)? {
            Type::Array(row, _) => match *row {
                Type::Array(_, m) => Ok(m),
                t @ Type::Scalar(_)
                | t @ Type::Vector(..)
                | t @ Type::Tuple(_)
                | t @ Type::Exists(_)
                | t @ Type::Fun(..) => Err(self.err(e, format!("internal: join of {t}"))),
            },
            t @ Type::Scalar(_)
            | t @ Type::Vector(..)
            | t @ Type::Tuple(_)
            | t @ Type::Exists(_)
            | t @ Type::Fun(..) => Err(self.err(e, format!("internal: join of {t}"))),
        }
    }

    /// The element type and width of an array of vectors.
    pub(super) fn vector_of(&self, e: ExprId) -> Result<(Scalar, u8)> {
        match self.cty(e)? {
            Type::Array(v, _) => match *v {
                Type::Vector(s, w) => Ok((s, w)),
                t @ Type::Scalar(_)
                | t @ Type::Tuple(_)
                | t @ Type::Array(..)
                | t @ Type::Exists(_)
                | t @ Type::Fun(..) => Err(self.err(e, format!("internal: asScalar of {t}"))),
            },
            t @ Type::Scalar(_)
            | t @ Type::Vector(..)
            | t @ Type::Tuple(_)
            | t @ Type::Exists(_)
            | t @ Type::Fun(..) => Err(self.err(e, format!("internal: asScalar of {t}"))),
        }
    }

    pub(super) fn len_of(&self, e: ExprId) -> Result<ArithExpr> {
        match self.cty(e)? {
            Type::Array(_, n) => Ok(n),
            t @ Type::Scalar(_)
            | t @ Type::Vector(..)
            | t @ Type::Tuple(_)
            | t @ Type::Exists(_)
            | t @ Type::Fun(..) => Err(self.err(e, format!("expected an array, found {t}"))),
        }
    }

    /// The C type of a scalar, vector or tuple value (tuples become struct typedefs, named by
    /// the namer after their components).
    pub(super) fn ctype(&mut self, t: &Type) -> Result<CType> {
        let scalar = |g: &mut Self, s: Scalar| {
            if s == Scalar::Double {
                g.needs_fp64 = true;
            }
            ast_scalar(s)
        };
        match t {
            Type::Scalar(s) => Ok(CType::Scalar(scalar(self, *s))),
            Type::Vector(s, w) => Ok(CType::Vector(scalar(self, *s), *w)),
            Type::Tuple(ts) => {
                let key = c_type(t);
                if let Some((_, id)) = self.struct_ids.iter().find(|(k, _)| *k == key) {
                    return Ok(CType::Struct(id.clone()));
                }
                let mut fields = vec![];
                for c in ts {
                    match c {
                        Type::Scalar(_) | Type::Vector(..) | Type::Tuple(_) => fields.push(self.ctype(c)?),
                        Type::Array(..) | Type::Exists(_) | Type::Fun(..) => {
                            return Err(Diagnostic::new(
                                Span::default(),
                                format!("internal: tuples containing {c} are not value types in C"),
                            ))
                        }
                    }
                }
                let name = self.names.exact(&key);
                self.struct_ids.push((key, name.clone()));
                self.structs.push(StructDef {
                    name: name.clone(),
                    fields,
                });
                Ok(CType::Struct(name))
            }
            Type::Array(..) | Type::Exists(_) | Type::Fun(..) => Err(Diagnostic::new(
                Span::default(),
                format!("internal: {t} is not a value type in C"),
            )),
        }
    }

    /// The C type of a buffer's elements (vectors are stored as their scalars).
    pub(super) fn buffer_ctype(&mut self, elem: &Type) -> Result<CType> {
        match elem {
            Type::Vector(s, _) => self.ctype(&Type::Scalar(*s)),
            t @ Type::Scalar(_)
            | t @ Type::Tuple(_)
            | t @ Type::Array(..)
            | t @ Type::Exists(_)
            | t @ Type::Fun(..) => self.ctype(t),
        }
    }
}

pub(super) fn ast_scalar(s: Scalar) -> ast::Scalar {
    match s {
        Scalar::Float => ast::Scalar::Float,
        Scalar::Double => ast::Scalar::Double,
        // `bool` is stored and computed as `int`
        Scalar::Int | Scalar::Bool => ast::Scalar::Int,
        Scalar::Uint => ast::Scalar::UInt,
        Scalar::Long => ast::Scalar::Long,
        Scalar::Ulong => ast::Scalar::ULong,
    }
}

thread_local! {
    /// The size variables built into the kernels being generated ([`EmitOptions::known_sizes`]
    /// at C level). `arith` is a free function called from every module of the generator, so
    /// the one `generate` call in progress on this thread sets them ([`Specialised::enter`]).
    static SPECIALISED: std::cell::RefCell<Vec<(String, i64)>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Whether the kernels being generated have sizes built in.
pub(super) fn specialising() -> bool {
    SPECIALISED.with(|s| !s.borrow().is_empty())
}

/// Sizes built into the kernels while it lives; the previous ones come back when it drops
/// (also when generation returns early with an error).
pub(super) struct Specialised(Vec<(String, i64)>);

impl Specialised {
    pub(super) fn enter(sizes: Vec<(String, i64)>) -> Specialised {
        Specialised(SPECIALISED.with(|s| std::mem::replace(&mut *s.borrow_mut(), sizes)))
    }
}

impl Drop for Specialised {
    fn drop(&mut self) {
        let old = std::mem::take(&mut self.0);
        SPECIALISED.with(|s| *s.borrow_mut() = old);
    }
}

/// `e` with the specialised sizes substituted (inside index variables' ranges too) and
/// simplified again: a division by the row length, a bound `i < F` or a stride `F * i` of
/// known `F` fold to constants the OpenCL compiler can unroll by and strength-reduce.
pub(super) fn specialised(e: &ArithExpr) -> ArithExpr {
    SPECIALISED.with(|s| {
        let s = s.borrow();
        let mut e = e.clone();
        for (name, v) in s.iter() {
            if e.mentions(name) {
                e = e.subst(name, &ArithExpr::cst(*v));
            }
        }
        e
    })
}

/// `t` with the specialised sizes substituted in its lengths ([`specialised`]).
pub(super) fn specialised_type(t: &Type) -> Type {
    t.map_lengths(&specialised)
}

/// Whether an array of type `t` may be kept in private memory: its lengths constants, also
/// those the specialised sizes fix, and within `typeck::MAX_PRIVATE_VALUES`.
pub(super) fn fits_private(t: &Type) -> bool {
    typeck::private_values(&specialised_type(t)).is_some_and(|v| v <= typeck::MAX_PRIVATE_VALUES)
}

/// An index or length at C level: the one conversion of an `ArithExpr` into the tree, where
/// known sizes are substituted ([`Specialised`]). Sums print with `-` for negative terms,
/// products with their coefficient first.
pub(super) fn arith(e: &ArithExpr) -> CExpr {
    c_arith(&specialised(e))
}

fn c_arith(e: &ArithExpr) -> CExpr {
    use arith::ExprKind;
    let bin = |op, a: &ArithExpr, b: &ArithExpr| CExpr::bin(op, c_arith(a), c_arith(b));
    match e.kind() {
        ExprKind::Cst(c) => CExpr::Int(*c),
        ExprKind::Var { name, .. } => CExpr::Sym(name.clone()),
        ExprKind::Sum(ts) => {
            let mut terms = ts.iter();
            let first = terms.next().map_or(CExpr::Int(0), c_arith);
            terms.fold(first, |acc, t| match negated(t) {
                Some(m) => CExpr::bin(BinOp::Sub, acc, m),
                None => CExpr::bin(BinOp::Add, acc, c_arith(t)),
            })
        }
        ExprKind::Prod(fs) => match negated(e) {
            Some(m) => CExpr::un(UnOp::Neg, m),
            None => fs
                .iter()
                .map(c_arith)
                .reduce(|a, b| CExpr::bin(BinOp::Mul, a, b))
                .unwrap_or(CExpr::Int(1)),
        },
        ExprKind::Div(a, b) | ExprKind::ExactDiv(a, b) => bin(BinOp::Div, a, b),
        ExprKind::Mod(a, b) => bin(BinOp::Rem, a, b),
        ExprKind::Pow(a, b) => CExpr::call("pow", vec![c_arith(a), c_arith(b)]),
        ExprKind::Min(a, b) => CExpr::call("min", vec![c_arith(a), c_arith(b)]),
        ExprKind::Max(a, b) => CExpr::call("max", vec![c_arith(a), c_arith(b)]),
        ExprKind::RawAdd(a, b) => bin(BinOp::Add, a, b),
        ExprKind::RawSub(a, b) => bin(BinOp::Sub, a, b),
        ExprKind::RawMul(a, b) => bin(BinOp::Mul, a, b),
    }
}

/// For a term `-m` (a negative constant, or a product with a negative coefficient), `m`.
fn negated(t: &ArithExpr) -> Option<CExpr> {
    use arith::ExprKind;
    match t.kind() {
        ExprKind::Cst(c) if *c < 0 && *c != i64::MIN => Some(CExpr::Int(-c)),
        ExprKind::Prod(fs) => match fs.first().map(|f| f.kind()) {
            Some(ExprKind::Cst(c)) if *c < 0 && *c != i64::MIN => {
                let rest = fs[1..].iter().map(c_arith);
                let rest = rest.reduce(|a, b| CExpr::bin(BinOp::Mul, a, b))?;
                Some(if *c == -1 {
                    rest
                } else {
                    CExpr::bin(BinOp::Mul, CExpr::Int(-c), rest)
                })
            }
            Some(_) | None => None,
        },
        ExprKind::Var { .. }
        | ExprKind::Cst(_)
        | ExprKind::Sum(_)
        | ExprKind::Div(..)
        | ExprKind::ExactDiv(..)
        | ExprKind::Mod(..)
        | ExprKind::Pow(..)
        | ExprKind::Min(..)
        | ExprKind::Max(..)
        | ExprKind::RawAdd(..)
        | ExprKind::RawSub(..)
        | ExprKind::RawMul(..) => None,
    }
}

/// Struct of arrays. An array whose elements are tuples holding arrays (`[([float]3, float)]N`)
/// is stored as one buffer per tuple component, each with the outer lengths
/// (`[[float]3]N` and `[float]N`), and seen through a `zip` of their views (a `tuple` of them
/// when there is no outer array; a `zip` hands all indices to each component, so it pairs
/// elements below any number of outer arrays). Structs with the arrays inline were not chosen: a C struct
/// cannot hold an array whose length is a size variable, and a component buffer keeps the rows
/// of one component contiguous, so reading a row is the same access as reading any array.
/// Returns the outer lengths and the component types (with those lengths) when `t` is stored
/// that way, `None` when it is stored whole.
pub(crate) fn soa_components(t: &Type) -> Option<(Vec<ArithExpr>, Vec<Type>)> {
    let (dims, elem) = dims_of(t);
    let Type::Tuple(cs) = &elem else { return None };
    if !array_in_tuple(&elem) {
        return None;
    }
    let wrap = |c: &Type| dims.iter().rev().fold(c.clone(), |t, n| Type::array(t, n.clone()));
    Some((dims.clone(), cs.iter().map(wrap).collect()))
}

/// The types of the buffers a value of type `t` is stored in, in allocation order (depth
/// first over tuple components): `[t]` when it is stored whole. The host decodes a result from
/// these buffers and zips them back into tuples (see `soa_components`).
pub fn storage_parts(t: &Type) -> Vec<Type> {
    match soa_components(t) {
        Some((_, cs)) => cs.iter().flat_map(storage_parts).collect(),
        None => vec![t.clone()],
    }
}

/// Why a type cannot be stored as a struct of arrays, if it cannot: a run-time length inside a
/// tuple has no length buffer to live in. (Any number of outer arrays is fine: `View::Zip`
/// hands every index it is read at to each component, so a zip of `[[a]m]n` and `[[b]m]n`
/// read at `[i][j]` is the tuple of both at `[i][j]`.)
pub(crate) fn soa_unsupported(t: &Type) -> Option<&'static str> {
    let (_, cs) = soa_components(t)?;
    if cs.iter().any(exist_below) {
        return Some("tuples containing filter results are not supported yet by the OpenCL back end");
    }
    cs.iter().find_map(soa_unsupported)
}

impl Gen<'_> {
    /// `e` when its value is stored as a struct of arrays and it is no computation of its own
    /// (a tuple of arrays, or a copy of a view of one): written component by component into
    /// the component views of `dest`. Returns whether it did.
    pub(super) fn gen_parts(&mut self, e: ExprId, dest: &Dest) -> Result<bool> {
        let ty = self.cty(e)?;
        if soa_components(&ty).is_none() {
            return Ok(false);
        }
        match self.prog.expr(e).clone() {
            Expr::Op { op: Op::Tuple, args } => {
                for (c, a) in args.iter().enumerate() {
                    let d = Dest {
                        view: dest.view.component(c),
                        len: None,
                        rows: false,
                    };
                    self.gen_into(*a, &d)?;
                }
                Ok(true)
            }
            Expr::Var(_)
            | Expr::Op {
                op: Op::Get(_) | Op::At,
                ..
            }
            | Expr::Prim {
                prim:
                    Prim::Zip
                    | Prim::Slide(..)
                    | Prim::Pad(..)
                    | Prim::PadClamp(..)
                    | Prim::ReorderStride(_)
                    | Prim::Reverse
                    | Prim::Generate(_),
                ..
            } => {
                let src = self.value(e)?;
                if self.level() == Level::Group {
                    return Err(self.err(
                        e,
                        "copying an array directly inside `mapWrg` would be done by every work-item; use `mapLcl` to copy it",
                    ));
                }
                self.copy_parts(e, &src, &dest.view, &ty)?;
                Ok(true)
            }
            Expr::Op { .. }
            | Expr::Lit(_)
            | Expr::Lambda { .. }
            | Expr::If { .. }
            | Expr::Let { .. }
            | Expr::Pack(_)
            | Expr::Prim { .. } => Ok(false),
        }
    }

    /// Copies a value of type `ty` between views, one component buffer at a time.
    pub(super) fn copy_parts(&mut self, e: ExprId, src: &Rc<View>, dst: &Rc<View>, ty: &Type) -> Result<()> {
        if let Some((dims, _)) = soa_components(ty).filter(|_| self.level() == Level::Top) {
            if dims.is_empty() {
                // The components' lengths differ and a kernel has one launch size per
                // dimension: one work-item copies the whole tuple.
                return self.emit_loop(e, MapKind::Glb(0), &ArithExpr::cst(1), |g, _| {
                    g.copy_parts(e, src, dst, ty)
                });
            }
        }
        let Some((_, cs)) = soa_components(ty) else {
            let kind = if self.level() == Level::Top {
                MapKind::Glb(0)
            } else {
                MapKind::Seq
            };
            return self.copy_dims(e, src, dst, &dims_of(ty).0, vec![], kind);
        };
        for (c, ct) in cs.iter().enumerate() {
            self.copy_parts(e, &src.component(c), &dst.component(c), ct)?;
        }
        Ok(())
    }
}
