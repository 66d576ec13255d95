//! The builtins the surface language knows: primitives, operators and special forms by name, and
//! how each is applied (its size arguments, function positions and arity).

use super::*;

/// Built-in operations, by name.
#[derive(Clone, Debug)]
pub(super) enum Builtin {
    Prim(PrimHead),
    Op(Op),
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum PrimHead {
    Map(MapKind),
    Reduce(ReduceKind),
    Zip,
    Split,
    Join,
    Transpose,
    Slide,
    Pad,
    PadClamp,
    ReorderStride,
    Reverse,
    Generate,
    Iterate,
    IterateUntil,
    Filter(FilterKind),
    Scan(ScanKind),
    AsVector,
    AsScalar,
    To(AddressSpace),
}

/// How a builtin is applied.
pub(super) struct Shape {
    pub(super) sizes: usize,
    /// Positions (after the sizes) that take functions, with the function's arity.
    pub(super) funs: &'static [(usize, usize)],
    /// Arguments after the sizes; `None` means variadic (at least two, all at once).
    pub(super) args: Option<usize>,
}

impl PrimHead {
    pub(super) fn shape(self) -> Shape {
        let (sizes, funs, args): (usize, &'static [(usize, usize)], Option<usize>) = match self {
            PrimHead::Map(_) => (0, &[(0, 1)], Some(2)),
            PrimHead::Reduce(_) | PrimHead::Scan(_) => (0, &[(0, 2)], Some(3)),
            PrimHead::Zip => (0, &[], None),
            PrimHead::Split | PrimHead::ReorderStride | PrimHead::AsVector => (1, &[], Some(1)),
            PrimHead::Join | PrimHead::Transpose | PrimHead::Reverse | PrimHead::AsScalar | PrimHead::To(_) => {
                (0, &[], Some(1))
            }
            PrimHead::Slide | PrimHead::PadClamp => (2, &[], Some(1)),
            PrimHead::Pad => (2, &[], Some(2)),
            PrimHead::Generate => (1, &[(0, 1)], Some(1)),
            PrimHead::Iterate => (1, &[(0, 1)], Some(2)),
            PrimHead::IterateUntil => (1, &[(0, 2), (1, 1)], Some(3)),
            PrimHead::Filter(_) => (0, &[(0, 1)], Some(2)),
        };
        Shape { sizes, funs, args }
    }
}

pub(super) fn op_shape(op: Op) -> Shape {
    let (sizes, args) = match op {
        Op::Add | Op::Sub | Op::Mul | Op::Div | Op::Rem | Op::Lt | Op::Le | Op::Gt | Op::Ge | Op::Eq | Op::Ne => {
            (0, Some(2))
        }
        Op::And | Op::Or | Op::Min | Op::Max | Op::Pow | Op::Dot | Op::At => (0, Some(2)),
        Op::Not | Op::Neg | Op::Abs | Op::Sqrt | Op::Exp | Op::Log | Op::Sin | Op::Cos => (0, Some(1)),
        Op::ToFloat | Op::ToInt | Op::ToDouble | Op::ToUint | Op::ToLong | Op::ToUlong | Op::Length => (0, Some(1)),
        Op::As(_) | Op::BitNot => (0, Some(1)),
        Op::BitAnd | Op::BitOr | Op::BitXor | Op::Shl | Op::Shr | Op::Rotl => (0, Some(2)),
        Op::Fma => (0, Some(3)),
        Op::MakeVec | Op::Tuple => (0, None),
        Op::VGet(_) | Op::Get(_) => (1, Some(1)),
    };
    Shape { sizes, funs: &[], args }
}

pub(super) fn builtin(name: &str) -> Option<Builtin> {
    use PrimHead as P;
    let prim = |p| Some(Builtin::Prim(p));
    let op = |o| Some(Builtin::Op(o));
    match name {
        "map" => prim(P::Map(MapKind::Plain)),
        "mapGlb" | "mapGlb0" => prim(P::Map(MapKind::Glb(0))),
        "mapGlb1" => prim(P::Map(MapKind::Glb(1))),
        "mapGlb2" => prim(P::Map(MapKind::Glb(2))),
        "mapWrg" | "mapWrg0" => prim(P::Map(MapKind::Wrg(0))),
        "mapWrg1" => prim(P::Map(MapKind::Wrg(1))),
        "mapWrg2" => prim(P::Map(MapKind::Wrg(2))),
        "mapLcl" | "mapLcl0" => prim(P::Map(MapKind::Lcl(0))),
        "mapLcl1" => prim(P::Map(MapKind::Lcl(1))),
        "mapLcl2" => prim(P::Map(MapKind::Lcl(2))),
        "mapSeq" => prim(P::Map(MapKind::Seq)),
        "mapSeqUnroll" => prim(P::Map(MapKind::SeqUnroll)),
        "mapVec" => prim(P::Map(MapKind::Vec)),
        "reduce" => prim(P::Reduce(ReduceKind::Plain)),
        "reduceSeq" => prim(P::Reduce(ReduceKind::Seq)),
        "reduceSeqUnroll" => prim(P::Reduce(ReduceKind::SeqUnroll)),
        "zip" => prim(P::Zip),
        "split" => prim(P::Split),
        "join" => prim(P::Join),
        "transpose" => prim(P::Transpose),
        "slide" => prim(P::Slide),
        "pad" => prim(P::Pad),
        "pad-clamp" => prim(P::PadClamp),
        "reorder-stride" => prim(P::ReorderStride),
        "reverse" => prim(P::Reverse),
        "generate" => prim(P::Generate),
        "iterate" => prim(P::Iterate),
        "iterate-until" => prim(P::IterateUntil),
        "filter" => prim(P::Filter(FilterKind::Plain)),
        "filterSeq" => prim(P::Filter(FilterKind::Seq)),
        "filterGlb" => prim(P::Filter(FilterKind::Glb)),
        "scan" => prim(P::Scan(ScanKind::Plain)),
        "scanSeq" => prim(P::Scan(ScanKind::Seq)),
        "scanGlb" => prim(P::Scan(ScanKind::Glb)),
        "asVector" => prim(P::AsVector),
        "asScalar" => prim(P::AsScalar),
        "toGlobal" => prim(P::To(AddressSpace::Global)),
        "toLocal" => prim(P::To(AddressSpace::Local)),
        "toPrivate" => prim(P::To(AddressSpace::Private)),
        "+" => op(Op::Add),
        "-" => op(Op::Sub),
        "*" => op(Op::Mul),
        "/" => op(Op::Div),
        "%" => op(Op::Rem),
        "<" => op(Op::Lt),
        "<=" => op(Op::Le),
        ">" => op(Op::Gt),
        ">=" => op(Op::Ge),
        "=" => op(Op::Eq),
        "!=" => op(Op::Ne),
        "and" => op(Op::And),
        "or" => op(Op::Or),
        "not" => op(Op::Not),
        "min" => op(Op::Min),
        "max" => op(Op::Max),
        "abs" => op(Op::Abs),
        "sqrt" => op(Op::Sqrt),
        "exp" => op(Op::Exp),
        "log" => op(Op::Log),
        "sin" => op(Op::Sin),
        "cos" => op(Op::Cos),
        "pow" => op(Op::Pow),
        "fma" => op(Op::Fma),
        "to-float" => op(Op::ToFloat),
        "to-int" => op(Op::ToInt),
        "to-double" => op(Op::ToDouble),
        "to-uint" => op(Op::ToUint),
        "to-long" => op(Op::ToLong),
        "to-ulong" => op(Op::ToUlong),
        "as-int" => op(Op::As(Scalar::Int)),
        "as-uint" => op(Op::As(Scalar::Uint)),
        "as-long" => op(Op::As(Scalar::Long)),
        "as-ulong" => op(Op::As(Scalar::Ulong)),
        "as-float" => op(Op::As(Scalar::Float)),
        "as-double" => op(Op::As(Scalar::Double)),
        "bit-and" => op(Op::BitAnd),
        "bit-or" => op(Op::BitOr),
        "bit-xor" => op(Op::BitXor),
        "bit-not" => op(Op::BitNot),
        "shl" => op(Op::Shl),
        "shr" => op(Op::Shr),
        "rotl" => op(Op::Rotl),
        "dot" => op(Op::Dot),
        "length" => op(Op::Length),
        "vec" => op(Op::MakeVec),
        "vget" => op(Op::VGet(0)),
        "tuple" => op(Op::Tuple),
        "get" => op(Op::Get(0)),
        "at" => op(Op::At),
        _ => None,
    }
}

/// Every name a user may write, for "did you mean" notes.
pub(super) const BUILTIN_NAMES: &[&str] = &[
    "map",
    "mapGlb",
    "mapGlb1",
    "mapGlb2",
    "mapWrg",
    "mapWrg1",
    "mapWrg2",
    "mapLcl",
    "mapLcl1",
    "mapLcl2",
    "mapSeq",
    "mapSeqUnroll",
    "mapVec",
    "reduce",
    "reduceSeq",
    "reduceSeqUnroll",
    "zip",
    "split",
    "join",
    "transpose",
    "slide",
    "pad",
    "pad-clamp",
    "reorder-stride",
    "reverse",
    "generate",
    "iterate",
    "iterate-until",
    "filter",
    "filterSeq",
    "filterGlb",
    "scan",
    "scanSeq",
    "scanGlb",
    "asVector",
    "asScalar",
    "toGlobal",
    "toLocal",
    "toPrivate",
    "and",
    "or",
    "not",
    "min",
    "max",
    "abs",
    "sqrt",
    "exp",
    "log",
    "sin",
    "cos",
    "pow",
    "fma",
    "to-float",
    "to-int",
    "to-double",
    "dot",
    "length",
    "vec",
    "vget",
    "tuple",
    "get",
    "at",
    "lambda",
    "let",
    "unpack",
    "pack",
    "if",
];
