//! The long run: many cases over parallel child processes, a progress line, failing cases
//! shrunk (the first of each signature) and written to a folder, and a summary.

use crate::gen::{Case, Gen};
use crate::oclgrind::Oclgrind;
use crate::oracle::{Class, Verdict};
use crate::runner::Runner;
use crate::shrink::{self, Budget};
use crate::variants::{Counts, Mode};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How many cases of "different results" are shrunk, each to its own folder.
const MORE_WRONG: usize = 8;

pub struct Config {
    pub seed: u64,
    pub first: u64,
    pub cases: u64,
    pub jobs: usize,
    pub out: PathBuf,
    pub timeout: Duration,
    pub device: Option<String>,
    /// This binary, run as `worker` in the children.
    pub exe: PathBuf,
    pub shrink: Budget,
    /// A line per case on stderr.
    pub verbose: bool,
    /// Stop starting new cases after this long (the cases under way finish); the results so far
    /// stay in `results.tsv`, and the same command run again goes on from there.
    pub max_time: Option<Duration>,
    /// The variants mode (`crate::variants`): the cost model's first `top` variants and
    /// `random` others of each generated high-level program, `(top, random)`.
    pub variants: Option<(usize, usize)>,
    /// The Oclgrind sample: one agreeing case in so many evaluated again on Oclgrind's device.
    pub oclgrind: Option<Oclgrind>,
}

impl Config {
    /// Case `index`: see [`case`].
    pub fn case(&self, index: u64) -> (Case, Option<Mode>) {
        case(self.seed, self.variants, index)
    }

    /// The first line of `results.tsv`: the run whose cases it records.
    fn header(&self) -> String {
        match self.variants {
            Some((top, random)) => format!("# difffuzz seed {} variants {top}+{random}\n", self.seed),
            None => format!("# difffuzz seed {}\n", self.seed),
        }
    }
}

/// Case `index` of run `seed`: the program, and the variants mode it is evaluated in (with
/// `variants`, `(top, random)`).
pub fn case(seed: u64, variants: Option<(usize, usize)>, index: u64) -> (Case, Option<Mode>) {
    match variants {
        Some((top, random)) => (
            Gen::variants_case(seed, index),
            Some(Mode::of_case(seed, index, top, random)),
        ),
        None => (Gen::case(seed, index), None),
    }
}

/// Every finished case of a campaign, one line each (`index<TAB>class<TAB>signature`), appended
/// as cases finish, so that a campaign runs in pieces: a run skips the cases recorded here and
/// its summary counts all of them.
pub const RESULTS: &str = "results.tsv";

#[derive(Default)]
struct State {
    done: u64,
    /// Of `done`, the cases recorded by earlier runs.
    resumed: u64,
    by_class: BTreeMap<Class, u64>,
    /// Clean refusals by message: how many, and the first case.
    clean: BTreeMap<String, (u64, String)>,
    /// (class, signature) -> case ids, and the folder of the shrunk repro.
    defects: BTreeMap<(Class, String), (Vec<String>, Option<String>)>,
    /// The first case that differed only where no error bound exists.
    first_unbounded: Option<String>,
    /// The variants mode: what happened to the variants of this run's cases (not recorded in
    /// `results.tsv`: a resumed run counts its own).
    variants: Counts,
    /// Cases of this run evaluated again under Oclgrind.
    oclgrind_sampled: u64,
}

/// A file-name-safe, stable name for a signature.
pub fn slug(class: Class, signature: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in signature.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    let words: String = signature
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect::<String>()
        .split('-')
        .filter(|w| !w.is_empty())
        .take(6)
        .collect::<Vec<_>>()
        .join("-");
    format!("{}/{words}-{:08x}", class.name(), h as u32)
}

/// Writes a case and its verdict as `NAME.lisp` (with a comment header) and `NAME.json`.
/// `note`'s first line says where the case comes from; further lines go into the header.
pub fn write_case(dir: &Path, name: &str, case: &Case, verdict: &Verdict, note: &str) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let mut header = format!(
        ";; difffuzz case {} ({}): {}\n;; signature: {}\n",
        case.id,
        note.lines().next().unwrap_or(""),
        verdict.class.name(),
        verdict.signature
    );
    for line in note.lines().skip(1) {
        let _ = writeln!(header, ";; {line}");
    }
    for line in verdict.detail.lines() {
        let _ = writeln!(header, ";; {line}");
    }
    let _ = writeln!(header, ";; data: {name}.json");
    std::fs::write(dir.join(format!("{name}.lisp")), format!("{header}{}", case.src))?;
    std::fs::write(dir.join(format!("{name}.json")), format!("{}\n", case.data()))
}

/// One recorded case: its index, class and signature (tabs and line breaks made spaces).
fn result_line(index: u64, class: Class, signature: &str) -> String {
    let sig: String = signature
        .chars()
        .map(|c| if c == '\t' || c == '\n' || c == '\r' { ' ' } else { c })
        .collect();
    format!("{index}\t{}\t{sig}\n", class.name())
}

/// The results an earlier run of this campaign recorded, into `state` and `claimed` (so that
/// signatures already shrunk are not shrunk again); the indices recorded. A results file of
/// another seed is an error: its cases are other programs.
fn resume(cfg: &Config, state: &mut State, claimed: &mut BTreeSet<(Class, String)>) -> Result<BTreeSet<u64>, String> {
    let path = cfg.out.join(RESULTS);
    let header = cfg.header();
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            std::fs::write(&path, &header).map_err(|e| format!("{}: {e}", path.display()))?;
            return Ok(BTreeSet::new());
        }
        Err(e) => return Err(format!("{}: {e}", path.display())),
    };
    if !text.starts_with(&header) {
        return Err(format!(
            "{} holds the results of another seed (or mode) than seed {}{}; give another --out",
            path.display(),
            cfg.seed,
            cfg.variants
                .map_or(String::new(), |(t, r)| format!(" with variants {t}+{r}"))
        ));
    }
    let mut seen = BTreeSet::new();
    for line in text.lines().skip(1) {
        let mut f = line.splitn(3, '\t');
        let (Some(index), Some(class), sig) = (f.next(), f.next(), f.next().unwrap_or("")) else {
            continue;
        };
        // a line cut short by a run that was killed while writing it is run again
        let (Ok(index), Some(class)) = (index.parse::<u64>(), Class::parse(class)) else {
            continue;
        };
        if !seen.insert(index) {
            continue;
        }
        let id = format!("{}:{index}", cfg.seed);
        state.done += 1;
        state.resumed += 1;
        *state.by_class.entry(class).or_default() += 1;
        if class == Class::CleanError {
            state.clean.entry(sig.to_string()).or_insert((0, id.clone())).0 += 1;
        }
        if class == Class::Unbounded && state.first_unbounded.is_none() {
            state.first_unbounded = Some(id.clone());
        }
        if class.is_defect() {
            let key = (class, sig.to_string());
            let dir = cfg.out.join(slug(class, sig));
            let entry = state.defects.entry(key.clone()).or_default();
            entry.0.push(id);
            if entry.1.is_none() && dir.exists() {
                entry.1 = Some(dir.display().to_string());
            }
            claimed.insert(key);
        }
    }
    Ok(seen)
}

pub fn run(cfg: &Config) -> Result<String, String> {
    std::fs::create_dir_all(&cfg.out).map_err(|e| format!("{}: {e}", cfg.out.display()))?;
    let mut first_state = State::default();
    let mut first_claimed = BTreeSet::<(Class, String)>::new();
    let recorded = Arc::new(resume(cfg, &mut first_state, &mut first_claimed)?);
    let log = std::fs::OpenOptions::new()
        .append(true)
        .open(cfg.out.join(RESULTS))
        .map_err(|e| format!("{}: {e}", cfg.out.join(RESULTS).display()))?;
    let log = Arc::new(Mutex::new(log));
    let next = Arc::new(AtomicU64::new(cfg.first));
    let state = Arc::new(Mutex::new(first_state));
    let claimed = Arc::new(Mutex::new(first_claimed));
    let end = cfg.first + cfg.cases;
    let started = Instant::now();
    let deadline = cfg.max_time.map(|t| started + t);
    let workers: Vec<_> = (0..cfg.jobs.max(1))
        .map(|_| {
            let (next, state, claimed) = (next.clone(), state.clone(), claimed.clone());
            let (recorded, log) = (recorded.clone(), log.clone());
            let mut runner = Runner::new(cfg.exe.clone(), cfg.device.clone(), cfg.timeout);
            let (out, verbose) = (cfg.out.clone(), cfg.verbose);
            let (seed, variants) = (cfg.seed, cfg.variants);
            let (oclgrind, exe, timeout) = (cfg.oclgrind.clone(), cfg.exe.clone(), cfg.timeout);
            let budget = Budget {
                evaluations: cfg.shrink.evaluations,
                time: cfg.shrink.time,
            };
            std::thread::spawn(move || loop {
                if deadline.is_some_and(|d| Instant::now() >= d) {
                    break;
                }
                let index = next.fetch_add(1, Ordering::Relaxed);
                if index >= end {
                    break;
                }
                if recorded.contains(&index) {
                    continue;
                }
                // A bug of the generator must not stop the run; it shows as an error line.
                let Ok((case, mode)) = std::panic::catch_unwind(|| case(seed, variants, index)) else {
                    eprintln!("difffuzz: the generator panicked on case {seed}:{index}");
                    continue;
                };
                let data = case.data().to_string();
                let t = Instant::now();
                let scratch = out.join("oclgrind").join(case.id.replace(':', "-"));
                // Agreeing cases of the sample are evaluated again on Oclgrind's device (and so
                // are the candidates of their shrinking).
                let eval = |runner: &mut Runner, src: &str, data: &str| {
                    let v = runner.eval_in(src, data, mode);
                    match &oclgrind {
                        Some(o) if v.class == Class::Agree && mode.is_none() && o.samples(index) => {
                            let found = o.check(&exe, &scratch, src, data, timeout);
                            let _ = std::fs::remove_dir_all(&scratch);
                            found.unwrap_or(v)
                        }
                        Some(_) | None => v,
                    }
                };
                let v = eval(&mut runner, &case.src, &data);
                let sampled = oclgrind.as_ref().is_some_and(|o| o.samples(index)) && mode.is_none();
                if sampled && matches!(v.class, Class::Agree | Class::Oclgrind) {
                    state.lock().expect("no panics").oclgrind_sampled += 1;
                }
                if verbose {
                    eprintln!(
                        "{} {} {:.2}s {}",
                        case.id,
                        v.class.name(),
                        t.elapsed().as_secs_f64(),
                        v.signature
                    );
                }
                let key = (v.class, v.signature.clone());
                // The first case of each signature is shrunk; "different results" says little
                // about the cause, so the first few of those are shrunk each.
                let folder = {
                    let mut c = claimed.lock().expect("no panics");
                    let wrongs = c.iter().filter(|(k, _)| *k == Class::Wrong).count();
                    if !v.class.is_defect() {
                        None
                    } else if c.insert(key.clone()) {
                        Some(slug(v.class, &v.signature))
                    } else if v.class == Class::Wrong && wrongs < MORE_WRONG {
                        c.insert((v.class, format!("{} {}", v.signature, case.id)));
                        Some(format!("{}/{}", slug(v.class, &v.signature), case.id.replace(':', "-")))
                    } else {
                        None
                    }
                };
                {
                    let mut s = state.lock().expect("no panics");
                    s.done += 1;
                    *s.by_class.entry(v.class).or_default() += 1;
                    if v.class == Class::CleanError {
                        s.clean.entry(v.signature.clone()).or_insert((0, case.id.clone())).0 += 1;
                    }
                    if v.class == Class::Unbounded && s.first_unbounded.is_none() {
                        s.first_unbounded = Some(case.id.clone());
                    }
                    if v.class.is_defect() {
                        s.defects.entry(key.clone()).or_default().0.push(case.id.clone());
                    }
                    if let Some(c) = &v.counts {
                        s.variants.add(c);
                    }
                    // recorded once counted, so a resumed run neither skips nor repeats it
                    use std::io::Write as _;
                    let mut f = log.lock().expect("no panics");
                    let _ = f.write_all(result_line(index, v.class, &v.signature).as_bytes());
                    let _ = f.flush();
                }
                if let Some(folder) = folder {
                    let dir = out.join(folder);
                    let how = mode.map_or(String::new(), |m| {
                        format!("\nevaluated with `difffuzz eval PROG DATA {}`", m.flags())
                    });
                    let _ = write_case(&dir, "original", &case, &v, &format!("as generated{how}"));
                    let (small, sv) = shrink::shrink(&case, &v, &budget, &mut |src, data| eval(&mut runner, src, data));
                    let _ = write_case(&dir, "repro", &small, &sv, &format!("shrunk{how}"));
                    if let Some(variant) = &sv.variant {
                        // the failing variant is a low-level program: `difffuzz eval` runs it as written
                        let _ = std::fs::write(dir.join("variant.lisp"), variant);
                    }
                    let mut s = state.lock().expect("no panics");
                    let entry = &mut s.defects.entry(key).or_default().1;
                    if entry.is_none() {
                        *entry = Some(dir.display().to_string());
                    }
                }
            })
        })
        .collect();
    let mut last = Instant::now();
    while workers.iter().any(|w| !w.is_finished()) {
        std::thread::sleep(Duration::from_millis(200));
        if last.elapsed() >= Duration::from_secs(10) {
            last = Instant::now();
            let s = state.lock().expect("no panics");
            eprintln!("{}", progress(&s, cfg.cases, started));
            // So that a run stopped early still leaves its summary so far.
            let _ = std::fs::write(cfg.out.join("summary.txt"), summary(&s, cfg, started.elapsed()));
        }
    }
    for w in workers {
        let _ = w.join();
    }
    let s = state.lock().expect("no panics");
    eprintln!("{}", progress(&s, cfg.cases, started));
    let mut summary = summary(&s, cfg, started.elapsed());
    let before = recorded.range(cfg.first..end).count() as u64;
    let left = cfg.cases.saturating_sub(before + (s.done - s.resumed));
    if left > 0 {
        let _ = writeln!(
            summary,
            "not run yet: {left} of cases {}..{end} (stopped by --max-secs); the same command goes on from there",
            cfg.first
        );
    }
    let _ = std::fs::write(cfg.out.join("summary.txt"), &summary);
    Ok(summary)
}

fn progress(s: &State, total: u64, started: Instant) -> String {
    let count = |c| s.by_class.get(&c).copied().unwrap_or(0);
    let defects: u64 = Class::ALL.iter().filter(|c| c.is_defect()).map(|c| count(*c)).sum();
    format!(
        "[{}/{total}] agree {} clean-error {} defects {} ({} distinct) — {:.1} cases/s",
        s.done - s.resumed,
        count(Class::Agree),
        count(Class::CleanError),
        defects,
        s.defects.len(),
        (s.done - s.resumed) as f64 / started.elapsed().as_secs_f64().max(1e-3)
    )
}

fn summary(s: &State, cfg: &Config, took: Duration) -> String {
    let count = |c| s.by_class.get(&c).copied().unwrap_or(0);
    let new = s.done - s.resumed;
    let mut out = format!(
        "difffuzz: seed {}{} cases {}..{}: {new} run in {:.0} s ({:.2} programs/s), {} recorded before (all of {}/{RESULTS})\nprograms: {}\nagree: {}\nclean errors: {}\n",
        cfg.seed,
        cfg.variants
            .map_or(String::new(), |(t, r)| format!(" (variants mode: the first {t} and {r} random variants of each)")),
        cfg.first,
        cfg.first + cfg.cases,
        took.as_secs_f64(),
        new as f64 / took.as_secs_f64().max(1e-3),
        s.resumed,
        cfg.out.display(),
        s.done,
        count(Class::Agree),
        count(Class::CleanError)
    );
    let mut clean: Vec<_> = s.clean.iter().collect();
    clean.sort_by(|a, b| b.1 .0.cmp(&a.1 .0).then(a.0.cmp(b.0)));
    for (msg, (n, first)) in clean {
        let _ = writeln!(out, "  {n:6}  {msg}  (first {first})");
    }
    let unbounded = count(Class::Unbounded);
    let _ = writeln!(
        out,
        "different only where no float32 error bound exists (ill-conditioned, not a defect): {unbounded}{}",
        s.first_unbounded
            .as_ref()
            .map_or(String::new(), |f| format!("  (first {f})"))
    );
    for class in Class::ALL.into_iter().filter(|c| c.is_defect()) {
        let _ = writeln!(out, "{}: {}", class.name(), count(class));
        let mut sigs: Vec<_> = s.defects.iter().filter(|((c, _), _)| *c == class).collect();
        sigs.sort_by(|a, b| b.1 .0.len().cmp(&a.1 .0.len()).then(a.0.cmp(b.0)));
        for ((_, sig), (ids, dir)) in sigs {
            let _ = writeln!(
                out,
                "  {:6}  {sig}\n          first {}; repro {}",
                ids.len(),
                ids.first().map_or("", String::as_str),
                dir.as_deref().unwrap_or("(not shrunk)")
            );
        }
    }
    if let Some(o) = &cfg.oclgrind {
        let _ = writeln!(
            out,
            "under Oclgrind (the agreeing cases of every {}th index, in this run): {} evaluated, {} reported",
            o.every,
            s.oclgrind_sampled,
            count(Class::Oclgrind)
        );
    }
    if cfg.variants.is_some() {
        out.push_str("in this run (not counted from results.tsv) ");
        out.push_str(&s.variants.render());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(out: &Path, seed: u64) -> Config {
        Config {
            seed,
            first: 0,
            cases: 10,
            jobs: 1,
            out: out.to_path_buf(),
            timeout: Duration::from_secs(1),
            device: None,
            exe: PathBuf::from("difffuzz"),
            shrink: Budget {
                evaluations: 0,
                time: Duration::ZERO,
            },
            verbose: false,
            max_time: None,
            variants: None,
            oclgrind: None,
        }
    }

    #[test]
    fn a_campaign_resumes_from_its_recorded_results() {
        let dir = std::env::temp_dir().join(format!("difffuzz-resume-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let cfg = config(&dir, 7);
        // a first run finds nothing and starts the file
        let (mut s, mut c) = (State::default(), BTreeSet::new());
        assert!(resume(&cfg, &mut s, &mut c).unwrap().is_empty());
        let mut text = std::fs::read_to_string(dir.join(RESULTS)).unwrap();
        text.push_str(&result_line(3, Class::Agree, ""));
        text.push_str(&result_line(5, Class::Internal, "internal: x\tof\ny"));
        text.push_str(&result_line(6, Class::CleanError, "not supported yet"));
        text.push_str("9\tagr"); // cut short by a kill: run again
        std::fs::write(dir.join(RESULTS), text).unwrap();
        let (mut s, mut c) = (State::default(), BTreeSet::new());
        let seen = resume(&cfg, &mut s, &mut c).unwrap();
        assert_eq!(seen.into_iter().collect::<Vec<_>>(), vec![3, 5, 6]);
        assert_eq!((s.done, s.resumed), (3, 3));
        assert!(c.contains(&(Class::Internal, "internal: x of y".to_string())));
        assert_eq!(s.clean.get("not supported yet").map(|e| e.0), Some(1));
        // another seed's cases are other programs
        let err = resume(&config(&dir, 8), &mut State::default(), &mut BTreeSet::new()).unwrap_err();
        assert!(err.contains("another seed"), "{err}");
        // nor are the variants mode's of the same seed
        let variants = Config {
            variants: Some((4, 2)),
            ..config(&dir, 7)
        };
        let err = resume(&variants, &mut State::default(), &mut BTreeSet::new()).unwrap_err();
        assert!(err.contains("with variants 4+2"), "{err}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
