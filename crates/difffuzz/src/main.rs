//! `difffuzz`: the differential fuzzer's command line (`scripts/fuzz.sh` runs it).
//!
//! ```text
//! difffuzz run --seed S --cases N [--first K] [--jobs J] [--out DIR] [--timeout SECS] [--device ID]
//!              [--max-secs SECS]          cases recorded in DIR/results.tsv are skipped
//!              [--oclgrind K]             agreeing cases of every K-th index also on Oclgrind
//! difffuzz show --seed S --index I        print one generated case (program, then data)
//! difffuzz shrink --seed S --index I [--out DIR] [--name NAME] [--what TEXT]
//!                                         shrink one case, write NAME.lisp/.json
//! difffuzz eval PROG.lisp DATA.json       the verdict on one program
//! difffuzz explore --seed S --cases N     the variants mode's exploration alone (no device):
//!                                         why rewritten terms are dropped
//! difffuzz worker [--device ID]           (internal) evaluate requests from stdin
//! ```
//!
//! `--variants K [--random R]` (with `run`, `show`, `shrink`): the variants mode
//! (`difffuzz::variants`): each case is a high-level program of a shape the rewrite rules fire
//! on, run as the cost model's first K variants and R (default 2) others of the explored space,
//! each compared with the interpreter. `eval ... --variants K --random R --symbolic 0|1 --pick P`
//! evaluates a file so (a repro's header gives the flags).

use difffuzz::campaign::{self, Config};
use difffuzz::runner::Runner;
use difffuzz::shrink::{self, Budget};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

fn usage() -> ExitCode {
    eprintln!(
        "usage: difffuzz run --seed S --cases N [--first K] [--jobs J] [--out DIR] [--timeout SECS] [--device ID] [--max-secs SECS] [--oclgrind K] [--variants K [--random R]]\n       \
         difffuzz show --seed S --index I [--variants K [--random R]]\n       \
         difffuzz shrink --seed S --index I [--out DIR] [--name NAME] [--what TEXT] [--variants K [--random R]]\n       \
         difffuzz eval PROG.lisp DATA.json [--device ID] [--variants K --random R --symbolic 0|1 --pick P]\n\n\
         --variants K: the variants mode: each generated program is a high-level one of a shape the\n\
         rewrite rules fire on (gemv, matrix products, batches of them, transposes, slides, sums,\n\
         filters then maps, zip3 sums), explored as `lift tune` does (one case in four with no size\n\
         known: generic kernels), and run as the cost model's first K variants and R others of the\n\
         explored space picked at random (default 2; some at another mapGlb work-group size), each\n\
         compiled as `lift tune` measures it and compared with the interpreter's value of the program\n\
         as written. A variant refused cleanly is counted; a panic, internal error, driver error or\n\
         different value is a defect, shrunk with the same variant choice (the repro's folder holds\n\
         the failing variant as variant.lisp)."
    );
    ExitCode::from(2)
}

struct Args {
    flags: Vec<(String, String)>,
    positional: Vec<String>,
}

impl Args {
    fn parse(args: &[String]) -> Result<Args, String> {
        let mut flags = vec![];
        let mut positional = vec![];
        let mut it = args.iter();
        while let Some(a) = it.next() {
            if let Some(name) = a.strip_prefix("--") {
                let v = it.next().ok_or_else(|| format!("--{name} needs a value"))?;
                flags.push((name.to_string(), v.clone()));
            } else {
                positional.push(a.clone());
            }
        }
        Ok(Args { flags, positional })
    }
    fn get(&self, name: &str) -> Option<&str> {
        self.flags
            .iter()
            .rev()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
    fn num(&self, name: &str, default: u64) -> Result<u64, String> {
        match self.get(name) {
            None => Ok(default),
            Some(v) => v.parse().map_err(|_| format!("--{name} {v}: not a number")),
        }
    }
    /// `--variants K [--random R]`: `(K, R)`.
    fn variants(&self) -> Result<Option<(usize, usize)>, String> {
        if self.get("variants").is_none() {
            return Ok(None);
        }
        Ok(Some((
            self.num("variants", 4)? as usize,
            self.num("random", 2)? as usize,
        )))
    }
    fn device(&self) -> Option<String> {
        self.get("device")
            .map(str::to_string)
            .or_else(|| std::env::var("LIFT_TEST_DEVICE").ok().filter(|d| !d.is_empty()))
    }
}

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let Some((cmd, rest)) = argv.split_first() else {
        return usage();
    };
    let args = match Args::parse(rest) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("difffuzz: {e}");
            return usage();
        }
    };
    match main_with(cmd, &args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("difffuzz: {e}");
            ExitCode::from(2)
        }
    }
}

fn main_with(cmd: &str, args: &Args) -> Result<ExitCode, String> {
    match cmd {
        "worker" => {
            difffuzz::runner::serve(args.device().as_deref());
            Ok(ExitCode::SUCCESS)
        }
        "show" => {
            let (case, mode) = campaign::case(args.num("seed", 1)?, args.variants()?, args.num("index", 0)?);
            println!("{}\n{}", case.src, case.data());
            if let Some(m) = mode {
                println!("evaluated with: {}", m.flags());
            }
            Ok(ExitCode::SUCCESS)
        }
        "front" => {
            // How many generated programs the front end refuses, and why: the generator's health.
            let (seed, n) = (args.num("seed", 1)?, args.num("cases", 1000)?);
            let mut why: std::collections::BTreeMap<String, (u64, String)> = Default::default();
            let variants = args.variants()?;
            for i in 0..n {
                if let Err(e) = lift::compile(&campaign::case(seed, variants, i).0.src, &lift::Options::types_only()) {
                    let entry = why
                        .entry(difffuzz::oracle::normalize(&e.message()))
                        .or_insert((0, format!("{seed}:{i}")));
                    entry.0 += 1;
                }
            }
            let refused: u64 = why.values().map(|(k, _)| k).sum();
            println!("{refused} of {n} refused by the front end");
            for (msg, (k, first)) in why {
                println!("{k:6}  {msg}  (first {first})");
            }
            Ok(ExitCode::SUCCESS)
        }
        "explore" => {
            // Exploration alone (no device): why rewritten terms are dropped, with the first case
            // of each reason, over the variants mode's programs.
            let (seed, n) = (args.num("seed", 1)?, args.num("cases", 1000)?);
            let variants = args.variants()?.or(Some((4, 2)));
            let mut why: std::collections::BTreeMap<String, (u64, String)> = Default::default();
            let mut variants_kept = 0;
            for i in 0..n {
                let (case, mode) = campaign::case(seed, variants, i);
                let Ok(session) = difffuzz::api::Session::new(&case.src, &case.data().to_string()) else {
                    continue;
                };
                let symbolic = mode.is_some_and(|m| m.symbolic);
                match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| session.explore(symbolic, 64))) {
                    Ok(Ok(ex)) => {
                        variants_kept += ex.variants.len();
                        for r in ex.rejections {
                            if args.get("verbose").is_some_and(|v| v != "0") {
                                eprintln!("{}: {r}", case.id);
                            }
                            let e = why
                                .entry(difffuzz::oracle::normalize(&r))
                                .or_insert((0, format!("{}{}", case.id, if symbolic { " symbolic" } else { "" })));
                            e.0 += 1;
                        }
                    }
                    Ok(Err(r)) => {
                        why.entry(difffuzz::oracle::normalize(&r.message))
                            .or_insert((0, case.id.clone()))
                            .0 += 1
                    }
                    Err(_) => why.entry("panic".into()).or_insert((0, case.id.clone())).0 += 1,
                }
            }
            println!("{n} programs explored, {variants_kept} variants kept; dropped terms by reason:");
            for (msg, (k, first)) in why {
                println!("{k:6}  {msg}  (first {first})");
            }
            Ok(ExitCode::SUCCESS)
        }
        "shrink" => {
            let (case, mode) = campaign::case(args.num("seed", 1)?, args.variants()?, args.num("index", 0)?);
            let exe = std::env::current_exe().map_err(|e| format!("cannot find this binary: {e}"))?;
            let mut runner = Runner::new(exe, args.device(), Duration::from_secs(args.num("timeout", 60)?));
            let v = runner.eval_in(&case.src, &case.data().to_string(), mode);
            if !v.class.is_defect() {
                println!("{}: {}: nothing to shrink", case.id, v.class.name());
                return Ok(ExitCode::SUCCESS);
            }
            let budget = Budget {
                evaluations: args.num("shrink-evals", 300)? as usize,
                time: Duration::from_secs(args.num("shrink-secs", 120)?),
            };
            let (small, sv) = shrink::shrink(&case, &v, &budget, &mut |src, data| runner.eval_in(src, data, mode));
            let dir = PathBuf::from(args.get("out").unwrap_or("."));
            let name = args.get("name").unwrap_or("repro");
            let mut note = "shrunk".to_string();
            if let Some(m) = mode {
                note.push_str(&format!("\nevaluated with `difffuzz eval PROG DATA {}`", m.flags()));
            }
            if let Some(what) = args.get("what") {
                note.push_str(&format!("\nwhat goes wrong: {what}"));
            }
            campaign::write_case(&dir, name, &small, &sv, &note).map_err(|e| format!("{}: {e}", dir.display()))?;
            if let Some(variant) = &sv.variant {
                let path = dir.join(format!("{name}.variant.lisp"));
                std::fs::write(&path, variant).map_err(|e| format!("{}: {e}", path.display()))?;
            }
            println!(
                "{}: {}: {}\n{}\n{}",
                case.id,
                sv.class.name(),
                sv.signature,
                small.src,
                small.data()
            );
            Ok(ExitCode::SUCCESS)
        }
        "eval" => {
            let [prog, data] = args.positional.as_slice() else {
                return Ok(usage());
            };
            let src = std::fs::read_to_string(prog).map_err(|e| format!("{prog}: {e}"))?;
            let data = std::fs::read_to_string(data).map_err(|e| format!("{data}: {e}"))?;
            let v = match args.variants()? {
                Some((top, random)) => {
                    let mode = difffuzz::variants::Mode {
                        top,
                        random,
                        symbolic: args.num("symbolic", 0)? != 0,
                        pick: args.num("pick", 1)?,
                    };
                    difffuzz::variants::evaluate(&src, &data, args.device().as_deref(), mode)
                }
                None => difffuzz::oracle::evaluate(&src, &data, args.device().as_deref()),
            };
            println!("{}: {}\n{}", v.class.name(), v.signature, v.detail);
            if let Some(c) = &v.counts {
                print!("{}", c.render());
            }
            Ok(if v.class.is_defect() {
                ExitCode::FAILURE
            } else {
                ExitCode::SUCCESS
            })
        }
        "run" => {
            let variants = args.variants()?;
            let cfg = Config {
                seed: args.num("seed", 1)?,
                first: args.num("first", 0)?,
                cases: args.num("cases", 1000)?,
                jobs: args.num("jobs", 1)? as usize,
                out: PathBuf::from(args.get("out").unwrap_or("target/fuzz")),
                // a case of the variants mode builds and runs several programs
                timeout: Duration::from_secs(args.num("timeout", if variants.is_some() { 300 } else { 60 })?),
                device: args.device(),
                exe: std::env::current_exe().map_err(|e| format!("cannot find this binary: {e}"))?,
                shrink: Budget {
                    evaluations: args.num("shrink-evals", 300)? as usize,
                    time: Duration::from_secs(args.num("shrink-secs", 120)?),
                },
                verbose: args.get("verbose").is_some_and(|v| v != "0"),
                max_time: match args.num("max-secs", 0)? {
                    0 => None,
                    s => Some(Duration::from_secs(s)),
                },
                variants,
                oclgrind: match args.get("oclgrind") {
                    Some(_) => Some(difffuzz::oclgrind::Oclgrind::find(args.num("oclgrind", 20)?)?),
                    None => None,
                },
            };
            print!("{}", campaign::run(&cfg)?);
            Ok(ExitCode::SUCCESS)
        }
        _ => Ok(usage()),
    }
}
