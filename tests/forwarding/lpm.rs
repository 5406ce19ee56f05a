//! LPM forwarding through the real binary on pcap ports: routes, misses,
//! disabled ports, invalid and non-IP frames, runts, --eth-dest, two lcores,
//! and the TX drain over ports the lcore does not receive on.

use testkit::frames::*;
use testkit::{l3fwd_rs, Run, TWO_PORTS};

/// Sends `frames` into port 0 of a two-port l3fwd-rs and returns what each
/// port sent, and the process's stdout.
fn forward_from_port0(frames: Vec<Vec<u8>>, args: &[&str]) -> (Vec<Vec<Vec<u8>>>, String) {
    let out = Run::new(l3fwd_rs()).port(frames).port(Vec::new()).args(args).run();
    out.assert_success();
    (out.per_port(), out.stdout.clone())
}

#[test]
fn routes_go_to_their_port_with_macs_ttl_and_checksum_rewritten() {
    let to1_v4 = udp4([10, 0, 0, 1], [198, 18, 1, 77], 64, 30);
    let to1_v6 = udp6(v6_in_route(9, 1), v6_in_route(1, 5), 64, 30);
    let to0_v4 = udp4([10, 0, 0, 1], [198, 18, 0, 3], 2, 18);
    let (out, _) = forward_from_port0(vec![to1_v4.clone(), to1_v6.clone(), to0_v4.clone()], TWO_PORTS);
    assert_eq!(out[1].len(), 2);
    assert_forwarded(&to1_v4, &out[1][0], 1, next_hop_mac(1));
    assert_forwarded(&to1_v6, &out[1][1], 1, next_hop_mac(1));
    assert_eq!(out[0].len(), 1);
    assert_forwarded(&to0_v4, &out[0][0], 0, next_hop_mac(0));
}

#[test]
fn misses_disabled_ports_and_non_ip_return_to_the_input_port() {
    let miss_v4 = udp4([10, 0, 0, 1], [10, 9, 9, 9], 64, 30);
    let miss_v6 = udp6(v6_in_route(1, 1), [0xfe; 16], 64, 30);
    // 198.18.5.0/24 routes to port 5, which -p 0x3 does not enable: the
    // rule is not loaded, so the packet misses.
    let disabled_v4 = udp4([10, 0, 0, 1], [198, 18, 5, 1], 64, 30);
    let disabled_v6 = udp6(v6_in_route(1, 1), v6_in_route(5, 1), 64, 30);
    let arp = non_ip(60);
    let sent = vec![miss_v4, miss_v6, disabled_v4, disabled_v6, arp];
    let (out, _) = forward_from_port0(sent.clone(), TWO_PORTS);
    assert!(out[1].is_empty(), "nothing for port 1");
    assert_eq!(out[0].len(), sent.len());
    for (s, o) in sent.iter().zip(&out[0]) {
        assert_forwarded(s, o, 0, next_hop_mac(0));
    }
}

#[test]
fn invalid_ipv4_headers_and_runts_are_dropped_and_counted() {
    let good = udp4([10, 0, 0, 1], [198, 18, 1, 1], 64, 30);
    let mut bad_version = good.clone();
    bad_version[14] = 0x65;
    let mut bad_ihl = good.clone();
    bad_ihl[14] = 0x44;
    let mut short_total = good.clone();
    short_total[16..18].copy_from_slice(&19u16.to_be_bytes());
    let runt_v4 = good[..33].to_vec();
    let runt_v6 = udp6(v6_in_route(1, 1), v6_in_route(1, 2), 64, 0)[..53].to_vec();
    let runt_eth = good[..13].to_vec();
    let sent = vec![
        bad_version,
        good.clone(),
        bad_ihl,
        short_total,
        runt_v4,
        runt_v6,
        runt_eth,
    ];
    let (out, stdout) = forward_from_port0(sent, TWO_PORTS);
    assert!(out[0].is_empty());
    assert_eq!(out[1].len(), 1, "only the valid frame");
    assert_forwarded(&good, &out[1][0], 1, next_hop_mac(1));
    assert!(stdout.contains("dropped: invalid 3 runt 3"), "{stdout}");
}

#[test]
fn eth_dest_sets_the_next_hop_mac() {
    let sent = vec![udp4([10, 0, 0, 1], [198, 18, 1, 1], 64, 30)];
    let args = [TWO_PORTS, &["--eth-dest=1,aa:bb:cc:dd:ee:ff"]].concat();
    let (out, _) = forward_from_port0(sent.clone(), &args);
    assert_forwarded(&sent[0], &out[1][0], 1, [0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff]);
}

#[test]
fn two_lcores_each_forward_their_port() {
    let from0 = vec![udp4([10, 0, 0, 1], [198, 18, 1, 1], 64, 30); 40];
    let from1 = vec![udp4([10, 0, 0, 2], [198, 18, 0, 1], 64, 30); 50];
    let out = Run::new(l3fwd_rs())
        .lcores("0-1")
        .port(from0.clone())
        .port(from1.clone())
        .args(&["-p", "0x3", "--config", "(0,0,0),(1,0,1)"])
        .run();
    out.assert_success();
    // Each lcore has its own TX queue (file) on every port: lcore 0 sends
    // port 0's traffic out of port 1 on queue 0, lcore 1 the reverse.
    assert_eq!(out.outputs[1][0].len(), 40);
    assert_eq!(out.outputs[0][1].len(), 50);
    assert!(out.outputs[0][0].is_empty() && out.outputs[1][1].is_empty());
    assert_forwarded(&from0[0], &out.outputs[1][0][0], 1, next_hop_mac(1));
    assert_forwarded(&from1[0], &out.outputs[0][1][0], 0, next_hop_mac(0));
}

/// The upstream bug fixed in 2016: the drain timer must flush the TX buffers
/// of every port the lcore transmits on, not only the ports it receives
/// from. Lcore 0 receives on port 0 only and routes fewer packets than a
/// burst to port 1: they must leave while the forwarder still runs. With
/// `--c-drain`, only the timer flushes, as in C.
#[test]
fn drain_flushes_ports_the_lcore_does_not_receive_on() {
    let few = vec![udp4([10, 0, 0, 1], [198, 18, 1, 1], 64, 30); 5];
    let out = Run::new(l3fwd_rs())
        .lcores("0-1")
        .port(few)
        .port(Vec::new())
        .args(&["-p", "0x3", "--config", "(0,0,0),(1,0,1)", "--c-drain"])
        .run();
    out.assert_success();
    assert_eq!(out.before_stop[1][0].len(), 5, "sent on port 1 before shutdown");
}

/// With the drain timer set beyond the run, fewer packets than a burst
/// leave at once when the RX queues run dry (the default), and only at
/// shutdown with `--c-drain` (C's timing: the timer or a full buffer).
#[test]
fn idle_lcore_flushes_at_once_unless_c_drain() {
    let few = vec![udp4([10, 0, 0, 1], [198, 18, 1, 1], 64, 30); 5];
    let run = |extra: &[&str]| {
        let out = Run::new(l3fwd_rs())
            .port(few.clone())
            .port(Vec::new())
            .two_ports()
            .args(&["--drain-us", "100000000"])
            .args(extra)
            .run();
        out.assert_success();
        out
    };
    let idle_flush = run(&[]);
    assert_eq!(idle_flush.before_stop[1][0].len(), 5, "sent while running");
    let c_drain = run(&["--c-drain"]);
    assert_eq!(c_drain.before_stop[1][0].len(), 0, "held until the timer or shutdown");
    assert_eq!(c_drain.outputs[1][0].len(), 5, "flushed at shutdown");
}

/// `--tx-burst 4`: a port's buffer goes out once it holds 4 packets, so of
/// 5 packets 4 leave while the forwarder runs (the timer is beyond the run
/// and C's timing is on) and the fifth at shutdown; `--rx-burst 2` polls 2
/// at a time and loses nothing.
#[test]
fn tx_and_rx_burst_sizes() {
    let few = vec![udp4([10, 0, 0, 1], [198, 18, 1, 1], 64, 30); 5];
    let out = Run::new(l3fwd_rs())
        .port(few)
        .port(Vec::new())
        .two_ports()
        .args(&[
            "--c-drain",
            "--drain-us",
            "100000000",
            "--tx-burst",
            "4",
            "--rx-burst",
            "2",
        ])
        .run();
    out.assert_success();
    assert_eq!(out.before_stop[1][0].len(), 4, "one full TX burst while running");
    assert_eq!(out.outputs[1][0].len(), 5, "the rest at shutdown");
}
