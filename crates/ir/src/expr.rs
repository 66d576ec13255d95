//! The core IR: an arena of expressions, every node with a span.
//!
//! Invariants (established by `parse`, relied on by every later stage):
//! - children come before parents in `Program::exprs` (arena order is topological);
//! - every primitive is fully applied: `Expr::Prim` holds all its arguments, and a function
//!   argument of a primitive is always an `Expr::Lambda` (partial applications and `o`
//!   pipelines were eta-expanded), so no function values flow anywhere else;
//! - definitions are inlined, and a lambda applied to arguments became `let`s;
//! - K-normal form where it matters for existential types: an argument of a primitive that may
//!   produce an existential array (a filter, `let`, `if`, `at`, `get`, `toX`, `pack`) is bound by
//!   a `let`, so the type checker can unpack it at that binding (thesis §4.2.1).

use crate::diag::Span;
use crate::types::Type;
use arith::ArithExpr;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ExprId(pub u32);

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct VarId(pub u32);

impl ExprId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}
impl VarId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Lit {
    Float(f32),
    Double(f64),
    Int(i32),
    Bool(bool),
    /// `3u`
    Uint(u32),
    /// `3l`
    Long(i64),
    /// `3ul`
    Ulong(u64),
}

/// Where a `toX` primitive puts its result.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum AddressSpace {
    Global,
    Local,
    Private,
}

/// How a map is executed. `Plain` is the high-level `map`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MapKind {
    Plain,
    Glb(u8),
    Wrg(u8),
    Lcl(u8),
    Seq,
    SeqUnroll,
    Vec,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ReduceKind {
    Plain,
    Seq,
    SeqUnroll,
}

/// How an inclusive prefix (`scan`) is executed: `Plain` is the high-level `scan`, `Seq` a loop
/// in one work-item, `Glb` the whole array across the device (at host level).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ScanKind {
    Plain,
    Seq,
    Glb,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FilterKind {
    Plain,
    Seq,
    Glb,
}

/// Array primitives, high and low level. Size arguments (`#k`) live in the variant.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Prim {
    /// `(map f xs)`: args `[f, xs]`.
    Map(MapKind),
    /// `(reduce f z xs)`: args `[f, z, xs]`; result is a one-element array.
    Reduce(ReduceKind),
    /// `(zip xs ys ...)`: two or more arrays of one length.
    Zip,
    /// `(split #k xs)`
    Split(ArithExpr),
    Join,
    Transpose,
    /// `(slide #size #step xs)`
    Slide(ArithExpr, ArithExpr),
    /// `(pad #l #r v xs)`: args `[v, xs]`.
    Pad(ArithExpr, ArithExpr),
    /// `(pad-clamp #l #r xs)`
    PadClamp(ArithExpr, ArithExpr),
    /// `(reorder-stride #s xs)`: element `i` of the result is `xs[i/(n/s) + s*(i%(n/s))]`.
    ReorderStride(ArithExpr),
    Reverse,
    /// `(generate n f)`: args `[f]`.
    Generate(ArithExpr),
    /// `(iterate #k f xs)`: args `[f, xs]`.
    Iterate(ArithExpr),
    /// `(iterate-until #max (lambda (prev next) c) f x)`: args `[c, f, x]`; a host section
    /// (runs on the host, launching the kernels of `c` and `f` each step).
    IterateUntil(ArithExpr),
    /// `(filter p xs)`: args `[p, xs]`.
    Filter(FilterKind),
    /// `(scan f z xs)`: args `[f, z, xs]`; the inclusive prefix, as long as `xs`.
    Scan(ScanKind),
    /// `(asVector #w xs)`
    AsVector(u8),
    AsScalar,
    /// `(toGlobal e)` etc.: args `[e]`.
    To(AddressSpace),
}

/// Scalar and small-value operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Op {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
    And,
    Or,
    Not,
    Neg,
    Min,
    Max,
    Abs,
    Sqrt,
    Exp,
    Log,
    Sin,
    Cos,
    Pow,
    Fma,
    ToFloat,
    ToInt,
    ToDouble,
    ToUint,
    ToLong,
    ToUlong,
    /// `(as-uint e)` etc.: the bits of `e` read as a value of this type (same width).
    As(crate::types::Scalar),
    BitAnd,
    BitOr,
    BitXor,
    BitNot,
    /// `(shl x n)`: shift left by `n` modulo the width of `x`.
    Shl,
    /// `(shr x n)`: arithmetic on signed `x`, logical on unsigned.
    Shr,
    /// `(rotl x n)`: OpenCL's `rotate`.
    Rotl,
    Dot,
    Length,
    /// `(vec a b ...)`
    MakeVec,
    /// `(vget #i v)`
    VGet(u8),
    /// `(tuple a b ...)`
    Tuple,
    /// `(get #i t)`
    Get(u8),
    /// `(at i xs)`
    At,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LetKind {
    /// `let`, or a binding made by K-normalization.
    Let,
    /// An explicit `unpack`: the value must be existential.
    Unpack,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    Var(VarId),
    Lit(Lit),
    Lambda {
        params: Vec<VarId>,
        body: ExprId,
    },
    Prim {
        prim: Prim,
        args: Vec<ExprId>,
    },
    Op {
        op: Op,
        args: Vec<ExprId>,
    },
    If {
        cond: ExprId,
        then: ExprId,
        els: ExprId,
    },
    Let {
        kind: LetKind,
        var: VarId,
        value: ExprId,
        body: ExprId,
    },
    /// An explicit `pack` (the type checker also packs implicitly, recorded in its side table).
    Pack(ExprId),
}

#[derive(Clone, Debug, PartialEq)]
pub struct VarInfo {
    pub name: String,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    pub var: VarId,
    pub ty: Type,
    pub ty_span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Program {
    /// Declared size variables, in declaration order.
    pub sizes: Vec<String>,
    pub size_spans: Vec<Span>,
    pub params: Vec<Param>,
    pub exprs: Vec<Expr>,
    pub spans: Vec<Span>,
    pub vars: Vec<VarInfo>,
    pub body: ExprId,
}

impl Program {
    pub fn expr(&self, id: ExprId) -> &Expr {
        &self.exprs[id.index()]
    }
    pub fn span(&self, id: ExprId) -> Span {
        self.spans[id.index()]
    }
    pub fn var(&self, id: VarId) -> &VarInfo {
        &self.vars[id.index()]
    }
    pub fn push(&mut self, expr: Expr, span: Span) -> ExprId {
        self.exprs.push(expr);
        self.spans.push(span);
        ExprId(self.exprs.len() as u32 - 1)
    }
    pub fn new_var(&mut self, name: &str, span: Span) -> VarId {
        self.vars.push(VarInfo {
            name: name.to_string(),
            span,
        });
        VarId(self.vars.len() as u32 - 1)
    }
    /// Direct children of a node, in evaluation order.
    pub fn children(&self, id: ExprId) -> Vec<ExprId> {
        match self.expr(id) {
            Expr::Var(_) | Expr::Lit(_) => vec![],
            Expr::Lambda { body, .. } => vec![*body],
            Expr::Prim { args, .. } | Expr::Op { args, .. } => args.clone(),
            Expr::If { cond, then, els } => vec![*cond, *then, *els],
            Expr::Let { value, body, .. } => vec![*value, *body],
            Expr::Pack(e) => vec![*e],
        }
    }
}

impl Prim {
    /// The spelling in `.lisp` source, fixed here once for reader and printer.
    pub fn name(&self) -> String {
        match self {
            Prim::Map(k) => match k {
                MapKind::Plain => "map".into(),
                MapKind::Glb(d) => dim_name("mapGlb", *d),
                MapKind::Wrg(d) => dim_name("mapWrg", *d),
                MapKind::Lcl(d) => dim_name("mapLcl", *d),
                MapKind::Seq => "mapSeq".into(),
                MapKind::SeqUnroll => "mapSeqUnroll".into(),
                MapKind::Vec => "mapVec".into(),
            },
            Prim::Reduce(k) => match k {
                ReduceKind::Plain => "reduce".into(),
                ReduceKind::Seq => "reduceSeq".into(),
                ReduceKind::SeqUnroll => "reduceSeqUnroll".into(),
            },
            Prim::Zip => "zip".into(),
            Prim::Split(_) => "split".into(),
            Prim::Join => "join".into(),
            Prim::Transpose => "transpose".into(),
            Prim::Slide(..) => "slide".into(),
            Prim::Pad(..) => "pad".into(),
            Prim::PadClamp(..) => "pad-clamp".into(),
            Prim::ReorderStride(_) => "reorder-stride".into(),
            Prim::Reverse => "reverse".into(),
            Prim::Generate(_) => "generate".into(),
            Prim::Iterate(_) => "iterate".into(),
            Prim::IterateUntil(_) => "iterate-until".into(),
            Prim::Filter(k) => match k {
                FilterKind::Plain => "filter".into(),
                FilterKind::Seq => "filterSeq".into(),
                FilterKind::Glb => "filterGlb".into(),
            },
            Prim::Scan(k) => match k {
                ScanKind::Plain => "scan".into(),
                ScanKind::Seq => "scanSeq".into(),
                ScanKind::Glb => "scanGlb".into(),
            },
            Prim::AsVector(_) => "asVector".into(),
            Prim::AsScalar => "asScalar".into(),
            Prim::To(s) => match s {
                AddressSpace::Global => "toGlobal".into(),
                AddressSpace::Local => "toLocal".into(),
                AddressSpace::Private => "toPrivate".into(),
            },
        }
    }
    /// The size arguments written before the others, e.g. `#2` of `split`.
    pub fn size_args(&self) -> Vec<ArithExpr> {
        match self {
            Prim::Split(k) | Prim::ReorderStride(k) | Prim::Generate(k) | Prim::Iterate(k) | Prim::IterateUntil(k) => {
                vec![k.clone()]
            }
            Prim::Slide(a, b) | Prim::Pad(a, b) | Prim::PadClamp(a, b) => vec![a.clone(), b.clone()],
            Prim::AsVector(w) => vec![ArithExpr::cst(i64::from(*w))],
            Prim::Map(_)
            | Prim::Reduce(_)
            | Prim::Zip
            | Prim::Join
            | Prim::Transpose
            | Prim::Reverse
            | Prim::Filter(_)
            | Prim::Scan(_)
            | Prim::AsScalar
            | Prim::To(_) => vec![],
        }
    }
    /// Whether this is a low-level (OpenCL) primitive, or a layout primitive valid at both levels.
    pub fn is_high_level_only(&self) -> bool {
        matches!(
            self,
            Prim::Map(MapKind::Plain)
                | Prim::Reduce(ReduceKind::Plain)
                | Prim::Filter(FilterKind::Plain)
                | Prim::Scan(ScanKind::Plain)
        )
    }
}

fn dim_name(base: &str, d: u8) -> String {
    if d == 0 {
        base.to_string()
    } else {
        format!("{base}{d}")
    }
}

impl Op {
    pub fn name(self) -> String {
        match self {
            Op::Add => "+".into(),
            Op::Sub => "-".into(),
            Op::Mul => "*".into(),
            Op::Div => "/".into(),
            Op::Rem => "%".into(),
            Op::Lt => "<".into(),
            Op::Le => "<=".into(),
            Op::Gt => ">".into(),
            Op::Ge => ">=".into(),
            Op::Eq => "=".into(),
            Op::Ne => "!=".into(),
            Op::And => "and".into(),
            Op::Or => "or".into(),
            Op::Not => "not".into(),
            Op::Neg => "-".into(),
            Op::Min => "min".into(),
            Op::Max => "max".into(),
            Op::Abs => "abs".into(),
            Op::Sqrt => "sqrt".into(),
            Op::Exp => "exp".into(),
            Op::Log => "log".into(),
            Op::Sin => "sin".into(),
            Op::Cos => "cos".into(),
            Op::Pow => "pow".into(),
            Op::Fma => "fma".into(),
            Op::ToFloat => "to-float".into(),
            Op::ToInt => "to-int".into(),
            Op::ToDouble => "to-double".into(),
            Op::ToUint => "to-uint".into(),
            Op::ToLong => "to-long".into(),
            Op::ToUlong => "to-ulong".into(),
            Op::As(s) => format!("as-{}", s.name()),
            Op::BitAnd => "bit-and".into(),
            Op::BitOr => "bit-or".into(),
            Op::BitXor => "bit-xor".into(),
            Op::BitNot => "bit-not".into(),
            Op::Shl => "shl".into(),
            Op::Shr => "shr".into(),
            Op::Rotl => "rotl".into(),
            Op::Dot => "dot".into(),
            Op::Length => "length".into(),
            Op::MakeVec => "vec".into(),
            Op::VGet(_) => "vget".into(),
            Op::Tuple => "tuple".into(),
            Op::Get(_) => "get".into(),
            Op::At => "at".into(),
        }
    }
}
