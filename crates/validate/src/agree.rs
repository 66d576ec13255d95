//! `validate` against the code generator on the examples with their OpenCL primitives swapped
//! for one another (map kinds and dimensions, address spaces, filters, unrolled loops): every
//! program `validate` accepts must emit, and `validate` refuses only what the code generator
//! refuses, except local memory outside a work-group, which the code generator emits as one
//! array that all work-items of a group write at once.

use crate::validate;

const SWAPS: &[&str] = &[
    "mapGlb1",
    "mapGlb",
    "mapWrg1",
    "mapWrg",
    "mapLcl1",
    "mapLcl",
    "mapSeq",
    "mapSeqUnroll",
    "toLocal",
    "toPrivate",
    "toGlobal",
    "filterSeq",
    "filterGlb",
    "reduceSeq",
    "reduceSeqUnroll",
    "reverse",
    "transpose",
    "join",
    "asScalar",
];

/// Every program made by replacing one occurrence of one swappable word with another.
fn mutants(src: &str) -> Vec<String> {
    let mut out = vec![];
    for (i, _) in src.char_indices() {
        let rest = &src[i..];
        let prev = src[..i].chars().last();
        if prev.is_some_and(|c| c.is_alphanumeric()) {
            continue;
        }
        let Some(w) = SWAPS
            .iter()
            .find(|w| rest.starts_with(**w) && !rest[w.len()..].starts_with(|c: char| c.is_alphanumeric()))
        else {
            continue;
        };
        for r in SWAPS {
            if r != w {
                out.push(format!("{}{}{}", &src[..i], r, &rest[w.len()..]));
            }
        }
    }
    out
}

#[test]
fn validate_agrees_with_code_generation_on_mutated_examples() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .expect("examples")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "lisp"))
        .collect();
    files.sort();
    let (mut checked, mut rejected) = (0, 0);
    let mut gaps = vec![];
    let mut stricter = vec![];
    for path in files {
        let src = std::fs::read_to_string(&path).expect("read");
        for m in mutants(&src) {
            let Ok(prog) = ir::parse(&m) else { continue };
            let Ok(info) = typeck::infer(&prog) else { continue };
            // A program with host sections is never emitted whole: the driver emits its parts.
            if info.host.launches_from_host() {
                continue;
            }
            checked += 1;
            let v = validate(&prog, &info);
            let e = codegen_opencl::emit(&prog, &info);
            match (&v, &e) {
                (Ok(()), Err(d)) => gaps.push(format!("accepted, emit refuses: {}\n{m}", d.message)),
                (Err(ds), Ok(_)) if !ds.iter().all(|d| d.message.contains("`toLocal` needs a work-group")) => {
                    stricter.push(format!("refused, emit accepts: {}\n{m}", ds[0].message))
                }
                (Err(_), _) => rejected += 1,
                (Ok(()), Ok(_)) => {}
            }
        }
    }
    assert!(checked > 200 && rejected > 50, "{checked} mutants, {rejected} rejected");
    assert!(gaps.is_empty(), "{} of {checked}:\n{}", gaps.len(), gaps.join("\n\n"));
    assert!(
        stricter.is_empty(),
        "{} of {checked}:\n{}",
        stricter.len(),
        stricter.join("\n\n")
    );
}
