//! Progress of a long benchmark: what runs now, how many are done, and
//! when it should end. On a terminal, an indicatif bar on stderr with each
//! finished run's line printed above it; elsewhere (a log, a pipe) the bar
//! stays hidden and each line starts with the run's number and the ETA.

use std::io::Write;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

pub struct Progress {
    bar: ProgressBar,
    started: Instant,
    /// The run under way: its number (from 1) and what it is.
    current: (u64, String),
}

impl Progress {
    /// Progress over `total` runs.
    pub fn new(total: usize) -> Progress {
        let bar = ProgressBar::with_draw_target(Some(total as u64), ProgressDrawTarget::stderr());
        let style = ProgressStyle::with_template("{bar:30} {pos}/{len} {wide_msg} elapsed {elapsed}, ETA {eta}")
            .expect("a valid template");
        bar.set_style(style);
        Progress {
            bar,
            started: Instant::now(),
            current: (0, String::new()),
        }
    }

    /// Says that `what` runs next.
    pub fn start(&mut self, what: String) {
        let n = self.bar.position() + 1;
        self.bar.set_message(what.clone());
        if self.bar.is_hidden() {
            let eta = eta(
                self.started.elapsed(),
                self.bar.position(),
                self.bar.length().unwrap_or(0),
            );
            print!("[{n}/{}] {what}{eta}: ", self.bar.length().unwrap_or(0));
            let _ = std::io::stdout().flush();
        }
        self.current = (n, what);
    }

    /// Reports the run under way as done with `result`.
    pub fn done(&self, result: &str) {
        if self.bar.is_hidden() {
            println!("{result}");
        } else {
            let (n, what) = &self.current;
            let total = self.bar.length().unwrap_or(0);
            self.bar.suspend(|| println!("[{n}/{total}] {what}: {result}"));
        }
        self.bar.inc(1);
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.bar.finish_and_clear();
    }
}

/// ` (ETA 3m20s)` after `done` of `total` runs in `elapsed`; nothing before
/// the first run has finished.
fn eta(elapsed: Duration, done: u64, total: u64) -> String {
    if done == 0 {
        return String::new();
    }
    let left = elapsed.as_secs_f64() / done as f64 * total.saturating_sub(done) as f64;
    let secs = left.round() as u64;
    format!(" (ETA {}m{:02}s)", secs / 60, secs % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eta_from_the_runs_so_far() {
        assert_eq!(eta(Duration::from_secs(30), 0, 10), "");
        assert_eq!(eta(Duration::from_secs(30), 3, 10), " (ETA 1m10s)");
        assert_eq!(eta(Duration::from_secs(30), 10, 10), " (ETA 0m00s)");
    }
}
