//! Which installed DPDK the crate builds against, and the cfgs that tell
//! the code which release's API and private layouts to expect: shared by
//! build.rs and the crate's tests.

/// The oldest release line the crate builds on.
pub const OLDEST: Release = Release { year: 22, month: 11 };

/// The release lines the crate is tested on (`make test DPDK=…`).
pub const TESTED: [Release; 3] = [
    Release { year: 22, month: 11 },
    Release { year: 24, month: 11 },
    Release { year: 25, month: 11 },
];

/// `cfg(NAME)` is set when the DPDK built against is at least RELEASE: the
/// releases whose API or private layouts the code reads differently.
pub const CFGS: [(&str, Release); 5] = [
    // logging in librte_log; rte_thread_create_control (rte_ctrl_thread_create
    // deprecated); the telemetry *_uint adders.
    ("dpdk_ge_2311", Release { year: 23, month: 11 }),
    // mbuf fields in anonymous unions; rte_eth_link a union.
    ("dpdk_ge_2407", Release { year: 24, month: 7 }),
    // struct rte_ipv6_addr; rte_fib's DIR-24-8 head with RCU fields;
    // rte_fib_rcu_qsbr_add.
    ("dpdk_ge_2411", Release { year: 24, month: 11 }),
    // rte_lpm_tbl_entry a union; eventdev capabilities as RTE_BIT32.
    ("dpdk_ge_2507", Release { year: 25, month: 7 }),
    // rte_fib6's trie head with RCU fields; rte_fib6_rcu_qsbr_add; the
    // telemetry *_u64 adders and per-queue ethdev stats gone.
    ("dpdk_ge_2511", Release { year: 25, month: 11 }),
];

/// A DPDK release line, `YY.MM`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Release {
    pub year: u32,
    pub month: u32,
}

impl std::fmt::Display for Release {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{:02}", self.year, self.month)
    }
}

/// The release line of `version` (pkg-config's `--modversion libdpdk`,
/// e.g. `24.11.8` or `25.11.0-rc1`).
pub fn release(version: &str) -> Result<Release, String> {
    let mut parts = version.split(['.', '-']);
    let mut number = || parts.next().and_then(|p| p.parse::<u32>().ok());
    match (number(), number()) {
        (Some(year), Some(month)) if (1..=12).contains(&month) && year < 100 => Ok(Release { year, month }),
        _ => Err(format!(
            "cannot read DPDK version '{version}' (pkg-config --modversion libdpdk)"
        )),
    }
}

/// What the build does with `version`: Ok with a warning for a release
/// newer than the tested ones, Ok(None) for a tested or in-between one, an
/// error for one older than [`OLDEST`].
pub fn check(version: &str) -> Result<(Release, Option<String>), String> {
    let found = release(version)?;
    let tested = TESTED.map(|r| r.to_string()).join(", ");
    if found < OLDEST {
        return Err(format!(
            "DPDK {version} found by pkg-config is too old: l3fwd-rs needs DPDK {OLDEST} or later (tested: {tested})"
        ));
    }
    let newest = TESTED[TESTED.len() - 1];
    let warning = (found > newest).then(|| {
        format!("DPDK {version} is newer than the releases l3fwd-rs is tested on ({tested}): building anyway")
    });
    Ok((found, warning))
}

/// The cfgs set for `found`.
pub fn cfgs(found: Release) -> impl Iterator<Item = &'static str> {
    CFGS.into_iter().filter(move |(_, r)| found >= *r).map(|(name, _)| name)
}

#[cfg(test)]
mod tests {
    use super::{cfgs, check, release, Release};

    #[test]
    fn every_release_from_22_11_builds_and_older_ones_are_refused() {
        for ok in [
            "22.11",
            "22.11.0",
            "22.11.11",
            "22.11.1-rc1",
            "23.11.2",
            "24.11.8",
            "25.11.4",
        ] {
            assert_eq!(check(ok).map(|(_, warning)| warning), Ok(None), "{ok}");
        }
        for refused in ["22.07.0", "21.11.9", "19.11"] {
            let why = check(refused).unwrap_err();
            assert!(
                why.contains(&format!("DPDK {refused} found")) && why.contains("22.11 or later"),
                "{why}"
            );
        }
        for unreadable in ["", "x", "22", "221.1", "22.13"] {
            assert!(
                check(unreadable).unwrap_err().contains("cannot read DPDK version"),
                "{unreadable}"
            );
        }
    }

    #[test]
    fn an_untested_newer_release_builds_with_a_warning_naming_the_tested_ones() {
        let (found, warning) = check("26.11.0").unwrap();
        assert_eq!(found, Release { year: 26, month: 11 });
        let warning = warning.expect("a warning");
        assert!(
            warning.contains("26.11.0") && warning.contains("22.11, 24.11, 25.11"),
            "{warning}"
        );
    }

    #[test]
    fn cfgs_follow_the_release() {
        let of = |v: &str| cfgs(release(v).unwrap()).collect::<Vec<_>>();
        assert!(of("22.11.4").is_empty());
        assert_eq!(of("23.11.1"), ["dpdk_ge_2311"]);
        assert_eq!(of("24.11.8"), ["dpdk_ge_2311", "dpdk_ge_2407", "dpdk_ge_2411"]);
        assert_eq!(of("25.11.4").len(), 5);
    }
}
