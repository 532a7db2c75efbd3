//! Progress of a long command, on standard error: a bar on a terminal, and where standard error
//! is not a terminal (a Slurm or nohup log, a pipe) one line every few seconds
//! (`AGORA_PROGRESS_SECONDS`, default 10), so a log shows the command is alive and how far it is.
//! A command with a count says how far it is in that count (runs, model calls, tables); one
//! without says what it is doing and for how long. A line is printed at the end either way.
//!
//! [`on_interrupt`] makes Ctrl-C (SIGINT) and SIGTERM say how to resume before the process ends
//! as the signal would end it.

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A source of the position and detail, read at each line (model calls answered so far …).
pub type Poll = Box<dyn Fn() -> (u64, String) + Send + Sync>;

struct State {
    pos: u64,
    total: Option<u64>,
    detail: String,
}

struct Inner {
    label: String,
    unit: &'static str,
    started: Instant,
    state: Mutex<State>,
    poll: Mutex<Option<Poll>>,
    bar: Option<indicatif::ProgressBar>,
}

/// One command's progress (see the module documentation).
pub struct Progress {
    inner: Arc<Inner>,
    stop: Arc<AtomicBool>,
    ticker: Option<std::thread::JoinHandle<()>>,
}

/// Seconds between two lines where standard error is not a terminal.
fn every() -> Duration {
    let s = std::env::var("AGORA_PROGRESS_SECONDS").ok().and_then(|v| v.parse::<f64>().ok()).unwrap_or(10.0);
    Duration::from_secs_f64(s.clamp(0.05, 3600.0))
}

impl Inner {
    fn refresh(&self) {
        if let Some(poll) = &*self.poll.lock().unwrap_or_else(std::sync::PoisonError::into_inner) {
            let (pos, detail) = poll();
            let mut s = self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            s.pos = pos;
            s.detail = detail;
        }
    }

    fn line(&self) -> String {
        let s = self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let secs = self.started.elapsed().as_secs_f64();
        let mut out = format!("{}: ", self.label);
        match s.total {
            Some(t) if t > 0 => {
                let pct = 100.0 * s.pos as f64 / t as f64;
                out.push_str(&format!("{}/{} {} ({pct:.0} %)", s.pos, t, self.unit));
                if s.pos > 0 && s.pos < t {
                    let eta = secs * (t - s.pos) as f64 / s.pos as f64;
                    out.push_str(&format!(", eta {eta:.0} s"));
                }
            }
            _ if s.pos > 0 => out.push_str(&format!("{} {}", s.pos, self.unit)),
            _ => out.push_str("working"),
        }
        if !s.detail.is_empty() {
            out.push_str(&format!(", {}", s.detail));
        }
        out.push_str(&format!(", {secs:.0} s"));
        out
    }

    fn draw(&self) {
        if let Some(bar) = &self.bar {
            let s = self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            if let Some(t) = s.total {
                bar.set_length(t);
            }
            bar.set_position(s.pos);
            bar.set_message(s.detail.clone());
        }
    }
}

impl Progress {
    /// Starts reporting `label`'s progress in `unit`, out of `total` when known.
    pub fn start(label: &str, total: Option<u64>, unit: &'static str) -> Progress {
        Progress::start_on(label, total, unit, std::io::stderr().is_terminal())
    }

    fn start_on(label: &str, total: Option<u64>, unit: &'static str, terminal: bool) -> Progress {
        let bar = terminal.then(|| {
            let template = match total {
                Some(_) => format!("{{spinner}} {label} [{{bar:30}}] {{pos}}/{{len}} {unit} {{msg}} (eta {{eta}})"),
                None => format!("{{spinner}} {label}: {{msg}} ({{elapsed}})"),
            };
            let bar = indicatif::ProgressBar::new(total.unwrap_or(0));
            bar.set_style(
                indicatif::ProgressStyle::with_template(&template)
                    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
                    .progress_chars("=> "),
            );
            bar.enable_steady_tick(Duration::from_millis(200));
            bar
        });
        let inner = Arc::new(Inner {
            label: label.to_string(),
            unit,
            started: Instant::now(),
            state: Mutex::new(State { pos: 0, total, detail: String::new() }),
            poll: Mutex::new(None),
            bar,
        });
        let stop = Arc::new(AtomicBool::new(false));
        let (i, st) = (inner.clone(), stop.clone());
        let period = if terminal { Duration::from_millis(250) } else { every() };
        let ticker = std::thread::spawn(move || {
            let mut next = Instant::now() + period;
            while !st.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(50).min(period));
                if Instant::now() < next {
                    continue;
                }
                next += period;
                i.refresh();
                if i.bar.is_some() {
                    i.draw();
                } else {
                    let _ = writeln!(std::io::stderr(), "{}", i.line());
                }
            }
        });
        Progress { inner, stop, ticker: Some(ticker) }
    }

    /// Reads the position and detail from `poll` at each line from now on.
    pub fn poll(&self, poll: Poll) {
        *self.inner.poll.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(poll);
    }

    /// The position reached.
    pub fn set(&self, pos: u64) {
        self.inner.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner).pos = pos;
    }

    /// What is being done now (a table's name, a phase).
    pub fn detail(&self, detail: impl Into<String>) {
        self.inner.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner).detail = detail.into();
    }

    /// Stops reporting; off a terminal, one last line says where it ended.
    pub fn finish(mut self) {
        self.end(true);
    }

    fn end(&mut self, last_line: bool) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.ticker.take() {
            let _ = t.join();
        }
        self.inner.refresh();
        match &self.inner.bar {
            Some(bar) => bar.finish_and_clear(),
            None if last_line => {
                let _ = writeln!(std::io::stderr(), "{} (done)", self.inner.line());
            }
            None => {}
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        // Dropped on an error: the ticker stops, and the error speaks for itself.
        if self.ticker.is_some() {
            self.end(false);
        }
    }
}

/// Makes SIGINT and SIGTERM print `message` (how to resume) on standard error before the
/// process ends as the signal would end it; what was committed stays in the store.
pub fn on_interrupt(message: String) {
    let text: &'static [u8] = Box::leak(format!("\n{message}\n").into_bytes().into_boxed_slice());
    for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        // SAFETY: the action only writes a buffer that lives for the whole process with
        // write(2) and then takes the signal's default action, both async-signal-safe.
        #[expect(unsafe_code, reason = "signal-hook's registration is unsafe by contract")]
        let _ = unsafe {
            signal_hook::low_level::register(signal, move || {
                libc::write(2, text.as_ptr().cast(), text.len());
                let _ = signal_hook::low_level::emulate_default_handler(signal);
            })
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_says_how_far_in_what_unit_with_the_detail() {
        let p = Progress::start_on("run study", Some(40), "runs", false);
        p.set(10);
        p.detail("3 calls in flight");
        let line = p.inner.line();
        assert!(line.starts_with("run study: 10/40 runs (25 %), eta "), "{line}");
        assert!(line.contains(", 3 calls in flight, "), "{line}");
        p.poll(Box::new(|| (20, "polled".into())));
        p.inner.refresh();
        assert!(p.inner.line().starts_with("run study: 20/40 runs (50 %)"), "{}", p.inner.line());
        p.finish();
        let q = Progress::start_on("analyze", None, "", false);
        q.detail("grading");
        assert!(q.inner.line().starts_with("analyze: working, grading, "), "{}", q.inner.line());
    }
}
