//! Forwarders that failed. Every subcommand ends non-zero when a forwarder
//! it was asked to run (l3fwd-rs, C l3fwd, testpmd) did not start, exited
//! early or did not stop cleanly, with one line per failed run:
//! `l3fwd-bench: WHO: ERROR (logs: PATHS)`. A command that goes on past a
//! failure, so that the other runs are still measured and reported,
//! prints that its result is partial before those lines.

use std::fmt;
use std::path::Path;
use std::process::ExitCode;

/// One forwarder run that failed: which, why, and where its output is.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    who: String,
    error: String,
    /// [`logs_note`] of the run's logs.
    logs: String,
}

impl Failure {
    /// The run `who` (a configuration id, a forwarder and its mode) failed
    /// with `error`; its output went to [`testkit::log_files`]`(logs)`.
    pub fn new(who: impl fmt::Display, error: impl Into<String>, logs: &Path) -> Failure {
        Failure {
            who: who.to_string(),
            error: error.into(),
            logs: logs_note(logs),
        }
    }
}

/// ` (logs: STDOUT, STDERR)`: those of [`testkit::log_files`]`(logs)` that
/// exist (a forwarder that could not be built or started wrote none).
pub fn logs_note(logs: &Path) -> String {
    let files: Vec<String> = testkit::log_files(logs)
        .iter()
        .filter(|file| file.is_file())
        .map(|file| file.display().to_string())
        .collect();
    match files.len() {
        0 => String::new(),
        1 => format!(" (log: {})", files[0]),
        _ => format!(" (logs: {})", files.join(", ")),
    }
}

/// `WHO: ERROR (logs: PATHS)`: main prints it after `l3fwd-bench: ` when a
/// command ends on it at once.
impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{}: {}{}", self.who, self.error, self.logs)
    }
}

impl From<Failure> for String {
    fn from(failure: Failure) -> String {
        failure.to_string()
    }
}

/// The forwarder runs of a command that goes on past failures, and those
/// that failed.
#[derive(Debug, Default)]
pub struct Failures {
    runs: usize,
    failed: Vec<Failure>,
}

impl Failures {
    pub fn new() -> Failures {
        Failures::default()
    }

    /// Counts the run `who` (output in `logs`), and remembers it if
    /// `result` is a failure.
    pub fn count<T>(&mut self, who: impl fmt::Display, logs: &Path, result: &Result<T, String>) {
        self.runs += 1;
        if let Err(e) = result {
            self.failed.push(Failure::new(who, e.as_str(), logs));
        }
    }

    pub fn any(&self) -> bool {
        !self.failed.is_empty()
    }

    /// What [`Self::finish`] prints: nothing if every run went well; else
    /// that the result is partial, then one line per failed run.
    pub fn lines(&self) -> Vec<String> {
        if self.failed.is_empty() {
            return Vec::new();
        }
        let partial = if self.failed.len() < self.runs {
            format!(
                "l3fwd-bench: partial result: {} of {} runs failed (what did run is reported above)",
                self.failed.len(),
                self.runs
            )
        } else {
            format!("l3fwd-bench: no result: all {} runs failed", self.runs)
        };
        let each = self.failed.iter().map(|f| format!("l3fwd-bench: {f}"));
        std::iter::once(partial).chain(each).collect()
    }

    /// The command's exit code: `code` if no forwarder failed; else the
    /// failures, printed on stderr, and 1 (a regression verdict's 2
    /// included: a rate beside a failed run is no verdict).
    pub fn finish(self, code: ExitCode) -> ExitCode {
        let lines = self.lines();
        if lines.is_empty() {
            return code;
        }
        for line in lines {
            eprintln!("{line}");
        }
        ExitCode::FAILURE
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::configs::tests::config;
    use crate::engine::{Engine, Unit};
    use crate::pool::Pool;
    use crate::run;
    use crate::traffic::Files;
    use std::time::Duration;

    #[test]
    fn lines_name_each_failed_run_after_saying_the_result_is_partial() {
        let scratch = testkit::Scratch::new("l3fwd-bench-failures");
        let dir = scratch.dir();
        let log = dir.join("c-em-r1");
        let [stdout, stderr] = testkit::log_files(&log);
        std::fs::write(&stdout, "Cause: Cannot init mbuf pool on socket 0\n").unwrap();
        std::fs::write(&stderr, "").unwrap();
        let logs = format!("(logs: {}, {})", stdout.display(), stderr.display());
        let mut failures = Failures::new();
        failures.count("rs-em round 1", &dir.join("rs-em-r1"), &Ok::<(), String>(()));
        assert!(!failures.any());
        assert!(failures.lines().is_empty(), "nothing to say when every run went well");
        failures.count("c-em round 1", &log, &Err::<(), _>("exited early".to_string()));
        failures.count("c-em round 2", &dir.join("absent"), &Err::<(), _>("C n/a".to_string()));
        assert_eq!(
            failures.lines(),
            [
                "l3fwd-bench: partial result: 2 of 3 runs failed (what did run is reported above)".to_string(),
                format!("l3fwd-bench: c-em round 1: exited early {logs}"),
                "l3fwd-bench: c-em round 2: C n/a".to_string(),
            ]
        );
        assert_eq!(failures.finish(ExitCode::SUCCESS), ExitCode::FAILURE);
        std::fs::remove_file(&stderr).unwrap();
        let failure = Failure::new("C l3fwd em", "exited early", &log);
        assert_eq!(
            String::from(failure),
            format!("C l3fwd em: exited early (log: {})", stdout.display())
        );
    }

    /// The real l3fwd-rs, on make bench's command line for rs-lpm with a
    /// pool far larger than its EAL memory (--no-huge: -m is all it has),
    /// run as `make bench` runs it: it exits at start, and the command's
    /// end is non-zero with a line naming the configuration, its error and
    /// its log.
    #[test]
    fn a_forwarder_short_of_memory_for_its_pool_makes_the_command_fail() {
        let scratch = testkit::Scratch::new("l3fwd-bench-short-pool");
        let dir = scratch.dir();
        let pcaps = ["p0.pcap", "p1.pcap"].map(|name| dir.join(name));
        for pcap in &pcaps {
            trafficgen::write_pcap(pcap, &[vec![0; 60]]).expect("write pcap");
        }
        let rules = ["v4", "v6"].map(|family| testkit::workspace().join(format!("configs/lpm_{family}.cfg")));
        let files = Files { rules, pcaps };
        // 1M mbufs take about 2.3 GB; 256 MB hold the tables, not the pool.
        let pool = Pool {
            mbufs: Some(1 << 20),
            memory_mb: 256,
        };
        let rs = config("rs-lpm");
        let unit = Unit {
            config: rs,
            cell: None,
            program: Ok(testkit::binary("l3fwd-rs", "l3fwd-rs")),
            files: Ok(files),
            pool,
            timing: run::Timing {
                start_timeout: Duration::from_secs(30),
                warmup: Duration::from_millis(100),
                window: Duration::from_millis(100),
            },
            may_keep: false,
        };
        let logs = dir.join("logs");
        let mut engine = Engine::new(1, 1, &logs).unwrap();
        let runs = engine.run(&[unit]).unwrap();
        assert!(runs[0].result.is_err());
        let [stdout, stderr] = testkit::log_files(&logs.join("rs-lpm-r1"));
        let failures = engine.finish();
        let lines = failures.lines();
        let line = lines.last().expect("the run failed");
        assert!(
            line.starts_with("l3fwd-bench: rs-lpm round 1: exited early (exit status: 1): "),
            "{line}"
        );
        assert!(
            line.contains("mbufs") && line.contains("Cannot allocate memory"),
            "{line}"
        );
        let logs = format!("(logs: {}, {})", stdout.display(), stderr.display());
        assert!(line.ends_with(&logs), "{line}");
        assert_eq!(lines[0], "l3fwd-bench: no result: all 1 runs failed");
        assert_eq!(failures.finish(ExitCode::SUCCESS), ExitCode::FAILURE);
        assert!(
            !dpdk::runtime_dir_of(&format!("l3fwd-bench-{}-0", std::process::id())).exists(),
            "a failed start leaves no runtime folder"
        );
    }
}
