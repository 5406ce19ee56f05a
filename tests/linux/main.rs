//! Support for tests that run l3fwd-rs on real Linux interfaces: network
//! namespaces joined to the forwarder by veth pairs or TAP devices
//! ([`sites`]), the forwarder as a child process ([`forwarder`]), kernel
//! traffic through it ([`traffic`]) and what the receiver saw
//! ([`capture`]), and dpdk-testpmd as a source or sink on memif and
//! vhost-user ([`testpmd`]).
//!
//! Everything a test makes (namespaces, interfaces, EAL runtime files,
//! child processes) has a name unique to the test and the process and is
//! removed by a Drop guard, also when the test fails.
mod capture;
mod forwarder;
mod sites;
mod testpmd;
mod traffic;

mod memif_vhost;
mod netns;
mod netns_routes;

use std::process::{Command, Output};
use std::sync::OnceLock;

/// The environment variable that lets a test which cannot run here pass as
/// skipped (`L3FWD_ALLOW_SKIP=1`); without it such a test fails, so that a
/// run without root cannot look green.
pub const ALLOW_SKIP: &str = "L3FWD_ALLOW_SKIP";

/// Test `name` cannot run, for `why`: a failure, or with [`ALLOW_SKIP`] set
/// a skip whose message names the test and the reason.
pub fn cannot_run(name: &str, why: &str) {
    if std::env::var_os(ALLOW_SKIP).is_some_and(|v| v == "1") {
        eprintln!("SKIPPED {name}: {why}");
    } else {
        panic!("{name} cannot run: {why} (set {ALLOW_SKIP}=1 to skip such tests)");
    }
}

/// Whether this process may create network namespaces; if not, the test
/// `name` fails or is skipped ([`cannot_run`]).
pub fn can_create_namespaces(name: &str) -> bool {
    static PROBE: OnceLock<Result<(), String>> = OnceLock::new();
    let probed = PROBE.get_or_init(|| {
        let probe = format!("l3fwd-probe-{}", std::process::id());
        match Command::new("ip").args(["netns", "add", &probe]).output() {
            Ok(out) if out.status.success() => {
                let _ = Command::new("ip").args(["netns", "del", &probe]).output();
                Ok(())
            }
            Ok(out) => Err(format!(
                "cannot create a network namespace (needs root): {}",
                String::from_utf8_lossy(&out.stderr).trim()
            )),
            Err(err) => Err(format!("cannot run `ip` (iproute2): {err}")),
        }
    });
    if let Err(why) = probed {
        cannot_run(name, why);
    }
    probed.is_ok()
}

/// Runs a command, panicking with its output unless it succeeds.
pub fn run(program: &str, args: &[&str]) -> Output {
    let out = Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|err| panic!("run {program}: {err}"));
    assert!(
        out.status.success(),
        "{program} {}: {}\n{}{}",
        args.join(" "),
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// A short tag unique to this test process and `test`: part of every name a
/// test makes, so that tests can run in parallel. Interface names are at
/// most 15 bytes: keep prefixes to 4.
pub fn unique_tag(test: u8) -> String {
    format!("{:04x}{test:02x}", std::process::id() & 0xffff)
}
