//! Snapshots of every example's typed program (`--emit types`) and OpenCL (`--emit cl`), and of
//! every error example's rendered diagnostic. One file per program and stage, named
//! `<stage>@<file>.snap` in `snapshots/`; `INSTA_UPDATE=always cargo test` rewrites them
//! (then read `git diff`), and CI fails on any difference.

use crate::{check_all, error_examples, examples, mentions, Example};

/// Asserts one snapshot named `<stage>@<example>`.
fn snapshot(stage: &str, ex: &Example, text: &str) {
    insta::with_settings!({
        snapshot_suffix => ex.name.replace('/', "__"),
        prepend_module_to_snapshot => false,
        omit_expression => true,
        description => format!("lift compile --emit {stage} examples/{}", ex.name),
    }, {
        insta::assert_snapshot!(stage, text);
    });
}

#[test]
fn types() {
    check_all(
        &examples(),
        |ex| &ex.name,
        |ex| {
            let text = lift::compile_text(&ex.src, lift::Emit::Types).map_err(|e| e.render(&ex.name, &ex.src))?;
            snapshot("types", ex, &text);
            Ok(())
        },
    );
}

#[test]
fn opencl() {
    let with_cl: Vec<Example> = examples().into_iter().filter(|ex| ex.header.snapshot_cl).collect();
    check_all(
        &with_cl,
        |ex| &ex.name,
        |ex| {
            let text = lift::compile_text(&ex.src, lift::Emit::Cl).map_err(|e| e.render(&ex.name, &ex.src))?;
            snapshot("cl", ex, &text);
            Ok(())
        },
    );
}

#[test]
fn diagnostics() {
    let compile_errors: Vec<Example> = error_examples()
        .into_iter()
        .filter(|ex| !ex.header.error_at_run)
        .collect();
    assert!(
        compile_errors.len() >= 8,
        "expected the error corpus in examples/errors"
    );
    check_all(
        &compile_errors,
        |ex| &ex.name,
        |ex| {
            let expected = ex.header.error.as_ref().ok_or("the header has no `;; error:` line")?;
            // the whole compilation, so that legality errors (`validate`) are covered too
            let err = match lift::compile_text(&ex.src, lift::Emit::Cl) {
                Ok(_) => return Err(format!("compiled, but should fail with: {expected}")),
                Err(err) => err,
            };
            let rendered = err.render(&format!("examples/{}", ex.name), &ex.src);
            if !mentions(&rendered, expected) {
                return Err(format!("the message does not contain `{expected}`:\n{rendered}"));
            }
            // The place must be named as file:line:col.
            let place = format!("examples/{}:", ex.name);
            if !rendered.contains(&place) {
                return Err(format!(
                    "the message does not name the place `{place}line:col`:\n{rendered}"
                ));
            }
            snapshot("diagnostic", ex, &rendered);
            Ok(())
        },
    );
}

/// Every example's header is complete, so that no example silently escapes the checks.
#[test]
fn headers() {
    check_all(
        &examples(),
        |ex| &ex.name,
        |ex| {
            let h = &ex.header;
            if h.data.is_none() || h.expect.is_none() {
                return Err("the header needs `;; data:` and `;; expect:` lines".into());
            }
            if h.error.is_some() {
                return Err("`;; error:` belongs in examples/errors/".into());
            }
            let data = ex.data_path().expect("checked above");
            if !std::path::Path::new(&data).exists() {
                return Err(format!("the data file {data} does not exist"));
            }
            Ok(())
        },
    );
    check_all(
        &error_examples(),
        |ex| &ex.name,
        |ex| {
            if ex.header.error.is_none() {
                return Err("the header needs an `;; error:` line".into());
            }
            if ex.header.error_at_run && ex.header.data.is_none() {
                return Err("a run-time error example needs a `;; data:` line".into());
            }
            Ok(())
        },
    );
}
