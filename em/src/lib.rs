//! l3fwd's exact-match (EM) mode: 5-tuple rule files, the keys DPDK 22.11's
//! l3fwd builds from frames and rules, and the rte_hash tables mapping them
//! to output ports, looked up a burst at a time (the default) or one by one.
//!
//! The pieces, in the order a packet meets them:
//! - [`rules`]: `R<dst> <src> <dst port> <src port> <proto> <port>` lines
//!   into [`rules::Rule`]s, as `em_route_parse.c` reads them;
//! - [`FiveTuple`] -> [`Ipv4Key`] / [`Ipv6Key`]: the key bytes, laid out as
//!   the C sample's `union ipv4_5tuple_host` / `ipv6_5tuple_host`;
//! - [`Ipv4Key::from_header`] / [`Ipv6Key::from_header`]: the same key
//!   taken straight from a frame's bytes (one masked copy); which frames
//!   are looked up is the forwarder's parse, not this crate's;
//! - [`EmTables`]: both families' rte_hash tables and the port of each rule;
//!   [`EmTables::lookup_v4`] looks a burst's keys up in one bulk call,
//!   in groups (C's 8) or one by one, as its [`Batching`] says, with the
//!   same answers.
//!
//! # Example
//!
//! ```
//! let eal = dpdk::Eal::for_tests(&[])?;
//! // One rule: UDP (0x11) 198.18.1.1:9 -> 198.18.1.0:9 goes out of port 1.
//! let v4 = em::rules::parse_v4("R198.18.1.0 198.18.1.1 9 9 0x11 1\n", "example")?;
//! let tables = em::EmTables::new(eal, 1024, 0, &v4, &[], |_port| true)?;
//!
//! // The bytes of a frame of that flow from the IPv4 TTL on (TTL and
//! // checksum are not part of the key), then the UDP ports.
//! let header = [64, 17, 0xab, 0xcd, 198, 18, 1, 1, 198, 18, 1, 0, 0, 9, 0, 9];
//! let keys = [em::Ipv4Key::from_header(&header), em::Ipv4Key::default()];
//! let mut ports = [None; 2];
//! tables.lookup_v4(&keys, em::Batching::WHOLE_BURST, |i, port| ports[i] = port);
//! // The second key misses: what happens to it is the forwarder's choice.
//! assert_eq!(ports, [Some(1), None]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![forbid(unsafe_code)]

mod key;
pub mod rules;
mod table;

pub use key::{FiveTuple, Ipv4Key, Ipv6Key};
pub use table::{Batching, EmTables, EmWriter, TableError, DEFAULT_HASH_ENTRIES};
