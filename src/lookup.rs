//! Lookup modes: given a classified burst, the output port of each packet.
//! A miss, and a packet that is neither IPv4 nor IPv6, goes back out of its
//! input port.

use dpdk::Mbuf;
use lpm::LpmTables;

use crate::packet::L3;
use crate::BURST;

/// Decides the output port of every packet of a burst.
pub trait Lookup: Send + Sync + 'static {
    /// Writes to `out[i]` the port for `pkts[i]`, whose header is `l3[i]`.
    fn route(&self, in_port: u16, pkts: &[Mbuf], l3: &[L3], out: &mut [u16]);
}

/// Longest-prefix match: IPv4 destinations of the burst go to rte_lpm in one
/// bulk call and IPv6 ones to rte_lpm6 in another, unless `sequential` asks
/// for one lookup per packet.
pub struct LpmLookup {
    pub tables: LpmTables,
    pub sequential: bool,
}

impl Lookup for LpmLookup {
    #[inline(always)]
    fn route(&self, in_port: u16, _pkts: &[Mbuf], l3: &[L3], out: &mut [u16]) {
        let default = u32::from(in_port);
        if self.sequential {
            for (o, h) in out.iter_mut().zip(l3) {
                let hop = match h {
                    L3::Ipv4(d) => self.tables.lookup_v4(*d),
                    L3::Ipv6(d) => self.tables.lookup_v6(d),
                    L3::Other | L3::Runt => None,
                };
                *o = hop.unwrap_or(default) as u16;
            }
            return;
        }
        let mut v4 = Gather::<u32>::new();
        let mut v6 = Gather::<[u8; 16]>::new();
        for (i, (o, h)) in out.iter_mut().zip(l3).enumerate() {
            *o = in_port;
            match h {
                L3::Ipv4(d) => v4.push(i, *d),
                L3::Ipv6(d) => v6.push(i, *d),
                L3::Other | L3::Runt => {}
            }
        }
        let mut hops = [0u32; BURST];
        self.tables.lookup_v4_bulk(v4.keys(), &mut hops, default);
        v4.scatter(&hops, out);
        self.tables.lookup_v6_bulk(v6.keys(), &mut hops, default);
        v6.scatter(&hops, out);
    }
}

/// Keys of one address family gathered from a burst, with the index of the
/// packet each came from, so one bulk lookup serves them all.
struct Gather<K: Copy + Default> {
    keys: [K; BURST],
    from: [u8; BURST],
    len: usize,
}

impl<K: Copy + Default> Gather<K> {
    #[inline(always)]
    fn new() -> Self {
        Self {
            keys: [K::default(); BURST],
            from: [0; BURST],
            len: 0,
        }
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
    fn scatter(&self, hops: &[u32], out: &mut [u16]) {
        for (&i, &h) in self.from[..self.len].iter().zip(hops) {
            if let Some(o) = out.get_mut(i as usize) {
                *o = h as u16;
            }
        }
    }
}
