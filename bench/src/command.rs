//! The command line of each configuration: same EAL setup, ports and traffic for all.

use crate::configs::{Config, Forwarder, Variant};
use crate::pool::Pool;
use crate::release::Tools;
use crate::traffic::Files;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use testkit::Stop;

/// The lcore that forwards. On a 2-CPU machine, CPU 0 is left to control threads
/// (telemetry, testpmd's main lcore) so that they never steal forwarding time.
const FWD_LCORE: u32 = 1;

/// Eventdev runs: the worker on lcore 0 (CPU 0), the software event
/// device's scheduler and both eth adapters on service lcore 1 (CPU 1),
/// for C and l3fwd-rs alike.
const EVENT_LCORES: &str = "0-1";
const EVENT_EAL: [&str; 3] = ["-s", "0x2", "--vdev=event_sw0"];

/// The command line of `config`, running `program` ([`program`]) on `files`
/// with `pool`, EAL file prefix `prefix` (unique per run), and how to stop it.
pub fn command(config: Config, program: &Path, files: &Files, pool: &Pool, prefix: &str) -> (Command, Stop) {
    let vdevs = pcap_vdevs(&files.pcaps);
    if config.forwarder == Forwarder::Io {
        let mbufs = pool.mbufs.map(|n| n as usize);
        return (
            testpmd_io(program, pool.memory_mb, prefix, &vdevs, mbufs),
            Stop::CloseStdin,
        );
    }
    // C's variants are builds (crate::cbuild), l3fwd-rs's options.
    let mut rs_options = if config.is_rs() {
        rs_options(config.variant)
    } else {
        vec![]
    };
    if let (true, Some(mbufs)) = (config.is_rs(), pool.mbufs) {
        rs_options.extend(["--num-mbufs".to_string(), mbufs.to_string()]);
    }
    let run = L3fwdRun {
        program,
        mode: config.mode(),
        rules: files.rules.clone(),
        vdevs,
        memory_mb: pool.memory_mb,
        rs_options,
    };
    let cmd = if config.is_event() {
        l3fwd_event(&run, prefix)
    } else {
        l3fwd(&run, prefix)
    };
    (cmd, Stop::Sigint)
}

/// l3fwd-rs's options for `variant` (eventdev mode is a command line of
/// its own).
pub fn rs_options(variant: Variant) -> Vec<String> {
    match variant {
        Variant::Default | Variant::Event => vec![],
        Variant::CDrain => vec!["--c-drain".into()],
        Variant::Burst(n) => ["--rx-burst", "--tx-burst"].map(|o| format!("{o}={n}")).into(),
        Variant::Group(n) => vec![format!("--em-lookup-group={n}")],
        Variant::Sequential => vec!["--sequential-lookup".into()],
        Variant::IdleFlushGap(n) => vec!["--idle-flush-gap".into(), n.to_string()],
    }
}

/// One run of C l3fwd or l3fwd-rs: both take the same arguments.
pub struct L3fwdRun<'a> {
    pub program: &'a Path,
    /// The lookup mode: `lpm`, `em` or `fib`.
    pub mode: &'static str,
    /// The IPv4 and IPv6 rule files.
    pub rules: [PathBuf; 2],
    /// The `--vdev` arguments of ports 0 and 1 ([`pcap_vdevs`], or Linux
    /// interfaces for latency runs).
    pub vdevs: Vec<String>,
    /// EAL memory (-m), MB.
    pub memory_mb: u32,
    /// Further options: those only l3fwd-rs has (`--sequential-lookup`,
    /// `--num-mbufs N`, `--c-drain`) on its runs only; shared ones
    /// (`--eth-dest`) on both.
    pub rs_options: Vec<String>,
}

/// The command line of `run`, with EAL file prefix `prefix`; stopped with SIGINT.
pub fn l3fwd(run: &L3fwdRun, prefix: &str) -> Command {
    let mut cmd = eal(run.program, &FWD_LCORE.to_string(), run.memory_mb, prefix, &run.vdevs);
    let config_arg = format!("(0,0,{FWD_LCORE}),(1,0,{FWD_LCORE})");
    app_args(&mut cmd, run, &["--config", &config_arg]);
    cmd
}

/// The application's arguments of `run`, with `io` saying how packets
/// reach the lcores.
fn app_args(cmd: &mut Command, run: &L3fwdRun, io: &[&str]) {
    cmd.args(["-p", "0x3"]).args(io);
    cmd.args(["--parse-ptype", &format!("--lookup={}", run.mode)]);
    let [v4, v6] = &run.rules;
    cmd.arg(format!("--rule_ipv4={}", v4.display()));
    cmd.arg(format!("--rule_ipv6={}", v6.display()));
    cmd.args(&run.rs_options);
}

/// The command line of `run` in eventdev mode (atomic scheduling, one RX
/// queue per port, no `--config`: C refuses it there), with EAL file
/// prefix `prefix`; stopped with SIGINT.
fn l3fwd_event(run: &L3fwdRun, prefix: &str) -> Command {
    let eal_args = run.vdevs.iter().cloned().chain(EVENT_EAL.map(String::from));
    let mut cmd = eal(
        run.program,
        EVENT_LCORES,
        run.memory_mb,
        prefix,
        &eal_args.collect::<Vec<_>>(),
    );
    app_args(&mut cmd, run, &["--mode=eventdev", "--eventq-sched=atomic"]);
    cmd
}

/// testpmd forwarding each port's packets to the other untouched (io mode):
/// the ports' RX and TX without a lookup, the floor of a forwarder's cost.
/// `mbufs` sets its pool (its default holds ~180K). It forwards on every
/// lcore but its main one, so it gets CPU 0 as well; it stops when its
/// stdin closes ([`Stop::CloseStdin`]).
pub fn testpmd_io(program: &Path, memory_mb: u32, prefix: &str, vdevs: &[String], mbufs: Option<usize>) -> Command {
    let mut cmd = eal(program, &format!("0,{FWD_LCORE}"), memory_mb, prefix, vdevs);
    cmd.args(["--forward-mode=io", "--nb-cores=1", "--auto-start"]);
    if let Some(n) = mbufs {
        cmd.arg(format!("--total-num-mbufs={n}"));
    }
    cmd
}

/// EAL's memory arguments for every run of this process: `--no-huge`
/// unless [`use_memory`] set others (hugepages) first.
static MEMORY_ARGS: OnceLock<Vec<String>> = OnceLock::new();

/// Sets the memory arguments of every run to come (once, before the first).
pub fn use_memory(args: Vec<String>) {
    let _ = MEMORY_ARGS.set(args);
}

/// `program` with the EAL arguments every run shares (lcores `lcores`, the
/// memory arguments, `memory_mb` of memory) and the ports `vdevs`, up to
/// the `--` before the application's own arguments.
fn eal(program: &Path, lcores: &str, memory_mb: u32, prefix: &str, vdevs: &[String]) -> Command {
    let mut cmd = Command::new(program);
    cmd.args(["-l", lcores]);
    cmd.args(MEMORY_ARGS.get_or_init(|| vec!["--no-huge".into()]));
    cmd.args(["-m", &memory_mb.to_string(), "--no-pci", "--file-prefix", prefix]);
    cmd.args(vdevs);
    cmd.arg("--");
    cmd
}

/// Two pcap ports replaying `pcaps` forever. No tx_pcap: the PMD drops what
/// is sent, so only forwarding is measured.
pub fn pcap_vdevs(pcaps: &[PathBuf; 2]) -> Vec<String> {
    let vdev = |(port, pcap)| testkit::pcap_vdev(port, std::slice::from_ref(pcap), &[], true);
    pcaps.iter().enumerate().map(vdev).collect()
}

/// The program each configuration needs, to check before spending minutes on runs.
pub fn program(config: Config, tools: &Tools) -> &Path {
    match (config.forwarder, config.is_scale(), config.is_sequential()) {
        (Forwarder::C, false, _) => &tools.c_bin,
        (Forwarder::C, true, false) => &tools.c_scale_bin,
        (Forwarder::C, true, true) => &tools.c_scale_seq_bin,
        (Forwarder::Io, ..) => &tools.testpmd,
        (Forwarder::Rs, ..) => &tools.rs_bin,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::configs::tests::config;
    use crate::traffic::Traffic;

    fn args(config: Config) -> Vec<String> {
        let tools = Tools {
            rs_bin: "rs".into(),
            c_bin: "c".into(),
            c_scale_bin: "c-scale".into(),
            c_scale_seq_bin: "c-scale-seq".into(),
            testpmd: "testpmd".into(),
        };
        let files = |dir: &str, mode: &str| Files {
            rules: ["v4", "v6"].map(|f| format!("{dir}/{mode}_{f}.cfg").into()),
            pcaps: ["p0.pcap".into(), "p1.pcap".into()],
        };
        let traffic = Traffic {
            lpm: files("d", "lpm"),
            acl: files("a", "acl"),
            em: files("d", "em"),
            lpm_scale: files("s", "lpm"),
            em_scale: files("s", "em"),
        };
        let pool = if config.is_scale() {
            Pool {
                mbufs: Some(1 << 20),
                memory_mb: 8192,
            }
        } else {
            Pool::DEFAULT
        };
        let program = program(config, &tools);
        let (cmd, _) = command(config, program, traffic.files(config), &pool, "pfx");
        let program = cmd.get_program().to_string_lossy().into_owned();
        std::iter::once(program)
            .chain(cmd.get_args().map(|a| a.to_string_lossy().into_owned()))
            .collect()
    }

    #[test]
    fn command_lines() {
        let eal = |program: &str, lcores: &str, memory: &str| {
            let vdevs = [
                "--vdev=net_pcap0,rx_pcap=p0.pcap,infinite_rx=1",
                "--vdev=net_pcap1,rx_pcap=p1.pcap,infinite_rx=1",
            ];
            [
                program,
                "-l",
                lcores,
                "--no-huge",
                "-m",
                memory,
                "--no-pci",
                "--file-prefix",
                "pfx",
            ]
            .into_iter()
            .chain(vdevs)
            .chain(["--"])
            .map(String::from)
            .collect::<Vec<_>>()
        };
        let l3fwd = |mode: &str, dir: &str| {
            let lookup = format!("--lookup={mode}");
            let rules = [
                format!("--rule_ipv4={dir}/{mode}_v4.cfg"),
                format!("--rule_ipv6={dir}/{mode}_v6.cfg"),
            ];
            ["-p", "0x3", "--config", "(0,0,1),(1,0,1)", "--parse-ptype", &lookup]
                .map(String::from)
                .into_iter()
                .chain(rules)
                .collect::<Vec<_>>()
        };
        assert_eq!(
            args(config("c-lpm")),
            [eal("c", "1", "1024"), l3fwd("lpm", "d")].concat()
        );
        let c_drain = vec!["--c-drain".to_string()];
        assert_eq!(
            args(config("rs-lpm-c-drain")),
            [eal("rs", "1", "1024"), l3fwd("lpm", "d"), c_drain].concat()
        );
        assert_eq!(
            args(config("c-fib")),
            [eal("c", "1", "1024"), l3fwd("fib", "d")]
                .concat()
                .into_iter()
                .map(|a| a.replace("fib_v", "lpm_v"))
                .collect::<Vec<_>>()
        );
        assert_eq!(
            args(config("c-acl")),
            [eal("c", "1", "1024"), l3fwd("acl", "a")].concat()
        );
        assert_eq!(args(config("rs-acl"))[0], "rs");
        let event = [
            "-p",
            "0x3",
            "--mode=eventdev",
            "--eventq-sched=atomic",
            "--parse-ptype",
            "--lookup=lpm",
        ];
        let rules = ["--rule_ipv4=d/lpm_v4.cfg", "--rule_ipv6=d/lpm_v6.cfg"];
        let mut c_event = eal("c", "0-1", "1024");
        c_event.splice(c_event.len() - 1..c_event.len() - 1, EVENT_EAL.map(String::from));
        c_event.extend(event.into_iter().chain(rules).map(String::from));
        assert_eq!(args(config("c-lpm-event")), c_event);
        assert_eq!(args(config("rs-lpm-event"))[1..], c_event[1..]);
        let seq = vec!["--sequential-lookup".to_string()];
        assert_eq!(
            args(config("rs-em-seq")),
            [eal("rs", "1", "1024"), l3fwd("em", "d"), seq.clone()].concat()
        );
        assert_eq!(
            args(config("rs-em-group8")),
            [
                eal("rs", "1", "1024"),
                l3fwd("em", "d"),
                vec!["--em-lookup-group=8".into()]
            ]
            .concat()
        );
        let pool = ["--num-mbufs", "1048576"].map(String::from).to_vec();
        assert_eq!(
            args(config("rs-em-seq-1m")),
            [eal("rs", "1", "8192"), l3fwd("em", "s"), seq, pool].concat()
        );
        let io = ["--forward-mode=io", "--nb-cores=1", "--auto-start"]
            .map(String::from)
            .to_vec();
        assert_eq!(args(config("io")), [eal("testpmd", "0,1", "1024"), io].concat());
    }
}
