//! Lookup modes, each one descriptor: a [`Mode`] owns its names on the
//! command line, its rule files, building its tables and the [`Lookup`]
//! that answers for each packet (whose miss policy and send order are its
//! own). [`MODES`](l3fwd_modes::MODES) lists them once; the command line, the application, the
//! bench, the instruction counter and the tests all take the modes from it.
//!
//! Adding a mode: its entry in [`l3fwd_modes`] (`modes/`), its own file here (a `Mode` and
//! its `Lookup`), its table crate or `dpdk/` wrapper, and one line in the
//! `modes!` list below (CONTRIBUTING.md has the whole list).

use std::error::Error;
use std::net::IpAddr;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use dpdk::{Eal, Qsbr};
use ipnet::IpNet;

pub use self::em::{em_key, EmKey};
use l3fwd_modes::ModeInfo;

use crate::cli::plan::Plan;
use crate::cli::Args;
use crate::dataplane::lookup::Lookup;

/// A lookup mode: from the command line to a [`Lookup`] over built tables.
pub trait Mode: 'static {
    const INFO: ModeInfo;
    /// RSS over the TCP/UDP/SCTP ports as well as the addresses (C's ACL
    /// mode asks for it).
    const RSS_L4: bool = false;

    /// The rule files as read, before EAL starts (a typo costs no EAL
    /// start-up); kept while forwarding as the shadow copy live changes
    /// edit (see [`crate::control::live`]).
    type Rules: Clone + Send + 'static;
    type Lookup: Lookup;
    /// What the mode reads of the command line (its rule files, its table
    /// sizes, ...), and nothing else.
    type Options: for<'a> From<&'a Args> + Clone + Send + 'static;

    /// Reads the rule files `options` name, or the built-in ones.
    fn load(options: &Self::Options) -> Result<Self::Rules, Box<dyn Error>>;

    /// Builds the tables from `rules` in the memory of NUMA socket
    /// `socket`, loading the routes to the ports `plan` forwards to.
    fn build(
        eal: &Eal,
        socket: u32,
        plan: &Plan,
        options: &Self::Options,
        rules: Self::Rules,
    ) -> Result<Self::Lookup, Box<dyn Error>>;

    /// As [`Mode::build`], for tables the lcores read under `qsbr`; also
    /// the writer of the changes the tables take in place, if any (the
    /// others are made by a shadow swap, see [`crate::control::live`]).
    fn build_live(
        eal: &Eal,
        socket: u32,
        plan: &Plan,
        options: &Self::Options,
        rules: Self::Rules,
        _qsbr: &Arc<Qsbr>,
    ) -> Result<LiveBuild<Self>, Box<dyn Error>> {
        Ok((Self::build(eal, socket, plan, options, rules)?, None))
    }

    /// Tables for `rules`, which differ from the rules of `live` in
    /// `family`'s entries only: `live`'s tables of the other family are
    /// shared rather than rebuilt, and its in-place writer stays. None:
    /// the mode rebuilds every family ([`Mode::build_live`]).
    fn rebuild_family(
        eal: &Eal,
        socket: u32,
        plan: &Plan,
        options: &Self::Options,
        rules: &Self::Rules,
        live: &Self::Lookup,
        family: Family,
    ) -> Option<Result<Self::Lookup, Box<dyn Error>>> {
        let _ = (eal, socket, plan, options, rules, live, family);
        None
    }

    /// `route stats`: each family's routes in tables built from `rules`,
    /// by depth, a line each; an error if the mode has no routes.
    fn route_depths(rules: &Self::Rules, plan: &Plan) -> Result<Vec<String>, String> {
        let _ = (rules, plan);
        Err(format!(
            "{} mode has no routes to count (LPM and FIB mode have)",
            Self::INFO.name
        ))
    }

    /// `route get`: the port `lookup` gives `dst` (`None`: a miss), or an
    /// error if the mode has no routes.
    fn route_get(_lookup: &Self::Lookup, _dst: IpAddr) -> Result<Option<u16>, String> {
        Err(no_routes(Self::INFO.name))
    }

    /// `trace`: what the lookup keys `frame` on and which of `rules` (as
    /// the control thread holds them) decides it, as `KEY: RULE`.
    fn explain(rules: &Self::Rules, options: &Self::Options, frame: &[u8]) -> String;

    /// What tables built from `rules` hold, by family: the rules
    /// [`Mode::build`] loads (see [`InPlace::counts`] for tables that
    /// hold more).
    fn counts(rules: &Self::Rules, plan: &Plan, options: &Self::Options) -> Vec<TableCount>;

    /// `route list`, `flow list`, `acl list`: the entries of tables built
    /// from `rules`, as rule-file lines, in order (routes: covering
    /// prefixes first); an error if the mode has no such entries.
    fn list(rules: &Self::Rules, plan: &Plan, options: &Self::Options, what: &Listing) -> Result<Vec<String>, String> {
        let _ = (rules, plan, options);
        Err(what.not_in(Self::INFO.name))
    }

    /// `route add/del`, `flow add/del`: applies `change` to `rules` (a
    /// port it names must be one `plan` forwards to), or leaves them as
    /// they were and says why not.
    fn change_rules(
        _rules: &mut Self::Rules,
        _plan: &Plan,
        _options: &Self::Options,
        change: &RuleChange,
    ) -> Result<(), String> {
        Err(change.not_in(Self::INFO.name))
    }

    /// [`Mode::change_rules`] for each of `changes` in turn, each answered
    /// as if it came alone; in one pass over the rules where the mode
    /// can (route modes: a pass per change is a pass over every route).
    fn change_rules_in_turn(
        rules: &mut Self::Rules,
        plan: &Plan,
        options: &Self::Options,
        changes: &[&RuleChange],
    ) -> Vec<Result<(), String>> {
        let each = changes.iter();
        each.map(|change| Self::change_rules(rules, plan, options, change))
            .collect()
    }
}

/// What [`Mode::build_live`] builds: the lookup and its in-place writer.
pub type LiveBuild<M> = (<M as Mode>::Lookup, Option<Box<dyn InPlace<<M as Mode>::Rules>>>);

/// The writer of live tables that change in place, held by the control
/// thread beside the [`Mode::Lookup`] the lcores read. It keeps the
/// changes it made until [`InPlace::flush`] writes them into the rules
/// (`R`, the mode's), all in one pass.
pub trait InPlace<R>: Send {
    /// Whether `change` is one this writer makes.
    fn takes(&self, change: &RuleChange) -> bool;
    /// Makes `change` (one it takes) in the live tables: the lcores see it
    /// on return. A refused change changes nothing.
    fn apply(&mut self, change: &RuleChange) -> Result<(), String>;
    /// Writes the changes made since the last flush into `rules`, the
    /// ones the live tables were built from, for the next rebuild.
    fn flush(&mut self, rules: &mut R);
    /// `route stats`: one line about the tables, if they have routes
    /// (`&mut`: a writer may first reclaim what the lcores are done with).
    fn stats(&mut self) -> Option<String>;
    /// What the live tables hold, where the rules do not say it (flows
    /// added in place are in no rule file).
    fn counts(&self) -> Option<Vec<TableCount>> {
        None
    }
    /// `flow list` and the like, where the rules do not hold every entry:
    /// the live tables' entries, as rule-file lines.
    fn list(&self) -> Option<Vec<String>> {
        None
    }
}

/// How many entries of one kind and family the live tables hold
/// (`--metrics`' `l3fwd_table_entries`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TableCount {
    /// `ipv4` or `ipv6`.
    pub family: &'static str,
    /// `routes`, `flows` or `rules`.
    pub kind: &'static str,
    pub entries: usize,
}

impl TableCount {
    /// The counts of the IPv4 and IPv6 entries of `kind`.
    pub fn both(kind: &'static str, [v4, v6]: [usize; 2]) -> Vec<TableCount> {
        vec![
            TableCount {
                family: "ipv4",
                kind,
                entries: v4,
            },
            TableCount {
                family: "ipv6",
                kind,
                entries: v6,
            },
        ]
    }
}

/// A change to the rules, from `l3fwd-ctl`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RuleChange {
    /// `route add PREFIX PORT` (LPM, FIB): adds the route, or replaces the
    /// port of the prefix if it is there.
    AddRoute(IpNet, u16),
    /// `route del PREFIX` (LPM, FIB).
    DelRoute(IpNet),
    /// `flow add LINE` (EM): a rule-file line; a flow that is there gets
    /// the line's port.
    AddFlow(String),
    /// `flow del LINE` (EM): the flow of a rule-file line (its port is not
    /// compared).
    DelFlow(String),
    /// `acl add LINE` (ACL): a rule-file line, put before every rule (it
    /// decides whatever else matches); a rule that matches the same
    /// packets goes.
    AddAcl(String),
    /// `acl del LINE` (ACL): the rule of a rule-file line, action and all.
    DelAcl(String),
}

/// An address family of the tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    Ipv4,
    Ipv6,
}

impl Family {
    pub fn of(prefix: &IpNet) -> Family {
        match prefix {
            IpNet::V4(_) => Family::Ipv4,
            IpNet::V6(_) => Family::Ipv6,
        }
    }
}

/// The family of an ACL rule line: IPv6 if its source address has
/// colons (rule files write IPv6 addresses in full, IPv4 ones dotted).
pub(crate) fn acl_line_family(line: &str) -> Family {
    let source = line.get(1..).and_then(|body| body.split_ascii_whitespace().next());
    match source.is_some_and(|address| address.contains(':')) {
        true => Family::Ipv6,
        false => Family::Ipv4,
    }
}

/// What `list` lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Listing {
    /// `route list [PREFIX]`: the routes inside PREFIX (all without one).
    Routes(Option<IpNet>),
    /// `flow list`.
    Flows,
    /// `acl list`.
    AclRules,
}

impl Listing {
    /// The error of a mode that has no such entries.
    fn not_in(&self, mode: &str) -> String {
        let what = match self {
            Listing::Routes(_) => "routes to list (LPM and FIB mode have)",
            Listing::Flows => "flows to list (EM mode has)",
            Listing::AclRules => "ACL rules to list (ACL mode has)",
        };
        format!("{mode} mode has no {what}")
    }
}

impl RuleChange {
    /// The family of the tables a route or ACL change edits (None: a
    /// flow, whose tables are rebuilt whole).
    pub fn family(&self) -> Option<Family> {
        match self {
            RuleChange::AddRoute(prefix, _) | RuleChange::DelRoute(prefix) => Some(Family::of(prefix)),
            RuleChange::AddAcl(line) | RuleChange::DelAcl(line) => Some(acl_line_family(line)),
            RuleChange::AddFlow(_) | RuleChange::DelFlow(_) => None,
        }
    }

    /// The error of a mode that has no such rules.
    fn not_in(&self, mode: &str) -> String {
        match self {
            RuleChange::AddRoute(..) | RuleChange::DelRoute(_) => {
                format!("{mode} mode has no routes to change (LPM and FIB mode have)")
            }
            RuleChange::AddFlow(_) | RuleChange::DelFlow(_) => {
                format!("{mode} mode has no flows to change (EM mode has)")
            }
            RuleChange::AddAcl(_) | RuleChange::DelAcl(_) => {
                format!("{mode} mode has no ACL rules to change (ACL mode has)")
            }
        }
    }
}

/// The error of a change naming `port`, unless `plan` forwards to it.
pub(crate) fn check_port(plan: &Plan, port: u16) -> Result<(), String> {
    match plan.forwards_to(port) {
        true => Ok(()),
        false => Err(format!(
            "port {port} is not forwarded to (outside the portmask, or absent)"
        )),
    }
}

/// A rule line of a change that does not parse, quoted itself rather than
/// by a file position.
pub(crate) fn line_error<P: rulefile::Problem>(e: rulefile::Error<P>) -> String {
    match e {
        rulefile::Error::Line { text, problem, .. } => format!("'{text}': {problem}"),
        e => e.to_string(),
    }
}

/// A frame's 5-tuple as exact match and ACL read it (a 20-byte IPv4
/// header, or IPv6's fixed one, then the TCP/UDP ports), for `trace`.
pub(crate) fn five_tuple(
    src: impl std::fmt::Display,
    dst: impl std::fmt::Display,
    proto: u8,
    (sport, dport): (u16, u16),
) -> String {
    format!("5-tuple {src} > {dst} proto {proto} ports {sport} > {dport}")
}

/// The TCP/UDP source and destination ports of their 4 frame bytes.
pub(crate) fn l4_ports(b: [u8; 4]) -> (u16, u16) {
    (u16::from_be_bytes([b[0], b[1]]), u16::from_be_bytes([b[2], b[3]]))
}

fn no_routes(mode: &str) -> String {
    format!("{mode} mode has no routes to look up (LPM and FIB mode have)")
}

/// A DPDK name for the tables of the next [`Mode::build`]: `l3fwd` the
/// first time, then `l3fwd_N`, since the tables a reload builds stand
/// beside the live ones and DPDK keeps tables by name.
pub(crate) fn table_name() -> String {
    static BUILDS: AtomicU32 = AtomicU32::new(0);
    match BUILDS.fetch_add(1, Ordering::Relaxed) {
        0 => "l3fwd".to_owned(),
        n => format!("l3fwd_{n}"),
    }
}

/// Work generic over the mode, run by [`with_mode`] for the mode chosen
/// at run time.
pub trait ModeTask {
    type Output;
    fn run<M: Mode>(self) -> Self::Output;
}

/// The modes, each `file: Type` (`src/dataplane/mode/file.rs` defines `Type`).
macro_rules! modes {
    ($($file:ident: $mode:ident),* $(,)?) => {
        $(mod $file;
        pub use $file::$mode;)*

        /// Every mode this build runs, in [`MODES`]' order.
        #[cfg(test)]
        const RUN: [&ModeInfo; [$(stringify!($mode)),*].len()] = [$(&<$mode as Mode>::INFO),*];

        /// Runs `task` for the mode `info` describes (one of [`MODES`](l3fwd_modes::MODES)).
        pub fn with_mode<T: ModeTask>(info: &ModeInfo, task: T) -> Option<T::Output> {
            $(if *info == <$mode as Mode>::INFO {
                return Some(task.run::<$mode>());
            })*
            None
        }
    };
}

modes!(lpm: Lpm, em: Em, fib: Fib, acl: Acl);

#[cfg(test)]
mod tests {
    use super::*;
    use l3fwd_modes::MODES;

    #[test]
    fn every_mode_listed_runs_in_that_order() {
        assert_eq!(RUN, MODES);
        for info in MODES {
            struct Name;
            impl ModeTask for Name {
                type Output = &'static str;
                fn run<M: Mode>(self) -> &'static str {
                    M::INFO.name
                }
            }
            assert_eq!(with_mode(info, Name), Some(info.name));
        }
    }
}
