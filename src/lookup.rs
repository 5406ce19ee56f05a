//! Lookup modes: given a classified burst, the output port of each packet.
//! A miss, and a packet that is neither IPv4 nor IPv6, goes back out of its
//! input port.

use dpdk::Mbuf;
use em::{EmKey, EmTables, Ipv4Key, Ipv6Key};
use lpm::LpmTables;

use crate::packet::{ipv6_dst, L3};
use crate::BURST;

/// Output "port" of a frame too short for what its lookup must read: the
/// forwarder drops and counts it.
pub const RUNT: u16 = u16::MAX;

/// Decides the output port of every packet of a burst.
pub trait Lookup: Send + Sync + 'static {
    /// Per-lcore working memory, made once and reused for every burst (no
    /// per-burst initialisation of key arrays).
    type Scratch: Default + Send;

    /// Writes to `out[i]` the port for `pkts[i]`, whose header is `l3[i]`,
    /// or [`RUNT`].
    fn route(&self, scratch: &mut Self::Scratch, in_port: u16, pkts: &[Mbuf], l3: &[L3], out: &mut [u16]);
}

/// Longest-prefix match: IPv4 destinations of the burst go to rte_lpm in one
/// bulk call and IPv6 ones to rte_lpm6 in another, unless `sequential` asks
/// for one lookup per packet.
pub struct LpmLookup {
    pub tables: LpmTables,
    pub sequential: bool,
}

/// Keys and results of one burst in LPM mode.
#[derive(Default)]
pub struct LpmScratch {
    v4: Gather<u32>,
    v6: Gather<[u8; 16]>,
    hops: [u32; BURST],
}

impl Lookup for LpmLookup {
    type Scratch = LpmScratch;

    #[inline(always)]
    fn route(&self, scratch: &mut LpmScratch, in_port: u16, pkts: &[Mbuf], l3: &[L3], out: &mut [u16]) {
        let default = u32::from(in_port);
        if self.sequential {
            for ((o, h), p) in out.iter_mut().zip(l3).zip(pkts) {
                *o = match h {
                    L3::Ipv4(d) => self.tables.lookup_v4(*d).unwrap_or(default) as u16,
                    L3::Ipv6 => ipv6_dst(p.data())
                        .and_then(|d| self.tables.lookup_v6(d))
                        .unwrap_or(default) as u16,
                    L3::Other => in_port,
                    L3::Runt => RUNT,
                };
            }
            return;
        }
        let LpmScratch { v4, v6, hops } = scratch;
        v4.clear();
        v6.clear();
        for (i, ((o, h), p)) in out.iter_mut().zip(l3).zip(pkts).enumerate() {
            *o = in_port;
            match h {
                L3::Ipv4(d) => v4.push(i, *d),
                L3::Ipv6 => {
                    if let Some(d) = ipv6_dst(p.data()) {
                        v6.push(i, *d);
                    }
                }
                L3::Other => {}
                L3::Runt => *o = RUNT,
            }
        }
        self.tables.lookup_v4_bulk(v4.keys(), hops, default);
        v4.scatter(hops.iter().map(|&h| h as u16), out);
        self.tables.lookup_v6_bulk(v6.keys(), hops, default);
        v6.scatter(hops.iter().map(|&h| h as u16), out);
    }
}

/// Exact match on the 5-tuple: the keys of the burst's IPv4 and IPv6
/// TCP/UDP packets go to rte_hash 8 at a time (one bulk lookup per group),
/// or one by one with `sequential`. Each key is extracted once and serves
/// both hashing and comparison.
pub struct EmLookup {
    pub tables: EmTables,
    pub sequential: bool,
}

/// Keys and results of one burst in exact-match mode.
#[derive(Default)]
pub struct EmScratch {
    v4: Gather<Ipv4Key>,
    v6: Gather<Ipv6Key>,
    hops: [u16; BURST],
}

impl Lookup for EmLookup {
    type Scratch = EmScratch;

    #[inline(always)]
    fn route(&self, scratch: &mut EmScratch, in_port: u16, pkts: &[Mbuf], _l3: &[L3], out: &mut [u16]) {
        let EmScratch { v4, v6, hops } = scratch;
        v4.clear();
        v6.clear();
        for (i, (o, p)) in out.iter_mut().zip(pkts).enumerate() {
            *o = in_port;
            match em::key_of(p.data()) {
                EmKey::V4(k) => v4.push(i, k),
                EmKey::V6(k) => v6.push(i, k),
                EmKey::NotEligible => {}
                EmKey::Runt => *o = RUNT,
            }
        }
        let n4 = v4.keys().len();
        if self.sequential {
            self.tables.lookup_v4_sequential(v4.keys(), in_port, hops);
        } else {
            self.tables.lookup_v4_multi(v4.keys(), in_port, hops);
        }
        v4.scatter(hops[..n4].iter().copied(), out);
        let n6 = v6.keys().len();
        if self.sequential {
            self.tables.lookup_v6_sequential(v6.keys(), in_port, hops);
        } else {
            self.tables.lookup_v6_multi(v6.keys(), in_port, hops);
        }
        v6.scatter(hops[..n6].iter().copied(), out);
    }
}

/// Keys of one address family gathered from a burst, with the index of the
/// packet each came from, so one bulk lookup serves them all.
struct Gather<K: Copy + Default> {
    keys: [K; BURST],
    from: [u8; BURST],
    len: usize,
}

impl<K: Copy + Default> Default for Gather<K> {
    fn default() -> Self {
        Self {
            keys: [K::default(); BURST],
            from: [0; BURST],
            len: 0,
        }
    }
}

impl<K: Copy + Default> Gather<K> {
    /// Forgets the previous burst's keys (without touching them).
    #[inline(always)]
    fn clear(&mut self) {
        self.len = 0;
    }

    #[inline(always)]
    fn push(&mut self, index: usize, key: K) {
        if self.len < BURST {
            self.keys[self.len] = key;
            self.from[self.len] = index as u8;
            self.len += 1;
        }
    }

    #[inline(always)]
    fn keys(&self) -> &[K] {
        &self.keys[..self.len]
    }

    #[inline(always)]
    fn scatter(&self, hops: impl Iterator<Item = u16>, out: &mut [u16]) {
        for (&i, h) in self.from[..self.len].iter().zip(hops) {
            if let Some(o) = out.get_mut(i as usize) {
                *o = h;
            }
        }
    }
}
