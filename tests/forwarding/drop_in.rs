//! "The argument list you give dpdk-l3fwd runs l3fwd-rs unchanged": a table
//! of command lines from C l3fwd's users, each run through DPDK's C l3fwd
//! and l3fwd-rs on the same traffic. Each row asserts one outcome: both run
//! and every port's output is identical, both refuse, or a difference
//! README's "Smaller differences" documents.

use testkit::frames::{em_flow4, udp4};
use testkit::{c_l3fwd, c_l3fwd_options, l3fwd_rs, run_cli, Run, Scratch, TWO_PORTS};
use trafficgen::{generate, GenOpts, Mix};

/// What a row expects of the two programs.
#[derive(Debug, Clone, Copy)]
enum Expect {
    /// Both run; every port's output is the same.
    Identical,
    /// Both exit with an error.
    BothRefuse,
    /// C runs, l3fwd-rs refuses with one line containing the text (see
    /// README, "Smaller differences").
    RsRefuses(&'static str),
    /// l3fwd-rs runs, C exits with an error (see README, "Smaller
    /// differences").
    CRefuses,
}

struct Row {
    name: &'static str,
    args: Vec<String>,
    expect: Expect,
}

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|&a| a.to_owned()).collect()
}

/// [`TWO_PORTS`], `--parse-ptype` (C's virtual ports give no packet types)
/// and `extra`.
fn with_ports(extra: &[&str]) -> Vec<String> {
    strings(&[TWO_PORTS, &["--parse-ptype"], extra].concat())
}

/// Rule files to write for the rows, and the rows using them.
fn rows(dir: &Scratch) -> Vec<Row> {
    // Routes to ports 0 and 1 only: runs with ports that do not exist
    // enabled send nothing to them (C would crash on those).
    let v4 = dir.file(
        "v4.cfg",
        "# two ports\nR198.18.0.0/24 0\nR198.18.1.0/24 1 # fields after the port\nR198.18.2.0/23 1\n",
    );
    let v6 = dir.file("v6.cfg", "R2001:200::/48 0\nR2001:200:0:1::/64 1\n");
    // A comment that is not UTF-8 and a NUL ending a line.
    let odd = dir.path("odd.cfg");
    std::fs::write(&odd, b"# caf\xe9\nR198.18.0.0/24 1\0 ignored\nR198.18.1.0/24 0\n").unwrap();
    let odd = odd.display().to_string();
    let bom = dir.path("bom.cfg");
    std::fs::write(&bom, b"\xEF\xBB\xBFR198.18.0.0/24 1\n").unwrap();
    let bom = bom.display().to_string();
    let em_v4 = dir.file(
        "em_v4.cfg",
        "R198.18.0.1 198.18.1.1 9 9 0x11 1\nR198.18.0.2 198.18.1.1 9 9 0x11 34\n",
    );
    let em_33 = dir.file(
        "em_33.cfg",
        "R198.18.0.1 198.18.1.1 9 9 0x11 1\nR198.18.0.2 198.18.1.1 9 9 0x11 33\n",
    );
    let em_v6 = "--rule_ipv6=configs/em_v6.cfg";
    let rule = |option: &str, path: &str| format!("--rule_ipv{option}={path}");
    let any = "0.0.0.0/0 0 : 65535 0 : 65535 0x00/0x00";
    let acl_port_2 = dir.file(
        "acl_port_2.cfg",
        &format!("R0.0.0.0/0 198.18.0.0/24 0 : 65535 0 : 65535 0/0 0\nR{any} 2\n"),
    );
    let acl_deny_only = dir.file("acl_deny.cfg", &format!("@{any}\n"));
    let acl_short_v6 = dir.file(
        "acl_short_v6.cfg",
        "R2001:db8::/32 0:0:0:0:0:0:0:0/0 0 : 65535 0 : 65535 0/0 0\n",
    );
    let default_v4 = rule("4", &dir.file("default_v4.cfg", "R0.0.0.0/0 1\n"));
    let default_v6 = rule("6", &dir.file("default_v6.cfg", "R::/0 1\n"));
    let acl = |v4: &str, v6: &str| vec!["--lookup=acl".to_owned(), rule("4", v4), rule("6", v6)];
    let (acl_v4, acl_v6) = ("configs/acl_v4.cfg", "configs/acl_v6.cfg");
    let (r4, r6) = (rule("4", &v4), rule("6", &v6));
    let all_ports = |mask: &'static str| vec!["-p", mask, "--config", "(0,0,0),(1,0,0)", "--parse-ptype"];
    use Expect::*;
    let row = |name, args: Vec<String>, expect| Row { name, args, expect };
    // C l3fwd from 24.11 on exits at start when a route goes to an
    // enabled port that does not exist (it asks rte_eth_dev_info_get for
    // the port's name to log); before, it loaded the route. l3fwd-rs loads
    // it on every release (README, "Smaller differences").
    let routes_to_missing_ports = if dpdk::RELEASE >= 2411 { CRefuses } else { Identical };
    vec![
        row("no rule options: the built-in tables", with_ports(&[]), Identical),
        row("both rule files", with_ports(&[&r4, &r6]), Identical),
        row("--rule_ipv4 alone is ignored", with_ports(&[&r4]), Identical),
        row("--rule_ipv6 alone is ignored", with_ports(&[&r6]), Identical),
        row(
            "portmask naming ports that do not exist",
            strings(&[&all_ports("0xff")[..], &[&r4, &r6]].concat()),
            Identical,
        ),
        row(
            "portmask naming ports that do not exist, routes to them: dropped",
            strings(&all_ports("0xf")),
            routes_to_missing_ports,
        ),
        row(
            "exact match, routes to ports that do not exist: dropped",
            strings(&[&all_ports("0xf")[..], &["-E"]].concat()),
            CRefuses,
        ),
        row(
            "numbers with leading spaces, as strtoul reads them",
            strings(&[
                "-p",
                " 3",
                "--config",
                "(0,0,0),(1,0,0)",
                "--parse-ptype",
                "--max-pkt-len",
                " 1500",
            ]),
            Identical,
        ),
        row(
            "--hash-entry-num 0: ignored, as in C 22.11 (later C has no such option)",
            with_ports(&["-E", "--hash-entry-num", "0"]),
            Identical,
        ),
        row(
            "FIB mode, default routes (rte_fib takes depth 0)",
            with_ports(&["--lookup=fib", &default_v4, &default_v6]),
            Identical,
        ),
        row(
            "LPM mode, default routes (rte_lpm refuses depth 0)",
            with_ports(&[&default_v4, &default_v6]),
            BothRefuse,
        ),
        row("-E -E: one mode, twice", with_ports(&["-E", "-E"]), BothRefuse),
        row("-L -L: one mode, twice", with_ports(&["-L", "-L"]), BothRefuse),
        row(
            "portmask wider than 32 bits",
            strings(&["-p", "1ffffffff", "--config", "(0,0,0),(1,0,0)", "--parse-ptype"]),
            // C keeps the low 32 bits: every port, and from 24.11 it exits
            // on the built-in routes to the ports that do not exist.
            if dpdk::RELEASE >= 2411 {
                BothRefuse
            } else {
                RsRefuses("invalid portmask '1ffffffff'")
            },
        ),
        row(
            "-p -1: every port",
            strings(&[&all_ports("-1")[..], &[&r4, &r6]].concat()),
            Identical,
        ),
        row(
            "rule file with a non-UTF-8 comment and a NUL",
            with_ports(&[&rule("4", &odd), &r6]),
            Identical,
        ),
        row(
            "getopt abbreviations",
            strings(&[
                "-p",
                "3",
                "--conf",
                "(0,0,0),(1,0,0)",
                "--par",
                "--rule_ipv4",
                &v4,
                "--rule_ipv6",
                &v6,
            ]),
            Identical,
        ),
        row(
            "--mode with a value other than eventdev",
            with_ports(&["--mode=fast"]),
            Identical,
        ),
        row("a stray argument", with_ports(&["stray"]), Identical),
        row(
            "--config without a comma between tuples, and a trailing comma",
            strings(&["-p", "0x3", "--config", "(0,0,0)(1,0,0),", "--parse-ptype"]),
            Identical,
        ),
        row(
            "EM rule to port 34: bit 2 is not enabled, skipped",
            with_ports(&["-E", &rule("4", &em_v4), em_v6]),
            Identical,
        ),
        row(
            "later l3fwd's --mbcache, --disable-rss, --relax-rx-offload",
            with_ports(&["--mbcache", "128", "--disable-rss", "--relax-rx-offload"]),
            Identical,
        ),
        row(
            "rule file starting with a BOM",
            with_ports(&[&rule("4", &bom), &r6]),
            BothRefuse,
        ),
        row(
            "EM rule to port 33 while bit 1 is enabled",
            with_ports(&["-E", &rule("4", &em_33), em_v6]),
            BothRefuse,
        ),
        row("ambiguous abbreviation", with_ports(&["--p"]), BothRefuse),
        row("ACL mode", [with_ports(&[]), acl(acl_v4, acl_v6)].concat(), Identical),
        row(
            "ACL mode, an abbreviated --alg",
            [with_ports(&["--al=scalar"]), acl(acl_v4, acl_v6)].concat(),
            Identical,
        ),
        row(
            "ACL mode without --rule_ipv6",
            with_ports(&["--lookup=acl", &rule("4", acl_v4)]),
            BothRefuse,
        ),
        row(
            "ACL route to a port -p does not enable",
            [with_ports(&[]), acl(&acl_port_2, acl_v6)].concat(),
            BothRefuse,
        ),
        row(
            "ACL file of deny rules only",
            [with_ports(&[]), acl(&acl_deny_only, acl_v6)].concat(),
            BothRefuse,
        ),
        row(
            "ACL IPv6 address with '::'",
            [with_ports(&[]), acl(acl_v4, &acl_short_v6)].concat(),
            BothRefuse,
        ),
        row(
            "ACL --alg the CPU lacks (NEON on x86)",
            [with_ports(&["--alg=neon"]), acl(acl_v4, acl_v6)].concat(),
            BothRefuse,
        ),
        row(
            "--config split by a space",
            strings(&["-p", "0x3", "--config", "(0,0,0),", "(1,0,0)", "--parse-ptype"]),
            RsRefuses("part of --config?"),
        ),
        row(
            "ACL --alg name C does not know",
            [with_ports(&["--alg=fastest"]), acl(acl_v4, acl_v6)].concat(),
            RsRefuses("invalid ACL classify method 'fastest'"),
        ),
        row(
            "--config with junk after a tuple",
            strings(&["-p", "0x3", "--config", "(0,0,0)x,(1,0,0)", "--parse-ptype"]),
            RsRefuses("expected ',' before 'x,(1,0,0)'"),
        ),
    ]
}

/// `args` without the long options this C l3fwd lacks (those of later or
/// earlier releases: l3fwd-rs takes them all). What they change does not
/// show on these ports: a pool cache size, RSS on ports with one RX queue,
/// RX offloads l3fwd-rs does not request, a hash size C 22.11 ignores.
fn for_c(args: &[String]) -> Vec<String> {
    let mut kept = Vec::new();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let name = arg.strip_prefix("--").unwrap_or_default();
        match name {
            "mbcache" | "hash-entry-num" | "disable-rss" | "relax-rx-offload"
                if !c_l3fwd_options().iter().any(|o| o == name) =>
            {
                if matches!(name, "mbcache" | "hash-entry-num") {
                    args.next();
                }
            }
            _ => kept.push(arg.clone()),
        }
    }
    kept
}

fn traffic(seed: u64) -> [Vec<Vec<u8>>; 2] {
    let mix = Mix {
        runt: 0,
        ..Mix::default()
    };
    let opts = GenOpts::default();
    [generate(seed, 200, &mix, &opts), generate(seed + 1, 200, &mix, &opts)]
}

fn forward(bin: std::path::PathBuf, inputs: &[Vec<Vec<u8>>; 2], args: &[String]) -> testkit::Outcome {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    // Exact match: two 4M-entry tables, as in the C sample.
    let memory_mb = if args.contains(&"-E") { 2048 } else { 512 };
    Run::new(bin)
        .memory_mb(memory_mb)
        .port(inputs[0].clone())
        .port(inputs[1].clone())
        .args(&args)
        .run()
}

fn refuses(bin: &std::path::Path, args: &[String]) -> testkit::Outcome {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    run_cli(bin, &["-l", "0", "--vdev=net_null0", "--vdev=net_null1"], &args)
}

#[test]
fn c_l3fwd_command_lines_run_l3fwd_rs_alike() {
    let dir = Scratch::new("drop-in");
    let inputs = traffic(3);
    for row in rows(&dir) {
        let context = format!("row '{}': {:?}", row.name, row.args);
        eprintln!("{context}");
        match row.expect {
            Expect::Identical => {
                let rs = forward(l3fwd_rs(), &inputs, &row.args);
                rs.assert_success();
                let c = forward(c_l3fwd(), &inputs, &for_c(&row.args));
                c.assert_success();
                let (c, rs) = (c.per_port(), rs.per_port());
                assert!(
                    rs.iter().map(Vec::len).sum::<usize>() > 100,
                    "{context}: little forwarded"
                );
                for (port, (c, rs)) in c.iter().zip(&rs).enumerate() {
                    assert_eq!(c.len(), rs.len(), "{context}: port {port} frame count");
                    assert!(c == rs, "{context}: port {port} frames differ");
                }
            }
            Expect::BothRefuse => {
                let rs = refuses(&l3fwd_rs(), &row.args);
                rs.error_line();
                let c = refuses(&c_l3fwd(), &row.args);
                assert!(!c.status.success(), "{context}: C ran\n{}", c.stdout);
            }
            Expect::RsRefuses(text) => {
                let line = refuses(&l3fwd_rs(), &row.args).error_line().to_owned();
                assert!(line.contains(text), "{context}: {line}");
                forward(c_l3fwd(), &inputs, &row.args).assert_success();
            }
            Expect::CRefuses => {
                forward(l3fwd_rs(), &inputs, &row.args).assert_success();
                let c = refuses(&c_l3fwd(), &row.args);
                assert!(!c.status.success(), "{context}: C ran\n{}", c.stdout);
            }
        }
    }
}

/// A portmask enabling a port that does not exist loads the routes to it,
/// as C does, and C's TX to that port drops the packets: so are they
/// here, counted as unroutable, never sent back out of their input port.
#[test]
fn routes_to_a_missing_enabled_port_drop_as_unroutable() {
    let mut em_miss = em_flow4(1);
    em_miss[37] = 10; // another UDP destination port: no exact-match rule
    let lpm_miss = udp4([10, 0, 0, 1], [10, 9, 9, 9], 64, 26);
    let modes: [(&[&str], Vec<u8>); 3] = [
        (&["--lookup=lpm"], lpm_miss.clone()),
        (&["--lookup=fib"], lpm_miss),
        (&["-E", "--hash-entry-num", "1024"], em_miss),
    ];
    for (mode, miss) in modes {
        // The built-in tables route 198.18.2.0/24 (and flow 2) to port 2.
        let out = Run::new(l3fwd_rs())
            .port(vec![em_flow4(2), em_flow4(1), miss])
            .port(Vec::new())
            .args(&[&["-p", "0x7", "--config", "(0,0,0),(1,0,0)"], mode].concat())
            .stats_json()
            .run();
        out.assert_success();
        let sent: Vec<usize> = out.per_port().iter().map(Vec::len).collect();
        assert_eq!(sent, [1, 1], "{mode:?}: only the miss goes back out of port 0");
        let stats = out.stats.as_ref().expect("--stats-json");
        let unroutable = &stats["forwarded"]["dropped_unroutable"];
        assert_eq!(unroutable.as_u64(), Some(1), "{mode:?}: {stats}");
    }
}
