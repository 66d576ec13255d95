//! Program inputs: `--data` files (JSON, `.npy`) to interpreter values, with the size variables
//! inferred from the data; `.npy` output; deterministic random inputs for testing and tuning.
//!
//! Sizes are inferred by walking each parameter's declared type along its value: an array whose
//! declared length is a bare size variable binds that variable; any other length expression is
//! checked once the variables are known (an affine one in a single unknown variable, such as
//! `(* 2 N)`, may also determine it). Bindings remember where they came from, so a
//! contradiction names both places.
//!
//! Conversions are explicit and lossless where the declared type allows it: an integral JSON
//! number (or `.npy` integer) is accepted for `float`/`double`; an `int` takes only integral
//! values in `i32` range; a `float` rejects finite values beyond `f32` range (they would become
//! infinities). JSON data may spell NaN and the infinities `NaN`, `Infinity` and `-Infinity`, as
//! Python's `json` writes them and as `lift run` prints them.

use ir::interp::Value;
use ir::rng::XorShift;
use ir::{ArithExpr, Program, Scalar, Type};
use npyz::WriterBuilder;
use std::collections::BTreeMap;
use std::fmt;

mod ints;

pub struct Inputs {
    /// One value per program parameter, in order.
    pub values: Vec<Value>,
    /// Every declared size variable.
    pub sizes: BTreeMap<String, i64>,
}

pub enum DataSource {
    /// JSON text and the file name for messages.
    Json(String, String),
    /// One parameter's `.npy` file.
    Npy {
        param: String,
        bytes: Vec<u8>,
        file: String,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub struct DataError {
    pub message: String,
    pub notes: Vec<String>,
}

impl DataError {
    fn new(message: impl Into<String>) -> DataError {
        DataError {
            message: message.into(),
            notes: vec![],
        }
    }
    fn note(mut self, note: impl Into<String>) -> DataError {
        self.notes.push(note.into());
        self
    }
}

impl fmt::Display for DataError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for DataError {}

type Res<T> = Result<T, DataError>;

/// Largest number of scalars a generated input may have, so that a typo in `--size` is an
/// error rather than an allocation failure.
const MAX_ELEMENTS: u64 = 1 << 30;

// ---------------------------------------------------------------------------------------------
// Loading

pub fn load(prog: &Program, sources: &[DataSource], given_sizes: &[(String, i64)]) -> Res<Inputs> {
    let names: Vec<&str> = prog.params.iter().map(|p| prog.var(p.var).name.as_str()).collect();
    let mut sizes = Sizes::new(prog);
    for (name, v) in given_sizes {
        sizes.give(name, *v)?;
    }
    // Gather first, convert afterwards in parameter order, so that messages (which place bound a
    // size first) do not depend on the order of files or JSON keys.
    let mut given: Vec<Option<(Given, String)>> = (0..names.len()).map(|_| None).collect();
    let mut claim = |i: usize, g, file: &str| claim(&mut given[i], names[i], g, file);
    let mut parsed = vec![];
    for src in sources {
        if let DataSource::Json(text, file) = src {
            let json: serde_json::Value = serde_json::from_str(&quote_non_finite(text))
                .map_err(|e| DataError::new(format!("{file}: invalid JSON: {e}")))?;
            if !json.is_object() {
                return Err(DataError::new(format!(
                    "{file}: expected a JSON object keyed by parameter name, found {}",
                    json_kind(&json)
                ))
                .note(format!(
                    "e.g. {{\"{}\": [0.5, 1.5]}}",
                    names.first().copied().unwrap_or("xs")
                )));
            }
            parsed.push((json, file.as_str()));
        }
    }
    let mut parsed = parsed.iter();
    for src in sources {
        match src {
            DataSource::Json(..) => {
                let (json, file) = parsed.next().expect("one parsed value per JSON source");
                for (key, v) in json.as_object().into_iter().flatten() {
                    claim(param_index(&names, key, file)?, Given::Json(v), file)?;
                }
            }
            DataSource::Npy { param, bytes, file } => {
                claim(param_index(&names, param, file)?, Given::Npy(bytes, param), file)?
            }
        }
    }
    let mut values: Vec<Option<Value>> = vec![None; names.len()];
    for (i, g) in given.iter().enumerate() {
        let ty = &prog.params[i].ty;
        values[i] = match g {
            None => None,
            Some((Given::Json(v), _)) => Some(from_json(v, ty, &mut Path::new(names[i]), &mut sizes)?),
            Some((Given::Npy(bytes, param), file)) => Some(from_npy(bytes, ty, param, file, &mut sizes)?),
        };
    }

    let missing: Vec<&str> = names
        .iter()
        .zip(&values)
        .filter(|(_, v)| v.is_none())
        .map(|(n, _)| *n)
        .collect();
    if !missing.is_empty() {
        let list = missing.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ");
        return Err(
            DataError::new(format!("no data for parameter{} {list}", plural(missing.len())))
                .note("give each parameter as a key of the JSON object, or as `--data NAME=file.npy`"),
        );
    }
    let sizes = sizes.finish()?;
    Ok(Inputs {
        values: values.into_iter().flatten().collect(),
        sizes,
    })
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

fn param_index(names: &[&str], key: &str, file: &str) -> Res<usize> {
    if let Some(i) = names.iter().position(|n| *n == key) {
        return Ok(i);
    }
    let mut e = DataError::new(format!("{file}: `{key}` is not a parameter of the program"));
    if let Some(c) = ir::diag::closest(key, names.iter().copied()) {
        e = e.note(format!("did you mean `{c}`?"));
    }
    let list = names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ");
    Err(e.note(if names.is_empty() {
        "the program takes no parameters".to_string()
    } else {
        format!("the parameters are {list}")
    }))
}

/// One parameter's data before conversion.
enum Given<'a> {
    Json(&'a serde_json::Value),
    Npy(&'a [u8], &'a str),
}

fn claim<'a>(slot: &mut Option<(Given<'a>, String)>, name: &str, g: Given<'a>, file: &str) -> Res<()> {
    if let Some((_, first)) = slot {
        return Err(DataError::new(format!(
            "parameter `{name}` is given twice: in {first} and in {file}"
        )));
    }
    *slot = Some((g, file.to_string()));
    Ok(())
}

/// Where a value sits inside a parameter, built up during the walk and formatted only when a
/// message or a binding needs it.
struct Path {
    param: String,
    idx: Vec<usize>,
}

impl Path {
    fn new(param: &str) -> Path {
        Path {
            param: param.to_string(),
            idx: vec![],
        }
    }
}

impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.param)?;
        for i in &self.idx {
            write!(f, "[{i}]")?;
        }
        Ok(())
    }
}

/// Size variables as they become known, with where each came from.
struct Sizes {
    declared: Vec<String>,
    known: BTreeMap<String, (i64, String)>,
    /// Lengths that are expressions, checked when the variables are known: (expr, length) ->
    /// the first place it occurred (many rows share one check).
    deferred: BTreeMap<(ArithExpr, i64), String>,
}

impl Sizes {
    fn new(prog: &Program) -> Sizes {
        Sizes {
            declared: prog.sizes.clone(),
            known: BTreeMap::new(),
            deferred: BTreeMap::new(),
        }
    }

    fn give(&mut self, name: &str, v: i64) -> Res<()> {
        if !self.declared.iter().any(|d| d == name) {
            let mut e = DataError::new(format!("--size {name}={v}: the program has no size variable `{name}`"));
            if let Some(c) = ir::diag::closest(name, self.declared.iter().map(String::as_str)) {
                e = e.note(format!("did you mean `{c}`?"));
            }
            let list = if self.declared.is_empty() {
                "none".to_string()
            } else {
                self.declared.join(", ")
            };
            return Err(e.note(format!("its size variables are: {list}")));
        }
        self.bind(name, v, format!("--size {name}={v}"))
    }

    fn bind(&mut self, name: &str, v: i64, origin: String) -> Res<()> {
        if v < 1 {
            return Err(DataError::new(format!(
                "{name} is {v} from {origin}, but size variables must be at least 1"
            ))
            .note("arrays whose length is a size variable cannot be empty"));
        }
        match self.known.get(name) {
            Some((old, _)) if *old == v => Ok(()),
            Some((old, first)) => {
                let same_param = param_of(first) == param_of(&origin) && !first.starts_with("--size");
                let e = DataError::new(format!("{name} is {old} from {first} but {v} from {origin}"));
                Err(if same_param {
                    e.note("the rows of a nested array must all have the same length")
                } else {
                    e
                })
            }
            None => {
                self.known.insert(name.to_string(), (v, origin));
                Ok(())
            }
        }
    }

    /// Records that the array at `path`, declared with length `len`, has `n` elements.
    fn length(&mut self, len: &ArithExpr, n: usize, path: &Path) -> Res<()> {
        let n = n as i64;
        if let Some((name, _)) = len.as_var() {
            return self.bind(name, n, path.to_string());
        }
        if let Some(c) = len.as_cst() {
            if c != n {
                return Err(DataError::new(format!(
                    "{path} has {n} element{} but its type says {c}",
                    plural(n as usize)
                )));
            }
            return Ok(());
        }
        self.deferred
            .entry((len.clone(), n))
            .or_insert_with(|| path.to_string());
        Ok(())
    }

    fn lookup(&self) -> impl Fn(&str) -> Option<i64> + '_ {
        move |name: &str| self.known.get(name).map(|(v, _)| *v)
    }

    /// Solves what can be solved, checks every deferred length, and returns all sizes.
    fn finish(mut self) -> Res<BTreeMap<String, i64>> {
        loop {
            let mut progress = false;
            let pending: Vec<((ArithExpr, i64), String)> =
                self.deferred.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
            for ((e, n), path) in pending {
                let unknown: Vec<String> = e
                    .free_vars()
                    .into_iter()
                    .filter(|v| !self.known.contains_key(v))
                    .collect();
                if let [var] = unknown.as_slice() {
                    if let Some(v) = self.solve(&e, var, n) {
                        self.bind(var, v, format!("{path} (length {e} = {n})"))?;
                        progress = true;
                    }
                }
            }
            if !progress {
                break;
            }
        }
        let unknown: Vec<&String> = self.declared.iter().filter(|d| !self.known.contains_key(*d)).collect();
        if !unknown.is_empty() {
            let list = unknown.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ");
            return Err(DataError::new(format!(
                "the data does not determine the size variable{} {list}",
                plural(unknown.len())
            ))
            .note(format!(
                "give {} with --size, e.g. --size {}=16",
                if unknown.len() == 1 { "it" } else { "them" },
                unknown[0]
            )));
        }
        for ((e, n), path) in &self.deferred {
            let want = e
                .eval(&self.lookup())
                .map_err(|err| DataError::new(format!("cannot evaluate the length {e} of {path}: {err}")))?;
            if want != *n {
                let vars: Vec<String> = e
                    .free_vars()
                    .into_iter()
                    .filter_map(|v| self.known.get(&v).map(|(x, o)| format!("{v} = {x} from {o}")))
                    .collect();
                let e = DataError::new(format!(
                    "{path} has {n} element{} but its type says {e} = {want}",
                    plural(*n as usize)
                ));
                return Err(if vars.is_empty() {
                    e
                } else {
                    e.note(format!("with {}", vars.join(", ")))
                });
            }
        }
        Ok(self.declared.iter().map(|d| (d.clone(), self.known[d].0)).collect())
    }

    /// The unique positive `var` with `e(var) = n`, when `e` is affine in `var`.
    fn solve(&self, e: &ArithExpr, var: &str, n: i64) -> Option<i64> {
        let at = |x: i64| {
            e.eval(&|name: &str| {
                if name == var {
                    Some(x)
                } else {
                    self.known.get(name).map(|(v, _)| *v)
                }
            })
            .ok()
        };
        let (e1, e2, e3) = (at(1)?, at(2)?, at(3)?);
        let a = e2 - e1;
        if a == 0 || e3 - e2 != a {
            return None;
        }
        let b = e1 - a;
        if (n - b) % a != 0 {
            return None;
        }
        let x = (n - b) / a;
        // The probes only suggest affinity; the candidate must really satisfy the equation,
        // and its neighbours must not (else the data does not determine `var`).
        (x >= 1 && at(x) == Some(n) && at(x + 1) != Some(n) && (x == 1 || at(x - 1) != Some(n))).then_some(x)
    }
}

fn param_of(origin: &str) -> &str {
    origin.split(['[', ' ']).next().unwrap_or(origin)
}

/// Marks the strings that stand for `NaN`, `Infinity` and `-Infinity` in the data (a NUL
/// byte, which JSON text cannot hold raw, keeps them apart from strings the file wrote).
const NON_FINITE_MARK: char = '\0';

/// Rewrites the bare words `NaN`, `Infinity` and `-Infinity` outside JSON strings into marked
/// strings, because serde_json reads only strict JSON.
fn quote_non_finite(text: &str) -> std::borrow::Cow<'_, str> {
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

fn json_kind(v: &serde_json::Value) -> String {
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

fn from_json(v: &serde_json::Value, ty: &Type, path: &mut Path, sizes: &mut Sizes) -> Res<Value> {
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

fn json_scalar(v: &serde_json::Value, s: Scalar, path: &Path) -> Res<Value> {
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
        (Scalar::Uint | Scalar::Long | Scalar::Ulong, J::Number(n)) => ints::json_int(n, s, path),
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

fn article(s: Scalar) -> &'static str {
    match s {
        Scalar::Int => "an",
        Scalar::Float | Scalar::Double | Scalar::Bool | Scalar::Uint | Scalar::Long | Scalar::Ulong => "a",
    }
}

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

fn from_npy(bytes: &[u8], ty: &Type, param: &str, file: &str, sizes: &mut Sizes) -> Res<Value> {
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
            ints::from_npy(npy, tc == npyz::TypeChar::Uint, b, s, file, &shape)?
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

fn index_str(flat: usize, shape: &[u64]) -> String {
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
                    .then(|| ints::int_value(x as i128, s))
                    .flatten();
                v.ok_or_else(|| {
                    DataError::new(format!(
                        "{file}: element {} is {x:?}, which is not {}",
                        index_str(i, shape),
                        ints::range_text(s)
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
// Random inputs

/// Deterministic inputs for every parameter: floats uniform in [0, 1), ints in [0, 100),
/// bools fair. `sizes` must give every declared size variable (each at least 1).
pub fn random_inputs(prog: &Program, sizes: &BTreeMap<String, i64>, seed: u64) -> Res<Inputs> {
    random_inputs_lean(prog, sizes, seed, true).map(|(inputs, _)| inputs)
}

/// [`random_inputs`], where `keep_values` is false, with every parameter that is an array (of
/// arrays ...) of one scalar type given as the bytes of its OpenCL buffer instead (row-major;
/// `float`, `double` and `int` little-endian, `bool` as `int`) and an empty array in its place
/// among the values: the same numbers at a quarter of the memory or less, for runs whose result
/// is not compared with the interpreter (a 8192² input takes 2 GiB as values, 256 MiB as bytes).
/// The other parameters, and every one where `keep_values`, are values (their bytes `None`).
pub fn random_inputs_lean(
    prog: &Program,
    sizes: &BTreeMap<String, i64>,
    seed: u64,
    keep_values: bool,
) -> Res<(Inputs, Vec<Option<Vec<u8>>>)> {
    for name in sizes.keys() {
        if !prog.sizes.contains(name) {
            let mut e = DataError::new(format!("the program has no size variable `{name}`"));
            if let Some(c) = ir::diag::closest(name, prog.sizes.iter().map(String::as_str)) {
                e = e.note(format!("did you mean `{c}`?"));
            }
            return Err(e);
        }
    }
    let missing: Vec<&str> = prog
        .sizes
        .iter()
        .filter(|s| !sizes.contains_key(*s))
        .map(String::as_str)
        .collect();
    if !missing.is_empty() {
        return Err(DataError::new(format!(
            "random inputs need a value for the size variable{} {}",
            plural(missing.len()),
            missing.join(", ")
        ))
        .note(format!("give it with --size, e.g. --size {}=1024", missing[0])));
    }
    if let Some((n, v)) = sizes.iter().find(|(_, v)| **v < 1) {
        return Err(DataError::new(format!(
            "{n} is {v}, but size variables must be at least 1"
        )));
    }
    let mut rng = XorShift::new(seed);
    let env = |name: &str| sizes.get(name).copied();
    let mut values = vec![];
    let mut bytes = vec![];
    for p in &prog.params {
        let name = &prog.var(p.var).name;
        let count = element_count(&p.ty, &env, name)?;
        if count > MAX_ELEMENTS {
            return Err(DataError::new(format!(
                "`{name}` would have {count} elements, more than the {MAX_ELEMENTS} allowed for generated inputs"
            )));
        }
        match lean_element(&p.ty).filter(|_| !keep_values) {
            Some(elem) => {
                // (one element after another in row-major order, as `random_value` draws them)
                let per = element_count(elem, &env, name)?.max(1);
                let mut out = Vec::with_capacity((count / per) as usize * crate::backend::layout(elem).0);
                random_bytes(&p.ty, &env, &mut rng, name, &mut out)?;
                values.push(Value::Array(vec![]));
                bytes.push(Some(out));
            }
            None => {
                values.push(random_value(&p.ty, &env, &mut rng, name)?);
                bytes.push(None);
            }
        }
    }
    Ok((
        Inputs {
            values,
            sizes: sizes.clone(),
        },
        bytes,
    ))
}

/// How many scalars the parameters of `prog` hold at `sizes` (what random inputs generate).
pub fn input_elements(prog: &Program, sizes: &BTreeMap<String, i64>) -> Res<u64> {
    let env = |name: &str| sizes.get(name).copied();
    let mut sum = 0u64;
    for p in &prog.params {
        sum = sum.saturating_add(element_count(&p.ty, &env, &prog.var(p.var).name)?);
    }
    Ok(sum)
}

/// The element of `ty` when it is an array (of arrays) of scalars, of vectors or of tuples of
/// scalars, vectors and such tuples: one buffer of such elements (a struct each, `backend`'s
/// layout), whose bytes [`random_bytes`] makes one scalar at a time; `None` for every other
/// type (a tuple holding an array is stored as one buffer per component). A 33.5 M-element
/// array of pairs (nn) took 10.6 s of a 25 s tune budget on the H200 host as values.
fn lean_element(ty: &Type) -> Option<&Type> {
    fn member(t: &Type) -> bool {
        match t {
            Type::Scalar(_) | Type::Vector(..) => true,
            Type::Tuple(ts) => ts.iter().all(member),
            Type::Array(..) | Type::Exists(_) | Type::Fun(..) => false,
        }
    }
    match ty {
        Type::Array(e, _) => match &**e {
            e @ Type::Array(..) => lean_element(e),
            e @ (Type::Scalar(_) | Type::Vector(..) | Type::Tuple(_)) => Some(e).filter(|e| member(e)),
            Type::Exists(_) | Type::Fun(..) => None,
        },
        Type::Scalar(_) | Type::Vector(..) | Type::Tuple(_) | Type::Exists(_) | Type::Fun(..) => None,
    }
}

/// The buffer bytes of a random value of `ty` (see [`lean_element`]), drawn in the order
/// [`random_value`] draws it, laid out as `backend::encode` lays the value out: a buffer's
/// vectors with their lanes packed (`vload3` reads 12 bytes), a tuple as an OpenCL C struct
/// whose members are aligned to their size, a 3-lane vector member taking 4 lanes.
fn random_bytes(
    ty: &Type,
    env: &dyn Fn(&str) -> Option<i64>,
    rng: &mut XorShift,
    name: &str,
    out: &mut Vec<u8>,
) -> Res<()> {
    match ty {
        Type::Array(e, n) => {
            let n = array_len(n, env, name)?;
            // arrays of scalars (the common case) without a call per element: 10^8 floats in
            // about 0.6 s here, against 2.1 s through `random_value` and `encode`
            if let Type::Scalar(s) = **e {
                (0..n).for_each(|_| random_scalar_bytes(rng, s, out));
                return Ok(());
            }
            (0..n).try_for_each(|_| random_bytes(e, env, rng, name, out))
        }
        Type::Scalar(s) => {
            random_scalar_bytes(rng, *s, out);
            Ok(())
        }
        Type::Vector(s, w) => {
            (0..*w).for_each(|_| random_scalar_bytes(rng, *s, out));
            Ok(())
        }
        Type::Tuple(ts) => {
            let start = out.len();
            for t in ts {
                let (size, align) = crate::backend::member_layout(t);
                out.resize(start + (out.len() - start).div_ceil(align) * align, 0);
                let field = out.len();
                random_bytes(t, env, rng, name, out)?;
                out.resize(field + size, 0);
            }
            let (size, _) = crate::backend::member_layout(ty);
            out.resize(start + size, 0);
            Ok(())
        }
        Type::Exists(_) | Type::Fun(..) => Err(DataError::new(format!(
            "cannot generate a random value of type {ty} for `{name}`"
        ))),
    }
}

/// The buffer bytes of the scalar [`random_scalar`] would draw.
fn random_scalar_bytes(rng: &mut XorShift, s: Scalar, out: &mut Vec<u8>) {
    match random_scalar(rng, s) {
        Value::Float(f) => out.extend(f.to_le_bytes()),
        Value::Double(d) => out.extend(d.to_le_bytes()),
        Value::Int(i) => out.extend(i.to_le_bytes()),
        Value::Bool(b) => out.extend(i32::from(b).to_le_bytes()),
        Value::Uint(u) => out.extend(u.to_le_bytes()),
        Value::Long(l) => out.extend(l.to_le_bytes()),
        Value::Ulong(u) => out.extend(u.to_le_bytes()),
        Value::Vector(_) | Value::Tuple(_) | Value::Array(_) | Value::Approx(_) => {
            unreachable!("random_scalar draws scalars")
        }
    }
}

fn array_len(n: &ArithExpr, env: &dyn Fn(&str) -> Option<i64>, name: &str) -> Res<u64> {
    let v = n
        .eval(env)
        .map_err(|e| DataError::new(format!("cannot evaluate the length {n} of `{name}`: {e}")))?;
    u64::try_from(v).map_err(|_| DataError::new(format!("the length {n} of `{name}` is {v}, which is negative")))
}

fn element_count(ty: &Type, env: &dyn Fn(&str) -> Option<i64>, name: &str) -> Res<u64> {
    Ok(match ty {
        Type::Scalar(_) => 1,
        Type::Vector(_, w) => u64::from(*w),
        Type::Tuple(ts) => {
            let mut sum = 0u64;
            for t in ts {
                sum = sum.saturating_add(element_count(t, env, name)?);
            }
            sum
        }
        Type::Array(e, n) => array_len(n, env, name)?.saturating_mul(element_count(e, env, name)?),
        Type::Exists(_) | Type::Fun(..) => {
            return Err(DataError::new(format!(
                "cannot generate a random value of type {ty} for `{name}`"
            )))
        }
    })
}

fn random_value(ty: &Type, env: &dyn Fn(&str) -> Option<i64>, rng: &mut XorShift, name: &str) -> Res<Value> {
    Ok(match ty {
        Type::Scalar(s) => random_scalar(rng, *s),
        Type::Vector(s, w) => Value::Vector((0..*w).map(|_| random_scalar(rng, *s)).collect()),
        Type::Tuple(ts) => Value::Tuple(ts.iter().map(|t| random_value(t, env, rng, name)).collect::<Res<_>>()?),
        Type::Array(e, n) => {
            let n = array_len(n, env, name)?;
            Value::Array((0..n).map(|_| random_value(e, env, rng, name)).collect::<Res<_>>()?)
        }
        Type::Exists(_) | Type::Fun(..) => {
            return Err(DataError::new(format!(
                "cannot generate a random value of type {ty} for `{name}`"
            )))
        }
    })
}

/// A random scalar of type `s`.
fn random_scalar(rng: &mut XorShift, s: Scalar) -> Value {
    let r = rng.next_u64();
    match s {
        // The top 24 / 53 bits give every representable multiple of 2^-24 / 2^-53 in [0, 1).
        Scalar::Float => Value::Float((r >> 40) as f32 / (1u64 << 24) as f32),
        Scalar::Double => Value::Double((r >> 11) as f64 / (1u64 << 53) as f64),
        Scalar::Int => Value::Int(((r >> 32) % 100) as i32),
        Scalar::Bool => Value::Bool(r >> 63 == 1),
        // every bit pattern: wrapping, shifts and comparisons see all of them
        Scalar::Uint => Value::Uint((r >> 32) as u32),
        Scalar::Long => Value::Long(r as i64),
        Scalar::Ulong => Value::Ulong(r),
    }
}

/// Reassembles a value of type `ty` from the values of its storage buffers, in the order of
/// `codegen_opencl::storage_parts`: tuples holding arrays are stored as one array per component
/// (struct of arrays), so their elements are zipped back together here. `None` when `parts`
/// runs out or a component's length disagrees with the others'.
pub fn from_parts(ty: &Type, parts: &mut dyn Iterator<Item = Value>) -> Option<Value> {
    if codegen_opencl::storage_parts(ty).len() == 1 {
        return parts.next();
    }
    let (dims, elem) = memalloc::dims_of(ty);
    let Type::Tuple(cs) = &elem else { return None };
    let comps = cs
        .iter()
        .map(|c| {
            let t = dims.iter().rev().fold(c.clone(), |t, n| Type::array(t, n.clone()));
            from_parts(&t, parts)
        })
        .collect::<Option<Vec<_>>>()?;
    zip_values(comps, dims.len())
}

/// Element-wise tuples of `comps`, `depth` array levels down.
fn zip_values(comps: Vec<Value>, depth: usize) -> Option<Value> {
    if depth == 0 {
        return Some(Value::Tuple(comps));
    }
    let rows = comps
        .into_iter()
        .map(|c| match c {
            Value::Array(xs) => Some(xs),
            Value::Float(_)
            | Value::Double(_)
            | Value::Int(_)
            | Value::Bool(_)
            | Value::Uint(_)
            | Value::Long(_)
            | Value::Ulong(_)
            | Value::Vector(_)
            | Value::Tuple(_)
            | Value::Approx(_) => None,
        })
        .collect::<Option<Vec<_>>>()?;
    let n = rows.first()?.len();
    if rows.iter().any(|r| r.len() != n) {
        return None;
    }
    let mut iters: Vec<_> = rows.into_iter().map(|r| r.into_iter()).collect();
    (0..n)
        .map(|_| {
            zip_values(
                iters.iter_mut().map(|it| it.next()).collect::<Option<Vec<_>>>()?,
                depth - 1,
            )
        })
        .collect::<Option<Vec<_>>>()
        .map(Value::Array)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tuples_of_arrays_are_zipped_back_from_their_component_buffers() {
        let f = |x: f32| Value::Float(x);
        let arr = |xs: Vec<Value>| Value::Array(xs);
        let n = ArithExpr::size_var("N");
        // [([float]2, float)]N from the buffers [[float]2]N and [float]N
        let ty = Type::array(
            Type::Tuple(vec![Type::array(Type::float(), ArithExpr::cst(2)), Type::float()]),
            n,
        );
        let rows = arr(vec![arr(vec![f(1.0), f(2.0)]), arr(vec![f(3.0), f(4.0)])]);
        let last = arr(vec![f(5.0), f(6.0)]);
        let got = from_parts(&ty, &mut vec![rows, last].into_iter());
        let want = arr(vec![
            Value::Tuple(vec![arr(vec![f(1.0), f(2.0)]), f(5.0)]),
            Value::Tuple(vec![arr(vec![f(3.0), f(4.0)]), f(6.0)]),
        ]);
        assert_eq!(got, Some(want));
        // components of different lengths are no zip
        let short = arr(vec![f(5.0)]);
        let rows = arr(vec![arr(vec![f(1.0), f(2.0)]), arr(vec![f(3.0), f(4.0)])]);
        assert_eq!(from_parts(&ty, &mut vec![rows, short].into_iter()), None);
    }

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
    /// bytes (not as values): the same numbers, in the layout `backend::encode` gives the
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
            crate::backend::encode(&full.values[k], &p.params[k].ty, &mut want).unwrap();
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
}
