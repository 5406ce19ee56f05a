//! A cell's rule files and traffic, written by l3fwd-tablegen: an IPv4 table
//! and two pcap files (one per port) of frames of the cell's size that hit
//! its flows, each once per pass through the files.

use super::grid::{Cell, Mode, FCS};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The seed of every generated table and file: cells of one table share it.
const SEED: &str = "1";

/// A cell's files, removed when dropped (a million 1518-byte frames take 1.6 GB).
pub struct CellFiles {
    dir: PathBuf,
    /// IPv4 and IPv6 rule files.
    pub rules: [PathBuf; 2],
    pub pcaps: [PathBuf; 2],
}

impl Drop for CellFiles {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Writes `cell`'s files into a directory of `work_dir`. Traffic is IPv4
/// UDP only, with no misses: IPv6 headers do not fit in a 64-byte frame,
/// and the C sample looks up groups mixing TCP and UDP one by one. Its IPv6
/// rule file is the default one of `rules_dir` (the C sample refuses an
/// empty file).
pub fn generate(tablegen: &Path, rules_dir: &Path, work_dir: &Path, cell: &Cell) -> Result<CellFiles, String> {
    let mode = cell.table.mode().tables();
    let dir = work_dir.join(cell.key().replace('/', "-"));
    let files = CellFiles {
        rules: [
            dir.join(format!("{mode}_v4.cfg")),
            rules_dir.join(format!("{mode}_v6.cfg")),
        ],
        pcaps: [0, 1].map(|i| dir.join(format!("{mode}_{i}.pcap"))),
        dir,
    };
    let frame = (cell.size - FCS).to_string();
    let mut cmd = Command::new(tablegen);
    cmd.args([mode, "--seed", SEED, "--ports", "0,1", "--pcaps", "2", "--in-turn"])
        .args(["--v4", &cell.rules().to_string(), "--v6", "0", "--miss", "0"])
        .args(["--frames", &cell.frames_per_port().to_string()])
        .args(["--min-size", &frame, "--max-size", &frame])
        .arg("--dir")
        .arg(&files.dir);
    if cell.table.mode() == Mode::Em {
        cmd.args(["--tcp", "0"]);
    }
    let out = cmd
        .output()
        .map_err(|e| format!("cannot run {}: {e}", tablegen.display()))?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        return Err(format!(
            "{} failed ({}): {}",
            tablegen.display(),
            out.status,
            stderr.trim()
        ));
    }
    Ok(files)
}
