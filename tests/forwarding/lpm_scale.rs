//! LPM and FIB at a real router's scale, through the real binary: a generated
//! 1M-route IPv4 table and 230K-route IPv6 table, and 100K frames to random
//! routes (10% to no route) in on a pcap port. Every frame must leave on the
//! port a plain longest-prefix model picks. The FIBs' inline lookups are
//! also checked against the model in this process, at the edges of every
//! route.

use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

use testkit::{l3fwd_rs, Run, Scratch};
use trafficgen::aimed::{self, Aim};
use trafficgen::tables::{self, Address, Route};

const SEED: u64 = 2024;
const V4_ROUTES: usize = 1_000_000;
const V6_ROUTES: usize = 230_000;
const FRAMES: usize = 100_000;
/// Frames come in on port 0, where misses go back out. Routes go to ports
/// 1 and 2, and to port 3, which `-p 0x7` leaves disabled: its routes are
/// not loaded, so a shorter route (or none) decides.
const ROUTE_PORTS: [u8; 3] = [1, 2, 3];
const ENABLED: [u8; 3] = [0, 1, 2];
const IN_PORT: u8 = 0;
/// Forwarding 100K frames between pcap files takes about a second.
const FORWARD_TIME: Duration = Duration::from_secs(8);

/// Longest-prefix match the plain way: per prefix length, a map from
/// network to port.
struct Model<A> {
    by_depth: Vec<HashMap<A, u8>>,
}

impl<A: Address> Model<A> {
    fn new(routes: &[Route<A>], bits: u8) -> Self {
        let mut by_depth = vec![HashMap::new(); usize::from(bits) + 1];
        for r in routes.iter().filter(|r| ENABLED.contains(&r.port)) {
            by_depth[usize::from(r.depth)].insert(r.addr, r.port);
        }
        Model { by_depth }
    }

    /// The port of the longest route matching `addr`, if any.
    fn route(&self, addr: A) -> Option<u8> {
        let mut depths = (1..self.by_depth.len()).rev();
        depths.find_map(|d| self.by_depth[d].get(&addr.network(d as u8)).copied())
    }

    fn port(&self, addr: A) -> u8 {
        self.route(addr).unwrap_or(IN_PORT)
    }
}

/// The destination of an IPv4 or IPv6 frame, as a number.
fn destination(frame: &[u8]) -> u128 {
    match frame[12..14] {
        [0x08, 0x00] => u32::from_be_bytes(frame[30..34].try_into().unwrap()).into(),
        [0x86, 0xdd] => u128::from_be_bytes(frame[38..54].try_into().unwrap()),
        _ => panic!("not IP: {frame:?}"),
    }
}

#[test]
fn large_tables_forward_as_a_longest_prefix_model() {
    forwards_as_a_longest_prefix_model(&[], 1024, |_, _| {});
}

/// FIB mode on the same tables and traffic.
#[test]
fn large_fibs_forward_as_a_longest_prefix_model() {
    forwards_as_a_longest_prefix_model(&["--lookup=fib"], 2048, fibs_look_up_as_the_model);
}

/// A generated table: its rule file, its routes and their model.
struct Table<'a, A> {
    file: &'a Path,
    routes: &'a [Route<A>],
    model: &'a Model<A>,
}

/// The FIBs l3fwd-rs builds from the tables' files, looked up inline here
/// at each route's first and last address and the ones just outside: 4M
/// IPv4 and 0.9M IPv6 lookups, through tbl24 and tbl8 entries and misses.
fn fibs_look_up_as_the_model(v4: Table<u32>, v6: Table<u128>) {
    let eal = dpdk::Eal::for_tests(&[]).expect("EAL init");
    let (v4_file, v6_file) = (
        lpm::rules::load_v4(v4.file).unwrap(),
        lpm::rules::load_v6(v6.file).unwrap(),
    );
    let enabled = |port| ENABLED.contains(&port);
    let (fib, _) =
        lpm::FibTables::build(eal, "scale", 0, &v4_file, &v6_file, lpm::Limits::default(), enabled).expect("FIB build");
    looks_up_as_the_model(&v4, |addr| fib.lookup_v4(addr));
    looks_up_as_the_model(&v6, |addr| fib.lookup_v6(&addr.to_be_bytes()));
}

/// `lookup` against the model of `table` at the edges of its routes.
fn looks_up_as_the_model<A: Address>(table: &Table<A>, lookup: impl Fn(A) -> Option<u16>) {
    let space = u128::MAX >> (128 - u32::from(A::BITS));
    let (mut misses, mut checked) = (0, 0);
    for r in table.routes {
        let first = r.addr.network(r.depth).bits();
        let last = first | space.checked_shr(r.depth.into()).unwrap_or(0);
        for bits in [first.wrapping_sub(1), first, last, last.wrapping_add(1)] {
            let addr = A::from_bits(bits & space);
            let expected = table.model.route(addr);
            assert_eq!(lookup(addr), expected.map(u16::from), "{}", addr.ip());
            misses += usize::from(expected.is_none());
            checked += 1;
        }
    }
    assert!(misses > 0 && misses < checked / 2, "{misses} of {checked} missed");
}

/// The tables and frames, through l3fwd-rs with `mode` arguments and
/// `memory_mb` of EAL memory, against the model; `also` checks more with
/// both tables.
fn forwards_as_a_longest_prefix_model(mode: &[&str], memory_mb: u32, also: impl FnOnce(Table<u32>, Table<u128>)) {
    let v4 = tables::ipv4_routes(SEED, V4_ROUTES, &ROUTE_PORTS);
    let v6 = tables::ipv6_routes(SEED, V6_ROUTES, &ROUTE_PORTS);
    let dir = Scratch::new("lpm-scale");
    let (v4_file, v6_file) = (dir.path("v4.cfg"), dir.path("v6.cfg"));
    tables::write_lpm_rules(&v4_file, &v4).unwrap();
    tables::write_lpm_rules(&v6_file, &v6).unwrap();
    let aim = Aim {
        seed: SEED,
        count: FRAMES,
        miss_percent: 10,
        sizes: 64..=96,
    };
    let frames = aimed::at_routes(&aim, &v4, &v6);

    let (model4, model6) = (Model::new(&v4, 32), Model::new(&v6, 128));
    also(
        Table {
            file: &v4_file,
            routes: &v4,
            model: &model4,
        },
        Table {
            file: &v6_file,
            routes: &v6,
            model: &model6,
        },
    );
    let mut expected: Vec<Vec<u128>> = vec![Vec::new(); ENABLED.len()];
    for frame in &frames {
        let dst = destination(frame);
        let port = match u32::try_from(dst) {
            Ok(v4) if frame[12..14] == [0x08, 0x00] => model4.port(v4),
            _ => model6.port(dst),
        };
        expected[usize::from(port)].push(dst);
    }
    assert!(
        expected.iter().all(|dsts| dsts.len() > FRAMES / 5),
        "every port gets traffic"
    );

    let rule_args = [
        format!("--rule_ipv4={}", v4_file.display()),
        format!("--rule_ipv6={}", v6_file.display()),
    ];
    let out = Run::new(l3fwd_rs())
        .memory_mb(memory_mb)
        .port(frames)
        .port(Vec::new())
        .port(Vec::new())
        .args(&[
            "-p",
            "0x7",
            "--config",
            "(0,0,0),(1,0,0),(2,0,0)",
            &rule_args[0],
            &rule_args[1],
        ])
        .args(mode)
        .stop_with("INT", FORWARD_TIME)
        .run();
    out.assert_success();
    for (port, (sent, mut expected)) in out.per_port().iter().zip(expected).enumerate() {
        let mut sent: Vec<u128> = sent.iter().map(|f| destination(f)).collect();
        sent.sort_unstable();
        expected.sort_unstable();
        let differ = sent.iter().zip(&expected).position(|(s, e)| s != e);
        assert!(
            sent == expected,
            "port {port}: sent {} frames, expected {}; first difference at {differ:?}",
            sent.len(),
            expected.len()
        );
    }
}
