//! The command line of each configuration: same EAL setup, ports and traffic for all.

use crate::configs::{Config, Forwarder, Variant};
use crate::pool::Pool;
use crate::release::Tools;
use crate::traffic::Files;
use serde::{Deserialize, Serialize};
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

/// The ports the forwarders forward between (ports 0 and 1, whose TX
/// counts), fed the same pcap files either way.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default, clap::ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Ports {
    /// Two pcap ports replaying their files forever: what any user can
    /// reproduce, but the PMD copies each frame into a new mbuf, which
    /// costs more than the forwarding (testpmd io: about 80 cycles a packet).
    #[default]
    Pcap,
    /// The lab port: two net_ring ports, each receiving what is sent on it,
    /// primed once by two pcap ports (2 and 3) read to their end. The same
    /// mbufs go round, with no copy or allocation, so the floor is a ring's
    /// enqueue and dequeue and a rate shows the forwarding work. A ring
    /// holds 1023 frames: more are dropped on the first pass. TTLs wrap and
    /// checksums follow, as neither forwarder checks them (RFC 1812 as C
    /// does it). testpmd io primes its rings with `--tx-first`.
    Ring,
}

impl Ports {
    pub fn id(self) -> &'static str {
        match self {
            Ports::Pcap => "pcap",
            Ports::Ring => "ring",
        }
    }

    pub fn is_pcap(&self) -> bool {
        *self == Ports::Pcap
    }

    /// Whether pcap files of `frames` frames each suit these ports: a ring
    /// would drop most of a larger file, and the flows with it.
    pub fn check_frames(self, frames: usize) -> Result<(), String> {
        match self {
            Ports::Ring if frames > RING_FRAMES => Err(format!(
                "ring ports keep at most {RING_FRAMES} frames each going round, not {frames}: \
                 give fewer frames or flows, or pcap ports"
            )),
            _ => Ok(()),
        }
    }

    /// The files that feed these ports, for traffic `files`: pcap ports
    /// replay the files; a ring port's primer repeats its file's frames to
    /// at least `prime` ([`RING_PRIME`] unless told), so that every ring
    /// holds bursts enough for a forwarder at full load (with fewer, C's
    /// TX buffers wait for the drain timer) whatever the flows.
    pub fn feed(self, files: &Files, prime: usize) -> Result<Files, String> {
        let mut fed = files.clone();
        if self == Ports::Pcap {
            return Ok(fed);
        }
        for (pcap, primer) in files.pcaps.iter().zip(&mut fed.pcaps) {
            let frames = trafficgen::read_pcap(pcap).map_err(|e| format!("{}: {e}", pcap.display()))?;
            if frames.is_empty() || frames.len() >= prime {
                continue;
            }
            let copies = prime.div_ceil(frames.len());
            *primer = pcap.with_extension(format!("x{copies}.pcap"));
            let repeated: Vec<&Vec<u8>> = frames.iter().cycle().take(copies * frames.len()).collect();
            trafficgen::write_pcap(&*primer, &repeated).map_err(|e| format!("{}: {e}", primer.display()))?;
        }
        Ok(fed)
    }

    /// The `--vdev` arguments of a forwarder's ports on traffic `pcaps`.
    fn vdevs(self, pcaps: &[PathBuf; 2]) -> Vec<String> {
        match self {
            Ports::Pcap => pcap_vdevs(pcaps),
            Ports::Ring => {
                let primers = pcaps
                    .iter()
                    .enumerate()
                    .map(|(i, pcap)| testkit::pcap_vdev(2 + i, std::slice::from_ref(pcap), &[], false));
                RING_VDEVS.map(String::from).into_iter().chain(primers).collect()
            }
        }
    }
}

/// Frames a ring port keeps going round: its ring's 1023 and those in
/// flight; the ports of both pcap files share the two rings by route.
const RING_FRAMES: usize = 1024;

/// Frames at least in each primer of a ring port: half a ring each.
pub const RING_PRIME: usize = 512;

/// The two looping ports of [`Ports::Ring`].
const RING_VDEVS: [&str; 2] = ["--vdev=net_ring0", "--vdev=net_ring1"];

/// The ports of every run of this process: pcap unless [`use_ports`] set
/// others first.
static PORTS: OnceLock<Ports> = OnceLock::new();

/// Sets the ports of every run to come (once, before the first).
pub fn use_ports(ports: Ports) {
    let _ = PORTS.set(ports);
}

/// The command line of `config`, running `program` ([`program`]) on `files`
/// with `pool`, EAL file prefix `prefix` (unique per run), and how to stop it.
pub fn command(config: Config, program: &Path, files: &Files, pool: &Pool, prefix: &str) -> (Command, Stop) {
    let ports = *PORTS.get_or_init(Ports::default);
    command_on(ports, config, program, files, pool, prefix)
}

/// [`command`] on `ports`.
fn command_on(
    ports: Ports,
    config: Config,
    program: &Path,
    files: &Files,
    pool: &Pool,
    prefix: &str,
) -> (Command, Stop) {
    if config.forwarder == Forwarder::Io {
        let mbufs = pool.mbufs.map(|n| n as usize);
        let (vdevs, prime) = match ports {
            Ports::Pcap => (pcap_vdevs(&files.pcaps), None),
            Ports::Ring => (RING_VDEVS.map(String::from).to_vec(), Some("--tx-first")),
        };
        let mut cmd = testpmd_io(program, pool.memory_mb, prefix, &vdevs, mbufs);
        cmd.args(prime);
        return (cmd, Stop::CloseStdin);
    }
    let vdevs = ports.vdevs(&files.pcaps);
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
    /// The `--vdev` arguments of its ports, every one forwarded from
    /// ([`Ports`], or Linux interfaces for latency runs).
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
    let queues = (0..run.vdevs.len()).map(|port| format!("({port},0,{FWD_LCORE})"));
    app_args(&mut cmd, run, &["--config", &queues.collect::<Vec<_>>().join(",")]);
    cmd
}

/// The application's arguments of `run`, with `io` saying how packets
/// reach the lcores.
fn app_args(cmd: &mut Command, run: &L3fwdRun, io: &[&str]) {
    let portmask = (1u32 << run.vdevs.len()) - 1;
    cmd.args(["-p", &format!("{portmask:#x}")]).args(io);
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

/// EAL's memory arguments, and any others, for every run of this process:
/// `--no-huge` unless [`use_eal_args`] set others (hugepages) first.
static EAL_ARGS: OnceLock<Vec<String>> = OnceLock::new();

/// Sets the EAL arguments of every run to come (once, before the first):
/// the memory's, then `others`.
pub fn use_eal_args(memory: Vec<String>, others: Vec<String>) {
    let _ = EAL_ARGS.set([memory, others].concat());
}

/// EAL's argument for a maximum SIMD bitwidth of `bits`, if any.
pub fn simd_bitwidth_args(bits: Option<u16>) -> Vec<String> {
    bits.map(|bits| format!("--force-max-simd-bitwidth={bits}"))
        .into_iter()
        .collect()
}

/// `program` with the EAL arguments every run shares (lcores `lcores`, the
/// memory arguments and others [`use_eal_args`] set, `memory_mb` of
/// memory) and the ports `vdevs`, up to the `--` before the application's
/// own arguments.
fn eal(program: &Path, lcores: &str, memory_mb: u32, prefix: &str, vdevs: &[String]) -> Command {
    let mut cmd = Command::new(program);
    cmd.args(["-l", lcores]);
    cmd.args(EAL_ARGS.get_or_init(|| vec!["--no-huge".into()]));
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
        args_on(Ports::Pcap, config)
    }

    fn args_on(ports: Ports, config: Config) -> Vec<String> {
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
        let (cmd, _) = command_on(ports, config, program, traffic.files(config), &pool, "pfx");
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

    /// The lab port: the forwarders' ports 0 and 1 loop back, ports 2 and 3
    /// read the pcap files once into them; testpmd primes its two rings.
    #[test]
    fn ring_ports() {
        let c = args_on(Ports::Ring, config("c-lpm"));
        let from = |arg: &str| c.iter().position(|a| a == arg).unwrap();
        assert_eq!(
            c[from("--file-prefix") + 2..from("--")],
            [
                "--vdev=net_ring0",
                "--vdev=net_ring1",
                "--vdev=net_pcap2,rx_pcap=p0.pcap",
                "--vdev=net_pcap3,rx_pcap=p1.pcap"
            ]
        );
        assert_eq!(c[from("-p") + 1], "0xf");
        assert_eq!(c[from("--config") + 1], "(0,0,1),(1,0,1),(2,0,1),(3,0,1)");
        assert_eq!(args_on(Ports::Ring, config("rs-lpm"))[1..], c[1..]);
        let io = args_on(Ports::Ring, config("io"));
        assert!(io.ends_with(&["--tx-first".to_string()]), "{io:?}");
        assert!(!io.iter().any(|a| a.contains("pcap")), "{io:?}");
    }

    /// A ring's primer repeats a short file's frames, in order, to half a
    /// ring; a long file, and pcap ports, take the files as they are.
    #[test]
    fn ring_primers_repeat_short_files() {
        let scratch = testkit::Scratch::new("ring-primers");
        let frames = |n: usize| (0..n).map(|i| vec![i as u8; 60]).collect::<Vec<_>>();
        let pcaps = [scratch.dir().join("short.pcap"), scratch.dir().join("long.pcap")];
        trafficgen::write_pcap(&pcaps[0], &frames(3)).unwrap();
        trafficgen::write_pcap(&pcaps[1], &frames(600)).unwrap();
        let files = Files {
            rules: ["v4".into(), "v6".into()],
            pcaps: pcaps.clone(),
        };
        assert_eq!(Ports::Pcap.feed(&files, RING_PRIME).unwrap().pcaps, pcaps);
        let fed = Ports::Ring.feed(&files, RING_PRIME).unwrap();
        assert_eq!(fed.pcaps[1], pcaps[1]);
        let primer = trafficgen::read_pcap(&fed.pcaps[0]).unwrap();
        assert_eq!(primer.len(), 513);
        assert_eq!(primer[..6], [frames(3), frames(3)].concat()[..]);
        assert_eq!(fed.rules, files.rules);
        // --ring-frames: a smaller prime, and a long file as it is.
        let fed = Ports::Ring.feed(&files, 128).unwrap();
        assert_eq!(trafficgen::read_pcap(&fed.pcaps[0]).unwrap().len(), 129);
        assert_eq!(fed.pcaps[1], pcaps[1]);
    }
}
