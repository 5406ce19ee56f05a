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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A run of two lcores on two ports: 10 received, 7 sent, 2 invalid
    /// and 1 at the stop.
    fn stats() -> Value {
        json!({
            "forwarded": {"rx": 10, "tx": 7, "dropped_invalid": 2, "dropped_at_stop": 1},
            "lcores": [
                {"rx": 6, "tx": 4, "dropped_invalid": 2, "dropped_at_stop": 0},
                {"rx": 4, "tx": 3, "dropped_invalid": 0, "dropped_at_stop": 1},
            ],
            "ports": [{"rx_packets": 6, "tx_packets": 3}, {"rx_packets": 4, "tx_packets": 4}],
            "mbufs_in_use": [100, 103],
        })
    }

    #[test]
    fn every_dropped_count_is_summed() {
        assert_eq!(dropped(&stats()["forwarded"]), 3);
        assert_accounted(&stats(), 3);
    }

    #[test]
    #[should_panic(expected = "received != sent + dropped")]
    fn a_packet_neither_sent_nor_counted_fails() {
        let mut s = stats();
        s["forwarded"]["rx"] = json!(11);
        assert_accounted(&s, 3);
    }

    #[test]
    #[should_panic(expected = "the lcores' tx")]
    fn lcores_that_do_not_add_up_fail() {
        let mut s = stats();
        s["lcores"][0]["tx"] = json!(5);
        assert_accounted(&s, 3);
    }

    #[test]
    #[should_panic(expected = "the ports' RX and TX")]
    fn ports_that_disagree_with_the_lcores_fail() {
        let mut s = stats();
        s["ports"][0]["tx_packets"] = json!(4);
        assert_accounted(&s, 3);
    }

    #[test]
    #[should_panic(expected = "mbufs in use")]
    fn a_missing_mbuf_fails() {
        assert_accounted(&stats(), 0);
    }
}
