//! l3fwd's exact-match (EM) mode: 5-tuple rule files, the keys DPDK 22.11's
//! l3fwd builds from frames and rules, and the rte_hash tables mapping them
//! to output ports, looked up 8 at a time (the default) or one by one.

mod frame;
mod key;
pub mod rules;
mod table;

pub use frame::{key_of, EmKey};
pub use key::{FiveTuple, Ipv4Key, Ipv6Key};
pub use table::{EmTables, TableError, DEFAULT_HASH_ENTRIES, EM_HASH_LOOKUP_COUNT, MAX_PORTS};
