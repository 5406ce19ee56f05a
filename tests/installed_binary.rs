//! A copied or installed binary forwards with its default rules from any
//! directory: they are built in, not looked up in the source tree.

mod common;

use std::process::Command;

use common::{l3fwd_rs, TestDir};

#[test]
fn copied_binary_forwards_with_built_in_rules_from_an_unrelated_directory() {
    let dir = TestDir::new("installed");
    let bin = dir.path("l3fwd-rs");
    std::fs::copy(l3fwd_rs(), &bin).unwrap();
    for mode in ["-L", "-E"] {
        let prefix = format!("l3fwd-installed{mode}-{}", std::process::id());
        let json = dir.path(&format!("stats{mode}.json"));
        let out = Command::new(&bin)
            .current_dir(dir.path(""))
            .args([
                "-l",
                "0",
                "--no-huge",
                "-m",
                "2048",
                "--no-pci",
                "--file-prefix",
                &prefix,
            ])
            .args(["--vdev=net_null0", "--vdev=net_null1", "--"])
            .args(["-p", "0x3", "--config", "(0,0,0),(1,0,0)", mode, "--duration", "1"])
            .arg("--stats-json")
            .arg(&json)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{mode}: {}\n{stderr}", out.status);
        let defaults = if mode == "-L" {
            "built-in lpm_v4.cfg"
        } else {
            "built-in em_v4.cfg"
        };
        assert!(stderr.contains(defaults), "{mode}: {stderr}");
        let stats: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        assert!(stats["forwarded"]["tx"].as_u64().unwrap() > 0, "{mode}: {stats}");
    }
}
