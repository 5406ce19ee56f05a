//! The latency report: one point per forwarder and load, and per
//! forwarder its throughput, printed as tables and written as JSON.

use super::forwarders::Forwarder;
use super::iperf::Throughput;
use super::sockperf::{Latency, Mode};
use crate::machine::Machine;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, PartialEq, Debug)]
pub struct LatencyReport {
    pub timestamp: String,
    pub machine: Machine,
    pub settings: LatencySettings,
    pub points: Vec<Point>,
    #[serde(default)]
    pub throughput: Vec<ThroughputPoint>,
}

#[derive(Serialize, Deserialize, PartialEq, Debug)]
pub struct LatencySettings {
    /// Seconds of each sockperf client run (its first 400 ms are warm-up).
    pub secs: u32,
    pub msg_size: u32,
    pub rates: Vec<u64>,
    pub forwarders: Vec<String>,
    /// sockperf reports RTT/2; so does this report.
    pub latency: String,
    pub sockperf_cpu: u32,
    pub forwarder_cpu: u32,
    /// The DPDK forwarders' PMD (`af_xdp`, `af_packet`).
    #[serde(default = "af_xdp")]
    pub pmd: String,
    /// Seconds of each iperf3 run; 0: none.
    #[serde(default)]
    pub throughput_secs: u32,
    /// The af_xdp ports' busy_budget devarg.
    #[serde(default)]
    pub busy_budget: u32,
    /// Guest halt polling during the runs, ns; none without cpuidle-haltpoll.
    #[serde(default)]
    pub halt_poll_ns: Option<u64>,
}

/// What reports written before `pmd` was recorded ran on.
fn af_xdp() -> String {
    "af_xdp".into()
}

/// One forwarder's iperf3 runs: a TCP stream, then a flood of 64-byte
/// UDP frames.
#[derive(Serialize, Deserialize, PartialEq, Debug)]
pub struct ThroughputPoint {
    pub forwarder: String,
    pub label: String,
    pub tcp: Option<Throughput>,
    pub udp: Option<Throughput>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<String>,
}

impl ThroughputPoint {
    pub fn new(forwarder: Forwarder, tcp: Result<Throughput, String>, udp: Result<Throughput, String>) -> Self {
        let errors = [&tcp, &udp].into_iter().filter_map(|r| r.clone().err()).collect();
        ThroughputPoint {
            forwarder: forwarder.id(),
            label: forwarder.label(),
            tcp: tcp.ok(),
            udp: udp.ok(),
            errors,
        }
    }
}

/// One sockperf client run through one forwarder.
#[derive(Serialize, Deserialize, PartialEq, Debug)]
pub struct Point {
    pub forwarder: String,
    pub label: String,
    /// "ping-pong" or "under-load".
    pub mode: String,
    /// Messages a second asked of under-load; none for ping-pong (as fast
    /// as replies come back).
    pub offered_mps: Option<u64>,
    /// Every how many messages the server replied (1 for ping-pong).
    pub reply_every: u64,
    pub latency: Option<Latency>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl Point {
    pub fn new(forwarder: Forwarder, mode: Mode, result: Result<Latency, String>) -> Point {
        let (name, offered_mps, reply_every) = match mode {
            Mode::PingPong => ("ping-pong", None, 1),
            Mode::UnderLoad { mps, reply_every } => ("under-load", Some(mps), reply_every),
        };
        Point {
            forwarder: forwarder.id(),
            label: forwarder.label(),
            mode: name.into(),
            offered_mps,
            reply_every,
            error: result.as_ref().err().cloned(),
            latency: result.ok(),
        }
    }

    /// "ping-pong" or the offered rate.
    pub fn load(&self) -> String {
        match self.offered_mps {
            None => self.mode.clone(),
            Some(mps) => format!("{mps} msg/s"),
        }
    }
}

/// The table: a line per point, latencies in microseconds.
pub fn table(report: &LatencyReport) -> String {
    let mut out = format!(
        "{:<28} {:<13} {:>9} {:>7} {:>8} {:>8} {:>8} {:>8} {:>9} {:>7}\n",
        "forwarder", "load", "sent/s", "obs", "p50", "p90", "p99", "p99.9", "max", "dropped"
    );
    for p in &report.points {
        let Some(l) = &p.latency else {
            let why = p.error.as_deref().unwrap_or("");
            out += &format!("{:<28} {:<13} failed: {why}\n", p.label, p.load());
            continue;
        };
        out += &format!(
            "{:<28} {:<13} {:>9.0} {:>7} {:>8.1} {:>8.1} {:>8.1} {:>8.1} {:>9.1} {:>7}\n",
            p.label,
            p.load(),
            l.sent_per_sec(),
            l.observations,
            l.p50_us,
            l.p90_us,
            l.p99_us,
            l.p99_9_us,
            l.max_us,
            l.dropped
        );
    }
    out += &format!(
        "\none-way latency in us (sockperf's RTT/2), {}-byte UDP messages, {} s a run (400 ms warm-up \
         not counted);\nsent/s: messages the client sent a second; obs: replies measured (under-load: \
         the server replies to one message in reply_every); dropped: replies missing\n",
        report.settings.msg_size, report.settings.secs
    );
    let s = &report.settings;
    let halt_poll = match s.halt_poll_ns {
        Some(ns) => format!("{ns} ns"),
        None => "none (no cpuidle-haltpoll)".into(),
    };
    out += &format!(
        "sockperf on CPU {}, DPDK forwarders on CPU {} on {} ports; af_xdp busy_budget {}; guest halt polling {halt_poll}\n",
        s.sockperf_cpu, s.forwarder_cpu, s.pmd, s.busy_budget
    );
    if !report.throughput.is_empty() {
        out += &throughput_table(report);
    }
    out
}

/// The iperf3 table: a line per forwarder.
fn throughput_table(report: &LatencyReport) -> String {
    let mut out = format!("\n{:<28} {:>10} {:>14}\n", "forwarder", "TCP Gbit/s", "UDP 64 B kpps");
    for t in &report.throughput {
        let tcp = t
            .tcp
            .map_or("failed".into(), |t| format!("{:.2}", t.bits_per_sec / 1e9));
        let udp = t
            .udp
            .and_then(|u| u.packets_per_sec)
            .map_or("failed".into(), |pps| format!("{:.0}", pps / 1e3));
        out += &format!("{:<28} {tcp:>10} {udp:>14}\n", t.label);
        for e in &t.errors {
            out += &format!("  {e}\n");
        }
    }
    out += &format!(
        "iperf3 from site 0 to site 1, {} s a run: one TCP stream; UDP datagrams of 18 bytes (64-byte \
         frames) sent as fast as the client can, counted as they arrive\n",
        report.settings.throughput_secs
    );
    out
}

#[cfg(test)]
pub mod tests {
    use super::*;

    pub fn latency(p50: f64, sent: u64) -> Latency {
        Latency {
            observations: 1000,
            p50_us: p50,
            p90_us: p50 * 1.5,
            p99_us: p50 * 2.0,
            p99_9_us: p50 * 3.0,
            max_us: p50 * 10.0,
            min_us: p50 / 2.0,
            avg_us: p50,
            sent,
            received: 1000,
            valid_secs: 2.0,
            dropped: 0,
        }
    }

    pub fn sample() -> LatencyReport {
        let load = |mps| Mode::UnderLoad {
            mps,
            reply_every: mps / 1000,
        };
        let points = vec![
            Point::new(Forwarder::RS, Mode::PingPong, Ok(latency(5.0, 100_000))),
            Point::new(Forwarder::RS, load(10_000), Ok(latency(6.0, 20_000))),
            Point::new(Forwarder::RS, load(100_000), Ok(latency(9.0, 200_000))),
            Point::new(Forwarder::Kernel, Mode::PingPong, Ok(latency(8.0, 90_000))),
            Point::new(Forwarder::Kernel, load(10_000), Ok(latency(8.5, 20_000))),
            Point::new(Forwarder::Kernel, load(100_000), Err("no reply".into())),
        ];
        LatencyReport {
            timestamp: "2026-01-01T00:00:00Z".into(),
            machine: Machine::test(),
            settings: LatencySettings {
                secs: 2,
                msg_size: 64,
                rates: vec![10_000, 100_000],
                forwarders: vec!["rs".into(), "kernel".into()],
                latency: "one-way (RTT/2)".into(),
                sockperf_cpu: 0,
                forwarder_cpu: 1,
                pmd: "af_xdp".into(),
                throughput_secs: 3,
                busy_budget: 0,
                halt_poll_ns: Some(200_000),
            },
            points,
            throughput: vec![ThroughputPoint::new(
                Forwarder::RS,
                Ok(Throughput {
                    bits_per_sec: 2.29e9,
                    packets_per_sec: None,
                }),
                Err("iperf3: the server is busy".into()),
            )],
        }
    }

    #[test]
    fn table_has_a_line_per_point() {
        let t = table(&sample());
        let lines: Vec<&str> = t.lines().collect();
        assert!(lines[0].starts_with("forwarder") && lines[0].contains("p99.9"));
        let words = |l: &str| l.split_whitespace().map(String::from).collect::<Vec<_>>();
        assert_eq!(
            words(lines[1]),
            [
                "l3fwd-rs",
                "ping-pong",
                "50000",
                "1000",
                "5.0",
                "7.5",
                "10.0",
                "15.0",
                "50.0",
                "0"
            ]
        );
        assert_eq!(words(lines[3])[1..4], ["100000", "msg/s", "100000"]);
        assert!(lines[6].contains("Linux kernel forwarding") && lines[6].ends_with("failed: no reply"));
        assert!(t.contains("RTT/2"));
        assert!(
            t.contains("CPU 1 on af_xdp ports; af_xdp busy_budget 0; guest halt polling 200000 ns\n"),
            "{t}"
        );
        let rs = t
            .lines()
            .find(|l| l.starts_with("l3fwd-rs") && l.contains("2.29"))
            .unwrap();
        assert_eq!(words(rs), ["l3fwd-rs", "2.29", "failed"], "{t}");
        assert!(
            t.contains("  iperf3: the server is busy\n") && t.contains(", 3 s a run"),
            "{t}"
        );
    }

    #[test]
    fn json_keeps_every_point() {
        let r = sample();
        let text = serde_json::to_string_pretty(&r).unwrap();
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        let points = value["points"].as_array().unwrap();
        assert_eq!(points.len(), 6);
        assert_eq!(points[0]["mode"], "ping-pong");
        assert_eq!(points[0]["offered_mps"], serde_json::Value::Null);
        assert_eq!(points[2]["offered_mps"], 100_000);
        assert_eq!(points[2]["reply_every"], 100);
        assert_eq!(points[2]["latency"]["p99_9_us"], 27.0);
        assert_eq!(points[5]["error"], "no reply");
        assert_eq!(value["throughput"][0]["tcp"]["bits_per_sec"], 2.29e9);
        assert_eq!(serde_json::from_str::<LatencyReport>(&text).unwrap(), r);
    }
}
