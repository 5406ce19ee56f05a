//! Exact match through the real binary: hits go to the rule's port, misses
//! and rules to disabled ports back to the input port, and multi-lookup (a
//! burst's keys in one bulk call, the default), bulk calls in groups
//! (`--em-lookup-group`: C's 8, and 3, which leaves remainders) and
//! `--sequential-lookup` give identical output pcaps for every burst size
//! 1..=32.

use testkit::frames::{assert_forwarded, em_flow4, next_hop_mac};
use testkit::{l3fwd_rs, Run};
use trafficgen::{generate, GenOpts, Mix};

/// Ports per run: port p receives one burst of BURST_SIZES[run][p] frames
/// (a pcap port hands out its whole file, up to 32 frames, per RX burst).
const PORTS: usize = 8;

fn em_traffic(seed: u64, count: usize) -> Vec<Vec<u8>> {
    let mix = Mix {
        v4: 2,
        v6: 2,
        invalid_v4: 0,
        non_ip: 1,
        runt: 0,
    };
    // Flows aimed at the rules of ports 0..16: those of ports 8..16 are
    // disabled by -p 0xff and miss.
    generate(
        seed,
        count,
        &mix,
        &GenOpts {
            em: true,
            ports: 16,
            ..GenOpts::default()
        },
    )
}

/// Per port, the frames it sent, for one lookup mode.
fn run_em(inputs: &[Vec<Vec<u8>>], extra: &[&str]) -> Vec<Vec<Vec<u8>>> {
    let config: Vec<String> = (0..inputs.len()).map(|p| format!("({p},0,0)")).collect();
    let config = config.join(",");
    let mut run = Run::new(l3fwd_rs());
    for frames in inputs {
        run = run.port(frames.clone());
    }
    let out = run
        .args(
            &[
                &["-p", "0xff", "--config", &config, "-E", "--hash-entry-num", "1024"][..],
                extra,
            ]
            .concat(),
        )
        .run();
    out.assert_success();
    out.per_port()
}

/// Frames that left through a port other than the one they came in on.
fn routed(out: &[Vec<Vec<u8>>], inputs: &[Vec<Vec<u8>>]) -> usize {
    out.iter()
        .enumerate()
        .map(|(p, frames)| {
            frames
                .iter()
                .filter(|f| !inputs[p].iter().any(|i| i[12..] == f[12..]))
                .count()
        })
        .sum()
}

/// The other ways to hand a burst's keys to rte_hash, one per run in turn
/// (em/src/table.rs checks each of them on every key count).
const BATCHINGS: [&[&str]; 3] = [
    &["--sequential-lookup"],
    &["--em-lookup-group", "8"],
    &["--em-lookup-group", "3"],
];

fn assert_every_batching_agrees(family: &[&str]) {
    let mut routed_total = 0;
    for run in 0..32 / PORTS {
        let inputs: Vec<_> = (0..PORTS)
            .map(|p| {
                let size = run * PORTS + p + 1;
                em_traffic((run * PORTS + p) as u64, size)
            })
            .collect();
        let multi = run_em(&inputs, family);
        let batching = BATCHINGS[run % BATCHINGS.len()];
        assert_eq!(
            multi,
            run_em(&inputs, &[family, batching].concat()),
            "{batching:?}, burst sizes {:?}",
            inputs.iter().map(Vec::len).collect::<Vec<_>>()
        );
        routed_total += routed(&multi, &inputs);
    }
    assert!(routed_total > 50, "only {routed_total} frames hit a rule");
}

#[test]
fn ipv4_every_batching_agrees_for_bursts_of_1_to_32() {
    assert_every_batching_agrees(&[]);
}

#[test]
fn ipv6_every_batching_agrees_for_bursts_of_1_to_32() {
    assert_every_batching_agrees(&["--ipv6"]);
}

/// Hits go to the rule's port; a changed field and a rule to a disabled
/// port return to the input port.
#[test]
fn hits_misses_and_disabled_ports() {
    let to1 = em_flow4(1);
    let mut miss = em_flow4(1);
    miss[37] = 10; // destination port 10: no rule
    let disabled = em_flow4(5);
    let to0 = em_flow4(0);
    let sent = vec![to1.clone(), miss, disabled, to0];
    let out = Run::new(l3fwd_rs())
        .port(sent.clone())
        .port(Vec::new())
        .two_ports()
        .args(&["-E", "--hash-entry-num", "64"])
        .run();
    out.assert_success();
    let out = out.per_port();
    assert_eq!(out[1].len(), 1, "only the hit to port 1 leaves through port 1");
    assert_forwarded(&to1, &out[1][0], 1, next_hop_mac(1));
    assert_eq!(
        out[0].len(),
        3,
        "miss, disabled port and the rule to port 0 leave through port 0"
    );
    for (s, o) in sent[1..].iter().zip(&out[0]) {
        assert_forwarded(s, o, 0, next_hop_mac(0));
    }
}
