//! The command line of each configuration: same EAL setup, ports and traffic for all.

use crate::configs::Config;
use crate::run::Stop;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The lcore that forwards. On a 2-CPU machine, CPU 0 is left to control threads
/// (telemetry, testpmd's main lcore) so that they never steal forwarding time.
const FWD_LCORE: u32 = 1;

/// Where the programs and rule files are.
pub struct Tools {
    pub rs_bin: PathBuf,
    pub c_bin: PathBuf,
    pub testpmd: PathBuf,
    pub rules_dir: PathBuf,
}

/// The two pcap files (one per port) of each traffic kind.
pub struct Traffic {
    pub lpm: [PathBuf; 2],
    pub em: [PathBuf; 2],
}

/// The program to run for `config`, with EAL file prefix `prefix` (unique per run), and how to stop it.
pub fn command(config: Config, tools: &Tools, traffic: &Traffic, prefix: &str) -> (Command, Stop) {
    // testpmd forwards on every lcore but its main one, so it gets CPU 0 as well.
    let lcores = match config {
        Config::Io => format!("0,{FWD_LCORE}"),
        _ => FWD_LCORE.to_string(),
    };
    let pcaps = if config.is_em() { &traffic.em } else { &traffic.lpm };
    let mut cmd = Command::new(program(config, tools));
    cmd.args([
        "-l",
        &lcores,
        "--no-huge",
        "-m",
        "1024",
        "--no-pci",
        "--file-prefix",
        prefix,
    ]);
    for (port, pcap) in pcaps.iter().enumerate() {
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
    cmd.arg(rule_arg("--rule_ipv4", &tools.rules_dir, mode, "v4"));
    cmd.arg(rule_arg("--rule_ipv6", &tools.rules_dir, mode, "v6"));
    if config == Config::RsEmSeq {
        cmd.arg("--sequential-lookup");
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
        Config::RsLpm | Config::RsEm | Config::RsEmSeq => &tools.rs_bin,
        Config::Io => &tools.testpmd,
    }
}
