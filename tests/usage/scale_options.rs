//! The options large tables and traffic need, through the real binary:
//! LPM tables sized from the rule files unless `--lpm-max-rules` /
//! `--lpm-tbl8s` say otherwise (a route that does not fit is an error naming
//! its file and line), and `--num-mbufs` for ports replaying large files.

use testkit::{l3fwd_rs, run_cli, Outcome, Scratch, TWO_PORTS};
use trafficgen::{generate, write_pcap, GenOpts, Mix};

/// 5 rules; the /25s and longer need 3 tbl8 groups (two share a /24).
const V4: &str = "# small table\n\
                  R10.0.0.0/8 0\n\
                  R10.1.1.0/25 1\n\
                  R10.1.1.128/25 0\n\
                  R10.1.2.0/26 1\n\
                  R10.1.3.1/32 0\n";
/// 2 rules needing 3 rte_lpm6 tbl8 groups: below 2001:d/24, 2001:db8::/32
/// and 2001:db8::/40.
const V6: &str = "R2001:db8::/32 0\nR2001:db8:1::/48 1\n";

/// l3fwd-rs on two null ports for a second, with `app` arguments.
fn lpm_run(app: &[&str]) -> Outcome {
    run_cli(
        &l3fwd_rs(),
        &["-l", "0", "--vdev=net_null0", "--vdev=net_null1"],
        &[TWO_PORTS, &["--duration", "1"], app].concat(),
    )
}

#[test]
fn lpm_tables_are_sized_from_the_rule_files() {
    let dir = Scratch::new("lpm-sizing");
    let (v4, v6) = (dir.file("v4.cfg", V4), dir.file("v6.cfg", V6));
    let out = lpm_run(&[&format!("--rule_ipv4={v4}"), &format!("--rule_ipv6={v6}")]);
    assert!(out.status.success(), "{}", out.stderr);
    assert!(out
        .stderr
        .contains("IPv4: 5 routes in a table of 5 rules and 3 tbl8 groups"));
    assert!(out
        .stderr
        .contains("IPv6: 2 routes in a table of 2 rules and 3 tbl8 groups"));
}

#[test]
fn lpm_tables_too_small_fail_naming_file_and_line() {
    let dir = Scratch::new("lpm-too-small");
    let (v4, v6) = (dir.file("v4.cfg", V4), dir.file("v6.cfg", V6));
    let rules = [format!("--rule_ipv4={v4}"), format!("--rule_ipv6={v6}")];
    let cases = [
        (
            "--lpm-max-rules=4",
            format!("{v4}:6: IPv4 LPM table full: more than 4 rules (raise --lpm-max-rules)"),
        ),
        (
            "--lpm-tbl8s=2",
            format!("{v4}:6: IPv4 LPM table full: more than 2 tbl8 groups (raise --lpm-tbl8s)"),
        ),
        (
            "--lpm-max-rules=1",
            format!("{v4}:3: IPv4 LPM table full: more than 1 rules (raise --lpm-max-rules)"),
        ),
    ];
    for (limit, expected) in cases {
        let out = lpm_run(&[&rules[0], &rules[1], limit]);
        assert_eq!(out.error_line(), format!("l3fwd-rs: {expected}"), "{limit}");
    }
    // The default IPv4 routes (all /24) need no tbl8 group; these IPv6 ones 3.
    // (Rule files are read only as a pair, as in C.)
    let out = lpm_run(&["--rule_ipv4=configs/lpm_v4.cfg", &rules[1], "--lpm-tbl8s=2"]);
    let expected = format!("l3fwd-rs: {v6}:2: IPv6 LPM table full: more than 2 tbl8 groups (raise --lpm-tbl8s)");
    assert_eq!(out.error_line(), expected);
}

/// A pcap port replaying its file holds one mbuf per frame: two ports of
/// 6000 frames need more than the default pool of 8192.
#[test]
fn num_mbufs_lets_ports_replay_large_files() {
    let dir = Scratch::new("num-mbufs");
    let mix = Mix {
        invalid_v4: 0,
        non_ip: 0,
        ..Mix::default()
    };
    let vdev = |port: usize| {
        let path = dir.path(&format!("in{port}.pcap"));
        write_pcap(&path, &generate(port as u64, 6000, &mix, &GenOpts::default())).unwrap();
        format!("--vdev=net_pcap{port},rx_pcap={},infinite_rx=1", path.display())
    };
    let eal = ["-l".to_string(), "0".to_string(), vdev(0), vdev(1)];
    let eal: Vec<&str> = eal.iter().map(String::as_str).collect();
    let app = [TWO_PORTS, &["--duration", "1"]].concat();

    let out = run_cli(&l3fwd_rs(), &eal, &app);
    assert!(out.error_line().contains("cannot set up RX queue"), "{}", out.stderr);

    let out = run_cli(&l3fwd_rs(), &eal, &[&app[..], &["--num-mbufs", "16384"]].concat());
    assert!(out.status.success(), "{}", out.stderr);
    assert!(out.stderr.contains(": 16384 mbufs"), "{}", out.stderr);
    let forwarded = out.stdout.lines().find_map(|l| l.strip_prefix("forwarded: rx "));
    let forwarded: u64 = forwarded.and_then(|l| l.split(' ').next()?.parse().ok()).unwrap();
    assert!(forwarded > 12_000, "replayed: forwarded {forwarded}");
}
