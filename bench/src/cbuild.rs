//! The one route to the C sample: every C l3fwd a run needs is built by
//! scripts/build-c-l3fwd.sh with its [`Build`] (pool, LPM size, multi or
//! sequential lookup), which the script records beside the binary, so that
//! a binary built for other runs is never taken for this one's.

use crate::pool;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// What the script builds in its directory.
pub const BINARY: &str = "dpdk-l3fwd";
/// The C sample's IPv4 LPM table, unpatched.
const C_LPM_RULES: usize = 1024;
const C_LPM_TBL8S: usize = 256;

/// A build of the C sample.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub struct Build {
    /// mbufs per pool (the stock 8192 at least).
    pub mbufs: usize,
    /// Routes its IPv4 LPM table must hold (the stock table holds 1024),
    /// and its IPv4 FIB (the script raises it from 65536 routes to the
    /// LPM's size).
    pub lpm_routes: usize,
    /// Exact match one packet at a time (NO_HASH_MULTI_LOOKUP).
    pub sequential: bool,
}

impl Build {
    /// The sample as DPDK ships it (but the checksum patch every build has).
    pub const STOCK: Build = Build {
        mbufs: pool::MIN_MBUFS,
        lpm_routes: 0,
        sequential: false,
    };

    /// The IPv4 LPM sizes for up to `lpm_routes` routes: rules rounded up
    /// to a power of two, and a tbl8 group per 16 of them (generated tables
    /// have about 2% of routes longer than /24).
    pub fn lpm_size(self) -> (usize, usize) {
        let rules = self.lpm_routes.next_power_of_two().max(C_LPM_RULES);
        (rules, (rules / 16).max(C_LPM_TBL8S))
    }

    /// What the script records in the build's `.variant`.
    fn variant(self) -> String {
        let mut v = format!("min_mbufs={} sequential={}", self.mbufs, u8::from(self.sequential));
        if self.lpm_size() != (C_LPM_RULES, C_LPM_TBL8S) {
            let (rules, tbl8s) = self.lpm_size();
            v += &format!(" lpm_rules={rules} lpm_tbl8s={tbl8s}");
        }
        v
    }

    /// Its directory under `root`: `mbufs-N-lpm-R`, `-seq` if sequential.
    pub fn dir(self, root: &Path) -> PathBuf {
        let seq = if self.sequential { "-seq" } else { "" };
        root.join(format!("mbufs-{}-lpm-{}{seq}", self.mbufs, self.lpm_size().0))
    }

    /// Builds it into `dir` with `script` (nothing to do when that build is
    /// up to date); its binary.
    pub fn make(self, script: &Path, dir: &Path) -> Result<PathBuf, String> {
        let (rules, tbl8s) = self.lpm_size();
        let out = Command::new(script)
            .arg(dir)
            .env("C_L3FWD_MIN_MBUFS", self.mbufs.to_string())
            .env("C_L3FWD_SEQUENTIAL", u8::from(self.sequential).to_string())
            .env("C_L3FWD_LPM_RULES", rules.to_string())
            .env("C_L3FWD_LPM_TBL8S", tbl8s.to_string())
            .output()
            .map_err(|e| format!("cannot run {}: {e}", script.display()))?;
        if !out.status.success() {
            let stderr = String::from_utf8_lossy(&out.stderr);
            return Err(format!("C build failed ({}): {}", out.status, stderr.trim()));
        }
        Ok(dir.join(BINARY))
    }

    /// Fails unless `bin` was built as this build (where it cannot be
    /// built here: in another DPDK release's root).
    pub fn check(self, bin: &Path) -> Result<(), String> {
        let recorded = std::fs::read_to_string(bin.with_file_name(".variant")).unwrap_or_default();
        if recorded.trim() == self.variant() {
            return Ok(());
        }
        let (rules, tbl8s) = self.lpm_size();
        Err(format!(
            "{} was built as '{}', not '{}': build it with C_L3FWD_MIN_MBUFS={}{} C_L3FWD_LPM_RULES={rules} C_L3FWD_LPM_TBL8S={tbl8s} scripts/build-c-l3fwd.sh {}",
            bin.display(),
            recorded.trim(),
            self.variant(),
            self.mbufs,
            if self.sequential { " C_L3FWD_SEQUENTIAL=1" } else { "" },
            bin.parent().map_or_else(String::new, |d| d.display().to_string())
        ))
    }
}

/// C builds in one root, each made on first use; a failed one is reported
/// once, and only the runs that need it fail.
pub struct CBuilds {
    script: PathBuf,
    root: PathBuf,
    built: BTreeMap<Build, Result<PathBuf, String>>,
}

impl CBuilds {
    pub fn new(script: PathBuf, root: PathBuf) -> CBuilds {
        CBuilds {
            script,
            root,
            built: BTreeMap::new(),
        }
    }

    /// The binary of `build`, or why there is none.
    pub fn binary(&mut self, build: Build) -> Result<PathBuf, String> {
        let (script, dir) = (&self.script, build.dir(&self.root));
        let built = self.built.entry(build).or_insert_with(|| build.make(script, &dir));
        built.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lpm(routes: usize) -> Build {
        Build {
            lpm_routes: routes,
            ..Build::STOCK
        }
    }

    #[test]
    fn c_lpm_tables_fit_the_routes() {
        assert_eq!(lpm(16).lpm_size(), (1024, 256), "stock sizes for small tables");
        assert_eq!(lpm(10_240).lpm_size(), (16_384, 1024));
        assert_eq!(lpm(1 << 20).lpm_size(), (1 << 20, 1 << 16));
    }

    /// The names and variant lines scripts/build-c-l3fwd.sh and earlier
    /// builds use, so that those builds stay valid.
    #[test]
    fn builds_are_named_and_recorded_as_the_script_records_them() {
        assert_eq!(Build::STOCK.variant(), "min_mbufs=8192 sequential=0");
        assert_eq!(lpm(16).variant(), Build::STOCK.variant());
        let scale_seq = Build {
            mbufs: 1 << 20,
            sequential: true,
            ..Build::STOCK
        };
        assert_eq!(scale_seq.variant(), "min_mbufs=1048576 sequential=1");
        assert_eq!(
            lpm(10_240).variant(),
            "min_mbufs=8192 sequential=0 lpm_rules=16384 lpm_tbl8s=1024"
        );
        let root = Path::new("r");
        assert_eq!(lpm(1 << 20).dir(root), root.join("mbufs-8192-lpm-1048576"));
        assert_eq!(scale_seq.dir(root), root.join("mbufs-1048576-lpm-1024-seq"));

        let scratch = testkit::Scratch::new("l3fwd-bench-cbuild");
        let dir = scratch.dir();
        let bin = dir.join(BINARY);
        assert!(Build::STOCK.check(&bin).unwrap_err().contains("built as ''"));
        std::fs::write(dir.join(".variant"), "min_mbufs=1048576 sequential=1\n").unwrap();
        assert_eq!(scale_seq.check(&bin), Ok(()));
        let err = Build {
            sequential: false,
            ..scale_seq
        }
        .check(&bin)
        .unwrap_err();
        assert!(err.contains("not 'min_mbufs=1048576 sequential=0'"), "{err}");
    }

    /// The script gets the build's settings, and a build is made once per
    /// CBuilds however many runs ask for it; a failed one says why.
    #[test]
    fn builds_are_made_by_the_script_with_their_settings() {
        let scratch = testkit::Scratch::new("l3fwd-bench-cbuild-script");
        let dir = scratch.dir();
        let script = dir.join("build.sh");
        let body = "#!/bin/sh\n[ \"$C_L3FWD_MIN_MBUFS\" = 0 ] && { echo no pool >&2; exit 1; }\n\
             echo \"$1 $C_L3FWD_MIN_MBUFS $C_L3FWD_SEQUENTIAL $C_L3FWD_LPM_RULES $C_L3FWD_LPM_TBL8S\" >>\"${0%/*}/calls\"\n";
        std::fs::write(&script, body).unwrap();
        std::process::Command::new("chmod")
            .arg("+x")
            .arg(&script)
            .status()
            .unwrap();
        let mut builds = CBuilds::new(script, dir.join("root"));
        let seq = Build {
            mbufs: 16_384,
            lpm_routes: 10_240,
            sequential: true,
        };
        let bin = builds.binary(seq).unwrap();
        assert_eq!(builds.binary(seq).unwrap(), bin);
        assert_eq!(bin, seq.dir(&dir.join("root")).join(BINARY));
        let calls = std::fs::read_to_string(dir.join("calls")).unwrap();
        assert_eq!(
            calls,
            format!("{} 16384 1 16384 1024\n", seq.dir(&dir.join("root")).display())
        );
        let none = Build { mbufs: 0, ..seq };
        assert!(builds
            .binary(none)
            .unwrap_err()
            .contains("C build failed (exit status: 1): no pool"));
    }
}
