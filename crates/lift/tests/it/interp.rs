//! The reference interpreter on every example equals the example's `expect:` line (computed
//! independently of the compiler), and the run-time error examples fail with their message.

use crate::{check_all, error_examples, examples, interp_options, json_close, mentions, parse_json, Example};

#[test]
fn examples_give_their_expected_result() {
    check_all(
        &examples(),
        |ex| &ex.name,
        |ex| {
            let expect = ex.header.expect.as_ref().ok_or("no `;; expect:` line")?;
            let data = ex.data_path().ok_or("no `;; data:` line")?;
            let res = lift::run_files(&ex.src, &[data], &ex.header.sizes, &interp_options())
                .map_err(|e| e.render(&ex.name, &ex.src))?;
            let (want, got) = (
                parse_json(expect, "the expect: line"),
                parse_json(&res.json, "the interpreter's result"),
            );
            if !json_close(&want, &got) {
                return Err(format!("expected {want}\n      got {got}"));
            }
            Ok(())
        },
    );
}

/// `--size` checks a size the data also gives: the right value passes, a wrong one is an error.
#[test]
fn size_arguments_are_checked_against_the_data() {
    let ex = examples()
        .into_iter()
        .find(|ex| ex.name == "thesis_2_1.lisp")
        .expect("thesis_2_1.lisp");
    let data = vec![ex.data_path().expect("data")];
    let ok = lift::run_files(&ex.src, &data, &["N=6".to_string()], &interp_options());
    assert!(
        ok.is_ok(),
        "N=6 agrees with the data: {}",
        ok.err().map(|e| e.message()).unwrap_or_default()
    );
    let bad = lift::run_files(&ex.src, &data, &["N=7".to_string()], &interp_options());
    let msg = bad.err().expect("N=7 contradicts the 6 elements of xs").message();
    assert_eq!(msg, "N is 7 from --size N=7 but 6 from xs");
}

fn run_error(ex: &Example) -> Result<(), String> {
    let expected = ex.header.error.as_ref().ok_or("no `;; error:` line")?;
    let data = ex.data_path().ok_or("no `;; data:` line")?;
    match lift::run_files(&ex.src, &[data], &ex.header.sizes, &interp_options()) {
        Ok(res) => Err(format!("ran and gave {}, but should fail with: {expected}", res.json)),
        Err(err) => {
            let rendered = err.render(&ex.name, &ex.src);
            if mentions(&rendered, expected) {
                Ok(())
            } else {
                Err(format!("the message does not contain `{expected}`:\n{rendered}"))
            }
        }
    }
}

#[test]
fn run_time_errors_are_reported() {
    let run_errors: Vec<Example> = error_examples()
        .into_iter()
        .filter(|ex| ex.header.error_at_run)
        .collect();
    assert!(
        run_errors.len() >= 4,
        "expected the run-time error examples in examples/errors"
    );
    check_all(&run_errors, |ex| &ex.name, run_error);
}

/// An index out of range in `at` is a run-time error, never a silent read.
#[test]
fn at_out_of_range_is_an_error() {
    let src = "(lift (N M) ((array-type float N) (array-type int M)) \
               (lambda (xs idx) (toGlobal (mapGlb (lambda (i) (at i xs)) idx))))";
    let dir = std::env::temp_dir().join(format!("lift-it-at-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let data = dir.join("at.json");
    std::fs::write(&data, r#"{"xs": [1.0, 2.0], "idx": [0, 2]}"#).expect("write data");
    let res = lift::run_files(src, &[data.display().to_string()], &[], &interp_options());
    let _ = std::fs::remove_dir_all(&dir);
    let err = res.err().expect("index 2 of a 2-element array must fail");
    assert_eq!(err.message(), "index 2 out of range for an array of length 2");
    let rendered = err.render("at.lisp", src);
    assert!(
        rendered.contains("at.lisp:1:102"),
        "the message points at the `at`: {rendered}"
    );
}

/// `slide #2 #2` over 5 elements drops the last element (2 whole windows): the type, the
/// interpreter and OpenCL agree on 4 elements, flat (`join`) and as rows.
#[test]
fn slide_drops_windows_that_do_not_fit() {
    let data = lift::data::DataSource::Json(r#"{"xs": [1.0, 2.0, 3.0, 4.0, 5.0]}"#.into(), "xs.json".into());
    let twice = "(mapSeq (lambda (x) (* x 2.0f)) w)";
    for (body, want) in [
        (
            format!("(join (mapGlb (lambda (w) {twice}) (slide #2 #2 xs)))"),
            "[2.0,4.0,6.0,8.0]",
        ),
        (
            format!("(mapGlb (lambda (w) {twice}) (slide #2 #2 xs))"),
            "[[2.0,4.0],[6.0,8.0]]",
        ),
        (
            format!("(join (mapGlb (lambda (w) {twice}) (slide #3 #2 xs)))"),
            "[2.0,4.0,6.0,6.0,8.0,10.0]",
        ),
    ] {
        let src = format!("(lift (N) ((array-type float N)) (lambda (xs) {body}))");
        let as_written = lift::Options {
            as_written: true,
            ..lift::Options::default()
        };
        let c = lift::compile(&src, &as_written).unwrap_or_else(|e| panic!("{}", e.message()));
        let inputs =
            lift::data::load(&c.given, std::slice::from_ref(&data), &[]).unwrap_or_else(|e| panic!("{}", e.message));
        let got = lift::run_compiled(&c, &inputs, &interp_options()).unwrap_or_else(|e| panic!("{}", e.message()));
        assert_eq!(got.json, want, "interpreter: {body}");
        if let Some(device) = crate::opencl::device() {
            let opts = lift::RunOptions {
                device,
                time: false,
                interp: false,
            };
            let got = lift::run_compiled(&c, &inputs, &opts).unwrap_or_else(|e| panic!("{}", e.message()));
            assert_eq!(got.json, want, "OpenCL: {body}");
        }
    }
}
