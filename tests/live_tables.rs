//! Tables changed while l3fwd-rs forwards a continuous stream: `reload`
//! and SIGHUP in every mode, `route add/del/get` through `l3fwd-ctl`, and
//! bad control input, which must change nothing. Port 0 replays one flow
//! forever (pcap, `infinite_rx`); ports 1 and 2 (net_null, not polled)
//! only transmit, and DPDK's telemetry counts what each sent: after an
//! `ok`, frames go where the change says, none is lost beyond the counted
//! drops and every mbuf comes back.

use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixStream;
use std::process::{Command, Output};
use std::thread;
use std::time::{Duration, Instant};

use testkit::{l3fwd_rs, Process, Run, Scratch};

/// Up to the first "forwarding" line, or a reload by SIGHUP.
const START_TIMEOUT: Duration = Duration::from_secs(60);

/// The flow port 0 replays: UDP 198.18.5.1:9 -> 198.18.5.0:9, as EM's
/// rule files name flows.
fn stream() -> Vec<Vec<u8>> {
    vec![testkit::frames::em_flow4(5); 64]
}

/// Rule files sending the stream's flow out of `port`, in `mode`'s format.
fn rules(mode: &str, port: u16) -> [String; 2] {
    match mode {
        "lpm" | "fib" => [format!("R198.18.5.0/24 {port}\n"), format!("R2001:db8::/32 {port}\n")],
        "em" => [
            format!("R198.18.5.0 198.18.5.1 9 9 0x11 {port}\n"),
            format!("R2001:db8::1 2001:db8::2 9 9 0x11 {port}\n"),
        ],
        "acl" => [
            format!("R0.0.0.0/0 198.18.5.0/24 0 : 65535 0 : 65535 0x00/0x00 {port}\n"),
            format!("R0:0:0:0:0:0:0:0/0 2001:db8:0:0:0:0:0:0/32 0 : 65535 0 : 65535 0x00/0x00 {port}\n"),
        ],
        _ => unreachable!("{mode}"),
    }
}

/// The dataplane model the forwarder runs (its `--mode`).
#[derive(Clone, Copy)]
enum Model {
    Poll,
    /// `--mode=eventdev` on event_sw, its scheduler on a service core.
    Event,
}

/// A running l3fwd-rs: port 0 replays [`stream`], ports 1 and 2 only send.
struct Forwarder {
    process: Process,
    dir: Scratch,
}

impl Forwarder {
    /// Starts it in `mode` with the rule files of `rules(mode, port)`.
    fn start(name: &str, mode: &str, port: u16) -> Forwarder {
        Forwarder::start_on(name, mode, port, Model::Poll, &[])
    }

    /// As [`Forwarder::start`], on `model`, with `extra` options.
    fn start_on(name: &str, mode: &str, port: u16, model: Model, extra: &[&str]) -> Forwarder {
        Forwarder::replaying(&stream(), name, mode, port, model, extra)
    }

    /// As [`Forwarder::start_on`], port 0 replaying `frames`.
    fn replaying(frames: &[Vec<u8>], name: &str, mode: &str, port: u16, model: Model, extra: &[&str]) -> Forwarder {
        let dir = Scratch::new(&format!("live-{name}"));
        let input = dir.path("in.pcap");
        trafficgen::write_pcap(&input, frames).unwrap();
        let [v4, v6] = rules(mode, port);
        let (v4, v6) = (dir.file("v4.cfg", &v4), dir.file("v6.cfg", &v6));
        let pcap = format!(
            "--vdev=net_pcap0,rx_pcap={},tx_pcap=/dev/null,infinite_rx=1",
            input.display()
        );
        let lookup = format!("--lookup={mode}");
        let mut app = vec!["-p", "0x7", &lookup, "--rule_ipv4", &v4, "--rule_ipv6", &v6];
        app.extend(extra);
        // Ports 1 and 2 only send: null ports where only port 0 is polled;
        // in event mode the RX adapter takes every port, so pcap ports
        // with nothing to receive.
        let silent = dir.path("silent.pcap");
        trafficgen::write_pcap(&silent, &[] as &[Vec<u8>]).unwrap();
        let senders: Vec<String> = (1..=2)
            .map(|p| match model {
                Model::Poll => format!("--vdev=net_null{p}"),
                Model::Event => format!("--vdev=net_pcap{p},rx_pcap={},tx_pcap=/dev/null", silent.display()),
            })
            .collect();
        let mut eal = vec![pcap.as_str(), &senders[0], &senders[1]];
        let mut run = Run::new(l3fwd_rs());
        match model {
            Model::Poll => app.extend(["--config", "(0,0,0)"]),
            Model::Event => {
                app.push("--mode=eventdev");
                eal.extend(["-s", "0x2", "--vdev=event_sw0"]);
                run = run.lcores("0-1");
            }
        }
        // Room for two sets of tables: a swap builds the new beside the old.
        let mut process = run.memory_mb(1024).eal_args(&eal).args(&app).stats_json().start(
            &dir,
            &format!("live-{name}"),
            START_TIMEOUT,
        );
        process.wait_for_stderr("lcore 0: forwarding", START_TIMEOUT);
        Forwarder { process, dir }
    }

    fn stderr(&self) -> String {
        self.process.stderr()
    }

    /// SIGHUP, and waits until it has reloaded.
    fn hang_up(&mut self) {
        self.process.signal("HUP").expect("SIGHUP");
        self.process
            .wait_for_stderr("SIGHUP: rule files reloaded", START_TIMEOUT);
    }

    /// Rewrites the rule files the forwarder was started with.
    fn rewrite_rules(&self, mode: &str, port: u16) {
        let [v4, v6] = rules(mode, port);
        self.dir.file("v4.cfg", &v4);
        self.dir.file("v6.cfg", &v6);
    }

    /// `l3fwd-ctl --file-prefix PREFIX args...`, with `stdin` as its input.
    fn ctl(&self, args: &[&str], stdin: &str) -> Output {
        testkit::ctl(self.process.prefix(), args, stdin)
    }

    /// Runs `commands` (one line each) through `l3fwd-ctl -`; returns its
    /// answers and whether it exited 0.
    fn send(&self, commands: &[&str]) -> (Vec<String>, bool) {
        let out = self.ctl(&["-"], &(commands.join("\n") + "\n"));
        let answers = String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(String::from)
            .collect();
        (answers, out.status.success())
    }

    /// Packets ports 1 and 2 have sent, from DPDK's telemetry.
    fn tx(&self) -> [u64; 2] {
        [1, 2].map(|port| self.opackets(port))
    }

    /// Packets `port` has sent, from DPDK's telemetry.
    fn opackets(&self, port: u16) -> u64 {
        let telemetry = self.process.telemetry().expect("connect to telemetry");
        telemetry.opackets(port).expect("telemetry").expect("port set up")
    }

    /// Asserts that from now on the stream leaves by `port` (1 or 2) only:
    /// once frames still in a TX buffer at the change are out, the other
    /// port sends nothing more while this one sends 1000 frames more.
    fn assert_stream_goes_to(&self, port: usize, context: &str) {
        // Frames looked up before the change may sit in a TX buffer (at
        // most a burst) until the next drain: by the time 1000 frames
        // went out after it, they are out.
        self.wait_for_frames(port, self.tx(), context);
        let before = self.tx();
        let after = self.wait_for_frames(port, before, context);
        let other = 2 - port;
        assert_eq!(
            after[other],
            before[other],
            "{context}: port {} sends nothing more\n{}",
            other + 1,
            self.stderr()
        );
    }

    /// Waits (rather than timing: on a loaded machine the forwarder may
    /// get little of a core) until `port` has sent 1000 frames more than
    /// in `before`; returns the counts then.
    fn wait_for_frames(&self, port: usize, before: [u64; 2], context: &str) -> [u64; 2] {
        let start = Instant::now();
        loop {
            let now = self.tx();
            if now[port - 1] > before[port - 1] + 1000 {
                return now;
            }
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "{context}: port {port} sends the stream: {before:?} -> {now:?}\n{}",
                self.stderr()
            );
            thread::sleep(Duration::from_millis(20));
        }
    }

    /// Asserts that from now on the stream leaves by neither port 1 nor 2.
    fn assert_stream_stops(&self, context: &str) {
        thread::sleep(Duration::from_millis(20));
        let before = self.tx();
        thread::sleep(Duration::from_millis(300));
        assert_eq!(
            self.tx(),
            before,
            "{context}: ports 1 and 2 send nothing more\n{}",
            self.stderr()
        );
    }

    /// Stops it with SIGINT and checks the end: exit 0, every packet
    /// received sent or counted as dropped, every mbuf back.
    fn stop(self) {
        let exit = self.process.stop_cleanly();
        let stats = std::fs::read_to_string(self.dir.path("stats.json")).expect("--stats-json written");
        let stats: serde_json::Value = serde_json::from_str(&stats).expect("--stats-json parses");
        testkit::assert_accounted(&stats, 0);
        assert!(!exit.stderr.contains("panicked"), "{}", exit.stderr);
    }
}

#[test]
fn reload_and_sighup_move_the_stream_in_every_mode() {
    for mode in ["lpm", "fib", "em", "acl"] {
        let mut f = Forwarder::start(&format!("reload-{mode}"), mode, 1);
        f.assert_stream_goes_to(1, &format!("{mode}: at start"));

        f.rewrite_rules(mode, 2);
        f.hang_up();
        f.assert_stream_goes_to(2, &format!("{mode}: after SIGHUP"));

        f.rewrite_rules(mode, 1);
        assert_eq!(f.send(&["reload"]), (vec!["ok".to_string()], true), "{mode}");
        f.assert_stream_goes_to(1, &format!("{mode}: after reload"));

        // A rule file that does not parse: an error, and the tables stay.
        f.dir.file("v4.cfg", "Rnonsense\n");
        let (answers, ok) = f.send(&["reload"]);
        assert!(
            !ok && answers.len() == 1 && answers[0].starts_with("error: "),
            "{mode}: {answers:?}"
        );
        assert!(answers[0].contains("the tables in use are unchanged"), "{answers:?}");
        f.assert_stream_goes_to(1, &format!("{mode}: after a failed reload"));
        f.stop();
    }
}

/// An IPv4 frame of the stream's flow, an IPv6 frame to 2001:db8::1 and a
/// runt (an IPv4 header cut short), in turn.
fn three_kinds() -> Vec<Vec<u8>> {
    // 2001:db8::LAST
    let v6 = |last| {
        let mut a = [0; 16];
        a[..4].copy_from_slice(&[0x20, 0x01, 0x0d, 0xb8]);
        a[15] = last;
        a
    };
    let runt = testkit::frames::em_flow4(5)[..30].to_vec();
    vec![
        testkit::frames::em_flow4(5),
        testkit::frames::udp6(v6(2), v6(1), 64, 18),
        runt,
    ]
}

#[test]
fn trace_shows_each_packet_its_lookup_and_its_fate_in_every_mode() {
    let macs = "dst 02:00:00:00:00:01 src";
    for (mode, v4_rule, v6_line) in [
        ("lpm", "route 198.18.5.0/24 port 1 (", "-> port 1 | tx port 1: "),
        ("fib", "route 198.18.5.0/24 port 1 (", "-> port 1 | tx port 1: "),
        ("em", "port 1 (", "family not loaded"),
        ("acl", "rule port 1 (", "-> port 1 | tx port 1: "),
    ] {
        let f = Forwarder::replaying(&three_kinds(), &format!("trace-{mode}"), mode, 1, Model::Poll, &[]);
        // 40 packets in a row hold each kind, whatever order a burst is
        // sent in (ACL on DPDK before 24.07 sends its IPv4 packets first);
        // the command after the trace is answered after it.
        let (answers, ok) = f.send(&["trace 40", "route get 198.18.5.7"]);
        let routes = matches!(mode, "lpm" | "fib");
        assert_eq!(ok, routes, "{mode}: {answers:?}");
        let [lines @ .., last, route] = &answers[..] else {
            panic!("{mode}: {answers:?}")
        };
        assert_eq!((lines.len(), last.as_str()), (40, "traced 40 packets"), "{mode}");
        let get = if routes { "1" } else { "error:" };
        assert!(route.starts_with(get), "{mode}: {route}");
        assert!(
            lines.iter().all(|l| l.starts_with(" lcore 0 port 0 queue 0 | ")),
            "{lines:?}"
        );
        let find = |what: &str| {
            let found = lines.iter().find(|l| l.contains(what));
            found.unwrap_or_else(|| panic!("{mode}: a line with '{what}': {lines:?}"))
        };
        let v4 = find("IPv4 198.18.5.1 > 198.18.5.0 proto 17 udp 9 > 9 ttl 64");
        assert!(v4.contains(v4_rule) && v4.contains("v4.cfg line 1)"), "{mode}: {v4}");
        assert!(
            v4.contains(&format!("-> port 1 | tx port 1: {macs} ")) && v4.ends_with(" ttl 63"),
            "{mode}: {v4}"
        );
        let v6 = find("IPv6 2001:db8::2 > 2001:db8::1 next header 17 udp 1024 > 9 hop limit 64");
        assert!(v6.contains(v6_line), "{mode}: {v6}");
        let runt = find("| 30 B ethertype 0x0800, too short for its IP header | ");
        assert!(runt.ends_with("-> runt | dropped (runt)"), "{mode}: {runt}");
        f.stop();
    }
}

#[test]
fn reload_and_route_changes_move_the_stream_in_eventdev_mode() {
    let mut f = Forwarder::start_on("event", "lpm", 1, Model::Event, &[]);
    f.assert_stream_goes_to(1, "eventdev: at start");
    let (answers, _) = f.send(&["trace 1"]);
    assert!(
        answers[0].starts_with(" lcore ") && answers[0].contains(" port 0 (event) | "),
        "{answers:?}"
    );
    assert!(answers[0].ends_with(" ttl 63"), "rewritten and sent: {answers:?}");
    f.rewrite_rules("lpm", 2);
    assert_eq!(f.send(&["reload"]), (vec!["ok".to_string()], true));
    f.assert_stream_goes_to(2, "eventdev: after reload");
    f.rewrite_rules("lpm", 1);
    f.hang_up();
    f.assert_stream_goes_to(1, "eventdev: after SIGHUP");
    f.stop();
}

#[test]
fn routes_added_and_deleted_through_l3fwd_ctl_steer_the_stream() {
    for mode in ["lpm", "fib"] {
        let f = Forwarder::start(&format!("route-{mode}"), mode, 1);
        assert_eq!(f.send(&["route get 198.18.5.0", "route get 10.0.0.1"]).0, ["1", "miss"]);

        // Two changes in one batch, IPv4 and IPv6; a more specific route wins.
        let (answers, ok) = f.send(&[
            "route add 198.18.5.0/25 2",
            "route add 2001:db8::/48 2",
            "route get 198.18.5.0",
            "route get 2001:db8::1",
            "route get 198.18.5.200",
        ]);
        assert_eq!(
            (answers, ok),
            (["ok", "ok", "2", "2", "1"].map(String::from).to_vec(), true),
            "{mode}"
        );
        f.assert_stream_goes_to(2, &format!("{mode}: after route add"));

        // Adding a prefix that is there replaces its port.
        assert_eq!(f.send(&["route add 198.18.5.0/25 1"]).0, ["ok"], "{mode}");
        f.assert_stream_goes_to(1, &format!("{mode}: after the replace"));
        assert_eq!(f.send(&["route add 198.18.5.0/25 2"]).0, ["ok"], "{mode}");
        f.assert_stream_goes_to(2, &format!("{mode}: after the second replace"));

        // Bad commands change nothing, the good one beside them applies.
        let (answers, ok) = f.send(&[
            "route add 198.18.5.0/26 3", // port 3: outside the portmask
            "route del 198.18.6.0/24",   // no such route
            "route add 198.18.5.0/33 1", // bad prefix
            "route flap 198.18.5.0/24",  // no such command
            "route add 198.18.5.0/26 1 extra",
            "route add ::/0 1", // depth 0: rte_lpm6 refuses it, rte_fib6 takes it
            "route get 198.18.5.0",
        ]);
        assert!(!ok, "{answers:?}");
        assert_eq!(answers.len(), 7, "{answers:?}");
        assert!(answers[..5].iter().all(|a| a.starts_with("error: ")), "{answers:?}");
        match mode {
            "lpm" => assert!(answers[5].contains("rte_lpm6 takes no depth 0"), "{answers:?}"),
            _ => assert_eq!(answers[5], "ok", "{answers:?}"),
        }
        assert_eq!(answers[6], "2", "{answers:?}");
        f.assert_stream_goes_to(2, &format!("{mode}: after bad commands"));

        assert_eq!(
            f.send(&["route del 198.18.5.0/25", "route del 2001:db8::/48"]).0,
            ["ok", "ok"]
        );
        f.assert_stream_goes_to(1, &format!("{mode}: after route del"));
        // One command on the command line: its answer, exit 0 or 1.
        let out = f.ctl(&["route", "get", "198.18.5.9"], "");
        assert_eq!(
            (String::from_utf8_lossy(&out.stdout).trim(), out.status.success()),
            ("1", true)
        );
        let out = f.ctl(&["route", "del", "198.18.5.0/25"], "");
        assert!(!out.status.success() && String::from_utf8_lossy(&out.stdout).starts_with("error: no route"));
        // A line break inside an argument would smuggle in a second
        // command: refused, and nothing is sent.
        for smuggled in ["198.18.5.9\nroute add 10.0.0.0/8 1", "198.18.5.9\r"] {
            let out = f.ctl(&["route", "get", smuggled], "");
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(!out.status.success() && out.stdout.is_empty(), "{smuggled:?}: {stderr}");
            assert!(stderr.contains("holds a line break"), "{smuggled:?}: {stderr}");
        }
        assert_eq!(f.send(&["route get 10.0.0.1"]).0, ["miss"], "{mode}");
        f.stop();
    }
}

/// Idle connections never keep a command out, nor use up the forwarder's
/// file descriptors: with its limit at 100 more than it holds, 300
/// clients that connect and send nothing leave `route get` and `reload`
/// answered at once (at most 64 are held; each new one takes the place
/// of the longest idle), and the forwarder holds no more than that.
#[test]
fn idle_clients_never_starve_the_control_socket() {
    let f = Forwarder::start("idle", "lpm", 1);
    let pid = f.process.pid();
    let open_fds = || std::fs::read_dir(format!("/proc/{pid}/fd")).unwrap().count();
    let limit = (open_fds() + 100).to_string();
    let nofile = format!("--nofile={limit}:{limit}");
    let status = Command::new("prlimit")
        .args(["--pid", &pid.to_string(), &nofile])
        .status()
        .unwrap();
    assert!(status.success(), "prlimit");
    let path = l3fwd_rs::control::socket::socket_path(f.process.prefix());
    let idle: Vec<UnixStream> = (0..300).filter_map(|_| UnixStream::connect(&path).ok()).collect();
    assert!(idle.len() >= 100, "{} connections", idle.len());
    let started = Instant::now();
    assert_eq!(f.send(&["route get 198.18.5.9", "reload"]).0, ["1", "ok"]);
    assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
    let held = open_fds();
    assert!(
        held <= limit.parse::<usize>().unwrap() - 100 + 64 + 8,
        "{held} descriptors"
    );
    drop(idle);
    f.stop();
}

/// IPv4 route changes under the stream that each take a tbl8 group for
/// 198.18.5.0/24 and give it back: the stream (198.18.5.0, port 1 by the
/// file's /24) ends on port 1. Each line's comment is the port it gives
/// the stream from then on.
const V4_CYCLE: [&str; 9] = [
    "route add 198.18.5.0/25 2",   // 2, a tbl8 group for 198.18.5.0/24
    "route add 198.18.5.0/26 1",   // 1
    "route add 198.18.5.0/26 2",   // 2, a replace
    "route del 198.18.5.0/26",     // 2, by the /25
    "route add 198.18.5.0/32 1",   // 1
    "route del 198.18.5.0/25",     // 1
    "route del 198.18.5.0/32",     // 1, by the /24: the group is freed
    "route add 198.18.5.128/25 2", // 1 (another half), a group again
    "route del 198.18.5.128/25",   // 1, freed again
];

/// IPv6 route changes under a stream to 2001:db8::1 (port 1 by the file's
/// /32, which takes the group of the 4th byte) that take up to 12 more
/// groups and give them back, as [`V4_CYCLE`] does.
const V6_CYCLE: [&str; 9] = [
    "route add 2001:db8::/48 2",          // 2, groups for bytes 5 and 6
    "route add 2001:db8::/64 1",          // 1, and for bytes 7 and 8
    "route add 2001:db8::/64 2",          // 2, a replace
    "route del 2001:db8::/64",            // 2, by the /48: 2 groups freed
    "route add 2001:db8::1/128 1",        // 1, groups for bytes 7 to 16
    "route del 2001:db8::/48",            // 1
    "route del 2001:db8::1/128",          // 1, by the /32: 12 groups freed
    "route add 2001:db8:0:0:8000::/65 2", // 1 (another half), 5 groups
    "route del 2001:db8:0:0:8000::/65",   // 1, freed again
];

/// `cycle`, 2 x 60 times under the stream: every answer `ok`, and the
/// stream ends on port 1.
fn run_cycles(f: &Forwarder, cycle: &[&str]) {
    const CYCLES: usize = 60;
    let commands: Vec<&str> = cycle.iter().copied().cycle().take(cycle.len() * CYCLES).collect();
    for (round, (answers, ok)) in [f.send(&commands), f.send(&commands)].into_iter().enumerate() {
        assert!(
            ok && answers.iter().all(|a| a == "ok"),
            "round {round}: {:?}",
            answers.iter().find(|a| *a != "ok")
        );
        f.assert_stream_goes_to(1, &format!("after round {round} of cycles"));
    }
}

/// FIB mode changes rte_fib in place from DPDK 24.11 and rte_fib6 from
/// 25.11 (`rte_fib_rcu_qsbr_add`): the cycles above and IPv6 adds and
/// deletes rebuild nothing there (no "new tables built" in the log),
/// `route stats` counts the FIBs' tbl8 groups, and the groups the cycles
/// took are back. Before, each batch of changes is a rebuild and swap, as
/// in 22.11.
#[test]
fn fib_routes_change_in_place_where_dpdk_lets_them() {
    let f = Forwarder::start_on("fib-inplace", "fib", 1, Model::Poll, &["--lpm-tbl8s", "64"]);
    let rebuilds = |f: &Forwarder| f.stderr().matches("new tables built").count();
    run_cycles(&f, &V4_CYCLE);
    let v6 = [
        "route add 2001:db8::/48 2",
        "route get 2001:db8::1",
        "route del 2001:db8::/48",
    ];
    assert_eq!(f.send(&v6).0, ["ok", "2", "ok"]);
    let v6_rebuilds = usize::from(dpdk::RELEASE < 2511) * 2;
    // A family's rebuild builds no table of the other: IPv4 at start and
    // once per round of cycles, IPv6 at start and for the add and the del.
    let v4_rebuilds = usize::from(dpdk::RELEASE < 2411) * 2;
    assert_eq!(
        [tables_built(&f, "FIB: IPv4: "), tables_built(&f, "FIB: IPv6: ")],
        [1 + v4_rebuilds, 1 + v6_rebuilds],
        "{}",
        f.stderr()
    );
    let mut stats = f.send(&["route stats"]).0;
    if dpdk::RELEASE >= 2411 {
        assert_eq!(rebuilds(&f), v6_rebuilds, "{}", f.stderr());
        let mut expected = "IPv4 FIB tbl8 groups: 0 in use, 0 awaiting reclaim, 64 free, of 64".to_string();
        if dpdk::RELEASE >= 2511 {
            // The file's 2001:db8::/32 takes one group (its 4th byte).
            expected += "; IPv6 FIB tbl8 groups: 1 in use, 0 awaiting reclaim, 63 free, of 64";
        }
        // The groups of the delete just made come back once the lcore has
        // passed a quiescent point after it: soon, but on a loaded machine
        // not always before the next command (seen once on 25.11).
        let deadline = Instant::now() + Duration::from_secs(5);
        while stats.last() != Some(&expected) && Instant::now() < deadline {
            thread::sleep(Duration::from_millis(20));
            stats = f.send(&["route stats"]).0;
        }
        assert_eq!(
            stats,
            [" IPv4 routes: 1 (/24: 1)", " IPv6 routes: 1 (/32: 1)", &expected]
        );
    } else {
        // One per batch: each round of cycles, the IPv6 add, the delete.
        assert_eq!(rebuilds(&f), 4, "{}", f.stderr());
        // No table changes in place: no tbl8 groups to count.
        assert_eq!(stats, [" IPv4 routes: 1 (/24: 1)", "IPv6 routes: 1 (/32: 1)"]);
    }
    f.stop();
}

/// A rebuild that does not fit in EAL memory beside the live tables says
/// what would help, though rte_fib6 reports its failed allocation as
/// `EINVAL`: two FIB sets of 200000 tbl8 groups each do not fit in the
/// forwarder's 1 GB.
#[test]
fn a_fib_rebuild_out_of_eal_memory_says_to_give_eal_more() {
    let f = Forwarder::start_on("fib-mem", "fib", 1, Model::Poll, &["--lpm-tbl8s", "200000"]);
    let (answers, ok) = f.send(&["reload"]);
    assert!(!ok, "{answers:?}");
    assert!(answers[0].contains("give EAL more: -m MB"), "{answers:?}");
    assert!(answers[0].ends_with("the tables in use are unchanged"), "{answers:?}");
    f.assert_stream_goes_to(1, "after the reload that did not fit");
    f.stop();
}

/// `route add/del` of IPv4 prefixes change LPM's table in place (its
/// entries, with unlinked tbl8 groups reused after a grace period). Under
/// the stream, 120 cycles through adds,
/// replaces and deletes that each give the stream's destination port 1 or
/// 2: no frame goes anywhere else (a miss would go back out of port 0),
/// none is lost, and each cycle takes a tbl8 group and frees it, so with 4
/// groups in all, a group that did not come back after its grace period
/// would make an add fail. Then a full table: the error names the limit and
/// the option, and after the deletes the groups in use are back to none.
#[test]
fn ipv4_routes_change_in_place_under_the_stream_and_give_their_tbl8_groups_back() {
    let f = Forwarder::start_on(
        "inplace",
        "lpm",
        1,
        Model::Poll,
        &["--lpm-tbl8s", "4", "--lpm-max-rules", "6"],
    );
    // The routes by family and depth, then the tbl8 groups.
    let stats = |f: &Forwarder| f.send(&["route stats"]).0;
    assert_eq!(
        stats(&f),
        [
            " IPv4 routes: 1 (/24: 1)",
            " IPv6 routes: 1 (/32: 1)",
            "IPv4 tbl8 groups: 0 in use, 0 awaiting reclaim, 4 free, of 4; \
             IPv6 tbl8 groups: 1 in use, 0 awaiting reclaim, 3 free, of 4"
        ]
    );
    run_cycles(&f, &V4_CYCLE);
    assert_eq!(f.send(&["route add 198.18.5.0/25 2"]).0, ["ok"]);
    f.assert_stream_goes_to(2, "after an add");

    // Three /24s with longer routes take the groups left. A fourth finds
    // none; 6 rules are the limit.
    let (answers, ok) = f.send(&[
        "route add 198.18.100.0/25 1",
        "route add 198.18.101.0/25 1",
        "route add 198.18.102.0/30 1",
        "route add 198.18.103.0/25 1",
        "route add 198.18.103.0/24 2",
        "route add 198.18.5.0/26 1",
        "route get 198.18.103.1",
        "route get 198.18.5.1",
    ]);
    assert!(!ok, "{answers:?}");
    let full = |what: &str| format!("error: IPv4 LPM table full: {what}; the tables in use are unchanged");
    assert_eq!(
        answers,
        [
            "ok".into(),
            "ok".into(),
            "ok".into(),
            full("all 4 tbl8 groups are taken (raise --lpm-tbl8s)"),
            "ok".into(),
            full("all 6 rules are taken (raise --lpm-max-rules)"),
            "2".into(), // by the /24: the refused /25 is not there
            "2".into(), // by the /25: the refused /26 is not there
        ]
    );
    assert_eq!(
        stats(&f),
        [
            " IPv4 routes: 6 (/24: 2, /25: 3, /30: 1)",
            " IPv6 routes: 1 (/32: 1)",
            "IPv4 tbl8 groups: 4 in use, 0 awaiting reclaim, 0 free, of 4; \
             IPv6 tbl8 groups: 1 in use, 0 awaiting reclaim, 3 free, of 4"
        ]
    );
    f.assert_stream_goes_to(2, "beside a full table");

    let (answers, ok) = f.send(&[
        "route del 198.18.100.0/25",
        "route del 198.18.101.0/25",
        "route del 198.18.102.0/30",
        "route del 198.18.103.0/24",
        "route del 198.18.5.0/25",
    ]);
    assert!(ok, "{answers:?}");
    f.assert_stream_goes_to(1, "after the deletes");
    let stats = stats(&f);
    assert!(stats[2].starts_with("IPv4 tbl8 groups: 0 in use, "), "{stats:?}");
    assert_eq!(f.opackets(0), 0, "no frame went back out of port 0 (a miss)");
    f.stop();
}

/// As the IPv4 test above, for IPv6: under a stream to 2001:db8::1, 120
/// cycles through adds, replaces and deletes that take up to 12 tbl8
/// groups each and give them back, with 16 groups in all: every frame
/// leaves by port 1 or 2 (a miss would go back out of port 0), groups come
/// back after their grace period, a route that needs more groups than are
/// free changes nothing and says so, and after the deletes the file's
/// route's one group is all that is in use.
#[test]
fn ipv6_routes_change_in_place_under_the_stream_and_give_their_tbl8_groups_back() {
    let dst = std::net::Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 1).octets();
    let src = std::net::Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 2).octets();
    let stream = vec![testkit::frames::udp6(src, dst, 64, 18); 64];
    let f = Forwarder::replaying(&stream, "inplace6", "lpm", 1, Model::Poll, &["--lpm-tbl8s", "16"]);
    f.assert_stream_goes_to(1, "at start");
    run_cycles(&f, &V6_CYCLE);
    // A /128 takes 12 groups beside the /32's, 3 are left; another /128
    // shares the first 3 of its 13 and needs 10.
    let (answers, ok) = f.send(&[
        "route add 2001:db8:1::1/128 2",
        "route add 2001:db8:2::1/128 2",
        "route get 2001:db8:1::1",
        "route get 2001:db8:2::1",
    ]);
    assert!(!ok, "{answers:?}");
    assert_eq!(answers[0], "ok");
    assert!(
        answers[1].starts_with("error: IPv6 LPM table full: the route needs 10 new tbl8 groups, and fewer are free"),
        "{answers:?}"
    );
    assert_eq!(answers[2..], ["2", "1"], "the refused route is not there");
    // The control thread's rules hold the changes made in place.
    let (answers, _) = f.send(&["route list 2001:db8::/32", "route stats"]);
    assert_eq!(
        answers[..4],
        [
            " R2001:db8::/32 1",
            " R2001:db8:1::1/128 2",
            "2 of 2 shown",
            " IPv4 routes: 1 (/24: 1)"
        ],
        "{answers:?}"
    );
    assert_eq!(answers[4], " IPv6 routes: 2 (/32: 1, /128: 1)", "{answers:?}");
    assert!(answers[5].contains("; IPv6 tbl8 groups: 13 in use, "), "{answers:?}");
    assert_eq!(f.send(&["route del 2001:db8:1::1/128"]).0, ["ok"]);
    let stats = f.send(&["route stats"]).0;
    assert!(stats[2].contains("; IPv6 tbl8 groups: 1 in use, "), "{stats:?}");
    assert_eq!(f.opackets(0), 0, "no frame went back out of port 0 (a miss)");
    f.assert_stream_goes_to(1, "after the deletes");
    f.stop();
}

#[test]
fn flows_added_and_deleted_through_l3fwd_ctl_steer_the_stream_in_em_mode() {
    let f = Forwarder::start("flow", "em", 1);
    let flow = |port: u16| format!("flow add R198.18.5.0 198.18.5.1 9 9 0x11 {port}");
    assert_eq!(f.send(&[&flow(2)]), (vec!["ok".to_string()], true));
    f.assert_stream_goes_to(2, "em: after flow add");
    // Delete and add back in one batch: one build, both answered.
    let (answers, ok) = f.send(&["flow del R198.18.5.0 198.18.5.1 9 9 0x11 0", &flow(1)]);
    assert_eq!((answers, ok), (vec!["ok".to_string(), "ok".to_string()], true));
    f.assert_stream_goes_to(1, "em: after flow del and add");

    let (answers, ok) = f.send(&[
        &flow(3),                                       // outside the portmask
        "flow del R198.18.6.0 198.18.6.1 9 9 0x11 1",   // no such flow
        "flow add R198.18.5.0 198.18.5.1 9 9 1",        // a field short
        "flow add R2001:db8::1 2001:db8::2 9 9 0x11 2", // IPv6, and no --ipv6
        "route add 198.18.5.0/24 2",                    // LPM's and FIB's
        "route get 198.18.5.0",
    ]);
    assert!(!ok && answers.len() == 6, "{answers:?}");
    assert!(answers.iter().all(|a| a.starts_with("error: ")), "{answers:?}");
    assert!(answers[3].contains("IPv4 flows only"), "{answers:?}");
    assert!(answers[4].contains("em mode has no routes"), "{answers:?}");
    // Errors quote the command's rule, not a file position, and the
    // family hint is for the other family's flows only.
    assert!(answers.iter().all(|a| !a.contains("flow:1:")), "{answers:?}");
    assert!(!answers[2].contains("flows only"), "{answers:?}");
    let (answers, _) = f.send(&["flow add R198.18.5.0 198.18.5.1 9 9 0x11 65535"]);
    assert!(
        answers[0].contains("port") && !answers[0].contains("flows only"),
        "{answers:?}"
    );
    f.assert_stream_goes_to(1, "em: after bad commands");
    f.stop();
}

#[test]
fn acl_rules_added_and_deleted_through_l3fwd_ctl_steer_and_block_the_stream() {
    let f = Forwarder::start("acl-rules", "acl", 1);
    let rule =
        |lead: &str, src: &str, port: &str| format!("{lead}{src} 198.18.5.0/24 0 : 65535 0 : 65535 0x00/0x00{port}");
    // The file's rule again, to port 2: it takes that rule's place.
    let to_2 = rule("R", "0.0.0.0/0", " 2");
    assert_eq!(f.send(&[&format!("acl add {to_2}")]), (vec!["ok".to_string()], true));
    f.assert_stream_goes_to(2, "acl: after acl add of a route");
    // One attacker's address denied: the rule comes before the route.
    let deny = rule("@", "198.18.5.1/32", "");
    let (answers, ok) = f.send(&[&format!("acl add {deny}"), "acl list"]);
    assert!(ok, "{answers:?}");
    let v6 = rules("acl", 1)[1].trim().to_string();
    let listed: Vec<&str> = answers.iter().map(|a| a.trim()).collect();
    assert_eq!(listed, ["ok", &deny, &to_2, &v6, "3 of 3 shown"]);
    f.assert_stream_stops("acl: after acl add of a deny rule");

    let (answers, ok) = f.send(&[
        &format!("acl add {}", rule("R", "198.18.5.1/32", " 3")), // outside the portmask
        &format!("acl del {}", rule("@", "198.18.6.1/32", "")),   // no such rule
        &format!("acl del {}", rule("R", "198.18.5.1/32", " 2")), // the deny's match, but a route
        "acl add @198.18.5.1/33 0.0.0.0/0 0 : 65535 0 : 65535 0/0",
        "acl add R198.18.5.1/32 0.0.0.0/0 0 : 65535 0 : 65535 0/0", // no port
        "flow add R198.18.5.0 198.18.5.1 9 9 0x11 2",               // EM's
    ]);
    assert!(!ok && answers.len() == 6, "{answers:?}");
    assert!(answers.iter().all(|a| a.starts_with("error: ")), "{answers:?}");
    assert!(answers[0].contains("port 3 is not forwarded to"), "{answers:?}");
    assert!(
        answers[1].contains("no such rule") && answers[2].contains("no such rule"),
        "{answers:?}"
    );
    assert!(answers[3].contains("source address"), "{answers:?}");
    assert!(answers[4].contains("expected 10 fields"), "{answers:?}");
    assert!(answers[5].contains("acl mode has no flows"), "{answers:?}");
    f.assert_stream_stops("acl: after bad commands");

    assert_eq!(f.send(&[&format!("acl del {deny}")]).0, ["ok"]);
    f.assert_stream_goes_to(2, "acl: after acl del of the deny rule");
    // IPv4 rules changed: the IPv4 classifier alone was rebuilt, each time.
    let stderr = f.stderr();
    let rebuilt: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("beside the other family's in use"))
        .collect();
    assert!(
        rebuilt.len() == 3 && rebuilt.iter().all(|l| l.contains("IPv4 rules")),
        "{stderr}"
    );
    f.stop();
}

/// How many of the forwarder's tables `what` (`LPM: IPv6: `) names were
/// built, from the log line of each build.
fn tables_built(f: &Forwarder, what: &str) -> usize {
    let stderr = f.stderr();
    stderr
        .lines()
        .filter(|l| l.contains(what) && l.contains(" routes in a table of "))
        .count()
}

/// LPM changes both families in place: a batch of IPv4 and IPv6 changes
/// builds no table (the log names one build of each, at start).
#[test]
fn a_batch_of_both_families_builds_no_table_in_lpm_mode() {
    let f = Forwarder::start("interleaved", "lpm", 1);
    let rebuilds = |f: &Forwarder| f.stderr().matches("new tables built").count();
    let (answers, ok) = f.send(&[
        "route add 2001:db8:1::/48 2",
        "route add 198.18.5.0/25 2",
        "route add 2001:db8:2::/48 2",
        "route add 198.18.6.0/24 1",
        "route del 2001:db8:1::/48",
        "route get 2001:db8:2::1",
        "route get 198.18.5.1",
        "route get 198.18.6.1",
        "route get 2001:db8:1::1",
    ]);
    assert_eq!(
        (answers, ok),
        (
            ["ok", "ok", "ok", "ok", "ok", "2", "2", "1", "1"]
                .map(String::from)
                .to_vec(),
            true
        )
    );
    assert_eq!(rebuilds(&f), 0, "{}", f.stderr());
    assert_eq!(
        [tables_built(&f, "LPM: IPv4: "), tables_built(&f, "LPM: IPv6: ")],
        [1, 1],
        "{}",
        f.stderr()
    );
    f.assert_stream_goes_to(2, "after the batch");
    f.stop();
}

/// A reload reads its rule files off the control thread: while one waits
/// for its FIFO's writer, other clients are answered at once; the writer
/// comes, the reload answers `ok` and the stream follows. Without a
/// writer, the reload fails in one answer after `RELOAD_READ_TIMEOUT`,
/// the tables unchanged, and the forwarder still stops at once.
#[test]
fn a_reload_waiting_for_its_rule_file_holds_up_nothing_else() {
    let f = Forwarder::start("fifo-reload", "lpm", 1);
    let v4 = f.dir.path("v4.cfg");
    std::fs::remove_file(&v4).unwrap();
    assert!(Command::new("mkfifo").arg(&v4).status().unwrap().success());
    let reload = {
        let (prefix, ctl) = (f.process.prefix().to_string(), testkit::l3fwd_ctl());
        thread::spawn(move || {
            Command::new(ctl)
                .args(["--file-prefix", &prefix, "reload"])
                .output()
                .unwrap()
        })
    };
    thread::sleep(Duration::from_millis(500));
    let started = Instant::now();
    assert_eq!(f.send(&["route get 198.18.5.9"]).0, ["1"]);
    assert!(started.elapsed() < Duration::from_secs(2), "{:?}", started.elapsed());
    assert!(!reload.is_finished(), "the reload did not wait for its writer");
    // The writer: the reload's reader holds the FIFO open.
    std::fs::write(&v4, "R198.18.5.0/24 2\n").unwrap();
    let out = reload.join().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "ok\n",
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    f.assert_stream_goes_to(2, "after the reload from the FIFO");

    let started = Instant::now();
    let (answers, ok) = f.send(&["reload", "route get 198.18.5.9"]);
    let waited = started.elapsed();
    assert!(!ok && answers[0].contains("not read within 10 s"), "{answers:?}");
    assert!(answers[0].ends_with("the tables in use are unchanged"), "{answers:?}");
    assert_eq!(answers[1], "2", "{answers:?}");
    assert!(
        waited >= Duration::from_secs(10) && waited < Duration::from_secs(15),
        "{waited:?}"
    );
    f.assert_stream_goes_to(2, "after the reload that found no writer");
    f.stop();
}

/// Commands that arrive together are answered as if each came alone: of
/// eight IPv6 adds in one batch where seven fit (`--lpm-max-rules 8`, one
/// route in the file), the seven are made and the eighth refused, rather
/// than all eight failing with the batch's build.
#[test]
fn a_batch_that_overfills_a_table_makes_what_fits() {
    let f = Forwarder::start_on("overfill", "lpm", 1, Model::Poll, &["--lpm-max-rules", "8"]);
    let adds: Vec<String> = (1..=8).map(|n| format!("route add 2001:db8:{n}::/48 2")).collect();
    let gets: Vec<String> = (1..=8).map(|n| format!("route get 2001:db8:{n}::1")).collect();
    let commands: Vec<&str> = adds.iter().chain(&gets).map(String::as_str).collect();
    let (answers, ok) = f.send(&commands);
    assert!(!ok, "{answers:?}");
    assert!(answers[..7].iter().all(|a| a == "ok"), "{answers:?}");
    assert!(answers[7].starts_with("error: IPv6 LPM table full"), "{answers:?}");
    assert_eq!(answers[8..], ["2", "2", "2", "2", "2", "2", "2", "1"], "{answers:?}");
    f.assert_stream_goes_to(1, "after the overfilled batch");
    f.stop();
}

/// Errors of socket commands say what is wrong with the command, read
/// as the route files read it, and what it left unchanged: no `file:0:`
/// of a route that came from l3fwd-ctl.
#[test]
fn route_command_errors_read_as_the_route_files_and_name_no_file() {
    // One IPv6 route in the file, room for one more.
    let f = Forwarder::start_on("route-errors", "lpm", 1, Model::Poll, &["--lpm-max-rules", "2"]);
    assert_eq!(f.send(&["route add 2001:db8:1::/48 1"]).0, ["ok"]);
    let (answers, ok) = f.send(&[
        "route add 2001:db8:2::/48 1", // a third IPv6 route: full
        "route del ::/0",              // no such route
        "route add 010.0.0.0/8 1",     // a leading zero: not an address, as in a file
        "route add 10.0.0.0/08 1",     // 08: no C number
        "route add 10.0.0.0/8 +1",     // a C number (strtoul's sign), as in a file: ok
    ]);
    assert!(!ok, "{answers:?}");
    assert!(
        answers[0].starts_with("error: IPv6 LPM table full: all 2 rules are taken (raise --lpm-max-rules)"),
        "{answers:?}"
    );
    assert!(answers.iter().all(|a| !a.contains(":0:")), "{answers:?}");
    assert!(answers[1].ends_with("the tables in use are unchanged"), "{answers:?}");
    assert!(
        answers[2].contains("bad prefix") && answers[3].contains("bad prefix"),
        "{answers:?}"
    );
    assert_eq!(answers[4], "ok", "{answers:?}");
    assert_eq!(f.send(&["route get 10.1.2.3"]).0, ["1"]);
    f.assert_stream_goes_to(1, "after refused route commands");
    f.stop();
}

#[test]
fn the_control_socket_is_private_and_no_client_blocks_the_forwarder() {
    let f = Forwarder::start("socket", "em", 1);
    let socket = dpdk::runtime_dir_of(f.process.prefix()).join("l3fwd_ctl");
    let mode = std::fs::metadata(&socket).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600, "{}", socket.display());

    // Route commands are LPM's and FIB's: refused here, and nothing changes.
    let (answers, ok) = f.send(&["route add 198.18.5.0/24 2", "route get 198.18.5.0"]);
    assert!(!ok && answers.len() == 2, "{answers:?}");
    assert!(
        answers.iter().all(|a| a.contains("em mode has no routes")),
        "{answers:?}"
    );

    // A client that connects and says nothing; one that sends a 1 MB line;
    // one that sends a flood of commands and never reads an answer.
    let _silent = UnixStream::connect(&socket).unwrap();
    let mut long = UnixStream::connect(&socket).unwrap();
    // The forwarder may close it before all is written.
    let _ = long.write_all(&vec![b'x'; 1 << 20]);
    let mut flood = UnixStream::connect(&socket).unwrap();
    flood.set_nonblocking(true).unwrap();
    let line = b"route get 198.18.5.0\n".repeat(1000);
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(2) {
        let _ = flood.write(&line);
    }
    let mut answer = String::new();
    long.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("error: a line longer than 4096 bytes"), "{answer}");
    // Meanwhile, and still: others are answered and the stream flows.
    assert_eq!(f.send(&["reload"]), (vec!["ok".to_string()], true));
    f.assert_stream_goes_to(1, "beside bad clients");
    drop(flood);
    f.stop();

    // No instance of that prefix: one line saying so, exit 1.
    let out = Command::new(testkit::l3fwd_ctl())
        .args(["--file-prefix", "l3fwd-live-nobody", "reload"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.lines().count() == 1 && stderr.contains("is l3fwd-rs running with --file-prefix l3fwd-live-nobody?"),
        "{stderr}"
    );
}

// EM: flows written in place in the lock-free rte_hash.

/// `flow add` of the stream's flow (or flow `n`'s, 198.18.n.1 -> 198.18.n.0) to `port`.
fn flow_add(n: u8, port: u16) -> String {
    format!("flow add R198.18.{n}.0 198.18.{n}.1 9 9 0x11 {port}")
}

fn flow_del(n: u8) -> String {
    format!("flow del R198.18.{n}.0 198.18.{n}.1 9 9 0x11 0")
}

#[test]
fn flows_written_in_place_follow_each_ok_until_the_table_is_full() {
    // Room for the rule file's one flow and 7 more.
    let f = Forwarder::start_on("flow-lf", "em", 1, Model::Poll, &["--hash-entry-num", "8"]);
    // Replace, delete (the stream then misses: back out of port 0), add
    // back: each visible in the stream once answered.
    for (commands, port) in [
        (vec![flow_add(5, 2)], Some(2)),
        (vec![flow_add(5, 1)], Some(1)),
        (vec![flow_del(5)], None),
        (vec![flow_add(5, 2)], Some(2)),
    ] {
        let commands: Vec<&str> = commands.iter().map(String::as_str).collect();
        assert_eq!(f.send(&commands), (vec!["ok".to_string()], true), "{commands:?}");
        match port {
            Some(port) => f.assert_stream_goes_to(port, &format!("em: after {commands:?}")),
            None => f.assert_stream_stops(&format!("em: after {commands:?}")),
        }
    }
    // Churn of other flows, 2000 changes in one go: more slots freed than
    // the table has, each reused after its grace period; the stream's
    // flow stays where it is.
    let churn: Vec<String> = (0..200)
        .flat_map(|_| (20..25).map(|n| flow_add(n, 1)).chain((20..25).map(flow_del)))
        .collect();
    let churn: Vec<&str> = churn.iter().map(String::as_str).collect();
    let (answers, ok) = f.send(&churn);
    let errors: Vec<&String> = answers.iter().filter(|a| *a != "ok").collect();
    assert!(
        ok && answers.len() == 2000 && errors.is_empty(),
        "{} answers, {} errors, the first: {:?}",
        answers.len(),
        errors.len(),
        errors.first()
    );
    f.assert_stream_goes_to(2, "em: after 2000 changes to other flows");
    // Seven other flows fill the table; the eighth is refused and changes nothing.
    let fill: Vec<String> = (10..17).map(|n| flow_add(n, 1)).collect();
    let fill: Vec<&str> = fill.iter().map(String::as_str).collect();
    assert_eq!(f.send(&fill), (vec!["ok".to_string(); 7], true));
    let (answers, ok) = f.send(&[&flow_add(17, 1), &flow_add(5, 1)]);
    assert!(!ok, "{answers:?}");
    assert_eq!(
        answers,
        [
            "error: the IPv4 exact-match table is full (8 entries; --hash-entry-num sizes it); \
             the tables in use are unchanged",
            "ok"
        ],
        "a full table refuses a new flow, not a replace"
    );
    f.assert_stream_goes_to(1, "em: after the full table");
    // A deleted flow's slot comes back after its grace period.
    assert_eq!(f.send(&[&flow_del(10), &flow_add(17, 2)]).0, ["ok", "ok"]);
    f.stop();
}

#[test]
fn the_live_tables_list_as_rule_files_write_them() {
    let lines = |answers: Vec<String>| answers.iter().map(|a| a.trim().to_owned()).collect::<Vec<_>>();
    let f = Forwarder::start("list-lpm", "lpm", 1);
    let (answers, ok) = f.send(&["route add 10.1.0.0/16 1", "route add 10.0.0.0/8 2", "route list"]);
    assert!(ok, "{answers:?}");
    assert_eq!(
        lines(answers),
        [
            "ok",
            "ok",
            "R10.0.0.0/8 2",
            "R10.1.0.0/16 1",
            "R198.18.5.0/24 1",
            "R2001:db8::/32 1",
            "4 of 4 shown"
        ],
        "covering prefixes first, IPv4 then IPv6"
    );
    // Pages: --skip goes past the entries an earlier page showed.
    let (answers, _) = f.send(&[
        "route list --limit 2 --skip 1",
        "route list --skip 3",
        "route list --skip 9",
    ]);
    assert_eq!(
        lines(answers),
        [
            "R10.1.0.0/16 1",
            "R198.18.5.0/24 1",
            "2 of 4 shown after the first 1",
            "R2001:db8::/32 1",
            "1 of 4 shown after the first 3",
            "0 of 4 shown after the first 9"
        ]
    );
    let (answers, _) = f.send(&[
        "route list 10.0.0.0/8 --limit 1",
        "route del 10.1.0.0/16",
        "route list 10.0.0.0/8",
    ]);
    assert_eq!(
        lines(answers),
        ["R10.0.0.0/8 2", "1 of 2 shown", "ok", "R10.0.0.0/8 2", "1 of 1 shown"]
    );
    let (answers, ok) = f.send(&["flow list"]);
    assert!(
        !ok && answers[0].contains("lpm mode has no flows to list"),
        "{answers:?}"
    );
    f.stop();

    let f = Forwarder::start("list-em", "em", 1);
    let (answers, ok) = f.send(&["flow add R198.18.9.0 198.18.9.1 9 9 0x11 2", "flow list"]);
    assert!(ok, "{answers:?}");
    let listed = lines(answers);
    assert_eq!(
        listed,
        [
            "ok",
            "R198.18.5.0 198.18.5.1 9 9 0x11 1",
            "R198.18.9.0 198.18.9.1 9 9 0x11 2",
            "2 of 2 shown"
        ],
        "the flows in the live table, file's and added"
    );
    // A listed line is one `flow del` takes.
    let del = format!("flow del {}", listed[1]);
    assert_eq!(
        lines(f.send(&[&del, "flow list"]).0),
        ["ok", "R198.18.9.0 198.18.9.1 9 9 0x11 2", "1 of 1 shown"]
    );
    f.stop();

    let f = Forwarder::start("list-acl", "acl", 1);
    let [v4, v6] = rules("acl", 1);
    assert_eq!(lines(f.send(&["acl list"]).0), [v4.trim(), v6.trim(), "2 of 2 shown"]);
    // --json: one object per answer, a list's entries in "lines".
    let out = f.ctl(&["--json", "-"], "acl list --limit 1\nacl list 5\n");
    let answers: Vec<serde_json::Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).expect("a JSON object per line"))
        .collect();
    assert_eq!(
        answers,
        [
            serde_json::json!({"ok": true, "lines": [v4.trim()], "answer": "1 of 2 shown"}),
            serde_json::json!({"ok": false, "error": "unknown list options '5'; expected --limit N, --skip N"}),
        ]
    );
    assert!(!out.status.success());
    f.stop();
}
