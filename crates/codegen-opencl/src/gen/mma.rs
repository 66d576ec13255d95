//! Tensor-core tiles of a matrix product (`--precision tf32` on an NVIDIA device of compute
//! capability 8.0 or later, [`crate::EmitOptions::tensor_cores`]).
//!
//! `rewrite`'s tensor-core variant (`mma-block-*`, `lower/mma.rs`) computes each 128 × 128 tile
//! of `C = X · Yᵀ` in one work-group, written as the product of the tile at work-group level:
//! `mapLcl1 (λr. join (mapLcl0 (λc. reduceSeq (λacc y. acc + get0 y · get1 y) 0.0f (zip r c))
//! cols)) rows`. On any device that is an ordinary (slow) per-element product; here, where
//! the options allow tensor cores, that exact form of product is generated as warp tiles of
//! `mma.sync.m16n8k8` TF32 fragments instead (`ptx::PtxOp::MmaM16n8k8Tf32`):
//!
//! - a work-group of 8 warps (32 × 8 work-items) as 2 × 4 warps, each warp a 64 × 32 part of the
//!   tile: 4 × 4 fragments of 16 × 8, 64 FP32 accumulators per work-item, in registers;
//! - K in steps of [`TK`]: both operand tiles are staged in local memory, each element
//!   rounded to TF32 once on its way (`cvt.rna.tf32.f32`); a tile is stored K-major (rows of
//!   `TK + 4`) when its rows lie along K in global memory, else along M (rows of `128 + 8`), so
//!   the global reads of consecutive work-items are consecutive and the fragment reads (lane
//!   `4g + t` reads row `g`, column `t`) fall in 32 distinct banks either way;
//! - the next step's elements are read from global memory into registers before the current
//!   step's fragments are multiplied (software pipelining: the copy of the next K tile overlaps
//!   the tensor-core work);
//! - the epilogue stores each work-item's accumulators through the destination view, at the
//!   places the fragment layout gives them (lane `4g + t` holds rows `g`, `g + 8` and columns
//!   `2t`, `2t + 1` of each 16 × 8 fragment).
//!
//! The form is recognised exactly (the operator `+`, the product of the two zipped elements,
//! the initial value `0.0f`, floats, 128 × 128 tiles, a `K` built into the kernel and a multiple
//! of [`TK`]); anything else is generated as written.

use super::*;
use crate::ptx::{Asm, PtxOp};

/// Rows and columns of the tile a work-group computes.
const TILE: i64 = 128;
/// Steps of K staged in local memory at once.
const TK: i64 = 32;
/// Warps along the tile's rows and columns.
const WARPS_M: i64 = 2;
const WARPS_N: i64 = 4;
const WARP: i64 = 32;
/// Fragments of 16 × 8 per warp along rows and columns (a warp's part is 64 × 32).
const MI: i64 = TILE / WARPS_M / 16;
const NI: i64 = TILE / WARPS_N / 8;
/// Floats added to a staged row: K-major rows of `TK + 4` put the 8 rows × 4 columns a
/// fragment read touches in 32 distinct banks (4g + t), rows along M of `TILE + 8` likewise
/// (8t + g).
const PAD_K: i64 = 4;
const PAD_M: i64 = 8;

/// The product of one tile, as recognised in the program.
pub(super) struct MmaTile {
    /// The tile's rows of `X` (`[128][K]`) and of `Y` (`[128][K]`), and the row binder.
    rows: ExprId,
    cols: ExprId,
    k: i64,
}

/// How a staged tile is laid out in local memory.
#[derive(Clone, Copy, PartialEq)]
enum Layout2 {
    /// `s[m][k]`, rows of `TK + PAD_K`: the tile's rows lie along K in global memory.
    KMajor,
    /// `s[k][m]`, rows of `TILE + PAD_M`: its columns do.
    MMajor,
}

impl Layout2 {
    fn len(self) -> i64 {
        match self {
            Layout2::KMajor => TILE * (TK + PAD_K),
            Layout2::MMajor => TK * (TILE + PAD_M),
        }
    }

    /// The offset of element `(m, k)` of the tile.
    fn at(self, m: &ArithExpr, k: &ArithExpr) -> ArithExpr {
        let c = ArithExpr::cst;
        match self {
            Layout2::KMajor => m.mul(&c(TK + PAD_K)).add(k),
            Layout2::MMajor => k.mul(&c(TILE + PAD_M)).add(m),
        }
    }
}

impl Gen<'_> {
    /// The tile product that `mapLcl1 f xs` is, when tensor cores may compute it.
    pub(super) fn mma_tile(&self, kind: MapKind, f: ExprId, xs: ExprId) -> Result<Option<MmaTile>> {
        if !self.tensor_cores || kind != MapKind::Lcl(1) || self.level() != Level::Group {
            return Ok(None);
        }
        let inside_groups_only = self
            .k
            .as_ref()
            .is_some_and(|k| k.active.iter().all(|a| matches!(a, MapKind::Wrg(_))));
        let room = self.wg_limit.total >= (WARP * WARPS_M * WARPS_N) as usize
            && self.wg_limit.per_dim[0] >= WARP as usize
            && self.wg_limit.per_dim[1] >= (WARPS_M * WARPS_N) as usize
            && self.wg_limit.local_mem >= (4 * 2 * Layout2::KMajor.len().max(Layout2::MMajor.len())) as usize;
        if !inside_groups_only || !room {
            return Ok(None);
        }
        let Expr::Lambda { params, body } = self.prog.expr(f) else {
            return Ok(None);
        };
        let Some(&r) = params.first().filter(|_| params.len() == 1) else {
            return Ok(None);
        };
        let Expr::Prim { prim: Prim::Join, args } = self.prog.expr(*body) else {
            return Ok(None);
        };
        let Expr::Prim {
            prim: Prim::Map(MapKind::Lcl(0)),
            args: inner,
        } = self.prog.expr(args[0])
        else {
            return Ok(None);
        };
        let (g, cols) = (inner[0], inner[1]);
        if !self.is_dot(g, r) {
            return Ok(None);
        }
        let float_tile = |t: Type| {
            let Type::Array(row, n) = specialised_type(&t) else {
                return None;
            };
            let Type::Array(elem, k) = *row else { return None };
            (n.as_cst() == Some(TILE) && *elem == Type::Scalar(Scalar::Float))
                .then(|| k.as_cst())
                .flatten()
        };
        let (Some(k), Some(kc)) = (float_tile(self.cty(xs)?), float_tile(self.cty(cols)?)) else {
            return Ok(None);
        };
        if k != kc || k <= 0 || k % TK != 0 {
            return Ok(None);
        }
        Ok(Some(MmaTile { rows: xs, cols, k }))
    }

    /// Whether `g` is `λc. reduceSeq (λacc y. acc + get0 y · get1 y) 0.0f (zip r c)` (or with
    /// `zip c r`, the sum or the product commuted, the product bound by a `let`).
    fn is_dot(&self, g: ExprId, r: VarId) -> bool {
        let p = self.prog;
        let Expr::Lambda { params, body } = p.expr(g) else {
            return false;
        };
        let [c] = params[..] else { return false };
        let Expr::Prim {
            prim: Prim::Reduce(ReduceKind::Seq),
            args,
        } = p.expr(*body)
        else {
            return false;
        };
        let (f, z, zipped) = (args[0], args[1], args[2]);
        let zero = matches!(p.expr(z), Expr::Lit(Lit::Float(x)) if *x == 0.0);
        let var = |e: ExprId| if let Expr::Var(v) = p.expr(e) { Some(*v) } else { None };
        let Expr::Prim { prim: Prim::Zip, args } = p.expr(zipped) else {
            return false;
        };
        let [x0, x1] = args[..] else { return false };
        let pair = (var(x0), var(x1));
        if !zero || !(pair == (Some(r), Some(c)) || pair == (Some(c), Some(r))) {
            return false;
        }
        let Expr::Lambda { params, body } = p.expr(f) else {
            return false;
        };
        let [acc, y] = params[..] else { return false };
        // `get0 y · get1 y` (either order)
        let get = |a: ExprId| match p.expr(a) {
            Expr::Op { op: Op::Get(k), args } if var(args[0]) == Some(y) => Some(*k),
            Expr::Var(_)
            | Expr::Lit(_)
            | Expr::Lambda { .. }
            | Expr::Prim { .. }
            | Expr::Op { .. }
            | Expr::If { .. }
            | Expr::Let { .. }
            | Expr::Pack(_) => None,
        };
        let is_product = |e: ExprId| {
            let Expr::Op { op: Op::Mul, args } = p.expr(e) else {
                return false;
            };
            let [u, w] = args[..] else { return false };
            matches!((get(u), get(w)), (Some(0), Some(1)) | (Some(1), Some(0)))
        };
        let sum_of = |e: ExprId, term: &dyn Fn(ExprId) -> bool| {
            let Expr::Op { op: Op::Add, args } = p.expr(e) else {
                return false;
            };
            let [u, w] = args[..] else { return false };
            (var(u) == Some(acc) && term(w)) || (var(w) == Some(acc) && term(u))
        };
        if let Expr::Let {
            var: v, value, body, ..
        } = p.expr(*body)
        {
            let v = *v;
            return is_product(*value) && sum_of(*body, &|e| var(e) == Some(v));
        }
        sum_of(*body, &is_product)
    }

    /// How the tile `view` (`[128][K]`) lies in global memory: along K when the element after
    /// `(m, k)` along K is the next one in its buffer.
    fn staged_layout(&self, view: &Rc<View>) -> Layout2 {
        let m = ArithExpr::var("m", Range::upto(ArithExpr::cst(TILE)));
        let k = ArithExpr::var("k", Range::upto(ArithExpr::cst(TK)));
        let at = |k: &ArithExpr| match view.read(&[m.clone(), k.clone()]) {
            Ok(Read::Expr(Access::Elem { buf, idx })) => Some((buf, specialised(&idx))),
            _ => None,
        };
        match (at(&k), at(&k.add(&ArithExpr::cst(1)))) {
            (Some((b0, i0)), Some((b1, i1))) if b0 == b1 && i1.sub(&i0).as_cst() == Some(1) => Layout2::KMajor,
            (Some((b0, i0)), Some(_)) => {
                let next_m = view.read(&[m.add(&ArithExpr::cst(1)), k.clone()]);
                match next_m {
                    Ok(Read::Expr(Access::Elem { buf, idx }))
                        if buf == b0 && specialised(&idx).sub(&i0).as_cst() == Some(1) =>
                    {
                        Layout2::MMajor
                    }
                    _ => Layout2::KMajor,
                }
            }
            _ => Layout2::KMajor,
        }
    }

    /// Generates the tile product `t` into `dest` (`[128][128]`) with tensor cores (module doc).
    pub(super) fn gen_mma_tile(&mut self, e: ExprId, t: &MmaTile, dest: &Dest) -> Result<()> {
        // everything below is one work-item's own code, its ids explicit
        let old = self.set_level(Level::Item);
        let r = self.gen_mma_items(e, t, dest);
        self.set_level(old);
        r
    }

    fn gen_mma_items(&mut self, e: ExprId, t: &MmaTile, dest: &Dest) -> Result<()> {
        let c = ArithExpr::cst;
        let xv = self.value(t.rows)?;
        let yv = self.value(t.cols)?;
        let (xl, yl) = (self.staged_layout(&xv), self.staged_layout(&yv));
        {
            let k = self.k.as_mut().expect("inside a kernel");
            k.local[0] = Some(WARP as usize);
            k.local[1] = Some((WARPS_M * WARPS_N) as usize);
            k.local[2] = None;
            k.notes.push(format!(
                "tensor cores: {TILE}×{TILE} tiles of {WARPS_M}×{WARPS_N} warps, m16n8k8 TF32 fragments, K in steps of {TK} staged in local memory ({} and {})",
                match xl {
                    Layout2::KMajor => "x K-major",
                    Layout2::MMajor => "x M-major",
                },
                match yl {
                    Layout2::KMajor => "y K-major",
                    Layout2::MMajor => "y N-major",
                }
            ));
        }
        // the two staged tiles, at kernel scope
        let mut staged = vec![];
        for (hint, layout) in [("lA", xl), ("lB", yl)] {
            let name = self.fresh(hint);
            self.k.as_mut().expect("inside a kernel").decls.push(Stmt::Decl {
                ty: CType::FLOAT,
                name: name.clone(),
                space: Some(AddressSpace::Local),
                len: Some(layout.len() as usize),
                init: None,
                is_const: false,
            });
            staged.push(name);
        }
        let (la, lb) = (staged[0].clone(), staged[1].clone());
        // work-item ids: lane within the warp (dimension 0), warp (dimension 1)
        let id = |g: &mut Self, hint: &str, dim: i64, n: i64| {
            let v = g.fresh(hint);
            g.push(Stmt::decl(
                CType::INT,
                &v,
                CExpr::cast(CType::INT, CExpr::call("get_local_id", vec![CExpr::Int(dim)])),
            ));
            ArithExpr::var(v.as_str(), Range::upto(c(n)))
        };
        let lane = id(self, "lane", 0, WARP);
        let warp = id(self, "warp", 1, WARPS_M * WARPS_N);
        let item = lane.add(&warp.mul(&c(WARP)));
        let (g4, t4) = (lane.div(&c(4)), lane.rem(&c(4)));
        let (wm, wn) = (warp.div(&c(WARPS_N)), warp.rem(&c(WARPS_N)));
        // accumulators [MI][NI][4], zero
        let mut acc = vec![];
        for _ in 0..MI * NI * 4 {
            let v = self.fresh("acc");
            self.push(Stmt::decl(CType::FLOAT, &v, CExpr::Float(0.0)));
            acc.push(v);
        }
        // each work-item moves `per` elements of each tile per step of K
        let group = WARP * WARPS_M * WARPS_N;
        let per = TILE * TK / group;
        let place = |layout: Layout2, s: i64| -> (ArithExpr, ArithExpr) {
            // element s·group + item of the tile read in its global order
            let flat = item.add(&c(s * group));
            match layout {
                Layout2::KMajor => (flat.div(&c(TK)), flat.rem(&c(TK))),
                Layout2::MMajor => (flat.rem(&c(TILE)), flat.div(&c(TILE))),
            }
        };
        let mut regs: Vec<(Ident, Ident)> = vec![];
        for _ in 0..per {
            let (a, b) = (self.fresh("ga"), self.fresh("gb"));
            for v in [&a, &b] {
                self.push(Stmt::Decl {
                    ty: CType::FLOAT,
                    name: v.clone(),
                    space: None,
                    len: None,
                    init: None,
                    is_const: false,
                });
            }
            regs.push((a, b));
        }
        // global reads of step `kt` into the registers
        let load = |g: &mut Self, kt: &ArithExpr| -> Result<()> {
            for (s, (ra, rb)) in regs.iter().enumerate() {
                for (view, layout, reg) in [(&xv, xl, ra), (&yv, yl, rb)] {
                    let (m, k) = place(layout, s as i64);
                    let read = view.read(&[m, kt.mul(&c(TK)).add(&k)]).map_err(|m| g.err(e, m.0))?;
                    let x = g.expr_of(read, e)?;
                    g.push(Stmt::assign(CExpr::var(reg), x));
                }
            }
            Ok(())
        };
        load(self, &c(0))?;
        let steps = t.k / TK;
        let kv = self.fresh("kt");
        let kt = ArithExpr::var(kv.as_str(), Range::upto(c(steps)));
        self.open_for(&kv, CExpr::Int(0), CExpr::Int(steps), CExpr::Int(1), false);
        // the registers, rounded to TF32, into the staged tiles
        let bits = self.fresh("tf32");
        self.push(Stmt::Decl {
            ty: CType::Scalar(ast::Scalar::UInt),
            name: bits.clone(),
            space: None,
            len: None,
            init: None,
            is_const: false,
        });
        for (s, (ra, rb)) in regs.iter().enumerate() {
            for (buf, layout, reg) in [(&la, xl, ra), (&lb, yl, rb)] {
                let (m, k) = place(layout, s as i64);
                self.push_asm(e, PtxOp::CvtRnaTf32, vec![CExpr::var(&bits), CExpr::var(reg)])?;
                let at = arith(&layout.at(&m, &k));
                let rounded = CExpr::call("as_float", vec![CExpr::var(&bits)]);
                self.push(Stmt::assign(CExpr::var(buf).index(at), rounded));
            }
        }
        self.push(Stmt::Barrier(Fence::Local));
        // the next step's global reads, in flight while this step multiplies
        self.open_if(CExpr::bin(BinOp::Lt, CExpr::var(&kv), CExpr::Int(steps - 1)));
        load(self, &kt.add(&c(1)))?;
        self.close();
        for ks in 0..TK / 8 {
            let k0 = c(ks * 8).add(&t4);
            let k4 = k0.add(&c(4));
            let frag = |g: &mut Self, buf: &Ident, layout: Layout2, m: &ArithExpr, k: &ArithExpr| {
                let v = g.fresh("f");
                let x = CExpr::var(buf).index(arith(&layout.at(m, k)));
                g.push(Stmt::decl(
                    CType::Scalar(ast::Scalar::UInt),
                    &v,
                    CExpr::call("as_uint", vec![x]),
                ));
                v
            };
            let mut a = vec![];
            for mi in 0..MI {
                let r0 = wm.mul(&c(TILE / WARPS_M)).add(&c(mi * 16)).add(&g4);
                let r8 = r0.add(&c(8));
                a.push([
                    frag(self, &la, xl, &r0, &k0),
                    frag(self, &la, xl, &r8, &k0),
                    frag(self, &la, xl, &r0, &k4),
                    frag(self, &la, xl, &r8, &k4),
                ]);
            }
            let mut b = vec![];
            for ni in 0..NI {
                let n0 = wn.mul(&c(TILE / WARPS_N)).add(&c(ni * 8)).add(&g4);
                b.push([frag(self, &lb, yl, &n0, &k0), frag(self, &lb, yl, &n0, &k4)]);
            }
            for (mi, am) in a.iter().enumerate() {
                for (ni, bn) in b.iter().enumerate() {
                    let at = (mi * b.len() + ni) * 4;
                    let mut ops: Vec<CExpr> = acc[at..at + 4].iter().map(CExpr::var).collect();
                    ops.extend(am.iter().map(CExpr::var));
                    ops.extend(bn.iter().map(CExpr::var));
                    self.push_asm(e, PtxOp::MmaM16n8k8Tf32, ops)?;
                }
            }
        }
        self.push(Stmt::Barrier(Fence::Local));
        self.close();
        // the accumulators through the destination: lane 4g + t holds rows g, g + 8 and
        // columns 2t, 2t + 1 of each fragment
        for mi in 0..MI {
            for ni in 0..NI {
                let row = wm.mul(&c(TILE / WARPS_M)).add(&c(mi * 16)).add(&g4);
                let col = wn.mul(&c(TILE / WARPS_N)).add(&c(ni * 8)).add(&t4.mul(&c(2)));
                let at = ((mi * NI + ni) * 4) as usize;
                for (q, (dr, dc)) in [(0, 0), (0, 1), (8, 0), (8, 1)].into_iter().enumerate() {
                    let v = Read::Expr(Access::Value(CExpr::var(&acc[at + q])));
                    self.write(&dest.view, &[row.add(&c(dr)), col.add(&c(dc))], &v, e)?;
                }
            }
        }
        Ok(())
    }

    /// Pushes one PTX instruction; operands that do not fit it are a bug of this module.
    fn push_asm(&mut self, e: ExprId, op: PtxOp, operands: Vec<CExpr>) -> Result<()> {
        let asm = Asm::new(op, operands).map_err(|m| self.err(e, format!("internal: {m}")))?;
        self.push(Stmt::Asm(asm));
        Ok(())
    }
}
