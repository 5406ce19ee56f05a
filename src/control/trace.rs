//! `l3fwd-ctl trace`'s lines: a packet the lcores recorded
//! ([`crate::dataplane::trace`]), as a person reads it, in four parts:
//! where it came in, its headers, what the lookup made of it, and where
//! it went (with the rewrite).

use etherparse::{LaxNetSlice, LaxSlicedPacket, TransportSlice};

use crate::dataplane::lookup::Route;
use crate::dataplane::trace::{Fate, Input, Record};

/// The line of `record`; `lookup` says what the mode's lookup keys on
/// and which rule decides (see [`crate::dataplane::mode::Mode::explain`]).
pub fn line(record: &Record, lookup: &str) -> String {
    let input = match record.input {
        Input::Queue { port, queue } => format!("port {port} queue {queue}"),
        Input::Event { port } => format!("port {port} (event)"),
    };
    let answer = match record.route {
        Route::NO_MATCH => "no match".to_string(),
        Route::RUNT => "runt".to_string(),
        Route::DENIED => "denied".to_string(),
        port => format!("port {}", port.bits()),
    };
    let fate = match record.fate {
        Fate::Sent(port) => format!("tx port {port}: {}", rewrite(record)),
        Fate::Dropped(reason) => format!("dropped ({})", reason.label()),
    };
    format!(
        "lcore {} {input} | {} | {lookup} -> {answer} | {fate}",
        record.lcore,
        headers(record.frame_before(), record.len)
    )
}

/// The frame's length and headers: addresses, protocol, TCP/UDP ports, TTL.
fn headers(frame: &[u8], len: usize) -> String {
    let Ok(packet) = LaxSlicedPacket::from_ethernet(frame) else {
        return format!("{len} B, not a whole Ethernet header");
    };
    let ports = match &packet.transport {
        Some(TransportSlice::Udp(u)) => format!(" udp {} > {}", u.source_port(), u.destination_port()),
        Some(TransportSlice::Tcp(t)) => format!(" tcp {} > {}", t.source_port(), t.destination_port()),
        _ => String::new(),
    };
    match &packet.net {
        Some(LaxNetSlice::Ipv4(ip)) => {
            let h = ip.header();
            format!(
                "{len} B IPv4 {} > {} proto {}{ports} ttl {}",
                h.source_addr(),
                h.destination_addr(),
                h.protocol().0,
                h.ttl()
            )
        }
        Some(LaxNetSlice::Ipv6(ip)) => {
            let h = ip.header();
            format!(
                "{len} B IPv6 {} > {} next header {}{ports} hop limit {}",
                h.source_addr(),
                h.destination_addr(),
                h.next_header().0,
                h.hop_limit()
            )
        }
        None => {
            let why = match &packet.stop_err {
                Some((_, layer)) => format!(", too short for its {layer}"),
                None => String::new(),
            };
            match frame.get(12..14) {
                Some(&[a, b]) => format!("{len} B ethertype {:#06x}{why}", u16::from_be_bytes([a, b])),
                _ => format!("{len} B{why}"),
            }
        }
    }
}

/// The rewrite: the new MACs, and the TTL or hop limit if it changed.
fn rewrite(record: &Record) -> String {
    let (before, after) = (record.frame_before(), record.frame_after());
    let mac = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<Vec<_>>().join(":");
    let mut text = match (after.get(..6), after.get(6..12)) {
        (Some(dst), Some(src)) => format!("dst {} src {}", mac(dst), mac(src)),
        _ => "frame unchanged".to_string(),
    };
    let ttl = |f: &[u8]| match LaxSlicedPacket::from_ethernet(f).ok()?.net? {
        LaxNetSlice::Ipv4(ip) => Some(("ttl", ip.header().ttl())),
        LaxNetSlice::Ipv6(ip) => Some(("hop limit", ip.header().hop_limit())),
    };
    if let (Some((name, old)), Some((_, new))) = (ttl(before), ttl(after)) {
        if old != new {
            text += &format!(" {name} {new}");
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataplane::counters::DropReason;

    /// A UDP frame from 198.18.0.1:7 to 198.18.1.5:9, TTL 64.
    fn udp4() -> Vec<u8> {
        let mut frame = Vec::new();
        etherparse::PacketBuilder::ethernet2([2; 6], [4; 6])
            .ipv4([198, 18, 0, 1], [198, 18, 1, 5], 64)
            .udp(7, 9)
            .write(&mut frame, &[0; 18])
            .unwrap();
        frame
    }

    #[test]
    fn a_sent_packet_shows_input_headers_answer_and_rewrite() {
        let frame = udp4();
        let mut record = Record::new(1, Input::Queue { port: 0, queue: 2 }, &frame, Route::port(1));
        let mut out = frame.clone();
        out[..6].copy_from_slice(&[0x02, 0, 0, 0, 0, 1]);
        out[22] = 63;
        record.rewritten(&out);
        record.fate = Fate::Sent(1);
        assert_eq!(
            line(&record, "dst 198.18.1.5: route 198.18.1.0/24"),
            "lcore 1 port 0 queue 2 | 60 B IPv4 198.18.0.1 > 198.18.1.5 proto 17 udp 7 > 9 ttl 64 \
             | dst 198.18.1.5: route 198.18.1.0/24 -> port 1 | tx port 1: dst 02:00:00:00:00:01 src 02:02:02:02:02:02 ttl 63"
        );
    }

    #[test]
    fn drops_runts_and_other_frames_say_what_they_are() {
        let mut record = Record::new(0, Input::Event { port: 3 }, &udp4()[..20], Route::RUNT);
        record.fate = Fate::Dropped(DropReason::Runt);
        let text = line(&record, "dst none");
        assert!(text.starts_with("lcore 0 port 3 (event) | 20 B"), "{text}");
        assert!(text.ends_with("| dst none -> runt | dropped (runt)"), "{text}");
        let mut arp = udp4();
        arp[12..14].copy_from_slice(&[0x08, 0x06]);
        let record = Record::new(0, Input::Event { port: 3 }, &arp, Route::NO_MATCH);
        assert!(line(&record, "-").contains("60 B ethertype 0x0806"));
    }
}
