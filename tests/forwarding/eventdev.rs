//! Eventdev mode (`--mode=eventdev`) on DPDK's software event device
//! (`event_sw0`), its scheduler and adapters on a service core: the same
//! output as C's eventdev mode for LPM and FIB under each scheduling type,
//! EM and ACL as in poll mode, per-flow order kept under atomic and ordered
//! scheduling with two workers, every mbuf back after a stop under load,
//! and C's set-up errors as one line.

use std::collections::BTreeMap;
use std::time::Duration;

use testkit::{c_l3fwd, l3fwd_rs, run_cli, traffic, Outcome, Run};

/// Lcore 0 works, lcore 1 runs the scheduler and the adapters.
const EVENT_EAL: &[&str] = &["-s", "0x2", "--vdev=event_sw0"];
const EVENT_MODE: &[&str] = &["-p", "0x3", "--mode=eventdev", "--parse-ptype"];
const SCHEDS: [&str; 3] = ["atomic", "ordered", "parallel"];
const LPM_RULES: [&str; 2] = ["--rule_ipv4=configs/lpm_v4.cfg", "--rule_ipv6=configs/lpm_v6.cfg"];

/// `bin` in eventdev mode on two pcap ports receiving `inputs`, with `args`
/// (2 GB of memory: room for EM's tables).
fn event_run(bin: std::path::PathBuf, inputs: &[Vec<Vec<u8>>; 2], args: &[&str]) -> Outcome {
    let out = Run::new(bin)
        .memory_mb(2048)
        .lcores("0-1")
        .tx_files(1)
        .eal_args(EVENT_EAL)
        .port(inputs[0].clone())
        .port(inputs[1].clone())
        .args(EVENT_MODE)
        .args(args)
        .run();
    out.assert_success();
    out
}

/// The frames of each port, sorted: what is compared where the order may
/// differ.
fn sorted(ports: Vec<Vec<Vec<u8>>>) -> Vec<Vec<Vec<u8>>> {
    ports
        .into_iter()
        .map(|mut frames| {
            frames.sort();
            frames
        })
        .collect()
}

/// The frames a port sent, split by the input port each came from (found
/// by its bytes from the IPv4 addresses on, which forwarding leaves alone):
/// atomic and ordered scheduling keep each input queue's order (one flow
/// per queue on pcap ports, which have no RSS hash), but how the two input
/// streams interleave on an output port depends on the scheduler's timing.
fn by_input(frames: &[Vec<u8>], inputs: &[Vec<Vec<u8>>; 2]) -> [Vec<Vec<u8>>; 2] {
    let mut split = [Vec::new(), Vec::new()];
    for f in frames {
        let tail = f.get(26..);
        let from = inputs
            .iter()
            .position(|i| i.iter().any(|g| g.get(26..) == tail))
            .unwrap_or(0);
        split[from].push(f.clone());
    }
    split
}

/// Runs `a` and `b` on the same input and returns their frames per port.
/// A run whose service core stalls (the machine is shared) for longer
/// than the harness's idle time is stopped before it has sent
/// everything: when the two sent different numbers of frames, the pair is
/// run again, up to three times.
fn run_pair(a: impl Fn() -> Outcome, b: impl Fn() -> Outcome, what: &str) -> [Vec<Vec<Vec<u8>>>; 2] {
    let mut counts = Vec::new();
    for _ in 0..3 {
        let (a, b) = (a().per_port(), b().per_port());
        let count = |p: &Vec<Vec<Vec<u8>>>| p.iter().map(Vec::len).collect::<Vec<_>>();
        if count(&a) == count(&b) {
            return [a, b];
        }
        counts.push((count(&a), count(&b)));
    }
    panic!("{what}: frames per port differ in three runs: {counts:?}");
}

/// LPM and FIB under atomic, ordered and parallel scheduling: the frames
/// of each port are C's, those of each input port in C's order ([`by_input`]),
/// except under parallel scheduling, which lets the scheduler reorder
/// (compared as multisets there), and for FIB, whose C event loop's order
/// changes from run to run (multisets too).
/// C's FIB event loop sends invalid IPv4 frames back out of their input
/// port instead of dropping them (a listed difference): its traffic has
/// none.
#[test]
fn lpm_and_fib_match_c_under_each_scheduling_type() {
    let valid_only = trafficgen::Mix {
        runt: 0,
        invalid_v4: 0,
        ..trafficgen::Mix::default()
    };
    let opts = trafficgen::GenOpts::default();
    let fib_inputs = [
        trafficgen::generate(5, 600, &valid_only, &opts),
        trafficgen::generate(1005, 600, &valid_only, &opts),
    ];
    for (lookup, inputs) in [("--lookup=lpm", traffic(5, false)), ("--lookup=fib", fib_inputs)] {
        for sched in SCHEDS {
            let sched_arg = format!("--eventq-sched={sched}");
            let args = [&LPM_RULES[..], &[lookup, &sched_arg]].concat();
            let what = format!("{args:?}");
            let [c, rs] = run_pair(
                || event_run(c_l3fwd(), &inputs, &args),
                || event_run(l3fwd_rs(), &inputs, &args),
                &what,
            );
            let forwarded: usize = rs.iter().map(Vec::len).sum();
            assert!(forwarded > 1000, "{what}: only {forwarded} frames forwarded");
            if sched == "parallel" || lookup == "--lookup=fib" {
                assert!(sorted(c) == sorted(rs), "{what}: the ports' frames differ from C's");
            } else {
                for (port, (c, rs)) in c.iter().zip(&rs).enumerate() {
                    let (c, rs) = (by_input(c, &inputs), by_input(rs, &inputs));
                    for (from, (c, rs)) in c.iter().zip(&rs).enumerate() {
                        let first = c.iter().zip(rs).position(|(a, b)| a != b);
                        assert_eq!(
                            first, None,
                            "port {port}, from port {from}: first frame that differs, {what}"
                        );
                        assert_eq!(c.len(), rs.len(), "port {port}, from port {from}: {what}");
                    }
                }
            }
        }
    }
}

/// With vectors: each vector's packets forwarded with the same code and
/// sent back as one vector, the frames of each port C's (without vectors:
/// C's vectors crash on `event_sw`), for LPM and FIB under each scheduling
/// type, in C's order but for FIB (multisets: its order varies in C).
/// DPDK 22.11's software RX adapter loses vectors after its first flush,
/// so the input is what one flush carries: 128 frames on one port, four
/// vectors of 32 (`--software-rx-vectors` lets it run).
#[test]
fn vectors_forward_as_c_does_without() {
    let valid_only = trafficgen::Mix {
        runt: 0,
        invalid_v4: 0,
        ..trafficgen::Mix::default()
    };
    let inputs = [
        trafficgen::generate(11, 128, &valid_only, &trafficgen::GenOpts::default()),
        Vec::new(),
    ];
    for lookup in ["--lookup=lpm", "--lookup=fib"] {
        for sched in SCHEDS {
            let sched_arg = format!("--eventq-sched={sched}");
            let args = [&LPM_RULES[..], &[lookup, &sched_arg]].concat();
            let vectors = [&args[..], &["--event-vector", "--software-rx-vectors"]].concat();
            let what = format!("{vectors:?}");
            let [c, rs] = run_pair(
                || event_run(c_l3fwd(), &inputs, &args),
                || event_run(l3fwd_rs(), &inputs, &vectors),
                &what,
            );
            let forwarded: usize = rs.iter().map(Vec::len).sum();
            assert_eq!(forwarded, 128, "{what}: frames forwarded");
            assert!(
                rs.iter().all(|p| !p.is_empty()),
                "{what}: vectors split over both ports"
            );
            if lookup == "--lookup=fib" {
                assert!(sorted(c) == sorted(rs), "{what}: the ports' frames differ from C's");
            } else {
                assert!(c == rs, "{what}: the ports' frames differ from C's");
            }
        }
    }
}

/// C's EM event mode crashes; l3fwd-rs's forwards as its poll mode does,
/// and ACL's event mode classifies with ACL (C runs LPM's loop there): the
/// same frames per port as the poll-mode run (the RX adapter interleaves
/// the two ports' input its own way, so compared as multisets).
#[test]
fn em_and_acl_forward_as_in_poll_mode() {
    let em_inputs = traffic(9, true);
    let acl_inputs = traffic(9, false);
    let acl = [
        "--lookup=acl",
        "--rule_ipv4=configs/acl_v4.cfg",
        "--rule_ipv6=configs/acl_v6.cfg",
    ];
    for (inputs, mode) in [(&em_inputs, &["-E"][..]), (&acl_inputs, &acl[..])] {
        let poll = || {
            let out = Run::new(l3fwd_rs())
                .memory_mb(2048)
                .port(inputs[0].clone())
                .port(inputs[1].clone())
                .two_ports()
                .args(mode)
                .run();
            out.assert_success();
            out
        };
        let event = || event_run(l3fwd_rs(), inputs, mode);
        let [poll, event] = run_pair(poll, event, &format!("{mode:?}"));
        let forwarded: usize = event.iter().map(Vec::len).sum();
        assert!(forwarded > 300, "{mode:?}: only {forwarded} frames forwarded");
        assert!(
            sorted(poll) == sorted(event),
            "{mode:?}: eventdev frames differ from poll mode's"
        );
    }
}

/// Frames of `flows` UDP flows to port 1, interleaved, each carrying its
/// flow's sequence number in the last 4 bytes of its payload.
fn sequenced_flows(flows: u16, per_flow: u32) -> Vec<Vec<u8>> {
    let mut frames = Vec::new();
    for seq in 0..per_flow {
        for flow in 0..flows {
            let mut f = testkit::frames::udp4_ports([198, 18, 0, 7], [198, 18, 1, 9], (5000 + flow, 9), 64, 26);
            let end = f.len();
            f[end - 4..].copy_from_slice(&seq.to_be_bytes());
            frames.push(f);
        }
    }
    frames
}

/// Flows (by UDP source port) whose frames left out of order.
fn reordered_flows(sent: &[Vec<u8>]) -> Vec<u16> {
    let mut last: BTreeMap<u16, u32> = BTreeMap::new();
    let mut reordered = Vec::new();
    for f in sent {
        let flow = u16::from_be_bytes([f[34], f[35]]);
        let seq = u32::from_be_bytes(f[f.len() - 4..].try_into().unwrap());
        if last.insert(flow, seq).is_some_and(|prev| prev > seq) && !reordered.contains(&flow) {
            reordered.push(flow);
        }
    }
    reordered
}

/// Two workers (lcores 0 and 2 time-sharing CPU 0), the scheduler on
/// lcore 1 (CPU 1): under atomic and ordered scheduling every flow leaves in the
/// order it came, though the flows are spread over both workers.
#[test]
fn per_flow_order_is_kept_under_atomic_and_ordered() {
    let input = sequenced_flows(16, 250);
    for sched in ["atomic", "ordered"] {
        let out = Run::new(l3fwd_rs())
            .lcores("0@0,1@1,2@0")
            .tx_files(1)
            .eal_args(EVENT_EAL)
            .port(input.clone())
            .port(Vec::new())
            .args(&["-p", "0x3", "--mode=eventdev", &format!("--eventq-sched={sched}")])
            .stats_json()
            .run();
        out.assert_success();
        let sent = &out.per_port()[1];
        assert_eq!(sent.len(), input.len(), "{sched}: frames sent on port 1");
        assert_eq!(reordered_flows(sent), Vec::<u16>::new(), "{sched}: flows out of order");
        let lcores = out.stats.as_ref().unwrap()["lcores"].as_array().unwrap().clone();
        let busy = lcores.iter().filter(|l| l["tx"].as_u64().unwrap_or(0) > 0).count();
        assert_eq!(busy, 2, "{sched}: both workers forward: {lcores:?}");
    }
}

/// Stopped while the ports replay their files as fast as they can: the
/// events in flight are drained or freed, and every mbuf is back.
#[test]
fn stop_under_load_gives_every_mbuf_back() {
    let inputs = traffic(3, false);
    let out = Run::new(l3fwd_rs())
        .lcores("0-1")
        .tx_files(1)
        .eal_args(EVENT_EAL)
        .port(inputs[0].clone())
        .port(inputs[1].clone())
        .infinite_rx()
        .stop_with("INT", Duration::from_secs(2))
        .args(EVENT_MODE)
        .stats_json()
        .run();
    out.assert_success();
    let s = out.stats.as_ref().expect("--stats-json written and parsed");
    let rx = s["forwarded"]["rx"].as_u64().unwrap();
    assert!(rx > 10_000, "not under load: {rx} received");
    // Every mbuf back; what the RX adapter freed after the stop is counted
    // (by its lcore, as received and dropped at-stop): received = sent +
    // dropped.
    testkit::assert_accounted(s, 0);
    let lcores = s["lcores"].as_array().unwrap();
    let role = |r: &str| lcores.iter().find(|l| l["role"] == r);
    assert!(role("event_worker").is_some(), "{lcores:?}");
    let adapter = role("rx_adapter").unwrap_or_else(|| panic!("no drops at stop counted: {lcores:?}"));
    assert!(adapter["dropped_at_stop"].as_u64().unwrap() > 0, "{adapter}");
    // The drivers' own count (per RX queue) agrees.
    let queue_rx = |p: &serde_json::Value| -> u64 {
        let queues = p["rx_queue_packets"].as_array().unwrap();
        queues.iter().map(|q| q.as_u64().unwrap()).sum()
    };
    let driver_rx: u64 = s["ports"].as_array().unwrap().iter().map(queue_rx).sum();
    assert_eq!(driver_rx, rx, "{s}");
}

/// C's set-up errors, each one line here (and an exit 1 in C as here): no
/// event device, no service core for the software scheduler, `--config`
/// in event mode.
#[test]
fn bad_event_setups_are_one_line_errors() {
    let cases: [(&[&str], &[&str], &str); 3] = [
        (
            &["-l", "0", "--vdev=net_null0"],
            &[],
            "no event device: give one to EAL, e.g. --vdev=event_sw0",
        ),
        (
            &["-l", "0", "--vdev=event_sw0", "--vdev=net_null0"],
            &[],
            "event_sw0_service needs a service core: give one with -s COREMASK",
        ),
        (
            &["-l", "0-1", "-s", "0x2", "--vdev=event_sw0", "--vdev=net_null0"],
            &["--config", "(0,0,0)"],
            "lcore config is not valid when event mode is selected",
        ),
    ];
    for (eal, extra, expected) in cases {
        let app = [&["-p", "0x1", "--mode=eventdev"][..], extra].concat();
        let rs = run_cli(&l3fwd_rs(), eal, &app);
        let line = rs.error_line();
        assert!(line.contains(expected), "{eal:?} {app:?}: {line}");
        let c = run_cli(&c_l3fwd(), eal, &app);
        assert_eq!(c.status.code(), Some(1), "C with {eal:?} {app:?}: {}", c.stderr);
    }
}

/// `--event-vector` where the RX adapter is DPDK's software one
/// (`event_sw`'s): a size or timeout outside what it takes is one line,
/// and vectors themselves are refused in one line, since that adapter
/// loses the vectors it makes (with their packets). C's generic path
/// never asks its adapter for vectors yet runs its vector loop, which
/// takes each packet for a vector and crashes (SIGSEGV).
#[test]
fn event_vectors_on_the_software_adapter_are_one_line_errors() {
    let eal = ["-l", "0-1", "-s", "0x2", "--vdev=event_sw0", "--vdev=net_null0"];
    const VECTORS: &[&str] = &["-p", "0x1", "--mode=eventdev", "--parse-ptype", "--event-vector"];
    let cases: [(&[&str], &str); 3] = [
        (
            &[],
            "--event-vector: the RX adapter here is DPDK's software one, which loses event vectors",
        ),
        (
            &["--event-vector-size", "2048"],
            "--event-vector-size 2048: the event device's RX adapter takes 4 to 1024",
        ),
        (
            &["--event-vector-tmo=10"],
            "--event-vector-tmo 10: the event device's RX adapter takes 100000 to 1000000000 ns",
        ),
    ];
    for (extra, expected) in cases {
        let app = [VECTORS, extra].concat();
        let line = run_cli(&l3fwd_rs(), &eal, &app).error_line().to_owned();
        assert!(line.contains(expected), "{app:?}: {line}");
    }
    let c = run_cli(&c_l3fwd(), &eal, VECTORS);
    assert_eq!(c.status.code(), None, "C: {}", c.stderr);
}

/// Why `--event-vector` is refused on `event_sw`: past its first flush,
/// DPDK 22.11's software RX adapter loses vectors with their packets (it
/// writes them outside the live part of its buffer). If a DPDK update
/// fixes it, this fails, and the refusal can go.
#[test]
fn the_software_adapter_loses_vectors_past_its_first_flush() {
    let inputs = traffic(13, false);
    let out = Run::new(l3fwd_rs())
        .lcores("0-1")
        .tx_files(1)
        .eal_args(EVENT_EAL)
        .port(inputs[0].clone())
        .port(inputs[1].clone())
        .args(EVENT_MODE)
        .args(&["--event-vector", "--software-rx-vectors"])
        .stats_json()
        .run();
    let s = out.stats.as_ref().expect("stats");
    let [before, after] = [0, 1].map(|i| s["mbufs_in_use"][i].as_u64().unwrap());
    assert!(after > before, "no mbuf lost: {s}");
    assert!(out.stderr.contains("event vectors: "), "{}", out.stderr);
}
