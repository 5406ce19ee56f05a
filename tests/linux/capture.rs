//! What a site received, as the kernel saw it: tcpdump on the namespace's
//! interface (inbound only), written to a pcap file and checked frame by
//! frame.

use std::fs::{self, File};
use std::net::IpAddr;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use etherparse::{NetSlice, SlicedPacket};

use super::sites::Site;

/// A tcpdump process, killed on drop if still running.
pub struct Capture {
    child: Child,
    file: PathBuf,
    log: PathBuf,
}

impl Capture {
    /// Starts capturing what `site`'s interface receives; returns once
    /// tcpdump listens.
    pub fn start(site: &Site, file: PathBuf) -> Capture {
        let log = file.with_extension("log");
        let child = Command::new("ip")
            .args([
                "netns",
                "exec",
                &site.ns.name,
                "tcpdump",
                "-Q",
                "in",
                "-U",
                "-n",
                "-i",
                &site.iface,
                "-w",
            ])
            .arg(&file)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(File::create(&log).expect("create tcpdump log"))
            .spawn()
            .expect("spawn tcpdump (Debian package tcpdump)");
        let capture = Capture { child, file, log };
        let start = Instant::now();
        while !fs::read_to_string(&capture.log)
            .unwrap_or_default()
            .contains("listening on")
        {
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "tcpdump did not start: {}",
                capture.log_text()
            );
            thread::sleep(Duration::from_millis(20));
        }
        capture
    }

    fn log_text(&self) -> String {
        fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Stops tcpdump and returns the frames it captured.
    pub fn stop(mut self) -> Vec<Vec<u8>> {
        // tcpdump runs under `ip netns exec`, which execs it: same pid.
        super::run("kill", &["-INT", &self.child.id().to_string()]);
        let status = self.child.wait().expect("wait for tcpdump");
        assert!(status.success(), "tcpdump: {status}: {}", self.log_text());
        trafficgen::read_pcap(&self.file).unwrap_or_else(|err| panic!("{}: {err}", self.file.display()))
    }
}

impl Drop for Capture {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// What the frames a site received from the other site looked like.
#[derive(Debug, Default)]
pub struct Received {
    /// Frames whose IP source was the other site.
    pub from_peer: usize,
    pub udp: usize,
    pub tcp: usize,
    pub icmp: usize,
    /// Frames from the other site that had the wrong MACs or TTL.
    pub wrong: Vec<String>,
}

/// Checks every frame `receiver` got from `sender`'s address: Ethernet
/// source is the forwarder's port, destination the receiver's interface,
/// IPv4 TTL 63 (one hop from a Linux sender's 64) and IPv6 hop limit 64
/// (l3fwd, like the C sample, leaves it alone).
pub fn check_frames(frames: &[Vec<u8>], receiver: &Site, sender: &Site) -> Received {
    let peer_addrs: [IpAddr; 2] = [sender.addr4.into(), sender.addr6.into()];
    let mut seen = Received::default();
    for frame in frames {
        let Ok(packet) = SlicedPacket::from_ethernet(frame) else {
            continue;
        };
        let (src, ttl, expected_ttl) = match &packet.net {
            Some(NetSlice::Ipv4(ip)) => (IpAddr::from(ip.header().source_addr()), ip.header().ttl(), 63),
            Some(NetSlice::Ipv6(ip)) => (IpAddr::from(ip.header().source_addr()), ip.header().hop_limit(), 64),
            _ => continue,
        };
        if !peer_addrs.contains(&src) {
            continue;
        }
        seen.from_peer += 1;
        match &packet.transport {
            Some(etherparse::TransportSlice::Udp(_)) => seen.udp += 1,
            Some(etherparse::TransportSlice::Tcp(_)) => seen.tcp += 1,
            Some(etherparse::TransportSlice::Icmpv4(_) | etherparse::TransportSlice::Icmpv6(_)) => seen.icmp += 1,
            _ => {}
        }
        let (dst_mac, src_mac) = (mac(&frame[0..6]), mac(&frame[6..12]));
        if dst_mac != receiver.mac || src_mac != receiver.port_mac || ttl != expected_ttl {
            seen.wrong
                .push(format!("from {src}: {src_mac} -> {dst_mac}, ttl {ttl}"));
        }
    }
    seen
}

fn mac(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect::<Vec<_>>().join(":")
}
