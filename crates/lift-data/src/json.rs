//! JSON data to values of a declared type, including the non-standard `NaN`, `Infinity` and
//! `-Infinity` words that Python's `json` writes and `lift run` prints.

use crate::load::{plural, Path, Sizes};
use crate::{DataError, Res};
use ir::interp::Value;
use ir::{Scalar, Type};

/// Marks the strings that stand for `NaN`, `Infinity` and `-Infinity` in the data (a NUL
/// byte, which JSON text cannot hold raw, keeps them apart from strings the file wrote).
const NON_FINITE_MARK: char = '\0';

/// Rewrites the bare words `NaN`, `Infinity` and `-Infinity` outside JSON strings into marked
/// strings, because serde_json reads only strict JSON.
pub(crate) fn quote_non_finite(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains("NaN") && !text.contains("Infinity") {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    let mut in_string = false;
    let mut escaped = false;
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if in_string {
            in_string = escaped || c != '"';
            escaped = !escaped && c == '\\';
        } else if c == '"' {
            in_string = true;
        } else if let Some(word) = ["NaN", "Infinity", "-Infinity"]
            .into_iter()
            .find(|w| rest.starts_with(w))
        {
            out.push_str(&format!("\"\\u0000{word}\""));
            rest = &rest[word.len()..];
            continue;
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    std::borrow::Cow::Owned(out)
}

/// The value of a marked non-finite word (see [`quote_non_finite`]).
fn non_finite_word(v: &serde_json::Value) -> Option<f64> {
    match v.as_str()?.strip_prefix(NON_FINITE_MARK)? {
        "NaN" => Some(f64::NAN),
        "Infinity" => Some(f64::INFINITY),
        "-Infinity" => Some(f64::NEG_INFINITY),
        _ => None,
    }
}

pub(crate) fn json_kind(v: &serde_json::Value) -> String {
    use serde_json::Value as J;
    if let Some(x) = non_finite_word(v) {
        return format!("`{}`", ir::interp::Value::Double(x).to_json());
    }
    match v {
        J::Null => "null".into(),
        J::Bool(b) => format!("`{b}`"),
        J::Number(n) => format!("the number {n}"),
        J::String(s) if s.len() <= 20 => format!("the string {s:?}"),
        J::String(_) => "a string".into(),
        J::Array(a) => format!("an array of {} element{}", a.len(), plural(a.len())),
        J::Object(_) => "an object".into(),
    }
}

pub(crate) fn from_json(v: &serde_json::Value, ty: &Type, path: &mut Path, sizes: &mut Sizes) -> Res<Value> {
    use serde_json::Value as J;
    let mismatch = |what: &str| {
        Err(DataError::new(format!(
            "{path}: expected {what}, found {}",
            json_kind(v)
        )))
    };
    match ty {
        Type::Scalar(s) => json_scalar(v, *s, path),
        Type::Vector(s, w) => {
            let J::Array(items) = v else {
                return mismatch(&format!("a vector of {w} {}s (a JSON array)", s.name()));
            };
            if items.len() != usize::from(*w) {
                return Err(DataError::new(format!(
                    "{path}: expected a vector of {w} {}s, found {} element{}",
                    s.name(),
                    items.len(),
                    plural(items.len())
                )));
            }
            let mut lanes = Vec::with_capacity(items.len());
            for (i, x) in items.iter().enumerate() {
                path.idx.push(i);
                lanes.push(json_scalar(x, *s, path)?);
                path.idx.pop();
            }
            Ok(Value::Vector(lanes))
        }
        Type::Tuple(ts) => {
            let J::Array(items) = v else {
                return mismatch(&format!("a tuple of {} components (a JSON array)", ts.len()));
            };
            if items.len() != ts.len() {
                return Err(DataError::new(format!(
                    "{path}: expected a tuple {ty} of {} components, found {} element{}",
                    ts.len(),
                    items.len(),
                    plural(items.len())
                )));
            }
            let mut cs = Vec::with_capacity(ts.len());
            for (i, (x, t)) in items.iter().zip(ts).enumerate() {
                path.idx.push(i);
                cs.push(from_json(x, t, path, sizes)?);
                path.idx.pop();
            }
            Ok(Value::Tuple(cs))
        }
        Type::Array(elem, _) | Type::Exists(elem) => {
            let J::Array(items) = v else {
                return mismatch(&format!("an array ({ty})"));
            };
            if let Type::Array(_, len) = ty {
                sizes.length(len, items.len(), path)?;
            }
            let mut out = Vec::with_capacity(items.len());
            for (i, x) in items.iter().enumerate() {
                path.idx.push(i);
                out.push(from_json(x, elem, path, sizes)?);
                path.idx.pop();
            }
            Ok(Value::Array(out))
        }
        Type::Fun(..) => Err(DataError::new(format!(
            "{path}: a parameter of function type cannot be given as data"
        ))),
    }
}

pub(crate) fn json_scalar(v: &serde_json::Value, s: Scalar, path: &Path) -> Res<Value> {
    use serde_json::Value as J;
    let found = || json_kind(v);
    if let (Scalar::Float | Scalar::Double, Some(x)) = (s, non_finite_word(v)) {
        return Ok(if s == Scalar::Float {
            Value::Float(x as f32)
        } else {
            Value::Double(x)
        });
    }
    match (s, v) {
        (Scalar::Bool, J::Bool(b)) => Ok(Value::Bool(*b)),
        (Scalar::Uint | Scalar::Long | Scalar::Ulong, J::Number(n)) => crate::ints::json_int(n, s, path),
        (Scalar::Int, J::Number(n)) => {
            if let Some(i) = n.as_i64() {
                return i32::try_from(i)
                    .map(Value::Int)
                    .map_err(|_| DataError::new(format!("{path}: {i} is out of range for an int (32-bit)")));
            }
            match n.as_f64() {
                Some(f) if f.fract() == 0.0 && f >= f64::from(i32::MIN) && f <= f64::from(i32::MAX) => {
                    Ok(Value::Int(f as i32))
                }
                Some(f) if f.fract() == 0.0 => Err(DataError::new(format!(
                    "{path}: {n} is out of range for an int (32-bit)"
                ))),
                _ => Err(DataError::new(format!(
                    "{path}: expected an int, found the fractional number {n}"
                ))),
            }
        }
        (Scalar::Float, J::Number(n)) => {
            // Parse the decimal directly as f32: rounding through f64 first could round twice.
            let f: f32 = n
                .to_string()
                .parse()
                .unwrap_or_else(|_| n.as_f64().unwrap_or(f64::NAN) as f32);
            if f.is_infinite() {
                return Err(
                    DataError::new(format!("{path}: {n} is out of range for a float (32-bit)"))
                        .note("declare the parameter `double` for a wider range"),
                );
            }
            Ok(Value::Float(f))
        }
        (Scalar::Double, J::Number(n)) => match n.as_f64() {
            Some(d) if d.is_finite() => Ok(Value::Double(d)),
            _ => Err(DataError::new(format!("{path}: {n} is out of range for a double"))),
        },
        (Scalar::Bool, _) => Err(DataError::new(format!(
            "{path}: expected a bool (true or false), found {}",
            found()
        ))),
        (_, _) => Err(DataError::new(format!(
            "{path}: expected {} {}, found {}",
            article(s),
            s.name(),
            found()
        ))),
    }
}

pub(crate) fn article(s: Scalar) -> &'static str {
    match s {
        Scalar::Int => "an",
        Scalar::Float | Scalar::Double | Scalar::Bool | Scalar::Uint | Scalar::Long | Scalar::Ulong => "a",
    }
}
