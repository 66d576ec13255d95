//! Generated-code defects that need a program built in code rather than an example file.

use crate::{interp_options, json_close, parse_json};

/// `(+ (+ … x 1.0f) … 1.0f)` nested `depth` deep, mapped over `xs`.
fn deep_sum(depth: usize) -> String {
    let mut body = "x".to_string();
    for _ in 0..depth {
        body = format!("(+ {body} 1.0f)");
    }
    format!("(lift (N) ((array-type float N)) (lambda (xs) (toGlobal (mapGlb (lambda (x) {body}) xs))))")
}

/// OpenCL compilers refuse more than 256 nested brackets: a 300-deep expression compiles (deep
/// subexpressions are bound to private variables), runs and equals the interpreter.
#[test]
fn deep_expressions_compile_and_run() {
    // The front end and the generator recurse once per nesting level; test threads have small
    // stacks in debug builds.
    let t = std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(|| {
            let src = deep_sum(300);
            let cl = lift::compile_text(&src, lift::Emit::Cl).unwrap_or_else(|e| panic!("{}", e.render("deep", &src)));
            let max_parens = cl
                .chars()
                .scan(0i32, |d, c| {
                    *d += match c {
                        '(' => 1,
                        ')' => -1,
                        _ => 0,
                    };
                    Some(*d)
                })
                .max()
                .unwrap_or(0);
            assert!(max_parens < 100, "brackets nest {max_parens} deep");
            let Some(device) = crate::opencl::device() else { return };
            let data = std::env::temp_dir().join(format!("lift_deep_expr_{}.json", std::process::id()));
            std::fs::write(&data, r#"{"xs": [0.0, 1.5]}"#).expect("temp file");
            let data = vec![data.to_string_lossy().into_owned()];
            let reference = lift::run_files(&src, &data, &[], &interp_options()).expect("interpreter");
            let opts = lift::RunOptions {
                device,
                time: false,
                interp: false,
            };
            let res = lift::run_files(&src, &data, &[], &opts).unwrap_or_else(|e| panic!("{}", e.render("deep", &src)));
            let _ = std::fs::remove_file(&data[0]);
            let (want, got) = (
                parse_json(&reference.json, "interpreter"),
                parse_json(&res.json, "OpenCL"),
            );
            assert!(json_close(&want, &got), "interpreter {want}, OpenCL {got}");
            assert_eq!(got, serde_json::json!([300.0, 301.5]));
        })
        .expect("thread");
    t.join().expect("deep expression test");
}

/// A `generate` without `let` whose function nests deeper than the generator binds to
/// temporaries (here 80 levels) becomes a C function; the values it reads from outside (the
/// element of the enclosing `mapGlb`, a load indexed by the loop's index) are its arguments.
/// It was an internal error: the function read the kernel's loop index, which it cannot see.
#[test]
fn deep_generate_reading_outer_values_compiles_and_runs() {
    let t = std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(|| {
            let mut body = "(to-float i)".to_string();
            for _ in 0..80 {
                body = format!("(+ x {body})");
            }
            let src = format!(
                "(lift (N) ((array-type float N)) (lambda (xs) (toGlobal (mapGlb (lambda (x) \
                 (toPrivate (reduceSeq (lambda (a y) (+ a y)) 0.0f (generate #4 (lambda (i) {body}))))) xs))))"
            );
            let cl = lift::compile_text(&src, lift::Emit::Cl).unwrap_or_else(|e| panic!("{}", e.render("deep", &src)));
            assert!(cl.contains("v_generate"), "{cl}");
            let Some(device) = crate::opencl::device() else { return };
            let data = std::env::temp_dir().join(format!("lift_deep_generate_{}.json", std::process::id()));
            std::fs::write(&data, r#"{"xs": [1.0, 2.0, 3.0]}"#).expect("temp file");
            let data = vec![data.to_string_lossy().into_owned()];
            let reference = lift::run_files(&src, &data, &[], &interp_options()).expect("interpreter");
            let opts = lift::RunOptions {
                device,
                time: false,
                interp: false,
            };
            let res = lift::run_files(&src, &data, &[], &opts).unwrap_or_else(|e| panic!("{}", e.render("deep", &src)));
            let _ = std::fs::remove_file(&data[0]);
            let (want, got) = (
                parse_json(&reference.json, "interpreter"),
                parse_json(&res.json, "OpenCL"),
            );
            assert!(json_close(&want, &got), "interpreter {want}, OpenCL {got}");
            assert_eq!(got, serde_json::json!([[326.0], [646.0], [966.0]]));
        })
        .expect("thread");
    t.join().expect("deep generate test");
}
