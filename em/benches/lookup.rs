//! Multi (bulk, `rte_hash_lookup_with_hash_bulk`) against sequential (`rte_hash_lookup`)
//! IPv4 exact-match lookups, on tables of 16 to 4M rules in the sample's
//! 4M-entry table, keys in random order, all hitting or half missing.
//! Each table is built once and serves its four cases.

#![forbid(unsafe_code)]

use std::hint::black_box;
use std::net::Ipv4Addr;
use std::time::Duration;

use criterion::measurement::WallTime;
use criterion::{criterion_group, criterion_main, BenchmarkGroup, Criterion, Throughput};
use em::rules::Rule;
use em::{Batching, EmTables, FiveTuple, Ipv4Key, DEFAULT_HASH_ENTRIES};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Keys per call: l3fwd's RX burst (MAX_PKT_BURST).
const BURST: usize = 32;
/// Keys cycled through per case: enough that large tables miss the caches.
const MAX_PROBES: usize = 1 << 20;
/// Rules per table. 4M is 4,000,000: rte_hash fills up at ~97% of its
/// 4Mi entries, so neither the sample nor we can load 4Mi rules into it.
const SIZES: [(&str, u32); 4] = [("16", 16), ("64K", 1 << 16), ("1M", 1 << 20), ("4M", 4_000_000)];

/// Rule `i`'s 5-tuple: distinct destinations (odd multiplier), UDP;
/// the same with TCP is a guaranteed miss.
fn tuple(i: u32, proto: u8) -> FiveTuple<Ipv4Addr> {
    FiveTuple {
        dst: Ipv4Addr::from(i.wrapping_mul(0x9e37_79b1)),
        src: Ipv4Addr::new(198, 18, 0, 1),
        dst_port: 9,
        src_port: 9,
        proto,
    }
}

/// Random-order probe keys: each a random rule, or with `miss_rate` a miss.
fn probes(rng: &mut ChaCha8Rng, rules: u32, miss_rate: f64) -> Vec<Ipv4Key> {
    let len = (rules as usize).clamp(4096, MAX_PROBES);
    let mut keys: Vec<_> = (0..len)
        .map(|_| {
            let proto = if rng.gen_bool(miss_rate) { 6 } else { 17 };
            Ipv4Key::from(&tuple(rng.gen_range(0..rules), proto))
        })
        .collect();
    keys.shuffle(rng);
    keys
}

fn bench_case(
    g: &mut BenchmarkGroup<'_, WallTime>,
    name: &str,
    keys: &[Ipv4Key],
    lookup: impl Fn(&[Ipv4Key], &mut [Option<u16>]),
) {
    g.bench_function(name, |b| {
        let mut out = [None; BURST];
        let mut at = 0;
        b.iter(|| {
            lookup(black_box(&keys[at..at + BURST]), &mut out);
            at = (at + BURST) % keys.len();
            black_box(&out);
        })
    });
}

fn lookups(c: &mut Criterion) {
    let eal = dpdk::Eal::for_tests(&[]).expect("EAL init");
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    for (label, n) in SIZES {
        let rules: Vec<Rule<Ipv4Addr>> = (0..n)
            .map(|i| Rule {
                tuple: tuple(i, 17),
                port: (i % 16) as u8,
                line: i as usize + 1,
            })
            .collect();
        let tables = EmTables::new(eal, DEFAULT_HASH_ENTRIES, 0, &rules, &[], |_| true).expect("table");
        drop(rules);
        let mut g = c.benchmark_group(format!("em_v4/{label}"));
        g.sample_size(10)
            .warm_up_time(Duration::from_secs(1))
            .measurement_time(Duration::from_secs(3))
            .throughput(Throughput::Elements(BURST as u64));
        for (case, miss_rate) in [("all-hit", 0.0), ("half-miss", 0.5)] {
            let keys = probes(&mut rng, n, miss_rate);
            for (name, batching) in [
                ("multi", Batching::WHOLE_BURST),
                ("group8", Batching::Bulk { group: 8 }),
                ("sequential", Batching::Sequential),
            ] {
                bench_case(&mut g, &format!("{name}/{case}"), &keys, |k, o| {
                    tables.lookup_v4(k, batching, |i, port| o[i] = port)
                });
            }
        }
        g.finish();
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().without_plots();
    targets = lookups
}
criterion_main!(benches);
