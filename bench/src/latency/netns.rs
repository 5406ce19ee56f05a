//! The two namespaces the latency runs send between, made and removed by
//! scripts/netns-demo.sh (`up`, `clean`) under the name prefix [`NAME`]:
//! veth pairs, documentation-range addresses inside the namespaces only,
//! static neighbour entries, `ethtool -K IF tx off`; for the kernel
//! baseline, a middle namespace with forwarding on. Nothing leaves the
//! machine: the namespaces have no other interface.
//!
//! [`Netns`] removes everything when dropped (also on an error path or a
//! panic), and Ctrl-C or SIGTERM only set a flag ([`crate::interrupt`]) so that
//! the run unwinds through those drops instead of dying with the set-up in
//! place.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Prefix of every namespace and interface (the script's NAME).
pub const NAME: &str = "l3lat";
/// Site i is DPDK port i; these are the script's addresses and MACs.
pub const SITE_ADDR: [&str; 2] = ["192.0.2.2", "198.51.100.2"];
pub const SITE_MAC: [&str; 2] = ["02:0a:00:00:00:00", "02:0a:00:00:00:01"];
/// The routes a DPDK forwarder needs between the two sites.
pub const RULES_V4: &str = "R192.0.2.0/24 0\nR198.51.100.0/24 1\n";
pub const RULES_V6: &str = "R2001:db8:0:1::/64 0\nR2001:db8:0:2::/64 1\n";

/// The namespace of site `i`.
pub fn site(i: usize) -> String {
    format!("{NAME}-{i}")
}

/// The veth end in the root namespace that DPDK port `i` drives.
pub fn root_iface(i: usize) -> String {
    format!("{NAME}-r{i}")
}

/// What joins the two sites.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Join {
    /// The root ends of the veth pairs, up, for a DPDK forwarder.
    Dpdk,
    /// A middle namespace forwarding; `rps_cpus` (a CPU mask) steers its
    /// receive processing to other CPUs than the sender's.
    Kernel { rps_cpus: Option<&'static str> },
}

/// The set-up in place; removed on drop.
pub struct Netns {
    script: PathBuf,
}

impl Netns {
    /// Veth pairs and site namespaces, and what joins them.
    pub fn up(script: &Path, join: Join) -> Result<Netns, String> {
        // Removed also if `up` fails half-way.
        let netns = Netns {
            script: script.to_path_buf(),
        };
        let mut cmd = netns.script();
        cmd.arg("up");
        match join {
            Join::Dpdk => cmd.env("PMD", "veth"),
            Join::Kernel { rps_cpus: None } => cmd.env("PMD", "kernel"),
            Join::Kernel { rps_cpus: Some(mask) } => cmd.env("PMD", "kernel").env("ROUTER_RPS", mask),
        };
        let out = cmd
            .output()
            .map_err(|e| format!("cannot run {}: {e}", script.display()))?;
        if !out.status.success() {
            return Err(format!(
                "{} up failed ({}): {}",
                script.display(),
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        Ok(netns)
    }

    fn script(&self) -> Command {
        let mut cmd = Command::new(&self.script);
        cmd.env("NAME", NAME);
        cmd
    }

    /// `program args` inside namespace `ns`.
    pub fn exec(ns: &str, program: Command) -> Command {
        let mut cmd = Command::new("ip");
        cmd.args(["netns", "exec", ns])
            .arg(program.get_program())
            .args(program.get_args());
        cmd
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        // Whatever still runs inside our namespaces (a sockperf a failed
        // step left) is ours: end it by pid before the namespaces go.
        for ns in [site(0), site(1)] {
            let Ok(out) = Command::new("ip").args(["netns", "pids", &ns]).output() else {
                continue;
            };
            for pid in String::from_utf8_lossy(&out.stdout).split_whitespace() {
                if let Some(pid) = pid.parse().ok().and_then(rustix::process::Pid::from_raw) {
                    let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
                }
            }
        }
        let _ = self.script().arg("clean").output();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_fit_interface_names_and_match_the_script() {
        assert_eq!(
            (site(1), root_iface(0)),
            ("l3lat-1".to_string(), "l3lat-r0".to_string())
        );
        let script = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../scripts/netns-demo.sh")).unwrap();
        for needle in [
            r#"NS=("$NAME-0" "$NAME-1")"#,
            r#"ROOT_IF=("$NAME-r0" "$NAME-r1")"#,
            "ADDR4=(192.0.2.2 198.51.100.2)",
            "SITE_MAC=(02:0a:00:00:00:00 02:0a:00:00:00:01)",
        ] {
            assert!(script.contains(needle), "scripts/netns-demo.sh no longer has {needle}");
        }
        assert!(format!("{NAME}-router").len() <= 15, "interface and namespace names");
    }

    #[test]
    fn commands_run_inside_a_namespace() {
        let mut inner = Command::new("taskset");
        inner.args(["-c", "0", "ping"]);
        let cmd = Netns::exec("l3lat-0", inner);
        let args: Vec<_> = cmd.get_args().map(|a| a.to_string_lossy().into_owned()).collect();
        assert_eq!(cmd.get_program(), "ip");
        assert_eq!(args, ["netns", "exec", "l3lat-0", "taskset", "-c", "0", "ping"]);
    }
}
