//! What each option's value may be: the parsers clap calls for
//! l3fwd's option values, with C's spellings, limits and messages.

use std::fmt;

use dpdk::{MAX_LCORES, MAX_PORTS, MAX_QUEUES_PER_PORT};
use rulefile::{parse_c_ulong, quote, skip_c_space};

use crate::cli::plan::ConfigEntry;
use crate::cli::portmask::PortMask;
use crate::cli::{EthDest, Model};
use l3fwd_modes::{self as mode, ModeInfo, MODES};

/// `--mode`: as C's `parse_mode`, `eventdev` selects the event model and
/// any other value leaves poll mode (with a warning unless it is `poll`).
pub(super) fn parse_model(text: &str) -> Result<Model, String> {
    Ok(match text {
        "eventdev" => Model::Eventdev,
        "poll" => Model::Poll,
        other => {
            log::warn!("--mode {}: neither poll nor eventdev; poll mode, as in C", quote(other));
            Model::Poll
        }
    })
}

/// `--eventq-sched`: as C's `parse_eventq_sched`, an unknown value keeps
/// the default, atomic (with a warning here).
pub(super) fn parse_eventq_sched(text: &str) -> Result<dpdk::SchedType, String> {
    Ok(match text {
        "ordered" => dpdk::SchedType::Ordered,
        "atomic" => dpdk::SchedType::Atomic,
        "parallel" => dpdk::SchedType::Parallel,
        other => {
            log::warn!(
                "--eventq-sched {}: not ordered, atomic or parallel; atomic, as in C",
                quote(other)
            );
            dpdk::SchedType::Atomic
        }
    })
}

/// `--event-vector-size` / `--event-vector-tmo`: decimal; as C's
/// `strtol`/`strtoull` give 0 for what is not a number, and 0 means the
/// default (with a warning here).
pub(super) fn parse_vector_number(text: &str) -> Result<u64, String> {
    Ok(text.parse::<u64>().unwrap_or_else(|_| {
        log::warn!("{}: not a number; the default, as in C", quote(text));
        0
    }))
}

/// `--event-eth-rxqs`: as C's `parse_event_eth_rx_queues`, what is not a
/// positive decimal keeps the default, 1 (with a warning here).
pub(super) fn parse_event_eth_rxqs(text: &str) -> Result<u16, String> {
    match text.parse::<u16>() {
        Ok(n) if n > 0 => Ok(n),
        _ => {
            log::warn!(
                "--event-eth-rxqs {}: not a positive number; 1 RX queue per port, as in C",
                quote(text)
            );
            Ok(1)
        }
    }
}

/// `--rx-burst` / `--tx-burst`: decimal; as later l3fwd's
/// `parse_pkt_burst`, 0 or a size over the maximum keeps the default (with
/// a warning); what is not a number is refused.
pub(super) fn parse_burst(text: &str) -> Result<usize, String> {
    let n: u64 = text
        .parse()
        .map_err(|_| format!("invalid burst size '{}'", quote(text)))?;
    match usize::try_from(n) {
        Ok(n @ 1..=crate::MAX_BURST) => Ok(n),
        _ => {
            log::warn!(
                "burst size {n}: must be 1..={}, using {}",
                crate::MAX_BURST,
                crate::DEFAULT_BURST
            );
            Ok(crate::DEFAULT_BURST)
        }
    }
}

/// `--eth-link-speed`: a decimal speed ethdev knows. C (25.11) refuses 10
/// and 100, whose bits it would take half-duplex, and ignores what
/// `atoi` reads as no known speed; l3fwd-rs refuses that too.
pub(super) fn parse_link_speed(text: &str) -> Result<dpdk::LinkSpeed, String> {
    let mbps = parse_c_ulong(text, 10).and_then(|n| u32::try_from(n).ok());
    match mbps {
        Some(10 | 100) => Err("unsupported fixed speed (10 and 100 Mbit/s need a duplex, as in C)".to_owned()),
        Some(mbps) => dpdk::LinkSpeed::fixed(mbps).ok_or_else(|| {
            format!("{mbps} Mbit/s is no link speed: 1000, 2500, 5000, 10000, 20000, 25000, ... expected")
        }),
        None => Err(format!("invalid link speed '{}'", quote(text))),
    }
}

/// `-p`: hexadecimal like C's `strtoul(s, &end, 16)`; 0 enables nothing and is refused.
/// A `-` negates as strtoul does, kept to 32 bits as C's mask: `-1` is every port.
pub fn parse_portmask(text: &str) -> Result<PortMask, String> {
    let mask = match skip_c_space(text).strip_prefix('-') {
        Some(negated) => parse_c_ulong(negated, 16).map(|mask| u64::from(mask.wrapping_neg() as u32)),
        None => parse_c_ulong(text, 16),
    };
    mask.and_then(|mask| u32::try_from(mask).ok())
        .map(PortMask::from_bits)
        .filter(|mask| !mask.is_empty())
        .ok_or_else(|| format!("invalid portmask '{}'", quote(text)))
}

/// A positive count, decimal, 0x hex or 0 octal (l3fwd-rs's table and pool
/// sizes).
pub(super) fn positive(what: &'static str) -> impl Fn(&str) -> Result<u32, String> + Clone + Send + Sync + 'static {
    move |text| {
        parse_c_ulong(text, 0)
            .and_then(|n| u32::try_from(n).ok())
            .filter(|&n| n > 0)
            .ok_or_else(|| format!("invalid {what} '{}'", quote(text)))
    }
}

/// rte_lpm's most tbl8 groups (`RTE_LPM_MAX_TBL8_NUM_GROUPS`).
pub(super) const MAX_TBL8S: u32 = 1 << 24;

/// `--lpm-tbl8s`: a positive count no table takes more of; refused above
/// it rather than silently cut (rte_lpm6 is cut to its own maximum, as the
/// help says).
pub(super) fn tbl8_groups(text: &str) -> Result<u32, String> {
    let n = positive("tbl8 group count")(text)?;
    if n > MAX_TBL8S {
        return Err(format!("{n} tbl8 groups: rte_lpm takes at most {MAX_TBL8S}"));
    }
    Ok(n)
}

/// `--hash-entry-num`: C 22.11 ignores it and sizes its tables for 4M
/// keys; l3fwd-rs sizes them with it, and takes 0 as C does, for the default.
pub(super) fn parse_hash_entries(text: &str) -> Result<u32, String> {
    match parse_c_ulong(text, 0).map(u32::try_from) {
        Some(Ok(0)) => {
            log::warn!("--hash-entry-num 0: using the default, {}", em::DEFAULT_HASH_ENTRIES);
            Ok(em::DEFAULT_HASH_ENTRIES)
        }
        Some(Ok(n)) => Ok(n),
        _ => Err(format!("invalid hash entry number '{}'", quote(text))),
    }
}

/// A decimal number in `min..=max`, read as C's `strtoul(s, &end, 10)`
/// (leading white space skipped): `--max-pkt-len`, the queue sizes.
pub(super) fn decimal<T>(min: T, max: T) -> impl Fn(&str) -> Result<T, String> + Clone + Send + Sync + 'static
where
    T: Copy + Into<u64> + TryFrom<u64> + fmt::Display + Send + Sync + 'static,
{
    move |text| {
        parse_c_ulong(text, 10)
            .and_then(|n| T::try_from(n).ok())
            .filter(|&n| (min.into()..=max.into()).contains(&n.into()))
            .ok_or_else(|| format!("{min}..={max} expected"))
    }
}

/// `--lookup`: C's names, the modes'.
pub(super) fn parse_lookup(text: &str) -> Result<&'static ModeInfo, String> {
    mode::by_name(text).ok_or_else(|| {
        let names: Vec<&str> = MODES.iter().map(|m| m.name).collect();
        format!(
            "invalid lookup method '{}' (accepted: {})",
            quote(text),
            names.join(", ")
        )
    })
}

/// `--alg`: C's names. C takes a name it does not know for the default
/// method, silently; l3fwd-rs refuses it.
pub(super) fn parse_alg(text: &str) -> Result<dpdk::ClassifyAlg, String> {
    dpdk::ClassifyAlg::ALL
        .iter()
        .find(|(name, _)| *name == text)
        .map(|&(_, alg)| alg)
        .ok_or_else(|| {
            let names: Vec<&str> = dpdk::ClassifyAlg::ALL.iter().map(|(n, _)| *n).collect();
            format!(
                "invalid ACL classify method '{}' (accepted: {})",
                quote(text),
                names.join(", ")
            )
        })
}

/// `--config`: comma-separated `(port,queue,lcore)` tuples. C reads every
/// `(...)` it finds and skips whatever lies between; l3fwd-rs accepts what
/// has one meaning (a missing comma between tuples, a trailing comma, white
/// space) and refuses other text outside the tuples, which C ignores.
pub fn parse_config(text: &str) -> Result<Vec<ConfigEntry>, String> {
    let mut entries = Vec::new();
    let mut rest = text.trim_start();
    loop {
        let (entry, after) = parse_tuple(rest)?;
        entries.push(entry);
        rest = after.trim_start();
        if let Some(after_comma) = rest.strip_prefix(',') {
            rest = after_comma.trim_start();
        } else if !rest.is_empty() && !rest.starts_with('(') {
            return Err(format!("invalid --config: expected ',' before '{}'", quote(rest)));
        }
        if rest.is_empty() {
            return Ok(entries);
        }
    }
}

/// Parses the tuple at the start of `text`; returns it and the text after it.
pub(super) fn parse_tuple(text: &str) -> Result<(ConfigEntry, &str), String> {
    let inner = text
        .strip_prefix('(')
        .ok_or_else(|| format!("invalid --config: expected '(' at '{}'", quote(text)))?;
    let (fields, after) = inner
        .split_once(')')
        .ok_or_else(|| format!("invalid --config tuple '{}': missing ')'", quote(text)))?;
    let tuple = &text[..fields.len() + 2];
    let bad = |problem: String| format!("invalid --config tuple '{}': {problem}", quote(tuple));
    let fields: Vec<&str> = fields.split(',').map(str::trim).collect();
    let [port, queue, lcore] = fields[..] else {
        return Err(bad(format!("expected 3 fields, found {}", fields.len())));
    };
    let entry = ConfigEntry {
        port: config_field("port", port, MAX_PORTS).map_err(bad)?,
        queue: config_field("queue", queue, MAX_QUEUES_PER_PORT).map_err(bad)?,
        lcore: config_field("lcore", lcore, MAX_LCORES).map_err(bad)?,
    };
    Ok((entry, after))
}

/// One number of a tuple, read like C's `strtoul(s, &end, 0)`, below `limit`.
pub(super) fn config_field<T>(name: &str, text: &str, limit: T) -> Result<T, String>
where
    T: Copy + Into<u64> + TryFrom<u64>,
{
    let value = parse_c_ulong(text, 0).ok_or_else(|| format!("{name} '{}' is not a number", quote(text)))?;
    T::try_from(value)
        .ok()
        .filter(|&field| field.into() < limit.into())
        .ok_or_else(|| format!("{name} {value} out of range 0..{}", limit.into()))
}

/// `--eth-dest=X,MM:MM:MM:MM:MM:MM`: port in decimal, MAC as DPDK's
/// `rte_ether_unformat_addr` reads it.
pub fn parse_eth_dest(text: &str) -> Result<EthDest, String> {
    let (port, mac_text) = text
        .split_once(',')
        .ok_or_else(|| format!("invalid --eth-dest '{}': expected X,MM:MM:MM:MM:MM:MM", quote(text)))?;
    let port = parse_c_ulong(port, 10).ok_or_else(|| {
        format!(
            "invalid --eth-dest '{}': port '{}' is not a number",
            quote(text),
            quote(port)
        )
    })?;
    let port = u16::try_from(port)
        .ok()
        .filter(|&p| p < MAX_PORTS)
        .ok_or_else(|| format!("invalid --eth-dest '{}': port {port} >= {MAX_PORTS}", quote(text)))?;
    let mac = parse_mac(mac_text).ok_or_else(|| {
        format!(
            "invalid --eth-dest '{}': invalid ethernet address '{}'",
            quote(text),
            quote(mac_text)
        )
    })?;
    Ok(EthDest { port, mac })
}

/// A MAC as `XX:XX:XX:XX:XX:XX` or `XXXX:XXXX:XXXX` (hex digits, any case).
pub(super) fn parse_mac(text: &str) -> Option<[u8; 6]> {
    let groups: Vec<&str> = text.split(':').collect();
    let group_len = match groups.len() {
        6 => 2,
        3 => 4,
        _ => return None,
    };
    let mut bytes = Vec::with_capacity(6);
    for group in groups {
        if group.len() != group_len || !group.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        let value = u16::from_str_radix(group, 16).ok()?;
        bytes.extend_from_slice(&value.to_be_bytes()[2 - group_len / 2..]);
    }
    bytes.try_into().ok()
}
