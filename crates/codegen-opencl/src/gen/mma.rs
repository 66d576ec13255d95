//! Tensor-core tiles of a matrix product (`--precision tf32` on an NVIDIA device of compute
//! capability 8.0 or later, [`crate::EmitOptions::tensor_cores`]).
//!
//! `rewrite`'s tensor-core variant (`mma-block-*`, `lower/mma.rs`) computes each `BM × BN`
//! tile of `C = X · Yᵀ` in one work-group, written as the product of the tile at work-group
//! level: `mapLcl1 (λr. join (mapLcl0 (λc. reduceSeq (λacc y. acc + get0 y · get1 y) 0.0f (zip
//! r c)) cols)) rows`. On any device that is an ordinary (slow) per-element product; here,
//! where the options allow tensor cores, that exact form of product is generated as warp
//! tiles of `mma.sync.m16n8k8` TF32 fragments instead (`ptx::PtxOp::MmaM16n8k8Tf32`):
//!
//! - the tile's sides, read from its type, give the work-group: one warp per 64 × 64 part of
//!   the tile (`BM / 64 × BN / 64` warps: 128 × 128 is 4, 128 × 256 and 256 × 128 are 8), each
//!   4 × 8 fragments of 16 × 8, 128 FP32 accumulators per work-item, in registers: a fragment
//!   of `X` serves 8 products and one of `Y` 4, so local memory is read once per product;
//! - K in steps of `TK` (32, 16 or 8: the longest whose two stages fit the device's local
//!   memory): both operand tiles are staged in local memory, double-buffered. The next step's
//!   elements are read from global memory into registers (as `float4` where the view is
//!   contiguous and aligned) before the current step's fragments are multiplied, and stored
//!   as they are into the other stage after them, so one barrier per step separates a
//!   stage's writes from its reads. The tensor cores truncate the stored floats to TF32,
//!   which `ir::precision::TF32_UNIT` bounds. Measured on the H200 (`mm` 4096³, hand-edited
//!   kernels, `bench/results/tensor-cores-nvidia-h200-2026-12-02.md`, runs D and E): 1.067
//!   ms with each element rounded on its way (`cvt.rna.tf32.f32`), 1.014 ms without; the
//!   fragments, products and barriers alone take 0.656 ms, the loop's global reads 0.21 ms
//!   and its stores 0.20 ms more; copying the `float4`s by `cp.async` instead was slower
//!   (1.150 ms against 1.075 ms in one command);
//! - a tile is stored K-major (rows of `TK` floats, unpadded, each row's steps of 8 rotated
//!   along it by a few steps that depend on the row) when its rows lie along K in global
//!   memory, else along M (rows of `BM + 4`). A fragment's columns `t` and `t + 4` are read
//!   from the adjacent places `2t` and `2t + 1` of the step of 8 (the same permutation of K
//!   for both operands, so the sum is the same): one `float2` per row for a K-major tile. The
//!   rotation (a swizzle, [`Layout2::at`]) puts a half-warp's `float2` reads and the `float4`
//!   stores of 8 work-items in distinct banks; padded rows (stride 24) left those stores
//!   2-way conflicted and cost a third more local memory;
//! - the epilogue stores each work-item's accumulators through the destination view, at the
//!   places the fragment layout gives them (lane `4g + t` holds rows `g`, `g + 8` and columns
//!   `2t`, `2t + 1` of each 16 × 8 fragment).
//!
//! The form is recognised exactly (the operator `+`, the product of the two zipped elements,
//! the initial value `0.0f`, floats, tiles whose sides are multiples of 64, a `K` built into
//! the kernel and a multiple of a step that fits); anything else is generated as written.

use super::*;
use crate::ptx::{Asm, PtxOp};

const WARP: i64 = 32;
/// Rows and columns of a warp's part of the tile, and its fragments of 16 × 8 along each.
const WARP_M: i64 = 64;
const WARP_N: i64 = 64;
const MI: i64 = WARP_M / 16;
const NI: i64 = WARP_N / 8;
/// Copies of each staged tile: the step being multiplied and the next one being stored.
const STAGES: i64 = 2;
/// Steps of K, longest first; the longest whose stages fit local memory is taken.
const K_STEPS: [i64; 3] = [32, 16, 8];
/// Floats added to a row along M: `BM + 4` puts the reads of places `2t` (or `2t + 1`) and
/// `g` of a warp in banks `8t + g` (+ 4), all distinct.
const PAD_M: i64 = 4;

/// The product of one tile, as recognised in the program.
pub(super) struct MmaTile {
    /// The tile's rows of `X` (`[BM][K]`) and of `Y` (`[BN][K]`).
    rows: ExprId,
    cols: ExprId,
    shape: Shape,
}

/// The kernel's sizes for one tile (module doc).
#[derive(Clone, Copy)]
struct Shape {
    bm: i64,
    bn: i64,
    k: i64,
    tk: i64,
}

impl Shape {
    fn warps(self) -> i64 {
        (self.bm / WARP_M) * (self.bn / WARP_N)
    }

    fn items(self) -> i64 {
        self.warps() * WARP
    }

    /// Whether a step of `tk` divides K and every work-item moves an equal share of each
    /// operand's step.
    fn shares(self, tk: i64) -> bool {
        let items = self.items();
        self.k % tk == 0 && (self.bm * tk) % items == 0 && (self.bn * tk) % items == 0
    }
}

/// How a staged tile is laid out in local memory.
#[derive(Clone, Copy, PartialEq)]
enum Layout2 {
    /// `s[m][k]`, rows of `tk` rotated ([`Layout2::at`]): the tile's rows lie along K in
    /// global memory.
    KMajor,
    /// `s[k][m]`, rows of `rows + PAD_M`: its columns do.
    MMajor,
}

/// The longest step of K of [`K_STEPS`] for a `bm × bn` tile over `k`: it divides `k`, the two
/// stages of both operands fit `local_mem` bytes whichever layout each takes, and every
/// work-item of the tile's warps moves an equal share of each operand's step.
fn k_step(bm: i64, bn: i64, k: i64, local_mem: usize) -> Option<i64> {
    let sh = Shape { bm, bn, k, tk: 0 };
    let worst = |rows: i64, tk: i64| Layout2::KMajor.len(rows, tk).max(Layout2::MMajor.len(rows, tk));
    K_STEPS.into_iter().find(|&tk| {
        let bytes = 4 * STAGES * (worst(bm, tk) + worst(bn, tk));
        sh.shares(tk) && bytes as usize <= local_mem
    })
}

/// Bytes of local memory a driver may use beside a kernel's own arrays: NVIDIA's OpenCL counted
/// 16 bytes more than the two stages of both operands for an `mm_nt` kernel whose stages filled
/// its 48 KiB exactly, and refused it (`bench/results/tensor-cores-nvidia-h200-2026-12-02.md`,
/// the last section).
const DRIVER_LOCAL_RESERVE: usize = 256;

/// The longest step of K, at most `sh.tk` (which fits either layout of each operand), whose
/// stages fit `local_mem` with the operands' own `layouts` and [`DRIVER_LOCAL_RESERVE`] to
/// spare; the shortest step of [`K_STEPS`] that divides K where none does.
fn fitted_step(sh: Shape, layouts: [Layout2; 2], local_mem: usize) -> i64 {
    let bytes = |tk: i64| 4 * STAGES * (layouts[0].len(sh.bm, tk) + layouts[1].len(sh.bn, tk));
    K_STEPS
        .into_iter()
        .filter(|&tk| tk <= sh.tk && sh.shares(tk))
        .find(|&tk| bytes(tk) as usize + DRIVER_LOCAL_RESERVE <= local_mem)
        .or_else(|| K_STEPS.into_iter().rev().find(|&tk| tk <= sh.tk && sh.shares(tk)))
        .unwrap_or(sh.tk)
}

impl Layout2 {
    /// Floats of one stage of a `rows × tk` tile (a multiple of 4: stages are `float4`s).
    fn len(self, rows: i64, tk: i64) -> i64 {
        match self {
            Layout2::KMajor => rows * tk,
            Layout2::MMajor => tk * (rows + PAD_M),
        }
    }

    /// The offset of element `(m, k)` of the tile in its stage, in units of `w` floats (1, 2
    /// or 4: `k`, or `m` for an M-major tile, starts a run of `w`), when it is provably one.
    ///
    /// A K-major row holds `tk` floats unpadded, its steps of 8 rotated by [`k_rotation`]
    /// places along the row: the `float4` stores of 8 work-items (two rows at steps of 16)
    /// and the `float2` fragment reads of a half-warp (rows `g` 0–3, places `2t`, `2t + 1`
    /// of one step of 8) then fall in 32 distinct banks, with no floats spent on padding.
    /// An M-major row holds `rows + PAD_M` floats.
    fn at(self, rows: i64, tk: i64, w: i64, m: &ArithExpr, k: &ArithExpr) -> Option<ArithExpr> {
        let c = ArithExpr::cst;
        match self {
            Layout2::KMajor => {
                let kw = k.exact_div(&c(w))?;
                let row = m.mul(&c(tk / w));
                Some(match k_rotation(tk, m) {
                    Some(s) => row.add(&kw.add(&s.mul(&c(8 / w))).rem(&c(tk / w))),
                    None => row.add(&kw),
                })
            }
            Layout2::MMajor => k.mul(&c(rows + PAD_M)).add(m).exact_div(&c(w)),
        }
    }
}

/// The steps of 8 by which row `m` of a K-major tile of `tk` floats a row is rotated:
/// `(m / (32 / tk)) mod (tk / 8)`, so that the rows that share a line of 32 banks, and the
/// four rows of a half-warp's fragment read, hold the same step of 8 in distinct banks;
/// `None` for steps of 8 (one step a row: 4 rows fill the 32 banks as they are).
fn k_rotation(tk: i64, m: &ArithExpr) -> Option<ArithExpr> {
    let c = ArithExpr::cst;
    (tk > 8).then(|| m.div(&c(32 / tk)).rem(&c(tk / 8)))
}

/// One operand's staging: its view, layout, the elements each work-item moves at once (`w`,
/// 4 or 1), the registers they travel in, and the local array of its stages.
struct Staging {
    view: Rc<View>,
    layout: Layout2,
    rows: i64,
    w: i64,
    regs: Vec<Ident>,
    buf: Ident,
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
        if !inside_groups_only {
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
        // `[n][k]` floats, both known: (n, k)
        let float_tile = |t: Type| {
            let Type::Array(row, n) = specialised_type(&t) else {
                return None;
            };
            let Type::Array(elem, k) = *row else { return None };
            (*elem == Type::Scalar(Scalar::Float))
                .then(|| n.as_cst().zip(k.as_cst()))
                .flatten()
        };
        let (Some((bm, k)), Some((bn, kc))) = (float_tile(self.cty(xs)?), float_tile(self.cty(cols)?)) else {
            return Ok(None);
        };
        Ok(self
            .mma_shape(bm, bn, k)
            .filter(|_| k == kc)
            .map(|shape| MmaTile { rows: xs, cols, shape }))
    }

    /// The kernel for a `bm × bn` tile over `k`, if the device's work-groups and local memory
    /// hold it: the longest step of K that divides `k`, whose stages fit with either layout of
    /// each operand, and which every work-item moves an equal share of.
    fn mma_shape(&self, bm: i64, bn: i64, k: i64) -> Option<Shape> {
        if bm <= 0 || bn <= 0 || bm % WARP_M != 0 || bn % WARP_N != 0 {
            return None;
        }
        let warps = (bm / WARP_M) * (bn / WARP_N);
        let room = self.wg_limit.total >= (warps * WARP) as usize
            && self.wg_limit.per_dim[0] >= WARP as usize
            && self.wg_limit.per_dim[1] >= warps as usize;
        if !room {
            return None;
        }
        let tk = k_step(bm, bn, k, self.wg_limit.local_mem)?;
        Some(Shape { bm, bn, k, tk })
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

    /// How the tile `view` (`[rows][K]`) lies in global memory, and whether its elements are
    /// contiguous along that side: K-major when the element after `(m, k)` along K is the next
    /// one in its buffer, M-major when the one after it along M is.
    fn staged_layout(&self, view: &Rc<View>, rows: i64, tk: i64) -> (Layout2, bool) {
        let m = ArithExpr::var("m", Range::upto(ArithExpr::cst(rows)));
        let k = ArithExpr::var("k", Range::upto(ArithExpr::cst(tk)));
        let at = |m: &ArithExpr, k: &ArithExpr| match view.read(&[m.clone(), k.clone()]) {
            Ok(Read::Expr(Access::Elem { buf, idx })) => Some((buf, specialised(&idx))),
            _ => None,
        };
        let next = |a: Option<(String, ArithExpr)>, b: Option<(String, ArithExpr)>| match (a, b) {
            (Some((b0, i0)), Some((b1, i1))) => b0 == b1 && i1.sub(&i0).as_cst() == Some(1),
            _ => false,
        };
        let one = ArithExpr::cst(1);
        if next(at(&m, &k), at(&m, &k.add(&one))) {
            (Layout2::KMajor, true)
        } else if next(at(&m, &k), at(&m.add(&one), &k)) {
            (Layout2::MMajor, true)
        } else {
            (Layout2::KMajor, false)
        }
    }

    /// `(const global float4*)buf` at the place of element `(m, k)` of `view` and the three
    /// after it, when that place is a provable multiple of 4 in a buffer of floats.
    fn global_float4(&self, view: &Rc<View>, m: &ArithExpr, k: &ArithExpr) -> Option<CExpr> {
        let Ok(Read::Expr(Access::Elem { buf, idx })) = view.read(&[m.clone(), k.clone()]) else {
            return None;
        };
        let quarter = specialised(&idx).exact_div(&ArithExpr::cst(4))?;
        Some(self.aligned_vectors(&buf, 4)?.index(arith(&quarter)))
    }

    /// The place `(m, k)` of the first of the `w` elements that a work-item moves as its
    /// `s`-th share of an operand's step: consecutive work-items take consecutive runs of the
    /// tile in its global order.
    fn staged_place(st: &Staging, tk: i64, item: &ArithExpr, items: i64, s: i64) -> (ArithExpr, ArithExpr) {
        let c = ArithExpr::cst;
        let flat = item.add(&c(s * items));
        match st.layout {
            Layout2::KMajor => (flat.div(&c(tk / st.w)), flat.rem(&c(tk / st.w)).mul(&c(st.w))),
            Layout2::MMajor => (flat.rem(&c(st.rows / st.w)).mul(&c(st.w)), flat.div(&c(st.rows / st.w))),
        }
    }

    /// Generates the tile product `t` into `dest` (`[BM][BN]`) with tensor cores (module doc).
    pub(super) fn gen_mma_tile(&mut self, e: ExprId, t: &MmaTile, dest: &Dest) -> Result<()> {
        // everything below is one work-item's own code, its ids explicit
        let old = self.set_level(Level::Item);
        let r = self.gen_mma_items(e, t, dest);
        self.set_level(old);
        r
    }

    fn gen_mma_items(&mut self, e: ExprId, t: &MmaTile, dest: &Dest) -> Result<()> {
        let c = ArithExpr::cst;
        let mut sh = t.shape;
        // the step the operands' own layouts allow, now that their views are known
        let lay = |g: &mut Self, x: ExprId, rows: i64| -> Result<Layout2> {
            let view = g.value(x)?;
            Ok(g.staged_layout(&view, rows, sh.tk).0)
        };
        let layouts = [lay(self, t.rows, sh.bm)?, lay(self, t.cols, sh.bn)?];
        sh.tk = fitted_step(sh, layouts, self.wg_limit.local_mem);
        let (tk, items) = (sh.tk, sh.items());
        let warps_n = sh.bn / WARP_N;
        let steps = sh.k / tk;
        let kv = self.fresh("kt");
        let kt = ArithExpr::var(kv.as_str(), Range::upto(c(steps)));
        let item_name = self.fresh("item");
        let item = ArithExpr::var(item_name.as_str(), Range::upto(c(items)));
        // the two operands' staging
        let mut ops = vec![];
        for (expr, rows, hint) in [(t.rows, sh.bm, "lA"), (t.cols, sh.bn, "lB")] {
            let view = self.value(expr)?;
            let (layout, contiguous) = self.staged_layout(&view, rows, tk);
            let mut st = Staging {
                view,
                layout,
                rows,
                w: 4,
                regs: vec![],
                buf: self.fresh(hint),
            };
            // float4 moves where every share of every step is a whole aligned vector
            let fits = |st: &Staging| (rows * tk) % (items * st.w) == 0 && (rows.min(tk)) % st.w == 0;
            let vectors = contiguous
                && fits(&st)
                && (0..rows * tk / (items * 4)).all(|s| {
                    let (m, k) = Self::staged_place(&st, tk, &item, items, s);
                    self.global_float4(&st.view, &m, &kt.mul(&c(tk)).add(&k)).is_some()
                });
            if !vectors {
                st.w = 1;
            }
            ops.push(st);
        }
        {
            let k = self.k.as_mut().expect("inside a kernel");
            k.local[0] = Some(WARP as usize);
            k.local[1] = Some(sh.warps() as usize);
            k.local[2] = None;
            let side = |st: &Staging, along_k: &str, along_m: &str| {
                let l = match st.layout {
                    Layout2::KMajor => along_k,
                    Layout2::MMajor => along_m,
                };
                format!("{l}{}", if st.w == 4 { " by float4" } else { "" })
            };
            k.notes.push(format!(
                "tensor cores: {}×{} tiles of {}×{warps_n} warps of {WARP_M}×{WARP_N}, m16n8k8 TF32 fragments, K in steps of {tk} staged twice in local memory (x {}, y {})",
                sh.bm,
                sh.bn,
                sh.bm / WARP_M,
                side(&ops[0], "K-major", "M-major"),
                side(&ops[1], "K-major", "N-major"),
            ));
        }
        // the staged tiles, at kernel scope, as float4s (aligned for every read)
        for st in &ops {
            self.k.as_mut().expect("inside a kernel").decls.push(Stmt::Decl {
                ty: CType::Vector(ast::Scalar::Float, 4),
                name: st.buf.clone(),
                space: Some(AddressSpace::Local),
                len: Some((STAGES * st.layout.len(st.rows, tk) / 4) as usize),
                init: None,
                is_const: false,
            });
        }
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
        let warp = id(self, "warp", 1, sh.warps());
        let item_value = arith(&lane.add(&warp.mul(&c(WARP))));
        self.push(Stmt::decl(CType::INT, &item_name, item_value));
        let (g4, t4) = (lane.div(&c(4)), lane.rem(&c(4)));
        let (wm, wn) = (warp.div(&c(warps_n)), warp.rem(&c(warps_n)));
        // accumulators [MI][NI][4], zero
        let mut acc = vec![];
        for _ in 0..MI * NI * 4 {
            let v = self.fresh("acc");
            self.push(Stmt::decl(CType::FLOAT, &v, CExpr::Float(0.0)));
            acc.push(v);
        }
        for st in &mut ops {
            for _ in 0..st.rows * tk / (items * st.w) {
                let v = self.fresh("g");
                let ty = if st.w == 4 {
                    CType::Vector(ast::Scalar::Float, 4)
                } else {
                    CType::FLOAT
                };
                self.push(Stmt::Decl {
                    ty,
                    name: v.clone(),
                    space: None,
                    len: None,
                    init: None,
                    is_const: false,
                });
                st.regs.push(v);
            }
        }
        // the global reads of step `kt` into the registers
        let load = |g: &mut Self, kt: &ArithExpr| -> Result<()> {
            for st in &ops {
                for (s, reg) in st.regs.iter().enumerate() {
                    let (m, k) = Self::staged_place(st, tk, &item, items, s as i64);
                    let k = kt.mul(&c(tk)).add(&k);
                    let x = if st.w == 4 {
                        g.global_float4(&st.view, &m, &k)
                            .ok_or_else(|| g.err(e, "internal: a float4 read that was aligned is not"))?
                    } else {
                        let read = st.view.read(&[m, k]).map_err(|m| g.err(e, m.0))?;
                        g.expr_of(read, e)?
                    };
                    g.push(Stmt::assign(CExpr::var(reg), x));
                }
            }
            Ok(())
        };
        // the registers into stage `stage` of the staged tiles, as they are: the tensor cores
        // read the 19 high bits of each (TF32 by truncation, within `ir::precision::TF32_UNIT`);
        // rounding each on the way (`cvt.rna.tf32.f32`) cost 5% of `mm`'s time on the H200
        let store = |g: &mut Self, stage: &ArithExpr| -> Result<()> {
            for st in &ops {
                for (s, reg) in st.regs.iter().enumerate() {
                    let (m, k) = Self::staged_place(st, tk, &item, items, s as i64);
                    let place = match staged_at(st, tk, stage, 4, &m, &k).filter(|_| st.w == 4) {
                        Some(q) => CExpr::var(&st.buf).index(arith(&q)),
                        None => {
                            let at = staged_at(st, tk, stage, 1, &m, &k).expect("a place of one float");
                            local_view(&st.buf, 1).index(arith(&at))
                        }
                    };
                    g.push(Stmt::assign(place, CExpr::var(reg)));
                }
            }
            Ok(())
        };
        load(self, &c(0))?;
        store(self, &c(0))?;
        self.push(Stmt::Barrier(Fence::Local));
        self.open_for(&kv, CExpr::Int(0), CExpr::Int(steps), CExpr::Int(1), false);
        let more = CExpr::bin(BinOp::Lt, CExpr::var(&kv), CExpr::Int(steps - 1));
        // the next step's global reads, in flight while this step multiplies
        self.open_if(more.clone());
        load(self, &kt.add(&c(1)))?;
        self.close();
        let stage = kt.rem(&c(STAGES));
        let (xs, ys) = (&ops[0], &ops[1]);
        for ks in 0..tk / 8 {
            // places 2t and 2t + 1 of this step of 8 hold a fragment's columns t and t + 4
            let k0 = c(ks * 8).add(&t4.mul(&c(2)));
            // the pair (column t, column t + 4) of row `m` of a staged tile
            let pair = |g: &mut Self, st: &Staging, m: &ArithExpr| -> [CExpr; 2] {
                let bits = |x: CExpr| CExpr::call("as_uint", vec![x]);
                match (st.layout, staged_at(st, tk, &stage, 2, m, &k0)) {
                    (Layout2::KMajor, Some(half)) => {
                        let v = g.fresh("f");
                        g.push(Stmt::decl(
                            CType::Vector(ast::Scalar::Float, 2),
                            &v,
                            local_view(&st.buf, 2).index(arith(&half)),
                        ));
                        [bits(CExpr::var(&v).lane(0)), bits(CExpr::var(&v).lane(1))]
                    }
                    (Layout2::KMajor, None) | (Layout2::MMajor, _) => [k0.clone(), k0.add(&c(1))].map(|k| {
                        let v = g.fresh("f");
                        let at = staged_at(st, tk, &stage, 1, m, &k).expect("a place of one float");
                        let x = local_view(&st.buf, 1).index(arith(&at));
                        g.push(Stmt::decl(CType::Scalar(ast::Scalar::UInt), &v, bits(x)));
                        CExpr::var(&v)
                    }),
                }
            };
            let mut a = vec![];
            for mi in 0..MI {
                let r0 = wm.mul(&c(WARP_M)).add(&c(mi * 16)).add(&g4);
                let [a0, a2] = pair(self, xs, &r0);
                let [a1, a3] = pair(self, xs, &r0.add(&c(8)));
                a.push([a0, a1, a2, a3]);
            }
            let mut b = vec![];
            for ni in 0..NI {
                let n0 = wn.mul(&c(WARP_N)).add(&c(ni * 8)).add(&g4);
                b.push(pair(self, ys, &n0));
            }
            for (mi, am) in a.iter().enumerate() {
                for (ni, bn) in b.iter().enumerate() {
                    let at = (mi * b.len() + ni) * 4;
                    let mut operands: Vec<CExpr> = acc[at..at + 4].iter().map(CExpr::var).collect();
                    operands.extend(am.iter().cloned());
                    operands.extend(bn.iter().cloned());
                    self.push_asm(e, PtxOp::MmaM16n8k8Tf32, operands)?;
                }
            }
        }
        // the next step's registers into the other stage, which every warp has finished reading
        self.open_if(more);
        store(self, &kt.add(&c(1)).rem(&c(STAGES)))?;
        self.close();
        self.push(Stmt::Barrier(Fence::Local));
        self.close();
        // the accumulators through the destination: lane 4g + t holds rows g, g + 8 and
        // columns 2t, 2t + 1 of each fragment
        for mi in 0..MI {
            for ni in 0..NI {
                let row = wm.mul(&c(WARP_M)).add(&c(mi * 16)).add(&g4);
                let col = wn.mul(&c(WARP_N)).add(&c(ni * 8)).add(&t4.mul(&c(2)));
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

/// The staged tile `buf` (declared as `float4`s) seen as `w`-lane vectors (`w` 1: floats),
/// `((local floatW*)buf)`: every place read so is a multiple of `w`.
fn local_view(buf: &Ident, w: u8) -> CExpr {
    let elem = if w == 1 {
        CType::FLOAT
    } else {
        CType::Vector(ast::Scalar::Float, w)
    };
    let ty = CType::Ptr {
        space: AddressSpace::Local,
        elem: Box::new(elem),
        is_const: false,
        restrict: false,
    };
    CExpr::cast(ty, CExpr::var(buf))
}

/// The place of element `(m, k)` of stage `stage` of `st`'s staged tile, in units of `w`
/// floats ([`Layout2::at`]).
fn staged_at(st: &Staging, tk: i64, stage: &ArithExpr, w: i64, m: &ArithExpr, k: &ArithExpr) -> Option<ArithExpr> {
    let base = stage.mul(&ArithExpr::cst(st.layout.len(st.rows, tk) / w));
    Some(base.add(&st.layout.at(st.rows, tk, w, m, k)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    /// The place of `(m, k)` in floats, for constant `m` and `k`.
    fn place(layout: Layout2, rows: i64, tk: i64, m: i64, k: i64) -> i64 {
        let at = layout.at(rows, tk, 1, &ArithExpr::cst(m), &ArithExpr::cst(k));
        at.and_then(|a| a.as_cst()).expect("a constant place")
    }

    #[test]
    fn k_major_stages_are_unpadded_and_every_element_has_its_own_place() {
        for tk in K_STEPS {
            let rows = 128;
            let places: BTreeSet<i64> = (0..rows)
                .flat_map(|m| (0..tk).map(move |k| place(Layout2::KMajor, rows, tk, m, k)))
                .collect();
            assert_eq!(places.len() as i64, rows * tk, "tk {tk}");
            assert_eq!(
                places.last().copied(),
                Some(Layout2::KMajor.len(rows, tk) - 1),
                "tk {tk}"
            );
            // a run of 4 (a float4 store) and a pair (a float2 read) stay together, and the
            // place in units of 2 or 4 floats is the same place
            for m in 0..rows {
                for k in (0..tk).step_by(2) {
                    let at = place(Layout2::KMajor, rows, tk, m, k);
                    assert_eq!(place(Layout2::KMajor, rows, tk, m, k + 1), at + 1);
                    let (mm, kk) = (ArithExpr::cst(m), ArithExpr::cst(k));
                    let half = Layout2::KMajor.at(rows, tk, 2, &mm, &kk).and_then(|a| a.as_cst());
                    assert_eq!(half, Some(at / 2), "tk {tk}, m {m}, k {k}");
                    if k % 4 == 0 {
                        let quarter = Layout2::KMajor.at(rows, tk, 4, &mm, &kk).and_then(|a| a.as_cst());
                        assert_eq!((at % 4, quarter), (0, Some(at / 4)), "tk {tk}, m {m}, k {k}");
                    }
                }
            }
        }
    }

    #[test]
    fn fragment_reads_and_staging_stores_of_a_warp_fall_in_distinct_banks() {
        // a K-major tile's float2 reads, by half-warps: lane 4g + t reads places 2t and 2t + 1
        // of a step of 8 in row r + g, r a multiple of 8
        for tk in K_STEPS {
            for r in [0, 8, 16, 40, 64, 120] {
                for ks in 0..tk / 8 {
                    for half in [0, 16] {
                        let mut banks = BTreeSet::new();
                        for lane in half..half + 16 {
                            let (g, t) = (lane / 4, lane % 4);
                            for q in 0..2 {
                                let w = place(Layout2::KMajor, 128, tk, r + g, ks * 8 + 2 * t + q);
                                assert!(banks.insert(w % 32), "tk {tk}, row {r}, step {ks}");
                            }
                        }
                    }
                }
            }
            // its float4 stores, by 8 work-items: consecutive runs of 4 along K
            for first in (0..128).step_by(8) {
                let mut banks = BTreeSet::new();
                for flat in first..first + 8 {
                    let (m, k) = (flat / (tk / 4), flat % (tk / 4) * 4);
                    for l in 0..4 {
                        assert!(banks.insert(place(Layout2::KMajor, 128, tk, m, k + l) % 32), "tk {tk}");
                    }
                }
            }
        }
        // an M-major tile's scalar reads of places 2t (or 2t + 1), column g
        for rows in [64, 128, 256] {
            for q in 0..2 {
                let banks: BTreeSet<i64> = (0..32)
                    .map(|lane| place(Layout2::MMajor, rows, 16, lane / 4, 2 * (lane % 4) + q) % 32)
                    .collect();
                assert_eq!(banks.len(), 32, "rows {rows}");
            }
        }
    }

    #[test]
    fn a_step_whose_stages_leave_the_driver_less_than_its_reserve_is_halved() {
        let sh = |tk| Shape {
            bm: 128,
            bn: 128,
            k: 4096,
            tk,
        };
        let (k, m) = (Layout2::KMajor, Layout2::MMajor);
        // both operands K-major (mm_nt) take 32 KiB in two stages of 16: with exactly that
        // much local memory the driver's reserve does not fit, with the reserve more it does
        assert_eq!(fitted_step(sh(16), [k, k], 32 * 1024), 8);
        assert_eq!(fitted_step(sh(16), [k, k], 32 * 1024 + DRIVER_LOCAL_RESERVE), 16);
        // NVIDIA's 48 KiB: every pair of layouts keeps 16 (K-major rows are unpadded)
        assert_eq!(fitted_step(sh(16), [k, k], 48 * 1024), 16);
        assert_eq!(fitted_step(sh(16), [k, m], 48 * 1024), 16);
        assert_eq!(fitted_step(sh(16), [m, m], 48 * 1024), 16);
        // never longer than the step the tile was chosen with
        assert_eq!(fitted_step(sh(16), [m, m], 96 * 1024), 16);
        assert_eq!(fitted_step(sh(32), [k, k], 96 * 1024), 32);
    }

    #[test]
    fn k_steps_are_the_longest_whose_two_stages_fit_local_memory() {
        let kib = |n: usize| n * 1024;
        // 48 KiB, NVIDIA's OpenCL: 128 × 128 in steps of 16 (two stages of 24 KiB at most),
        // 128 × 256 and 256 × 128 in steps of 8
        assert_eq!(k_step(128, 128, 4096, kib(48)), Some(16));
        assert_eq!(k_step(128, 256, 4096, kib(48)), Some(8));
        assert_eq!(k_step(256, 128, 4096, kib(48)), Some(8));
        // more local memory, longer steps; a K that only 8 divides
        assert_eq!(k_step(128, 128, 4096, kib(96)), Some(32));
        assert_eq!(k_step(128, 128, 72, kib(96)), Some(8));
        // no step fits, or none divides K
        assert_eq!(k_step(128, 128, 4096, kib(8)), None);
        assert_eq!(k_step(128, 128, 36, kib(48)), None);
        for (bm, bn) in [(128, 128), (128, 256), (256, 128)] {
            let tk = k_step(bm, bn, 4096, kib(48)).expect("a step");
            let worst = |rows| Layout2::KMajor.len(rows, tk).max(Layout2::MMajor.len(rows, tk));
            assert!(4 * STAGES * (worst(bm) + worst(bn)) <= 48 * 1024);
        }
    }
}
