//! What every forwarder run must show in its `--stats-json`: each packet
//! received was sent or counted as a drop, and the counts agree.

use serde_json::Value;

fn count(v: &Value, what: &str, stats: &Value) -> u64 {
    v.as_u64()
        .unwrap_or_else(|| panic!("{what}: not a count: {v}\n{stats}"))
}

/// The packets dropped for any reason: the sum of every `dropped_*` count
/// of `counts` (a `--stats-json`'s `forwarded`, or one of its `lcores`),
/// whatever drop reasons `src/counters.rs` declares.
pub fn dropped(counts: &Value) -> u64 {
    counts
        .as_object()
        .unwrap_or_else(|| panic!("not a set of counters: {counts}"))
        .iter()
        .filter(|(k, _)| k.starts_with("dropped_"))
        .map(|(k, v)| count(v, k, counts))
        .sum()
}

/// Asserts what the `--stats-json` document `stats` of a finished run must
/// show: every packet received was sent or counted under one of the
/// `dropped_*` counts; the lcores' counts add up to the totals; the ports'
/// RX and TX counts are the lcores' totals; and the mbufs in use after the
/// ports stopped are those before they started plus `held` (what a
/// loopback ring still holds).
pub fn assert_accounted(stats: &Value, held: u64) {
    let forwarded = &stats["forwarded"];
    let total = |key: &str| count(&forwarded[key], key, stats);
    let (rx, tx) = (total("rx"), total("tx"));
    assert_eq!(rx, tx + dropped(forwarded), "received != sent + dropped: {stats}");
    if let Some(lcores) = stats["lcores"].as_array() {
        for (key, sum) in forwarded.as_object().expect("forwarded counters") {
            let of_lcores: u64 = lcores.iter().map(|l| count(&l[key], key, stats)).sum();
            assert_eq!(of_lcores, count(sum, key, stats), "the lcores' {key}: {stats}");
        }
    }
    let ports = stats["ports"].as_array().expect("ports");
    let port_sum = |key: &str| -> u64 { ports.iter().map(|p| count(&p[key], key, stats)).sum() };
    assert_eq!(
        (port_sum("rx_packets"), port_sum("tx_packets")),
        (rx, tx),
        "the ports' RX and TX disagree with the lcores' totals: {stats}"
    );
    let [before, after] = [0, 1].map(|i| count(&stats["mbufs_in_use"][i], "mbufs_in_use", stats));
    assert_eq!(after, before + held, "mbufs in use before start / after stop: {stats}");
}
