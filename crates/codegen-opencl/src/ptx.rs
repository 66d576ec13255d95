//! Inline PTX in the OpenCL C tree: the instructions code generation may emit through
//! `asm` (NVIDIA's OpenCL compiler passes them to PTX), each with the operands it
//! takes and their register classes, checked when the statement is built ([`Asm::new`]) so
//! that the printer only writes what the tree holds. The instruction text comes from
//! [`PtxOp::template`], never from a caller: an `Asm` names an instruction, not a string.
//!
//! Only devices that report NVIDIA's compute capability get these statements: 8.0 or later the
//! tensor-core instructions (`crate::EmitOptions::tensor_cores`), 7.0 or later the warp's
//! shuffles and ballot (`crate::EmitOptions::warp_shuffles`); PTX means nothing to any other
//! OpenCL compiler.

use crate::ast::Expr;

/// A PTX instruction the code generator emits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PtxOp {
    /// `mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {d0..d3}, {a0..a3}, {b0, b1},
    /// {c0..c3}`: one warp's 16×8 product of a 16×8 TF32 fragment of A (row-major) and an 8×8
    /// fragment of B (column-major), added to the FP32 accumulator `c`, into `d` (here `d` is
    /// `c`: four read-write `f` operands). Compute capability 8.0 (PTX ISA 7.0).
    MmaM16n8k8Tf32,
    /// `shfl.sync.up.b32 d, a, k, 0, 0xffffffff`: `a` of the lane `k` below this one in the
    /// warp (this lane's own `a` in lanes below `k`). PTX ISA 6.0.
    ShflUpB32,
    /// `shfl.sync.down.b32 d, a, k, 31, 0xffffffff`: `a` of the lane `k` above this one (this
    /// lane's own `a` where that is past lane 31). PTX ISA 6.0.
    ShflDownB32,
    /// `vote.sync.ballot.b32 d, p, 0xffffffff` with `p` = `a != 0`: bit `i` of `d` set where
    /// lane `i`'s `a` is not zero. PTX ISA 6.0.
    BallotB32,
}

/// A register class of an operand: its `asm` constraint letter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reg {
    /// A 32-bit float register, `f`: a C `float`.
    F32,
    /// A 32-bit untyped register, `r`: a C `uint` (bits of a float through `as_uint`).
    B32,
}

/// How the instruction uses an operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dir {
    /// Written only (`=`).
    Out,
    /// Read and written (`+`).
    InOut,
    /// Read only.
    In,
}

impl PtxOp {
    /// The operands, in the order the instruction names them: register class and use.
    pub fn operands(self) -> &'static [(Reg, Dir)] {
        use Dir::*;
        use Reg::*;
        match self {
            PtxOp::MmaM16n8k8Tf32 => &[
                (F32, InOut),
                (F32, InOut),
                (F32, InOut),
                (F32, InOut),
                (B32, In),
                (B32, In),
                (B32, In),
                (B32, In),
                (B32, In),
                (B32, In),
            ],
            PtxOp::ShflUpB32 | PtxOp::ShflDownB32 => &[(B32, Out), (B32, In), (B32, In)],
            PtxOp::BallotB32 => &[(B32, Out), (B32, In)],
        }
    }

    /// The instruction text with operand `k` written `%k` (the order of [`PtxOp::operands`],
    /// which `asm` numbers outputs first; the instruction lists its outputs first).
    pub fn template(self) -> &'static str {
        match self {
            PtxOp::MmaM16n8k8Tf32 => {
                "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
            }
            PtxOp::ShflUpB32 => "shfl.sync.up.b32 %0, %1, %2, 0, 0xffffffff;",
            PtxOp::ShflDownB32 => "shfl.sync.down.b32 %0, %1, %2, 31, 0xffffffff;",
            PtxOp::BallotB32 => "{ .reg .pred p; setp.ne.u32 p, %1, 0; vote.sync.ballot.b32 %0, p, 0xffffffff; }",
        }
    }

    /// Whether the instruction exchanges values between the warp's lanes (printed `asm
    /// volatile`, so that the compiler neither moves it into a branch some lanes skip nor
    /// merges it with another: every lane must execute it where it is written).
    pub fn exchanges(self) -> bool {
        match self {
            PtxOp::MmaM16n8k8Tf32 => false,
            PtxOp::ShflUpB32 | PtxOp::ShflDownB32 | PtxOp::BallotB32 => true,
        }
    }
}

impl Reg {
    pub fn letter(self) -> char {
        match self {
            Reg::F32 => 'f',
            Reg::B32 => 'r',
        }
    }
}

impl Dir {
    /// The constraint's modifier: `=`, `+` or none.
    pub fn modifier(self) -> &'static str {
        match self {
            Dir::Out => "=",
            Dir::InOut => "+",
            Dir::In => "",
        }
    }
}

/// `asm("template" : outputs : inputs);`: one PTX instruction and its operands, in the
/// order of [`PtxOp::operands`].
#[derive(Clone, Debug, PartialEq)]
pub struct Asm {
    op: PtxOp,
    operands: Vec<Expr>,
}

impl Asm {
    /// The statement, or why the operands do not fit the instruction: their number, and every
    /// written operand an lvalue (a variable, element or component), every `B32` input the
    /// bits of a float (`as_uint(x)`) or an lvalue (a `uint` variable).
    pub fn new(op: PtxOp, operands: Vec<Expr>) -> Result<Asm, String> {
        let want = op.operands();
        if operands.len() != want.len() {
            return Err(format!(
                "`{}` takes {} operands, not {}",
                op.template(),
                want.len(),
                operands.len()
            ));
        }
        for (k, ((reg, dir), e)) in want.iter().zip(&operands).enumerate() {
            let lvalue = is_lvalue(e);
            if *dir != Dir::In && !lvalue {
                return Err(format!(
                    "operand {k} of `{}` is written: it must be an lvalue",
                    op.template()
                ));
            }
            let bits = matches!(e, Expr::Call(f, args) if f == "as_uint" && args.len() == 1);
            if *reg == Reg::B32 && *dir == Dir::In && !(bits || lvalue) {
                return Err(format!(
                    "operand {k} of `{}` is a 32-bit register: `as_uint` of a float, or a `uint` variable",
                    op.template()
                ));
            }
        }
        Ok(Asm { op, operands })
    }

    pub fn op(&self) -> PtxOp {
        self.op
    }

    /// The operands with how the instruction uses each.
    pub fn operands(&self) -> impl Iterator<Item = (&Expr, Reg, Dir)> {
        self.operands
            .iter()
            .zip(self.op.operands())
            .map(|(e, (r, d))| (e, *r, *d))
    }

    /// The operands, mutably (a pass renaming or substituting variables); a written operand
    /// must stay an lvalue, which renaming and scalarizing keep.
    pub fn operands_mut(&mut self) -> impl Iterator<Item = &mut Expr> {
        self.operands.iter_mut()
    }

    /// The operands the instruction writes.
    pub fn written(&self) -> impl Iterator<Item = &Expr> {
        self.operands().filter(|(_, _, d)| *d != Dir::In).map(|(e, _, _)| e)
    }
}

fn is_lvalue(e: &Expr) -> bool {
    match e {
        Expr::Var(_) | Expr::Sym(_) => true,
        Expr::Index(a, _) | Expr::Field(a, _) => is_lvalue(a),
        Expr::Int(_)
        | Expr::Float(_)
        | Expr::Double(_)
        | Expr::TypedInt(..)
        | Expr::Unary(..)
        | Expr::Binary(..)
        | Expr::Call(..)
        | Expr::Cast(..)
        | Expr::Select(..)
        | Expr::VecLit(..) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::namer::Namer;

    #[test]
    fn asm_operands_are_checked_against_the_instruction() {
        let mut n = Namer::new();
        let (c, a, x, u) = (n.fresh("c"), n.fresh("a"), n.fresh("x"), n.fresh("u"));
        let bits = |e: &crate::namer::Ident| Expr::call("as_uint", vec![Expr::var(e)]);
        let c4: Vec<Expr> = (0..4).map(|k| Expr::var(&c).index(Expr::Int(k))).collect();
        let ok = [c4.clone(), vec![bits(&a); 6]].concat();
        assert!(Asm::new(PtxOp::MmaM16n8k8Tf32, ok).is_ok());
        let short = [c4.clone(), vec![bits(&a); 5]].concat();
        assert!(Asm::new(PtxOp::MmaM16n8k8Tf32, short)
            .unwrap_err()
            .contains("10 operands"));
        // an accumulator that is no lvalue cannot be written
        let sum = Expr::bin(crate::ast::BinOp::Add, Expr::var(&x), Expr::Float(1.0));
        let rvalue = [vec![sum], c4[1..].to_vec(), vec![bits(&a); 6]].concat();
        assert!(Asm::new(PtxOp::MmaM16n8k8Tf32, rvalue).unwrap_err().contains("lvalue"));
        // a float where the bits of one are read
        let float_in = [c4.clone(), vec![Expr::Float(1.0); 6]].concat();
        assert!(Asm::new(PtxOp::MmaM16n8k8Tf32, float_in)
            .unwrap_err()
            .contains("as_uint"));
        let mma = Asm::new(PtxOp::MmaM16n8k8Tf32, [c4, vec![Expr::var(&u); 6]].concat()).expect("mma");
        assert_eq!(mma.written().count(), 4);
        // a shuffle writes its one output, which must be an lvalue
        let shfl = Asm::new(PtxOp::ShflUpB32, vec![Expr::var(&u), bits(&x), bits(&a)]).expect("shfl");
        assert_eq!(shfl.written().count(), 1);
        assert!(shfl.op().exchanges() && !mma.op().exchanges());
        let no_place = vec![bits(&u), bits(&x), bits(&a)];
        assert!(Asm::new(PtxOp::ShflDownB32, no_place).unwrap_err().contains("lvalue"));
        assert!(Asm::new(PtxOp::BallotB32, vec![Expr::var(&u)])
            .unwrap_err()
            .contains("2 operands"));
    }
}
