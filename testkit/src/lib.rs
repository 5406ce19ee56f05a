//! The test kit: what the integration tests (`tests/`) and the bench share
//! to run this workspace's programs and check what they did.
//!
//! - [`Run`]: a forwarder on virtual ports, run to the end ([`Run::run`],
//!   [`run_cli`]) or started for the test to drive ([`Run::start`]);
//! - [`Process`]: the one way to run a DPDK program as a child process;
//! - [`Scratch`]: one directory per test for its files and logs;
//! - [`Telemetry`]: a client of DPDK's telemetry socket;
//! - [`assert_accounted`]: every packet received was sent or counted as
//!   dropped, and the counts agree;
//! - [`Pmd`]: the drivers of ports on Linux interfaces;
//! - [`frames`]: hand-built test frames and checks on forwarded ones.

mod accounting;
pub mod frames;
mod pmd;
mod process;
mod run;
mod scratch;
mod telemetry;

pub use accounting::{assert_accounted, dropped};
pub use pmd::Pmd;
pub use process::{log_files, one_at_a_time, Exit, Process, Stop, EXIT_TIMEOUT};
pub use run::{
    assert_runtime_folder_gone, c_l3fwd, c_l3fwd_options, ctl, l3fwd_ctl, l3fwd_rs, one_frame_pcap_vdev, pcap_vdev,
    run_cli, target_dir, traffic, unique_prefix, Outcome, Run, TWO_PORTS,
};
pub use scratch::Scratch;
pub use telemetry::Telemetry;

use std::path::{Path, PathBuf};
use std::process::Command;

/// The workspace's root folder.
pub fn workspace() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("testkit/ is one level down")
}

/// Binary `bin` of workspace package `package`, of the build profile the
/// calling test runs in (`target/PROFILE/`, beside its `deps/`). A test of
/// one package does not get another package's binaries built
/// (`cargo test --workspace` builds them all): missing, it is built here.
///
/// ```no_run
/// let gen = testkit::binary("trafficgen", "l3fwd-gen");
/// assert!(gen.ends_with("l3fwd-gen"));
/// ```
pub fn binary(package: &str, bin: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    let path = exe
        .parent()
        .and_then(|deps| deps.parent())
        .expect("target/PROFILE/deps")
        .join(bin);
    if !path.exists() {
        let status = Command::new(env!("CARGO"))
            .args(["build", "-p", package, "--bin", bin])
            .current_dir(workspace())
            .status()
            .expect("run cargo");
        assert!(status.success(), "cargo build -p {package} --bin {bin}: {status}");
    }
    path
}
