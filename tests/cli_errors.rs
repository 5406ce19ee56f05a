//! Bad command lines, port/queue/lcore configs and rule files: exit code 1
//! and a one-line message naming the problem, never a panic.

mod common;

use std::io::Write;

use common::{l3fwd_rs, run_cli, workspace};

/// Runs l3fwd-rs on one lcore and two null ports with `app` arguments and
/// returns its stderr, asserting exit code 1 and no panic.
fn fails(app: &[&str]) -> String {
    fails_on(&["--vdev=net_null0", "--vdev=net_null1"], app)
}

/// As [`fails`], on the ports `vdevs`.
fn fails_on(vdevs: &[&str], app: &[&str]) -> String {
    let out = run_cli(
        &l3fwd_rs(),
        &[&["-l", "0", "--log-level", "error"][..], vdevs].concat(),
        app,
    );
    assert_eq!(out.status.code(), Some(1), "args {app:?}: {}{}", out.stdout, out.stderr);
    assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
    out.stderr
}

fn assert_fails_with(app: &[&str], needle: &str) {
    assert_line_contains(&fails(app), app, needle);
}

fn assert_line_contains(err: &str, app: &[&str], needle: &str) {
    let line = err.lines().find(|l| l.starts_with("l3fwd-rs:")).unwrap_or_default();
    assert!(
        line.contains(needle),
        "args {app:?}: expected '{needle}' in '{line}'\n{err}"
    );
}

#[test]
fn bad_portmask() {
    assert_fails_with(&["-p", "0", "--config", "(0,0,0)"], "portmask '0'");
    assert_fails_with(&["-p", "xyz", "--config", "(0,0,0)"], "portmask 'xyz'");
    assert_fails_with(&["-p", "0x7", "--config", "(0,0,0)"], "port 2");
}

#[test]
fn bad_config_tuples() {
    assert_fails_with(&["-p", "0x3", "--config", "(0,0,0"], "(0,0,0");
    assert_fails_with(&["-p", "0x3", "--config", "(0,x,0)"], "'x'");
    assert_fails_with(&["-p", "0x3", "--config", "(0,0)"], "(0,0)");
    assert_fails_with(&["-p", "0x3", "--config", "(0,0,0,0)"], "(0,0,0,0)");
}

#[test]
fn config_against_the_ports_and_lcores() {
    assert_fails_with(&["-p", "0x1", "--config", "(1,0,0)"], "port 1");
    assert_fails_with(&["-p", "0x3", "--config", "(0,0,3)"], "lcore 3");
    assert_fails_with(&["-p", "0x3", "--config", "(0,1,0)"], "(0,1,0)");
    assert_fails_with(&["-p", "0x3", "--config", "(0,0,0),(0,0,0)"], "twice");
}

#[test]
fn more_queues_than_the_port_has() {
    // A pcap port has one RX queue per rx_pcap file.
    let dir = workspace().join("target/test-runs");
    std::fs::create_dir_all(&dir).unwrap();
    let input = dir.join(format!("one-frame-{}.pcap", std::process::id()));
    trafficgen::write_pcap(&input, &[vec![0u8; 60]]).unwrap();
    let vdev = format!("--vdev=net_pcap0,rx_pcap={}", input.display());
    let app = ["-p", "0x1", "--config", "(0,0,0),(0,1,0)"];
    assert_line_contains(&fails_on(&[&vdev], &app), &app, "2 RX queues");
    std::fs::remove_file(input).unwrap();
}

#[test]
fn bad_rule_files_name_file_and_line() {
    let dir = workspace().join("target/test-runs");
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join(format!("bad-rules-{}.cfg", std::process::id()));
    let mut f = std::fs::File::create(&bad).unwrap();
    writeln!(f, "# comment\nR10.0.0.0/8 1\nR10.1.0.0/33 1").unwrap();
    let path = bad.to_str().unwrap();
    assert_fails_with(
        &["-p", "0x3", "--config", "(0,0,0)", &format!("--rule_ipv4={path}")],
        &format!("{path}:3"),
    );
    assert_fails_with(
        &["-p", "0x3", "--config", "(0,0,0)", "-E", &format!("--rule_ipv4={path}")],
        &format!("{path}:2"),
    );
    assert_fails_with(
        &["-p", "0x3", "--config", "(0,0,0)", "--rule_ipv6=/nonexistent.cfg"],
        "/nonexistent.cfg",
    );
    std::fs::remove_file(bad).unwrap();
}

#[test]
fn unknown_and_unsupported_options() {
    assert_fails_with(&["-p", "0x3", "--bogus"], "--bogus");
    assert_fails_with(&["-p", "0x3", "--lookup=fib"], "FIB");
    assert_fails_with(&["-p", "0x3", "-E", "-L"], "one lookup mode");
}

#[test]
fn help_exits_zero_and_lists_options() {
    let out = run_cli(&l3fwd_rs(), &["-l", "0"], &["--help"]);
    assert_eq!(out.status.code(), Some(0));
    for opt in [
        "--config",
        "--rule_ipv4",
        "--eth-dest",
        "--sequential-lookup",
        "--parse-ptype",
    ] {
        assert!(out.stdout.contains(opt), "--help lacks {opt}");
    }
}
