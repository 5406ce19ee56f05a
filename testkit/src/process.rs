//! The one way to run a program of this workspace (or C l3fwd, testpmd)
//! as a child process: its output in log files, stopped by a signal or by
//! closing its stdin, killed if dropped while running, its EAL runtime
//! folder removed when dropped.

use std::fmt::Display;
use std::fs::{self, File};
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use crate::Telemetry;

/// How often a wait looks again.
const POLL: Duration = Duration::from_millis(20);
/// Time to exit once asked to stop.
pub const EXIT_TIMEOUT: Duration = Duration::from_secs(10);

/// How a process is asked to stop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// SIGINT, as l3fwd-rs and C l3fwd take.
    Sigint,
    /// testpmd (not interactive) waits for a line on stdin, then exits
    /// cleanly: its stdin is a pipe, closed to stop it.
    CloseStdin,
}

/// The right to run a busy-polling forwarder, one at a time per test
/// process: on two CPUs, two of them starve each other and the timing the
/// tests rely on (and DPDK 22.11's af_packet names its PACKET_FANOUT group
/// (pid ^ ifindex) & 0xffff, which two processes can share). Held for as
/// long as the guard lives; a test that panicked does not poison it.
pub fn one_at_a_time() -> MutexGuard<'static, ()> {
    static RUNNING: Mutex<()> = Mutex::new(());
    RUNNING.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A running program: its stdout and stderr in files [`log_files`] (pipes could fill up and block it), its EAL runtime
/// folder (`--file-prefix PREFIX`) removed on drop (C l3fwd and testpmd
/// leave theirs; l3fwd-rs takes its own, which tests check), and killed
/// if dropped while still running, so that a failing test leaves no
/// busy-polling process behind.
pub struct Process {
    child: Child,
    stdin: Option<ChildStdin>,
    stop: Stop,
    prefix: String,
    /// None when the caller set its stdio ([`Process::spawn_with_own_stdio`]).
    logs: Option<PathBuf>,
}

/// Where a [`Process`] started with logs `logs` writes its stdout and its
/// stderr: `LOGS.stdout` and `LOGS.stderr`.
pub fn log_files(logs: &Path) -> [PathBuf; 2] {
    ["stdout", "stderr"].map(|ext| {
        // Appended, not in place of an extension: `rs-1.5K` has none.
        let mut path = logs.as_os_str().to_owned();
        path.push(format!(".{ext}"));
        PathBuf::from(path)
    })
}

/// How a [`Process`] ended.
pub struct Exit {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

impl Process {
    /// Starts `command`, a DPDK program run with `--file-prefix prefix`
    /// (empty for another program: no runtime folder), its output going
    /// to [`log_files`]`(logs)`.
    pub fn spawn(mut command: Command, prefix: &str, logs: &Path, stop: Stop) -> io::Result<Process> {
        let [stdout, stderr] = log_files(logs).map(|path| {
            File::create(&path).map_err(|err| io::Error::new(err.kind(), format!("{}: {err}", path.display())))
        });
        let stdin = match stop {
            Stop::CloseStdin => Stdio::piped(),
            Stop::Sigint => Stdio::null(),
        };
        command.stdin(stdin).stdout(stdout?).stderr(stderr?);
        Process::start(command, prefix, Some(logs), stop)
    }

    /// Starts `command` with the stdin, stdout and stderr it sets (pipes
    /// the test writes, reads or closes through [`Process::child`]), for a
    /// test of how the program treats them; stopped by SIGINT. Its logs
    /// ([`Process::stdout`], [`Process::stderr`]) read as empty.
    pub fn spawn_with_own_stdio(command: Command, prefix: &str) -> io::Result<Process> {
        Process::start(command, prefix, None, Stop::Sigint)
    }

    fn start(mut command: Command, prefix: &str, logs: Option<&Path>, stop: Stop) -> io::Result<Process> {
        let program = command.get_program().to_string_lossy().into_owned();
        let mut child = command
            .spawn()
            .map_err(|err| io::Error::new(err.kind(), format!("{program}: {err}")))?;
        Ok(Process {
            // Only its own pipe: a test's stays in the child for it.
            stdin: child.stdin.take_if(|_| stop == Stop::CloseStdin),
            child,
            stop,
            prefix: prefix.to_string(),
            logs: logs.map(Path::to_path_buf),
        })
    }

    /// The child process, for its pipes.
    pub fn child(&mut self) -> &mut Child {
        &mut self.child
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Its EAL file prefix.
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// What it wrote to stdout so far.
    pub fn stdout(&self) -> String {
        self.log(0)
    }

    /// What it wrote to stderr so far.
    pub fn stderr(&self) -> String {
        self.log(1)
    }

    fn log(&self, which: usize) -> String {
        let path = self.logs.as_ref().map(|logs| log_files(logs)[which].clone());
        path.and_then(|path| fs::read_to_string(path).ok()).unwrap_or_default()
    }

    /// The error that made it exit: rte_exit's `Cause:` line (EAL may log
    /// more after it while cleaning up), else the last non-empty line of
    /// its stderr, else of its stdout.
    pub fn exit_reason(&self) -> String {
        let (stderr, stdout) = (self.stderr(), self.stdout());
        let lines = || stderr.lines().rev().chain(stdout.lines().rev());
        let cause = lines().find(|l| l.trim_start().starts_with("Cause:"));
        let last = || lines().find(|l| !l.trim().is_empty());
        cause.or_else(last).unwrap_or_default().trim().to_string()
    }

    /// Its logs, for a message: where they are, stdout and stderr.
    pub fn describe(&self) -> String {
        let Some(logs) = &self.logs else {
            return format!("pid {} (its output in the test's pipes)", self.pid());
        };
        format!(
            "pid {}, logs {}.*\n--- stdout\n{}\n--- stderr\n{}",
            self.pid(),
            logs.display(),
            self.stdout(),
            self.stderr()
        )
    }

    /// Its exit status, if it has exited.
    pub fn try_wait(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().expect("wait for a child process")
    }

    /// Ok while it runs; else how it ended, with its last words.
    pub fn check_alive(&mut self) -> Result<(), String> {
        match self.try_wait() {
            None => Ok(()),
            Some(status) => Err(self.exited_early(status)),
        }
    }

    fn exited_early(&self, status: ExitStatus) -> String {
        format!("exited early ({status}): {}", self.exit_reason())
    }

    /// Why its telemetry failed with `err`: a connection fails when the
    /// process exits, and then its own error, if it exits within
    /// [`EXIT_TIMEOUT`], says more.
    pub fn why_lost(&mut self, err: impl Display) -> String {
        match self.wait_timeout(EXIT_TIMEOUT) {
            Some(status) => self.exited_early(status),
            None => format!("telemetry: {err}"),
        }
    }

    /// Waits at most `timeout` until `found` holds; Err with its exit
    /// status if it exited meanwhile, or with None after `timeout`.
    pub fn wait_until(
        &mut self,
        timeout: Duration,
        found: impl Fn(&Process) -> bool,
    ) -> Result<(), Option<ExitStatus>> {
        let start = Instant::now();
        loop {
            if found(self) {
                return Ok(());
            }
            if let Some(status) = self.try_wait() {
                return Err(Some(status));
            }
            if start.elapsed() >= timeout {
                return Err(None);
            }
            thread::sleep(POLL);
        }
    }

    /// Waits at most `timeout` until its stderr contains `needle`; panics,
    /// with its logs, if it exits or the time runs out first.
    pub fn wait_for_stderr(&mut self, needle: &str, timeout: Duration) {
        match self.wait_until(timeout, |p| p.stderr().contains(needle)) {
            Ok(()) => {}
            Err(Some(status)) => panic!("exited ({status}) before {needle:?}: {}", self.describe()),
            Err(None) => panic!("no {needle:?} within {timeout:?}: {}", self.describe()),
        }
    }

    /// Waits at most `timeout` for it to exit.
    pub fn wait_timeout(&mut self, timeout: Duration) -> Option<ExitStatus> {
        self.wait_until(timeout, |_| false).err().flatten()
    }

    /// Sends SIG`name` (`INT`, `TERM`, `HUP`, `STOP`, `CONT`...).
    pub fn signal(&self, name: &str) -> io::Result<()> {
        let status = Command::new("kill")
            .args([format!("-{name}"), self.pid().to_string()])
            .status()?;
        if status.success() {
            Ok(())
        } else {
            Err(io::Error::other(format!("kill -{name} {}: {status}", self.pid())))
        }
    }

    /// Asks it to stop (a paused process is resumed first) and waits at
    /// most [`EXIT_TIMEOUT`]; kills it if it does not go in time (an
    /// error). Its exit status, whatever it is.
    pub fn stop(&mut self) -> Result<ExitStatus, String> {
        if let Some(status) = self.try_wait() {
            return Ok(status);
        }
        // A paused process takes no signal but SIGKILL until it goes on.
        let _ = self.signal("CONT");
        match self.stop {
            Stop::Sigint => self.signal("INT").map_err(|e| e.to_string())?,
            Stop::CloseStdin => drop(self.stdin.take()),
        }
        match self.wait_timeout(EXIT_TIMEOUT) {
            Some(status) => Ok(status),
            None => {
                let _ = self.child.kill();
                let _ = self.child.wait();
                Err(format!(
                    "it ignored the stop request for {EXIT_TIMEOUT:?} and was killed"
                ))
            }
        }
    }

    /// SIGKILL (no clean-up of its own), and waits for it.
    pub fn kill(&mut self) -> io::Result<ExitStatus> {
        self.child.kill()?;
        self.child.wait()
    }

    /// [`Process::stop`], and an exit with an error is a failure too: a
    /// forwarder that crashed at exit or found a leak failed.
    pub fn stop_well(&mut self) -> Result<ExitStatus, String> {
        let status = self.stop()?;
        self.ended_well(status)
    }

    /// `status` if it is a clean exit; else how it ended, with its last words.
    pub fn ended_well(&self, status: ExitStatus) -> Result<ExitStatus, String> {
        if status.success() {
            return Ok(status);
        }
        Err(format!(
            "asked to stop, it exited with an error ({status}): {}",
            self.exit_reason()
        ))
    }

    /// [`Process::stop_well`], panicking with its logs on a failure;
    /// returns its output.
    pub fn stop_cleanly(mut self) -> Exit {
        match self.stop_well() {
            Ok(status) => self.exit(status),
            Err(e) => panic!("{e}: {}", self.describe()),
        }
    }

    /// Its exit status and output, once it has exited.
    pub fn exit(&self, status: ExitStatus) -> Exit {
        Exit {
            status,
            stdout: self.stdout(),
            stderr: self.stderr(),
        }
    }

    /// A client of its telemetry socket.
    pub fn telemetry(&self) -> io::Result<Telemetry> {
        Telemetry::of(&self.prefix)
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
        // EAL's runtime files, several MB per prefix, never reused; an
        // empty prefix would name every prefix's folder.
        if !self.prefix.is_empty() {
            let _ = fs::remove_dir_all(dpdk::runtime_dir_of(&self.prefix));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Scratch;

    /// `perl -e CODE`, with SIGINT back to its default (a shell's
    /// background jobs inherit it ignored).
    fn perl(code: &str) -> Command {
        let mut command = Command::new("perl");
        command.args(["-e", &format!("$SIG{{INT}} = 'DEFAULT'; $| = 1; {code}")]);
        command
    }

    /// The state letter of /proc/PID/stat: `T` when stopped by a signal.
    fn state(pid: u32) -> char {
        let stat = fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
        stat.rsplit(')').next().unwrap().trim_start().chars().next().unwrap()
    }

    #[test]
    fn a_paused_process_still_stops_when_asked() {
        use std::os::unix::process::ExitStatusExt;
        let dir = Scratch::new("testkit-pause");
        let command = perl("print \"ready\\n\"; sleep 60");
        let mut p = Process::spawn(command, "", &dir.path("perl"), Stop::Sigint).unwrap();
        assert!(p.wait_until(EXIT_TIMEOUT, |p| p.stdout().contains("ready")).is_ok());
        p.signal("STOP").unwrap();
        assert!(p.wait_until(EXIT_TIMEOUT, |p| state(p.pid()) == 'T').is_ok());
        let status = p.stop().expect("ended by its SIGINT, not killed");
        assert_eq!(status.signal(), Some(2));
    }

    #[test]
    fn closing_stdin_stops_a_process_that_reads_it() {
        let dir = Scratch::new("testkit-stdin");
        let command = perl("print \"ready\\n\"; <STDIN>; print \"bye\\n\"");
        let mut p = Process::spawn(command, "", &dir.path("perl"), Stop::CloseStdin).unwrap();
        assert!(p.wait_until(EXIT_TIMEOUT, |p| p.stdout().contains("ready")).is_ok());
        let exit = p.stop_cleanly();
        assert_eq!(exit.stdout, "ready\nbye\n");
    }

    #[test]
    fn an_exit_is_told_by_rte_exit_s_cause_else_by_the_last_line() {
        let dir = Scratch::new("testkit-exit");
        let logs = dir.path("perl");
        let code = "print \"EAL: Error - exiting\\n  Cause: no ports\\nEAL: cleanup\\n\"; exit 1";
        let mut p = Process::spawn(perl(code), "", &logs, Stop::Sigint).unwrap();
        assert!(p.wait_timeout(EXIT_TIMEOUT).is_some());
        assert_eq!(
            p.check_alive(),
            Err("exited early (exit status: 1): Cause: no ports".into())
        );
        let code = "print \"ready\\n\"; print STDERR \"x\\nbad\\n\\n\"; exit 2";
        let mut p = Process::spawn(perl(code), "", &logs, Stop::Sigint).unwrap();
        assert!(p.wait_timeout(EXIT_TIMEOUT).is_some());
        let err = "asked to stop, it exited with an error (exit status: 2): bad";
        assert_eq!(p.stop_well(), Err(err.into()));
        assert_eq!(
            log_files(&logs).map(|f| fs::read_to_string(f).unwrap()),
            ["ready\n", "x\nbad\n\n"]
        );
    }

    #[test]
    fn a_dropped_process_is_killed_and_its_runtime_folder_removed() {
        let dir = Scratch::new("testkit-drop");
        let prefix = format!("testkit-drop-{}", std::process::id());
        let runtime = dpdk::runtime_dir_of(&prefix);
        fs::create_dir_all(&runtime).unwrap();
        let p = Process::spawn(perl("sleep 60"), &prefix, &dir.path("perl"), Stop::Sigint).unwrap();
        let pid = p.pid();
        drop(p);
        assert!(!runtime.exists(), "{}", runtime.display());
        // Reaped: no such process any more.
        assert!(!Path::new(&format!("/proc/{pid}")).exists());
    }
}
