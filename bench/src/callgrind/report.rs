//! What a callgrind run reports: per configuration the packets and
//! instructions of its window, as a table and JSON, and the comparison with
//! an earlier run (`--baseline`).

use super::window::Reads;
use crate::baseline::Verdict;
use crate::command::Ports;
use crate::machine::Machine;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::PathBuf;

/// What one configuration counted in its window.
#[derive(Serialize, Deserialize, Clone, PartialEq, Debug)]
pub struct Count {
    /// TX packets of both ports.
    pub packets: u64,
    /// Instructions executed, all threads of the process.
    pub ir: u64,
    pub ir_per_packet: f64,
    /// Bound on the error of `packets`, % ([`Reads::edge_pct`]).
    pub edge_pct: f64,
    /// With --cache-sim: simulated L1 data misses (reads and writes) and
    /// last-level misses (instructions and data) per packet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub misses_per_packet: Option<Misses>,
}

#[derive(Serialize, Deserialize, Clone, Copy, PartialEq, Debug)]
pub struct Misses {
    pub d1: f64,
    pub ll: f64,
}

impl Count {
    /// From the TX reads and the dump's event totals; an error if the window
    /// saw no packet or no instruction.
    pub fn new(reads: &Reads, totals: &BTreeMap<String, u64>) -> Result<Count, String> {
        let packets = reads.packets();
        let ir = totals.get("Ir").copied().unwrap_or(0);
        if packets == 0 {
            return Err("no packets forwarded in the window".into());
        }
        if ir == 0 {
            return Err("no instructions counted in the window (instrumentation did not switch on?)".into());
        }
        let per_packet = |events: &[&str]| {
            let sum: Option<u64> = events.iter().map(|e| totals.get(*e)).sum();
            sum.map(|n| n as f64 / packets as f64)
        };
        let misses = match (per_packet(&["D1mr", "D1mw"]), per_packet(&["ILmr", "DLmr", "DLmw"])) {
            (Some(d1), Some(ll)) => Some(Misses { d1, ll }),
            _ => None,
        };
        Ok(Count {
            packets,
            ir,
            ir_per_packet: ir as f64 / packets as f64,
            edge_pct: reads.edge_pct(),
            misses_per_packet: misses,
        })
    }
}

/// The traffic the counts are for: counts compare only on the same traffic.
#[derive(Serialize, Deserialize, Clone, PartialEq, Debug)]
pub struct TrafficSettings {
    /// --lpm-flows and --em-flows (none: the default rules and l3fwd-gen's frames).
    pub lpm_flows: Option<usize>,
    pub em_flows: Option<usize>,
    /// Frame size of the flows' traffic, FCS included.
    pub size: u32,
    /// --acl-rules, or `cell` for the --lpm-flows cell's routes as ACL rules.
    pub acl_rules: PathBuf,
    /// The ports counted through (older reports: pcap).
    #[serde(default, skip_serializing_if = "Ports::is_pcap")]
    pub ports: Ports,
}

#[derive(Serialize, Deserialize, Debug)]
pub struct Report {
    pub timestamp: String,
    pub machine: Machine,
    pub traffic: TrafficSettings,
    pub warmup_secs: f64,
    pub settle_secs: f64,
    pub window_secs: f64,
    /// The configurations in the order they ran (and the table lists them).
    pub order: Vec<String>,
    /// By configuration id (`rs-lpm`, `io`, ...).
    pub counts: BTreeMap<String, Count>,
}

/// The script's table: config, packets, Ir, Ir/pkt, edge (and with
/// --cache-sim the misses per packet).
pub fn table(report: &Report) -> String {
    let width = report.order.iter().map(String::len).chain([10]).max().unwrap_or(10);
    let cache_sim = report.counts.values().any(|c| c.misses_per_packet.is_some());
    let mut out = format!(
        "{:<width$} {:>12} {:>16} {:>9} {:>7}",
        "config", "packets", "Ir", "Ir/pkt", "edge"
    );
    if cache_sim {
        let _ = write!(out, " {:>11} {:>11}", "D1miss/pkt", "LLmiss/pkt");
    }
    out.push('\n');
    for (id, c) in report.order.iter().filter_map(|id| Some((id, report.counts.get(id)?))) {
        let edge = format!("{:.2}", c.edge_pct);
        let _ = write!(
            out,
            "{id:<width$} {:>12} {:>16} {:>9.1} {edge:>6}%",
            c.packets, c.ir, c.ir_per_packet
        );
        if let Some(m) = c.misses_per_packet {
            let _ = write!(out, " {:>11.2} {:>11.2}", m.d1, m.ll);
        }
        out.push('\n');
    }
    out
}

/// A baseline is only comparable on the same traffic.
pub fn check_comparable(old: &TrafficSettings, new: &TrafficSettings) -> Result<(), String> {
    if old == new {
        return Ok(());
    }
    Err(format!(
        "the baseline counted other traffic ({old:?}), not this run's ({new:?}): give the same \
         --lpm-flows, --em-flows, --size, --acl-rules and --ports"
    ))
}

pub struct Change {
    pub id: String,
    pub old: f64,
    pub new: f64,
    pub verdict: Verdict,
}

/// Instructions per packet of each configuration both reports have, in this
/// run's order; a rise of more than `tolerance` (relative) is worse.
pub fn compare(old: &Report, new: &Report, tolerance: f64) -> Vec<Change> {
    new.order
        .iter()
        .filter_map(|id| {
            let (old, new) = (old.counts.get(id)?.ir_per_packet, new.counts.get(id)?.ir_per_packet);
            let rise = new / old - 1.0;
            let verdict = match rise {
                _ if rise > tolerance => Verdict::Worse,
                _ if rise < -tolerance => Verdict::Better,
                _ => Verdict::Same,
            };
            Some(Change {
                id: id.clone(),
                old,
                new,
                verdict,
            })
        })
        .collect()
}

pub fn print_changes(changes: &[Change], tolerance: f64) {
    if changes.is_empty() {
        println!("  no configuration in common");
    }
    for c in changes {
        let change = format!(
            "{:.1} -> {:.1} Ir/pkt ({:+.2}%)",
            c.old,
            c.new,
            (c.new / c.old - 1.0) * 100.0
        );
        match c.verdict {
            Verdict::Worse => println!("REGRESSION: {}: {change}, tolerance {:.1}%", c.id, tolerance * 100.0),
            Verdict::Better => println!("better:     {}: {change}", c.id),
            Verdict::Same | Verdict::Missing => println!("same:       {}: {change}", c.id),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count(packets: u64, ir: u64) -> Count {
        let totals = BTreeMap::from([("Ir".to_string(), ir)]);
        let reads = Reads {
            zero: [0, 0],
            dump: [packets, packets],
        };
        Count::new(&reads, &totals).unwrap()
    }

    fn report(counts: &[(&str, Count)]) -> Report {
        Report {
            timestamp: "2026-12-01T21:00:00Z".into(),
            machine: Machine::test(),
            traffic: TrafficSettings {
                lpm_flows: None,
                em_flows: None,
                size: 64,
                acl_rules: "configs".into(),
                ports: Ports::Pcap,
            },
            warmup_secs: 5.0,
            settle_secs: 2.0,
            window_secs: 10.0,
            order: counts.iter().map(|(id, _)| id.to_string()).collect(),
            counts: counts.iter().map(|(id, c)| (id.to_string(), c.clone())).collect(),
        }
    }

    #[test]
    fn counts_per_packet() {
        let c = count(1_000_000, 400_000_000);
        assert_eq!(c.packets, 1_000_000);
        assert_eq!(c.ir_per_packet, 400.0);
        assert!(c.misses_per_packet.is_none(), "no cache events without --cache-sim");
        let totals = BTreeMap::from([
            ("Ir".to_string(), 1000),
            ("D1mr".to_string(), 30),
            ("D1mw".to_string(), 10),
            ("ILmr".to_string(), 1),
            ("DLmr".to_string(), 2),
            ("DLmw".to_string(), 3),
        ]);
        let reads = Reads {
            zero: [0, 0],
            dump: [10, 10],
        };
        let m = Count::new(&reads, &totals).unwrap().misses_per_packet.unwrap();
        assert_eq!((m.d1, m.ll), (4.0, 0.6));
        let none = Reads {
            zero: [5, 5],
            dump: [5, 5],
        };
        assert!(Count::new(&none, &totals).unwrap_err().contains("no packets"));
        assert!(Count::new(&reads, &BTreeMap::new())
            .unwrap_err()
            .contains("no instructions"));
    }

    #[test]
    fn the_scripts_table() {
        let r = report(&[
            ("rs-lpm", count(2_995_472, 1_198_283_852)),
            ("io", count(5_171_072, 1_314_535_106)),
        ]);
        let expected = "\
config          packets               Ir    Ir/pkt    edge
rs-lpm          2995472       1198283852     400.0   0.00%
io              5171072       1314535106     254.2   0.00%
";
        assert_eq!(table(&r), expected);
        let long = report(&[("rs-lpm-burst256", count(10, 4000))]);
        assert!(
            table(&long).starts_with("config               packets"),
            "the column widens"
        );
        assert!(table(&long).contains("rs-lpm-burst256           10"));
    }

    #[test]
    fn a_rise_above_the_tolerance_is_a_regression() {
        let old = report(&[
            ("rs-lpm", count(1000, 400_000)),
            ("rs-em", count(1000, 500_000)),
            ("io", count(1000, 250_000)),
            ("c-lpm", count(1000, 400_000)),
        ]);
        let new = report(&[
            ("rs-lpm", count(1000, 406_000)), // +1.5%
            ("rs-em", count(1000, 502_500)),  // +0.5%
            ("io", count(1000, 245_000)),     // -2%
            ("rs-fib", count(1000, 900_000)), // not in the baseline
        ]);
        let verdicts: Vec<_> = compare(&old, &new, 0.01)
            .iter()
            .map(|c| (c.id.clone(), c.verdict))
            .collect();
        assert_eq!(
            verdicts,
            [
                ("rs-lpm".to_string(), Verdict::Worse),
                ("rs-em".to_string(), Verdict::Same),
                ("io".to_string(), Verdict::Better),
            ]
        );
        let small = report(&[("rs-lpm", count(1000, 402_000))]);
        assert!(compare(&old, &small, 0.01).iter().all(|c| !c.verdict.is_regression()));
    }

    #[test]
    fn json_round_trip_and_comparable_traffic() {
        let r = report(&[("rs-lpm", count(1000, 400_000))]);
        let text = serde_json::to_string(&r).unwrap();
        assert!(text.contains(r#""rs-lpm":{"packets":1000,"ir":400000,"ir_per_packet":400.0"#));
        let back: Report = serde_json::from_str(&text).unwrap();
        assert_eq!(back.counts, r.counts);
        assert!(check_comparable(&r.traffic, &back.traffic).is_ok());
        let other = TrafficSettings {
            lpm_flows: Some(65536),
            ..r.traffic.clone()
        };
        assert!(check_comparable(&r.traffic, &other)
            .unwrap_err()
            .contains("--lpm-flows"));
        let ring = TrafficSettings {
            ports: Ports::Ring,
            ..r.traffic.clone()
        };
        assert!(
            check_comparable(&r.traffic, &ring).is_err(),
            "counts through other ports"
        );
        assert!(!text.contains("ports"), "pcap, as older reports are read");
        let ring_text = serde_json::to_string(&ring).unwrap();
        assert!(ring_text.contains(r#""ports":"ring""#), "{ring_text}");
    }
}
