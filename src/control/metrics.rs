//! `--metrics ADDR:PORT`: the counters of `--stats-json` and what the
//! live tables hold, in Prometheus' text format, over HTTP (`GET
//! /metrics`), served by the control thread.
//! Every socket is non-blocking and every buffer bounded: a slow, silent
//! or hostile client costs the control thread a few system calls per tick,
//! is dropped after a while, and never reaches an lcore.

use std::fmt::Write as _;
use std::io::{self, ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

use dpdk::StatsReader;

use crate::control::live::Tables;
use crate::control::summary::{port_packets, totals};
use crate::dataplane::counters::{DropReason, LcoreStats};
use crate::dataplane::mode::TableCount;
use crate::dataplane::pool_watch::PoolEmpty;

/// Clients served at once; more wait in the listen queue.
const MAX_CLIENTS: usize = 16;
/// A request longer than this (headers included) is refused.
const MAX_REQUEST: usize = 8192;
/// A client is dropped this long after it connected, answered or not.
const CLIENT_TIMEOUT: Duration = Duration::from_secs(5);

/// What the metrics are read from.
pub struct Sources {
    pub ports: Vec<StatsReader>,
    pub lcores: Vec<Arc<LcoreStats>>,
    pub pool_empty: PoolEmpty,
}

/// The endpoint and its clients.
pub struct Metrics {
    listener: TcpListener,
    clients: Vec<Client>,
    sources: Sources,
}

struct Client {
    stream: TcpStream,
    request: Vec<u8>,
    /// The answer, once the request is whole, and how much of it is sent.
    response: Option<(Vec<u8>, usize)>,
    since: Instant,
}

impl Metrics {
    /// Listens on `addr` (port 0: one the system picks).
    pub fn bind(addr: SocketAddr, sources: Sources) -> io::Result<Metrics> {
        let listener = TcpListener::bind(addr)?;
        listener.set_nonblocking(true)?;
        Ok(Metrics {
            listener,
            clients: Vec::new(),
            sources,
        })
    }

    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Accepts, reads and answers what is ready without waiting (the
    /// table counts from `tables`); true while a client is being served.
    pub fn serve(&mut self, tables: &mut dyn Tables) -> bool {
        while self.clients.len() < MAX_CLIENTS {
            match self.listener.accept() {
                Ok((stream, _)) if stream.set_nonblocking(true).is_ok() => self.clients.push(Client {
                    stream,
                    request: Vec::new(),
                    response: None,
                    since: Instant::now(),
                }),
                Ok(_) => {}
                Err(_) => break,
            }
        }
        let mut body = None;
        let sources = &self.sources;
        self.clients
            .retain_mut(|c| c.progress(|| body.get_or_insert_with(|| render(sources, &tables.counts())).clone()));
        !self.clients.is_empty()
    }
}

impl Client {
    /// Reads the request, or sends the answer, as far as the socket lets
    /// it now; false once the client is done with (answered, gone, too
    /// slow, or refused).
    fn progress(&mut self, body: impl FnOnce() -> String) -> bool {
        if self.since.elapsed() > CLIENT_TIMEOUT {
            return false;
        }
        if self.response.is_none() {
            let mut buf = [0u8; 1024];
            loop {
                match self.stream.read(&mut buf) {
                    Ok(0) => return false,
                    Ok(n) => self.request.extend_from_slice(&buf[..n]),
                    Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                    Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                    Err(_) => return false,
                }
                if self.request.len() > MAX_REQUEST {
                    break;
                }
            }
            let whole = self.request.windows(4).any(|w| w == b"\r\n\r\n");
            if !whole && self.request.len() <= MAX_REQUEST {
                return true;
            }
            self.response = Some((answer(&self.request, body).into_bytes(), 0));
        }
        let Some((response, sent)) = &mut self.response else {
            return true;
        };
        while *sent < response.len() {
            match self.stream.write(&response[*sent..]) {
                Ok(n) => *sent += n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => return true,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => return false,
            }
        }
        false
    }
}

/// The HTTP answer to `request`: the metrics for `GET /metrics`, an error
/// for anything else. Every answer closes the connection.
fn answer(request: &[u8], body: impl FnOnce() -> String) -> String {
    let line = request.split(|&b| b == b'\n').next().unwrap_or_default();
    let mut words = line.split(|&b| b == b' ');
    let (status, body) = match (words.next(), words.next()) {
        _ if request.len() > MAX_REQUEST => ("431 Request Header Fields Too Large", String::new()),
        (Some(b"GET"), Some(b"/metrics")) => ("200 OK", body()),
        (Some(b"GET"), Some(_)) => ("404 Not Found", "GET /metrics\n".into()),
        _ => ("405 Method Not Allowed", "GET /metrics\n".into()),
    };
    format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}

/// The metrics, in Prometheus' text format: per port, per drop reason and
/// per lcore, with the names `--stats-json` and telemetry use; and the
/// entries of the live tables.
fn render(sources: &Sources, tables: &[TableCount]) -> String {
    let mut out = String::new();
    let mut family = |name: &str, help: &str, samples: &mut dyn Iterator<Item = (String, u64)>| {
        let _ = writeln!(
            out,
            "# HELP l3fwd_{name}_total {help}\n# TYPE l3fwd_{name}_total counter"
        );
        for (labels, value) in samples {
            let _ = writeln!(out, "l3fwd_{name}_total{{{labels}}} {value}");
        }
    };
    let Sources {
        ports,
        lcores,
        pool_empty,
    } = sources;
    let port = |p: &StatsReader| format!("port=\"{}\"", p.port());
    let packets = |tx: bool| {
        ports.iter().map(move |p| {
            let (rx, sent) = port_packets(p.port(), lcores);
            (port(p), if tx { sent } else { rx })
        })
    };
    family(
        "port_rx_packets",
        "Packets the lcores received from the port.",
        &mut packets(false),
    );
    family(
        "port_tx_packets",
        "Packets the lcores handed to the port's TX queues.",
        &mut packets(true),
    );
    let driver = |read: fn(&dpdk::PortStats) -> u64| {
        ports
            .iter()
            .filter_map(move |p| Some((port(p), read(&p.stats().ok()?))))
    };
    family(
        "port_rx_missed",
        "Packets the port dropped, its RX ring full.",
        &mut driver(|s| s.rx_missed),
    );
    family(
        "port_rx_nombuf",
        "Packets the port dropped, no mbuf free.",
        &mut driver(|s| s.rx_nombuf),
    );
    family(
        "port_tx_errors",
        "Packets the port failed to send.",
        &mut driver(|s| s.tx_errors),
    );
    let capture = |read: fn(&dpdk::CaptureStats) -> u64| {
        ports
            .iter()
            .filter_map(move |p| Some((port(p), read(&p.capture_stats()?))))
    };
    family(
        "port_captured_packets",
        "Packets a capture (dpdk-dumpcap) had copied.",
        &mut capture(|c| c.copied),
    );
    family(
        "port_capture_lost_packets",
        "Packets a capture lost: no mbuf for the copy, or its ring full.",
        &mut capture(|c| c.lost),
    );
    family(
        "port_pool_empty_seconds",
        "Seconds the port received nothing while its pools were empty.",
        &mut ports.iter().map(|p| (port(p), pool_empty.seconds(p.port()))),
    );
    let sum = totals(lcores);
    family(
        "dropped_packets",
        "Packets the lcores dropped, by reason.",
        &mut DropReason::ALL
            .iter()
            .map(|&d| (format!("reason=\"{}\"", d.label()), sum.dropped(d))),
    );
    let lcore = |read: fn(&crate::dataplane::counters::Totals) -> u64| {
        lcores
            .iter()
            .map(move |l| (format!("lcore=\"{}\"", l.lcore), read(&l.counters.totals())))
    };
    family("lcore_rx_packets", "Packets the lcore received.", &mut lcore(|t| t.rx));
    family(
        "lcore_busy_cycles",
        "TSC cycles of the lcore's rounds that received packets.",
        &mut lcore(|t| t.busy_cycles),
    );
    family("lcore_polls", "RX polls of the lcore.", &mut lcore(|t| t.polls));
    family(
        "lcore_empty_polls",
        "RX polls of the lcore that brought nothing.",
        &mut lcore(|t| t.empty_polls),
    );
    let _ = writeln!(
        out,
        "# HELP l3fwd_table_entries Entries the live tables hold, by kind and family.\n\
         # TYPE l3fwd_table_entries gauge"
    );
    for t in tables {
        let (family, kind, entries) = (t.family, t.kind, t.entries);
        let _ = writeln!(
            out,
            "l3fwd_table_entries{{kind=\"{kind}\",family=\"{family}\"}} {entries}"
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_get_metrics_is_answered_with_them() {
        let body = || "l3fwd_x_total{port=\"0\"} 1\n".to_string();
        let ok = answer(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", body);
        assert!(ok.starts_with("HTTP/1.1 200 OK\r\n"), "{ok}");
        assert!(ok.ends_with("\r\n\r\nl3fwd_x_total{port=\"0\"} 1\n"), "{ok}");
        assert!(ok.contains("Content-Length: 26\r\n"), "{ok}");
        assert!(answer(b"GET / HTTP/1.1\r\n\r\n", body).starts_with("HTTP/1.1 404"));
        assert!(answer(b"POST /metrics HTTP/1.1\r\n\r\n", body).starts_with("HTTP/1.1 405"));
        assert!(answer(&[b'x'; MAX_REQUEST + 1], body).starts_with("HTTP/1.1 431"));
    }
}
