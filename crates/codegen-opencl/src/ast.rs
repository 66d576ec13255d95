//! The typed syntax tree of the OpenCL C that code generation produces.
//!
//! Owns: C types, expressions, statements, kernels and the module (struct typedefs in
//! dependency order, then kernels). Every identifier in it is an [`Ident`] handed out by the
//! [`Namer`](crate::namer::Namer); built-in functions are named by their fixed OpenCL spelling.
//! The tree is printed by [`crate::print`], which only prints: parentheses come from operator
//! precedence there, so nothing here carries text that still needs quoting.

use crate::namer::Ident;
use ir::AddressSpace;
use std::borrow::Cow;
use std::collections::BTreeSet;

/// A scalar C type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Scalar {
    Int,
    UInt,
    Long,
    ULong,
    Float,
    Double,
}

/// A C type.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum CType {
    Scalar(Scalar),
    /// An OpenCL vector type, `float4`.
    Vector(Scalar, u8),
    /// A struct by its typedef name.
    Struct(Ident),
    /// A pointer into `space` (kernel parameters).
    Ptr {
        space: AddressSpace,
        elem: Box<CType>,
        is_const: bool,
        restrict: bool,
    },
}

impl CType {
    pub const INT: CType = CType::Scalar(Scalar::Int);
    pub const FLOAT: CType = CType::Scalar(Scalar::Float);
    pub const ULONG: CType = CType::Scalar(Scalar::ULong);

    /// Whether this is an integer scalar or vector type (the operands of bit operations).
    pub fn is_integer(&self) -> bool {
        match self {
            CType::Scalar(s) | CType::Vector(s, _) => match s {
                Scalar::Int | Scalar::UInt | Scalar::Long | Scalar::ULong => true,
                Scalar::Float | Scalar::Double => false,
            },
            CType::Struct(_) | CType::Ptr { .. } => false,
        }
    }

    /// Whether values of this type need the `cl_khr_fp64` extension.
    pub fn uses_double(&self) -> bool {
        match self {
            CType::Scalar(s) | CType::Vector(s, _) => *s == Scalar::Double,
            CType::Ptr { elem, .. } => elem.uses_double(),
            CType::Struct(_) => false,
        }
    }
}

/// A prefix operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnOp {
    Neg,
    Not,
    /// `~`
    BitNot,
}

/// An infix operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    Mul,
    Div,
    Rem,
    Add,
    Sub,
    Shl,
    Shr,
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
    BitAnd,
    BitXor,
    BitOr,
    And,
    Or,
}

/// A C expression.
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    Var(Ident),
    Int(i64),
    Float(f32),
    Double(f64),
    /// A literal of another scalar type, by its 64 bits (`3u`, `-3L`, `3UL`).
    TypedInt(Scalar, u64),
    /// `base[index]`
    Index(Box<Expr>, Box<Expr>),
    /// `base.field`: a struct component `c0` or a vector lane `s3`.
    Field(Box<Expr>, Cow<'static, str>),
    Unary(UnOp, Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// A call of an OpenCL built-in function.
    Call(Cow<'static, str>, Vec<Expr>),
    Cast(CType, Box<Expr>),
    /// `cond ? then : els`
    Select(Box<Expr>, Box<Expr>, Box<Expr>),
    /// `(float4)(a, b, c, d)`
    VecLit(CType, Vec<Expr>),
    /// An identifier carried by an `ArithExpr` (a size variable, loop index or run-time length;
    /// the Namer handed all of them out), by its spelling.
    Sym(String),
}

impl Expr {
    pub fn var(i: &Ident) -> Expr {
        Expr::Var(i.clone())
    }

    pub fn bin(op: BinOp, a: Expr, b: Expr) -> Expr {
        Expr::Binary(op, Box::new(a), Box::new(b))
    }

    pub fn un(op: UnOp, a: Expr) -> Expr {
        Expr::Unary(op, Box::new(a))
    }

    pub fn call(f: impl Into<Cow<'static, str>>, args: Vec<Expr>) -> Expr {
        Expr::Call(f.into(), args)
    }

    pub fn cast(t: CType, a: Expr) -> Expr {
        Expr::Cast(t, Box::new(a))
    }

    pub fn select(c: Expr, a: Expr, b: Expr) -> Expr {
        Expr::Select(Box::new(c), Box::new(a), Box::new(b))
    }

    pub fn index(self, i: Expr) -> Expr {
        Expr::Index(Box::new(self), Box::new(i))
    }

    pub fn field(self, f: impl Into<Cow<'static, str>>) -> Expr {
        Expr::Field(Box::new(self), f.into())
    }

    /// Struct component `c`.
    pub fn component(self, c: usize) -> Expr {
        self.field(format!("c{c}"))
    }

    /// Vector lane `k` (`s0` .. `sf`).
    pub fn lane(self, k: u32) -> Expr {
        self.field(format!("s{}", std::char::from_digit(k, 16).unwrap_or('0')))
    }

    /// The direct subexpressions, mutably.
    pub fn children_mut(&mut self) -> Vec<&mut Expr> {
        match self {
            Expr::Var(_) | Expr::Int(_) | Expr::Float(_) | Expr::Double(_) | Expr::TypedInt(..) | Expr::Sym(_) => {
                vec![]
            }
            Expr::Index(a, b) | Expr::Binary(_, a, b) => vec![a, b],
            Expr::Field(a, _) | Expr::Unary(_, a) | Expr::Cast(_, a) => vec![a],
            Expr::Call(_, xs) | Expr::VecLit(_, xs) => xs.iter_mut().collect(),
            Expr::Select(c, a, b) => vec![c, a, b],
        }
    }

    /// This expression with every subexpression equal to `from` replaced by `to`.
    pub fn subst(&self, from: &Expr, to: &Expr) -> Expr {
        if self == from {
            return to.clone();
        }
        let mut e = self.clone();
        for c in e.children_mut() {
            *c = c.subst(from, to);
        }
        e
    }

    /// Nesting depth of the tree (a leaf is 1).
    pub fn depth(&self) -> usize {
        1 + self.children().map(Expr::depth).max().unwrap_or(0)
    }

    /// The direct subexpressions.
    pub fn children(&self) -> impl Iterator<Item = &Expr> {
        let v: Vec<&Expr> = match self {
            Expr::Var(_) | Expr::Int(_) | Expr::Float(_) | Expr::Double(_) | Expr::TypedInt(..) | Expr::Sym(_) => {
                vec![]
            }
            Expr::Index(a, b) | Expr::Binary(_, a, b) => vec![a, b],
            Expr::Field(a, _) | Expr::Unary(_, a) | Expr::Cast(_, a) => vec![a],
            Expr::Call(_, xs) | Expr::VecLit(_, xs) => xs.iter().collect(),
            Expr::Select(c, a, b) => vec![c, a, b],
        };
        v.into_iter()
    }
}

/// `=`, `+=`, `|=`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AssignOp {
    Set,
    Add,
    Or,
}

/// Which memory a barrier orders.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fence {
    Local,
    Global,
    Both,
}

/// A C statement.
#[derive(Clone, Debug, PartialEq)]
pub enum Stmt {
    /// `[const] [local] T name[len] = init;`
    Decl {
        ty: CType,
        name: Ident,
        /// `local` arrays at kernel scope; `None` is private.
        space: Option<AddressSpace>,
        len: Option<usize>,
        init: Option<Expr>,
        is_const: bool,
    },
    Assign {
        lhs: Expr,
        op: AssignOp,
        rhs: Expr,
    },
    /// A call of a built-in for its effect (`atomic_max`).
    Call(Expr),
    /// `for (int var = init; cond; step) { body }`
    For {
        var: Ident,
        init: Expr,
        cond: Expr,
        step: (AssignOp, Expr),
        unroll: bool,
        body: Vec<Stmt>,
    },
    If {
        cond: Expr,
        then: Vec<Stmt>,
        els: Vec<Stmt>,
    },
    Block(Vec<Stmt>),
    Barrier(Fence),
    /// `vstoreW(value, 0, ptr + offset);`
    VStore {
        w: u8,
        value: Expr,
        ptr: Expr,
        offset: Expr,
    },
    /// `asm(...)`: one PTX instruction with its operands ([`crate::ptx`]).
    Asm(crate::ptx::Asm),
}

impl Stmt {
    /// `T name = init;`
    pub fn decl(ty: CType, name: &Ident, init: Expr) -> Stmt {
        Stmt::Decl {
            ty,
            name: name.clone(),
            space: None,
            len: None,
            init: Some(init),
            is_const: false,
        }
    }

    pub fn assign(lhs: Expr, rhs: Expr) -> Stmt {
        Stmt::Assign {
            lhs,
            op: AssignOp::Set,
            rhs,
        }
    }
}

/// A kernel parameter.
#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    pub ty: CType,
    pub name: Ident,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Kernel {
    pub name: Ident,
    /// `reqd_work_group_size`, when the work-group shape is fixed.
    pub work_group: Option<[usize; 3]>,
    pub params: Vec<Param>,
    pub body: Vec<Stmt>,
}

/// A struct typedef: `typedef struct { T0 c0; ... } Name;`
#[derive(Clone, Debug, PartialEq)]
pub struct StructDef {
    pub name: Ident,
    pub fields: Vec<CType>,
}

/// One OpenCL program.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Module {
    pub fp64: bool,
    /// In dependency order: a struct comes after the structs its fields hold.
    pub structs: Vec<StructDef>,
    pub kernels: Vec<Kernel>,
}

impl Module {
    /// A module of `structs` (in any order) and `kernels`: the typedefs are ordered so each
    /// comes after every struct it holds (depth-first, otherwise in the given order), and the
    /// fp64 pragma is on when any type uses `double`.
    pub fn new(structs: Vec<StructDef>, kernels: Vec<Kernel>, fp64: bool) -> Module {
        fn visit(i: usize, all: &[StructDef], done: &mut Vec<bool>, out: &mut Vec<StructDef>) {
            if done[i] {
                return;
            }
            done[i] = true;
            for f in &all[i].fields {
                if let CType::Struct(n) = f {
                    if let Some(j) = all.iter().position(|s| &s.name == n) {
                        visit(j, all, done, out);
                    }
                }
            }
            out.push(all[i].clone());
        }
        let mut done = vec![false; structs.len()];
        let mut ordered = vec![];
        for i in 0..structs.len() {
            visit(i, &structs, &mut done, &mut ordered);
        }
        let fp64 = fp64
            || ordered.iter().any(|s| s.fields.iter().any(CType::uses_double))
            || kernels.iter().any(|k| k.params.iter().any(|p| p.ty.uses_double()));
        Module {
            fp64,
            structs: ordered,
            kernels,
        }
    }
}

/// Calls `f` on every expression of the statements (the outermost of each, not their parts),
/// statements nested in blocks, branches and loops included.
pub fn for_each_expr_mut(stmts: &mut [Stmt], f: &mut dyn FnMut(&mut Expr)) {
    for s in stmts {
        match s {
            Stmt::Decl { init, .. } => init.iter_mut().for_each(&mut *f),
            Stmt::Assign { lhs, rhs, .. } => {
                f(lhs);
                f(rhs);
            }
            Stmt::Call(e) => f(e),
            Stmt::For {
                init, cond, step, body, ..
            } => {
                f(init);
                f(cond);
                f(&mut step.1);
                for_each_expr_mut(body, f);
            }
            Stmt::If { cond, then, els } => {
                f(cond);
                for_each_expr_mut(then, f);
                for_each_expr_mut(els, f);
            }
            Stmt::Block(b) => for_each_expr_mut(b, f),
            Stmt::Barrier(_) => {}
            Stmt::VStore { value, ptr, offset, .. } => {
                f(value);
                f(ptr);
                f(offset);
            }
            Stmt::Asm(a) => a.operands_mut().for_each(&mut *f),
        }
    }
}

/// Calls `f` on every expression of the statements, as [`for_each_expr_mut`] does, reading.
pub fn for_each_expr(stmts: &[Stmt], f: &mut dyn FnMut(&Expr)) {
    for s in stmts {
        match s {
            Stmt::Decl { init, .. } => init.iter().for_each(&mut *f),
            Stmt::Assign { lhs, rhs, .. } => {
                f(lhs);
                f(rhs);
            }
            Stmt::Call(e) => f(e),
            Stmt::For {
                init, cond, step, body, ..
            } => {
                f(init);
                f(cond);
                f(&step.1);
                for_each_expr(body, f);
            }
            Stmt::If { cond, then, els } => {
                f(cond);
                for_each_expr(then, f);
                for_each_expr(els, f);
            }
            Stmt::Block(b) => for_each_expr(b, f),
            Stmt::Barrier(_) => {}
            Stmt::VStore { value, ptr, offset, .. } => {
                f(value);
                f(ptr);
                f(offset);
            }
            Stmt::Asm(a) => a.operands().for_each(|(e, _, _)| f(e)),
        }
    }
}

/// Every identifier the statements declare or use (for kernel parameters: a buffer, size or
/// scalar is a parameter exactly when the body names it).
pub fn idents(stmts: &[Stmt]) -> BTreeSet<String> {
    fn expr(e: &Expr, out: &mut BTreeSet<String>) {
        match e {
            Expr::Var(v) => {
                out.insert(v.to_string());
            }
            Expr::Sym(t) => {
                out.insert(t.clone());
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
            | Expr::VecLit(..) => {}
        }
        e.children().for_each(|c| expr(c, out));
    }
    fn stmt(s: &Stmt, out: &mut BTreeSet<String>) {
        match s {
            Stmt::Decl { name, init, .. } => {
                out.insert(name.to_string());
                init.iter().for_each(|e| expr(e, out));
            }
            Stmt::Assign { lhs, rhs, .. } => {
                expr(lhs, out);
                expr(rhs, out);
            }
            Stmt::Call(e) => expr(e, out),
            Stmt::For {
                var,
                init,
                cond,
                step,
                body,
                ..
            } => {
                out.insert(var.to_string());
                expr(init, out);
                expr(cond, out);
                expr(&step.1, out);
                body.iter().for_each(|s| stmt(s, out));
            }
            Stmt::If { cond, then, els } => {
                expr(cond, out);
                then.iter().chain(els).for_each(|s| stmt(s, out));
            }
            Stmt::Block(b) => b.iter().for_each(|s| stmt(s, out)),
            Stmt::Barrier(_) => {}
            Stmt::VStore { value, ptr, offset, .. } => {
                expr(value, out);
                expr(ptr, out);
                expr(offset, out);
            }
            Stmt::Asm(a) => a.operands().for_each(|(e, _, _)| expr(e, out)),
        }
    }
    let mut out = BTreeSet::new();
    stmts.iter().for_each(|s| stmt(s, &mut out));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::namer::Namer;

    #[test]
    fn structs_come_after_the_structs_they_hold() {
        let mut n = Namer::new();
        let inner = n.fresh("Tuple_int_float");
        let outer = n.fresh("Tuple_Tuple_int_float_int");
        let m = Module::new(
            vec![
                StructDef {
                    name: outer.clone(),
                    fields: vec![CType::Struct(inner.clone()), CType::INT],
                },
                StructDef {
                    name: inner.clone(),
                    fields: vec![CType::INT, CType::FLOAT],
                },
            ],
            vec![],
            false,
        );
        let names: Vec<&Ident> = m.structs.iter().map(|s| &s.name).collect();
        assert_eq!(names, [&inner, &outer]);
    }

    #[test]
    fn identifiers_are_collected_from_the_tree() {
        let mut n = Namer::new();
        let (out, i, len) = (n.exact("v_out"), n.fresh("v_i"), n.exact("v_N"));
        let body = vec![Stmt::For {
            var: i.clone(),
            init: Expr::Int(0),
            cond: Expr::bin(BinOp::Lt, Expr::var(&i), Expr::var(&len)),
            step: (AssignOp::Add, Expr::Int(1)),
            unroll: false,
            body: vec![Stmt::If {
                cond: Expr::bin(
                    BinOp::Gt,
                    Expr::Sym("v_xs".into()).index(Expr::var(&i)),
                    Expr::Float(0.5),
                ),
                then: vec![Stmt::assign(Expr::var(&out).index(Expr::var(&i)), Expr::Float(1.0))],
                els: vec![],
            }],
        }];
        let ids = idents(&body);
        let want: BTreeSet<String> = ["v_N", "v_i_1", "v_out", "v_xs"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(ids, want);
        assert!(!ids.contains("v_o"));
    }

    #[test]
    fn depth_counts_the_longest_path() {
        let x = Expr::Int(1);
        let e = Expr::bin(BinOp::Add, Expr::un(UnOp::Neg, x.clone()), x);
        assert_eq!(e.depth(), 3);
    }
}
