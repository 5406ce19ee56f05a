//! The one traffic model of every run: two pcap files (one per port) and
//! the rule files they hit, all made from one seed. Three kinds:
//! - the default rule files (configs/) and l3fwd-gen's traffic for them
//!   (make bench, callgrind);
//! - router-size tables and traffic touching many of their entries, made
//!   together by l3fwd-tablegen (make bench-scale, update);
//! - a sweep cell: an IPv4 table and frames of the cell's size that hit its
//!   flows, each once per pass through the files (l3fwd-tablegen again).
//!
//! ACL runs take the LPM traffic against the LPM routes rewritten as ACL
//! rules behind deny rules.

use crate::configs::Config;
use crate::grid::{Cell, FCS};
use crate::mode::RuleFormat;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The IPv4 and IPv6 rule files and the two pcap files (one per port) of
/// one kind of run.
#[derive(Clone)]
pub struct Files {
    pub rules: [PathBuf; 2],
    pub pcaps: [PathBuf; 2],
}

/// The files of each kind of run.
pub struct Traffic {
    pub lpm: Files,
    /// The LPM traffic, against generated ACL rules.
    pub acl: Files,
    pub em: Files,
    pub lpm_scale: Files,
    pub em_scale: Files,
}

impl Traffic {
    /// FIB mode runs on the LPM route files and traffic.
    pub fn files(&self, config: Config) -> &Files {
        match (config.is_scale(), config.is_em()) {
            _ if config.mode.rules() == RuleFormat::Acl => &self.acl,
            (false, false) => &self.lpm,
            (false, true) => &self.em,
            (true, false) => &self.lpm_scale,
            (true, true) => &self.em_scale,
        }
    }
}

/// Where the generators and the default rule files are.
pub struct Generators<'a> {
    pub gen: &'a Path,
    pub tablegen: &'a Path,
    pub rules_dir: &'a Path,
}

/// The large tables of scale runs and their traffic, and the pool that
/// replays it.
#[derive(Serialize, Deserialize, PartialEq, Debug, Clone)]
pub struct ScaleSizes {
    pub em_rules: usize,
    pub v4_routes: usize,
    pub v6_routes: usize,
    /// Frames per pcap file (flows per port).
    pub frames: usize,
    /// mbufs per pool, both forwarders.
    pub mbufs: u32,
}

/// The seed of every generated table and file (l3fwd-gen's port 1 takes
/// the next): cells of one table share their rules.
const SEED: u32 = 1;

/// Writes into `dir` the files that the selected kinds of run need
/// (`default` / `scale` x `lpm` / `em`); `frames` per default pcap.
pub fn generate(
    tools: &Generators,
    dir: &Path,
    frames: usize,
    scale: &ScaleSizes,
    needed: impl Fn(bool, bool) -> bool,
) -> Result<Traffic, String> {
    let rules = |dir: &Path, mode: &str| ["v4", "v6"].map(|family| dir.join(format!("{mode}_{family}.cfg")));
    let default = |mode: &str| Files {
        rules: rules(tools.rules_dir, mode),
        pcaps: default_pcaps(dir, mode, frames),
    };
    let scale_dir = |mode: &str| dir.join(format!("scale-{mode}"));
    let scaled = |mode: &str| Files {
        rules: rules(&scale_dir(mode), mode),
        pcaps: [0, 1].map(|i| scale_dir(mode).join(format!("{mode}_{i}.pcap"))),
    };
    let acl = Files {
        rules: rules(&dir.join("acl"), "acl"),
        ..default("lpm")
    };
    write_acl_rules(&acl, 0)?;
    let traffic = Traffic {
        lpm: default("lpm"),
        acl,
        em: default("em"),
        lpm_scale: scaled("lpm"),
        em_scale: scaled("em"),
    };
    if needed(false, false) {
        write_pair(tools.gen, &traffic.lpm.pcaps, frames, false)?;
    }
    if needed(false, true) {
        write_pair(tools.gen, &traffic.em.pcaps, frames, true)?;
    }
    // The IPv6 exact-match rules only keep the file valid: runs fill the
    // IPv4 table. UDP only: the C sample looks up groups of 8 packets that
    // mix TCP and UDP one by one, and multi-lookup is what is compared.
    let tables = [
        ("lpm", scale.v4_routes, scale.v6_routes, &[][..]),
        ("em", scale.em_rules, 16, &["--tcp", "0"][..]),
    ];
    for (mode, v4, v6, extra) in tables {
        if needed(true, mode == "em") {
            let mut cmd = tablegen(tools.tablegen, mode, &scale_dir(mode), v4, scale.frames);
            cmd.args(["--v6", &v6.to_string()]).args(extra);
            run(cmd)?;
        }
    }
    Ok(traffic)
}

/// Subnets of 198.18.0.0/16 (and of 2001:200::/48) given deny rules and routes.
const ACL_SUBNETS: u16 = 256;

fn acl_v6_net(n: u16) -> String {
    format!("2001:200:0:{n:x}:0:0:0:0/64")
}

/// ACL deny rules as users write them, IPv4 and IPv6, a line each: one per
/// source subnet for a narrow band of UDP destination ports. Few packets
/// hit one, but every rule shapes the trie a packet is classified through.
fn acl_deny_rules() -> (String, String) {
    let (mut v4, mut v6) = (String::new(), String::new());
    for n in 0..ACL_SUBNETS {
        let ports = format!("{} : {}", n * 256, n * 256 + 15);
        v4 += &format!("@198.18.{n}.0/24 0.0.0.0/0 0 : 65535 {ports} 0x11/0xff\n");
        v6 += &format!("@{} 0:0:0:0:0:0:0:0/0 0 : 65535 {ports} 0x11/0xff\n", acl_v6_net(n));
    }
    (v4, v6)
}

/// An ACL route: any source, destinations in `prefix`, any port and protocol.
fn acl_route(prefix: &str, port: u16) -> String {
    let any = if prefix.contains(':') { ACL_ANY_V6 } else { "0.0.0.0/0" };
    format!("R{any} {prefix} 0 : 65535 0 : 65535 0x00/0x00 {port}\n")
}

/// ACL rules for the default LPM traffic (`files.rules`), a few hundred
/// per family: a route per destination subnet of the deny rules (to port
/// 0 or 1), and a last rule that routes the rest; first, `more_denies`
/// IPv4 deny rules of sources the traffic never has (10.0.0.0/8), for a
/// classifier of that size that forwards alike.
pub fn write_acl_rules(files: &Files, more_denies: usize) -> Result<(), String> {
    let dir = files.rules[0].parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let subnets = |net: fn(u16) -> String, any: &str| {
        let routes = (0..ACL_SUBNETS).map(|n| (net(n), n % 2));
        routes.chain([(any.to_string(), 0)]).collect::<Vec<_>>()
    };
    let v4 = subnets(|n| format!("198.18.{n}.0/24"), "0.0.0.0/0");
    let v6 = subnets(acl_v6_net, ACL_ANY_V6);
    write_acl(&files.rules, more_denies, &v4, &v6)
}

/// IPv6's default route in ACL rules.
const ACL_ANY_V6: &str = "0:0:0:0:0:0:0:0/0";

/// Writes ACL rule files `out` (IPv4, IPv6): `more_denies` IPv4 deny
/// rules, [`acl_deny_rules`], then the routes (prefix, port) of each
/// family.
fn write_acl(out: &[PathBuf; 2], more_denies: usize, v4: &[(String, u16)], v6: &[(String, u16)]) -> Result<(), String> {
    let header = "# l3fwd-bench: generated ACL rules\n";
    let (mut deny4, deny6) = acl_deny_rules();
    let sources = (0..more_denies as u32).map(|i| std::net::Ipv4Addr::from(0x0a00_0000 | (i & 0x00ff_ffff)));
    let more: String = sources
        .map(|s| format!("@{s}/32 0.0.0.0/0 0 : 65535 0 : 65535 0x00/0x00\n"))
        .collect();
    deny4.insert_str(0, &more);
    for (path, deny, routes) in [(&out[0], deny4, v4), (&out[1], deny6, v6)] {
        let mut text = format!("{header}{deny}");
        for (prefix, port) in routes {
            text += &acl_route(prefix, *port);
        }
        std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(())
}

/// The two pcap files of `frames` frames each of l3fwd-gen's `mode`
/// (`lpm` or `em`) traffic, in `dir`.
pub fn default_pcaps(dir: &Path, mode: &str, frames: usize) -> [PathBuf; 2] {
    [1, 2].map(|seed| dir.join(format!("{mode}-{frames}-{seed}.pcap")))
}

/// Writes `pcaps` with l3fwd-gen, `frames` each, seeds SEED and the next; valid
/// traffic only, so that rates do not depend on drop paths; for the default
/// exact-match rules if `em`, else for the LPM routes.
pub fn write_pair(gen: &Path, pcaps: &[PathBuf; 2], frames: usize, em: bool) -> Result<(), String> {
    let extra: &[&str] = if em { &["--em"] } else { &[] };
    for (seed, pcap) in (SEED..).zip(pcaps) {
        let mut cmd = Command::new(gen);
        cmd.arg("--out")
            .arg(pcap)
            .args(["--count", &frames.to_string(), "--seed", &format!("{seed}")]);
        cmd.args(["--runt", "0", "--invalid", "0", "--non-ip", "0"]).args(extra);
        run(cmd)?;
    }
    Ok(())
}

/// l3fwd-tablegen making `mode`'s table of `v4` IPv4 entries into `dir`,
/// and two pcap files of `frames` frames for ports 0 and 1.
fn tablegen(program: &Path, mode: &str, dir: &Path, v4: usize, frames: usize) -> Command {
    let mut cmd = Command::new(program);
    cmd.args([mode, "--seed", &SEED.to_string(), "--ports", "0,1", "--pcaps", "2"])
        .args(["--v4", &v4.to_string(), "--frames", &frames.to_string()])
        .arg("--dir")
        .arg(dir);
    cmd
}

fn run(mut cmd: Command) -> Result<(), String> {
    let program = cmd.get_program().to_string_lossy().into_owned();
    let out = cmd.output().map_err(|e| format!("cannot run {program}: {e}"))?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        return Err(format!("{program} failed ({}): {}", out.status, stderr.trim()));
    }
    Ok(())
}

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
pub fn generate_cell(tablegen_bin: &Path, rules_dir: &Path, work_dir: &Path, cell: &Cell) -> Result<CellFiles, String> {
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
    let mut cmd = tablegen(tablegen_bin, mode, &files.dir, cell.rules(), cell.frames_per_port());
    cmd.args(["--in-turn", "--v6", "0", "--miss", "0"])
        .args(["--min-size", &frame, "--max-size", &frame]);
    if cell.table.mode.rules() == RuleFormat::Flows {
        cmd.args(["--tcp", "0"]);
    }
    run(cmd)?;
    if cell.table.mode.rules() == RuleFormat::Acl {
        acl_from_lpm(&files.dir.join(format!("{mode}_v4.cfg")), &files.files.rules)?;
    }
    Ok(files)
}

impl CellFiles {
    /// ACL rules for this LPM cell's traffic, written beside its files:
    /// its routes behind the deny rules, as an ACL cell of the sweep has.
    pub fn acl_rules(&self) -> Result<[PathBuf; 2], String> {
        let out = [self.dir.join("acl_v4.cfg"), self.dir.join("acl_v6.cfg")];
        acl_from_lpm(&self.files.rules[0], &out)?;
        Ok(out)
    }
}

/// An ACL cell's rules: the deny rules (the traffic hits none), then the
/// LPM table's routes (`R<prefix> <port>` lines) as ACL routes. The IPv6
/// file, for a family without traffic, holds the deny rules and a route
/// (the C sample refuses a file without one).
fn acl_from_lpm(lpm_v4: &Path, out: &[PathBuf; 2]) -> Result<(), String> {
    let text = std::fs::read_to_string(lpm_v4).map_err(|e| format!("{}: {e}", lpm_v4.display()))?;
    let mut v4 = Vec::new();
    for line in text.lines().filter(|l| l.starts_with('R')) {
        let route = line[1..].split_whitespace().collect::<Vec<_>>();
        let (Some(prefix), Some(Ok(port))) = (route.first(), route.get(1).map(|p| p.parse::<u16>())) else {
            return Err(format!("{}: not a route: '{line}'", lpm_v4.display()));
        };
        v4.push((prefix.to_string(), port));
    }
    write_acl(out, 0, &v4, &[(ACL_ANY_V6.to_string(), 0)])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn acl_rules_are_the_lpm_routes_behind_the_deny_rules() {
        let scratch = testkit::Scratch::new("sweep-acl");
        let dir = scratch.dir();
        let lpm = dir.join("lpm_v4.cfg");
        std::fs::write(&lpm, "# 2 rules\nR220.144.174.0/24 0\nR204.116.132.160/29 1\n").unwrap();
        let out = [dir.join("acl_v4.cfg"), dir.join("acl_v6.cfg")];
        acl_from_lpm(&lpm, &out).unwrap();
        let v4 = std::fs::read_to_string(&out[0]).unwrap();
        let lines: Vec<&str> = v4.lines().filter(|l| !l.starts_with('#')).collect();
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
        assert!(acl_from_lpm(&lpm, &out).unwrap_err().contains("not a route"));
    }
}
