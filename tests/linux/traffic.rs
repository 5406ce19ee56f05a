//! Kernel traffic between the two sites: ping, a TCP transfer whose bytes
//! are checked end to end, and UDP flows both ways with every datagram
//! numbered. Sockets are made by threads that joined a site's network
//! namespace (setns applies to the calling thread only).

use std::fs::File;
use std::io::{Read, Write};
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::os::fd::AsFd;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Barrier};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use rustix::net::{AddressFamily, SocketType};
use rustix::thread::LinkNameSpaceType;

use super::sites::Site;

/// Runs `f` on a new thread inside network namespace `ns`.
pub fn spawn_in<T: Send + 'static>(ns: &str, f: impl FnOnce() -> T + Send + 'static) -> JoinHandle<T> {
    let path = format!("/run/netns/{ns}");
    thread::spawn(move || {
        let file = File::open(&path).unwrap_or_else(|err| panic!("{path}: {err}"));
        rustix::thread::move_into_link_name_space(file.as_fd(), Some(LinkNameSpaceType::Network))
            .unwrap_or_else(|err| panic!("setns {path}: {err}"));
        f()
    })
}

fn join<T>(handle: JoinHandle<T>) -> T {
    handle.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}

/// What `ping` printed.
#[derive(Debug)]
pub struct Ping {
    pub transmitted: u32,
    pub received: u32,
    /// The TTL (IPv4) or hop limit (IPv6) of each reply.
    pub ttls: Vec<u8>,
    pub duplicates: u32,
    /// Shown in failure messages only (through Debug).
    #[allow(dead_code)]
    pub rtt_avg_ms: f64,
    pub output: String,
}

/// `count` echo requests from `from` to `to`, 10 ms apart.
pub fn ping(from: &Site, to: IpAddr, count: u32) -> Ping {
    let family = if to.is_ipv6() { "-6" } else { "-4" };
    let output = from.ns.exec(
        "ping",
        &[
            family,
            "-n",
            "-c",
            &count.to_string(),
            "-i",
            "0.01",
            "-W",
            "1",
            &to.to_string(),
        ],
    );
    let field = |line: &str, before: &str| -> Option<String> {
        let start = line.find(before)? + before.len();
        Some(
            line[start..]
                .split(|c: char| !c.is_ascii_digit() && c != '.')
                .next()?
                .to_owned(),
        )
    };
    let summary = output
        .lines()
        .find(|l| l.contains("packets transmitted"))
        .unwrap_or_else(|| panic!("no ping summary in\n{output}"));
    let rtt_avg_ms = output
        .lines()
        .find_map(|l| l.strip_prefix("rtt min/avg/max/mdev = "))
        .and_then(|v| v.split('/').nth(1)?.parse().ok())
        .unwrap_or(f64::NAN);
    Ping {
        transmitted: summary.split(' ').next().unwrap().parse().unwrap(),
        received: field(summary, "transmitted, ").unwrap().parse().unwrap(),
        ttls: output
            .lines()
            .filter(|l| !l.contains("DUP!"))
            .filter_map(|l| field(l, "ttl=")?.parse().ok())
            .collect(),
        duplicates: output.lines().filter(|l| l.contains("DUP!")).count() as u32,
        rtt_avg_ms,
        output,
    }
}

/// FNV-1a, 64 bit: the end-to-end check of a transfer.
#[derive(Clone, Copy)]
struct Digest(u64);

impl Digest {
    fn new() -> Digest {
        Digest(0xcbf2_9ce4_8422_2325)
    }
    fn update(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
}

/// Pseudo-random bytes (xorshift64), the same on every run.
fn fill_pattern(state: &mut u64, buf: &mut [u8]) {
    for chunk in buf.chunks_mut(8) {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        chunk.copy_from_slice(&state.to_le_bytes()[..chunk.len()]);
    }
}

/// What a TCP transfer delivered.
#[derive(Debug)]
pub struct Transfer {
    /// Shown in failure messages only (through Debug).
    #[allow(dead_code)]
    pub sent: u64,
    pub received: u64,
    /// Whether the receiver's digest equals the sender's.
    pub intact: bool,
    pub seconds: f64,
}

impl Transfer {
    pub fn mbit_per_s(&self) -> f64 {
        self.received as f64 * 8.0 / self.seconds / 1e6
    }
}

/// `bytes` from `client` (bound to `client_port`) to a server on
/// `server`:`server_port`; both ports fixed so that exact-match rules can
/// name the flow.
pub fn tcp_transfer(client: &Site, server: &Site, v6: bool, ports: (u16, u16), bytes: u64) -> Transfer {
    tcp_transfer_counted(client, server, v6, ports, bytes, &Arc::new(AtomicU64::new(0)))
}

/// [`tcp_transfer`], with the bytes received so far kept in `progress`, for
/// a test that acts mid-stream.
pub fn tcp_transfer_counted(
    client: &Site,
    server: &Site,
    v6: bool,
    ports: (u16, u16),
    bytes: u64,
    progress: &Arc<AtomicU64>,
) -> Transfer {
    let (client_port, server_port) = ports;
    let progress = Arc::clone(progress);
    let server_addr = SocketAddr::new(server.addr(v6), server_port);
    let client_addr = SocketAddr::new(client.addr(v6), client_port);
    let listener = join(spawn_in(&server.ns.name, move || {
        TcpListener::bind(server_addr).expect("bind TCP server")
    }));
    let receiver = thread::spawn(move || {
        // The listening socket belongs to the server's namespace already.
        let (mut stream, _) = listener.accept().expect("accept");
        stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let (mut digest, mut received, mut buf) = (Digest::new(), 0u64, vec![0; 64 * 1024]);
        loop {
            match stream.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    digest.update(&buf[..n]);
                    received += n as u64;
                    progress.store(received, Ordering::Relaxed);
                }
                Err(err) => panic!("TCP receive after {received} bytes: {err}"),
            }
        }
        (digest.0, received)
    });
    let sender = spawn_in(&client.ns.name, move || {
        let mut stream = connect_from(client_addr, server_addr);
        let start = Instant::now();
        let (mut digest, mut state, mut buf) = (Digest::new(), 0x9e37_79b9_7f4a_7c15u64, vec![0; 64 * 1024]);
        let mut left = bytes;
        while left > 0 {
            let n = left.min(buf.len() as u64) as usize;
            fill_pattern(&mut state, &mut buf[..n]);
            digest.update(&buf[..n]);
            stream.write_all(&buf[..n]).expect("TCP send");
            left -= n as u64;
        }
        stream.shutdown(std::net::Shutdown::Write).unwrap();
        (digest.0, start)
    });
    let (sent_digest, start) = join(sender);
    let (received_digest, received) = join(receiver);
    Transfer {
        sent: bytes,
        received,
        intact: received == bytes && received_digest == sent_digest,
        seconds: start.elapsed().as_secs_f64(),
    }
}

/// A TCP connection from a fixed local address (std binds an ephemeral
/// port; exact-match rules need the port in advance).
fn connect_from(local: SocketAddr, remote: SocketAddr) -> TcpStream {
    let family = if local.is_ipv6() {
        AddressFamily::INET6
    } else {
        AddressFamily::INET
    };
    let fd = rustix::net::socket(family, SocketType::STREAM, None).expect("TCP socket");
    rustix::net::sockopt::set_socket_reuseaddr(&fd, true).unwrap();
    rustix::net::bind(&fd, &local).unwrap_or_else(|err| panic!("bind {local}: {err}"));
    rustix::net::connect(&fd, &remote).unwrap_or_else(|err| panic!("connect {local} -> {remote}: {err}"));
    TcpStream::from(fd)
}

/// UDP port pairs (site 0's, site 1's) of `flows` flows.
pub fn udp_ports(flows: u16) -> Vec<(u16, u16)> {
    (0..flows).map(|f| (6000 + f, 5000 + f)).collect()
}

/// What one direction of [`udp_both_ways`] delivered.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Delivery {
    pub sent: u32,
    /// Distinct datagrams received intact.
    pub received: u32,
    pub duplicates: u32,
    pub corrupt: u32,
}

const UDP_PAYLOAD: usize = 200;

/// `per_flow` datagrams on each of `flows` flows (ports from
/// [`udp_ports`]) from site 0 to site 1 and back at the same time; returns
/// what each direction delivered, site 0 -> 1 first.
pub fn udp_both_ways(sites: &[Site; 2], v6: bool, flows: u16, per_flow: u32) -> [Delivery; 2] {
    let ready = Arc::new(Barrier::new(2));
    let ports = udp_ports(flows);
    let side = |me: usize| {
        let (local, peer) = (sites[me].addr(v6), sites[1 - me].addr(v6));
        let pairs: Vec<(u16, u16)> = ports
            .iter()
            .map(|&(a, b)| if me == 0 { (a, b) } else { (b, a) })
            .collect();
        let ready = Arc::clone(&ready);
        spawn_in(&sites[me].ns.name, move || {
            let sockets: Vec<UdpSocket> = pairs
                .iter()
                .map(|&(mine, _)| {
                    let s = UdpSocket::bind((local, mine)).expect("bind UDP");
                    s.set_nonblocking(true).unwrap();
                    s
                })
                .collect();
            ready.wait();
            let mut payload = [0u8; UDP_PAYLOAD];
            for seq in 0..per_flow {
                for (flow, (s, &(_, theirs))) in sockets.iter().zip(&pairs).enumerate() {
                    datagram(flow as u16, seq, &mut payload);
                    s.send_to(&payload, (peer, theirs)).expect("UDP send");
                }
                // About 16 datagrams per 200 us each way: no queue on the way
                // overflows.
                thread::sleep(Duration::from_micros(200));
            }
            receive_all(&sockets, per_flow)
        })
    };
    let (zero, one) = (side(0), side(1));
    let (from_one, from_zero) = (join(zero), join(one));
    let sent = u32::from(flows) * per_flow;
    [Delivery { sent, ..from_zero }, Delivery { sent, ..from_one }]
}

/// Datagram `seq` of `flow`: flow and sequence number, then a pattern
/// derived from both.
fn datagram(flow: u16, seq: u32, out: &mut [u8; UDP_PAYLOAD]) {
    out[..2].copy_from_slice(&flow.to_be_bytes());
    out[2..6].copy_from_slice(&seq.to_be_bytes());
    let mut state = (u64::from(flow) << 32 | u64::from(seq)) ^ 0x5851_f42d_4c95_7f2d;
    fill_pattern(&mut state, &mut out[6..]);
}

/// Receives on every socket until each has `per_flow` datagrams or nothing
/// came for a while.
fn receive_all(sockets: &[UdpSocket], per_flow: u32) -> Delivery {
    let mut seen = vec![vec![false; per_flow as usize]; sockets.len()];
    let mut got = Delivery::default();
    let mut last = Instant::now();
    let mut buf = [0u8; 2048];
    let mut expected = [0u8; UDP_PAYLOAD];
    while got.received < per_flow * sockets.len() as u32 && last.elapsed() < Duration::from_millis(1000) {
        let mut idle = true;
        for (flow, s) in sockets.iter().enumerate() {
            while let Ok(n) = s.recv(&mut buf) {
                idle = false;
                let seq = u32::from_be_bytes(buf[2..6].try_into().unwrap());
                datagram(flow as u16, seq, &mut expected);
                if n != UDP_PAYLOAD || buf[..n] != expected[..] || seq >= per_flow {
                    got.corrupt += 1;
                } else if std::mem::replace(&mut seen[flow][seq as usize], true) {
                    got.duplicates += 1;
                } else {
                    got.received += 1;
                }
            }
        }
        if idle {
            thread::sleep(Duration::from_millis(1));
        } else {
            last = Instant::now();
        }
    }
    got
}
