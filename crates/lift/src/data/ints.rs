//! Integer data of every width: JSON integers and `.npy` integer arrays (`int32`, `uint32`,
//! `int64`, `uint64`) read into `int`, `uint`, `long` and `ulong` parameters, each value
//! range-checked against the declared type (an error names the parameter and the element);
//! `.npy` output of `uint`, `long` and `ulong` results.

use super::{index_str, DataError, Res};
use ir::interp::Value;
use ir::Scalar;

/// The value of kind `s` (an integer kind) equal to `v`, if `v` is in its range.
pub(super) fn int_value(v: i128, s: Scalar) -> Option<Value> {
    match s {
        Scalar::Int => i32::try_from(v).ok().map(Value::Int),
        Scalar::Uint => u32::try_from(v).ok().map(Value::Uint),
        Scalar::Long => i64::try_from(v).ok().map(Value::Long),
        Scalar::Ulong => u64::try_from(v).ok().map(Value::Ulong),
        Scalar::Float | Scalar::Double | Scalar::Bool => None,
    }
}

/// `a uint (32-bit unsigned: 0 to 4294967295)`, for out-of-range messages.
pub(super) fn range_text(s: Scalar) -> String {
    let (article, bits, lo, hi) = match s {
        Scalar::Int => ("an", "32-bit", i128::from(i32::MIN), i128::from(i32::MAX)),
        Scalar::Uint => ("a", "32-bit unsigned", 0, i128::from(u32::MAX)),
        Scalar::Long => ("a", "64-bit", i128::from(i64::MIN), i128::from(i64::MAX)),
        Scalar::Ulong => ("a", "64-bit unsigned", 0, i128::from(u64::MAX)),
        Scalar::Float | Scalar::Double | Scalar::Bool => return s.name().to_string(),
    };
    format!("{article} {} ({bits}: {lo} to {hi})", s.name())
}

/// A JSON number for an integer parameter of kind `s`: an integer in range, or a number with
/// an integral value in range (`3.0`); `path` names the element.
pub(super) fn json_int(n: &serde_json::Number, s: Scalar, path: &dyn std::fmt::Display) -> Res<Value> {
    let exact = n.as_i64().map(i128::from).or_else(|| n.as_u64().map(i128::from));
    let v = match (exact, n.as_f64()) {
        (Some(v), _) => v,
        // beyond 2^64 serde_json keeps only an f64; no integer type holds such a value
        (None, Some(f)) if f.fract() == 0.0 && f.abs() < 1.8e19 => f as i128,
        (None, Some(f)) if f.fract() == 0.0 || !f.is_finite() => {
            return Err(DataError::new(format!(
                "{path}: {n} is out of range for {}",
                range_text(s)
            )))
        }
        (None, _) => {
            return Err(DataError::new(format!(
                "{path}: expected {}, found the fractional number {n}",
                range_text(s)
            )))
        }
    };
    int_value(v, s).ok_or_else(|| DataError::new(format!("{path}: {n} is out of range for {}", range_text(s))))
}

/// The elements of an integer `.npy` file (`i4`, `i8`, `u4`, `u8`) as values of kind `s`.
pub(super) fn from_npy(
    npy: npyz::NpyFile<&[u8]>,
    unsigned: bool,
    bytes: u64,
    s: Scalar,
    file: &str,
    shape: &[u64],
) -> Res<Vec<Value>> {
    let io = |e: std::io::Error| DataError::new(format!("{file}: cannot read the data: {e}"));
    let wide: Vec<i128> = match (unsigned, bytes) {
        (false, 4) => npy.into_vec::<i32>().map_err(io)?.into_iter().map(i128::from).collect(),
        (false, 8) => npy.into_vec::<i64>().map_err(io)?.into_iter().map(i128::from).collect(),
        (true, 4) => npy.into_vec::<u32>().map_err(io)?.into_iter().map(i128::from).collect(),
        (true, 8) => npy.into_vec::<u64>().map_err(io)?.into_iter().map(i128::from).collect(),
        (_, b) => {
            return Err(
                DataError::new(format!("{file}: {b}-byte integers cannot be read as {}", s.name()))
                    .note("accepted integer dtypes: int32 (<i4), int64 (<i8), uint32 (<u4), uint64 (<u8)"),
            )
        }
    };
    wide.into_iter()
        .enumerate()
        .map(|(i, v)| {
            int_value(v, s).ok_or_else(|| {
                DataError::new(format!(
                    "{file}: element {} is {v}, out of range for {}",
                    index_str(i, shape),
                    range_text(s)
                ))
            })
        })
        .collect()
}
