//! Loading `--data` sources against a program's parameters: which source gives which parameter,
//! and the size variables bound along the way ([`Sizes`]), each binding with its origin so that a
//! contradiction names both places.

use crate::json::{from_json, json_kind, quote_non_finite};
use crate::npy::from_npy;
use crate::{DataError, DataSource, Inputs, Res};
use ir::interp::Value;
use ir::{ArithExpr, Program};
use std::collections::BTreeMap;
use std::fmt;

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

pub(crate) fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

pub(crate) fn param_index(names: &[&str], key: &str, file: &str) -> Res<usize> {
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
pub(crate) enum Given<'a> {
    Json(&'a serde_json::Value),
    Npy(&'a [u8], &'a str),
}

pub(crate) fn claim<'a>(slot: &mut Option<(Given<'a>, String)>, name: &str, g: Given<'a>, file: &str) -> Res<()> {
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
pub(crate) struct Path {
    pub(crate) param: String,
    pub(crate) idx: Vec<usize>,
}

impl Path {
    pub(crate) fn new(param: &str) -> Path {
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
pub(crate) struct Sizes {
    pub(crate) declared: Vec<String>,
    pub(crate) known: BTreeMap<String, (i64, String)>,
    /// Lengths that are expressions, checked when the variables are known: (expr, length) ->
    /// the first place it occurred (many rows share one check).
    pub(crate) deferred: BTreeMap<(ArithExpr, i64), String>,
}

impl Sizes {
    pub(crate) fn new(prog: &Program) -> Sizes {
        Sizes {
            declared: prog.sizes.clone(),
            known: BTreeMap::new(),
            deferred: BTreeMap::new(),
        }
    }

    pub(crate) fn give(&mut self, name: &str, v: i64) -> Res<()> {
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

    pub(crate) fn bind(&mut self, name: &str, v: i64, origin: String) -> Res<()> {
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
    pub(crate) fn length(&mut self, len: &ArithExpr, n: usize, path: &Path) -> Res<()> {
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

    pub(crate) fn lookup(&self) -> impl Fn(&str) -> Option<i64> + '_ {
        move |name: &str| self.known.get(name).map(|(v, _)| *v)
    }

    /// Solves what can be solved, checks every deferred length, and returns all sizes.
    pub(crate) fn finish(mut self) -> Res<BTreeMap<String, i64>> {
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
    pub(crate) fn solve(&self, e: &ArithExpr, var: &str, n: i64) -> Option<i64> {
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

pub(crate) fn param_of(origin: &str) -> &str {
    origin.split(['[', ' ']).next().unwrap_or(origin)
}
