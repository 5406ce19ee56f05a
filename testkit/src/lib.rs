//! What the integration tests (`tests/`) and the bench's tests share to
//! run this workspace's programs: the seed of one test kit for both.

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
