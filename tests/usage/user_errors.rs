//! Inputs that never end or never come: nothing waits forever. A rule file
//! without line ends fails at once, a pipe is read as it comes, a FIFO
//! with no writer gives way to a signal, and a `--stats-json` FIFO with no
//! reader, or one that stopped reading, holds up neither start-up nor
//! shutdown.

use std::io::{Read, Write};
use std::process::{Command, ExitStatus, Output, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use testkit::{l3fwd_rs, Process, Run, Scratch};

const V6: &str = "--rule_ipv6=configs/lpm_v6.cfg";

/// l3fwd-rs on two null ports with `args`, stdin, stdout and stderr piped.
fn spawn(name: &str, args: &[&str]) -> Process {
    let prefix = testkit::unique_prefix(&format!("user-errors-{name}"));
    let mut command = Run::new(l3fwd_rs())
        .eal_args(&["--vdev=net_null0", "--vdev=net_null1"])
        .two_ports()
        .args(args)
        .command(&prefix);
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    Process::spawn_with_own_stdio(command, &prefix).expect("spawn l3fwd-rs")
}

/// Its exit within `timeout` (else a panic: the process is killed when
/// dropped) and what it wrote; then its runtime folder is gone.
fn exit_within(mut child: Process, name: &str, timeout: Duration) -> Output {
    let status = child
        .wait_timeout(timeout)
        .unwrap_or_else(|| panic!("{name}: still running after {timeout:?}"));
    let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
    let pipes = child.child();
    pipes
        .stdout
        .take()
        .expect("stdout pipe")
        .read_to_end(&mut stdout)
        .unwrap();
    pipes
        .stderr
        .take()
        .expect("stderr pipe")
        .read_to_end(&mut stderr)
        .unwrap();
    testkit::assert_runtime_folder_gone(child.prefix(), name);
    Output { status, stdout, stderr }
}

/// Sends SIGINT to `child`.
fn interrupt(child: &Process) {
    child.signal("INT").expect("kill -INT");
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn mkfifo(dir: &Scratch, name: &str) -> String {
    let path = dir.path(name).display().to_string();
    let status: ExitStatus = Command::new("mkfifo").arg(&path).status().expect("run mkfifo");
    assert!(status.success(), "mkfifo {path}");
    path
}

#[test]
fn a_rule_file_without_line_ends_fails_at_its_first_line() {
    for mode in ["-L", "-E"] {
        let child = spawn("zero", &[mode, "--rule_ipv4=/dev/zero", V6]);
        let out = exit_within(child, "zero", Duration::from_secs(5));
        assert_eq!(out.status.code(), Some(1), "{mode}");
        let expected = "/dev/zero:1: line longer than 65536 bytes";
        assert!(stderr(&out).contains(expected), "{mode}: {}", stderr(&out));
    }
}

#[test]
fn a_rule_file_from_a_pipe_is_read() {
    let mut child = spawn("pipe", &["--rule_ipv4=/dev/stdin", V6, "--duration", "1"]);
    let routes = std::fs::read(testkit::workspace().join("configs/lpm_v4.cfg")).unwrap();
    let mut stdin = child.child().stdin.take().unwrap();
    thread::sleep(Duration::from_millis(300)); // the writer comes late
    stdin.write_all(&routes).unwrap();
    drop(stdin);
    let out = exit_within(child, "pipe", Duration::from_secs(20));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("/dev/stdin: 16 rules read"), "{}", stderr(&out));
}

#[test]
fn a_fifo_without_a_writer_gives_way_to_sigint() {
    let dir = Scratch::new("fifo-rules");
    let fifo = mkfifo(&dir, "routes");
    let mut child = spawn("fifo", &[&format!("--rule_ipv4={fifo}"), V6]);
    thread::sleep(Duration::from_secs(1));
    assert!(child.try_wait().is_none(), "l3fwd-rs did not wait for the writer");
    interrupt(&child);
    let out = exit_within(child, "fifo", Duration::from_secs(3));
    assert_eq!(out.status.code(), Some(1));
    let expected = format!("cannot read {fifo}: stopped by a signal while waiting for input");
    assert!(stderr(&out).contains(&expected), "{}", stderr(&out));
}

#[test]
fn a_stats_json_fifo_without_a_reader_holds_nothing_up() {
    let dir = Scratch::new("fifo-json");
    let fifo = mkfifo(&dir, "stats.json");
    let child = spawn("json", &["--stats-json", &fifo, "--duration", "1"]);
    let out = exit_within(child, "json", Duration::from_secs(20));
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn a_stats_json_reader_that_stopped_reading_holds_up_the_exit_2_s_at_most() {
    use rustix::fs::{Mode, OFlags};
    let dir = Scratch::new("full-fifo-json");
    let fifo = mkfifo(&dir, "stats.json");
    // A reader that read nothing, and a pipe buffer already full.
    let reader = rustix::fs::open(&fifo, OFlags::RDWR | OFlags::NONBLOCK, Mode::empty()).unwrap();
    while rustix::io::write(&reader, &[b'x'; 4096]).is_ok() {}
    let child = spawn("full-json", &["--stats-json", &fifo, "--duration", "20"]);
    thread::sleep(Duration::from_secs(1));
    let signalled = Instant::now();
    interrupt(&child);
    let out = exit_within(child, "full-json", Duration::from_secs(20));
    let waited = signalled.elapsed();
    let stderr = stderr(&out);
    assert!(
        waited < Duration::from_secs(5),
        "exit {waited:?} after SIGINT\n{stderr}"
    );
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("l3fwd-rs summary"),
        "{stderr}"
    );
    let expected = format!("l3fwd-rs: cannot write --stats-json {fifo}: its reader took 0 of ");
    assert!(stderr.contains(&expected), "{stderr}");
    drop(reader);
}
