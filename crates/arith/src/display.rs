//! OpenCL C text. Every compound node is parenthesised, so the text can be
//! pasted into any context; negative constants are parenthesised too so that
//! `a-(-3)` never turns into `a--3`.
//!
//! [`Marked`] is the same text with exact divisions written `/^`: for messages that compare
//! two lengths, which must not print alike when they differ.

use std::fmt;

use crate::poly::Poly;
use crate::{ArithExpr, ExprKind};

fn fmt_cst(c: i64, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    if c == i64::MIN {
        // The literal 9223372036854775808 does not fit a signed long.
        write!(f, "(-9223372036854775807-1)")
    } else if c < 0 {
        write!(f, "({c})")
    } else {
        write!(f, "{c}")
    }
}

/// A monomial `c * atoms` (`c != 0`).
fn fmt_mono(c: i64, m: &[ArithExpr], mark: bool, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    if m.is_empty() {
        return fmt_cst(c, f);
    }
    if c == 1 && m.len() == 1 {
        return write_expr(&m[0], mark, f);
    }
    write!(f, "(")?;
    match c {
        1 => {}
        -1 => write!(f, "-")?,
        i64::MIN => write!(f, "(-9223372036854775807-1)*")?,
        _ => write!(f, "{c}*")?,
    }
    for (i, a) in m.iter().enumerate() {
        if i > 0 {
            write!(f, "*")?;
        }
        write_expr(a, mark, f)?;
    }
    write!(f, ")")
}

/// The text of `e`; with `mark`, exact divisions are written `/^`.
fn write_expr(e: &ArithExpr, mark: bool, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    use ExprKind::*;
    let bin = |f: &mut fmt::Formatter<'_>, open: &str, a: &ArithExpr, op: &str, b: &ArithExpr, close: &str| {
        write!(f, "{open}")?;
        write_expr(a, mark, f)?;
        write!(f, "{op}")?;
        write_expr(b, mark, f)?;
        write!(f, "{close}")
    };
    match e.kind() {
        Cst(c) => fmt_cst(*c, f),
        Var { name, .. } => write!(f, "{name}"),
        Prod(_) => {
            let (c, m) = Poly::split_mono(e);
            fmt_mono(c, &m, mark, f)
        }
        Sum(ts) => {
            write!(f, "(")?;
            for (i, t) in ts.iter().enumerate() {
                let (c, m) = Poly::split_mono(t);
                if i == 0 {
                    write_expr(t, mark, f)?;
                } else if c < 0 && c != i64::MIN {
                    write!(f, "-")?;
                    fmt_mono(-c, &m, mark, f)?;
                } else {
                    write!(f, "+")?;
                    write_expr(t, mark, f)?;
                }
            }
            write!(f, ")")
        }
        ExactDiv(a, b) if mark => bin(f, "(", a, "/^", b, ")"),
        Div(a, b) | ExactDiv(a, b) => bin(f, "(", a, "/", b, ")"),
        Mod(a, b) => bin(f, "(", a, "%", b, ")"),
        Pow(a, b) => bin(f, "pow(", a, ", ", b, ")"),
        Min(a, b) => bin(f, "min(", a, ", ", b, ")"),
        Max(a, b) => bin(f, "max(", a, ", ", b, ")"),
        RawAdd(a, b) => bin(f, "(", a, "+", b, ")"),
        RawSub(a, b) => bin(f, "(", a, "-", b, ")"),
        RawMul(a, b) => bin(f, "(", a, "*", b, ")"),
    }
}

impl fmt::Display for ArithExpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_expr(self, false, f)
    }
}

/// An expression printed with its exact divisions written `/^` (see
/// [`ArithExpr::marked`]).
pub struct Marked<'a>(pub(crate) &'a ArithExpr);

impl fmt::Display for Marked<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_expr(self.0, true, f)
    }
}
