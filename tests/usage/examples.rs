//! The example command lines of `configs/examples/`, run as a new user
//! runs them: every script that needs no NIC exits 0 and prints no warning
//! and nothing IGNORED (an example that only works by luck teaches wrong).

use std::path::PathBuf;
use std::process::Command;

use testkit::{l3fwd_rs, workspace, Scratch};

#[test]
fn every_example_that_needs_no_nic_runs_without_a_warning() {
    let dir = Scratch::new("examples");
    let generator = testkit::binary("trafficgen", "l3fwd-gen");
    let mut scripts: Vec<PathBuf> = std::fs::read_dir(workspace().join("configs/examples"))
        .expect("configs/examples")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "sh") && !p.ends_with("real-nic.sh"))
        .collect();
    scripts.sort();
    assert!(scripts.len() >= 6, "{scripts:?}");
    for script in &scripts {
        let name = script.file_stem().unwrap().to_string_lossy().into_owned();
        let out = Command::new("sh")
            .arg(script)
            .env("L3FWD", l3fwd_rs())
            .env("GEN", &generator)
            .env("OUT", dir.path(&name))
            .output()
            .expect("run sh");
        let text = format!(
            "{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success(), "{name}: {}\n{text}", out.status);
        for line in text.lines() {
            assert!(
                !line.contains("WARN") && !line.contains("IGNORED"),
                "{name}: {line}\n{text}"
            );
        }
        assert!(text.contains("forwarded: rx"), "{name}: no summary\n{text}");
    }
}
