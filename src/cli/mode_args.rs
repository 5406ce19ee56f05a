//! What each lookup mode reads of the command line, and nothing more: a
//! mode is given its own options ([`Mode::Options`](crate::dataplane::mode::Mode::Options)),
//! never the whole [`Args`].

use std::path::PathBuf;

use crate::cli::portmask::PortMask;
use crate::cli::{Args, Ipv4Lookup};

/// `--rule_ipv4` and `--rule_ipv6`, as given.
#[derive(Debug, Clone, Default)]
pub struct RuleFiles {
    pub ipv4: Option<PathBuf>,
    pub ipv6: Option<PathBuf>,
}

impl From<&Args> for RuleFiles {
    fn from(args: &Args) -> RuleFiles {
        RuleFiles {
            ipv4: args.rule_ipv4.clone(),
            ipv6: args.rule_ipv6.clone(),
        }
    }
}

/// What the route modes (LPM and FIB) take.
#[derive(Debug, Clone)]
pub struct RouteArgs {
    pub rules: RuleFiles,
    /// `--lpm-max-rules`, `--lpm-tbl8s`: the table sizes asked for.
    pub max_rules: Option<u32>,
    pub tbl8s: Option<u32>,
    /// `--sequential-lookup`: one packet at a time (LPM).
    pub sequential: bool,
    /// `--ipv4-lookup`: when LPM looks IPv4 destinations up.
    pub ipv4_lookup: Ipv4Lookup,
}

impl From<&Args> for RouteArgs {
    fn from(args: &Args) -> RouteArgs {
        RouteArgs {
            rules: RuleFiles::from(args),
            max_rules: args.lpm_max_rules,
            tbl8s: args.lpm_tbl8s,
            sequential: args.sequential_lookup,
            ipv4_lookup: args.ipv4_lookup,
        }
    }
}

/// What exact match takes.
#[derive(Debug, Clone)]
pub struct EmArgs {
    pub rules: RuleFiles,
    /// The ports flows may name (C checks them against the mask).
    pub portmask: PortMask,
    /// `--ipv6`: fill the IPv6 table instead of the IPv4 one.
    pub ipv6: bool,
    /// `--hash-entry-num`.
    pub hash_entries: Option<u32>,
    /// `--sequential-lookup`, `--em-lookup-group`.
    pub sequential: bool,
    pub lookup_group: Option<u16>,
}

impl From<&Args> for EmArgs {
    fn from(args: &Args) -> EmArgs {
        EmArgs {
            rules: RuleFiles::from(args),
            portmask: args.portmask,
            ipv6: args.ipv6,
            hash_entries: args.hash_entry_num,
            sequential: args.sequential_lookup,
            lookup_group: args.em_lookup_group,
        }
    }
}

/// What ACL takes.
#[derive(Debug, Clone)]
pub struct AclArgs {
    pub rules: RuleFiles,
    /// The ports rules may name (C checks them against the mask).
    pub portmask: PortMask,
    /// `--alg`: the classify method (None: the best the CPU has).
    pub alg: Option<dpdk::ClassifyAlg>,
}

impl From<&Args> for AclArgs {
    fn from(args: &Args) -> AclArgs {
        AclArgs {
            rules: RuleFiles::from(args),
            portmask: args.portmask,
            alg: args.alg,
        }
    }
}
