//! Integer data of every width: JSON integers and `.npy` integer arrays (`int32`, `uint32`,
//! `int64`, `uint64`) read into `int`, `uint`, `long` and `ulong` parameters, each value
//! range-checked against the declared type (an error names the parameter and the element);
//! `.npy` output of `uint`, `long` and `ulong` results.

use crate::npy::index_str;
use crate::{DataError, Res};
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

#[cfg(test)]
mod tests {
    use crate::{load, value_to_npy, DataSource};
    use ir::interp::Value;
    use ir::{Scalar, Type};

    /// `.npy` bytes (version 1.0) of a one-dimensional array, made by hand.
    fn npy(descr: &str, data: &[u8], n: usize) -> Vec<u8> {
        let mut header = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': ({n},), }}");
        while (10 + header.len() + 1) % 64 != 0 {
            header.push(' ');
        }
        header.push('\n');
        let mut out = b"\x93NUMPY\x01\x00".to_vec();
        out.extend_from_slice(&(header.len() as u16).to_le_bytes());
        out.extend_from_slice(header.as_bytes());
        out.extend_from_slice(data);
        out
    }

    fn load_one(ty: &str, source: DataSource) -> Result<Value, String> {
        let src = format!("(lift (N) ((array-type {ty} N)) (lambda (xs) xs))");
        let prog = ir::parse(&src).map_err(|d| d.message)?;
        load(&prog, &[source], &[])
            .map(|i| i.values[0].clone())
            .map_err(|e| e.message)
    }

    fn file(descr: &str, data: &[u8], n: usize) -> DataSource {
        DataSource::Npy {
            param: "xs".into(),
            bytes: npy(descr, data, n),
            file: "xs.npy".into(),
        }
    }

    fn json(text: &str) -> DataSource {
        DataSource::Json(text.into(), "in.json".into())
    }

    #[test]
    fn json_integers_of_every_width_are_range_checked() {
        let ulongs = load_one("ulong", json(r#"{"xs": [0, 18446744073709551615, 3.0]}"#));
        assert_eq!(
            ulongs,
            Ok(Value::Array(vec![
                Value::Ulong(0),
                Value::Ulong(u64::MAX),
                Value::Ulong(3)
            ]))
        );
        let longs = load_one("long", json(r#"{"xs": [-9223372036854775808, 4294967296]}"#));
        assert_eq!(
            longs,
            Ok(Value::Array(vec![Value::Long(i64::MIN), Value::Long(1 << 32)]))
        );
        assert_eq!(
            load_one("uint", json(r#"{"xs": [1, 4294967296]}"#)),
            Err("xs[1]: 4294967296 is out of range for a uint (32-bit unsigned: 0 to 4294967295)".into())
        );
        assert_eq!(
            load_one("ulong", json(r#"{"xs": [18446744073709551616]}"#)),
            Err("xs[0]: 1.8446744073709552e+19 is out of range for a ulong (64-bit unsigned: 0 to 18446744073709551615)".into())
        );
        assert_eq!(
            load_one("long", json(r#"{"xs": [1.5]}"#)),
            Err("xs[0]: expected a long (64-bit: -9223372036854775808 to 9223372036854775807), found the fractional number 1.5".into())
        );
        assert_eq!(
            load_one("uint", json(r#"{"xs": [true]}"#)),
            Err("xs[0]: expected a uint, found `true`".into())
        );
    }

    #[test]
    fn npy_integer_dtypes_are_read_into_every_integer_type() {
        let u4: Vec<u8> = [0u32, u32::MAX].iter().flat_map(|x| x.to_le_bytes()).collect();
        assert_eq!(
            load_one("uint", file("<u4", &u4, 2)),
            Ok(Value::Array(vec![Value::Uint(0), Value::Uint(u32::MAX)]))
        );
        let u8s: Vec<u8> = [u64::MAX].iter().flat_map(|x| x.to_le_bytes()).collect();
        assert_eq!(
            load_one("ulong", file("<u8", &u8s, 1)),
            Ok(Value::Array(vec![Value::Ulong(u64::MAX)]))
        );
        let i8s: Vec<u8> = [-5i64, i64::MAX].iter().flat_map(|x| x.to_le_bytes()).collect();
        assert_eq!(
            load_one("long", file("<i8", &i8s, 2)),
            Ok(Value::Array(vec![Value::Long(-5), Value::Long(i64::MAX)]))
        );
        // a uint32 file for an int parameter, in range
        let small: Vec<u8> = [7u32].iter().flat_map(|x| x.to_le_bytes()).collect();
        assert_eq!(
            load_one("int", file("<u4", &small, 1)),
            Ok(Value::Array(vec![Value::Int(7)]))
        );
        assert_eq!(
            load_one("uint", file("<i8", &i8s, 2)),
            Err("xs.npy: element [0] is -5, out of range for a uint (32-bit unsigned: 0 to 4294967295)".into())
        );
        assert_eq!(
            load_one("int", file("<u4", &u4, 2)),
            Err(
                "xs.npy: element [1] is 4294967295, out of range for an int (32-bit: -2147483648 to 2147483647)".into()
            )
        );
    }

    #[test]
    fn integer_results_are_written_as_npy_of_their_dtype() {
        let cases = [
            ("uint", Scalar::Uint, Value::Uint(u32::MAX), "<u4"),
            ("long", Scalar::Long, Value::Long(i64::MIN), "<i8"),
            ("ulong", Scalar::Ulong, Value::Ulong(u64::MAX), "<u8"),
        ];
        for (ty, s, v, descr) in cases {
            let t = Type::array(Type::Scalar(s), ir::ArithExpr::cst(2));
            let bytes = value_to_npy(&Value::Array(vec![v.clone(), v.clone()]), &t).expect("writes");
            let text = String::from_utf8_lossy(&bytes);
            assert!(text.contains(descr), "{ty}: {text}");
            // read back through the reader
            let back = load_one(
                ty,
                DataSource::Npy {
                    param: "xs".into(),
                    bytes,
                    file: "out.npy".into(),
                },
            );
            assert_eq!(back, Ok(Value::Array(vec![v.clone(), v])), "{ty}");
        }
    }
}
