//! The configurations the benchmark compares, and how a user selects them:
//! a forwarder x a lookup mode (l3fwd-rs's [`Mode`]s) x an option set x the
//! tables (default or router-size). Ids are built from those parts:
//! `c-lpm`, `rs-lpm-c-drain`, `rs-em-seq-1m`, and `io` for testpmd; a
//! run on a given DPDK release (`--dpdk`) adds it: `rs-lpm@24.11`.

use crate::mode::Mode;
use crate::mode::RuleFormat;
use crate::release::Release;
use std::cmp::Ordering;

/// Who forwards.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub enum Forwarder {
    C,
    Rs,
    /// testpmd io: the same ports and traffic without a lookup, the floor
    /// under both forwarders.
    Io,
}

impl Forwarder {
    /// A sweep runs both in each round, C first (then testpmd io with `--io`).
    pub const BOTH: [Forwarder; 2] = [Forwarder::C, Forwarder::Rs];

    pub fn id(self) -> &'static str {
        match self {
            Forwarder::C => "c",
            Forwarder::Rs => "rs",
            Forwarder::Io => "io",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Forwarder::C => "C l3fwd",
            Forwarder::Rs => "l3fwd-rs",
            Forwarder::Io => "testpmd io",
        }
    }
}

/// The options a configuration adds to its mode's defaults.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub enum Variant {
    Default,
    /// l3fwd-rs `--c-drain`: C's TX drain timing (timer or full buffer
    /// only) beside the default idle flush, to show what flushing when idle
    /// costs at full load.
    CDrain,
    /// l3fwd-rs `--rx-burst` and `--tx-burst`.
    Burst(u16),
    /// Exact match in bulk calls of at most n keys: l3fwd-rs
    /// `--em-lookup-group n` (8 is C's grouping, beside the default of one
    /// call per burst).
    Group(u16),
    /// Exact match one packet at a time: l3fwd-rs `--sequential-lookup`,
    /// C built with NO_HASH_MULTI_LOOKUP.
    Sequential,
    /// Eventdev mode on the software event device (`--mode=eventdev`,
    /// atomic): one worker lcore, the scheduler and both adapters on a
    /// service lcore, for C and l3fwd-rs alike.
    Event,
    /// l3fwd-rs `--idle-flush-gap N`: a short poll round flushes only N us
    /// after the last flush (latency runs).
    IdleFlushGap(u16),
}

impl Variant {
    pub fn id(self) -> String {
        match self {
            Variant::Default => String::new(),
            Variant::CDrain => "-c-drain".into(),
            Variant::Burst(n) => format!("-burst{n}"),
            Variant::Group(n) => format!("-group{n}"),
            Variant::Sequential => "-seq".into(),
            Variant::Event => "-event".into(),
            Variant::IdleFlushGap(n) => format!("-gap{n}"),
        }
    }

    pub fn label(self) -> String {
        match self {
            Variant::Default => String::new(),
            Variant::CDrain => " c-drain".into(),
            Variant::Burst(n) => format!(" burst {n}"),
            Variant::Group(n) => format!(" groups of {n}"),
            Variant::Sequential => " seq".into(),
            Variant::Event => " eventdev".into(),
            Variant::IdleFlushGap(n) => format!(" idle-flush-gap {n}"),
        }
    }
}

/// One forwarder setup whose rate is measured.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Config {
    pub forwarder: Forwarder,
    /// testpmd runs on the default mode's traffic.
    pub mode: Mode,
    pub variant: Variant,
    /// On large generated tables and traffic touching many of their
    /// entries, at a real router's scale.
    pub scale: bool,
    /// The DPDK release its programs are built on, when runs compare
    /// releases; None: the machine's, unnamed.
    pub release: Option<Release>,
}

impl Config {
    pub fn new(forwarder: Forwarder, mode: Mode, variant: Variant, scale: bool) -> Config {
        Config {
            forwarder,
            mode,
            variant,
            scale,
            release: None,
        }
    }

    /// The same configuration on DPDK `release`.
    pub fn on(self, release: Option<Release>) -> Config {
        Config { release, ..self }
    }

    /// testpmd io on the same release: the floor under this configuration.
    pub fn floor(self) -> Config {
        Config::new(Forwarder::Io, Mode::default_mode(), Variant::Default, false).on(self.release)
    }

    /// The release its programs are built on.
    pub fn release(self) -> Release {
        self.release.unwrap_or_else(Release::machine)
    }

    /// ` 24.11` / `@24.11` after a label / id when it names a release.
    fn release_suffix(self, separator: char) -> String {
        self.release.map_or_else(String::new, |r| format!("{separator}{r}"))
    }

    /// Stable name, used in `--only` and as the key in the JSON file.
    pub fn id(self) -> String {
        let release = self.release_suffix('@');
        if self.forwarder == Forwarder::Io {
            return format!("io{release}");
        }
        let scale = if self.scale { "-1m" } else { "" };
        format!(
            "{}-{}{}{scale}{release}",
            self.forwarder.id(),
            self.mode.id(),
            self.variant.id()
        )
    }

    pub fn label(self) -> String {
        let release = self.release_suffix(' ');
        if self.forwarder == Forwarder::Io {
            return format!("{}{release}", self.forwarder.label());
        }
        let scale = if self.scale { " 1M" } else { "" };
        format!(
            "{} {}{}{scale}{release}",
            self.forwarder.label(),
            self.mode.label(),
            self.variant.label()
        )
    }

    /// The configuration `id` names.
    pub fn parse(id: &str) -> Option<Config> {
        let (base, release) = match id.split_once('@') {
            Some((base, release)) => (base, Some(Release::parse(release).ok()?)),
            None => (id, None),
        };
        let config = all().into_iter().chain(scale()).find(|c| c.id() == base)?;
        Some(config.on(release))
    }

    /// Exact-match runs need exact-match traffic and rule files.
    pub fn is_em(self) -> bool {
        self.mode.rules() == RuleFormat::Flows
    }

    /// l3fwd-rs, not the C sample or testpmd.
    pub fn is_rs(self) -> bool {
        self.forwarder == Forwarder::Rs
    }

    /// Runs on the large generated tables and traffic.
    pub fn is_scale(self) -> bool {
        self.scale
    }

    /// Exact match looks packets up one by one.
    pub fn is_sequential(self) -> bool {
        self.variant == Variant::Sequential
    }

    /// The `--rx-burst` and `--tx-burst` of the burst-size configurations.
    pub fn burst(self) -> Option<usize> {
        match self.variant {
            Variant::Burst(n) => Some(n.into()),
            _ => None,
        }
    }

    /// Runs in eventdev mode.
    pub fn is_event(self) -> bool {
        self.variant == Variant::Event
    }

    /// The `--lookup` mode.
    pub fn mode(self) -> &'static str {
        self.mode.id()
    }

    /// The C sample in the same lookup mode: what this configuration is
    /// judged against. C has the same variant if there is such a
    /// configuration (sequential at scale), else its default.
    pub fn reference(self) -> Option<Config> {
        if !self.is_rs() {
            return None;
        }
        let same = Config {
            forwarder: Forwarder::C,
            ..self
        };
        let default = Config {
            variant: Variant::Default,
            ..same
        };
        [same, default].into_iter().find(|c| Config::parse(&c.id()).is_some())
    }

    /// Where in a round it runs: by release, then in the order of [`all`]
    /// then [`scale`].
    fn rank(self) -> (Option<Release>, usize) {
        let id = self.on(None).id();
        let position = all().into_iter().chain(scale()).position(|c| c.id() == id);
        (self.release, position.unwrap_or(usize::MAX))
    }
}

impl Ord for Config {
    fn cmp(&self, other: &Config) -> Ordering {
        self.rank().cmp(&other.rank())
    }
}

impl PartialOrd for Config {
    fn partial_cmp(&self, other: &Config) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// The variants measured on a mode besides its default: burst sizes and
/// C's drain timing on the default mode; C's groups of 8 and sequential
/// lookup where lookups are hashed (exact match).
fn variants(mode: Mode) -> Vec<Variant> {
    let mut v = Vec::new();
    if mode == Mode::default_mode() {
        v.extend([Variant::CDrain, Variant::Burst(64), Variant::Burst(256)]);
    }
    if mode.rules() == RuleFormat::Flows {
        v.extend([Variant::Group(8), Variant::Sequential]);
    }
    v
}

/// The modes whose eventdev mode both forwarders run: C's EM event mode
/// crashes, and its ACL one runs LPM's loop.
fn has_event(mode: Mode) -> bool {
    matches!(mode.id(), "lpm" | "fib")
}

/// Every configuration of `make bench`, in the order each round runs them:
/// per mode, C, l3fwd-rs and its variants, then both in eventdev mode;
/// testpmd io last.
pub fn all() -> Vec<Config> {
    let mut configs = Vec::new();
    for mode in Mode::all() {
        configs.push(Config::new(Forwarder::C, mode, Variant::Default, false));
        configs.push(Config::new(Forwarder::Rs, mode, Variant::Default, false));
        for variant in variants(mode) {
            configs.push(Config::new(Forwarder::Rs, mode, variant, false));
        }
        if has_event(mode) {
            for forwarder in Forwarder::BOTH {
                configs.push(Config::new(forwarder, mode, Variant::Event, false));
            }
        }
    }
    configs.push(Config::new(
        Forwarder::Io,
        Mode::default_mode(),
        Variant::Default,
        false,
    ));
    configs
}

/// The configurations of `make bench-scale`: exact match (both forwarders,
/// multi and sequential lookup), and l3fwd-rs's default mode (the C
/// sample's LPM tables hold 1024 rules).
pub fn scale() -> Vec<Config> {
    let mut configs = Vec::new();
    for mode in Mode::all().filter(|m| m.rules() == RuleFormat::Flows) {
        for forwarder in Forwarder::BOTH {
            for variant in [Variant::Default, Variant::Sequential] {
                configs.push(Config::new(forwarder, mode, variant, true));
            }
        }
    }
    configs.push(Config::new(Forwarder::Rs, Mode::default_mode(), Variant::Default, true));
    configs
}

/// Resolves `--only` items (ids, or the groups all, a mode's name, burst,
/// c, rs, event, scale) into configurations in run order. A mode's group is its
/// C and l3fwd-rs runs with their variants but the burst sizes, which
/// `burst` selects beside the default mode's C and l3fwd-rs.
pub fn select(items: &[String]) -> Result<Vec<Config>, String> {
    let mut chosen = Vec::new();
    for item in items.iter().map(|s| s.trim()).filter(|s| !s.is_empty()) {
        let group: Vec<Config> = match item {
            "all" => all(),
            "burst" => all()
                .into_iter()
                .filter(|c| c.mode == Mode::default_mode() && c.forwarder != Forwarder::Io)
                .filter(|c| matches!(c.variant, Variant::Default | Variant::Burst(_)))
                .collect(),
            "c" => all().into_iter().filter(|c| c.forwarder == Forwarder::C).collect(),
            "event" => all().into_iter().filter(|c| c.is_event()).collect(),
            "rs" => all().into_iter().filter(|c| c.is_rs()).collect(),
            "scale" => scale(),
            name => match (Mode::parse(name), Config::parse(name)) {
                (Ok(mode), _) => all()
                    .into_iter()
                    .filter(|c| c.mode == mode && c.forwarder != Forwarder::Io && c.burst().is_none())
                    .collect(),
                (_, Some(c)) => vec![c],
                _ => {
                    let modes: Vec<&str> = Mode::all().map(Mode::id).collect();
                    let ids: Vec<String> = all().into_iter().chain(scale()).map(Config::id).collect();
                    return Err(format!(
                        "unknown configuration '{name}': use all, {}, burst, c, rs, event, scale or {}",
                        modes.join(", "),
                        ids.join(", ")
                    ));
                }
            },
        };
        chosen.extend(group);
    }
    if chosen.is_empty() {
        return Err("--only selects no configuration".into());
    }
    chosen.sort();
    chosen.dedup();
    Ok(chosen)
}

#[cfg(test)]
pub mod tests {
    use super::*;

    /// The configuration `id` names (tests write them as users do).
    pub fn config(id: &str) -> Config {
        Config::parse(id).unwrap_or_else(|| panic!("no configuration {id}"))
    }

    fn sel(s: &str) -> Result<Vec<String>, String> {
        let chosen = select(&s.split(',').map(String::from).collect::<Vec<_>>())?;
        Ok(chosen.into_iter().map(Config::id).collect())
    }

    #[test]
    fn the_ids_users_type() {
        let ids: Vec<String> = all().into_iter().map(Config::id).collect();
        assert_eq!(
            ids,
            [
                "c-lpm",
                "rs-lpm",
                "rs-lpm-c-drain",
                "rs-lpm-burst64",
                "rs-lpm-burst256",
                "c-lpm-event",
                "rs-lpm-event",
                "c-em",
                "rs-em",
                "rs-em-group8",
                "rs-em-seq",
                "c-fib",
                "rs-fib",
                "c-fib-event",
                "rs-fib-event",
                "c-acl",
                "rs-acl",
                "io"
            ]
        );
        let scale: Vec<String> = scale().into_iter().map(Config::id).collect();
        assert_eq!(
            scale,
            ["c-em-1m", "c-em-seq-1m", "rs-em-1m", "rs-em-seq-1m", "rs-lpm-1m"]
        );
        assert_eq!(config("rs-lpm-burst64").label(), "l3fwd-rs LPM burst 64");
        assert_eq!(config("c-em-seq-1m").label(), "C l3fwd EM seq 1M");
        assert_eq!(config("rs-em-group8").label(), "l3fwd-rs EM groups of 8");
        assert_eq!(config("rs-em-group8").reference(), Some(config("c-em")));
        assert_eq!(config("io").label(), "testpmd io");
        assert_eq!(config("rs-lpm-event").label(), "l3fwd-rs LPM eventdev");
        assert_eq!(config("rs-fib-event").reference(), Some(config("c-fib-event")));
    }

    #[test]
    fn groups_and_ids_resolve_in_run_order() {
        assert_eq!(
            sel("io,lpm").unwrap(),
            ["c-lpm", "rs-lpm", "rs-lpm-c-drain", "c-lpm-event", "rs-lpm-event", "io"]
        );
        assert_eq!(
            sel("event").unwrap(),
            ["c-lpm-event", "rs-lpm-event", "c-fib-event", "rs-fib-event"]
        );
        assert_eq!(sel("rs-lpm-c-drain").unwrap(), ["rs-lpm-c-drain"]);
        assert_eq!(
            sel("rs-em-seq,c-em,em").unwrap(),
            ["c-em", "rs-em", "rs-em-group8", "rs-em-seq"]
        );
        assert_eq!(sel("all").unwrap().len(), all().len());
        assert_eq!(sel("scale").unwrap().len(), 5);
        assert_eq!(sel("rs-lpm-1m,io").unwrap(), ["io", "rs-lpm-1m"]);
        assert_eq!(sel("fib").unwrap(), ["c-fib", "rs-fib", "c-fib-event", "rs-fib-event"]);
        assert_eq!(sel("acl").unwrap(), ["c-acl", "rs-acl"]);
        assert_eq!(
            sel("burst").unwrap(),
            ["c-lpm", "rs-lpm", "rs-lpm-burst64", "rs-lpm-burst256"]
        );
        assert_eq!(
            sel("c").unwrap(),
            ["c-lpm", "c-lpm-event", "c-em", "c-fib", "c-fib-event", "c-acl"]
        );
        assert_eq!(sel("rs").unwrap().len(), 11);
        assert!(sel("nat").unwrap_err().contains("use all, lpm, em, fib, acl, burst"));
        assert!(sel("").is_err());
    }

    #[test]
    fn what_each_configuration_runs() {
        assert_eq!(config("rs-lpm-burst256").burst(), Some(256));
        assert_eq!(config("rs-fib").mode(), "fib");
        assert!(config("rs-em-seq-1m").is_sequential() && config("rs-em-seq-1m").is_em());
        assert!(!config("io").is_rs() && !config("io").is_em());
        assert_eq!(config("rs-acl").reference(), Some(config("c-acl")));
        assert_eq!(config("rs-lpm-burst64").reference(), Some(config("c-lpm")));
        assert_eq!(config("rs-em-seq").reference(), Some(config("c-em")));
        assert_eq!(config("rs-em-seq-1m").reference(), Some(config("c-em-seq-1m")));
        assert_eq!(config("rs-lpm-1m").reference(), None, "C has no large LPM run");
        assert_eq!(config("c-lpm").reference(), None);
    }
}
