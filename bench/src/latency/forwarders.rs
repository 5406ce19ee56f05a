//! What sits between the two namespaces: l3fwd-rs (idle flush at every
//! short round, its default; spaced by 10 us with `--idle-flush-gap 10`,
//! or C's drain timing with `--c-drain`) or C l3fwd on af_xdp or af_packet ports,
//! polling on CPU 1 as in `make bench`; or the Linux kernel forwarding in a
//! middle namespace.

use super::netns::{self, Join, Netns};
use crate::command::{self, L3fwdRun};
use crate::configs::{Forwarder as Who, Variant};
use crate::mode::Mode;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};
use testkit::{Process, Stop};

/// EAL memory (-m, MB): two af_xdp ports and the stock pool.
const MEMORY_MB: u32 = 512;
/// From start to the first ping answered through the forwarder (EAL init,
/// af_xdp loads a BPF program per port).
const READY_TIMEOUT: Duration = Duration::from_secs(30);

/// Who joins the sites: one of make bench's forwarders (C l3fwd, or
/// l3fwd-rs with a variant of its flush policy), or the Linux kernel.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Forwarder {
    Dpdk(Who, Variant),
    Kernel,
    /// The kernel forwarding on CPU 1 (RPS), away from sockperf's CPU as the
    /// DPDK forwarders are: the same cross-CPU wake-ups, without DPDK.
    KernelRps,
}

impl Forwarder {
    /// l3fwd-rs, idle flush at every short round (its default).
    pub const RS: Forwarder = Forwarder::Dpdk(Who::Rs, Variant::Default);
    pub const C: Forwarder = Forwarder::Dpdk(Who::C, Variant::Default);
}

/// Every forwarder, in run order. l3fwd-rs flushing a short poll round only
/// 10 us after its last flush was the default on syscall-TX ports until
/// 2026-12-04.
pub const ALL: [Forwarder; 6] = [
    Forwarder::RS,
    Forwarder::Dpdk(Who::Rs, Variant::IdleFlushGap(10)),
    Forwarder::Dpdk(Who::Rs, Variant::CDrain),
    Forwarder::C,
    Forwarder::Kernel,
    Forwarder::KernelRps,
];

impl Forwarder {
    /// Stable name, used in `--forwarders` and the JSON file: make bench's
    /// forwarder and variant (`rs-c-drain`), or the kernel's.
    pub fn id(self) -> String {
        match self {
            Forwarder::Dpdk(who, variant) => format!("{}{}", who.id(), variant.id()),
            Forwarder::Kernel => "kernel".into(),
            Forwarder::KernelRps => "kernel-rps".into(),
        }
    }

    pub fn label(self) -> String {
        match self {
            Forwarder::Dpdk(who, variant) => format!("{}{}", who.label(), variant.label()),
            Forwarder::Kernel => "Linux kernel forwarding".into(),
            Forwarder::KernelRps => "Linux kernel, RPS to CPU 1".into(),
        }
    }

    /// What joins the sites.
    pub fn join(self) -> Join {
        match self {
            Forwarder::Dpdk(..) => Join::Dpdk,
            Forwarder::Kernel => Join::Kernel { rps_cpus: None },
            Forwarder::KernelRps => Join::Kernel { rps_cpus: Some("2") },
        }
    }

    pub fn parse(s: &str) -> Result<Forwarder, String> {
        ALL.into_iter().find(|f| f.id() == s).ok_or_else(|| {
            let ids: Vec<_> = ALL.iter().map(|f| f.id()).collect();
            format!("unknown forwarder '{s}': use {}", ids.join(", "))
        })
    }
}

/// The DPDK forwarders' ports on the veth ends: af_xdp (each TX flush a
/// `sendto()` kick) or af_packet (each TX flush a `sendto()`), the
/// tests' drivers.
pub use testkit::Pmd;

/// `--pmd`: `af_xdp` or `af_packet` (or with `-`, as clap wrote them).
pub fn parse_pmd(text: &str) -> Result<Pmd, String> {
    let id = text.replace('-', "_");
    [Pmd::AfXdp, Pmd::AfPacket]
        .into_iter()
        .find(|p| p.id() == id)
        .ok_or_else(|| format!("unknown PMD '{text}': af_xdp or af_packet"))
}

/// The `--vdev` of port `port` on `iface`, one queue pair; an af_xdp port
/// busy-polls `busy_budget` packets.
fn vdev(pmd: Pmd, port: u16, iface: &str, busy_budget: u32) -> String {
    match pmd {
        Pmd::AfXdp => format!("{},busy_budget={busy_budget}", pmd.vdev(port, iface, 1)),
        _ => pmd.vdev(port, iface, 1),
    }
}

/// Where the DPDK forwarders are and where their files go.
pub struct Programs {
    pub rs_bin: PathBuf,
    pub c_bin: PathBuf,
    /// Rule files and logs.
    pub dir: PathBuf,
    pub pmd: Pmd,
    /// The af_xdp ports' busy_budget devarg.
    pub busy_budget: u32,
}

/// The command line of a DPDK forwarder on the two veth ports; None for
/// the kernel.
pub fn command(forwarder: Forwarder, programs: &Programs, prefix: &str) -> Option<Command> {
    let Forwarder::Dpdk(who, variant) = forwarder else {
        return None;
    };
    let program = match who {
        Who::C => &programs.c_bin,
        _ => &programs.rs_bin,
    };
    let mut options: Vec<String> = (0..2)
        .map(|p| format!("--eth-dest={p},{}", netns::SITE_MAC[p]))
        .collect();
    options.extend(command::rs_options(variant));
    let run = L3fwdRun {
        program,
        // The routes below are LPM-style route files.
        mode: Mode::default_mode().id(),
        rules: ["v4", "v6"].map(|family| programs.dir.join(format!("routes-{family}.cfg"))),
        vdevs: (0..2u16)
            .map(|p| vdev(programs.pmd, p, &netns::root_iface(p.into()), programs.busy_budget))
            .collect(),
        memory_mb: MEMORY_MB,
        rs_options: options,
    };
    Some(command::l3fwd(&run, prefix))
}

/// A forwarder in place between the sites: the set-up, and the process
/// for DPDK ones. Dropping it stops the process, then removes the set-up.
pub struct Running {
    // Field order is drop order: the process before the interfaces it uses.
    proc: Option<Process>,
    _netns: Netns,
}

impl Running {
    /// Makes the set-up, starts `forwarder` (logs `log`, see
    /// [`testkit::log_files`]) and waits until a ping crosses it.
    pub fn start(forwarder: Forwarder, programs: &Programs, script: &Path, log: &Path) -> Result<Running, String> {
        let netns = Netns::up(script, forwarder.join())?;
        let prefix = format!("l3fwd-latency-{}", std::process::id());
        let mut running = Running {
            proc: None,
            _netns: netns,
        };
        if let Some(cmd) = command(forwarder, programs, &prefix) {
            for (family, rules) in [("v4", netns::RULES_V4), ("v6", netns::RULES_V6)] {
                let path = programs.dir.join(format!("routes-{family}.cfg"));
                std::fs::write(&path, rules).map_err(|e| format!("{}: {e}", path.display()))?;
            }
            let process = Process::spawn(cmd, &prefix, log, Stop::Sigint).map_err(|e| format!("cannot start {e}"))?;
            running.proc = Some(process);
        }
        running.wait_ready()?;
        Ok(running)
    }

    fn wait_ready(&mut self) -> Result<(), String> {
        let deadline = Instant::now() + READY_TIMEOUT;
        loop {
            if let Some(proc) = &mut self.proc {
                proc.check_alive()?;
            }
            if ping() {
                return Ok(());
            }
            if crate::interrupt::interrupted() {
                return Err("interrupted".into());
            }
            if Instant::now() > deadline {
                return Err(format!("no ping crossed it in {} s", READY_TIMEOUT.as_secs()));
            }
            sleep(Duration::from_millis(200));
        }
    }

    /// Fails if a DPDK forwarder has exited.
    pub fn check_alive(&mut self) -> Result<(), String> {
        self.proc.as_mut().map_or(Ok(()), Process::check_alive)
    }

    /// Stops the forwarder; reports how, so that a crash at exit is seen.
    pub fn stop(mut self) -> Result<(), String> {
        match self.proc.take() {
            Some(mut proc) => proc.stop_well().map(|_| ()),
            None => Ok(()),
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        // Asked before Process's drop would kill it, so that EAL cleans up.
        if let Some(mut proc) = self.proc.take() {
            let _ = proc.stop();
        }
    }
}

/// One ping from site 0 to site 1 answered within a second.
fn ping() -> bool {
    let mut ping = Command::new("ping");
    ping.args(["-c", "1", "-W", "1", "-q", netns::SITE_ADDR[1]]);
    Netns::exec(&netns::site(0), ping)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args_on(forwarder: Forwarder, pmd: Pmd) -> Option<String> {
        let programs = Programs {
            rs_bin: "rs".into(),
            c_bin: "c".into(),
            dir: "d".into(),
            pmd,
            busy_budget: 0,
        };
        let cmd = command(forwarder, &programs, "pfx")?;
        let args: Vec<_> = cmd.get_args().map(|a| a.to_string_lossy().into_owned()).collect();
        Some(format!("{} {}", cmd.get_program().to_string_lossy(), args.join(" ")))
    }

    fn args(forwarder: Forwarder) -> Option<String> {
        args_on(forwarder, Pmd::AfXdp)
    }

    #[test]
    fn the_same_command_line_for_c_and_rust_but_the_drain_option() {
        let common = "-l 1 --no-huge -m 512 --no-pci --file-prefix pfx \
             --vdev=net_af_xdp0,iface=l3lat-r0,queue_count=1,busy_budget=0 \
             --vdev=net_af_xdp1,iface=l3lat-r1,queue_count=1,busy_budget=0 -- \
             -p 0x3 --config (0,0,1),(1,0,1) --parse-ptype --lookup=lpm \
             --rule_ipv4=d/routes-v4.cfg --rule_ipv6=d/routes-v6.cfg \
             --eth-dest=0,02:0a:00:00:00:00 --eth-dest=1,02:0a:00:00:00:01";
        let rs = |id| args(Forwarder::parse(id).unwrap()).unwrap();
        assert_eq!(rs("c"), format!("c {common}"));
        assert_eq!(rs("rs"), format!("rs {common}"));
        assert_eq!(rs("rs-c-drain"), format!("rs {common} --c-drain"));
        assert_eq!(rs("rs-gap10"), format!("rs {common} --idle-flush-gap 10"));
        assert_eq!(args(Forwarder::Kernel), None);
        assert_eq!(args(Forwarder::KernelRps), None);
        assert_eq!(Forwarder::KernelRps.join(), Join::Kernel { rps_cpus: Some("2") });
        let packet = args_on(Forwarder::RS, Pmd::AfPacket).unwrap();
        assert!(
            packet.contains(
                "--vdev=net_af_packet0,iface=l3lat-r0,qpairs=1 --vdev=net_af_packet1,iface=l3lat-r1,qpairs=1 --"
            ),
            "{packet}"
        );
    }

    #[test]
    fn pmds_by_the_tests_names_and_clap_s_old_ones() {
        assert_eq!(parse_pmd("af_packet"), Ok(Pmd::AfPacket));
        assert_eq!(parse_pmd("af-xdp"), Ok(Pmd::AfXdp));
        assert!(parse_pmd("tap").unwrap_err().contains("af_xdp or af_packet"));
    }

    #[test]
    fn forwarders_by_id() {
        for f in ALL {
            assert_eq!(Forwarder::parse(&f.id()), Ok(f));
        }
        assert_eq!(Forwarder::C.label(), "C l3fwd");
        assert_eq!(ALL[1].label(), "l3fwd-rs idle-flush-gap 10");
        assert!(Forwarder::parse("vpp")
            .unwrap_err()
            .contains("rs, rs-gap10, rs-c-drain, c, kernel, kernel-rps"));
    }
}
