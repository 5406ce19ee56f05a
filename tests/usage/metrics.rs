//! `--metrics ADDR:PORT`: scraped while the real binary forwards, the
//! counters agree with its summary, and clients that never read, or never
//! send, do not stop it forwarding.

use std::fs;
use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::thread;
use std::time::{Duration, Instant};

use testkit::{l3fwd_rs, Process, Run, Scratch, TWO_PORTS};

/// Starts `run` with `--metrics` (a port the system picks) once it
/// forwards, and where its metrics are.
fn start(run: Run, dir: &Scratch, name: &str) -> (Process, String) {
    let mut forwarder = run.start(dir, name, Duration::from_secs(60));
    forwarder.wait_for_stderr("metrics: http://", Duration::from_secs(10));
    let log = forwarder.stderr();
    let addr = log
        .split("metrics: http://")
        .nth(1)
        .and_then(|rest| rest.split('/').next());
    let addr = addr.unwrap_or_else(|| panic!("no metrics address:\n{log}")).to_owned();
    (forwarder, addr)
}

/// `GET /metrics`: the body of a 200 answer.
fn scrape(addr: &str) -> String {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    stream
        .write_all(b"GET /metrics HTTP/1.1\r\nHost: test\r\n\r\n")
        .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let (head, body) = answer.split_once("\r\n\r\n").expect("an HTTP answer");
    assert!(head.starts_with("HTTP/1.1 200 OK"), "{answer}");
    body.to_owned()
}

/// The value of sample `name{labels}` in `body`.
fn sample(body: &str, name: &str, labels: &str) -> u64 {
    let key = format!("{name}{{{labels}}} ");
    let line = body.lines().find_map(|l| l.strip_prefix(&key));
    line.and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no {key} in:\n{body}"))
}

#[test]
fn a_scrape_while_forwarding_agrees_with_the_summary() {
    let dir = Scratch::new("metrics");
    // Port 0: frames to port 1, and runts; port 1: frames to port 0.
    let mut to_1: Vec<Vec<u8>> = (0..40)
        .map(|n| testkit::frames::udp4([198, 18, 0, 9], [198, 18, 1, n], 64, 18))
        .collect();
    let runt = testkit::frames::udp4([198, 18, 0, 9], [198, 18, 1, 1], 64, 18)[..20].to_vec();
    to_1.extend(std::iter::repeat_n(runt, 3));
    let to_0: Vec<Vec<u8>> = (0..25)
        .map(|n| testkit::frames::udp4([198, 18, 1, 9], [198, 18, 0, n], 64, 18))
        .collect();
    let mut vdevs = Vec::new();
    for (port, frames) in [to_1, to_0].iter().enumerate() {
        let input = dir.path(&format!("in{port}.pcap"));
        trafficgen::write_pcap(&input, frames).unwrap();
        let output = dir.path(&format!("out{port}.pcap"));
        vdevs.push(format!(
            "--vdev=net_pcap{port},rx_pcap={},tx_pcap={}",
            input.display(),
            output.display()
        ));
    }
    let json = dir.path("stats.json");
    let json_arg = json.display().to_string();
    let app = [TWO_PORTS, &["--metrics", "127.0.0.1:0", "--stats-json", &json_arg]].concat();
    let run = Run::new(l3fwd_rs())
        .eal_args(&[vdevs[0].as_str(), &vdevs[1]])
        .args(&app);
    let (forwarder, addr) = start(run, &dir, "metrics-agree");

    // Every frame is in once port 0's 43 and port 1's 25 are received.
    let deadline = Instant::now() + Duration::from_secs(30);
    let body = loop {
        let body = scrape(&addr);
        let rx = |port: &str| sample(&body, "l3fwd_port_rx_packets_total", &format!("port=\"{port}\""));
        if (rx("0"), rx("1")) == (43, 25) {
            break body;
        }
        assert!(Instant::now() < deadline, "not all received:\n{body}");
        thread::sleep(Duration::from_millis(100));
    };
    forwarder.stop_cleanly();

    let summary: serde_json::Value = serde_json::from_str(&fs::read_to_string(&json).unwrap()).unwrap();
    for p in summary["ports"].as_array().unwrap() {
        let labels = format!("port=\"{}\"", p["port"]);
        for (metric, field) in [("port_rx_packets", "rx_packets"), ("port_tx_packets", "tx_packets")] {
            let scraped = sample(&body, &format!("l3fwd_{metric}_total"), &labels);
            assert_eq!(Some(scraped), p[field].as_u64(), "{metric}{{{labels}}}\n{body}");
        }
    }
    assert_eq!(sample(&body, "l3fwd_port_tx_packets_total", "port=\"1\""), 40, "{body}");
    let forwarded = &summary["forwarded"];
    for (reason, field) in [
        ("runt", "dropped_runt"),
        ("invalid", "dropped_invalid"),
        ("no-rule", "dropped_no_rule"),
    ] {
        let scraped = sample(&body, "l3fwd_dropped_packets_total", &format!("reason=\"{reason}\""));
        assert_eq!(Some(scraped), forwarded[field].as_u64(), "{reason}\n{body}\n{summary}");
    }
    assert_eq!(sample(&body, "l3fwd_dropped_packets_total", "reason=\"runt\""), 3);
    let lcore_rx = sample(&body, "l3fwd_lcore_rx_packets_total", "lcore=\"0\"");
    assert_eq!(lcore_rx, 68, "{body}");
}

/// The rules of one of `configs/`' built-in files to port 0 or 1 (the
/// ports `TWO_PORTS` forwards to): their last field.
fn built_in_rules(file: &str) -> u64 {
    let text = fs::read_to_string(testkit::workspace().join("configs").join(file)).unwrap();
    let to_ours = |l: &&str| l.starts_with('R') && matches!(l.split_whitespace().last(), Some("0" | "1"));
    text.lines().filter(to_ours).count() as u64
}

#[test]
fn table_entries_follow_the_live_changes() {
    let entries = |body: &str, kind: &str, family: &str| {
        sample(
            body,
            "l3fwd_table_entries",
            &format!("kind=\"{kind}\",family=\"{family}\""),
        )
    };
    for (mode, kind, add) in [
        ("lpm", "routes", "route add 10.9.0.0/16 1"),
        ("em", "flows", "flow add R198.18.9.0 198.18.9.1 9 9 0x11 1"),
    ] {
        let dir = Scratch::new(&format!("metrics-tables-{mode}"));
        let lookup = format!("--lookup={mode}");
        let run = Run::new(l3fwd_rs())
            .eal_args(&["--vdev=net_null0", "--vdev=net_null1"])
            .args(&[TWO_PORTS, &[lookup.as_str(), "--metrics", "127.0.0.1:0"]].concat());
        let (forwarder, addr) = start(run, &dir, &format!("metrics-tables-{mode}"));
        let body = scrape(&addr);
        let v4 = built_in_rules(&format!("{mode}_v4.cfg"));
        // EM loads one family: IPv4 without --ipv6.
        let v6 = if mode == "em" {
            0
        } else {
            built_in_rules(&format!("{mode}_v6.cfg"))
        };
        assert_eq!(
            (entries(&body, kind, "ipv4"), entries(&body, kind, "ipv6")),
            (v4, v6),
            "{body}"
        );
        let out = testkit::ctl(forwarder.prefix(), &[add], "");
        assert_eq!(String::from_utf8_lossy(&out.stdout), "ok\n", "{mode}");
        let body = scrape(&addr);
        assert_eq!(entries(&body, kind, "ipv4"), v4 + 1, "{mode}: after '{add}'\n{body}");
        forwarder.stop_cleanly();
    }
}

/// Reads `stream` until its peer closes it (true) or `limit` passes.
fn closed_by_peer(stream: &mut TcpStream, limit: Duration) -> bool {
    stream.set_read_timeout(Some(Duration::from_millis(200))).unwrap();
    let deadline = Instant::now() + limit;
    let mut buf = [0u8; 65536];
    while Instant::now() < deadline {
        match stream.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => {}
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(_) => return true, // reset
        }
    }
    false
}

#[test]
fn clients_that_never_read_or_never_send_do_not_stop_forwarding() {
    let dir = Scratch::new("metrics-hostile");
    let app = [TWO_PORTS, &["--metrics", "127.0.0.1:0"]].concat();
    let run = Run::new(l3fwd_rs())
        .eal_args(&["--vdev=net_null0", "--vdev=net_null1"])
        .args(&app);
    let (forwarder, addr) = start(run, &dir, "metrics-hostile");

    // More silent clients than are served at once, and one that sends a
    // megabyte of requests and reads nothing.
    let silent: Vec<TcpStream> = (0..20).map(|_| TcpStream::connect(&addr).unwrap()).collect();
    let mut greedy = TcpStream::connect(&addr).unwrap();
    greedy.set_write_timeout(Some(Duration::from_secs(2))).unwrap();
    let requests = b"GET /metrics HTTP/1.1\r\n\r\n".repeat(40_000);
    let _ = greedy.write_all(&requests); // may stop short: the server stops reading

    let rx = |body: &str| sample(body, "l3fwd_port_rx_packets_total", "port=\"0\"");
    let first = rx(&scrape(&addr));
    thread::sleep(Duration::from_millis(500));
    let second = rx(&scrape(&addr));
    assert!(
        second > first,
        "port 0 received nothing between two scrapes: {first}, {second}"
    );
    assert!(
        closed_by_peer(&mut greedy, Duration::from_secs(10)),
        "the greedy client was never dropped"
    );
    drop(silent);

    forwarder.stop_cleanly();
}
