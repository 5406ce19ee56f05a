//! l3fwd's ACL mode (`--lookup=acl`): ClassBench rule files of deny (`@`)
//! and route (`R`) rules, as DPDK 22.11's `l3fwd_acl.c` reads them, built
//! into one rte_acl classifier per address family and classified a burst
//! at a time.

#![forbid(unsafe_code)]

pub mod rules;
pub mod table;

pub use rules::{Action, Rule, RuleError, RuleFile};
pub use table::{AclTables, TableError, Verdict, V4_INPUT, V6_INPUT};
