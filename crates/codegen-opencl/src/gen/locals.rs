//! Private and local arrays rewritten once a kernel is generated: arrays indexed only by
//! constants become scalars (registers), and arrays read as vectors become arrays of vectors.

use super::*;

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
        Stmt::Decl { .. }
        | Stmt::Assign { .. }
        | Stmt::Call(_)
        | Stmt::Barrier(_)
        | Stmt::VStore { .. }
        | Stmt::Asm(_) => None,
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
                Stmt::Decl { .. }
                | Stmt::Assign { .. }
                | Stmt::Call(_)
                | Stmt::Barrier(_)
                | Stmt::VStore { .. }
                | Stmt::Asm(_) => {}
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
            Stmt::Decl { .. }
            | Stmt::Assign { .. }
            | Stmt::Call(_)
            | Stmt::Barrier(_)
            | Stmt::VStore { .. }
            | Stmt::Asm(_) => {}
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
            Stmt::Decl { .. }
            | Stmt::Assign { .. }
            | Stmt::Call(_)
            | Stmt::Barrier(_)
            | Stmt::VStore { .. }
            | Stmt::Asm(_) => {}
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
            | Stmt::VStore { .. }
            | Stmt::Asm(_) => None,
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
            Stmt::Decl { .. } | Stmt::Assign { .. } | Stmt::Call(_) | Stmt::VStore { .. } | Stmt::Asm(_) => {
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
