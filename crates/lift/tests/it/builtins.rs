//! Every scalar operator and built-in at every operand type the type checker accepts builds on
//! the OpenCL device and equals the interpreter: `int`, `float` and `double`, as scalars and as
//! vectors of every width, with both operands vectors, a vector beside a scalar read from
//! memory or beside a literal (on either side), read from global memory and from a `toLocal`
//! buffer inside `mapLcl`. A call that the driver finds ambiguous or has no overload for
//! fails here by its element type, width and place.

use crate::opencl::device;
use crate::{check_all, interp_options, json_close, parse_json};

const WIDTHS: [u8; 6] = [1, 2, 3, 4, 8, 16];

/// A literal of scalar type `t`.
fn literal(t: &str) -> &'static str {
    match t {
        "int" => "3",
        "float" => "1.5f",
        _ => "1.5d",
    }
}

/// The expressions of one program over the pair `p` of two values of type `t` (width `w`;
/// 1 is the scalar): every operator and built-in at every operand arrangement.
fn expressions(t: &str, w: u8) -> Vec<String> {
    let floating = t != "int";
    let (a, b) = ("(get #0 p)".to_string(), "(get #1 p)".to_string());
    let s = if w == 1 { b.clone() } else { format!("(vget #0 {b})") };
    let lit = literal(t).to_string();
    let mut pairs = vec![(a.clone(), b.clone()), (a.clone(), lit.clone()), (lit, a.clone())];
    if w > 1 {
        pairs.extend([(a.clone(), s.clone()), (s, a.clone())]);
    }
    let mut binary = vec!["+", "-", "*", "/", "%", "min", "max"];
    if floating {
        binary.push("pow");
    }
    let mut out: Vec<String> = binary
        .iter()
        .flat_map(|op| pairs.iter().map(move |(x, y)| format!("({op} {x} {y})")))
        .collect();
    out.push(format!("(abs {a})"));
    if floating {
        out.extend(["sqrt", "exp", "log", "sin", "cos", "length"].map(|f| format!("({f} {a})")));
        out.push(format!("(fma {a} {b} {a})"));
        out.push(format!("(fma {a} {a} {b})"));
        if w > 1 {
            out.push(format!("(dot {a} {b})"));
        }
    }
    if w == 1 {
        out.extend(["to-float", "to-int", "to-double"].map(|c| format!("({c} {a})")));
        out.extend(["<", "<=", ">", ">=", "=", "!="].map(|c| format!("({c} {a} {b})")));
    }
    out
}

/// The program applying [`expressions`] to pairs of elements of `xs` and `ys`, in global
/// memory (`local` false) or copied into a work-group's local memory first.
fn program(t: &str, w: u8, local: bool) -> String {
    let view = |x: &str| {
        if w == 1 {
            x.to_string()
        } else {
            format!("(asVector #{w} {x})")
        }
    };
    let body = format!("(tuple {})", expressions(t, w).join(" "));
    let pairs = format!("(zip {} {})", view("xs"), view("ys"));
    let e = if local {
        format!(
            "(join (toGlobal (mapWrg (lambda (chunk) (mapLcl (lambda (p) {body}) \
             (toLocal (mapLcl (lambda (p) (tuple (get #0 p) (get #1 p))) chunk)))) (split #16 {pairs}))))"
        )
    } else {
        format!("(toGlobal (mapGlb (lambda (p) {body}) {pairs}))")
    };
    format!("(lift (N) ((array-type {t} N) (array-type {t} N)) (lambda (xs ys) {e}))")
}

/// Inputs in [1, 4): no division by zero, no logarithm of a negative number.
fn data(t: &str, w: u8) -> serde_json::Value {
    let n = 32 * usize::from(w);
    let value = |i: usize| -> serde_json::Value {
        if t == "int" {
            serde_json::json!(1 + i % 5)
        } else {
            serde_json::json!(1.0 + (i % 12) as f64 / 4.0)
        }
    };
    serde_json::json!({
        "xs": (0..n).map(value).collect::<Vec<_>>(),
        "ys": (0..n).map(|i| value(i * 7 + 3)).collect::<Vec<_>>(),
    })
}

#[test]
fn builtins_at_every_operand_type_build_and_equal_the_interpreter() {
    let Some(device) = device() else { return };
    let dir = std::env::temp_dir().join(format!("lift-it-builtins-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("create a scratch folder");
    let mut cases = vec![];
    for t in ["int", "float", "double"] {
        for w in WIDTHS {
            for local in [false, true] {
                let name = format!("{t}{w} in {} memory", if local { "local" } else { "global" });
                let path = dir.join(format!("{t}{w}_{local}.json"));
                std::fs::write(&path, data(t, w).to_string()).expect("write the data");
                cases.push((name, program(t, w, local), path.display().to_string()));
            }
        }
    }
    let on_device = lift::RunOptions {
        device: device.clone(),
        time: false,
        interp: false,
    };
    check_all(
        &cases,
        |(name, _, _)| name.as_str(),
        |(name, src, path)| {
            let data = [path.clone()];
            let want = lift::run_files(src, &data, &[], &interp_options())
                .map_err(|e| format!("interpreter: {}", e.render(name, src)))?;
            let got =
                lift::run_files(src, &data, &[], &on_device).map_err(|e| format!("OpenCL: {}", e.render(name, src)))?;
            let (want, got) = (
                parse_json(&want.json, "the interpreter's result"),
                parse_json(&got.json, "the OpenCL result"),
            );
            if !json_close(&want, &got) {
                return Err(format!("interpreter {want}\n     OpenCL {got}"));
            }
            Ok(())
        },
    );
    let _ = std::fs::remove_dir_all(&dir);
}
