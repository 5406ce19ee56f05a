//! Stops that do not come at the usual time: a signal during set-up, and a
//! reader of stdout that goes away. Both must end like any other stop:
//! exit 0, the summary, EAL cleaned up, `--stats-json` written.

use std::io::{BufRead, BufReader, ErrorKind};
use std::process::{ExitStatus, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use testkit::{l3fwd_rs, Process, Run, Scratch, Telemetry};

/// l3fwd-rs on two net_null ports (endless traffic) with `app_args`, its
/// stdout `stdout` and its stderr piped; its file prefix is unique.
fn spawn(name: &str, app_args: &[&str], stdout: Stdio) -> Process {
    let prefix = testkit::unique_prefix(&format!("shutdown-{name}"));
    let mut command = Run::new(l3fwd_rs())
        .eal_args(&["--vdev=net_null0", "--vdev=net_null1"])
        .two_ports()
        .args(app_args)
        .command(&prefix);
    command.stdin(Stdio::null()).stdout(stdout).stderr(Stdio::piped());
    Process::spawn_with_own_stdio(command, &prefix).expect("spawn l3fwd-rs")
}

/// Its exit status within `timeout` (else a panic; the process is killed
/// when dropped).
fn wait(child: &mut Process, timeout: Duration) -> ExitStatus {
    child
        .wait_timeout(timeout)
        .unwrap_or_else(|| panic!("l3fwd-rs still running after {timeout:?}"))
}

fn stderr_of(child: &mut Process) -> String {
    let mut text = String::new();
    std::io::Read::read_to_string(child.child().stderr.as_mut().unwrap(), &mut text).unwrap();
    text
}

/// Sends SIG`signal` (`INT`, `HUP`, ...) to `child`.
fn send_signal(child: &Process, signal: &str) {
    child
        .signal(signal)
        .unwrap_or_else(|err| panic!("kill -{signal}: {err}"));
}

/// EAL was cleaned up (l3fwd-rs's debug line, which the test kit asks
/// for) and the run took its runtime folder with it.
fn assert_eal_cleaned_up(prefix: &str, stderr: &str) {
    assert!(
        stderr.contains("EAL cleaned up"),
        "{prefix}: no rte_eal_cleanup\n{stderr}"
    );
    testkit::assert_runtime_folder_gone(prefix, prefix);
}

#[test]
fn closed_stdout_does_not_crash_and_the_run_ends_cleanly() {
    let dir = Scratch::new("closed-stdout");
    let json = dir.path("stats.json");
    let json_arg = json.display().to_string();
    let args = ["--stats-interval", "1", "--duration", "3", "--stats-json", &json_arg];
    let mut child = spawn("stdout", &args, Stdio::piped());
    // As `| head -1`: read one line, then close the pipe.
    let mut reader = BufReader::new(child.child().stdout.take().unwrap());
    let mut first = String::new();
    reader.read_line(&mut first).unwrap();
    drop(reader);
    let status = wait(&mut child, Duration::from_secs(30));
    let stderr = stderr_of(&mut child);
    assert!(status.success(), "{status}\n{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(stderr.contains("cannot write to stdout"), "{stderr}");
    let stats: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert!(stats["forwarded"]["tx"].as_u64().unwrap() > 0, "{stats}");
    assert_eal_cleaned_up(child.prefix(), &stderr);
}

#[test]
fn signal_during_set_up_exits_0_with_the_summary_before_forwarding() {
    let dir = Scratch::new("early-signals");
    for signal in ["INT", "TERM", "HUP"] {
        let json = dir.path(&format!("{signal}.json"));
        let json_arg = json.display().to_string();
        let args = ["--duration", "20", "--stats-json", &json_arg];
        let mut child = spawn(&format!("early-{signal}"), &args, Stdio::piped());
        // Well before EAL and the ports are up (that takes hundreds of ms).
        thread::sleep(Duration::from_millis(30));
        send_signal(&child, signal);
        let status = wait(&mut child, Duration::from_secs(15));
        let stderr = stderr_of(&mut child);
        let mut stdout = String::new();
        std::io::Read::read_to_string(child.child().stdout.as_mut().unwrap(), &mut stdout).unwrap();
        assert!(status.success(), "SIG{signal}: {status}\n{stderr}");
        assert!(stdout.contains("l3fwd-rs summary"), "SIG{signal}: {stdout}\n{stderr}");
        // No forwarding time, no rate (what an eventdev RX adapter took
        // over ~0 s read as hundreds of Mpps).
        assert!(stdout.contains("(n/a / n/a Mpps)"), "SIG{signal}: {stdout}");
        assert_nothing_forwarded(&json, signal);
        assert_eal_cleaned_up(child.prefix(), &stderr);
    }
}

/// net_null ports deliver a burst to every poll: a single poll round
/// would show in the counts.
fn assert_nothing_forwarded(json: &std::path::Path, signal: &str) {
    let stats: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap();
    let counts = stats["ports"].as_array().unwrap().iter().flat_map(|port| {
        let queues = port["rx_queue_packets"].as_array().unwrap();
        [&port["rx_packets"], &port["tx_packets"]].into_iter().chain(queues)
    });
    for port in stats["ports"].as_array().unwrap() {
        assert!(
            port["rx_mpps"].is_null() && port["tx_mpps"].is_null(),
            "SIG{signal}: {stats}"
        );
    }
    let lcores = stats["forwarded"].as_object().unwrap().values();
    for count in counts.chain(lcores) {
        assert_eq!(count.as_u64(), Some(0), "SIG{signal}: {stats}");
    }
}

#[test]
fn every_signal_that_would_kill_it_stops_it_cleanly_while_forwarding() {
    let dir = Scratch::new("stop-signals");
    // SIGHUP reloads while forwarding (tests/live_tables.rs).
    for signal in ["USR1", "USR2", "ALRM", "VTALRM", "PROF", "IO", "XCPU", "XFSZ"] {
        let json = dir.path(&format!("{signal}.json"));
        let json_arg = json.display().to_string();
        let args = ["--stats-interval", "1", "--duration", "20", "--stats-json", &json_arg];
        let mut child = spawn(&format!("sig-{signal}"), &args, Stdio::piped());
        // The first rate line: it forwards.
        let mut stdout = BufReader::new(child.child().stdout.take().unwrap());
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        assert!(line.contains("Mpps"), "SIG{signal}: {line}");
        send_signal(&child, signal);
        let status = wait(&mut child, Duration::from_secs(15));
        let mut rest = String::new();
        std::io::Read::read_to_string(&mut stdout, &mut rest).unwrap();
        let stderr = stderr_of(&mut child);
        assert!(status.success(), "SIG{signal}: {status}\n{stderr}");
        assert!(rest.contains("l3fwd-rs summary"), "SIG{signal}: {rest}\n{stderr}");
        let stats: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        assert!(stats["forwarded"]["tx"].as_u64().unwrap() > 0, "SIG{signal}: {stats}");
        assert_eal_cleaned_up(child.prefix(), &stderr);
    }
}

/// A telemetry client asking `/ethdev/stats` in a loop while l3fwd-rs
/// stops (a monitor, or l3fwd-bench watching a run): the client's thread in
/// the forwarder outlives `rte_eal_cleanup`, and from DPDK 24.11 its next
/// command read unmapped memory (SIGSEGV at exit, 2 runs in 3 on 25.11).
/// The forwarder hangs up on telemetry clients before its cleanup.
#[test]
fn a_telemetry_client_polling_through_the_stop_does_not_crash_it() {
    for round in 0..3 {
        let mut child = spawn(&format!("telemetry-{round}"), &["--duration", "1"], Stdio::null());
        let socket = Telemetry::socket_path(child.prefix());
        let deadline = Instant::now() + Duration::from_secs(10);
        let telemetry = loop {
            match Telemetry::connect(&socket) {
                Ok(telemetry) => break Some(telemetry),
                // It hung up before its greeting: it is stopping already.
                Err(err) if matches!(err.kind(), ErrorKind::UnexpectedEof | ErrorKind::ConnectionReset) => break None,
                Err(_) => {}
            }
            assert!(Instant::now() < deadline, "no telemetry socket at {}", socket.display());
            thread::sleep(Duration::from_millis(10));
        };
        // Ask until the forwarder hangs up (a reply of 0 bytes) or is gone.
        if let Some(telemetry) = telemetry {
            while telemetry.query("/ethdev/stats,0").is_ok() {}
        }
        let status = wait(&mut child, Duration::from_secs(15));
        let stderr = stderr_of(&mut child);
        assert!(status.success(), "round {round}: {status}\n{stderr}");
        assert_eal_cleaned_up(child.prefix(), &stderr);
    }
}
