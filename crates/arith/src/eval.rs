//! Evaluation with C semantics and checked arithmetic.

use std::fmt;

use crate::{ArithExpr, ExprKind};

#[derive(Clone, PartialEq, Eq, Debug)]
pub enum EvalError {
    /// A variable the environment does not bind.
    Unbound(String),
    DivByZero,
    Overflow,
    NegativeExponent,
}

impl fmt::Display for EvalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EvalError::Unbound(n) => write!(f, "unbound variable `{n}`"),
            EvalError::DivByZero => write!(f, "division or modulo by zero"),
            EvalError::Overflow => write!(f, "it does not fit a 64-bit integer"),
            EvalError::NegativeExponent => write!(f, "negative exponent"),
        }
    }
}

impl std::error::Error for EvalError {}

pub(crate) fn checked_pow(b: i64, e: i64) -> Result<i64, EvalError> {
    if e < 0 {
        return Err(EvalError::NegativeExponent);
    }
    match b {
        0 => return Ok(if e == 0 { 1 } else { 0 }),
        1 => return Ok(1),
        -1 => return Ok(if e % 2 == 0 { 1 } else { -1 }),
        _ => {}
    }
    let e = u32::try_from(e).map_err(|_| EvalError::Overflow)?;
    b.checked_pow(e).ok_or(EvalError::Overflow)
}

pub(crate) fn c_div(a: i64, b: i64) -> Result<i64, EvalError> {
    if b == 0 {
        return Err(EvalError::DivByZero);
    }
    a.checked_div(b).ok_or(EvalError::Overflow)
}

pub(crate) fn c_rem(a: i64, b: i64) -> Result<i64, EvalError> {
    if b == 0 {
        return Err(EvalError::DivByZero);
    }
    a.checked_rem(b).ok_or(EvalError::Overflow)
}

pub(crate) fn eval(e: &ArithExpr, env: &dyn Fn(&str) -> Option<i64>) -> Result<i64, EvalError> {
    use ExprKind::*;
    let ov = |r: Option<i64>| r.ok_or(EvalError::Overflow);
    match e.kind() {
        Cst(c) => Ok(*c),
        Var { name, .. } => env(name).ok_or_else(|| EvalError::Unbound(name.clone())),
        Sum(ts) => ts.iter().try_fold(0i64, |acc, t| ov(acc.checked_add(eval(t, env)?))),
        Prod(fs) => fs.iter().try_fold(1i64, |acc, t| ov(acc.checked_mul(eval(t, env)?))),
        Div(a, b) | ExactDiv(a, b) => c_div(eval(a, env)?, eval(b, env)?),
        Mod(a, b) => c_rem(eval(a, env)?, eval(b, env)?),
        Pow(a, b) => checked_pow(eval(a, env)?, eval(b, env)?),
        Min(a, b) => Ok(eval(a, env)?.min(eval(b, env)?)),
        Max(a, b) => Ok(eval(a, env)?.max(eval(b, env)?)),
        RawAdd(a, b) => ov(eval(a, env)?.checked_add(eval(b, env)?)),
        RawSub(a, b) => ov(eval(a, env)?.checked_sub(eval(b, env)?)),
        RawMul(a, b) => ov(eval(a, env)?.checked_mul(eval(b, env)?)),
    }
}
