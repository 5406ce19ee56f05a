//! Same arguments, same traffic, same output bytes: DPDK's own C l3fwd
//! (built from dpdk-doc) and l3fwd-rs forward generated v4, v6 and
//! invalid-IPv4 traffic, and every port's output must be identical.

use testkit::{c_l3fwd, l3fwd_rs, traffic, Run};

const SEEDS: [u64; 3] = [1, 7, 42];
/// Room for the exact-match tables (two of 4M entries, as in the C sample).
const EM_MEMORY_MB: u32 = 2048;

/// Runs both forwarders on the same two ports of traffic, with
/// `testkit::TWO_PORTS`, `--parse-ptype` (C's virtual ports give no packet types)
/// and `args`, and asserts identical per-port outputs; returns how many
/// frames were sent.
fn assert_same_as_c(inputs: &[Vec<Vec<u8>>; 2], args: &[&str], memory_mb: u32) -> usize {
    assert_same_as_c_with_eal(inputs, &[], args, memory_mb).0
}

/// [`assert_same_as_c`] with EAL arguments `eal` for both; also returns
/// what l3fwd-rs logged.
fn assert_same_as_c_with_eal(
    inputs: &[Vec<Vec<u8>>; 2],
    eal: &[&str],
    args: &[&str],
    memory_mb: u32,
) -> (usize, String) {
    let run = |bin| {
        let out = Run::new(bin)
            .memory_mb(memory_mb)
            .eal_args(eal)
            .port(inputs[0].clone())
            .port(inputs[1].clone())
            .two_ports()
            .args(&["--parse-ptype"])
            .args(args)
            .run();
        out.assert_success();
        (out.per_port(), out.stderr)
    };
    let ((c, _), (rs, log)) = (run(c_l3fwd()), run(l3fwd_rs()));
    for (port, (c, rs)) in c.iter().zip(&rs).enumerate() {
        assert_eq!(c.len(), rs.len(), "port {port}: frame count, eal {eal:?} args {args:?}");
        for (i, (a, b)) in c.iter().zip(rs).enumerate() {
            assert_eq!(a, b, "port {port} frame {i} differs, eal {eal:?} args {args:?}");
        }
    }
    (rs.iter().map(Vec::len).sum(), log)
}

#[test]
fn lpm_output_is_identical_to_the_c_sample() {
    let rules = ["--rule_ipv4=configs/lpm_v4.cfg", "--rule_ipv6=configs/lpm_v6.cfg"];
    for seed in SEEDS {
        let sent = assert_same_as_c(&traffic(seed, false), &rules, 512);
        assert!(sent > 1000, "seed {seed}: only {sent} frames forwarded");
    }
}

#[test]
fn fib_output_is_identical_to_the_c_sample() {
    let rules = [
        "--lookup=fib",
        "--rule_ipv4=configs/lpm_v4.cfg",
        "--rule_ipv6=configs/lpm_v6.cfg",
    ];
    for seed in SEEDS {
        let mut inputs = traffic(seed, false);
        // C's FIB path looks every frame that is not IPv4 up as IPv6: a
        // non-IP frame with a routed address where an IPv6 destination
        // would be goes to that route's port (2001:200:0:1::/64 -> 1).
        for input in &mut inputs {
            input.extend(non_ip_with_ipv6_route_bytes());
        }
        let sent = assert_same_as_c(&inputs, &rules, 512);
        assert!(sent > 1000, "seed {seed}: only {sent} frames forwarded");
    }
}

/// Each vector path forwards as C does, in LPM and FIB mode: EAL's
/// maximum SIMD bitwidth chooses it, for l3fwd-rs as for DPDK's libraries
/// in C (rte_fib's AVX-512 lookup): none at 64, AVX2 at 256 (EAL's
/// default), AVX-512 at 512, each where the CPU has it; the log names it.
#[test]
fn each_vector_path_forwards_as_the_c_sample() {
    #[cfg(target_arch = "x86_64")]
    let (avx2, avx512) = (
        std::arch::is_x86_feature_detected!("avx2"),
        std::arch::is_x86_feature_detected!("avx512f") && std::arch::is_x86_feature_detected!("avx512vl"),
    );
    #[cfg(not(target_arch = "x86_64"))]
    let (avx2, avx512) = (false, false);
    let none = "none, scalar";
    let expected = [
        (64, none),
        (256, if avx2 { "AVX2" } else { none }),
        (
            512,
            if avx512 {
                "AVX-512"
            } else if avx2 {
                "AVX2"
            } else {
                none
            },
        ),
    ];
    let inputs = traffic(SEEDS[0], false);
    for (bits, path) in expected {
        let width = format!("--force-max-simd-bitwidth={bits}");
        for mode in ["--lookup=lpm", "--lookup=fib"] {
            let args = [mode, "--rule_ipv4=configs/lpm_v4.cfg", "--rule_ipv6=configs/lpm_v6.cfg"];
            let (sent, log) = assert_same_as_c_with_eal(&inputs, &[&width], &args, 512);
            assert!(sent > 1000, "{width} {mode}: only {sent} frames forwarded");
            let named = format!("vector path: {path} (EAL max SIMD bitwidth {bits})");
            assert!(log.contains(&named), "{width} {mode}: no '{named}' in\n{log}");
        }
    }
}

/// Frames of a local experimental Ethernet type (0x88b5) carrying
/// 2001:200:0:1::9 at the IPv6 destination's offset.
fn non_ip_with_ipv6_route_bytes() -> Vec<Vec<u8>> {
    let addr: std::net::Ipv6Addr = "2001:200:0:1::9".parse().unwrap();
    (0..4u8)
        .map(|i| {
            let mut f = vec![i; 64];
            f[..12].copy_from_slice(&[0x02, 0, 0, 0, 0, 0x10, 0x02, 0, 0, 0, 0, 0x20]);
            f[12..14].copy_from_slice(&[0x88, 0xb5]);
            f[38..54].copy_from_slice(&addr.octets());
            f
        })
        .collect()
}

#[test]
fn em_output_is_identical_to_the_c_sample() {
    let rules = ["-E", "--rule_ipv4=configs/em_v4.cfg", "--rule_ipv6=configs/em_v6.cfg"];
    for seed in SEEDS {
        // Without --ipv6 the sample loads the IPv4 rules only, with it the
        // IPv6 rules only: both must match.
        for family in [&[][..], &["--ipv6"][..]] {
            let sent = assert_same_as_c(&traffic(seed, true), &[&rules[..], family].concat(), EM_MEMORY_MB);
            assert!(sent > 1000, "seed {seed}: only {sent} frames forwarded");
        }
    }
}

#[test]
fn acl_output_is_identical_to_the_c_sample() {
    let rules = [
        "--lookup=acl",
        "--rule_ipv4=configs/acl_v4.cfg",
        "--rule_ipv6=configs/acl_v6.cfg",
    ];
    // Each seed with another classify method (in both programs).
    for (seed, alg) in SEEDS.into_iter().zip(["--alg=scalar", "--alg=sse", "--alg=avx2"]) {
        let mut inputs = traffic(seed, false);
        // The second deny rule: from 198.18.9.0/24 to ports below 1024.
        for input in &mut inputs {
            input.extend(acl_deny_from_subnet_9(seed));
        }
        let sent = assert_same_as_c(&inputs, &[&rules[..], &[alg]].concat(), 512);
        assert!(sent > 300, "seed {seed}: only {sent} frames forwarded");
    }
}

/// UDP frames from 198.18.9.x to 198.18.1.x, half of them to a port below
/// 1024 (denied), half above (routed).
fn acl_deny_from_subnet_9(seed: u64) -> Vec<Vec<u8>> {
    (0..20u16)
        .map(|i| {
            let dport = if i % 2 == 0 { 53 + i } else { 4000 + i };
            let mut f = Vec::new();
            etherparse::PacketBuilder::ethernet2([2, 0, 0, 0, 0, 9], [2, 0, 0, 0, 0, 1])
                .ipv4([198, 18, 9, seed as u8], [198, 18, 1, (i * 13) as u8], 64)
                .udp(1000 + i, dport)
                .write(&mut f, &[0u8; 26])
                .unwrap();
            f
        })
        .collect()
}

/// Nested and overlapping routes, IPv4 /1 to /32 and IPv6 /8 to /128 on one
/// address each (some to a disabled port, which C skips so that a shorter
/// route matches), and traffic to an address that matches each depth
/// exactly: LPM and FIB mode must send every frame where C does.
#[test]
fn nested_routes_lpm_and_fib_output_is_identical_to_the_c_sample() {
    let dir = testkit::Scratch::new("nested-routes");
    let v4_anchor = u32::from_be_bytes([198, 18, 7, 77]);
    let v6_anchor = u128::from_be_bytes("2001:200:0:7:0:0:4d:1".parse::<std::net::Ipv6Addr>().unwrap().octets());
    // Port d % 2, and the disabled port 2 for a few depths.
    let port = |d: u32| if d % 7 == 5 { 2 } else { d % 2 };
    let mut v4 = String::new();
    for d in 1..=32u32 {
        let net = v4_anchor & (u32::MAX << (32 - d));
        v4 += &format!("R{}/{d} {}\n", std::net::Ipv4Addr::from(net), port(d));
    }
    let mut v6 = String::new();
    for d in (8..=128u32).step_by(4) {
        let net = v6_anchor & (u128::MAX << (128 - d));
        v6 += &format!("R{}/{d} {}\n", std::net::Ipv6Addr::from(net), port(d));
    }
    let v4_rules = format!("--rule_ipv4={}", dir.file("nested_v4.cfg", &v4));
    let v6_rules = format!("--rule_ipv6={}", dir.file("nested_v6.cfg", &v6));
    // An address sharing exactly d leading bits with the anchor, for every d.
    let v4_dsts: Vec<[u8; 4]> = (0..=32u32)
        .map(|d| {
            (if d == 32 {
                v4_anchor
            } else {
                v4_anchor ^ (1 << (31 - d))
            })
            .to_be_bytes()
        })
        .collect();
    let v6_dsts: Vec<[u8; 16]> = (0..=128u32)
        .map(|d| {
            (if d == 128 {
                v6_anchor
            } else {
                v6_anchor ^ (1 << (127 - d))
            })
            .to_be_bytes()
        })
        .collect();
    let frames = |offset: usize| -> Vec<Vec<u8>> {
        let udp = |builder: etherparse::PacketBuilderStep<etherparse::IpHeaders>, i: usize| {
            let mut f = Vec::new();
            builder
                .udp(1000 + i as u16, 2000)
                .write(&mut f, &[i as u8; 30])
                .unwrap();
            f
        };
        let eth = || etherparse::PacketBuilder::ethernet2([2, 0, 0, 0, 0, 9], [2, 0, 0, 0, 0, 1]);
        let mut out = Vec::new();
        for (i, dst) in v4_dsts.iter().enumerate().skip(offset % 2).step_by(2) {
            out.push(udp(eth().ipv4([10, 0, 0, 1], *dst, 64), i));
        }
        for (i, dst) in v6_dsts.iter().enumerate().skip(offset % 2).step_by(2) {
            out.push(udp(eth().ipv6([0x20; 16], *dst, 64), i));
        }
        out
    };
    let inputs = [frames(0), frames(1)];
    for mode in ["--lookup=lpm", "--lookup=fib"] {
        let sent = assert_same_as_c(&inputs, &[mode, &v4_rules, &v6_rules], 512);
        assert_eq!(
            sent,
            inputs.iter().map(Vec::len).sum::<usize>(),
            "{mode}: every frame forwarded"
        );
    }
}
