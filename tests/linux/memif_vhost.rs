//! l3fwd-rs between two `dpdk-testpmd` processes over shared-memory links,
//! as containers (memif) and VMs (vhost-user) reach a software router: a
//! txonly source on port 0, a sink on port 1 that copies what it receives
//! to a pcap file, and every packet accounted for per port: sent by the
//! source = received by l3fwd-rs = forwarded + counted drops, and
//! forwarded = received by the sink (up to what a link holds), whose
//! frames carry l3fwd-rs's rewrite.
//! testpmd polls on CPU 0, l3fwd-rs on CPU 1. Needs root (EAL runtime
//! files under /var/run); without it, fails (or skips with
//! `L3FWD_ALLOW_SKIP=1`).

use crate::forwarder::Forwarder;
use crate::testpmd::{last_count, TestPmd};
use testkit::Scratch;

/// testpmd's txonly frames go from 198.18.0.1 to 198.18.0.2: routed to
/// port 1, the sink.
const ROUTES_V4: &str = "R198.18.0.0/24 1\n";
const ROUTES_V6: &str = "R2001:db8::/32 1\n";
/// virtio-user's default queue size: at most this many descriptors wait in
/// a virtqueue.
const VIRTQUEUE_SIZE: u64 = 256;
/// testpmd's default TX burst.
const TESTPMD_BURST: u64 = 32;
const TRAFFIC: std::time::Duration = std::time::Duration::from_secs(2);

/// Forwarder ports made by `ours(port, socket)`; the testpmd on each made by
/// `peer(socket)`.
///
/// `in_flight_at_stop`: how many of the source's last packets may be lost
/// with its link when it exits (on memif its last TX burst, if the
/// forwarder's lcore was not scheduled between that burst and the
/// disconnect, seen on a loaded machine; on vhost-user what sits in the
/// virtqueue when virtio-user goes).
fn source_forwarder_sink(
    name: &str,
    id: u8,
    ours: fn(u16, &str) -> String,
    peer: fn(&str) -> String,
    in_flight_at_stop: u64,
) {
    if !is_root() {
        crate::cannot_run(name, "EAL's runtime files and the peers' sockets need root");
        return;
    }
    let tag = crate::unique_tag(id);
    let scratch = Scratch::new(&format!("linux-{tag}"));
    let sockets = [0, 1].map(|p| scratch.path(&format!("port{p}.sock")).display().to_string());
    let eal = vec!["-l".into(), "1".into(), ours(0, &sockets[0]), ours(1, &sockets[1])];
    let app = ["-p", "0x3", "--config", "(0,0,1),(1,0,1)"].map(String::from);
    let rules = [
        ("--rule_ipv4", ROUTES_V4.to_string()),
        ("--rule_ipv6", ROUTES_V6.to_string()),
    ];
    let fwd = Forwarder::start(&scratch, &tag, &eal, &app, &rules);
    // The sink copies what it receives to a pcap file (its port 1).
    let capture = scratch.path("sink.pcap");
    let sink_ports = [peer(&sockets[1]), format!("net_pcap1,tx_pcap={}", capture.display())];
    let sink = TestPmd::start(&scratch, &format!("{tag}-sink"), &sink_ports, "io");
    let source = TestPmd::start(&scratch, &format!("{tag}-source"), &[peer(&sockets[0])], "txonly");
    std::thread::sleep(TRAFFIC);

    // Source first, so that nothing is in flight when the rest stop; its
    // totals at exit are its port's (the forwarder is still connected).
    let source_out = source.stop();
    let sent = last_count(&source_out, "TX-packets");
    // The sink next, once its count settles (the forwarder has drained):
    // its totals at exit, while the forwarder is still connected (net_memif
    // zeroes its statistics when the peer goes).
    // (The last periodic TX-packets: what it wrote to the file.)
    sink.settled_count("TX-packets");
    let sink_out = sink.stop();
    let sunk = last_count(&sink_out, "RX-packets");
    let summary = fwd.stop();
    println!("{}", summary.stdout);

    let (rx0, tx0) = summary.port_rx_tx(0);
    let (rx1, tx1) = summary.port_rx_tx(1);
    assert!(sent > 0, "the source sent nothing:\n{source_out}");
    assert!(
        rx0 <= sent && sent - rx0 <= in_flight_at_stop,
        "port 0 received {rx0} of the source's {sent} (up to {in_flight_at_stop} may be in flight at its stop)\n{}",
        summary.stdout
    );
    assert_eq!(
        (tx0, rx1),
        (0, 0),
        "nothing goes back to the source or comes from the sink"
    );
    assert!(tx1 > 0, "nothing forwarded to the sink\n{}", summary.stdout);
    // What port 1 sent, the sink received, but for what its link still
    // held when the sink stopped.
    assert!(
        sunk <= tx1 && tx1 - sunk <= in_flight_at_stop,
        "port 1 sent {tx1}, the sink received {sunk} (up to {in_flight_at_stop} may be in flight at its stop)\n{}\n{sink_out}",
        summary.stdout
    );
    let sample = trafficgen::read_pcap(&capture).expect("read the sink's capture");
    assert_eq!(sample.len() as u64, sunk, "the sink's capture");
    assert_routed(&sample, &summary.stderr);
    // received = forwarded + counted drops; no mbuf leaked.
    summary.assert_conserved();
    let rx_mpps = summary.json["ports"][0]["rx_mpps"].as_f64().unwrap();
    let tx_mpps = summary.json["ports"][1]["tx_mpps"].as_f64().unwrap();
    eprintln!(
        "{name}: source sent {sent}, l3fwd-rs received {rx0} ({rx_mpps:.3} Mpps), forwarded {tx1} ({tx_mpps:.3} Mpps), \
         tx-full drops {}, sink received {sunk}",
        summary.forwarded("dropped_tx_full")
    );
}

/// The first, middle and last frame the sink received: testpmd's txonly
/// frame (IPv4, TTL 64) as l3fwd-rs rewrites it for port 1.
fn assert_routed(frames: &[Vec<u8>], forwarder_log: &str) {
    let port1_mac = port_address(forwarder_log, 1);
    for at in [0, frames.len() / 2, frames.len() - 1] {
        let f = &frames[at];
        assert_eq!(f[0..6], [2, 0, 0, 0, 0, 1], "frame {at}: destination MAC");
        assert_eq!(f[6..12], port1_mac, "frame {at}: source MAC is port 1's");
        assert_eq!(f[12..14], [0x08, 0x00], "frame {at}: IPv4");
        assert_eq!(f[14 + 8], 63, "frame {at}: TTL");
        assert_eq!(f[14 + 16..14 + 20], [198, 18, 0, 2], "frame {at}: destination");
        assert!(
            testkit::frames::ipv4_checksum_ok(&f[14..34]),
            "frame {at}: IPv4 checksum"
        );
    }
}

/// The MAC address l3fwd-rs logged for `port` ("port P (...): ...,
/// address XX:..., ...").
fn port_address(log: &str, port: u16) -> [u8; 6] {
    let line = log
        .lines()
        .find(|l| l.contains(&format!("port {port} (")) && l.contains("address "))
        .unwrap_or_else(|| panic!("no address of port {port} in\n{log}"));
    let text = line.split("address ").nth(1).unwrap().split([',', ' ']).next().unwrap();
    let bytes: Vec<u8> = text.split(':').map(|b| u8::from_str_radix(b, 16).unwrap()).collect();
    bytes.try_into().unwrap_or_else(|_| panic!("not a MAC: {text}"))
}

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .map(|s| {
            s.lines()
                .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(1) == Some("0"))
        })
        .unwrap_or(false)
}

#[test]
fn memif_testpmd_source_to_testpmd_sink() {
    source_forwarder_sink(
        "memif_testpmd_source_to_testpmd_sink",
        21,
        |port, socket| format!("--vdev=net_memif{port},role=server,socket={socket},id=0"),
        |socket| format!("net_memif0,role=client,socket={socket},id=0"),
        TESTPMD_BURST,
    );
}

#[test]
fn vhost_user_testpmd_source_to_testpmd_sink() {
    source_forwarder_sink(
        "vhost_user_testpmd_source_to_testpmd_sink",
        22,
        |port, socket| format!("--vdev=net_vhost{port},iface={socket}"),
        |socket| format!("net_virtio_user0,path={socket}"),
        VIRTQUEUE_SIZE,
    );
}
