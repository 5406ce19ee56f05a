//! Bad command lines, port/queue/lcore configs and rule files: exit code 1
//! and a one-line message naming the problem, never a panic.

use testkit::{l3fwd_rs, run_cli, Scratch};

/// Runs l3fwd-rs on one lcore and the ports `vdevs` with `app` arguments,
/// asserting a clean failure whose one error line contains `needle`.
fn assert_fails_on(vdevs: &[&str], app: &[&str], needle: &str) {
    let out = run_cli(
        &l3fwd_rs(),
        &[&["-l", "0", "--log-level", "error"][..], vdevs].concat(),
        app,
    );
    let line = out.error_line();
    assert!(line.contains(needle), "args {app:?}: expected '{needle}' in '{line}'");
}

/// As [`assert_fails_on`], on two null ports.
fn assert_fails_with(app: &[&str], needle: &str) {
    assert_fails_on(&["--vdev=net_null0", "--vdev=net_null1"], app, needle);
}

#[test]
fn bad_portmask() {
    assert_fails_with(&["-p", "0", "--config", "(0,0,0)"], "portmask '0'");
    assert_fails_with(&["-p", "xyz", "--config", "(0,0,0)"], "portmask 'xyz'");
    assert_fails_with(&["-p", "-0", "--config", "(0,0,0)"], "portmask '-0'");
    // -p's value, as getopt takes it: not an abbreviated option.
    assert_fails_with(&["-p", "--rule_", "--config", "(0,0,0)"], "portmask '--rule_'");
    // Control characters are escaped: the message stays one line, whole.
    assert_fails_with(
        &["-p", "3\n\nx\u{8}", "--config", "(0,0,0)"],
        "for '-p <PORTMASK>': invalid portmask '3\\n\\nx\\u{8}'",
    );
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
    let dir = Scratch::new("one-frame");
    let vdev = testkit::one_frame_pcap_vdev(&dir);
    assert_fails_on(&[&vdev], &["-p", "0x1", "--config", "(0,0,0),(0,1,0)"], "2 RX queues");
}

#[test]
fn eth_link_speed_takes_the_speeds_ethdev_knows() {
    let app = |speed: &'static str| ["-p", "0x3", "--config", "(0,0,0)", "--eth-link-speed", speed];
    assert_fails_with(&app("100"), "unsupported fixed speed");
    assert_fails_with(&app("12345"), "12345 Mbit/s is no link speed");
    assert_fails_with(&app("fast"), "invalid link speed 'fast'");
    // Virtual ports take a fixed speed (and ignore it): the run starts.
    let vdevs = ["-l", "0", "--vdev=net_null0", "--vdev=net_null1"];
    let out = run_cli(
        &l3fwd_rs(),
        &vdevs,
        &[&app(" 25000")[..], &["--duration", "1"]].concat(),
    );
    out.assert_success();
    for port in 0..2 {
        let line = format!("port {port}: link speed fixed at 25000 Mbit/s, autonegotiation off");
        assert!(out.stderr.contains(&line), "{}", out.stderr);
    }
}

#[test]
fn jumbo_frames_on_a_port_without_multi_segment_tx() {
    // af_xdp has no multi-segment TX on any release tested (net_pcap
    // gained it in 24.11's stable updates, net_null in 25.11), and only
    // the probe of its port runs: l3fwd-rs refuses before any queue exists.
    let vdev = "--vdev=net_af_xdp0,iface=lo";
    // Frames of 3000 bytes: an MTU above 1500 that af_xdp receives.
    let app = ["-p", "0x1", "--config", "(0,0,0)", "--max-pkt-len", "3000"];
    let expected = "--max-pkt-len 3000: port 0 (net_af_xdp0) has no multi-segment TX, which an MTU above 1500 needs";
    assert_fails_on(&[vdev], &app, expected);
    assert_fails_on(&[vdev], &app, "--max-pkt-len 1518 or less works on it");
}

#[test]
fn bad_rule_files_name_file_and_line() {
    let dir = Scratch::new("bad-rules");
    let path = dir.file("bad.cfg", "# comment\nR10.0.0.0/8 1\nR10.1.0.0/33 1\n");
    let path = path.as_str();
    // Rule files are read only when both are given, as in C.
    let v4 = format!("--rule_ipv4={path}");
    let lpm_v6 = "--rule_ipv6=configs/lpm_v6.cfg";
    assert_fails_with(&["-p", "0x3", "--config", "(0,0,0)", &v4, lpm_v6], &format!("{path}:3"));
    let em_v6 = "--rule_ipv6=configs/em_v6.cfg";
    assert_fails_with(
        &["-p", "0x3", "--config", "(0,0,0)", "-E", &v4, em_v6],
        &format!("{path}:2"),
    );
    assert_fails_with(
        &[
            "-p",
            "0x3",
            "--config",
            "(0,0,0)",
            "--rule_ipv4=configs/lpm_v4.cfg",
            "--rule_ipv6=/nonexistent.cfg",
        ],
        "/nonexistent.cfg",
    );
}

const ACL_V4: &str = "--rule_ipv4=configs/acl_v4.cfg";
const ACL_V6: &str = "--rule_ipv6=configs/acl_v6.cfg";

#[test]
fn bad_acl_rules_name_file_line_and_field() {
    let dir = Scratch::new("bad-acl-rules");
    let good = "R0.0.0.0/0 198.18.0.0/16 0 : 65535 0 : 65535 0/0 0";
    let cases = [
        (
            "R1.2.3.256/32 0.0.0.0/0 0 : 65535 0 : 65535 0/0 0",
            "source address '1.2.3.256/32'",
        ),
        (
            "R0.0.0.0/0 1.2.3.0/40 0 : 65535 0 : 65535 0/0 0",
            "destination address '1.2.3.0/40'",
        ),
        (
            "@0.0.0.0/0 0.0.0.0/0 10 : 9 0 : 65535 0/0",
            "source port range 10 : 9 is empty",
        ),
        (
            "@0.0.0.0/0 0.0.0.0/0 0 : 65535 0 : 65535 6",
            "protocol '<value>/<mask>': '6'",
        ),
        (
            "@0.0.0.0/0 0.0.0.0/0 0 : 65535 0 : 65535 6/0x100",
            "protocol mask 256 out of range",
        ),
        ("@0.0.0.0/0 0.0.0.0/0 0 : 65535 0 65535 6/0xff", "expected 9 fields"),
        (
            "R0.0.0.0/0 0.0.0.0/0 0 : 65535 0 : 65535 0/0 2",
            "route to port 2, which the port mask (-p) does not enable",
        ),
    ];
    for (i, (line, needle)) in cases.into_iter().enumerate() {
        let path = dir.file(&format!("bad{i}.rules"), &format!("# acl\n{good}\n{line}\n"));
        let v4 = format!("--rule_ipv4={path}");
        let app = ["-p", "0x3", "--config", "(0,0,0)", "--lookup=acl", &v4, ACL_V6];
        assert_fails_with(&app, &format!("{path}:3: "));
        assert_fails_with(&app, needle);
    }
    let v6 = dir.file(
        "bad6.rules",
        "R2001:db8::/32 0:0:0:0:0:0:0:0/0 0 : 65535 0 : 65535 0/0 0\n",
    );
    let v6 = format!("--rule_ipv6={v6}");
    let app = ["-p", "0x3", "--config", "(0,0,0)", "--lookup=acl", ACL_V4, &v6];
    assert_fails_with(&app, "bad6.rules:1: 'R2001:db8::/32");
    let deny_only = dir.file("deny.rules", "@0.0.0.0/0 0.0.0.0/0 0 : 65535 0 : 65535 0/0\n");
    let v4 = format!("--rule_ipv4={deny_only}");
    let app = ["-p", "0x3", "--config", "(0,0,0)", "--lookup=acl", &v4, ACL_V6];
    assert_fails_with(&app, "deny.rules: no routes");
}

#[test]
fn acl_needs_both_rule_files_and_a_method_the_cpu_has() {
    let acl = ["-p", "0x3", "--config", "(0,0,0)", "--lookup=acl"];
    assert_fails_with(&acl, "ACL mode needs --rule_ipv4 and --rule_ipv6");
    assert_fails_with(&[&acl[..], &[ACL_V4]].concat(), "--rule_ipv6 missing");
    assert_fails_with(&[&acl[..], &[ACL_V6]].concat(), "--rule_ipv4 missing");
    // NEON is ARM's: never on the x86 CI runs on.
    let neon = [&acl[..], &[ACL_V4, ACL_V6, "--alg=neon"]].concat();
    assert_fails_with(&neon, "ACL classify method neon: not supported by this CPU");
    assert_fails_with(
        &[&acl[..], &["--alg=turbo"]].concat(),
        "invalid ACL classify method 'turbo'",
    );
}

#[test]
fn unknown_and_unsupported_options() {
    assert_fails_with(&["-p", "0x3", "--bogus"], "--bogus");
    assert_fails_with(&["-p", "0x3", "-E", "-L"], "one lookup mode");
}

#[test]
fn help_exits_zero_and_lists_options() {
    let out = run_cli(&l3fwd_rs(), &["-l", "0"], &["--help"]);
    assert_eq!(out.status.code(), Some(0));
    // Every option clap knows and does not hide, as the binary prints it.
    let command = l3fwd_rs::cli::command();
    let options: Vec<String> = command
        .get_arguments()
        .filter(|a| !a.is_hide_set())
        .filter_map(|a| a.get_long().map(|l| format!("--{l} ")))
        .collect();
    assert!(options.len() > 25, "{options:?}");
    for opt in &options {
        assert!(out.stdout.contains(opt.as_str()), "--help lacks {opt}");
    }
}

/// l3fwd-rs run with exactly `args` (no harness EAL arguments, no `--`).
fn run_bare(args: &[&str]) -> std::process::Output {
    std::process::Command::new(l3fwd_rs()).args(args).output().unwrap()
}

#[test]
fn help_and_version_without_the_separator_exit_zero() {
    for args in [&["--help"][..], &["-h"], &["-l", "0", "--no-huge", "--help"]] {
        let out = run_bare(args);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {stdout}");
        for needle in [
            "Usage: l3fwd-rs [EAL options] -- -p PORTMASK",
            "--config <CONFIG>",
            "dpdk-testpmd --help",
        ] {
            assert!(stdout.contains(needle), "{args:?}: no '{needle}' in\n{stdout}");
        }
    }
    // The DPDK version is the installed library's, as pkg-config knows it.
    let dpdk = std::process::Command::new("pkg-config")
        .args(["--modversion", "libdpdk"])
        .output()
        .unwrap();
    let dpdk = String::from_utf8_lossy(&dpdk.stdout);
    let expected = format!("l3fwd-rs {} on DPDK {}\n", env!("CARGO_PKG_VERSION"), dpdk.trim());
    for args in [&["--version"][..], &["--", "--version"]] {
        let out = run_bare(args);
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        assert_eq!(String::from_utf8_lossy(&out.stdout), expected, "{args:?}");
    }
}

#[test]
fn a_bare_l3fwd_rs_shows_the_usage_and_an_example_that_runs() {
    let out = run_bare(&[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.starts_with("Usage: l3fwd-rs [EAL options] --"), "{stderr}");
    let example = stderr
        .lines()
        .find_map(|l| l.trim().strip_prefix("l3fwd-rs "))
        .unwrap_or_else(|| panic!("no example in\n{stderr}"));
    // As printed, with this test's own EAL file prefix.
    let prefix = format!("cli-example-{}", std::process::id());
    let line = format!("\"$0\" --file-prefix {prefix} {example}");
    let run = std::process::Command::new("sh")
        .args(["-c", &line])
        .arg(l3fwd_rs())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    testkit::assert_runtime_folder_gone(&prefix, example);
    assert!(
        run.status.success(),
        "{example}\n{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(
        stdout.contains("Mpps") && stdout.contains("l3fwd-rs summary"),
        "{stdout}"
    );
}

#[test]
fn an_argument_that_is_not_utf8_is_one_error_line() {
    use std::os::unix::ffi::OsStrExt;
    let bad = std::ffi::OsStr::from_bytes(b"0x\xff");
    let out = std::process::Command::new(l3fwd_rs())
        .args(["--no-huge", "--", "-p"])
        .arg(bad)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(
        stderr,
        "l3fwd-rs: argument 4 ('0x\u{fffd}') is not UTF-8 text, which l3fwd-rs takes only\n"
    );
}

#[test]
fn forgotten_separator_names_the_real_problem() {
    let out = std::process::Command::new(l3fwd_rs())
        .args(["-l", "0", "--no-huge", "-p", "0x3", "--config", "(0,0,0)"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("-p is an l3fwd option, but no '--' separates"),
        "{stderr}"
    );
}

#[test]
fn an_unwritable_stderr_still_exits_1() {
    // A bad option's error line goes to a full device: no abort (134).
    for app in [&["-p", "0x3", "--bogus"][..], &["-p", "0"]] {
        let status = std::process::Command::new(l3fwd_rs())
            .args(["-l", "0", "--no-huge", "--no-pci", "--"])
            .args(app)
            .stdout(std::process::Stdio::null())
            .stderr(std::fs::File::create("/dev/full").unwrap())
            .status()
            .unwrap();
        assert_eq!(status.code(), Some(1), "{app:?}: {status}");
    }
}
