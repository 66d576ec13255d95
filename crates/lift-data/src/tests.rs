use super::*;
use crate::json::*;
use crate::load::*;
use crate::npy::*;
use crate::random::*;
use ir::interp::Value;
use ir::{ArithExpr, Program, Scalar, Type};
use std::collections::BTreeMap;

fn prog(src: &str) -> Program {
    ir::parse(src).unwrap_or_else(|d| panic!("{}", d.message))
}

fn json(text: &str) -> DataSource {
    DataSource::Json(text.to_string(), "in.json".to_string())
}

fn load_json(src: &str, text: &str, given: &[(&str, i64)]) -> Res<Inputs> {
    let given: Vec<(String, i64)> = given.iter().map(|(n, v)| (n.to_string(), *v)).collect();
    load(&prog(src), &[json(text)], &given)
}

fn err(src: &str, text: &str, given: &[(&str, i64)]) -> DataError {
    match load_json(src, text, given) {
        Ok(i) => panic!("expected an error, got {:?}", i.values),
        Err(e) => e,
    }
}

fn floats(xs: &[f32]) -> Value {
    Value::Array(xs.iter().map(|x| Value::Float(*x)).collect())
}

fn sizes(pairs: &[(&str, i64)]) -> BTreeMap<String, i64> {
    pairs.iter().map(|(n, v)| (n.to_string(), *v)).collect()
}

const VEC_PROG: &str = "(lift (N) ((array-type float N)) (lambda (xs) xs))";
const MAT_PROG: &str = "(lift (N M) ((array-type (array-type float M) N) (array-type float M)) (lambda (xss v) v))";

/// Hand-made `.npy` bytes (version 1.0), independent of the npyz writer.
fn npy_bytes(descr: &str, fortran: bool, shape: &[usize], data: &[u8]) -> Vec<u8> {
    let shape_str = match shape {
        [n] => format!("({n},)"),
        s => format!("({})", s.iter().map(usize::to_string).collect::<Vec<_>>().join(", ")),
    };
    let mut header = format!(
        "{{'descr': '{descr}', 'fortran_order': {}, 'shape': {shape_str}, }}",
        if fortran { "True" } else { "False" }
    );
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

fn le_f32(xs: &[f32]) -> Vec<u8> {
    xs.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn npy(param: &str, bytes: Vec<u8>) -> DataSource {
    DataSource::Npy {
        param: param.to_string(),
        bytes,
        file: format!("{param}.npy"),
    }
}

#[test]
fn json_binds_sizes_and_converts_values() {
    let i = load_json(MAT_PROG, r#"{"xss": [[1, 2.5], [3, 4]], "v": [0.1, 0.2]}"#, &[]).unwrap();
    assert_eq!(i.sizes, sizes(&[("N", 2), ("M", 2)]));
    assert_eq!(
        i.values,
        vec![
            Value::Array(vec![floats(&[1.0, 2.5]), floats(&[3.0, 4.0])]),
            floats(&[0.1, 0.2])
        ]
    );
}

#[test]
fn json_scalars_tuples_vectors_and_bools() {
    let src = "(lift (N) ((array-type (tuple-type int bool) N) (vector-type float 2) double int bool) (lambda (ps v d i b) d))";
    let i = load_json(
        src,
        r#"{"ps": [[1, true], [2, false]], "v": [1, 2.5], "d": 0.1, "i": -7, "b": false}"#,
        &[],
    )
    .unwrap();
    assert_eq!(
        i.values,
        vec![
            Value::Array(vec![
                Value::Tuple(vec![Value::Int(1), Value::Bool(true)]),
                Value::Tuple(vec![Value::Int(2), Value::Bool(false)])
            ]),
            Value::Vector(vec![Value::Float(1.0), Value::Float(2.5)]),
            Value::Double(0.1),
            Value::Int(-7),
            Value::Bool(false),
        ]
    );
    assert_eq!(i.sizes, sizes(&[("N", 2)]));
}

#[test]
fn json_reads_nan_and_infinities() {
    let inputs = load_json(VEC_PROG, r#"{"xs": [NaN, Infinity, -Infinity, 1.5]}"#, &[]);
    let inputs = match inputs {
        Ok(i) => i,
        Err(e) => panic!("{}", e.message),
    };
    assert_eq!(inputs.values[0].to_json(), "[NaN,Infinity,-Infinity,1.5]");
    // Only floating types take them.
    let e = err(
        "(lift (N) ((array-type int N)) (lambda (xs) xs))",
        r#"{"xs": [NaN]}"#,
        &[],
    );
    assert!(e.message.contains("found `NaN`"), "{}", e.message);
    // Inside strings the words stay text.
    assert_eq!(
        quote_non_finite(r#"{"a NaN \" -Infinity": [NaN]}"#),
        r#"{"a NaN \" -Infinity": ["\u0000NaN"]}"#
    );
}

#[test]
fn json_float_parses_decimal_as_f32() {
    let i = load_json(VEC_PROG, r#"{"xs": [0.1, 16777217, 1e-3]}"#, &[]).unwrap();
    assert_eq!(i.values[0], floats(&[0.1f32, 16777216.0, 0.001f32]));
}

#[test]
fn int_rules() {
    let src = "(lift () (int) (lambda (i) i))";
    assert_eq!(
        load_json(src, r#"{"i": 3.0}"#, &[]).unwrap().values,
        vec![Value::Int(3)]
    );
    assert_eq!(
        err(src, r#"{"i": 2.5}"#, &[]).message,
        "i: expected an int, found the fractional number 2.5"
    );
    assert_eq!(
        err(src, r#"{"i": 3000000000}"#, &[]).message,
        "i: 3000000000 is out of range for an int (32-bit)"
    );
    assert_eq!(
        err(src, r#"{"i": "3"}"#, &[]).message,
        "i: expected an int, found the string \"3\""
    );
}

#[test]
fn float_out_of_range_and_wrong_kinds() {
    let e = err(VEC_PROG, r#"{"xs": [1, 1e39]}"#, &[]);
    assert_eq!(e.message, "xs[1]: 1e+39 is out of range for a float (32-bit)");
    assert_eq!(
        err(VEC_PROG, r#"{"xs": [1, null]}"#, &[]).message,
        "xs[1]: expected a float, found null"
    );
    assert_eq!(
        err(VEC_PROG, r#"{"xs": 3}"#, &[]).message,
        "xs: expected an array ([float]N), found the number 3"
    );
    let b = "(lift () (bool) (lambda (b) b))";
    assert_eq!(
        err(b, r#"{"b": 1}"#, &[]).message,
        "b: expected a bool (true or false), found the number 1"
    );
}

#[test]
fn nested_path_in_messages() {
    let e = err(MAT_PROG, r#"{"xss": [[1, 2], [3, "x"]], "v": [1, 2]}"#, &[]);
    assert_eq!(e.message, "xss[1][1]: expected a float, found the string \"x\"");
    let t = "(lift (N) ((array-type (tuple-type float int) N)) (lambda (ps) ps))";
    assert_eq!(
        err(t, r#"{"ps": [[1, 2], [1]]}"#, &[]).message,
        "ps[1]: expected a tuple (float, int) of 2 components, found 1 element"
    );
    let v = "(lift () ((vector-type float 4)) (lambda (v) v))";
    assert_eq!(
        err(v, r#"{"v": [1, 2]}"#, &[]).message,
        "v: expected a vector of 4 floats, found 2 elements"
    );
}

#[test]
fn contradicting_sizes_name_both_places() {
    let src = "(lift (N) ((array-type float N) (array-type (array-type float N) #1)) (lambda (xs ys) xs))";
    let e = err(src, r#"{"xs": [1, 2, 3, 4], "ys": [[1, 2, 3, 4, 5]]}"#, &[]);
    assert_eq!(e.message, "N is 4 from xs but 5 from ys[0]");
}

#[test]
fn ragged_rows_are_an_error() {
    let e = err(MAT_PROG, r#"{"xss": [[1, 2], [3]], "v": [1, 2]}"#, &[]);
    assert_eq!(e.message, "M is 2 from xss[0] but 1 from xss[1]");
    assert_eq!(
        e.notes,
        vec!["the rows of a nested array must all have the same length".to_string()]
    );
}

#[test]
fn constant_lengths_are_checked() {
    let src = "(lift () ((array-type float #3)) (lambda (xs) xs))";
    assert_eq!(
        err(src, r#"{"xs": [1, 2]}"#, &[]).message,
        "xs has 2 elements but its type says 3"
    );
}

#[test]
fn length_expressions_are_checked_and_solved() {
    let src = "(lift (N) ((array-type float N) (array-type float (* N 2))) (lambda (xs ys) xs))";
    let ok = load_json(src, r#"{"xs": [1, 2], "ys": [1, 2, 3, 4]}"#, &[]).unwrap();
    assert_eq!(ok.sizes, sizes(&[("N", 2)]));
    let e = err(src, r#"{"xs": [1, 2], "ys": [1, 2, 3]}"#, &[]);
    assert_eq!(e.message, "ys has 3 elements but its type says (2*N) = 4");
    assert_eq!(e.notes, vec!["with N = 2 from xs".to_string()]);
    // Only `ys` given a length: N is solved from 2*N = 6.
    let only = "(lift (N) ((array-type float (* N 2))) (lambda (ys) ys))";
    assert_eq!(
        load_json(only, r#"{"ys": [1, 2, 3, 4, 5, 6]}"#, &[]).unwrap().sizes,
        sizes(&[("N", 3)])
    );
    let e = err(only, r#"{"ys": [1, 2, 3]}"#, &[]);
    assert!(
        e.message.contains("does not determine the size variable N"),
        "{}",
        e.message
    );
    // N/2 = 2 holds for N = 4 and N = 5: not solved, --size needed, then checked.
    let half = "(lift (N) ((array-type float (/ N 2))) (lambda (ys) ys))";
    assert!(err(half, r#"{"ys": [1, 2]}"#, &[])
        .message
        .contains("does not determine"));
    assert_eq!(
        load_json(half, r#"{"ys": [1, 2]}"#, &[("N", 5)]).unwrap().sizes,
        sizes(&[("N", 5)])
    );
    let e = err(half, r#"{"ys": [1, 2]}"#, &[("N", 6)]);
    assert!(
        e.message.starts_with("ys has 2 elements but its type says "),
        "{}",
        e.message
    );
    assert!(e.message.ends_with(" = 3"), "{}", e.message);
}

#[test]
fn given_sizes_bind_or_must_agree() {
    let src = "(lift (N K) ((array-type float N)) (lambda (xs) xs))";
    let i = load_json(src, r#"{"xs": [1, 2]}"#, &[("K", 7), ("N", 2)]).unwrap();
    assert_eq!(i.sizes, sizes(&[("N", 2), ("K", 7)]));
    assert_eq!(
        err(src, r#"{"xs": [1, 2]}"#, &[("K", 7), ("N", 3)]).message,
        "N is 3 from --size N=3 but 2 from xs"
    );
    let e = err(src, r#"{"xs": [1, 2]}"#, &[("Q", 7)]);
    assert_eq!(e.message, "--size Q=7: the program has no size variable `Q`");
    let e = err(src, r#"{"xs": [1, 2]}"#, &[("k", 7)]);
    assert_eq!(e.notes[0], "did you mean `K`?");
    assert_eq!(
        err(src, r#"{"xs": [1, 2]}"#, &[("K", 0)]).message,
        "K is 0 from --size K=0, but size variables must be at least 1"
    );
}

#[test]
fn unknown_sizes_are_listed() {
    let src = "(lift (N K M) ((array-type float N)) (lambda (xs) xs))";
    let e = err(src, r#"{"xs": [1]}"#, &[]);
    assert_eq!(e.message, "the data does not determine the size variables K, M");
    assert_eq!(e.notes, vec!["give them with --size, e.g. --size K=16".to_string()]);
}

#[test]
fn empty_array_for_size_variable_is_an_error() {
    let e = err(VEC_PROG, r#"{"xs": []}"#, &[]);
    assert_eq!(e.message, "N is 0 from xs, but size variables must be at least 1");
}

#[test]
fn parameters_exactly_once() {
    let e = err(MAT_PROG, r#"{"xss": [[1]]}"#, &[]);
    assert_eq!(e.message, "no data for parameter `v`");
    let e = err(MAT_PROG, r#"{"xss": [[1]], "vv": [1]}"#, &[]);
    assert_eq!(e.message, "in.json: `vv` is not a parameter of the program");
    assert_eq!(
        e.notes,
        vec![
            "did you mean `v`?".to_string(),
            "the parameters are `xss`, `v`".to_string()
        ]
    );
    let e = load(
        &prog(VEC_PROG),
        &[
            json(r#"{"xs": [1]}"#),
            npy("xs", npy_bytes("<f4", false, &[1], &le_f32(&[1.0]))),
        ],
        &[],
    );
    assert_eq!(
        e.err().unwrap().message,
        "parameter `xs` is given twice: in in.json and in xs.npy"
    );
    let e = load(
        &prog(VEC_PROG),
        &[npy("ys", npy_bytes("<f4", false, &[1], &le_f32(&[1.0])))],
        &[],
    );
    assert_eq!(
        e.err().unwrap().message,
        "ys.npy: `ys` is not a parameter of the program"
    );
}

#[test]
fn bad_json_text() {
    assert!(err(VEC_PROG, "{\"xs\": [1,", &[])
        .message
        .starts_with("in.json: invalid JSON: "));
    assert_eq!(
        err(VEC_PROG, "[1, 2]", &[]).message,
        "in.json: expected a JSON object keyed by parameter name, found an array of 2 elements"
    );
}

#[test]
fn npy_float32_matrix_c_order() {
    let data = le_f32(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let srcs = [
        npy("xss", npy_bytes("<f4", false, &[2, 3], &data)),
        json(r#"{"v": [0, 0, 0]}"#),
    ];
    let i = load(&prog(MAT_PROG), &srcs, &[]).unwrap();
    assert_eq!(
        i.values[0],
        Value::Array(vec![floats(&[1.0, 2.0, 3.0]), floats(&[4.0, 5.0, 6.0])])
    );
    assert_eq!(i.sizes, sizes(&[("N", 2), ("M", 3)]));
}

#[test]
fn npy_fortran_order_and_big_endian() {
    // Column-major storage of [[1, 2, 3], [4, 5, 6]].
    let data = le_f32(&[1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
    let srcs = [
        npy("xss", npy_bytes("<f4", true, &[2, 3], &data)),
        json(r#"{"v": [0, 0, 0]}"#),
    ];
    let i = load(&prog(MAT_PROG), &srcs, &[]).unwrap();
    assert_eq!(
        i.values[0],
        Value::Array(vec![floats(&[1.0, 2.0, 3.0]), floats(&[4.0, 5.0, 6.0])])
    );
    let be: Vec<u8> = [1.5f32, -2.0].iter().flat_map(|x| x.to_be_bytes()).collect();
    let i = load(&prog(VEC_PROG), &[npy("xs", npy_bytes(">f4", false, &[2], &be))], &[]).unwrap();
    assert_eq!(i.values[0], floats(&[1.5, -2.0]));
}

#[test]
fn npy_conversions() {
    let int_prog = "(lift (N) ((array-type int N)) (lambda (xs) xs))";
    let dbl_prog = "(lift (N) ((array-type double N)) (lambda (xs) xs))";
    let i8s = |xs: &[i64]| xs.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    let f8s = |xs: &[f64]| xs.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    let i4s = |xs: &[i32]| xs.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    // i8 -> int with a range check.
    let i = load(
        &prog(int_prog),
        &[npy("xs", npy_bytes("<i8", false, &[2], &i8s(&[5, -6])))],
        &[],
    )
    .unwrap();
    assert_eq!(i.values[0], Value::Array(vec![Value::Int(5), Value::Int(-6)]));
    let e = load(
        &prog(int_prog),
        &[npy("xs", npy_bytes("<i8", false, &[2], &i8s(&[5, 1 << 40])))],
        &[],
    )
    .err()
    .unwrap();
    assert_eq!(
        e.message,
        "xs.npy: element [1] is 1099511627776, out of range for an int (32-bit)"
    );
    // f8 -> int only when integral.
    let i = load(
        &prog(int_prog),
        &[npy("xs", npy_bytes("<f8", false, &[1], &f8s(&[3.0])))],
        &[],
    )
    .unwrap();
    assert_eq!(i.values[0], Value::Array(vec![Value::Int(3)]));
    let e = load(
        &prog(int_prog),
        &[npy("xs", npy_bytes("<f8", false, &[2], &f8s(&[3.0, 0.5])))],
        &[],
    )
    .err()
    .unwrap();
    assert_eq!(e.message, "xs.npy: element [1] is 0.5, which is not an int (32-bit)");
    // f8 -> float rounds, with a range check; i4 -> float.
    let i = load(
        &prog(VEC_PROG),
        &[npy("xs", npy_bytes("<f8", false, &[1], &f8s(&[0.1])))],
        &[],
    )
    .unwrap();
    assert_eq!(i.values[0], floats(&[0.1]));
    let e = load(
        &prog(VEC_PROG),
        &[npy("xs", npy_bytes("<f8", false, &[1], &f8s(&[1e300])))],
        &[],
    )
    .err()
    .unwrap();
    assert_eq!(
        e.message,
        "xs.npy: element [0] is 1e300, out of range for a float (32-bit)"
    );
    let i = load(
        &prog(VEC_PROG),
        &[npy("xs", npy_bytes("<i4", false, &[2], &i4s(&[7, -1])))],
        &[],
    )
    .unwrap();
    assert_eq!(i.values[0], floats(&[7.0, -1.0]));
    // f4 -> double is exact.
    let i = load(
        &prog(dbl_prog),
        &[npy("xs", npy_bytes("<f4", false, &[1], &le_f32(&[0.1])))],
        &[],
    )
    .unwrap();
    assert_eq!(i.values[0], Value::Array(vec![Value::Double(f64::from(0.1f32))]));
    // Unsupported dtype.
    let e = load(
        &prog(VEC_PROG),
        &[npy("xs", npy_bytes("<u2", false, &[1], &[0, 0]))],
        &[],
    )
    .err()
    .unwrap();
    assert_eq!(e.message, "xs.npy: dtype <u2 cannot be read as float");
    // Bool.
    let bprog = "(lift (N) ((array-type bool N)) (lambda (xs) xs))";
    let i = load(&prog(bprog), &[npy("xs", npy_bytes("|b1", false, &[2], &[1, 0]))], &[]).unwrap();
    assert_eq!(i.values[0], Value::Array(vec![Value::Bool(true), Value::Bool(false)]));
    let e = load(
        &prog(bprog),
        &[npy("xs", npy_bytes("<i4", false, &[1], &i4s(&[1])))],
        &[],
    )
    .err()
    .unwrap();
    assert_eq!(e.message, "xs.npy: dtype <i4 cannot be read as bool");
}

#[test]
fn npy_shape_and_type_errors() {
    let e = load(
        &prog(VEC_PROG),
        &[npy("xs", npy_bytes("<f4", false, &[1, 2], &le_f32(&[1.0, 2.0])))],
        &[],
    )
    .err()
    .unwrap();
    assert_eq!(
        e.message,
        "xs.npy: the array has shape (1, 2) (2 dimensions) but `xs` has type [float]N (1 dimension)"
    );
    let src = "(lift (N) ((array-type float N) (array-type float N)) (lambda (xs ys) xs))";
    let srcs = [
        npy("xs", npy_bytes("<f4", false, &[2], &le_f32(&[1.0, 2.0]))),
        npy("ys", npy_bytes("<f4", false, &[3], &le_f32(&[1.0, 2.0, 3.0]))),
    ];
    assert_eq!(
        load(&prog(src), &srcs, &[]).err().unwrap().message,
        "N is 2 from xs but 3 from ys"
    );
    let t = "(lift (N) ((array-type (tuple-type float float) N)) (lambda (ps) ps))";
    let e = load(
        &prog(t),
        &[npy("ps", npy_bytes("<f4", false, &[1, 2], &le_f32(&[1.0, 2.0])))],
        &[],
    )
    .err()
    .unwrap();
    assert_eq!(
        e.message,
        "ps.npy: `ps` has type [(float, float)]N, which a .npy file cannot hold"
    );
    let e = load(&prog(VEC_PROG), &[npy("xs", b"not an npy file".to_vec())], &[])
        .err()
        .unwrap();
    assert!(e.message.starts_with("xs.npy: not a valid .npy file"), "{}", e.message);
    let e = load(
        &prog(VEC_PROG),
        &[npy("xs", npy_bytes("<f4", false, &[3], &le_f32(&[1.0])))],
        &[],
    )
    .err()
    .unwrap();
    assert!(e.message.starts_with("xs.npy: cannot read the data"), "{}", e.message);
}

#[test]
fn npy_vector_innermost_dimension() {
    let src = "(lift (N) ((array-type (vector-type float 2) N)) (lambda (xs) xs))";
    let i = load(
        &prog(src),
        &[npy(
            "xs",
            npy_bytes("<f4", false, &[2, 2], &le_f32(&[1.0, 2.0, 3.0, 4.0])),
        )],
        &[],
    )
    .unwrap();
    let v = |a, b| Value::Vector(vec![Value::Float(a), Value::Float(b)]);
    assert_eq!(i.values[0], Value::Array(vec![v(1.0, 2.0), v(3.0, 4.0)]));
    let e = load(
        &prog(src),
        &[npy("xs", npy_bytes("<f4", false, &[1, 3], &le_f32(&[1.0, 2.0, 3.0])))],
        &[],
    )
    .err()
    .unwrap();
    assert_eq!(e.message, "xs[0] has 3 elements but its type says 2");
}

#[test]
fn npy_output_round_trips() {
    let ty = Type::array(
        Type::array(Type::float(), ArithExpr::size_var("M")),
        ArithExpr::size_var("N"),
    );
    let v = Value::Array(vec![floats(&[1.0, 2.0, 3.0]), floats(&[4.0, 5.0, 6.0])]);
    let bytes = value_to_npy(&v, &ty).unwrap();
    let f = npyz::NpyFile::new(&bytes[..]).unwrap();
    assert_eq!(f.shape(), &[2, 3]);
    assert_eq!(f.dtype().descr(), "'<f4'");
    assert_eq!(f.into_vec::<f32>().unwrap(), vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    // Reading it back through `load` gives the value again.
    let back = load(
        &prog("(lift (N M) ((array-type (array-type float M) N)) (lambda (x) x))"),
        &[npy("x", bytes)],
        &[],
    )
    .unwrap();
    assert_eq!(back.values[0], v);
    // NaN and the infinities keep their bits.
    let special = Value::Array(vec![floats(&[f32::NAN, f32::INFINITY, f32::NEG_INFINITY])]);
    let sty = Type::array(Type::array(Type::float(), ArithExpr::cst(3)), ArithExpr::cst(1));
    let got = npyz::NpyFile::new(&value_to_npy(&special, &sty).unwrap()[..])
        .unwrap()
        .into_vec::<f32>()
        .unwrap();
    assert!(got[0].is_nan() && got[1] == f32::INFINITY && got[2] == f32::NEG_INFINITY);
    // ints and an existential (filter) result
    let ity = Type::Exists(Box::new(Type::int()));
    let bytes = value_to_npy(&Value::Array(vec![Value::Int(3), Value::Int(-1)]), &ity).unwrap();
    let f = npyz::NpyFile::new(&bytes[..]).unwrap();
    assert_eq!(
        (f.shape().to_vec(), f.into_vec::<i32>().unwrap()),
        (vec![2], vec![3, -1])
    );
    let empty = Type::Exists(Box::new(Type::array(Type::float(), ArithExpr::size_var("M"))));
    let bytes = value_to_npy(&Value::Array(vec![]), &empty).unwrap();
    assert_eq!(npyz::NpyFile::new(&bytes[..]).unwrap().shape(), &[0, 0]);
    let dty = Type::array(Type::Scalar(Scalar::Double), ArithExpr::cst(1));
    let bytes = value_to_npy(&Value::Array(vec![Value::Double(0.5)]), &dty).unwrap();
    assert_eq!(
        npyz::NpyFile::new(&bytes[..]).unwrap().into_vec::<f64>().unwrap(),
        vec![0.5]
    );
}

#[test]
fn npy_output_errors() {
    let tty = Type::array(Type::Tuple(vec![Type::float(), Type::float()]), ArithExpr::cst(1));
    let e = value_to_npy(
        &Value::Array(vec![Value::Tuple(vec![Value::Float(1.0), Value::Float(2.0)])]),
        &tty,
    )
    .unwrap_err();
    assert!(e.message.contains("cannot be written as .npy"), "{}", e.message);
    let rty = Type::array(Type::Exists(Box::new(Type::float())), ArithExpr::cst(2));
    let ragged = Value::Array(vec![floats(&[1.0, 2.0]), floats(&[3.0])]);
    let e = value_to_npy(&ragged, &rty).unwrap_err();
    assert_eq!(
        e.message,
        "the result is not rectangular: result[1] has 1 elements where 2 elements were expected"
    );
    let e = value_to_npy(
        &Value::Array(vec![Value::Int(1)]),
        &Type::array(Type::float(), ArithExpr::cst(1)),
    )
    .unwrap_err();
    assert!(e.message.contains("says float"), "{}", e.message);
}

#[test]
fn random_inputs_are_deterministic_and_in_range() {
    let src = "(lift (N M) ((array-type (array-type float M) N) (array-type int N) (array-type bool M) double) (lambda (a b c d) d))";
    let p = prog(src);
    let s = sizes(&[("N", 50), ("M", 4)]);
    let a = random_inputs(&p, &s, 42).unwrap();
    let b = random_inputs(&p, &s, 42).unwrap();
    let c = random_inputs(&p, &s, 43).unwrap();
    assert_eq!(a.values, b.values);
    assert_ne!(a.values, c.values);
    assert_eq!(a.sizes, s);
    let Value::Array(rows) = &a.values[0] else { panic!() };
    assert_eq!(rows.len(), 50);
    let mut seen_bools = [false; 2];
    for r in rows {
        let Value::Array(xs) = r else { panic!() };
        assert_eq!(xs.len(), 4);
        for x in xs {
            let Value::Float(f) = x else { panic!() };
            assert!((0.0..1.0).contains(f));
        }
    }
    let Value::Array(is) = &a.values[1] else { panic!() };
    assert!(is.iter().all(|i| matches!(i, Value::Int(v) if (0..100).contains(v))));
    let Value::Array(bs) = &random_inputs(&p, &sizes(&[("N", 1), ("M", 64)]), 1).unwrap().values[2] else {
        panic!()
    };
    for b in bs {
        let Value::Bool(b) = b else { panic!() };
        seen_bools[usize::from(*b)] = true;
    }
    assert_eq!(seen_bools, [true, true]);
    assert!(matches!(a.values[3], Value::Double(d) if (0.0..1.0).contains(&d)));
}

#[test]
fn random_inputs_errors() {
    let p = prog(MAT_PROG);
    assert_eq!(
        random_inputs(&p, &sizes(&[("N", 2)]), 0).err().unwrap().message,
        "random inputs need a value for the size variable M"
    );
    assert_eq!(
        random_inputs(&p, &sizes(&[("N", 2), ("M", 0)]), 0)
            .err()
            .unwrap()
            .message,
        "M is 0, but size variables must be at least 1"
    );
    let e = random_inputs(&p, &sizes(&[("N", 2), ("M", 2), ("n", 1)]), 0)
        .err()
        .unwrap();
    assert_eq!(e.message, "the program has no size variable `n`");
    let e = random_inputs(&p, &sizes(&[("N", 1 << 20), ("M", 1 << 20)]), 0)
        .err()
        .unwrap();
    assert!(e.message.contains("more than"), "{}", e.message);
}

/// Arrays of 3-lane vectors and of nested tuples holding them are generated as buffer
/// bytes (not as values): the same numbers, in the layout `layout::encode` gives the
/// values (a buffer's `float3` packed in 12 bytes; in a struct, 16 bytes and aligned to
/// them; a nested struct aligned to its widest member); a tuple holding an array stays a
/// value (one buffer per component).
#[test]
fn nested_tuples_and_three_lane_vectors_are_generated_as_bytes() {
    let p = prog(
            "(lift (N M) ((array-type (vector-type float 3) N)
                          (array-type (array-type (tuple-type float (tuple-type int (vector-type float 3)) (vector-type float 2)) M) N)
                          (array-type (tuple-type (tuple-type bool double) (vector-type int 3)) N)
                          float
                          (array-type (tuple-type float (array-type float M)) N))
               (lambda (a b c s d) (tuple a b c s d)))",
        );
    let sizes = BTreeMap::from([("N".to_string(), 5), ("M".to_string(), 3)]);
    let full = random_inputs(&p, &sizes, 7).unwrap();
    let (lean, bytes) = random_inputs_lean(&p, &sizes, 7, false).unwrap();
    for (k, b) in bytes.iter().enumerate().take(3) {
        let mut want = vec![];
        crate::layout::encode(&full.values[k], &p.params[k].ty, &mut want).unwrap();
        assert_eq!(b.as_deref(), Some(&want[..]), "parameter {k}");
        assert_eq!(lean.values[k], Value::Array(vec![]));
    }
    // 5 float3 packed; 15 structs of 64 bytes (float, then the nested struct at 16, 32
    // bytes, then float2 at 48); 5 structs of 32 (the int3 at 16)
    let lens: Vec<usize> = bytes.iter().take(3).map(|b| b.as_ref().map_or(0, Vec::len)).collect();
    assert_eq!(lens, [60, 960, 160]);
    for (k, b) in bytes.iter().enumerate().skip(3) {
        assert_eq!(*b, None);
        assert_eq!(lean.values[k], full.values[k]);
    }
}
