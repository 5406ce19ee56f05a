//! The two forwarders a sweep compares, sized for each cell: C builds
//! with the cell's pool (crate::pool) and LPM tables large enough for the
//! routes, and their command lines.

use super::grid::Cell;
use crate::command;
pub use crate::configs::Forwarder;
use crate::configs::{Config, Variant};
use crate::run::Stop;
use crate::traffic::CellFiles;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The C sample's IPv4 LPM table, unpatched.
const C_LPM_RULES: usize = 1024;
const C_LPM_TBL8S: usize = 256;
/// What scripts/build-c-l3fwd.sh builds in its directory.
pub const C_BINARY: &str = "dpdk-l3fwd";

/// The C sample's IPv4 LPM sizes for tables of up to `routes` routes: rules
/// rounded up to a power of two, and a tbl8 group per 16 of them (generated
/// tables have about 2% of routes longer than /24).
pub fn c_lpm_size(routes: usize) -> (usize, usize) {
    let rules = routes.next_power_of_two().max(C_LPM_RULES);
    (rules, (rules / 16).max(C_LPM_TBL8S))
}

/// C l3fwd binaries built by scripts/build-c-l3fwd.sh, one per pool size,
/// each with an LPM table of `lpm_routes` routes.
pub struct CBuilds {
    pub script: PathBuf,
    /// Builds go to `root/mbufs-N-lpm-R`.
    pub root: PathBuf,
    pub lpm_routes: usize,
    built: BTreeMap<usize, Result<PathBuf, String>>,
}

impl CBuilds {
    pub fn new(script: PathBuf, root: PathBuf, lpm_routes: usize) -> CBuilds {
        CBuilds {
            script,
            root,
            lpm_routes,
            built: BTreeMap::new(),
        }
    }

    /// The binary with a pool of `mbufs`, built on first use (the script does
    /// nothing when it is up to date); why not, if the build failed.
    pub fn binary(&mut self, mbufs: usize) -> Result<PathBuf, String> {
        let (script, routes) = (&self.script, self.lpm_routes);
        let dir = build_dir(&self.root, mbufs, routes);
        let built = self
            .built
            .entry(mbufs)
            .or_insert_with(|| build(script, &dir, mbufs, routes));
        built.clone()
    }
}

/// Where [`CBuilds`] in `root` puts the build for a pool of `mbufs` and
/// `routes` LPM routes.
pub fn build_dir(root: &Path, mbufs: usize, routes: usize) -> PathBuf {
    root.join(format!("mbufs-{mbufs}-lpm-{}", c_lpm_size(routes).0))
}

/// Builds the C sample into `dir` with `script` (scripts/build-c-l3fwd.sh)
/// for a pool of `mbufs` and an LPM table of `routes` routes; its binary.
pub fn build(script: &Path, dir: &Path, mbufs: usize, routes: usize) -> Result<PathBuf, String> {
    let (rules, tbl8s) = c_lpm_size(routes);
    let out = Command::new(script)
        .arg(dir)
        .env("C_L3FWD_MIN_MBUFS", mbufs.to_string())
        .env("C_L3FWD_LPM_RULES", rules.to_string())
        .env("C_L3FWD_LPM_TBL8S", tbl8s.to_string())
        .output()
        .map_err(|e| format!("cannot run {}: {e}", script.display()))?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        return Err(format!("C build failed ({}): {}", out.status, stderr.trim()));
    }
    Ok(dir.join(C_BINARY))
}

/// The command line of `forwarder` (`program`) on `cell`'s files and how
/// to stop it: make bench's, on the cell's mode, with the cell's pool
/// (the C build has it).
pub fn command(forwarder: Forwarder, program: &Path, cell: &Cell, files: &CellFiles, prefix: &str) -> (Command, Stop) {
    let config = Config::new(forwarder, cell.table.mode, Variant::Default, false);
    command::command(config, program, &files.files, &cell.pool(), prefix)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c_lpm_tables_fit_the_routes() {
        assert_eq!(c_lpm_size(16), (1024, 256), "stock sizes for small tables");
        assert_eq!(c_lpm_size(10_240), (16_384, 1024));
        assert_eq!(c_lpm_size(1 << 20), (1 << 20, 1 << 16));
    }
}
