//! The traffic tools on hostile arguments: one line, exit status 1, no panic.

use std::process::{Command, Output};

fn run(bin: &str, args: &[&str]) -> Output {
    Command::new(bin).args(args).output().expect("runs")
}

fn assert_user_error(bin: &str, args: &[&str], needle: &str) {
    let out = run(bin, args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
    assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{args:?}: {stderr}");
    assert!(stderr.contains(needle), "{args:?}: {stderr}");
}

#[test]
fn l3fwd_gen_refuses_what_it_cannot_build() {
    let gen = env!("CARGO_BIN_EXE_l3fwd-gen");
    let out = std::env::temp_dir().join(format!("gen-errors-{}.pcap", std::process::id()));
    let out = out.to_str().unwrap();
    assert_user_error(
        gen,
        &["--out", out, "--count", "18446744073709551615"],
        "at most 268435456 frames",
    );
    let huge = "4294967295";
    assert_user_error(
        gen,
        &["--out", out, "--v4", huge, "--v6", huge],
        "traffic weights add up to",
    );
    // Used to wrap to a total of 0 weight for IPv4.
    assert_user_error(gen, &["--out", out, "--v4", huge, "--v6", "1"], "more than 4294967295");
    assert_user_error(gen, &["--out", out, "--count", "-1"], "'-1' for '--count");
    assert_user_error(gen, &["--bogus"], "--bogus");
    assert!(!std::path::Path::new(out).exists());
    assert_eq!(run(gen, &["--help"]).status.code(), Some(0));
}

#[test]
fn l3fwd_tablegen_writes_no_empty_rule_file_and_exits_1_on_user_errors() {
    let tablegen = env!("CARGO_BIN_EXE_l3fwd-tablegen");
    let dir = std::env::temp_dir().join(format!("tablegen-errors-{}", std::process::id()));
    let dir_arg = dir.to_str().unwrap();
    let out = run(
        tablegen,
        &["lpm", "--v4", "4", "--v6", "0", "--frames", "4", "--dir", dir_arg],
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(dir.join("lpm_v4.cfg").exists());
    assert!(
        !dir.join("lpm_v6.cfg").exists(),
        "a rule file without rules, which l3fwd refuses"
    );
    std::fs::remove_dir_all(&dir).unwrap();
    assert_user_error(tablegen, &["lpm", "--v6", "0"], "--dir");
    assert_user_error(tablegen, &["em", "--tcp", "101", "--dir", dir_arg], "'101'");
}
