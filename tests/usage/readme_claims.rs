//! Claims of the README's "Smaller differences" that no other test makes,
//! each checked on the real binary. Covered elsewhere: a signal during
//! set-up (tests/usage/shutdown_paths.rs), a closed stdout (the same file).

use std::process::Stdio;
use std::time::Duration;

use testkit::{l3fwd_rs, run_cli, Run, Scratch, TWO_PORTS};

/// A run on two pcap ports, one frame in on port 0, with `args` after
/// [`TWO_PORTS`]; its stderr, once it exited 0.
fn stderr_of_run(args: &[&str]) -> String {
    let frame = testkit::frames::udp4([198, 18, 0, 1], [198, 18, 1, 1], 64, 18);
    let out = Run::new(l3fwd_rs())
        .port(vec![frame])
        .port(Vec::new())
        .two_ports()
        .args(args)
        .run();
    out.assert_success();
    out.stderr
}

#[test]
fn a_lone_rule_file_is_ignored_with_a_warning() {
    let dir = Scratch::new("lone-rules");
    let v4 = dir.file("v4.rules", "R198.18.0.0/16 1\n");
    let v6 = dir.file("v6.rules", "R2001:db8::/32 1\n");
    for (given, file, missing) in [("--rule_ipv4", &v4, "--rule_ipv6"), ("--rule_ipv6", &v6, "--rule_ipv4")] {
        let stderr = stderr_of_run(&[given, file]);
        let warning = format!("{given} without {missing} is IGNORED");
        assert_eq!(stderr.matches(&warning).count(), 1, "{stderr}");
    }
}

#[test]
fn a_portmask_naming_missing_ports_warns_once() {
    // Two ports exist; -p 0x7 (after TWO_PORTS' -p 0x3) also names port 2.
    let stderr = stderr_of_run(&["-p", "0x7"]);
    let warning = "enables ports [2], which do not exist";
    assert_eq!(stderr.matches(warning).count(), 1, "{stderr}");
}

#[test]
fn a_stray_argument_is_ignored_with_a_warning() {
    let stderr = stderr_of_run(&["stray"]);
    assert!(stderr.contains("ignoring 'stray': not an option"), "{stderr}");
}

#[test]
fn mbcache_junk_is_refused_naming_the_option() {
    let app = [TWO_PORTS, &["--mbcache", "junk"]].concat();
    let out = run_cli(&l3fwd_rs(), &["-l", "0"], &app);
    let line = out.error_line();
    assert!(line.contains("--mbcache") && line.contains("junk"), "{line}");
}

#[test]
fn text_inside_a_config_tuple_is_refused() {
    let out = run_cli(&l3fwd_rs(), &["-l", "0"], &["-p", "0x1", "--config", "(0,0,1x)"]);
    let line = out.error_line();
    assert!(line.contains("--config") && line.contains("(0,0,1x)"), "{line}");
}

/// Every write to stdout fails (ENOSPC): one warning, and the run forwards
/// to its end.
#[test]
fn stdout_to_a_full_disk_warns_once_and_forwarding_goes_on() {
    let dir = Scratch::new("full-stdout");
    let json = dir.path("stats.json").display().to_string();
    let prefix = format!("l3fwd-readme-full-{}", std::process::id());
    let args = ["--stats-interval", "1", "--duration", "3", "--stats-json", &json];
    let out = Run::new(l3fwd_rs())
        .eal_args(&["--vdev=net_null0", "--vdev=net_null1"])
        .two_ports()
        .args(&args)
        .command(&prefix)
        .stdout(std::fs::File::create("/dev/full").unwrap())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn l3fwd-rs")
        .wait_with_output()
        .unwrap();
    testkit::assert_runtime_folder_gone(&prefix, "closed stdout");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{}\n{stderr}", out.status);
    assert_eq!(stderr.matches("cannot write to stdout").count(), 1, "{stderr}");
    let stats: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let forwarded = stats["forwarded"]["tx"].as_u64().unwrap();
    assert!(forwarded > 0, "{stats}");
    assert!(
        stats["seconds"].as_f64().unwrap() > Duration::from_secs(2).as_secs_f64(),
        "{stats}"
    );
}
