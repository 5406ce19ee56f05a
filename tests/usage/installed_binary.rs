//! A copied or installed binary forwards with its default rules from any
//! directory: they are built in, not looked up in the source tree.

use testkit::{l3fwd_rs, Run, Scratch};

#[test]
fn copied_binary_forwards_with_built_in_rules_from_an_unrelated_directory() {
    let dir = Scratch::new("installed");
    let bin = dir.path("l3fwd-rs");
    std::fs::copy(l3fwd_rs(), &bin).unwrap();
    for mode in ["-L", "-E"] {
        let prefix = format!("l3fwd-installed{mode}-{}", std::process::id());
        let json = dir.path(&format!("stats{mode}.json"));
        let out = Run::new(&bin)
            .memory_mb(2048)
            .eal_args(&["--vdev=net_null0", "--vdev=net_null1"])
            .two_ports()
            .args(&[mode, "--duration", "1"])
            .command(&prefix)
            .current_dir(dir.path(""))
            .arg("--stats-json")
            .arg(&json)
            .output()
            .unwrap();
        testkit::assert_runtime_folder_gone(&prefix, mode);
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
