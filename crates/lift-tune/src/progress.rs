//! What `lift tune` shows while it runs: progress bars per device and a trace of its phases.

/// The progress of `lift tune` on stderr (`indicatif`): one line per device, all drawn
/// together by one `MultiProgress` (the devices sweep at once, each in its own thread), and
/// only when stderr is a terminal, so that redirected output and test logs stay clean:
/// configurations tried, the best time so far and, with a budget, the time left in it.
pub(crate) struct Progress {
    pub(crate) bar: indicatif::ProgressBar,
    pub(crate) label: String,
    pub(crate) budget: Option<std::time::Duration>,
    pub(crate) start: std::time::Instant,
    pub(crate) tried: usize,
    pub(crate) best_ms: Option<f64>,
}

/// The display all of a tune's lines are drawn in (hidden when stderr is not a terminal).
pub(crate) fn progress_display() -> indicatif::MultiProgress {
    use std::io::IsTerminal;
    if std::io::stderr().is_terminal() {
        indicatif::MultiProgress::with_draw_target(indicatif::ProgressDrawTarget::stderr())
    } else {
        indicatif::MultiProgress::with_draw_target(indicatif::ProgressDrawTarget::hidden())
    }
}

impl Progress {
    /// A line of its own (`display`: `None`: the tune's first steps, before the devices'
    /// lines) or one of the display's lines.
    pub(crate) fn new(
        display: Option<&indicatif::MultiProgress>,
        label: &str,
        total: usize,
        budget: Option<std::time::Duration>,
    ) -> Progress {
        use std::io::IsTerminal;
        let len = budget.map_or(total as u64, |b| b.as_millis() as u64);
        let bar = match display {
            _ if !std::io::stderr().is_terminal() => indicatif::ProgressBar::hidden(),
            Some(d) if d.is_hidden() => indicatif::ProgressBar::hidden(),
            Some(d) => d.add(indicatif::ProgressBar::new(len)),
            None => indicatif::ProgressBar::with_draw_target(Some(len), indicatif::ProgressDrawTarget::stderr()),
        };
        if !bar.is_hidden() {
            if let Ok(style) = indicatif::ProgressStyle::with_template("[{bar:24}] {elapsed:>4} {msg}") {
                bar.set_style(style.progress_chars("#>-"));
            }
        }
        Progress {
            bar,
            label: label.to_string(),
            budget,
            start: std::time::Instant::now(),
            tried: 0,
            best_ms: None,
        }
    }

    pub(crate) fn show(&self, what: &str) {
        if self.bar.is_hidden() {
            return;
        }
        let what: String = what.chars().take(60).collect();
        let best = self.best_ms.map_or("-".to_string(), |b| format!("{b:.4} ms"));
        let left = match self.budget {
            Some(b) => {
                let left = b.saturating_sub(self.start.elapsed());
                self.bar.set_position(self.start.elapsed().as_millis() as u64);
                format!(", {:.0} s left", left.as_secs_f64())
            }
            None => {
                self.bar.set_position(self.tried as u64);
                String::new()
            }
        };
        self.bar
            .set_message(format!("{}tried {}, best {best}{left}  {what}", self.label, self.tried));
    }

    pub(crate) fn tried(&mut self, ms: Option<f64>) {
        self.tried += 1;
        if let Some(ms) = ms {
            self.best_ms = Some(self.best_ms.map_or(ms, |b| b.min(ms)));
        }
    }

    pub(crate) fn finish(&mut self) {
        self.bar.finish_and_clear();
    }
}

/// Clears the line also when `tune` returns early with an error, before the error is printed.
impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
    }
}

/// `LIFT_TUNE_TRACE=1`: when each step of `lift tune` ended, on stderr (where its time goes).
pub(crate) struct Trace {
    pub(crate) start: std::time::Instant,
    pub(crate) on: bool,
}

impl Trace {
    pub(crate) fn new(start: std::time::Instant) -> Trace {
        Trace {
            start,
            on: std::env::var("LIFT_TUNE_TRACE").is_ok_and(|v| !v.is_empty() && v != "0"),
        }
    }

    pub(crate) fn at(&self, what: &str) {
        if self.on {
            eprintln!("[tune {:8.3} s] {what}", self.start.elapsed().as_secs_f64());
        }
    }
}
