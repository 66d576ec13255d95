//! Vector lanes that nothing reads are not carried through memory.
//!
//! A lane of a vector that no later read needs is dead, and the OpenCL compiler drops its
//! arithmetic by itself while the value stays in registers. It cannot once the vector is stored:
//! n-body's accumulator goes through local memory and a temporary buffer before `advance` reads
//! its lanes 0 to 2 (positions and velocities keep their w), so the w lane's multiply-add ran
//! once per interaction for nothing. This pass finds, over one kernel, the lanes of each vector
//! variable, local or private array of vectors, and kernel-internal buffer that some read can
//! reach (demanded lanes, a backward fixpoint through lane-wise arithmetic, lane selections,
//! vector literals, copies, array elements and `vloadW`/`vstoreW` of a buffer), and stores a
//! vector variable into memory with its undemanded lanes replaced by zero: `a[i] = acc`
//! becomes `a[i] = (float4)(acc.s0, acc.s1, acc.s2, 0.0f)`, after which the lane's chain of
//! arithmetic has no use. What every read sees is unchanged. (Assigning only the live lanes in
//! the loop as well, `acc.s012 = acc.s012 + ...`, takes the w lane's multiply-add out of
//! NVIDIA's PTX too, yet measured slower on the H200: n-body 12.65 ms against 11.64, so the
//! loop keeps whole-vector arithmetic.)
//!
//! Anything else that names a variable or array (a call other than a lane-wise built-in, a
//! cast, `dot`, a store to a kernel parameter, a pointer use of an array) demands all its lanes.
//! A buffer is the kernel's own (`internal`: a temporary that no other kernel and not the host
//! reads) only where the generator says so, and it is followed only when every access to it is
//! `vloadW` or a `vstoreW` at an offset that is a multiple of `W` by its form, so that lane `k`
//! of every access is element `k` modulo `W`.

use super::inline::Types;
use crate::ast::{BinOp, CType, Expr, Param, Scalar, Stmt, UnOp};
use std::collections::{BTreeMap, BTreeSet};

const ALL: u16 = u16::MAX;

/// Replaces the undemanded lanes of vector variables stored into memory by zero (see the
/// module doc). `internal` names the global buffers only this kernel reads.
pub(super) fn drop_dead_lanes(body: &mut [Stmt], params: &[Param], internal: &BTreeSet<String>) {
    let types = Types::of_kernel(body, params);
    let mut d = Demand {
        types: &types,
        arrays: BTreeSet::new(),
        buffers: BTreeMap::new(),
        want: BTreeMap::new(),
        changed: false,
    };
    for (name, (ty, array)) in types.vars() {
        if let (CType::Vector(..), true) = (ty, array) {
            d.arrays.insert(name.clone());
        }
    }
    for b in internal {
        if let Some(w) = buffer_width(body, b) {
            d.buffers.insert(b.clone(), w);
        }
    }
    loop {
        d.changed = false;
        d.stmts(body);
        if !d.changed {
            break;
        }
    }
    mask_stores(body, &d);
    narrow_dots(body, &types);
}

/// `dot(r, r)` of `r = (float4)(x, y, z, 0.0f)` is `dot(r.s012, r.s012)`: a lane that is the
/// constant +0 in either operand adds `+0` to the sum, which the compiler may not drop (`-0 +
/// 0` is `+0`), and only the sign of a zero sum can differ. n-body's distance vector has such a
/// lane.
fn narrow_dots(body: &mut [Stmt], types: &Types) {
    let mut zeros = BTreeMap::new();
    let mut assigned = BTreeSet::new();
    visit_stores(body, &mut |s| match s {
        Stmt::Decl {
            name,
            init: Some(Expr::VecLit(_, xs)),
            ..
        } => {
            let z = (xs.iter().enumerate())
                .filter(|(_, x)| is_plus_zero(x))
                .fold(0u16, |z, (k, _)| z | 1 << k);
            zeros.insert(name.to_string(), z);
        }
        Stmt::Assign { lhs, .. } => {
            let mut r = lhs;
            while let Expr::Index(b, _) | Expr::Field(b, _) = r {
                r = b;
            }
            if let Expr::Var(v) = r {
                assigned.insert(v.to_string());
            }
        }
        Stmt::Asm(a) => {
            for w in a.written() {
                let mut r = w;
                while let Expr::Index(b, _) | Expr::Field(b, _) = r {
                    r = b;
                }
                if let Expr::Var(v) = r {
                    assigned.insert(v.to_string());
                }
            }
        }
        Stmt::Decl { .. }
        | Stmt::Call(_)
        | Stmt::For { .. }
        | Stmt::If { .. }
        | Stmt::Block(_)
        | Stmt::Barrier(_)
        | Stmt::VStore { .. } => {}
    });
    zeros.retain(|v, z| *z != 0 && !assigned.contains(v));
    if zeros.is_empty() {
        return;
    }
    crate::ast::for_each_expr_mut(body, &mut |e| narrow(e, &zeros, types));
}

fn is_plus_zero(e: &Expr) -> bool {
    match e {
        Expr::Float(f) => *f == 0.0 && f.is_sign_positive(),
        Expr::Double(f) => *f == 0.0 && f.is_sign_positive(),
        Expr::TypedInt(..)
        | Expr::Var(_)
        | Expr::Int(_)
        | Expr::Index(..)
        | Expr::Field(..)
        | Expr::Unary(..)
        | Expr::Binary(..)
        | Expr::Call(..)
        | Expr::Cast(..)
        | Expr::Select(..)
        | Expr::VecLit(..)
        | Expr::Sym(_) => false,
    }
}

fn narrow(e: &mut Expr, zeros: &BTreeMap<String, u16>, types: &Types) {
    e.children_mut().into_iter().for_each(|c| narrow(c, zeros, types));
    let Expr::Call(f, xs) = e else { return };
    if f != "dot" || xs.len() != 2 || !xs.iter().all(|x| matches!(x, Expr::Var(_))) {
        return;
    }
    let Some(CType::Vector(_, w)) = types.of(&xs[0]) else {
        return;
    };
    let drop = (xs.iter())
        .filter_map(|x| {
            if let Expr::Var(v) = x {
                zeros.get(v.as_str())
            } else {
                None
            }
        })
        .fold(0u16, |z, d| z | d);
    let keep: Vec<u32> = (0..u32::from(w)).filter(|k| drop & (1 << k) == 0).collect();
    // OpenCL's `dot` takes 2, 3 or 4 lanes
    if !(2..=3).contains(&keep.len()) {
        return;
    }
    let sel: String = keep
        .iter()
        .map(|k| std::char::from_digit(*k, 16).unwrap_or('0'))
        .collect();
    for x in xs.iter_mut() {
        *x = x.clone().field(format!("s{sel}"));
    }
}

/// Demanded lanes per variable, array and followed buffer (a bit per lane).
struct Demand<'a> {
    types: &'a Types,
    /// Local and private arrays of vectors.
    arrays: BTreeSet<String>,
    /// Internal buffers every access reads or writes as `W`-lane vectors, with `W`.
    buffers: BTreeMap<String, u8>,
    want: BTreeMap<String, u16>,
    changed: bool,
}

impl Demand<'_> {
    fn is_vector_var(&self, v: &str) -> bool {
        matches!(self.types.var(v), Some((CType::Vector(..), false)))
    }

    /// Whether `v` is a vector variable, array or buffer whose lanes are followed.
    fn followed(&self, v: &str) -> bool {
        self.is_vector_var(v) || self.arrays.contains(v) || self.buffers.contains_key(v)
    }

    fn add(&mut self, v: &str, m: u16) {
        if !self.followed(v) {
            return;
        }
        let w = self.want.entry(v.to_string()).or_default();
        if *w | m != *w {
            *w |= m;
            self.changed = true;
        }
    }

    /// The lanes of `v` some read needs (all for what is not followed).
    fn of(&self, v: &str) -> u16 {
        if self.followed(v) {
            self.want.get(v).copied().unwrap_or(0)
        } else {
            ALL
        }
    }

    fn is_vector(&self, e: &Expr) -> bool {
        matches!(self.types.of(e), Some(CType::Vector(..)))
    }

    /// Lanes `m` of the value of `e` are needed: what that needs of its parts.
    fn expr(&mut self, e: &Expr, m: u16) {
        if m == 0 {
            return;
        }
        match e {
            Expr::Var(v) => {
                // an array or buffer named other than by an element is read in unknown ways
                let m = if self.is_vector_var(v.as_str()) { m } else { ALL };
                self.add(v.as_str(), m);
            }
            Expr::Index(b, i) => {
                self.expr(i, ALL);
                if let Expr::Var(a) = &**b {
                    if self.arrays.contains(a.as_str()) {
                        self.add(a.as_str(), m);
                        return;
                    }
                }
                // a whole vector read through the aligned form of a `vloadW`
                if let Some((_, a)) = aligned_read(b) {
                    if self.buffers.contains_key(a) {
                        self.add(a, m);
                        return;
                    }
                }
                self.expr(b, ALL);
            }
            Expr::Field(a, f) => match lane(f) {
                Some(k) => self.expr(a, 1 << k),
                None => self.expr(a, ALL),
            },
            Expr::Unary(UnOp::Neg, a) => self.expr(a, m),
            Expr::Binary(BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div, a, b) if self.is_vector(e) => {
                self.lanewise(&[&**a, &**b], m);
            }
            Expr::VecLit(CType::Vector(_, w), xs) if xs.len() == usize::from(*w) => {
                for (k, x) in xs.iter().enumerate() {
                    if m & (1 << k) != 0 {
                        self.expr(x, ALL);
                    }
                }
            }
            Expr::Select(c, a, b) if !self.is_vector(c) => {
                self.expr(c, ALL);
                self.expr(a, m);
                self.expr(b, m);
            }
            Expr::Call(f, xs) => {
                if let (Some(_), [i, Expr::Var(b)]) = (f.strip_prefix("vload"), &xs[..]) {
                    if self.buffers.contains_key(b.as_str()) {
                        self.expr(i, ALL);
                        self.add(b.as_str(), m);
                        return;
                    }
                }
                if is_lanewise(f) && self.is_vector(e) {
                    self.lanewise(&xs.iter().collect::<Vec<_>>(), m);
                } else {
                    xs.iter().for_each(|x| self.expr(x, ALL));
                }
            }
            Expr::Int(_)
            | Expr::Float(_)
            | Expr::Double(_)
            | Expr::TypedInt(..)
            | Expr::Sym(_)
            | Expr::Unary(UnOp::Not | UnOp::BitNot, _)
            | Expr::Binary(..)
            | Expr::Cast(..)
            | Expr::Select(..)
            | Expr::VecLit(..) => e.children().for_each(|c| self.expr(c, ALL)),
        }
    }

    /// The operands of a lane-wise operation whose lanes `m` are needed: the same lanes of a
    /// vector operand, all of a scalar one (it is spread over every lane).
    fn lanewise(&mut self, xs: &[&Expr], m: u16) {
        for x in xs {
            let m = if self.is_vector(x) { m } else { ALL };
            self.expr(x, m);
        }
    }

    /// The indices and pointers of an assignment target are read whole.
    fn target(&mut self, lhs: &Expr) {
        match lhs {
            Expr::Index(b, i) => {
                self.expr(i, ALL);
                self.target(b);
            }
            Expr::Field(b, _) => self.target(b),
            Expr::Var(_) | Expr::Sym(_) => {}
            Expr::Int(_)
            | Expr::Float(_)
            | Expr::Double(_)
            | Expr::TypedInt(..)
            | Expr::Unary(..)
            | Expr::Binary(..)
            | Expr::Call(..)
            | Expr::Cast(..)
            | Expr::Select(..)
            | Expr::VecLit(..) => self.expr(lhs, ALL),
        }
    }

    fn stmts(&mut self, body: &[Stmt]) {
        for s in body {
            match s {
                Stmt::Decl { name, init, .. } => {
                    if let Some(e) = init {
                        self.expr(e, self.of(name.as_str()));
                    }
                }
                Stmt::Assign { lhs, rhs, .. } => match lhs {
                    Expr::Var(x) => self.expr(rhs, self.of(x.as_str())),
                    Expr::Index(b, i) if matches!(&**b, Expr::Var(a) if self.arrays.contains(a.as_str())) => {
                        let Expr::Var(a) = &**b else { unreachable!("matched") };
                        self.expr(i, ALL);
                        self.expr(rhs, self.of(a.as_str()));
                    }
                    Expr::Int(_)
                    | Expr::Float(_)
                    | Expr::Double(_)
                    | Expr::TypedInt(..)
                    | Expr::Index(..)
                    | Expr::Field(..)
                    | Expr::Unary(..)
                    | Expr::Binary(..)
                    | Expr::Call(..)
                    | Expr::Cast(..)
                    | Expr::Select(..)
                    | Expr::VecLit(..)
                    | Expr::Sym(_) => {
                        self.target(lhs);
                        self.expr(rhs, ALL);
                    }
                },
                Stmt::Call(e) => self.expr(e, ALL),
                Stmt::For {
                    init, cond, step, body, ..
                } => {
                    self.expr(init, ALL);
                    self.expr(cond, ALL);
                    self.expr(&step.1, ALL);
                    self.stmts(body);
                }
                Stmt::If { cond, then, els } => {
                    self.expr(cond, ALL);
                    self.stmts(then);
                    self.stmts(els);
                }
                Stmt::Block(b) => self.stmts(b),
                Stmt::Barrier(_) => {}
                Stmt::VStore { value, ptr, offset, .. } => {
                    self.expr(offset, ALL);
                    let followed = matches!(ptr, Expr::Var(b) if self.buffers.contains_key(b.as_str()));
                    if followed {
                        self.expr(value, self.of(&ptr.to_string()));
                    } else {
                        self.expr(ptr, ALL);
                        self.expr(value, ALL);
                    }
                }
                // the instruction reads every lane of what it names (scalars: registers)
                Stmt::Asm(a) => {
                    for (e, _, dir) in a.operands() {
                        if dir != crate::ptx::Dir::In {
                            self.target(e);
                        }
                        self.expr(e, ALL);
                    }
                }
            }
        }
    }
}

/// Lane `k` of a field `sK`.
fn lane(f: &str) -> Option<u32> {
    let k = f.strip_prefix('s').filter(|k| k.len() == 1)?;
    u32::from_str_radix(k, 16).ok()
}

/// Built-ins that compute each lane from the same lane of their vector operands.
fn is_lanewise(f: &str) -> bool {
    matches!(
        f,
        "sqrt"
            | "rsqrt"
            | "exp"
            | "log"
            | "sin"
            | "cos"
            | "fabs"
            | "pow"
            | "fma"
            | "fmin"
            | "fmax"
            | "fmod"
            | "min"
            | "max"
    )
}

/// `W` when every use of the buffer `b` in `body` is `vloadW(i, b)` or `vstoreW(v, 0, b + off)`
/// with `off` a multiple of `W` by its form, for one `W`.
fn buffer_width(body: &[Stmt], b: &str) -> Option<u8> {
    let mut widths = BTreeSet::new();
    let mut ok = true;
    let mut stray = 0usize;
    crate::ast::for_each_expr(body, &mut |e| stray += bare_uses(e, b, &mut widths));
    visit_stores(body, &mut |s| {
        if let Stmt::VStore { w, ptr, offset, .. } = s {
            if matches!(ptr, Expr::Var(p) if p.as_str() == b) {
                widths.insert(*w);
                ok &= multiple_of(offset, i64::from(*w));
                // the pointer itself was counted as a bare use
                stray -= 1;
            }
        }
    });
    match widths.iter().collect::<Vec<_>>()[..] {
        [w] if ok && stray == 0 => Some(*w),
        _ => None,
    }
}

/// `((const global T W*)b)`, the pointer of an aligned vector read `((const global T W*)b)[i]`
/// (what a `vloadW(i, b)` becomes where known sizes prove it aligned): `W` and `b`.
fn aligned_read(e: &Expr) -> Option<(u8, &str)> {
    if let Expr::Cast(CType::Ptr { elem, .. }, p) = e {
        if let (CType::Vector(_, w), Expr::Var(b)) = (&**elem, &**p) {
            return Some((*w, b.as_str()));
        }
    }
    None
}

/// Uses of `b` in `e` other than as the pointer of a `vloadW` (or of its aligned form), whose
/// widths go to `widths`.
fn bare_uses(e: &Expr, b: &str, widths: &mut BTreeSet<u8>) -> usize {
    if let Expr::Index(p, i) = e {
        if let Some((w, p)) = aligned_read(p) {
            if p == b {
                widths.insert(w);
                return bare_uses(i, b, widths);
            }
        }
    }
    if let Expr::Call(f, xs) = e {
        if let (Some(w), [i, Expr::Var(p)]) = (f.strip_prefix("vload"), &xs[..]) {
            if p.as_str() == b {
                match w.parse() {
                    Ok(w) => {
                        widths.insert(w);
                    }
                    Err(_) => return 1,
                }
                return bare_uses(i, b, widths);
            }
        }
    }
    let here = usize::from(matches!(e, Expr::Var(v) if v.as_str() == b));
    here + e.children().map(|c| bare_uses(c, b, widths)).sum::<usize>()
}

fn visit_stores(body: &[Stmt], f: &mut dyn FnMut(&Stmt)) {
    for s in body {
        f(s);
        match s {
            Stmt::For { body, .. } | Stmt::Block(body) => visit_stores(body, f),
            Stmt::If { then, els, .. } => {
                visit_stores(then, f);
                visit_stores(els, f);
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

/// Whether `e` is a multiple of `w` by its form: a constant multiple, a product with one, or
/// a sum or difference of such.
fn multiple_of(e: &Expr, w: i64) -> bool {
    match e {
        Expr::Int(k) => k % w == 0,
        Expr::Binary(BinOp::Mul, a, b) => multiple_of(a, w) || multiple_of(b, w),
        Expr::Binary(BinOp::Add | BinOp::Sub, a, b) => multiple_of(a, w) && multiple_of(b, w),
        Expr::Var(_)
        | Expr::Float(_)
        | Expr::Double(_)
        | Expr::TypedInt(..)
        | Expr::Index(..)
        | Expr::Field(..)
        | Expr::Unary(..)
        | Expr::Binary(..)
        | Expr::Call(..)
        | Expr::Cast(..)
        | Expr::Select(..)
        | Expr::VecLit(..)
        | Expr::Sym(_) => false,
    }
}

/// Stores of a vector variable into a followed array or buffer keep only its demanded lanes.
fn mask_stores(body: &mut [Stmt], d: &Demand) {
    for s in body {
        match s {
            Stmt::Assign { lhs, rhs, .. } => {
                if let Expr::Index(b, _) = lhs {
                    if let Expr::Var(a) = &**b {
                        if d.arrays.contains(a.as_str()) {
                            mask(rhs, d.of(a.as_str()), d);
                        }
                    }
                }
            }
            Stmt::VStore { value, ptr, .. } => {
                if let Expr::Var(b) = ptr {
                    if d.buffers.contains_key(b.as_str()) {
                        mask(value, d.of(b.as_str()), d);
                    }
                }
            }
            Stmt::For { body, .. } | Stmt::Block(body) => mask_stores(body, d),
            Stmt::If { then, els, .. } => {
                mask_stores(then, d);
                mask_stores(els, d);
            }
            Stmt::Decl { .. } | Stmt::Call(_) | Stmt::Barrier(_) | Stmt::Asm(_) => {}
        }
    }
}

/// A vector variable `v` stored where only lanes `m` are read becomes `(T)(v.s0, .., 0)`.
fn mask(value: &mut Expr, m: u16, d: &Demand) {
    let Expr::Var(v) = &*value else { return };
    let Some((ty @ CType::Vector(s, w), false)) = d.types.var(v.as_str()) else {
        return;
    };
    let full = (1u32 << w) - 1;
    let m = u32::from(m) & full;
    if m == full || m == 0 {
        return;
    }
    let zero = match s {
        Scalar::Int | Scalar::UInt | Scalar::Long | Scalar::ULong => Expr::Int(0),
        Scalar::Float => Expr::Float(0.0),
        Scalar::Double => Expr::Double(0.0),
    };
    let lanes = (0..u32::from(*w))
        .map(|k| {
            if m & (1 << k) != 0 {
                value.clone().lane(k)
            } else {
                zero.clone()
            }
        })
        .collect();
    *value = Expr::VecLit(ty.clone(), lanes);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ast::{AssignOp, Kernel};
    use crate::namer::{Ident, Namer};
    use crate::print;
    use ir::AddressSpace;

    const F4: CType = CType::Vector(Scalar::Float, 4);

    fn v(i: &Ident) -> Expr {
        Expr::var(i)
    }

    fn global(name: &Ident) -> Param {
        Param {
            ty: CType::Ptr {
                space: AddressSpace::Global,
                elem: Box::new(CType::FLOAT),
                is_const: false,
                restrict: true,
            },
            name: name.clone(),
        }
    }

    /// A loop folding `vload4(i, xs)` into `acc`, stored into the local array `a`, then
    /// `a[0]` read into the internal buffer `t`, then `read(vload4(0, t))` stored to `out[0]`.
    fn kernel(read: impl Fn(Expr) -> Expr, internal: bool) -> String {
        kernel_loading(|t| Expr::call("vload4", vec![Expr::Int(0), v(t)]), read, internal)
    }

    /// As [`kernel`], `t` read back by `load(t)`.
    fn kernel_loading(load: impl Fn(&Ident) -> Expr, read: impl Fn(Expr) -> Expr, internal: bool) -> String {
        let mut n = Namer::new();
        let (xs, t, out, a, acc, i) = (
            n.exact("v_xs"),
            n.exact("v_t"),
            n.exact("v_out"),
            n.fresh("v_a"),
            n.fresh("v_acc"),
            n.fresh("v_i"),
        );
        let mut body = vec![
            Stmt::Decl {
                ty: F4,
                name: a.clone(),
                space: Some(AddressSpace::Local),
                len: Some(1),
                init: None,
                is_const: false,
            },
            Stmt::decl(F4, &acc, Expr::VecLit(F4, vec![Expr::Float(0.0); 4])),
            Stmt::For {
                var: i.clone(),
                init: Expr::Int(0),
                cond: Expr::bin(BinOp::Lt, v(&i), Expr::Int(8)),
                step: (AssignOp::Add, Expr::Int(1)),
                unroll: false,
                body: vec![Stmt::assign(
                    v(&acc),
                    Expr::bin(BinOp::Add, v(&acc), Expr::call("vload4", vec![v(&i), v(&xs)])),
                )],
            },
            Stmt::assign(v(&a).index(Expr::Int(0)), v(&acc)),
            Stmt::VStore {
                w: 4,
                value: v(&a).index(Expr::Int(0)),
                ptr: v(&t),
                offset: Expr::Int(0),
            },
            Stmt::assign(v(&out).index(Expr::Int(0)), read(load(&t))),
        ];
        let params = vec![global(&xs), global(&t), global(&out)];
        let internal: BTreeSet<String> = if internal {
            [t.to_string()].into()
        } else {
            BTreeSet::new()
        };
        drop_dead_lanes(&mut body, &params, &internal);
        print::kernel_text(&Kernel {
            name: n.exact("K"),
            work_group: None,
            params,
            body,
        })
    }

    #[test]
    fn a_lane_no_read_reaches_is_not_stored() {
        // out[0] = (vload4(0, t) * 2.0f).s1 + vload4(0, t).s0: lanes 0 and 1 are read
        let text = kernel(
            |x| {
                Expr::bin(
                    BinOp::Add,
                    Expr::bin(BinOp::Mul, x.clone(), Expr::Float(2.0)).lane(1),
                    x.lane(0),
                )
            },
            true,
        );
        assert!(
            text.contains("v_a_1[0] = (float4)(v_acc_1.s0, v_acc_1.s1, 0.0f, 0.0f);"),
            "{text}"
        );
    }

    #[test]
    fn an_aligned_vector_read_is_followed_like_its_vload() {
        // `((const global float4*)t)[0]`, what `vload4(0, t)` becomes for known sizes
        let aligned = |t: &Ident| {
            let ty = CType::Ptr {
                space: AddressSpace::Global,
                elem: Box::new(F4),
                is_const: true,
                restrict: false,
            };
            Expr::Cast(ty, Box::new(v(t))).index(Expr::Int(0))
        };
        let text = kernel_loading(aligned, |x| Expr::bin(BinOp::Mul, x, Expr::Float(2.0)).lane(2), true);
        assert!(
            text.contains("v_a_1[0] = (float4)(0.0f, 0.0f, v_acc_1.s2, 0.0f);"),
            "{text}"
        );
    }

    #[test]
    fn every_lane_is_stored_where_one_may_be_read() {
        // dot reads every lane
        let text = kernel(|x| Expr::call("dot", vec![x.clone(), x]), true);
        assert!(text.contains("v_a_1[0] = v_acc_1;"), "{text}");
        // a buffer that is not the kernel's own may be read by the host
        let text = kernel(|x| x.lane(0), false);
        assert!(text.contains("v_a_1[0] = v_acc_1;"), "{text}");
    }

    #[test]
    fn a_constant_zero_lane_leaves_dot() {
        let mut n = Namer::new();
        let (r, d, x) = (n.fresh("v_r"), n.fresh("v_d"), n.exact("v_x"));
        let lit = |w: Expr| Expr::VecLit(F4, vec![v(&x), v(&x), w, Expr::Float(0.0)]);
        let mut body = vec![
            Stmt::decl(F4, &r, lit(Expr::Float(1.0))),
            Stmt::decl(CType::FLOAT, &d, Expr::call("dot", vec![v(&r), v(&r)])),
        ];
        let params = vec![Param {
            ty: CType::FLOAT,
            name: x.clone(),
        }];
        let types = Types::of_kernel(&body, &params);
        narrow_dots(&mut body, &types);
        let text = print::kernel_text(&Kernel {
            name: n.exact("K"),
            work_group: None,
            params: params.clone(),
            body,
        });
        assert!(text.contains("dot(v_r_1.s012, v_r_1.s012)"), "{text}");
        // only a literal +0 lane is recognized
        let mut body = vec![
            Stmt::decl(F4, &r, Expr::VecLit(F4, vec![v(&x), v(&x), v(&x), Expr::Float(-0.0)])),
            Stmt::decl(CType::FLOAT, &d, Expr::call("dot", vec![v(&r), v(&r)])),
        ];
        let types = Types::of_kernel(&body, &params);
        narrow_dots(&mut body, &types);
        assert_eq!(
            body[1],
            Stmt::decl(CType::FLOAT, &d, Expr::call("dot", vec![v(&r), v(&r)]))
        );
    }
}
