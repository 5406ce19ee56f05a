//! Test traffic: two pcap files (one per port) per lookup mode, made by l3fwd-gen.

use crate::command::Traffic;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Writes the pcap files that `lpm`/`em` runs need into `dir`.
pub fn generate(gen: &Path, dir: &Path, frames: usize, lpm: bool, em: bool) -> Result<Traffic, String> {
    let file = |mode: &str, seed: u32| dir.join(format!("{mode}-{frames}-{seed}.pcap"));
    let traffic = Traffic {
        lpm: [file("lpm", 1), file("lpm", 2)],
        em: [file("em", 1), file("em", 2)],
    };
    if lpm {
        write_pair(gen, &traffic.lpm, frames, &[])?;
    }
    if em {
        write_pair(gen, &traffic.em, frames, &["--em"])?;
    }
    Ok(traffic)
}

/// Seeds 1 and 2; valid UDP only, so that rates do not depend on drop paths.
fn write_pair(gen: &Path, pcaps: &[PathBuf; 2], frames: usize, extra: &[&str]) -> Result<(), String> {
    for (seed, pcap) in (1..).zip(pcaps) {
        let mut cmd = Command::new(gen);
        cmd.arg("--out")
            .arg(pcap)
            .args(["--count", &frames.to_string(), "--seed", &format!("{seed}")]);
        cmd.args(["--runt", "0", "--invalid", "0", "--non-ip", "0"]).args(extra);
        let out = cmd.output().map_err(|e| format!("cannot run {}: {e}", gen.display()))?;
        if !out.status.success() {
            let stderr = String::from_utf8_lossy(&out.stderr);
            return Err(format!("{} failed ({}): {}", gen.display(), out.status, stderr.trim()));
        }
    }
    Ok(())
}
