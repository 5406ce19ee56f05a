//! The forwarder under hostile traffic and at shutdown, through the real
//! binary: every packet received is either transmitted or counted as a
//! drop, every mbuf comes back to its pool, TX refusals are freed and
//! counted, SIGINT/SIGTERM flush every TX buffer, and two lcores on two RX
//! queues per port forward correctly with per-queue counters that add up.

use std::time::Duration;

use crate::oracle::{check, Decision};
use l3fwd_modes::ModeInfo;
use l3fwd_rs::dataplane::mode::{Em, Lpm, Mode};
use serde_json::Value;
use testkit::frames::*;
use testkit::{l3fwd_rs, Outcome, Run, TWO_PORTS};
use trafficgen::{generate, GenOpts, Mix};

/// Two lcores, each polling queue N of both ports (and sending on TX queue N).
const TWO_LCORES: &[&str] = &["-p", "0x3", "--config", "(0,0,0),(0,1,1),(1,0,0),(1,1,1)"];

/// A small deterministic generator (the tests need no statistical quality).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// What a broken or hostile sender puts on the wire: any length up to 2048
/// (often shorter than the headers, a few jumbo frames that the pcap port
/// chains over several mbufs), IPv4/IPv6/VLAN/ARP or random ethertypes, any
/// version/IHL byte and total length, often with a routed destination.
fn hostile_frames(seed: u64, count: usize) -> Vec<Vec<u8>> {
    const ETHERTYPES: [[u8; 2]; 5] = [[0x08, 0x00], [0x86, 0xdd], [0x81, 0x00], [0x08, 0x06], [0x12, 0x34]];
    let mut rng = Lcg(seed);
    (0..count)
        .map(|i| {
            let len = match i % 25 {
                0 => 2049 + rng.below(7000),
                1..=8 => rng.below(64),
                _ => rng.below(2049),
            };
            let mut f: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
            if len >= 14 {
                f[12..14].copy_from_slice(&ETHERTYPES[rng.below(ETHERTYPES.len())]);
            }
            if len > 14 && rng.below(2) == 0 {
                f[14] = [0x45, 0x46, 0x4f, 0x60][rng.below(4)];
            }
            if len >= 34 && rng.below(2) == 0 {
                f[30..34].copy_from_slice(&[198, 18, rng.below(3) as u8, 1]);
            }
            f
        })
        .collect()
}

/// Valid, invalid, non-IP and runt frames from the traffic generator, then
/// hostile ones.
fn mixed_traffic(seed: u64, em: bool) -> Vec<Vec<u8>> {
    let mix = Mix {
        runt: 2,
        ..Mix::default()
    };
    let opts = GenOpts {
        min_size: 60,
        max_size: 1514,
        em,
        ..GenOpts::default()
    };
    let mut frames = generate(seed, 600, &mix, &opts);
    frames.extend(hostile_frames(seed, 400));
    frames
}

/// Small frames, endlessly replayed: enough work to keep the TX buffers
/// busy at shutdown without writing much.
fn small_traffic(seed: u64) -> Vec<Vec<u8>> {
    let mix = Mix {
        runt: 1,
        ..Mix::default()
    };
    let opts = GenOpts {
        min_size: 60,
        max_size: 96,
        ..GenOpts::default()
    };
    generate(seed, 500, &mix, &opts)
}

fn count(frames: &[Vec<Vec<u8>>], mode: &ModeInfo, decision: Decision) -> u64 {
    frames.iter().flatten().filter(|f| check(f, mode) == decision).count() as u64
}

fn stats(out: &Outcome) -> &Value {
    out.assert_success();
    out.stats.as_ref().expect("--stats-json written")
}

fn num(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

/// `forwarded.{rx, tx, dropped_invalid, dropped_runt, dropped_tx_full}`.
fn forwarded(s: &Value) -> [u64; 5] {
    ["rx", "tx", "dropped_invalid", "dropped_runt", "dropped_tx_full"].map(|k| num(&s["forwarded"][k]))
}

/// An lcore's cycle accounting agrees with its packets: every poll that
/// brought packets brought 1 to 32 of them, and receiving took cycles.
fn assert_load_accounted(l: &Value) {
    let (rx, polls, empty) = (num(&l["rx"]), num(&l["polls"]), num(&l["empty_polls"]));
    let nonempty = polls - empty.min(polls);
    assert!(empty <= polls && nonempty <= rx && rx <= 32 * nonempty, "polls: {l}");
    if rx > 0 {
        assert!(num(&l["busy_cycles"]) > 0, "no busy cycles: {l}");
        let fill = l["load"]["packets_per_poll"].as_f64().unwrap();
        assert!((1.0..=32.0).contains(&fill), "burst fill: {l}");
        assert!(l["load"]["cycles_per_packet"].as_f64().unwrap() > 0.0, "{l}");
    }
}

/// Every packet received (some) was sent or counted as a drop, the
/// counts agree ([`testkit::assert_accounted`]), each lcore's load adds up,
/// and the mbufs in use after the ports stopped are those before they
/// started plus `held` (still in a loopback ring). Returns the forwarded
/// counters.
fn assert_accounted(s: &Value, held: u64) -> [u64; 5] {
    let [rx, tx, invalid, runt, tx_full] = forwarded(s);
    assert!(rx > 0, "nothing received: {s}");
    testkit::assert_accounted(s, held);
    for l in s["lcores"].as_array().unwrap() {
        assert_load_accounted(l);
    }
    [rx, tx, invalid, runt, tx_full]
}

fn frames_written(out: &Outcome) -> u64 {
    out.outputs.iter().flatten().map(|f| f.len() as u64).sum()
}

/// Mixed and malformed traffic through both ports, in `mode`: each frame
/// gets the oracle's decision (forwarded, or dropped and counted under the
/// right name), every forwarded frame is in an output file, and the mbufs
/// in use are back to their count before forwarding.
fn assert_malformed_traffic_accounted(mode: &ModeInfo) {
    let em = *mode == Em::INFO;
    let inputs = [mixed_traffic(1, em), mixed_traffic(2, em)];
    let mode_args = ["--lookup", mode.name];
    let out = Run::new(l3fwd_rs())
        .port(inputs[0].clone())
        .port(inputs[1].clone())
        .two_ports()
        .args(&mode_args)
        .stats_json()
        .run();
    let s = stats(&out);
    let [rx, tx, invalid, runt, tx_full] = assert_accounted(s, 0);
    assert_eq!(rx, inputs.iter().map(|i| i.len() as u64).sum::<u64>());
    assert_eq!(tx, count(&inputs, mode, Decision::Forward), "forwarded: {s}");
    assert_eq!(invalid, count(&inputs, mode, Decision::DropInvalid), "invalid: {s}");
    assert_eq!(runt, count(&inputs, mode, Decision::DropRunt), "runts: {s}");
    assert!(runt > 100 && invalid > 10, "too few malformed frames: {s}");
    assert_eq!(tx_full, 0, "a pcap port never refuses");
    assert_eq!(frames_written(&out), tx, "frames in the output files");
}

/// ACL mode drops what matches a deny rule, what matches no rule and what
/// is not IP, each under its own name: with malformed frames too, every
/// packet is sent or counted once, and every mbuf comes back.
#[test]
fn malformed_traffic_acl_every_packet_counted_under_its_drop() {
    let inputs = [mixed_traffic(1, false), mixed_traffic(2, false)];
    let acl = [
        "--lookup=acl",
        "--rule_ipv4=configs/acl_v4.cfg",
        "--rule_ipv6=configs/acl_v6.cfg",
    ];
    let out = Run::new(l3fwd_rs())
        .port(inputs[0].clone())
        .port(inputs[1].clone())
        .two_ports()
        .args(&acl)
        .stats_json()
        .run();
    let s = stats(&out);
    let [rx, tx, invalid, runt] = ["rx", "tx", "dropped_invalid", "dropped_runt"].map(|k| num(&s["forwarded"][k]));
    let [denied, no_rule] = ["dropped_denied", "dropped_no_rule"].map(|k| num(&s["forwarded"][k]));
    assert_eq!(rx, inputs.iter().map(|i| i.len() as u64).sum::<u64>());
    testkit::assert_accounted(s, 0);
    assert!(
        tx > 100 && denied > 10 && no_rule > 100 && runt > 10 && invalid > 0,
        "{s}"
    );
    assert_eq!(frames_written(&out), tx);
    let [before, after] = [0, 1].map(|i| num(&s["mbufs_in_use"][i]));
    assert_eq!(before, after, "mbufs: {s}");
    assert!(
        out.stdout.contains(&format!("denied {denied} no-rule {no_rule}")),
        "{}",
        out.stdout
    );
}

#[test]
fn malformed_traffic_lpm_every_packet_and_mbuf_accounted() {
    assert_malformed_traffic_accounted(&Lpm::INFO);
}

#[test]
fn malformed_traffic_em_every_packet_and_mbuf_accounted() {
    assert_malformed_traffic_accounted(&Em::INFO);
}

/// A net_ring port sends into a ring of 1023 slots that loops back to its
/// own RX queue, and routed traffic from an endless pcap port keeps it
/// full: the packets the ring refuses are freed and counted as tx-full, and
/// every mbuf is accounted for (back in the pool, or still in the ring).
#[test]
fn tx_ring_refusals_are_freed_and_counted() {
    let to_ring: Vec<Vec<u8>> = (0..64)
        .map(|i| udp4([10, 0, 0, i], [198, 18, 1, i], 64, 18))
        .chain([udp4([10, 0, 0, 1], [198, 18, 1, 1], 64, 18)[..30].to_vec()])
        .collect();
    let out = Run::new(l3fwd_rs())
        .port(to_ring)
        .ring_port()
        .infinite_rx()
        .stop_with("INT", Duration::from_millis(300))
        .two_ports()
        .stats_json()
        .run();
    let s = stats(&out);
    let ring = &s["ports"][1];
    let in_ring = num(&ring["tx_packets"]) - num(&ring["rx_packets"]);
    assert!(in_ring > 0 && in_ring <= 1023, "ring holds {in_ring}: {s}");
    let [_, _, _, runt, tx_full] = assert_accounted(s, in_ring);
    assert!(tx_full > 0, "no TX refusal: {s}");
    assert!(runt > 0, "the runt was not counted: {s}");
}

/// Endless traffic on both ports and a signal mid-stream: the exit flushes
/// every TX buffer before the ports stop, so every received packet was
/// sent (and is in an output file) or counted as a drop, and no mbuf is
/// left out of its pool.
fn assert_signal_flushes(signal: &'static str, lcores: &str, args: &[&str], queues: usize) {
    let port = |seed: u64| (0..queues).map(|q| small_traffic(seed * 10 + q as u64)).collect();
    let out = Run::new(l3fwd_rs())
        .port_queues(port(1))
        .port_queues(port(2))
        .infinite_rx()
        .lcores(lcores)
        .stop_with(signal, Duration::from_millis(200))
        .args(args)
        .stats_json()
        .run();
    let s = stats(&out);
    let [_, tx, invalid, runt, tx_full] = assert_accounted(s, 0);
    assert!(tx > 0 && invalid > 0 && runt > 0, "{s}");
    assert_eq!(tx_full, 0, "a pcap port never refuses");
    assert_eq!(frames_written(&out), tx, "frames in the output files");
}

#[test]
fn sigint_flushes_every_tx_buffer() {
    assert_signal_flushes("INT", "0", TWO_PORTS, 1);
}

#[test]
fn sigterm_flushes_every_tx_buffer_of_two_lcores() {
    assert_signal_flushes("TERM", "0-1", TWO_LCORES, 2);
}

/// The frames of one RX queue, each with the port it should leave by
/// (None: dropped).
type QueueFrames = Vec<(Vec<u8>, Option<u8>)>;

/// Frames for RX queue `queue` of `port`, `n` of them, each tagged in its
/// last 3 bytes with (port, queue, index), and where each should leave:
/// routed to port 0 or 1, missed (back to the input port), non-IP (back),
/// or dropped (invalid header, runt).
fn tagged_frames(port: u8, queue: u8, n: u8) -> QueueFrames {
    (0..n)
        .map(|i| {
            let (mut f, to) = match i % 7 {
                0 => (udp4([10, 0, 0, 1], [198, 18, 0, 9], 64, 30), Some(0)),
                1 => (udp4([10, 0, 0, 1], [198, 18, 1, 9], 64, 30), Some(1)),
                2 => (udp6(v6_in_route(9, 1), v6_in_route(1, 5), 64, 30), Some(1)),
                3 => (udp4([10, 0, 0, 1], [10, 9, 9, 9], 64, 30), Some(port)),
                4 => (non_ip(60), Some(port)),
                5 => {
                    let mut bad = udp4([10, 0, 0, 1], [198, 18, 1, 9], 64, 30);
                    bad[14] = 0x44;
                    (bad, None)
                }
                _ => (udp4([10, 0, 0, 1], [198, 18, 1, 9], 64, 30)[..33].to_vec(), None),
            };
            let len = f.len();
            f[len - 3..].copy_from_slice(&[port, queue, i]);
            (f, to)
        })
        .collect()
}

/// Two lcores, two RX queues per port, each lcore polling queue N of both
/// ports and sending on TX queue N: every frame leaves once, rewritten, by
/// the right port and the TX queue of the lcore that received it, in the
/// order it came; the port's per-queue counters, the lcores' counters and
/// the totals all add up.
#[test]
fn two_lcores_two_rx_queues_per_port_forward_and_count_per_queue() {
    // Different sizes per queue, so that no sum matches by accident.
    let sizes = [[40u8, 61], [75, 96]];
    let queues: Vec<Vec<QueueFrames>> = (0..2)
        .map(|p| {
            (0..2)
                .map(|q| tagged_frames(p, q, sizes[p as usize][q as usize]))
                .collect()
        })
        .collect();
    let frames_of = |p: usize| {
        queues[p]
            .iter()
            .map(|q| q.iter().map(|(f, _)| f.clone()).collect())
            .collect()
    };
    let out = Run::new(l3fwd_rs())
        .port_queues(frames_of(0))
        .port_queues(frames_of(1))
        .lcores("0-1")
        .args(TWO_LCORES)
        .stats_json()
        .run();
    let s = stats(&out);
    assert_accounted(s, 0);

    // Where each frame went: output port d, TX queue q (= the lcore that
    // polls RX queue q), in order per input port.
    for (d, files) in out.outputs.iter().enumerate() {
        for (q, file) in files.iter().enumerate() {
            for p in 0..2u8 {
                let expected: Vec<&Vec<u8>> = queues[p as usize][q]
                    .iter()
                    .filter(|(_, to)| *to == Some(d as u8))
                    .map(|(f, _)| f)
                    .collect();
                let got: Vec<&Vec<u8>> = file.iter().filter(|f| f[f.len() - 3] == p).collect();
                assert_eq!(got.len(), expected.len(), "port {d} TX queue {q}, from port {p}");
                for (sent, o) in expected.iter().zip(got) {
                    assert_eq!(o[o.len() - 3..], sent[sent.len() - 3..], "order, port {d} queue {q}");
                    assert_forwarded(sent, o, d as u8, next_hop_mac(d as u8));
                }
            }
        }
    }

    // Counters: per RX queue (the port's), per lcore (ours), per TX queue.
    for p in 0..2 {
        let per_queue: Vec<u64> = s["ports"][p]["rx_queue_packets"]
            .as_array()
            .unwrap()
            .iter()
            .map(num)
            .collect();
        assert_eq!(per_queue, sizes[p].map(u64::from), "port {p} per-queue RX");
        let tx_per_queue: Vec<u64> = s["ports"][p]["tx_queue_packets"]
            .as_array()
            .unwrap()
            .iter()
            .map(num)
            .collect();
        let written: Vec<u64> = out.outputs[p].iter().map(|f| f.len() as u64).collect();
        assert_eq!(tx_per_queue, written, "port {p} per-queue TX");
    }
    for (q, lcore) in s["lcores"].as_array().unwrap().iter().enumerate() {
        assert_eq!(lcore["rx_queues"], serde_json::json!([[0, q], [1, q]]), "{s}");
        assert_eq!(num(&lcore["rx"]), u64::from(sizes[0][q] + sizes[1][q]), "lcore {q} rx");
        let sent: u64 = out.outputs.iter().map(|files| files[q].len() as u64).sum();
        assert_eq!(num(&lcore["tx"]), sent, "lcore {q} tx");
        let dropped = (0..2)
            .flat_map(|p| &queues[p][q])
            .filter(|(_, to)| to.is_none())
            .count();
        assert_eq!(
            num(&lcore["dropped_invalid"]) + num(&lcore["dropped_runt"]),
            dropped as u64,
            "lcore {q} drops"
        );
    }
}

/// Ports whose drivers take the whole pool at start: two pcap ports
/// replaying 4096 frames each keep 8192 mbufs, the default pool's size.
/// l3fwd-rs then says so before forwarding, with the `--num-mbufs` that
/// leaves room, rather than forwarding nothing in silence, and marks the
/// starved ports while forwarding (rate lines, `--stats-json`); given that
/// size, the same run forwards, unmarked.
#[test]
fn a_pool_the_ports_fill_at_start_is_named_with_the_size_that_fits() {
    let frames = |seed: u8| -> Vec<Vec<u8>> {
        (0..4096u32)
            .map(|i| {
                udp4(
                    [10, seed, (i >> 8) as u8, i as u8],
                    [198, 18, 0, (i % 250) as u8],
                    64,
                    18,
                )
            })
            .collect()
    };
    let run = |extra: &[&str]| {
        Run::new(l3fwd_rs())
            .port(frames(1))
            .port(frames(2))
            .infinite_rx()
            .stop_with("INT", Duration::from_millis(1500))
            .two_ports()
            .args(&["--stats-interval", "1"])
            .args(extra)
            .stats_json()
            .run()
    };
    let starved = run(&[]);
    let tx = |out: &Outcome| num(&stats(out)["forwarded"]["tx"]);
    assert_eq!(tx(&starved), 0, "the default pool left room: {}", starved.stderr);
    let warning = starved
        .stderr
        .lines()
        .find(|l| l.contains("drivers hold 8192 of the pools' 8192"))
        .unwrap_or_else(|| panic!("no warning: {}", starved.stderr));
    let size = warning
        .split("--num-mbufs ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("no size in: {warning}"));
    // While forwarding, the rate line and the JSON say which ports starve.
    let empty_seconds = |out: &Outcome| -> Vec<u64> {
        let ports = stats(out)["ports"].as_array().expect("ports").clone();
        ports.iter().map(|p| num(&p["pool_empty_seconds"])).collect()
    };
    let rate_line = starved
        .stdout
        .lines()
        .find(|l| l.contains("Mpps |"))
        .unwrap_or_else(|| panic!("no rate line: {}", starved.stdout));
    assert_eq!(rate_line.matches("Mpps pool empty |").count(), 2, "{rate_line}");
    assert!(empty_seconds(&starved).iter().all(|&s| s >= 1), "{:?}", stats(&starved));
    assert!(
        starved.stdout.contains("port 0: its pool was empty for"),
        "{}",
        starved.stdout
    );

    let fed = run(&["--num-mbufs", size]);
    assert!(
        tx(&fed) > 0,
        "--num-mbufs {size}: still nothing forwarded: {}",
        fed.stderr
    );
    assert!(!fed.stderr.contains("drivers hold"), "{}", fed.stderr);
    assert!(!fed.stdout.contains("pool empty"), "{}", fed.stdout);
    assert_eq!(empty_seconds(&fed), [0, 0]);
}
