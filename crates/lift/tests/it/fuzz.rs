//! A property test of the front end: random bytes and random mutations of every example
//! (tokens deleted, duplicated, swapped or replaced, numbers changed, parentheses dropped) go
//! through `lift::compile` (to types only) and `lift::compile_text(.., Types)`, which must return `Ok` or `Err`
//! but never panic. A hand-rolled xorshift keeps it dependency-free and reproducible:
//! `LIFT_FUZZ_SEED` and `LIFT_FUZZ_CASES` change the seed and the number of cases per example.

use crate::{examples, panic_text};
use ir::rng::XorShift;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::{Duration, Instant};

/// How long the whole loop may run before the watchdog calls it a hang.
const HANG: Duration = Duration::from_secs(600);

/// Tokens that make interesting replacements: every kind of literal at its edges, keywords,
/// primitives, and types.
const VOCABULARY: &[&str] = &[
    "(",
    ")",
    "#0",
    "#1",
    "#2",
    "#3",
    "#16",
    "#4294967296",
    "#99999999999999999999",
    "0",
    "-1",
    "2147483647",
    "2147483648",
    "-2147483649",
    "0.0f",
    "-0.0",
    "1e39f",
    "1e308d",
    "1e-50f",
    "nan",
    "inf",
    "2.0d",
    ".5",
    "1.",
    "true",
    "false",
    "N",
    "M",
    "xs",
    "x",
    "lambda",
    "let",
    "unpack",
    "pack",
    "if",
    "o",
    "define",
    "lift",
    "map",
    "mapGlb",
    "mapGlb2",
    "mapWrg",
    "mapLcl",
    "mapSeq",
    "mapVec",
    "reduce",
    "reduceSeq",
    "zip",
    "split",
    "join",
    "transpose",
    "slide",
    "pad",
    "pad-clamp",
    "reorder-stride",
    "reverse",
    "generate",
    "iterate",
    "filter",
    "filterSeq",
    "filterGlb",
    "asVector",
    "asScalar",
    "toGlobal",
    "toLocal",
    "toPrivate",
    "tuple",
    "get",
    "vec",
    "vget",
    "at",
    "dot",
    "+",
    "-",
    "*",
    "/",
    "%",
    "<",
    "=",
    "and",
    "not",
    "sqrt",
    "to-int",
    "array-type",
    "tuple-type",
    "vector-type",
    "float",
    "int",
    "bool",
    "double",
    "(+ N 1)",
    "(/ N 0)",
    "(% N 0)",
    "(- 0 N)",
    "(pow N 100)",
    "(lambda (x) x)",
    "(lambda () x)",
    "()",
    ";",
    "\"",
    "#",
    "#-1",
    "é",
];

/// Splits a program into parentheses, atoms and the whitespace/comments between them, so that
/// joining the tokens gives the text back.
fn tokens(src: &str) -> Vec<String> {
    let mut out = vec![];
    let mut cur = String::new();
    let flush = |cur: &mut String, out: &mut Vec<String>| {
        if !cur.is_empty() {
            out.push(std::mem::take(cur));
        }
    };
    for c in src.chars() {
        if c == '(' || c == ')' || c.is_whitespace() {
            flush(&mut cur, &mut out);
            out.push(c.to_string());
        } else {
            cur.push(c);
        }
    }
    flush(&mut cur, &mut out);
    out
}

fn is_space(t: &str) -> bool {
    t.chars().all(char::is_whitespace)
}

fn mutate(rng: &mut XorShift, src: &str) -> String {
    let mut toks = tokens(src);
    let n_mutations = 1 + rng.below(3);
    for _ in 0..n_mutations {
        if toks.is_empty() {
            toks.push(rng.pick(VOCABULARY).to_string());
            continue;
        }
        let solid: Vec<usize> = (0..toks.len()).filter(|&i| !is_space(&toks[i])).collect();
        if solid.is_empty() {
            break;
        }
        let i = solid[rng.below(solid.len())];
        match rng.below(8) {
            0 => {
                toks.remove(i);
            }
            1 => {
                let t = toks[i].clone();
                toks.insert(i, " ".into());
                toks.insert(i, t);
            }
            2 => {
                let j = solid[rng.below(solid.len())];
                toks.swap(i, j);
            }
            3 => toks[i] = rng.pick(VOCABULARY).to_string(),
            4 => {
                // Change a number: every digit run of some token gets a new value.
                let numeric: Vec<usize> = solid
                    .iter()
                    .copied()
                    .filter(|&k| toks[k].chars().any(|c| c.is_ascii_digit()))
                    .collect();
                if let Some(&k) = numeric.get(rng.below(numeric.len())) {
                    let new = match rng.below(4) {
                        0 => "0".to_string(),
                        1 => (rng.next_u64() % 20).to_string(),
                        2 => rng.next_u64().to_string(),
                        _ => format!("{}", rng.next_u64() as i64),
                    };
                    let old = toks[k].clone();
                    let start = old.find(|c: char| c.is_ascii_digit()).expect("has a digit");
                    let end = old[start..]
                        .find(|c: char| !c.is_ascii_digit())
                        .map_or(old.len(), |e| start + e);
                    toks[k] = format!("{}{new}{}", &old[..start], &old[end..]);
                }
            }
            5 => {
                // Drop a parenthesis.
                let parens: Vec<usize> = solid
                    .iter()
                    .copied()
                    .filter(|&k| toks[k] == "(" || toks[k] == ")")
                    .collect();
                if let Some(&k) = parens.get(rng.below(parens.len())) {
                    toks.remove(k);
                }
            }
            6 => {
                // Copy a whole balanced sub-expression over another token.
                if let Some((a, b)) = subexpr(&toks, i) {
                    let copy: Vec<String> = toks[a..=b].to_vec();
                    let j = solid[rng.below(solid.len())];
                    toks.splice(j..=j, copy);
                }
            }
            _ => {
                let t = rng.pick(VOCABULARY).to_string();
                toks.insert(i, " ".into());
                toks.insert(i, t);
            }
        }
    }
    toks.concat()
}

/// The token range of the balanced list that starts at `i`, if `toks[i]` is `(`.
fn subexpr(toks: &[String], i: usize) -> Option<(usize, usize)> {
    if toks[i] != "(" {
        return None;
    }
    let mut depth = 0;
    for (k, t) in toks.iter().enumerate().skip(i) {
        match t.as_str() {
            "(" => depth += 1,
            ")" => {
                depth -= 1;
                if depth == 0 {
                    return Some((i, k));
                }
            }
            _ => {}
        }
    }
    None
}

fn random_bytes(rng: &mut XorShift) -> String {
    let len = rng.below(200);
    let bytes: Vec<u8> = (0..len)
        .map(|_| match rng.below(4) {
            // Mostly S-expression characters, so the reader gets past the first byte.
            0 => b"()#.;- \nfd0123456789"[rng.below(20)],
            1 => b"abcxyzNM+*/%<=!?_:"[rng.below(18)],
            _ => rng.next_u64() as u8,
        })
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Feeds one input to the front end; `Err` carries the panic message.
fn feed(src: &str) -> Result<(), String> {
    catch_unwind(AssertUnwindSafe(|| {
        let types_only = lift::Options::types_only();
        let _ = lift::compile(src, &types_only);
        let _ = lift::compile_text(src, lift::Emit::Types);
    }))
    .map_err(|panic| panic_text(&panic))
}

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

#[test]
fn front_end_never_panics() {
    let seed = env_number("LIFT_FUZZ_SEED", 0x05ee_d1f7);
    let per_example = env_number("LIFT_FUZZ_CASES", 150) as usize;
    let mut rng = XorShift::from_state(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let mut inputs: Vec<String> = (0..per_example * 8).map(|_| random_bytes(&mut rng)).collect();
    for ex in examples() {
        for _ in 0..per_example {
            inputs.push(mutate(&mut rng, &ex.src));
        }
    }
    // The loop runs on its own thread so that an input that hangs the front end is reported
    // (the watchdog below names it) instead of hanging the test run. The watchdog's limit only
    // tells a hang from slowness on a loaded machine (the slowest input takes well under a
    // second); how fast the front end is belongs in benchmarks, not here.
    let inputs = std::sync::Arc::new(inputs);
    let current = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let worker = {
        let (inputs, current) = (inputs.clone(), current.clone());
        std::thread::spawn(move || {
            let mut failures = vec![];
            let mut slowest = (Duration::ZERO, String::new());
            for (k, input) in inputs.iter().enumerate() {
                current.store(k, std::sync::atomic::Ordering::Relaxed);
                let t = Instant::now();
                if let Err(msg) = feed(input) {
                    failures.push(format!("panic: {msg}\ninput:\n{input}\n"));
                }
                let took = t.elapsed();
                if took > slowest.0 {
                    slowest = (took, input.clone());
                }
            }
            (failures, slowest)
        })
    };
    let started = Instant::now();
    while !worker.is_finished() {
        if started.elapsed() > HANG {
            let k = current.load(std::sync::atomic::Ordering::Relaxed);
            panic!(
                "the front end seems to hang ({HANG:?}) on input {k} (seed {seed:#x}):\n{}",
                inputs[k]
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let (failures, slowest) = worker.join().expect("the fuzz loop catches every panic");
    eprintln!(
        "fuzz: {} inputs in {:?} (seed {seed:#x}); slowest {:?}",
        inputs.len(),
        started.elapsed(),
        slowest.0
    );
    assert!(
        failures.is_empty(),
        "{} of {} inputs made the front end panic (seed {seed:#x}); the first ones:\n\n{}",
        failures.len(),
        inputs.len(),
        failures.iter().take(5).cloned().collect::<Vec<_>>().join("\n")
    );
}
