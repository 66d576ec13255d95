//! A split reduction's partials combined by MPI itself (`MPI_Reduce`, or `MPI_Allreduce` where
//! every rank needs the result: a loop whose state is the reduction): the planner splits a
//! reduction only where its operator is `+` with init 0 or `*` with init 1 ([`crate::decide`]),
//! which are MPI_SUM and MPI_PROD over the partials' scalar type. A rank with an empty slice
//! contributes the operator's identity. A reduction by another operator (a lambda of the
//! user's) is not split this way: its lowered per-group partials are gathered and the program's
//! own final group combines them on rank 0 (`Gather::Finish`).

use super::transport::{failure_text, Comm};
use ir::interp::Value;
use ir::{Expr, Op, Scalar, Type};
use lift_compile::Error;
use mpi::collective::SystemOperation;

/// How the partials combine in MPI: the operator (true: `+`, false: `*`) and the scalar type.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Combine {
    sum: bool,
    scalar: Scalar,
}

/// The MPI combination of a split's `combine` program (`reduce op init partials` over `[T]P`),
/// where `op` is `+` or `*` of a number type `T`.
pub(super) fn of(combine: &str) -> Option<Combine> {
    let prog = ir::parse(combine).ok()?;
    let scalar = match &prog.params.first()?.ty {
        Type::Array(e, _) => match **e {
            Type::Scalar(s) => s,
            _ => return None,
        },
        _ => return None,
    };
    let Expr::Prim { args, .. } = prog.expr(prog.body) else {
        return None;
    };
    let Expr::Lambda { body, .. } = prog.expr(*args.first()?) else {
        return None;
    };
    let sum = match prog.expr(*body) {
        Expr::Op { op: Op::Add, .. } => true,
        Expr::Op { op: Op::Mul, .. } => false,
        _ => return None,
    };
    match scalar {
        Scalar::Float | Scalar::Double | Scalar::Int | Scalar::Uint | Scalar::Long | Scalar::Ulong => {
            Some(Combine { sum, scalar })
        }
        Scalar::Bool => None,
    }
}

/// Every rank's partial (`part`: its one-element result, its error, or `None` for an empty
/// slice) combined: `[x]` on rank 0, or on every rank with `everywhere`. A failure on any rank
/// is every rank's error (agreed before the reduction, so no rank waits in it alone).
pub(super) fn reduce(
    comm: &Comm,
    how: Combine,
    part: Option<Result<Value, Error>>,
    everywhere: bool,
) -> Result<Option<Value>, Error> {
    let mine = match part {
        None => Ok(None),
        Some(Ok(Value::Array(mut xs))) if xs.len() == 1 => Ok(Some(xs.remove(0))),
        Some(Ok(_)) => Err(Error::plain("internal: a partial result is not one value")),
        Some(Err(e)) => Err(Error::plain(failure_text(&e))),
    };
    let mine = comm.agree(mine)?;
    let op = if how.sum {
        SystemOperation::sum()
    } else {
        SystemOperation::product()
    };
    let id = u8::from(!how.sum);
    let bad = || Error::plain("internal: a partial of another type than its reduction's");
    macro_rules! with {
        ($variant:ident, $t:ty) => {{
            let x: $t = match mine {
                None => id.into(),
                Some(Value::$variant(x)) => x,
                Some(_) => return Err(bad()),
            };
            comm.reduce(x, op, everywhere).map(Value::$variant)
        }};
    }
    let combined = match how.scalar {
        Scalar::Float => with!(Float, f32),
        Scalar::Double => with!(Double, f64),
        Scalar::Int => with!(Int, i32),
        Scalar::Uint => with!(Uint, u32),
        Scalar::Long => with!(Long, i64),
        Scalar::Ulong => with!(Ulong, u64),
        Scalar::Bool => return Err(bad()),
    };
    Ok(combined.map(|x| Value::Array(vec![x])))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_and_products_of_numbers_combine_in_mpi_and_nothing_else_does() {
        let prog = |op: &str, t: &str, init: &str| {
            format!("(lift (P) ((array-type {t} P)) (lambda (ps) (reduce (lambda (a b) ({op} a b)) {init} ps)))")
        };
        assert_eq!(
            of(&prog("+", "float", "0.0f")),
            Some(Combine {
                sum: true,
                scalar: Scalar::Float
            })
        );
        assert_eq!(
            of(&prog("*", "int", "1")),
            Some(Combine {
                sum: false,
                scalar: Scalar::Int
            })
        );
        assert_eq!(of(&prog("max", "float", "0.0f")), None);
        assert_eq!(of(&prog("and", "bool", "true")), None);
    }
}
