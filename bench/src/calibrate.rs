//! `l3fwd-bench calibrate`: whether the rate verdicts of `--baseline` can
//! be trusted on this machine. Three runs of the same configurations, one
//! after the other as a user would make them: l3fwd-rs, the same l3fwd-rs
//! again, and a build of it 5% slower on purpose (the
//! `calibration-slowdown` feature, which no other build has). The second
//! against the first must say "no change" in at least 95% of the ratios;
//! the slowed one against the first must show a significant fall in every
//! ratio that follows l3fwd-rs's rate and whose run could detect 5%.

use crate::baseline::{self, Comparison, Verdict};
use crate::configs;
use crate::report::Report;
use crate::significance::ALPHA;
use serde::Serialize;
use std::path::PathBuf;
use std::process::ExitCode;

/// The share of same-binary ratios that must say "no change".
const SAME_SHARE: f64 = 0.95;
/// How much slower the slowed build is (src/dataplane/forward/slowdown.rs).
const SLOWDOWN: f64 = 0.05;

#[derive(clap::Args)]
pub struct CalibrateArgs {
    #[command(flatten)]
    bench: crate::rates::Args,
    /// l3fwd-rs built with `--features calibration-slowdown`
    #[arg(long, default_value = "target/calibration/release/l3fwd-rs")]
    slow_bin: PathBuf,
    /// Where to write the three reports and the verdicts
    #[arg(long, default_value = "target/bench/calibrate.json")]
    calibration_json: PathBuf,
}

/// What the calibration found.
#[derive(Serialize, Debug, PartialEq)]
pub struct Outcome {
    /// Same binary twice: ratios compared, and those judged the same.
    pub same_binary: (usize, usize),
    /// Slowed build: ratios that follow l3fwd-rs's rate and could detect
    /// the slowdown, and those of them that fell significantly.
    pub slowed_detectable: (usize, usize),
    /// Ratios that follow l3fwd-rs's rate but whose run could not detect
    /// the slowdown (their detectable change is larger).
    pub slowed_undetectable: Vec<String>,
    pub pass: bool,
}

#[derive(Serialize)]
struct Calibration<'a> {
    outcome: &'a Outcome,
    first: &'a Report,
    again: &'a Report,
    slowed: &'a Report,
}

pub fn calibrate(args: CalibrateArgs) -> Result<ExitCode, String> {
    crate::files::require(
        &args.slow_bin,
        "build it with `make bench-calibrate`, or cargo build --release -p l3fwd-rs \
         --features calibration-slowdown --target-dir target/calibration",
    )?;
    let selected = configs::select(&args.bench.only)?;
    let tolerance = args.bench.common.tolerance;
    let rs_bin = &args.bench.common.rs_bin;
    let steps = [
        (format!("calibration 1/3: l3fwd-rs ({})", rs_bin.display()), rs_bin),
        ("\ncalibration 2/3: the same l3fwd-rs again".to_string(), rs_bin),
        (
            format!("\ncalibration 3/3: l3fwd-rs 5% slower ({})", args.slow_bin.display()),
            &args.slow_bin,
        ),
    ];
    let mut reports = Vec::with_capacity(steps.len());
    for (step, bin) in steps {
        println!("{step}");
        let (report, failures) = crate::rates::measure(&args.bench, bin, &selected)?;
        // A failed run leaves its ratios out, and no verdict stands on what is left.
        if failures.any() {
            println!("\ncalibration stopped: a forwarder failed, so there is no verdict");
            return Ok(failures.finish(ExitCode::SUCCESS));
        }
        reports.push(report);
    }
    let [first, again, slowed]: [Report; 3] = reports.try_into().expect("three measurements");

    let same = baseline::compare(&first.runs, &again.runs, &selected, tolerance);
    let slow = baseline::compare(&first.runs, &slowed.runs, &selected, tolerance);
    println!("\nthe same binary twice (each line should say same):");
    baseline::print(&same, tolerance);
    println!("\n5% slower against the first (l3fwd-rs over C or testpmd should fall):");
    baseline::print(&slow, tolerance);
    let outcome = judge(&same, &slow);
    print(&outcome);
    crate::files::write_json(
        &args.calibration_json,
        &Calibration {
            outcome: &outcome,
            first: &first,
            again: &again,
            slowed: &slowed,
        },
    )?;
    println!("wrote {}", args.calibration_json.display());
    Ok(if outcome.pass {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(2)
    })
}

/// The outcome of the same-binary comparisons `same` and the slowed-build
/// comparisons `slow`.
pub fn judge(same: &[Comparison], slow: &[Comparison]) -> Outcome {
    let unchanged = same.iter().filter(|c| c.verdict == Verdict::Same).count();
    let following = slow.iter().filter(|c| c.tracks_rs);
    let (detectable, undetectable): (Vec<&Comparison>, Vec<&Comparison>) =
        following.partition(|c| c.change.is_some_and(|ch| ch.detectable < SLOWDOWN));
    let flagged = detectable
        .iter()
        .filter(|c| c.change.is_some_and(|ch| ch.change < 0.0 && ch.p_fall <= ALPHA))
        .count();
    let same_ok = !same.is_empty() && unchanged as f64 >= SAME_SHARE * same.len() as f64;
    Outcome {
        same_binary: (same.len(), unchanged),
        slowed_detectable: (detectable.len(), flagged),
        slowed_undetectable: undetectable.iter().map(|c| c.name.clone()).collect(),
        // With no ratio able to see 5%, the runs show nothing either way.
        pass: same_ok && !detectable.is_empty() && flagged == detectable.len(),
    }
}

fn print(o: &Outcome) {
    let (compared, unchanged) = o.same_binary;
    println!(
        "\nsame binary: {unchanged} of {compared} ratios say no change ({:.0}%; at least {:.0}% needed)",
        100.0 * unchanged as f64 / compared.max(1) as f64,
        SAME_SHARE * 100.0
    );
    let (detectable, flagged) = o.slowed_detectable;
    println!("5% slower: {flagged} of the {detectable} ratios that could detect 5% fell significantly (all needed)");
    if !o.slowed_undetectable.is_empty() {
        println!(
            "  could not detect 5% (spread too wide; more --rounds): {}",
            o.slowed_undetectable.join(", ")
        );
    }
    let verdict = match (o.pass, detectable) {
        (true, _) => "PASS",
        (false, 0) => "FAIL (inconclusive: no ratio could detect 5%; give more --rounds)",
        (false, _) => "FAIL",
    };
    println!("calibration: {verdict}");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::significance::Change;

    fn comparison(name: &str, tracks_rs: bool, change: f64, p_fall: f64, detectable: f64) -> Comparison {
        let ch = Change {
            old: 1.0,
            new: 1.0 + change,
            change,
            p_fall,
            p_rise: 1.0 - p_fall,
            spread: 0.01,
            detectable,
        };
        Comparison {
            name: name.into(),
            tracks_rs,
            change: Some(ch),
            verdict: baseline::judge(Some(ch), 0.05),
        }
    }

    #[test]
    fn passes_when_the_same_binary_is_same_and_every_detectable_fall_is_flagged() {
        let same: Vec<_> = (0..20)
            .map(|i| comparison(&format!("r{i}"), true, 0.01, 0.3, 0.03))
            .collect();
        let slow = [
            comparison("rs/c", true, -0.049, 0.01, 0.03),
            comparison("rs/io", true, -0.03, 0.2, 0.08),
            comparison("rs/rs", false, 0.0, 0.5, 0.03),
        ];
        let o = judge(&same, &slow);
        assert_eq!(o.same_binary, (20, 20));
        assert_eq!(o.slowed_detectable, (1, 1));
        assert_eq!(o.slowed_undetectable, ["rs/io"]);
        assert!(o.pass);
    }

    #[test]
    fn fails_on_a_false_alarm_over_5_percent_or_a_missed_fall() {
        let mut same: Vec<_> = (0..19)
            .map(|i| comparison(&format!("r{i}"), true, 0.0, 0.5, 0.03))
            .collect();
        let slow = [comparison("rs/c", true, -0.05, 0.01, 0.03)];
        same.push(comparison("alarm", true, -0.07, 0.01, 0.03));
        // 19 of 20 is exactly 95%: still a pass.
        assert!(judge(&same, &slow).pass);
        same.push(comparison("alarm2", true, -0.07, 0.01, 0.03));
        assert!(!judge(&same, &slow).pass);
        let missed = [comparison("rs/c", true, -0.02, 0.3, 0.03)];
        assert!(!judge(&same[..19], &missed).pass);
        let blind = [comparison("rs/c", true, -0.05, 0.2, 0.09)];
        assert!(!judge(&same[..19], &blind).pass, "nothing detectable shows nothing");
    }
}
