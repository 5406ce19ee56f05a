//! Test traffic: two pcap files (one per port) per kind of run: for the
//! default rule files, made by l3fwd-gen; for large generated tables, made
//! with the tables by l3fwd-tablegen.

use crate::command::{Files, Traffic};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Where the generators and the default rule files are.
pub struct Generators<'a> {
    pub gen: &'a Path,
    pub tablegen: &'a Path,
    pub rules_dir: &'a Path,
}

/// The sizes of the large tables and of their traffic.
pub struct ScaleSizes {
    pub em_rules: usize,
    pub v4_routes: usize,
    pub v6_routes: usize,
    pub frames: usize,
}

/// The seed of every generated table and file.
const SEED: &str = "1";

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
    let acl_dir = dir.join("acl");
    write_acl_rules(&acl_dir)?;
    let acl = Files {
        rules: rules(&acl_dir, "acl"),
        ..default("lpm")
    };
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
            let mut cmd = Command::new(tools.tablegen);
            cmd.args([mode, "--seed", SEED, "--ports", "0,1", "--pcaps", "2"])
                .args(["--v4", &v4.to_string(), "--v6", &v6.to_string()])
                .args(extra)
                .args(["--frames", &scale.frames.to_string()])
                .arg("--dir")
                .arg(scale_dir(mode));
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
pub fn acl_deny_rules() -> (String, String) {
    let (mut v4, mut v6) = (String::new(), String::new());
    for n in 0..ACL_SUBNETS {
        let ports = format!("{} : {}", n * 256, n * 256 + 15);
        v4 += &format!("@198.18.{n}.0/24 0.0.0.0/0 0 : 65535 {ports} 0x11/0xff\n");
        v6 += &format!("@{} 0:0:0:0:0:0:0:0/0 0 : 65535 {ports} 0x11/0xff\n", acl_v6_net(n));
    }
    (v4, v6)
}

/// An ACL route: any source, destinations in `prefix`, any port and protocol.
pub fn acl_route(prefix: &str, port: u16) -> String {
    let any = if prefix.contains(':') {
        "0:0:0:0:0:0:0:0/0"
    } else {
        "0.0.0.0/0"
    };
    format!("R{any} {prefix} 0 : 65535 0 : 65535 0x00/0x00 {port}\n")
}

/// ACL rules for the LPM traffic (`acl_v4.cfg`, `acl_v6.cfg` in `dir`), a
/// few hundred per family: [`acl_deny_rules`], a route per destination
/// subnet (to port 0 or 1), and a last rule that routes the rest.
fn write_acl_rules(dir: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let header = "# l3fwd-bench: generated ACL rules for the LPM traffic\n";
    let (deny4, deny6) = acl_deny_rules();
    let (mut v4, mut v6) = (format!("{header}{deny4}"), format!("{header}{deny6}"));
    for n in 0..ACL_SUBNETS {
        v4 += &acl_route(&format!("198.18.{n}.0/24"), n % 2);
        v6 += &acl_route(&acl_v6_net(n), n % 2);
    }
    v4 += &acl_route("0.0.0.0/0", 0);
    v6 += &acl_route("0:0:0:0:0:0:0:0/0", 0);
    for (name, text) in [("acl_v4.cfg", v4), ("acl_v6.cfg", v6)] {
        let path = dir.join(name);
        std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(())
}

/// The two pcap files of `frames` frames each of l3fwd-gen's `mode`
/// (`lpm` or `em`) traffic, in `dir`.
pub fn default_pcaps(dir: &Path, mode: &str, frames: usize) -> [PathBuf; 2] {
    [1, 2].map(|seed| dir.join(format!("{mode}-{frames}-{seed}.pcap")))
}

/// Writes `pcaps` with l3fwd-gen, `frames` each, seeds 1 and 2; valid
/// traffic only, so that rates do not depend on drop paths; for the default
/// exact-match rules if `em`, else for the LPM routes.
pub fn write_pair(gen: &Path, pcaps: &[PathBuf; 2], frames: usize, em: bool) -> Result<(), String> {
    let extra: &[&str] = if em { &["--em"] } else { &[] };
    for (seed, pcap) in (1..).zip(pcaps) {
        let mut cmd = Command::new(gen);
        cmd.arg("--out")
            .arg(pcap)
            .args(["--count", &frames.to_string(), "--seed", &format!("{seed}")]);
        cmd.args(["--runt", "0", "--invalid", "0", "--non-ip", "0"]).args(extra);
        run(cmd)?;
    }
    Ok(())
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
