//! OpenCL C text. Every compound node is parenthesised, so the text can be
//! pasted into any context; negative constants are parenthesised too so that
//! `a-(-3)` never turns into `a--3`.

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
fn fmt_mono(c: i64, m: &[ArithExpr], f: &mut fmt::Formatter<'_>) -> fmt::Result {
    if m.is_empty() {
        return fmt_cst(c, f);
    }
    if c == 1 && m.len() == 1 {
        return write!(f, "{}", m[0]);
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
        write!(f, "{a}")?;
    }
    write!(f, ")")
}

impl fmt::Display for ArithExpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use ExprKind::*;
        match self.kind() {
            Cst(c) => fmt_cst(*c, f),
            Var { name, .. } => write!(f, "{name}"),
            Prod(_) => {
                let (c, m) = Poly::split_mono(self);
                fmt_mono(c, &m, f)
            }
            Sum(ts) => {
                write!(f, "(")?;
                for (i, t) in ts.iter().enumerate() {
                    let (c, m) = Poly::split_mono(t);
                    if i == 0 {
                        write!(f, "{t}")?;
                    } else if c < 0 && c != i64::MIN {
                        write!(f, "-")?;
                        fmt_mono(-c, &m, f)?;
                    } else {
                        write!(f, "+{t}")?;
                    }
                }
                write!(f, ")")
            }
            Div(a, b) | ExactDiv(a, b) => write!(f, "({a}/{b})"),
            Mod(a, b) => write!(f, "({a}%{b})"),
            Pow(a, b) => write!(f, "pow({a}, {b})"),
            Min(a, b) => write!(f, "min({a}, {b})"),
            Max(a, b) => write!(f, "max({a}, {b})"),
            RawAdd(a, b) => write!(f, "({a}+{b})"),
            RawSub(a, b) => write!(f, "({a}-{b})"),
            RawMul(a, b) => write!(f, "({a}*{b})"),
        }
    }
}
