//! A live route change through `l3fwd-ctl` moves kernel traffic from one
//! site to another mid-stream, and back, without breaking a TCP transfer.
//!
//! Three namespaces on `net_af_packet` veth pairs, LPM: the client on
//! port 0, A (the TCP server and ping target) on port 1, B on port 2. A
//! and B are also joined directly by a veth pair; B forwards (ip_forward)
//! and routes A's address over that link. A always answers via port 1
//! (its default route), with rp_filter off since requests may come in on
//! the A-B link. So the route to A's address decides which link carries
//! client-to-A traffic: port 1 directly, or port 2 then B then the A-B
//! link; and the A-B link's counters in B count exactly the frames that
//! took the detour.
//!
//! A paced transfer (a token bucket on the client's interface, so that it
//! is mid-stream when the route changes): after a quarter of it, `route
//! add A/32 2`; some while later, `route del A/32` puts the /24 to port 1
//! back in charge. Each change happens inside a burst of pings, of which
//! at most one may be lost at the switch (none are in practice: the
//! change is atomic in the forwarder, the detour only adds a hop). The
//! counters of each phase show which way the frames went; the forwarder
//! ends with every packet and mbuf accounted for. Needs root; without it,
//! fails (or skips with `L3FWD_ALLOW_SKIP=1`).

use std::net::{IpAddr, Ipv4Addr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use crate::forwarder::Forwarder;
use crate::sites::{Namespace, Pmd, Site, Sites};
use crate::traffic;
use testkit::Scratch;

const TCP_PORTS: (u16, u16) = (40000, 7000);
const TCP_BYTES: u64 = 16 << 20;
/// The client's pace: about 2 s for the transfer.
const RATE: &str = "64mbit";
/// Pings around each change, 10 ms apart; the change after the first 10.
const PINGS: u32 = 20;
/// Frames a phase counts at least on the link it should use, and at most
/// on the one it should not (frames in flight at a change).
const BUSY: u64 = 100;
const STRAY: u64 = 5;
/// The A-B link's addresses (benchmarking range, unused elsewhere here).
const LINK_A: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 1);
const LINK_B: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 2);

/// The veth pair joining A and B directly: the name of its end in B.
struct Detour {
    in_b: String,
}

impl Detour {
    /// Makes and configures the link, B's forwarding and route to A, and
    /// A's acceptance of requests arriving on it.
    fn new(tag: &str, a: &Site, b: &Site) -> Detour {
        let (in_a, in_b) = (format!("l3a{tag}"), format!("l3b{tag}"));
        #[rustfmt::skip]
        a.ns.ip(&["link", "add", &in_a, "type", "veth", "peer", "name", &in_b, "netns", &b.ns.name]);
        for (ns, iface, addr) in [(&a.ns, &in_a, LINK_A), (&b.ns, &in_b, LINK_B)] {
            // No IPv6 chatter in the counters.
            sysctl(ns, &format!("net.ipv6.conf.{iface}.disable_ipv6=1"));
            ns.ip(&["addr", "add", &format!("{addr}/24"), "dev", iface]);
            ns.ip(&["link", "set", iface, "up"]);
        }
        sysctl(&b.ns, "net.ipv4.ip_forward=1");
        b.ns.ip(&["route", "add", &format!("{}/32", a.addr4), "via", &LINK_A.to_string()]);
        for conf in ["all", &in_a] {
            sysctl(&a.ns, &format!("net.ipv4.conf.{conf}.rp_filter=0"));
        }
        Detour { in_b }
    }

    /// Frames B has forwarded to A.
    fn forwarded(&self, b: &Site) -> u64 {
        b.ns.counter(&self.in_b, "tx_packets")
    }
}

fn sysctl(ns: &Namespace, setting: &str) {
    ns.exec("sysctl", &["-qw", setting]);
}

/// What the two links had carried at one moment: frames A received from
/// port 1, frames A sent to port 1, frames B forwarded to A.
#[derive(Clone, Copy, Debug)]
struct Counts {
    direct_to_a: u64,
    from_a: u64,
    via_b: u64,
}

impl Counts {
    fn since(self, before: Counts) -> Counts {
        Counts {
            direct_to_a: self.direct_to_a - before.direct_to_a,
            from_a: self.from_a - before.from_a,
            via_b: self.via_b - before.via_b,
        }
    }
}

#[test]
fn af_packet_lpm_route_change_moves_a_tcp_stream_and_back() {
    let name = "af_packet_lpm_route_change_moves_a_tcp_stream_and_back";
    if !crate::can_create_namespaces(name) {
        return;
    }
    let tag = crate::unique_tag(11);
    let scratch = Scratch::new(&format!("linux-{tag}"));
    let sites: Sites<3> = Sites::new(Pmd::AfPacket, 1, &tag);
    let [client, a, b] = &sites.sites;
    let detour = Detour::new(&tag, a, b);
    let mut eal = sites.eal_lcores();
    eal.extend(sites.vdevs());
    let fwd = Forwarder::start(&scratch, &tag, &eal, &sites.app_args(), &rules(&sites));
    #[rustfmt::skip]
    client.ns.exec("tc", &["qdisc", "add", "dev", &client.iface, "root", "tbf", "rate", RATE, "burst", "16kb", "limit", "1mb"]);
    let counts = || Counts {
        direct_to_a: a.link_counts().rx,
        from_a: a.link_counts().tx,
        via_b: detour.forwarded(b),
    };
    let server = IpAddr::from(a.addr4);
    let host_route = format!("{}/32", a.addr4);

    let progress = Arc::new(AtomicU64::new(0));
    let (phases, tcp) = thread::scope(|scope| {
        let transfer = scope.spawn(|| traffic::tcp_transfer_counted(client, a, false, TCP_PORTS, TCP_BYTES, &progress));
        let start = counts();
        // Mid-stream, the route to A moves to port 2, via B.
        wait_for(&progress, TCP_BYTES / 4, &transfer);
        let direct_to = counts();
        change_during_pings(scope, &fwd, client, server, &["route", "add", &host_route, "2"]);
        let via_b_from = counts();
        let mid = progress.load(Ordering::Relaxed);
        wait_for(&progress, (mid + TCP_BYTES / 8).max(TCP_BYTES * 5 / 8), &transfer);
        let via_b_to = counts();
        // And back: without the /32, A's /24 routes to port 1 again.
        change_during_pings(scope, &fwd, client, server, &["route", "del", &host_route]);
        let direct_from = counts();
        assert!(
            progress.load(Ordering::Relaxed) < TCP_BYTES * 7 / 8,
            "the transfer outran the test's phases: raise TCP_BYTES or lower RATE"
        );
        let tcp = transfer.join().unwrap();
        let end = counts();
        let phases = [
            ("before the change", direct_to.since(start)),
            ("via B", via_b_to.since(via_b_from)),
            ("after moving back", end.since(direct_from)),
        ];
        (phases, tcp)
    });
    assert!(tcp.intact, "TCP across the route changes: {tcp:?}");
    eprintln!("{name}: TCP {:.0} Mbit/s", tcp.mbit_per_s());

    // Client-to-A frames take the direct link, then the detour, then the
    // direct link again; A's answers always leave by port 1.
    for (i, (what, c)) in phases.iter().enumerate() {
        eprintln!("{name}: {what}: {c:?}");
        let (used, unused) = if i == 1 {
            (c.via_b, c.direct_to_a)
        } else {
            (c.direct_to_a, c.via_b)
        };
        assert!(used >= BUSY && unused <= STRAY, "{what}: {c:?}");
        assert!(c.from_a >= BUSY, "{what}: A's answers: {c:?}");
    }
    let via_b = phases[1].1.via_b;
    let summary = fwd.stop();
    println!("{}", summary.stdout);
    let (_, port2_tx) = summary.port_rx_tx(2);
    assert!(
        port2_tx >= via_b,
        "port 2 sent {port2_tx}, B forwarded {via_b} to A in the detour phase alone"
    );
    summary.assert_conserved();
}

/// Rule files: each site's /24 (and /64) to its port.
fn rules(sites: &Sites<3>) -> Vec<(&'static str, String)> {
    let (mut v4, mut v6) = (String::new(), String::new());
    for s in &sites.sites {
        let [x, y, z, _] = s.addr4.octets();
        v4 += &format!("R{x}.{y}.{z}.0/24 {}\n", s.port);
        let g = s.addr6.segments();
        v6 += &format!("R{:x}:{:x}:{:x}:{:x}::/64 {}\n", g[0], g[1], g[2], g[3], s.port);
    }
    vec![("--rule_ipv4", v4), ("--rule_ipv6", v6)]
}

/// Waits until the transfer has delivered `bytes` (at most 15 s); panics
/// if it ended first.
fn wait_for(progress: &AtomicU64, bytes: u64, transfer: &thread::ScopedJoinHandle<traffic::Transfer>) {
    let start = Instant::now();
    while progress.load(Ordering::Relaxed) < bytes {
        assert!(!transfer.is_finished(), "the transfer ended before {bytes} bytes");
        assert!(
            start.elapsed() < Duration::from_secs(15),
            "{bytes} bytes not delivered in 15 s"
        );
        thread::sleep(Duration::from_millis(2));
    }
}

/// `l3fwd-ctl args` in the middle of a burst of pings from the client to
/// `to`; asserts the answer `ok` and at most one ping lost.
fn change_during_pings<'s>(
    scope: &'s thread::Scope<'s, '_>,
    fwd: &Forwarder,
    client: &'s Site,
    to: IpAddr,
    args: &[&str],
) {
    let pings = scope.spawn(move || traffic::ping(client, to, PINGS));
    thread::sleep(Duration::from_millis(100));
    assert_eq!(fwd.ctl(args).trim(), "ok", "l3fwd-ctl {}", args.join(" "));
    let ping = pings.join().unwrap();
    assert!(
        ping.received + 1 >= ping.transmitted && ping.duplicates == 0,
        "pings across `{}`: {}",
        args.join(" "),
        ping.output
    );
}
