//! A cell's rule files and traffic, written by l3fwd-tablegen: an IPv4 table
//! and two pcap files (one per port) of frames of the cell's size that hit
//! its flows, each once per pass through the files; for ACL cells, the LPM
//! table rewritten as ACL rules.

use super::grid::{Cell, FCS};
use crate::command::Files;
use l3fwd_modes::RuleFormat;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The seed of every generated table and file: cells of one table share it.
const SEED: &str = "1";

/// A cell's files, removed when dropped (a million 1518-byte frames take 1.6 GB).
pub struct CellFiles {
    dir: PathBuf,
    pub files: Files,
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
    let mode = cell.table.mode.tables();
    let dir = work_dir.join(cell.key().replace('/', "-"));
    let rules = match cell.table.mode.rules() {
        RuleFormat::Acl => [dir.join("acl_v4.cfg"), dir.join("acl_v6.cfg")],
        _ => [
            dir.join(format!("{mode}_v4.cfg")),
            rules_dir.join(format!("{mode}_v6.cfg")),
        ],
    };
    let files = CellFiles {
        files: Files {
            rules,
            pcaps: [0, 1].map(|i| dir.join(format!("{mode}_{i}.pcap"))),
        },
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
    if cell.table.mode.rules() == RuleFormat::Flows {
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
    if cell.table.mode.rules() == RuleFormat::Acl {
        write_acl_rules(&files.dir.join(format!("{mode}_v4.cfg")), &files.files.rules)?;
    }
    Ok(files)
}

/// An ACL cell's rules: the deny rules of `make bench` (the traffic hits
/// none), then the LPM table's routes (`R<prefix> <port>` lines) as ACL
/// routes. The IPv6 file, for a family without traffic, holds the deny
/// rules and a route (the C sample refuses a file without one).
fn write_acl_rules(lpm_v4: &Path, [v4_out, v6_out]: &[PathBuf; 2]) -> Result<(), String> {
    let text = std::fs::read_to_string(lpm_v4).map_err(|e| format!("{}: {e}", lpm_v4.display()))?;
    let (mut v4, mut v6) = crate::traffic::acl_deny_rules();
    for line in text.lines().filter(|l| l.starts_with('R')) {
        let route = line[1..].split_whitespace().collect::<Vec<_>>();
        let (Some(prefix), Some(Ok(port))) = (route.first(), route.get(1).map(|p| p.parse::<u16>())) else {
            return Err(format!("{}: not a route: '{line}'", lpm_v4.display()));
        };
        v4 += &crate::traffic::acl_route(prefix, port);
    }
    v6 += &crate::traffic::acl_route("0:0:0:0:0:0:0:0/0", 0);
    for (path, text) in [(v4_out, v4), (v6_out, v6)] {
        std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn acl_rules_are_the_lpm_routes_behind_the_deny_rules() {
        let dir = std::env::temp_dir().join(format!("sweep-acl-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let lpm = dir.join("lpm_v4.cfg");
        std::fs::write(&lpm, "# 2 rules\nR220.144.174.0/24 0\nR204.116.132.160/29 1\n").unwrap();
        let out = [dir.join("acl_v4.cfg"), dir.join("acl_v6.cfg")];
        write_acl_rules(&lpm, &out).unwrap();
        let v4 = std::fs::read_to_string(&out[0]).unwrap();
        let lines: Vec<&str> = v4.lines().collect();
        assert_eq!(lines.len(), 256 + 2);
        assert!(lines[..256].iter().all(|l| l.starts_with("@198.18.")));
        assert_eq!(
            lines[256],
            "R0.0.0.0/0 220.144.174.0/24 0 : 65535 0 : 65535 0x00/0x00 0"
        );
        assert_eq!(
            lines[257],
            "R0.0.0.0/0 204.116.132.160/29 0 : 65535 0 : 65535 0x00/0x00 1"
        );
        let v6 = std::fs::read_to_string(&out[1]).unwrap();
        assert_eq!(
            v6.lines().filter(|l| l.starts_with('R')).count(),
            1,
            "the route C needs"
        );
        std::fs::write(&lpm, "R10.0.0.0/8\n").unwrap();
        assert!(write_acl_rules(&lpm, &out).unwrap_err().contains("not a route"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
