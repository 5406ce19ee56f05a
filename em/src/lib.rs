//! l3fwd's exact-match (EM) mode: 5-tuple rule files, the keys DPDK 22.11's
//! l3fwd builds from frames and rules, and the rte_hash tables mapping them
//! to output ports, looked up 8 at a time (the default) or one by one.
//!
//! The pieces, in the order a packet meets them:
//! - [`rules`]: `R<dst> <src> <dst port> <src port> <proto> <port>` lines
//!   into [`rules::Rule`]s, as `em_route_parse.c` reads them;
//! - [`FiveTuple`] -> [`Ipv4Key`] / [`Ipv6Key`]: the key bytes, laid out as
//!   the C sample's `union ipv4_5tuple_host` / `ipv6_5tuple_host`;
//! - [`key_of`]: the same key taken straight from a frame's bytes (one
//!   masked copy), or why the frame is not looked up ([`EmKey`]);
//! - [`EmTables`]: both families' rte_hash tables and the port of each rule;
//!   [`EmTables::lookup_v4_multi`] looks keys up in groups of
//!   [`EM_HASH_LOOKUP_COUNT`] (8), [`EmTables::lookup_v4_sequential`] one
//!   by one, with the same answers.
//!
//! # Example
//!
//! ```
//! # let prefix = format!("doc-em-{}", std::process::id());
//! # let args: Vec<String> = ["doc", "--no-huge", "-m", "256", "--no-pci", "-l", "0",
//! #     "--log-level", "error", "--file-prefix", &prefix]
//! #     .iter().map(|s| s.to_string()).collect();
//! # dpdk::Eal::init_shared(&args)?;
//! // One rule: UDP (0x11) 198.18.1.1:9 -> 198.18.1.0:9 goes out of port 1.
//! let v4 = em::rules::parse_v4("R198.18.1.0 198.18.1.1 9 9 0x11 1\n", "example")?;
//! let tables = em::EmTables::new(1024, 0, &v4, &[], |_port| true)?;
//!
//! // A frame of that flow: Ethernet, IPv4 (TTL and checksum are not part
//! // of the key), UDP ports.
//! let mut frame = vec![0u8; 12];
//! frame.extend([0x08, 0x00, 0x45, 0, 0, 28, 0, 0, 0, 0, 64, 17, 0xab, 0xcd]);
//! frame.extend([198, 18, 1, 1, 198, 18, 1, 0, 0, 9, 0, 9, 0, 8, 0, 0]);
//!
//! let em::EmKey::V4(key) = em::key_of(&frame) else { panic!("not a UDP/IPv4 frame") };
//! let mut out = [0u16; 1];
//! tables.lookup_v4_multi(&[key], 5, &mut out);
//! assert_eq!(out, [1]);
//! // A miss goes back out of the input port (5 here).
//! tables.lookup_v4_multi(&[em::Ipv4Key::default()], 5, &mut out);
//! assert_eq!(out, [5]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod frame;
mod key;
pub mod rules;
mod table;

pub use frame::{key_of, EmKey};
pub use key::{FiveTuple, Ipv4Key, Ipv6Key};
pub use table::{EmTables, TableError, DEFAULT_HASH_ENTRIES, EM_HASH_LOOKUP_COUNT};
