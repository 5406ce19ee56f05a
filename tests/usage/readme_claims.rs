//! Claims of the README's "Smaller differences" that no other test makes,
//! each checked on the real binary, docs/OPTIONS.md's table held to the
//! options the binary's `--help` prints, and every link of the docs held
//! to a file and heading that exist. Covered elsewhere: a signal during
//! set-up (tests/usage/shutdown_paths.rs), a closed stdout (the same file).

use std::collections::BTreeSet;
use std::process::Stdio;
use std::time::Duration;

use testkit::{l3fwd_rs, run_cli, Run, Scratch, TWO_PORTS};

/// A run on two pcap ports, one frame in on port 0, with `args` after
/// [`TWO_PORTS`]; its stderr, once it exited 0.
fn stderr_of_run(args: &[&str]) -> String {
    let frame = testkit::frames::udp4([198, 18, 0, 1], [198, 18, 1, 1], 64, 18);
    let out = Run::new(l3fwd_rs())
        .port(vec![frame])
        .port(Vec::new())
        .two_ports()
        .args(args)
        .run();
    out.assert_success();
    out.stderr
}

#[test]
fn a_lone_rule_file_is_ignored_with_a_warning() {
    let dir = Scratch::new("lone-rules");
    let v4 = dir.file("v4.rules", "R198.18.0.0/16 1\n");
    let v6 = dir.file("v6.rules", "R2001:db8::/32 1\n");
    for (given, file, missing) in [("--rule_ipv4", &v4, "--rule_ipv6"), ("--rule_ipv6", &v6, "--rule_ipv4")] {
        let stderr = stderr_of_run(&[given, file]);
        let warning = format!("{given} without {missing} is IGNORED");
        assert_eq!(stderr.matches(&warning).count(), 1, "{stderr}");
    }
}

#[test]
fn a_portmask_naming_missing_ports_warns_once() {
    // Two ports exist; -p 0x7 (after TWO_PORTS' -p 0x3) also names port 2.
    let stderr = stderr_of_run(&["-p", "0x7"]);
    let warning = "enables ports [2], which do not exist";
    assert_eq!(stderr.matches(warning).count(), 1, "{stderr}");
}

#[test]
fn a_stray_argument_is_ignored_with_a_warning() {
    let stderr = stderr_of_run(&["stray"]);
    assert!(stderr.contains("ignoring 'stray': not an option"), "{stderr}");
}

#[test]
fn mbcache_junk_is_refused_naming_the_option() {
    let app = [TWO_PORTS, &["--mbcache", "junk"]].concat();
    let out = run_cli(&l3fwd_rs(), &["-l", "0"], &app);
    let line = out.error_line();
    assert!(line.contains("--mbcache") && line.contains("junk"), "{line}");
}

#[test]
fn text_inside_a_config_tuple_is_refused() {
    let out = run_cli(&l3fwd_rs(), &["-l", "0"], &["-p", "0x1", "--config", "(0,0,1x)"]);
    let line = out.error_line();
    assert!(line.contains("--config") && line.contains("(0,0,1x)"), "{line}");
}

/// Every write to stdout fails (ENOSPC): one warning, and the run forwards
/// to its end.
#[test]
fn stdout_to_a_full_disk_warns_once_and_forwarding_goes_on() {
    let dir = Scratch::new("full-stdout");
    let json = dir.path("stats.json").display().to_string();
    let prefix = format!("l3fwd-readme-full-{}", std::process::id());
    let args = ["--stats-interval", "1", "--duration", "3", "--stats-json", &json];
    let out = Run::new(l3fwd_rs())
        .eal_args(&["--vdev=net_null0", "--vdev=net_null1"])
        .two_ports()
        .args(&args)
        .command(&prefix)
        .stdout(std::fs::File::create("/dev/full").unwrap())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn l3fwd-rs")
        .wait_with_output()
        .unwrap();
    testkit::assert_runtime_folder_gone(&prefix, "closed stdout");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{}\n{stderr}", out.status);
    assert_eq!(stderr.matches("cannot write to stdout").count(), 1, "{stderr}");
    let stats: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let forwarded = stats["forwarded"]["tx"].as_u64().unwrap();
    assert!(forwarded > 0, "{stats}");
    assert!(
        stats["seconds"].as_f64().unwrap() > Duration::from_secs(2).as_secs_f64(),
        "{stats}"
    );
}

/// The long options named in `text` (`--rule_ipv4=FILE` names `--rule_ipv4`).
fn long_options(text: &str) -> BTreeSet<String> {
    text.match_indices("--")
        .map(|(i, _)| {
            let name: String = text[i + 2..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
                .collect();
            format!("--{name}")
        })
        .filter(|o| o.len() > 2)
        .collect()
}

/// The long options of the options table of docs/OPTIONS.md: those in the
/// first cell of each row (a `\|` inside a cell is not a cell's end).
fn options_of_the_table(doc: &str) -> BTreeSet<String> {
    let rows = doc
        .lines()
        .skip_while(|l| !l.starts_with("| option | meaning |"))
        .skip(2)
        .take_while(|l| l.starts_with('|'));
    let mut options = BTreeSet::new();
    for row in rows {
        let cells = row[1..].replace("\\|", "\u{0}");
        let first = cells.split('|').next().unwrap_or_default();
        options.extend(long_options(first));
    }
    options
}

/// The long options of `--help`'s option list: in each line of the
/// "Options:" section, the names before the help text.
fn options_of_the_help(help: &str) -> BTreeSet<String> {
    let lines = help
        .lines()
        .skip_while(|l| l.trim() != "Options:")
        .skip(1)
        .take_while(|l| !l.trim().is_empty());
    let mut options = BTreeSet::new();
    for line in lines {
        let names = line.trim_start().split("  ").next().unwrap_or_default();
        options.extend(long_options(names));
    }
    options
}

#[test]
fn the_options_table_lists_every_long_option_of_the_help_and_no_other() {
    let out = std::process::Command::new(l3fwd_rs()).arg("--help").output().unwrap();
    assert!(out.status.success(), "{}", out.status);
    let help = String::from_utf8_lossy(&out.stdout);
    let printed = options_of_the_help(&help);
    assert!(
        printed.len() > 30 && printed.contains("--config"),
        "{printed:?} from\n{help}"
    );

    let path = testkit::workspace().join("docs/OPTIONS.md");
    let doc = std::fs::read_to_string(&path).unwrap();
    let listed = options_of_the_table(&doc);
    let missing: Vec<_> = printed.difference(&listed).collect();
    let unknown: Vec<_> = listed.difference(&printed).collect();
    assert!(
        missing.is_empty() && unknown.is_empty(),
        "{}: the table lacks {missing:?}; --help has no {unknown:?}",
        path.display()
    );
}

/// A heading's anchor as GitHub makes it: lower case, punctuation but `-`
/// and `_` dropped, spaces as `-`.
fn anchor_of(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The anchors of a markdown file's headings (a repeated one also with
/// GitHub's `-1`, `-2`, ... suffixes), code blocks skipped.
fn anchors_of(markdown: &str) -> BTreeSet<String> {
    let mut anchors = BTreeSet::new();
    let mut in_code = false;
    for line in markdown.lines() {
        if line.starts_with("```") {
            in_code = !in_code;
        }
        if in_code || !line.starts_with('#') {
            continue;
        }
        let anchor = anchor_of(line.trim_start_matches('#'));
        let repeated = (1..).map(|n| format!("{anchor}-{n}"));
        let free = std::iter::once(anchor.clone())
            .chain(repeated)
            .find(|a| !anchors.contains(a));
        anchors.extend(free);
    }
    anchors
}

/// The targets of the inline links `[text](target)` of a markdown file.
fn link_targets(markdown: &str) -> Vec<String> {
    markdown
        .match_indices("](")
        .filter_map(|(i, _)| Some(markdown[i + 2..].split_once(')')?.0.to_string()))
        .filter(|t| !t.contains(char::is_whitespace))
        .collect()
}

/// Every relative link of the README, CONTRIBUTING.md and docs/ leads to a
/// file or folder of the tree, and every `#anchor` into a markdown file to
/// one of its headings: a claim that links to its measurement still does
/// after files move and sections are renamed.
#[test]
fn every_link_of_the_docs_leads_to_a_file_and_heading() {
    let root = testkit::workspace();
    let mut docs = vec![root.join("README.md"), root.join("CONTRIBUTING.md")];
    let in_docs = std::fs::read_dir(root.join("docs")).unwrap().map(|e| e.unwrap().path());
    docs.extend(in_docs.filter(|p| p.extension().is_some_and(|e| e == "md")));
    let mut broken = Vec::new();
    let mut checked = 0;
    for doc in &docs {
        let text = std::fs::read_to_string(doc).unwrap();
        for target in link_targets(&text) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let (path, anchor) = target.split_once('#').unwrap_or((&target, ""));
            let file = if path.is_empty() {
                doc.clone()
            } else {
                doc.parent().unwrap().join(path)
            };
            checked += 1;
            if !file.exists() {
                broken.push(format!("{}: {target}: no such file", doc.display()));
            } else if !anchor.is_empty() && file.extension().is_some_and(|e| e == "md") {
                let headings = anchors_of(&std::fs::read_to_string(&file).unwrap());
                if !headings.contains(anchor) {
                    broken.push(format!("{}: {target}: no such heading", doc.display()));
                }
            }
        }
    }
    assert!(checked > 50, "only {checked} links found in {docs:?}");
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn anchors_are_made_as_github_makes_them() {
    assert_eq!(
        anchor_of(" 2026-12-05: the lab port, where the forwarding work shows"),
        "2026-12-05-the-lab-port-where-the-forwarding-work-shows"
    );
    assert_eq!(
        anchor_of("Rate sweeps (`make bench-sweep`)"),
        "rate-sweeps-make-bench-sweep"
    );
    let anchors = anchors_of("# A\n```\n# not a heading\n```\n## A\n");
    assert_eq!(anchors, BTreeSet::from(["a".to_string(), "a-1".to_string()]));
}
