//! Evaluation in a child process, so that a case that aborts the process (a driver crash, a
//! stack overflow) or hangs costs one verdict, not the run.
//!
//! The child is this binary in `worker` mode: it reads one JSON request per line on stdin
//! (`{"src": ..., "data": ...}`, and `"variants": mode` to run the case's rewritten variants)
//! and answers one JSON verdict per line on stdout. The parent
//! waits for each answer at most `timeout`; a child that dies or overruns is killed, the case gets
//! a `crash` or `timeout` verdict, and the next case starts a fresh child.

use crate::oracle::{self, Class, Verdict};
use crate::variants::Mode;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub struct Runner {
    exe: PathBuf,
    device: Option<String>,
    timeout: Duration,
    child: Option<Worker>,
}

struct Worker {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    /// The end of the child's stderr, for the report of a crash.
    stderr: Arc<Mutex<Vec<u8>>>,
}

const STDERR_KEPT: usize = 4000;

impl Runner {
    pub fn new(exe: PathBuf, device: Option<String>, timeout: Duration) -> Runner {
        Runner {
            exe,
            device,
            timeout,
            child: None,
        }
    }

    fn spawn(&self) -> std::io::Result<Worker> {
        let mut cmd = Command::new(&self.exe);
        cmd.arg("worker");
        if let Some(d) = &self.device {
            cmd.args(["--device", d]);
        }
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()?;
        let stdin = child.stdin.take().expect("piped");
        let stdout = child.stdout.take().expect("piped");
        let mut err = child.stderr.take().expect("piped");
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let kept = stderr.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = err.read(&mut buf) {
                if n == 0 {
                    break;
                }
                let mut k = kept.lock().unwrap_or_else(|e| e.into_inner());
                k.extend_from_slice(&buf[..n]);
                if k.len() > 2 * STDERR_KEPT {
                    let cut = k.len() - STDERR_KEPT;
                    k.drain(..cut);
                }
            }
        });
        Ok(Worker {
            child,
            stdin,
            lines,
            stderr,
        })
    }

    /// The verdict on one case.
    pub fn eval(&mut self, src: &str, data: &str) -> Verdict {
        self.eval_in(src, data, None)
    }

    /// The verdict on one case, as written or (`mode`) as its rewritten variants.
    pub fn eval_in(&mut self, src: &str, data: &str, mode: Option<Mode>) -> Verdict {
        if self.child.is_none() {
            // A worker file another thread has just written can be busy for the instant that a
            // process forked meanwhile holds it open (ETXTBSY): a few short retries ride it out.
            let mut tries = 0;
            let started = loop {
                match self.spawn() {
                    Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy && tries < 20 => {
                        tries += 1;
                        std::thread::sleep(Duration::from_millis(10));
                    }
                    other => break other,
                }
            };
            match started {
                Ok(w) => self.child = Some(w),
                Err(e) => return Verdict::new(Class::Crash, "cannot start a worker", e.to_string()),
            }
        }
        let w = self.child.as_mut().expect("just started");
        // Anything the previous case left on stderr is not this case's.
        w.stderr.lock().unwrap_or_else(|e| e.into_inner()).clear();
        let mut request = serde_json::json!({ "src": src, "data": data });
        if let Some(m) = mode {
            request["variants"] = m.to_json();
        }
        let request = request.to_string();
        let sent = writeln!(w.stdin, "{request}").and_then(|()| w.stdin.flush());
        let answer = match sent {
            Ok(()) => w.lines.recv_timeout(self.timeout),
            Err(_) => Err(RecvTimeoutError::Disconnected),
        };
        match answer {
            Ok(line) => serde_json::from_str(&line)
                .ok()
                .and_then(|v| Verdict::from_json(&v))
                .unwrap_or_else(|| Verdict::new(Class::Crash, "garbled worker answer", line)),
            Err(RecvTimeoutError::Timeout) => {
                self.kill();
                Verdict::new(
                    Class::Timeout,
                    "timeout",
                    format!("no answer within {:?}", self.timeout),
                )
            }
            Err(RecvTimeoutError::Disconnected) => {
                let mut w = self.child.take().expect("running");
                let status = w.child.wait().map(|s| s.to_string()).unwrap_or_default();
                // Give the stderr reader a moment to drain.
                std::thread::sleep(Duration::from_millis(50));
                let err = String::from_utf8_lossy(&w.stderr.lock().unwrap_or_else(|e| e.into_inner())).into_owned();
                let last = err
                    .lines()
                    .rev()
                    .find(|l| !l.trim().is_empty())
                    .unwrap_or("")
                    .to_string();
                Verdict::new(
                    Class::Crash,
                    format!("process died: {}", oracle::normalize(&last)),
                    format!("the worker died ({status}); its stderr ends:\n{err}"),
                )
            }
        }
    }

    fn kill(&mut self) {
        if let Some(mut w) = self.child.take() {
            let _ = w.child.kill();
            let _ = w.child.wait();
        }
    }
}

impl Drop for Runner {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The `worker` side: answers requests until stdin closes.
pub fn serve(device: Option<&str>) {
    // Panics are caught and reported as verdicts; the default hook would only add noise.
    std::panic::set_hook(Box::new(|_| {}));
    // One context per device for the worker's life, not one per case: context creation is
    // serialised by NVIDIA's driver across processes and capped the fuzzer at ~5 cases/s.
    host_runner::keep_sessions();
    let stdin = std::io::stdin();
    let mut out = std::io::stdout();
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        let req: serde_json::Value = match serde_json::from_str(&line) {
            Ok(v) => v,
            Err(_) => continue,
        };
        let src = req.get("src").and_then(|v| v.as_str()).unwrap_or("");
        let data = req.get("data").and_then(|v| v.as_str()).unwrap_or("{}");
        let v = match req.get("variants").and_then(Mode::from_json) {
            Some(mode) => crate::variants::evaluate(src, data, device, mode),
            None => oracle::evaluate(src, data, device),
        };
        if writeln!(out, "{}", v.to_json()).and_then(|()| out.flush()).is_err() {
            break;
        }
    }
}
