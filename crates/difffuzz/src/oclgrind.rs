//! The Oclgrind sample of the long run (`run --oclgrind K`): one case in `K` whose result
//! agreed is evaluated again with Oclgrind's simulated device as the only OpenCL device, which
//! reports what a real device may forgive: an out-of-bounds access, a data race, an
//! uninitialized value, a divergent barrier, an API error. Any report is a defect of its own
//! class (`oclgrind`), shrunk and written out like the others.

use crate::oracle::{Class, Verdict};
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What Oclgrind prints for a real problem: "Invalid write of size 4 at global memory address
/// …", "Read-write data race …", "Uninitialized value written to …", "Work-group divergence
/// detected (barrier)", and API errors under `--check-api` (the same words the integration
/// test of the examples looks for). Oclgrind exits 0 regardless.
const PROBLEMS: &[&str] = &[
    "Invalid",
    "race",
    "Uninitialized",
    "uninitialized",
    "divergence",
    "error",
    "Error",
];

/// The Oclgrind wrapper and its ICD library.
#[derive(Clone, Debug)]
pub struct Oclgrind {
    tool: PathBuf,
    icd: PathBuf,
    /// One case in this many is sampled.
    pub every: u64,
}

impl Oclgrind {
    /// Finds `oclgrind` on the PATH and its ICD library (`OCLGRIND_ICD`, else next to it).
    pub fn find(every: u64) -> Result<Oclgrind, String> {
        if every == 0 {
            return Err("--oclgrind takes how many cases make one sample (20: one in twenty), not 0".into());
        }
        let path = std::env::var_os("PATH").unwrap_or_default();
        let tool = std::env::split_paths(&path)
            .map(|dir| dir.join("oclgrind"))
            .find(|p| p.is_file())
            .ok_or("--oclgrind: `oclgrind` is not on the PATH (Debian package `oclgrind`)")?;
        let icd = std::env::var_os("OCLGRIND_ICD").map(PathBuf::from).unwrap_or_else(|| {
            let prefix = tool.parent().and_then(Path::parent).unwrap_or(Path::new("/usr"));
            prefix.join("lib/oclgrind/liboclgrind-rt-icd.so")
        });
        if !icd.is_file() {
            return Err(format!(
                "--oclgrind: Oclgrind's ICD library {} is missing (set OCLGRIND_ICD)",
                icd.display()
            ));
        }
        Ok(Oclgrind { tool, icd, every })
    }

    pub fn samples(&self, index: u64) -> bool {
        index.is_multiple_of(self.every)
    }

    /// Evaluates the program with `exe eval` (this binary) on Oclgrind's device. `None` when
    /// Oclgrind reports nothing (or the simulation outruns `timeout`: a slow simulation is no
    /// defect), else the verdict that says what it reported.
    pub fn check(&self, exe: &Path, scratch: &Path, src: &str, data: &str, timeout: Duration) -> Option<Verdict> {
        std::fs::create_dir_all(scratch).ok()?;
        let (prog, json) = (scratch.join("prog.lisp"), scratch.join("data.json"));
        std::fs::write(&prog, src).ok()?;
        std::fs::write(&json, data).ok()?;
        // `lift` loads libOpenCL with `dlopen`, out of reach of the wrapper's `LD_PRELOAD`: the
        // ICD named in `OCL_ICD_VENDORS` makes Oclgrind's device the only one, and the wrapper's
        // options reach it through the variables the wrapper sets. `-cl-opt-disable` keeps
        // every access of the generated source (and avoids Oclgrind 21.10's "Unsupported
        // instruction: freeze" on LLVM's optimized `/` and `%`).
        let mut child = Command::new(&self.tool)
            .args([
                "--data-races",
                "--uninitialized",
                "--check-api",
                "--build-options",
                "-cl-opt-disable",
            ])
            .arg(exe)
            .arg("eval")
            .args([&prog, &json])
            .env("OCL_ICD_VENDORS", &self.icd)
            .env_remove("LIFT_TEST_DEVICE")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .ok()?;
        let started = Instant::now();
        let status = loop {
            if let Ok(Some(status)) = child.try_wait() {
                break status;
            }
            if started.elapsed() > timeout {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        let (mut stdout, mut stderr) = (String::new(), String::new());
        child.stdout.take()?.read_to_string(&mut stdout).ok()?;
        child.stderr.take()?.read_to_string(&mut stderr).ok()?;
        let word = PROBLEMS.iter().find(|w| stderr.contains(**w));
        if word.is_none() && status.success() {
            return None;
        }
        let first = stderr
            .lines()
            .find(|l| word.is_some_and(|w| l.contains(w)))
            .unwrap_or("the evaluation failed on Oclgrind's device");
        Some(Verdict::new(
            Class::Oclgrind,
            crate::oracle::normalize(first),
            format!("Oclgrind ({status}):\n{stderr}\nverdict on its device:\n{stdout}"),
        ))
    }
}
