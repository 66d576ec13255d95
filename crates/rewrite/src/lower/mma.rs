//! The tensor-core variant of a matrix product (`rblock` with `sizes::RBLOCK_MMA`,
//! `rules::tensor`): work-groups over `tm × tn` tiles of the result, each tile the product of
//! its rows of `x` and of `ys` written at work-group level, which `codegen_opencl` computes
//! with TF32 `mma.sync` fragments (`gen/mma.rs`), and its cost.

use super::*;

/// How many times the tensor cores outrun the f32 register-blocked product on the same
/// multiply-adds: on the H200, an m16n8k8 TF32 probe kernel reached 288 TFLOP/s and the f32
/// product 47 (cuBLAS f32 2.75 ms at 4096³, `lift` 2.91 ms; issue 33, 2026-12-01).
const TENSOR_SPEEDUP: f64 = 288.0 / 47.0;

impl Lowerer<'_> {
    /// `rblock (MMA) r g x ys` (written without `join` with `RBLOCK_ROWS`):
    /// `join (mapWrg1 (λrows. map join (transpose (mapWrg0 (λcols. mapLcl1 (λr. join (mapLcl0
    /// g' cols)) rows) (split tn ys)))) (split tm x))`, `g'` the dot product `g` lowered
    /// sequentially (`reduceSeq (λacc y. acc + get0 y · get1 y) 0.0f (zip r c)`). Only a dot
    /// product of `+`, `*` and `0.0f` is a tensor-core product; any other is lowered as the
    /// product it stands for.
    pub(super) fn host_mma(&mut self, t: &Rc<Term>, c: i64) -> Out {
        if c & crate::sizes::RBLOCK_ROWS != 0 {
            let joined = Term::new(
                TOp::RBlock(c & !crate::sizes::RBLOCK_ROWS),
                t.kids.clone(),
                t.len.clone(),
                t.inner.clone(),
            );
            let (e, cost) = self.host(&joined);
            let Some(n) = t.kids[4].len.clone() else {
                return (e, cost);
            };
            let flat = self.b.prim(Prim::Join, vec![e]);
            let ones = self.b.prim(Prim::Split(arith::ArithExpr::cst(1)), vec![flat]);
            return (self.b.prim(Prim::Split(n), vec![ones]), cost);
        }
        let (r, g, x, ys) = (&t.kids[1], &t.kids[2], &t.kids[3], &t.kids[4]);
        let r_name = Self::sym_name(r);
        if !self
            .dot_parts(g, &r_name)
            .is_some_and(|(f, z, h, _)| self.plain_dot(&f, &z, &h))
        {
            return self.host(&rblock_as_map(t));
        }
        let rb = crate::sizes::RegBlockSizes::unpack(c);
        let cst = arith::ArithExpr::cst;
        let (rows_n, cols_n, k_len) = (self.len(x), self.len(ys), self.eval(x.inner.as_ref()));
        let (xt, xc, xbind) = self.kernel_arg(x);
        let (yt, yc, ybind) = self.kernel_arg(ys);
        let (rows_name, cols_name) = (self.name("rows"), self.name("cols"));
        let rowsv = self.b.bind(&rows_name);
        let colsv = self.b.bind(&cols_name);
        // the tile: mapLcl1 (λr. join (mapLcl0 g' cols)) rows
        let rv = self.b.bind(&r_name);
        let (dot, _) = self.func(g, k_len);
        let cols_e = self.b.var(colsv);
        let row = self.b.prim(Prim::Map(MapKind::Lcl(0)), vec![dot, cols_e]);
        let row = self.b.prim(Prim::Join, vec![row]);
        self.b.unbind(rv);
        let row_fn = self.b.lambda(vec![rv], row);
        let rows_e = self.b.var(rowsv);
        let product = self.b.prim(Prim::Map(MapKind::Lcl(1)), vec![row_fn, rows_e]);
        self.b.unbind(colsv);
        let cols_fn = self.b.lambda(vec![colsv], product);
        let col_tiles = self.b.prim(Prim::Split(cst(rb.tn)), vec![yt]);
        let groups = self.b.prim(Prim::Map(MapKind::Wrg(0)), vec![cols_fn, col_tiles]);
        let groups = self.b.prim(Prim::Transpose, vec![groups]);
        let jf = self.join_fn();
        let out_rows = self.b.prim(Prim::Map(MapKind::Plain), vec![jf, groups]);
        self.b.unbind(rowsv);
        let rows_fn = self.b.lambda(vec![rowsv], out_rows);
        let row_tiles = self.b.prim(Prim::Split(cst(rb.tm)), vec![xt]);
        let e = self.b.prim(Prim::Map(MapKind::Wrg(1)), vec![rows_fn, row_tiles]);
        let e = self.b.prim(Prim::Join, vec![e]);
        let e = self.b.to(AddressSpace::Global, e);
        let e = self.wrap(ybind, e);
        let e = self.wrap(xbind, e);
        self.notes.push(format!(
            "mapWrg1×mapWrg0 tiles of {}×{} {}: warps of {}×{}, m16n8k8 TF32 fragments, K staged in local memory",
            rb.tm,
            rb.tn,
            crate::rules::tensor::TENSOR_CORE_NOTE,
            rb.rm,
            rb.rn
        ));
        let cost = self.mma_cost(rb, rows_n * cols_n, k_len, x, ys);
        (e, xc + yc + cost)
    }

    /// What the tensor-core variant of `outputs` elements costs: the f32 register-blocked
    /// product's cost of the same tiles (blocks of 8 × 8, steps of 16), at the tensor cores'
    /// rate. The 8-warp tiles (128 × 256, 256 × 128) rank after 128 × 128, as they ran on the
    /// H200 (mm 1.43 ms against 1.09 at 4096³, `tensor-cores-nvidia-h200-2026-12-02.md` run
    /// C); `lift tune --precision tf32` times every tile.
    pub(super) fn mma_cost(
        &self,
        rb: crate::sizes::RegBlockSizes,
        outputs: f64,
        k_len: f64,
        x: &Term,
        ys: &Term,
    ) -> f64 {
        let f32_equivalent = crate::sizes::RegBlockSizes {
            tm: rb.tm,
            tn: rb.tn,
            rm: 8,
            rn: 8,
            tk: 16,
        };
        self.rblock_cost(f32_equivalent, outputs, k_len, x, ys) / TENSOR_SPEEDUP
    }

    /// Whether the dot product's parts are `λa b. a + b`, `0.0f` and `λp. get0 p · get1 p`
    /// (either order of each), the product tensor cores compute.
    fn plain_dot(&self, f: &Symbol, z: &Symbol, h: &Symbol) -> bool {
        let src = self.b.src;
        let origin = |s: &Symbol| self.origin.get(s).map(|id| src.expr(*id));
        let var = |e: ExprId| match src.expr(e) {
            Expr::Var(v) => Some(*v),
            _ => None,
        };
        let add = match origin(f) {
            Some(Expr::Lambda { params, body }) if params.len() == 2 => match src.expr(*body) {
                Expr::Op { op: Op::Add, args } if args.len() == 2 => {
                    let (a, b) = (var(args[0]), var(args[1]));
                    (a, b) == (Some(params[0]), Some(params[1])) || (a, b) == (Some(params[1]), Some(params[0]))
                }
                _ => false,
            },
            _ => false,
        };
        let zero = matches!(origin(z), Some(Expr::Lit(ir::Lit::Float(x))) if *x == 0.0);
        let mul = match origin(h) {
            Some(Expr::Lambda { params, body }) if params.len() == 1 => match src.expr(*body) {
                Expr::Op { op: Op::Mul, args } if args.len() == 2 => {
                    let get = |e: ExprId| match src.expr(e) {
                        Expr::Op { op: Op::Get(k), args } if var(args[0]) == Some(params[0]) => Some(*k),
                        _ => None,
                    };
                    matches!((get(args[0]), get(args[1])), (Some(0), Some(1)) | (Some(1), Some(0)))
                }
                _ => false,
            },
            _ => false,
        };
        add && zero && mul
    }
}
