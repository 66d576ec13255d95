//! `.npy` files: reading one parameter's array (any byte order, C or Fortran order, lossless
//! conversions only) and writing a result.

use crate::load::{plural, Path, Sizes};
use crate::{DataError, Res};
use ir::interp::Value;
use ir::{ArithExpr, Scalar, Type};
use npyz::WriterBuilder;

/// A declared type as dimensions over a scalar, for `.npy` files (a vector is a last dimension
/// of its width).
fn npy_layout(ty: &Type) -> Option<(Vec<ArithExpr>, Scalar)> {
    let mut dims = vec![];
    let mut t = ty;
    loop {
        match t {
            Type::Array(e, n) => {
                dims.push(n.clone());
                t = e;
            }
            Type::Scalar(s) => return Some((dims, *s)),
            Type::Vector(s, w) => {
                dims.push(ArithExpr::cst(i64::from(*w)));
                return Some((dims, *s));
            }
            Type::Tuple(_) | Type::Exists(_) | Type::Fun(..) => return None,
        }
    }
}

pub(crate) fn from_npy(bytes: &[u8], ty: &Type, param: &str, file: &str, sizes: &mut Sizes) -> Res<Value> {
    let Some((dims, scalar)) = npy_layout(ty) else {
        return Err(DataError::new(format!(
            "{file}: `{param}` has type {ty}, which a .npy file cannot hold"
        ))
        .note(".npy files hold arrays of scalars; give tuples and existential arrays in the JSON file"));
    };
    let npy = npyz::NpyFile::new(bytes).map_err(|e| DataError::new(format!("{file}: not a valid .npy file: {e}")))?;
    let shape: Vec<u64> = npy.shape().to_vec();
    let strides: Vec<u64> = npy.strides().to_vec();
    let shape_str = format!("({})", shape.iter().map(u64::to_string).collect::<Vec<_>>().join(", "));
    if shape.len() != dims.len() {
        return Err(DataError::new(format!(
            "{file}: the array has shape {shape_str} ({} dimension{}) but `{param}` has type {ty} ({} dimension{})",
            shape.len(),
            plural(shape.len()),
            dims.len(),
            plural(dims.len())
        )));
    }
    let mut path = Path::new(param);
    for (k, (d, len)) in shape.iter().zip(&dims).enumerate() {
        // The length of dimension k is the length of `xs[0]...[0]` with k indices, as in JSON.
        path.idx = vec![0; k];
        let d = usize::try_from(*d).map_err(|_| DataError::new(format!("{file}: dimension {k} is too large")))?;
        sizes.length(len, d, &path)?;
    }
    let npyz::DType::Plain(ts) = npy.dtype() else {
        return Err(DataError::new(format!("{file}: structured dtypes are not supported"))
            .note("accepted dtypes: float32, float64, int32, int64, uint32, uint64, bool"));
    };
    let descr = ts.to_string();
    let bad_dtype = || {
        DataError::new(format!("{file}: dtype {descr} cannot be read as {}", scalar.name())).note(
            "accepted dtypes: float32 (<f4), float64 (<f8), int32 (<i4), int64 (<i8) for numbers, uint32 (<u4), uint64 (<u8) for integers, bool (|b1) for bool",
        )
    };
    let io = |e: std::io::Error| DataError::new(format!("{file}: cannot read the data: {e}"));
    let flat: Vec<Value> = match (ts.type_char(), ts.size_field(), scalar) {
        (npyz::TypeChar::Bool, 1, Scalar::Bool) => npy
            .into_vec::<bool>()
            .map_err(io)?
            .into_iter()
            .map(Value::Bool)
            .collect(),
        (npyz::TypeChar::Bool, ..) | (_, _, Scalar::Bool) => return Err(bad_dtype()),
        (tc @ (npyz::TypeChar::Int | npyz::TypeChar::Uint), b, s @ (Scalar::Uint | Scalar::Long | Scalar::Ulong))
        | (tc @ npyz::TypeChar::Uint, b, s @ Scalar::Int) => {
            crate::ints::from_npy(npy, tc == npyz::TypeChar::Uint, b, s, file, &shape)?
        }
        (npyz::TypeChar::Float, 4, s) => convert(
            npy.into_vec::<f32>().map_err(io)?.into_iter().map(f64::from),
            s,
            false,
            file,
            &shape,
        )?,
        (npyz::TypeChar::Float, 8, s) => {
            convert(npy.into_vec::<f64>().map_err(io)?.into_iter(), s, false, file, &shape)?
        }
        (npyz::TypeChar::Int, 4, s) => convert(
            npy.into_vec::<i32>().map_err(io)?.into_iter().map(f64::from),
            s,
            true,
            file,
            &shape,
        )?,
        (npyz::TypeChar::Int, 8, s) => {
            let v = npy.into_vec::<i64>().map_err(io)?;
            if s == Scalar::Int {
                let mut out = Vec::with_capacity(v.len());
                for (i, x) in v.into_iter().enumerate() {
                    let x = i32::try_from(x).map_err(|_| {
                        DataError::new(format!(
                            "{file}: element {} is {x}, out of range for an int (32-bit)",
                            index_str(i, &shape)
                        ))
                    })?;
                    out.push(Value::Int(x));
                }
                out
            } else {
                // i64 -> f64 rounds beyond 2^53, as numpy's astype would.
                convert(v.into_iter().map(|x| x as f64), s, true, file, &shape)?
            }
        }
        _ => return Err(bad_dtype()),
    };
    Ok(nest(&flat, &shape, &strides, ty))
}

fn innermost(ty: &Type) -> &Type {
    match ty {
        Type::Array(e, _) => innermost(e),
        t => t,
    }
}

pub(crate) fn index_str(flat: usize, shape: &[u64]) -> String {
    let mut idx = vec![0u64; shape.len()];
    let mut rest = flat as u64;
    for k in (0..shape.len()).rev() {
        let d = shape[k].max(1);
        idx[k] = rest % d;
        rest /= d;
    }
    idx.iter().map(|i| format!("[{i}]")).collect()
}

/// Numbers of the file (as f64, exact for every f4/f8/i4) to the declared scalar.
fn convert(xs: impl Iterator<Item = f64>, s: Scalar, from_int: bool, file: &str, shape: &[u64]) -> Res<Vec<Value>> {
    let mut out = vec![];
    for (i, x) in xs.enumerate() {
        out.push(match s {
            Scalar::Double => Value::Double(x),
            Scalar::Float => {
                let f = x as f32;
                if f.is_infinite() && x.is_finite() {
                    return Err(DataError::new(format!(
                        "{file}: element {} is {x:?}, out of range for a float (32-bit)",
                        index_str(i, shape)
                    )));
                }
                Value::Float(f)
            }
            Scalar::Int if from_int => Value::Int(x as i32),
            Scalar::Int => {
                if x.fract() != 0.0 || !x.is_finite() || x < f64::from(i32::MIN) || x > f64::from(i32::MAX) {
                    return Err(DataError::new(format!(
                        "{file}: element {} is {x:?}, which is not an int (32-bit)",
                        index_str(i, shape)
                    ))
                    .note("the parameter is declared int; a float file is accepted only when every value is integral")
                    .note("convert it with numpy: a.astype(np.int32)"));
                }
                Value::Int(x as i32)
            }
            Scalar::Uint | Scalar::Long | Scalar::Ulong => {
                // integral values of a float file (every f4 and f8 value is exact in f64)
                let v = (x.fract() == 0.0 && x.is_finite() && x.abs() < 1.8e19)
                    .then(|| crate::ints::int_value(x as i128, s))
                    .flatten();
                v.ok_or_else(|| {
                    DataError::new(format!(
                        "{file}: element {} is {x:?}, which is not {}",
                        index_str(i, shape),
                        crate::ints::range_text(s)
                    ))
                })?
            }
            Scalar::Bool => unreachable!("bool is dispatched before conversion"),
        });
    }
    Ok(out)
}

/// Rebuilds the nested value from the flat data using the file's strides, so C and Fortran
/// order are both read correctly.
fn nest(flat: &[Value], shape: &[u64], strides: &[u64], ty: &Type) -> Value {
    let vector_last = matches!(innermost(ty), Type::Vector(..));
    fn go(flat: &[Value], shape: &[u64], strides: &[u64], k: usize, base: u64, vector_last: bool) -> Value {
        if k == shape.len() {
            return flat[base as usize].clone();
        }
        let items: Vec<Value> = (0..shape[k])
            .map(|i| go(flat, shape, strides, k + 1, base + i * strides[k], vector_last))
            .collect();
        if vector_last && k == shape.len() - 1 {
            Value::Vector(items)
        } else {
            Value::Array(items)
        }
    }
    go(flat, shape, strides, 0, 0, vector_last)
}

// ---------------------------------------------------------------------------------------------
// Output

/// A result as `.npy` bytes: arrays (of any nesting, rows of equal length) of scalars or
/// vectors (a vector becomes the last dimension). The shape comes from the value, so a
/// top-level existential array (a filter's result) is written with its run-time length.
pub fn value_to_npy(v: &Value, ty: &Type) -> Res<Vec<u8>> {
    let mut ndim = 0;
    let mut t = ty;
    let scalar = loop {
        match t {
            Type::Array(e, _) | Type::Exists(e) => {
                ndim += 1;
                t = e;
            }
            Type::Scalar(s) => break *s,
            Type::Vector(s, _) => {
                ndim += 1;
                break *s;
            }
            Type::Tuple(_) => {
                return Err(DataError::new(format!(
                    "a result of type {ty} cannot be written as .npy (it contains tuples)"
                ))
                .note("write it as JSON instead: -o out.json"))
            }
            Type::Fun(..) => {
                return Err(DataError::new(format!(
                    "a result of type {ty} cannot be written as .npy"
                )))
            }
        }
    };
    // The shape follows the first element at each level (every row is checked against it
    // below); below an empty array the remaining dimensions are 0.
    let mut shape = Vec::with_capacity(ndim);
    let mut probe = Some(v);
    for _ in 0..ndim {
        match probe {
            Some(Value::Array(xs) | Value::Vector(xs)) => {
                shape.push(xs.len() as u64);
                probe = xs.first();
            }
            _ => shape.push(0),
        }
    }
    let mut flat = vec![];
    flatten(v, &shape, 0, &mut flat, &mut vec![])?;
    let mut buf = vec![];
    let io = |e: std::io::Error| DataError::new(format!("cannot write .npy data: {e}"));
    macro_rules! write_as {
        ($t:ty, $get:expr) => {{
            let mut w = npyz::WriteOptions::<$t>::new()
                .default_dtype()
                .shape(&shape)
                .writer(&mut buf)
                .begin_nd()
                .map_err(io)?;
            for x in &flat {
                match $get(x) {
                    Some(x) => w.push(&x).map_err(io)?,
                    None => {
                        return Err(DataError::new(format!(
                            "the result holds {x:?} where its type {ty} says {}",
                            scalar.name()
                        )))
                    }
                }
            }
            w.finish().map_err(io)?;
        }};
    }
    match scalar {
        Scalar::Float => write_as!(f32, |x: &Value| if let Value::Float(f) = x { Some(*f) } else { None }),
        Scalar::Double => write_as!(f64, |x: &Value| if let Value::Double(f) = x { Some(*f) } else { None }),
        Scalar::Int => write_as!(i32, |x: &Value| if let Value::Int(i) = x { Some(*i) } else { None }),
        Scalar::Bool => write_as!(bool, |x: &Value| if let Value::Bool(b) = x { Some(*b) } else { None }),
        Scalar::Uint => write_as!(u32, |x: &Value| if let Value::Uint(u) = x { Some(*u) } else { None }),
        Scalar::Long => write_as!(i64, |x: &Value| if let Value::Long(l) = x { Some(*l) } else { None }),
        Scalar::Ulong => write_as!(u64, |x: &Value| if let Value::Ulong(u) = x { Some(*u) } else { None }),
    }
    Ok(buf)
}

fn flatten<'a>(v: &'a Value, shape: &[u64], k: usize, out: &mut Vec<&'a Value>, at: &mut Vec<usize>) -> Res<()> {
    let here = || at.iter().map(|i| format!("[{i}]")).collect::<String>();
    match v {
        Value::Array(xs) | Value::Vector(xs) => {
            if k >= shape.len() || xs.len() as u64 != shape[k] {
                let want = shape.get(k).map_or("a scalar".to_string(), |n| format!("{n} elements"));
                return Err(DataError::new(format!(
                    "the result is not rectangular: result{} has {} elements where {want} were expected",
                    here(),
                    xs.len()
                ))
                .note("arrays with rows of different lengths cannot be written as .npy; use -o out.json"));
            }
            for (i, x) in xs.iter().enumerate() {
                at.push(i);
                flatten(x, shape, k + 1, out, at)?;
                at.pop();
            }
            Ok(())
        }
        Value::Tuple(_) => Err(DataError::new(format!(
            "the result holds a tuple at result{}, which .npy cannot hold",
            here()
        ))
        .note("write it as JSON instead: -o out.json")),
        scalar if k == shape.len() => {
            out.push(scalar);
            Ok(())
        }
        _ => Err(DataError::new(format!(
            "the result is not rectangular: result{} is a scalar where an array was expected",
            here()
        ))),
    }
}

// ---------------------------------------------------------------------------------------------
