//! What a lookup mode answers: given a parsed burst, where each packet
//! goes. A lookup only answers [`Route::port`] or [`Route::NO_MATCH`] (or
//! [`Route::RUNT`] for a frame too short for what its lookup reads,
//! [`Route::DENIED`] for one a rule drops); what happens to a packet that
//! matched nothing is the mode's [`Lookup::MISS`], applied once, by the
//! forwarder. The modes themselves are in [`crate::dataplane::mode`].

mod faster;

pub use faster::FasterOfTwo;

use crate::dataplane::packet::L3;
use crate::MAX_BURST;

/// Where a lookup sends one packet: out of a port, or why not, in one
/// 16-bit word. Port numbers (below `RTE_MAX_ETHPORTS`, as every table
/// holds them) sit below the three reasons, so the send step finds a
/// routed packet's TX buffer with the one bounds test it makes anyway.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Route(u16);

/// What happens to a packet that matched no rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Miss {
    /// Back out of the port it came in on (LPM, EM, FIB, as in C).
    InputPort,
    /// Dropped and counted (ACL, as in C).
    Drop,
}

impl Route {
    /// No rule matched, or the mode looks nothing up for this kind of
    /// frame (non-IP): the forwarder's miss policy applies.
    pub const NO_MATCH: Route = Route(u16::MAX);
    /// Shorter than what the lookup reads: dropped, counted as
    /// [`DropReason::Runt`](crate::dataplane::counters::DropReason::Runt).
    pub const RUNT: Route = Route(u16::MAX - 1);
    /// A deny rule matched: dropped, counted as
    /// [`DropReason::Denied`](crate::dataplane::counters::DropReason::Denied).
    pub const DENIED: Route = Route(u16::MAX - 2);

    /// Out of `port`.
    #[inline(always)]
    pub const fn port(port: u16) -> Route {
        Route(port)
    }

    /// A table's answer: its port, or no match.
    #[inline(always)]
    pub fn from_table(port: Option<u16>) -> Route {
        port.map_or(Route::NO_MATCH, Route::port)
    }

    /// The port, or, for one of the reasons, the port number no port has.
    #[inline(always)]
    pub fn bits(self) -> u16 {
        self.0
    }
}

/// Decides where every packet of a burst goes, in two steps: [`Lookup::add`]
/// takes each packet as it is parsed (gathering its key for a bulk lookup,
/// or answering at once), then [`Lookup::resolve`] looks the gathered keys
/// up together and writes their answers.
pub trait Lookup: Send + Sync + 'static {
    /// Per-lcore working memory, made once and reused for every burst (no
    /// per-burst initialisation of key arrays).
    type Scratch: Default + Send;

    /// The mode's miss policy.
    const MISS: Miss = Miss::InputPort;

    /// Whether a burst's IPv4 packets are sent before the rest, as C's
    /// ACL mode sends them (it classifies and sends each family in turn);
    /// otherwise packets go out in the order they came.
    const IPV4_FIRST: bool = false;

    /// Takes packet `index` of the burst, parsed as `l3` from `frame`, and
    /// returns its route if known now, or [`Route::NO_MATCH`] until
    /// [`Lookup::resolve`] finds better. The first packet of a burst has
    /// index 0.
    /// `defer` is [`Lookup::defers`]'s answer for this batch.
    fn add(&self, scratch: &mut Self::Scratch, defer: bool, index: usize, l3: &L3, frame: &[u8]) -> Route;

    /// Whether [`Lookup::route_ipv4s`] routes IPv4 destinations, eight at
    /// a time, where the batch is not deferred.
    const VECTOR_IPV4: bool = false;

    /// Routes `dsts`, IPv4 destinations read from packets `0..` of the
    /// batch, eight at a time with the vector path `simd`, as
    /// [`Lookup::add`] routes an IPv4 packet when the batch is not
    /// deferred: writes their `routes`.
    /// Only called where [`Lookup::VECTOR_IPV4`] says so.
    #[inline(always)]
    fn route_ipv4s(&self, _simd: dpdk::Simd, _scratch: &mut Self::Scratch, _dsts: &[u32], _routes: &mut [Route]) {}

    /// Whether this batch leaves to [`Lookup::resolve`] the lookups a mode
    /// can also make as each packet is parsed. Asked once a batch and handed
    /// to every [`Lookup::add`], so that the parse loop tests a register,
    /// not the scratch it writes.
    #[inline(always)]
    fn defers(&self, _scratch: &Self::Scratch) -> bool {
        false
    }

    /// Looks up what [`Lookup::add`] gathered for this burst and writes
    /// the routes found into `routes`.
    fn resolve(&self, scratch: &mut Self::Scratch, routes: &mut [Route; MAX_BURST]);

    /// The `packets` this lcore forwarded since the last call took
    /// `cycles` (busy ones): a mode that can look up in two ways times both
    /// on the live traffic and keeps the faster ([`FasterOfTwo`]), unless
    /// told which to use. Called once with no packets before the first.
    #[inline(always)]
    fn timed(&self, _scratch: &mut Self::Scratch, _cycles: u64, _packets: u64) {}
}

/// The ports a vector lookup finds for a batch's IPv4 destinations
/// ([`Lookup::route_ipv4s`]), before they become routes: kept per lcore,
/// never initialised per batch.
pub(crate) struct VectorPorts([u16; MAX_BURST]);

impl Default for VectorPorts {
    fn default() -> Self {
        VectorPorts([0; MAX_BURST])
    }
}

impl VectorPorts {
    /// The routes of `dsts`, which `lookup` writes the ports of (or the
    /// miss it is given) into the slice it is handed.
    #[inline(always)]
    pub(crate) fn route(&mut self, dsts: &[u32], routes: &mut [Route], lookup: impl FnOnce(&[u32], u16, &mut [u16])) {
        let ports = &mut self.0[..dsts.len().min(MAX_BURST)];
        lookup(dsts, Route::NO_MATCH.bits(), ports);
        for (route, &port) in routes.iter_mut().zip(ports.iter()) {
            // A port, or NO_MATCH's own bits.
            *route = Route(port);
        }
    }
}

/// Keys of one address family gathered from a burst, with the index of the
/// packet each came from, so one bulk lookup serves them all.
pub(crate) struct Gather<K: Copy> {
    keys: [K; MAX_BURST],
    from: [u16; MAX_BURST],
    len: usize,
}

impl<K: Copy + Default> Default for Gather<K> {
    fn default() -> Self {
        Self::filled(K::default())
    }
}

impl<K: Copy> Gather<K> {
    /// An empty gather whose unused keys are `blank` (for keys without
    /// `Default`, such as arrays of more than 32 bytes).
    pub(crate) fn filled(blank: K) -> Self {
        Self {
            keys: [blank; MAX_BURST],
            from: [0; MAX_BURST],
            len: 0,
        }
    }

    /// Adds the key of packet `index` (below [`MAX_BURST`]).
    #[inline(always)]
    pub(crate) fn push(&mut self, index: usize, key: K) {
        self.push_with(index, |slot| *slot = key);
    }

    /// Adds the key of packet `index`, which `write` writes in its slot
    /// (over the key of an earlier burst).
    #[inline(always)]
    pub(crate) fn push_with(&mut self, index: usize, write: impl FnOnce(&mut K)) {
        // Indices and lengths stay below MAX_BURST (a power of two), so the
        // masks cost no bounds checks here or in `answer`.
        let at = self.len & (MAX_BURST - 1);
        write(&mut self.keys[at]);
        self.from[at] = index as u16;
        self.len += 1;
    }

    /// The keys gathered since the last call, and the packet each came
    /// from (for [`answer`]); the next burst starts empty.
    #[inline(always)]
    pub(crate) fn take(&mut self) -> (&[K], &[u16; MAX_BURST]) {
        let len = std::mem::take(&mut self.len).min(MAX_BURST);
        (&self.keys[..len], &self.from)
    }
}

/// Sets the route of the packet whose key was number `key` of a
/// [`Gather`] (`from` as [`Gather::take`] gives it).
#[inline(always)]
pub(crate) fn answer(from: &[u16; MAX_BURST], routes: &mut [Route; MAX_BURST], key: usize, port: Option<u16>) {
    answer_route(from, routes, key, Route::from_table(port));
}

/// As [`answer`], with the route itself.
#[inline(always)]
pub(crate) fn answer_route(from: &[u16; MAX_BURST], routes: &mut [Route; MAX_BURST], key: usize, route: Route) {
    routes[usize::from(from[key & (MAX_BURST - 1)]) & (MAX_BURST - 1)] = route;
}

const _: () = assert!(MAX_BURST.is_power_of_two());

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_port_sits_below_the_reasons() {
        let reasons = [Route::NO_MATCH, Route::RUNT, Route::DENIED];
        for port in 0..dpdk::MAX_PORTS {
            assert_eq!(Route::port(port).bits(), port);
            assert!(!reasons.contains(&Route::port(port)));
        }
        assert!(reasons.iter().all(|r| r.bits() >= dpdk::MAX_PORTS));
        assert_eq!(Route::from_table(None), Route::NO_MATCH);
        assert_eq!(Route::from_table(Some(3)), Route::port(3));
    }
}
