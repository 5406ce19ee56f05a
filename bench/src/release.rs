//! The DPDK release a run's programs were built against: the machine's own
//! (the one l3fwd-bench itself was built on), or another one's, from a
//! Debian root of `scripts/dpdk-root.sh`, whose programs run in that root
//! through `dpdk-root.sh exec` (same tree, hugepages and telemetry sockets
//! as the machine's).

use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;

const ROOT_SCRIPT: &str = "scripts/dpdk-root.sh";

/// Where the programs of a release are.
#[derive(Clone)]
pub struct Tools {
    pub rs_bin: PathBuf,
    pub c_bin: PathBuf,
    /// The C sample with its mbuf pool raised to the scale runs' (`--scale-mbufs`)
    /// (scripts/build-c-l3fwd.sh's C_L3FWD_MIN_MBUFS), multi-lookup...
    pub c_scale_bin: PathBuf,
    /// ...and sequential lookup (C_L3FWD_SEQUENTIAL).
    pub c_scale_seq_bin: PathBuf,
    pub testpmd: PathBuf,
}

/// A release line, as `dpdk::RELEASE` writes it: 2411 for 24.11.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct Release(u32);

impl Release {
    /// The DPDK l3fwd-bench was built on: its programs run on the machine.
    pub fn machine() -> Release {
        Release(dpdk::RELEASE)
    }

    /// `24.11` (a point release, `24.11.8`, names its line).
    pub fn parse(s: &str) -> Result<Release, String> {
        let bad = || format!("'{s}' is no DPDK release: write YY.MM, e.g. 24.11");
        let mut parts = s.trim().split('.');
        let (Some(year), Some(month)) = (parts.next(), parts.next()) else {
            return Err(bad());
        };
        let number = |part: &str, max: u32| part.parse::<u32>().ok().filter(|&n| (1..=max).contains(&n));
        match (number(year, 99), number(month, 12)) {
            (Some(year), Some(month)) if parts.all(|p| p.parse::<u32>().is_ok()) => Ok(Release(year * 100 + month)),
            _ => Err(bad()),
        }
    }

    pub fn is_machine(self) -> bool {
        self == Release::machine()
    }

    /// The programs of this release: the machine's `tools`, or the same
    /// programs built in its root (`make build c-l3fwd DPDK=24.11` puts
    /// them under target/dpdk-24.11/) and the root's own testpmd.
    pub fn tools(self, machine: &Tools) -> Tools {
        if self.is_machine() {
            return machine.clone();
        }
        let built = |path: &Path| {
            let inside = path.strip_prefix("target").unwrap_or(path);
            Path::new("target").join(format!("dpdk-{self}")).join(inside)
        };
        Tools {
            rs_bin: built(&machine.rs_bin),
            c_bin: built(&machine.c_bin),
            c_scale_bin: built(&machine.c_scale_bin),
            c_scale_seq_bin: built(&machine.c_scale_seq_bin),
            testpmd: "/usr/bin/dpdk-testpmd".into(),
        }
    }

    /// Where `program` of [`Release::tools`] is seen from the machine: its
    /// root's files are under target/dpdk-root/VERSION.
    pub fn on_machine(self, program: &Path) -> PathBuf {
        match program.strip_prefix("/") {
            Ok(inside) if !self.is_machine() => self.root().join(inside),
            _ => program.to_owned(),
        }
    }

    fn root(self) -> PathBuf {
        Path::new("target/dpdk-root").join(self.to_string())
    }

    /// `cmd` as this release runs it: itself on the machine, else in its
    /// root, in the same process (`dpdk-root.sh exec` execs it: signals and
    /// /proc/PID are the program's).
    pub fn command(self, cmd: Command) -> Command {
        if self.is_machine() {
            return cmd;
        }
        let mut wrapped = Command::new(ROOT_SCRIPT);
        wrapped
            .arg("exec")
            .arg(self.to_string())
            .arg(cmd.get_program())
            .args(cmd.get_args());
        if let Some(dir) = cmd.get_current_dir() {
            wrapped.current_dir(dir);
        }
        wrapped
    }

    /// Whether this release's root exists (the programs' check says the rest).
    pub fn check(self) -> Result<(), String> {
        if self.is_machine() || self.root().join(".l3fwd-rs-root").is_file() {
            return Ok(());
        }
        Err(format!(
            "no DPDK {self} root: make it and its programs with `make build c-l3fwd DPDK={self}` \
             (or `make bench-versions`)"
        ))
    }
}

impl fmt::Display for Release {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{}.{:02}", self.0 / 100, self.0 % 100)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tools() -> Tools {
        Tools {
            rs_bin: "target/release/l3fwd-rs".into(),
            c_bin: "target/c-l3fwd/dpdk-l3fwd".into(),
            c_scale_bin: "target/c-l3fwd-scale/dpdk-l3fwd".into(),
            c_scale_seq_bin: "target/c-l3fwd-scale-seq/dpdk-l3fwd".into(),
            testpmd: "/usr/bin/dpdk-testpmd".into(),
        }
    }

    /// A release that is not the machine's.
    fn other() -> Release {
        [Release(2411), Release(2511)]
            .into_iter()
            .find(|r| !r.is_machine())
            .unwrap()
    }

    #[test]
    fn releases_read_and_write_as_dpdk_names_them() {
        assert_eq!(Release::parse("24.11"), Ok(Release(2411)));
        assert_eq!(Release::parse(" 25.11.4 "), Ok(Release(2511)));
        assert_eq!(Release(2407).to_string(), "24.07");
        for bad in ["24", "24.13", "x.11", "24.11.rc1", ""] {
            assert!(Release::parse(bad).unwrap_err().contains("YY.MM"), "{bad}");
        }
        assert!(Release::parse("22.11").unwrap() < Release::parse("24.11").unwrap());
        assert_eq!(Release::machine().to_string(), dpdk::BUILT_ON[..5]);
    }

    #[test]
    fn another_release_runs_its_own_builds_in_its_root() {
        let release = other();
        let tools = release.tools(&tools());
        let dir = format!("target/dpdk-{release}");
        assert_eq!(tools.rs_bin, Path::new(&dir).join("release/l3fwd-rs"));
        assert_eq!(tools.c_bin, Path::new(&dir).join("c-l3fwd/dpdk-l3fwd"));
        assert_eq!(
            release.on_machine(&tools.testpmd),
            Path::new(&format!("target/dpdk-root/{release}/usr/bin/dpdk-testpmd"))
        );
        assert_eq!(release.on_machine(&tools.rs_bin), tools.rs_bin);
        let mut cmd = Command::new(&tools.rs_bin);
        cmd.args(["-l", "1"]);
        let cmd = release.command(cmd);
        assert_eq!(cmd.get_program(), ROOT_SCRIPT);
        let args: Vec<_> = cmd.get_args().map(|a| a.to_string_lossy().into_owned()).collect();
        assert_eq!(
            args,
            [
                "exec",
                &release.to_string(),
                &format!("{dir}/release/l3fwd-rs"),
                "-l",
                "1"
            ]
        );
    }

    #[test]
    fn the_machines_release_runs_as_is() {
        let machine = Release::machine();
        assert_eq!(machine.tools(&tools()).rs_bin, tools().rs_bin);
        assert_eq!(machine.command(Command::new("x")).get_program(), "x");
        assert_eq!(
            machine.on_machine(Path::new("/usr/bin/dpdk-testpmd")),
            Path::new("/usr/bin/dpdk-testpmd")
        );
        assert!(machine.check().is_ok());
    }
}
