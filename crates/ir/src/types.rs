//! Types of LIFT values. Array lengths are symbolic (`ArithExpr`); an existential array
//! `{∃X. [T]X}` hides its length, which is only known at run time (the result of a filter).

use arith::ArithExpr;
use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scalar {
    Float,
    Double,
    Int,
    Bool,
    /// 32-bit unsigned.
    Uint,
    /// 64-bit signed.
    Long,
    /// 64-bit unsigned.
    Ulong,
}

impl Scalar {
    pub fn name(self) -> &'static str {
        match self {
            Scalar::Float => "float",
            Scalar::Double => "double",
            Scalar::Int => "int",
            Scalar::Bool => "bool",
            Scalar::Uint => "uint",
            Scalar::Long => "long",
            Scalar::Ulong => "ulong",
        }
    }
    pub fn is_floating(self) -> bool {
        match self {
            Scalar::Float | Scalar::Double => true,
            Scalar::Int | Scalar::Bool | Scalar::Uint | Scalar::Long | Scalar::Ulong => false,
        }
    }
    /// `int`, `uint`, `long` or `ulong`: the types of bit operations.
    pub fn is_integer(self) -> bool {
        match self {
            Scalar::Int | Scalar::Uint | Scalar::Long | Scalar::Ulong => true,
            Scalar::Float | Scalar::Double | Scalar::Bool => false,
        }
    }
    /// Whether values are numbers (arithmetic applies).
    pub fn is_numeric(self) -> bool {
        self.is_floating() || self.is_integer()
    }
    /// Bytes of one element on the device (`bool` is stored as an `int`: OpenCL forbids `bool` in buffers).
    pub fn size_bytes(self) -> usize {
        match self {
            Scalar::Float | Scalar::Int | Scalar::Uint => 4,
            Scalar::Double | Scalar::Long | Scalar::Ulong => 8,
            Scalar::Bool => 4,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Type {
    Scalar(Scalar),
    /// OpenCL vector `floatN`; widths 2, 3, 4, 8, 16.
    Vector(Scalar, u8),
    Tuple(Vec<Type>),
    Array(Box<Type>, ArithExpr),
    /// `{∃X. [T]X}`: the element type; the length is hidden.
    Exists(Box<Type>),
    Fun(Vec<Type>, Box<Type>),
}

impl Type {
    pub fn array(elem: Type, len: ArithExpr) -> Type {
        Type::Array(Box::new(elem), len)
    }
    pub fn float() -> Type {
        Type::Scalar(Scalar::Float)
    }
    pub fn int() -> Type {
        Type::Scalar(Scalar::Int)
    }
    pub fn bool() -> Type {
        Type::Scalar(Scalar::Bool)
    }
    /// Every size variable mentioned anywhere in the type.
    pub fn mentions(&self, var: &str) -> bool {
        match self {
            Type::Scalar(_) | Type::Vector(..) => false,
            Type::Tuple(ts) => ts.iter().any(|t| t.mentions(var)),
            Type::Array(e, n) => n.mentions(var) || e.mentions(var),
            Type::Exists(e) => e.mentions(var),
            Type::Fun(ps, r) => ps.iter().any(|t| t.mentions(var)) || r.mentions(var),
        }
    }
    pub fn subst(&self, var: &str, by: &ArithExpr) -> Type {
        self.map_lengths(&|n| n.subst(var, by))
    }
    /// The same type with every array length replaced by `f(length)`.
    pub fn map_lengths(&self, f: &dyn Fn(&ArithExpr) -> ArithExpr) -> Type {
        match self {
            Type::Scalar(_) | Type::Vector(..) => self.clone(),
            Type::Tuple(ts) => Type::Tuple(ts.iter().map(|t| t.map_lengths(f)).collect()),
            Type::Array(e, n) => Type::array(e.map_lengths(f), f(n)),
            Type::Exists(e) => Type::Exists(Box::new(e.map_lengths(f))),
            Type::Fun(ps, r) => Type::Fun(
                ps.iter().map(|t| t.map_lengths(f)).collect(),
                Box::new(r.map_lengths(f)),
            ),
        }
    }
    /// The scalar at the bottom of a scalar or vector type.
    pub fn scalar(&self) -> Option<Scalar> {
        match self {
            Type::Scalar(s) | Type::Vector(s, _) => Some(*s),
            Type::Tuple(_) | Type::Array(..) | Type::Exists(_) | Type::Fun(..) => None,
        }
    }
    /// Whether values of this type have a fixed size known from sizes alone (no hidden lengths).
    pub fn has_existential(&self) -> bool {
        match self {
            Type::Scalar(_) | Type::Vector(..) => false,
            Type::Tuple(ts) => ts.iter().any(Type::has_existential),
            Type::Array(e, _) => e.has_existential(),
            Type::Exists(_) => true,
            Type::Fun(ps, r) => ps.iter().any(Type::has_existential) || r.has_existential(),
        }
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_type(self, false, f)
    }
}

/// A type printed with the exact divisions of its lengths written `/^` (see
/// [`Type::marked`]).
pub struct MarkedType<'a>(&'a Type);

impl fmt::Display for MarkedType<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_type(self.0, true, f)
    }
}

impl Type {
    /// The type with the exact divisions of its lengths written `/^` (`ArithExpr::marked`).
    pub fn marked(&self) -> MarkedType<'_> {
        MarkedType(self)
    }
}

/// The texts of two types (or lengths, as `[T]n`) that a message says differ, printed so that
/// they read differently: plainly where that tells them apart, else with exact divisions
/// marked `/^`, else structurally.
pub fn distinct_texts(a: &Type, b: &Type) -> (String, String) {
    let plain = (a.to_string(), b.to_string());
    if plain.0 != plain.1 || a == b {
        return plain;
    }
    let marked = (a.marked().to_string(), b.marked().to_string());
    if marked.0 != marked.1 {
        return marked;
    }
    (format!("{a:?}"), format!("{b:?}"))
}

/// The texts of two lengths that a message says differ (see [`distinct_texts`]).
pub fn distinct_lengths(m: &ArithExpr, n: &ArithExpr) -> (String, String) {
    let plain = (m.to_string(), n.to_string());
    if plain.0 != plain.1 || m == n {
        return plain;
    }
    let marked = (m.marked().to_string(), n.marked().to_string());
    if marked.0 != marked.1 {
        return marked;
    }
    (format!("{m:?}"), format!("{n:?}"))
}

fn write_type(t: &Type, mark: bool, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    let sub = |f: &mut fmt::Formatter<'_>, t: &Type| write_type(t, mark, f);
    match t {
        Type::Scalar(s) => write!(f, "{}", s.name()),
        Type::Vector(s, w) => write!(f, "{}{}", s.name(), w),
        Type::Tuple(ts) => {
            write!(f, "(")?;
            for (i, t) in ts.iter().enumerate() {
                if i > 0 {
                    write!(f, ", ")?;
                }
                sub(f, t)?;
            }
            write!(f, ")")
        }
        Type::Array(e, n) => {
            let n = if mark { n.marked().to_string() } else { n.to_string() };
            write!(f, "[")?;
            sub(f, e)?;
            if n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') || (n.starts_with('(') && n.ends_with(')')) {
                write!(f, "]{n}")
            } else {
                write!(f, "]({n})")
            }
        }
        Type::Exists(e) => {
            write!(f, "{{∃X. [")?;
            sub(f, e)?;
            write!(f, "]X}}")
        }
        Type::Fun(ps, r) => {
            write!(f, "(")?;
            for (i, t) in ps.iter().enumerate() {
                if i > 0 {
                    write!(f, ", ")?;
                }
                sub(f, t)?;
            }
            write!(f, "{}", if ps.len() == 1 { " -> " } else { ") -> " })?;
            sub(f, r)?;
            if ps.len() == 1 {
                write!(f, ")")?;
            }
            Ok(())
        }
    }
}
