//! The command line of each configuration: same EAL setup, ports and traffic for all.

use crate::configs::Config;
use crate::run::Stop;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The lcore that forwards. On a 2-CPU machine, CPU 0 is left to control threads
/// (telemetry, testpmd's main lcore) so that they never steal forwarding time.
const FWD_LCORE: u32 = 1;

/// EAL memory (-m, MB) of the runs on the default tables.
const MEMORY_MB: u32 = 1024;

/// Where the programs are.
pub struct Tools {
    pub rs_bin: PathBuf,
    pub c_bin: PathBuf,
    /// The C sample with its mbuf pool raised to [`Scale::mbufs`]
    /// (scripts/build-c-l3fwd.sh's C_L3FWD_MIN_MBUFS), multi-lookup...
    pub c_scale_bin: PathBuf,
    /// ...and sequential lookup (C_L3FWD_SEQUENTIAL).
    pub c_scale_seq_bin: PathBuf,
    pub testpmd: PathBuf,
}

/// The rule files (`lpm_v4.cfg`, `em_v6.cfg`, ...) and the two pcap files
/// (one per port) of one kind of run.
pub struct Files {
    pub rules_dir: PathBuf,
    pub pcaps: [PathBuf; 2],
}

/// The files of each kind of run.
pub struct Traffic {
    pub lpm: Files,
    pub em: Files,
    pub lpm_scale: Files,
    pub em_scale: Files,
}

impl Traffic {
    fn files(&self, config: Config) -> &Files {
        match (config.is_scale(), config.is_em()) {
            (false, false) => &self.lpm,
            (false, true) => &self.em,
            (true, false) => &self.lpm_scale,
            (true, true) => &self.em_scale,
        }
    }
}

/// What the runs on large tables need: every pool as large as the C
/// sample's enlarged one, and EAL memory for it.
pub struct Scale {
    pub mbufs: u32,
    pub memory_mb: u32,
}

/// The program to run for `config`, with EAL file prefix `prefix` (unique per run), and how to stop it.
pub fn command(config: Config, tools: &Tools, traffic: &Traffic, scale: &Scale, prefix: &str) -> (Command, Stop) {
    // testpmd forwards on every lcore but its main one, so it gets CPU 0 as well.
    let lcores = match config {
        Config::Io => format!("0,{FWD_LCORE}"),
        _ => FWD_LCORE.to_string(),
    };
    let files = traffic.files(config);
    let memory = if config.is_scale() { scale.memory_mb } else { MEMORY_MB };
    let mut cmd = Command::new(program(config, tools));
    cmd.args([
        "-l",
        &lcores,
        "--no-huge",
        "-m",
        &memory.to_string(),
        "--no-pci",
        "--file-prefix",
        prefix,
    ]);
    for (port, pcap) in files.pcaps.iter().enumerate() {
        // No tx_pcap: the PMD drops what is sent, so only forwarding is measured.
        cmd.arg(format!(
            "--vdev=net_pcap{port},rx_pcap={},infinite_rx=1",
            pcap.display()
        ));
    }
    cmd.arg("--");
    if config == Config::Io {
        cmd.args(["--forward-mode=io", "--nb-cores=1", "--auto-start"]);
        return (cmd, Stop::CloseStdin);
    }
    let mode = if config.is_em() { "em" } else { "lpm" };
    let config_arg = format!("(0,0,{FWD_LCORE}),(1,0,{FWD_LCORE})");
    cmd.args([
        "-p",
        "0x3",
        "--config",
        &config_arg,
        "--parse-ptype",
        &format!("--lookup={mode}"),
    ]);
    cmd.arg(rule_arg("--rule_ipv4", &files.rules_dir, mode, "v4"));
    cmd.arg(rule_arg("--rule_ipv6", &files.rules_dir, mode, "v6"));
    if config.is_rs() && config.is_sequential() {
        cmd.arg("--sequential-lookup");
    }
    if config.is_rs() && config.is_scale() {
        cmd.args(["--num-mbufs", &scale.mbufs.to_string()]);
    }
    (cmd, Stop::Sigint)
}

fn rule_arg(option: &str, dir: &Path, mode: &str, family: &str) -> String {
    format!("{option}={}", dir.join(format!("{mode}_{family}.cfg")).display())
}

/// The program each configuration needs, to check before spending minutes on runs.
pub fn program(config: Config, tools: &Tools) -> &Path {
    match config {
        Config::CLpm | Config::CEm => &tools.c_bin,
        Config::CEmScale => &tools.c_scale_bin,
        Config::CEmSeqScale => &tools.c_scale_seq_bin,
        Config::Io => &tools.testpmd,
        _ => &tools.rs_bin,
    }
}
