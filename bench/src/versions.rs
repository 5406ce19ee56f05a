//! Rates across DPDK releases (`l3fwd-bench --dpdk 22.11,24.11,25.11`,
//! `make bench-versions`): every configuration on each release, its C
//! l3fwd, l3fwd-rs and testpmd built there, in one run; then a table per
//! release, a verdict for each change from one release to the next, and
//! a plot. "Did 25.11 slow my forwarding?" gets a Mann-Whitney answer over
//! the rounds, not a guess from two numbers.

use crate::configs::Config;
use crate::plot::{draw_legend, draw_spreads, failed, load_font, FONT, PIXELS};
use crate::release::Release;
use crate::report::Report;
use crate::significance::{self, ALPHA};
use crate::stats;
use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::Path;

/// `selected` on each of `releases` (in release order, each once), or as
/// it is when none is named.
pub fn on_releases(selected: Vec<Config>, releases: &[Release]) -> Result<Vec<Config>, String> {
    if releases.is_empty() {
        return Ok(selected);
    }
    let mut releases = releases.to_vec();
    releases.sort();
    releases.dedup();
    let mut configs: Vec<Config> = releases
        .iter()
        .flat_map(|&r| selected.iter().map(move |c| c.on(Some(r))))
        .collect();
    configs.sort();
    Ok(configs)
}

/// One configuration (release left out) over the releases it ran on.
struct Series {
    base: Config,
    /// Per release: its per-round rates.
    rates: Vec<(Release, Vec<f64>)>,
}

fn series(report: &Report) -> Vec<Series> {
    let mut all: Vec<Series> = Vec::new();
    for summary in &report.configs {
        let Some(config) = Config::parse(&summary.config) else {
            continue;
        };
        let rates: Vec<f64> = report
            .runs
            .iter()
            .filter(|r| r.config == summary.config)
            .filter_map(|r| r.mpps)
            .collect();
        let base = config.on(None);
        let entry = (config.release(), rates);
        match all.iter_mut().find(|s| s.base == base) {
            Some(s) => s.rates.push(entry),
            None => all.push(Series {
                base,
                rates: vec![entry],
            }),
        }
    }
    for s in &mut all {
        s.rates.sort_by_key(|(release, _)| *release);
    }
    all.sort_by_key(|s| s.base);
    all
}

/// Prints the rates per release and the verdicts, and draws `png`.
pub fn report(report: &Report, png: &Path) -> Result<(), String> {
    let all = series(report);
    let mut releases: Vec<Release> = all.iter().flat_map(|s| s.rates.iter().map(|r| r.0)).collect();
    releases.sort();
    releases.dedup();
    let mhz = report.machine.cpu_mhz;
    println!("\nper DPDK release: median Mpps (cycles per packet of the forwarding lcore: {mhz:.0} MHz / rate)");
    print!("{:<26}", "configuration");
    for r in &releases {
        print!(" {:>16}", r.to_string());
    }
    println!();
    for s in &all {
        print!("{:<26}", s.base.label());
        for release in &releases {
            let median = s
                .rates
                .iter()
                .find(|(r, _)| r == release)
                .and_then(|(_, v)| stats::median(v));
            let cell = match median {
                Some(m) if one_lcore(s.base) && mhz > 0.0 => format!("{m:.2} ({:.0})", mhz / m),
                Some(m) => format!("{m:.2}"),
                None => "-".into(),
            };
            print!(" {cell:>16}");
        }
        println!();
    }
    println!("\nrelease to release (Mann-Whitney over the rounds' rates, one-sided, p <= {ALPHA}):");
    for s in &all {
        for pair in s.rates.windows(2) {
            let ((old_release, old), (new_release, new)) = (&pair[0], &pair[1]);
            println!(
                "  {:<26} {old_release} -> {new_release}: {}",
                s.base.label(),
                verdict(old, new)
            );
        }
    }
    draw(&all, &releases, png)?;
    println!("\nwrote {}", png.display());
    Ok(())
}

/// Configurations whose packets one lcore polls for and forwards (C and
/// l3fwd-rs in poll mode, testpmd io): its cycles over the rate are its
/// cost per packet. Eventdev runs use two.
fn one_lcore(config: Config) -> bool {
    !config.is_event()
}

/// What the change of rates from `old` to `new` says.
fn verdict(old: &[f64], new: &[f64]) -> String {
    let Some(change) = significance::compare(old, new) else {
        return "no rates to compare (a release's runs failed)".into();
    };
    let percent = change.change * 100.0;
    if change.p_fall <= ALPHA {
        format!("{percent:+.1}%, slower (p = {:.3})", change.p_fall)
    } else if change.p_rise <= ALPHA {
        format!("{percent:+.1}%, faster (p = {:.3})", change.p_rise)
    } else if change.detectable.is_finite() {
        format!(
            "{percent:+.1}%, no significant change (these rounds would show a fall of {:.1}% or more)",
            change.detectable * 100.0
        )
    } else {
        format!("{percent:+.1}%, no verdict: too few rounds (at least 3 per release)")
    }
}

/// Median Mpps per release (min..max as bars), a line per configuration.
fn draw(all: &[Series], releases: &[Release], png: &Path) -> Result<(), String> {
    load_font()?;
    let root = BitMapBackend::new(png, PIXELS).into_drawing_area();
    draw_rates(root, all, releases)
}

fn draw_rates<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    all: &[Series],
    releases: &[Release],
) -> Result<(), String> {
    root.fill(&WHITE).map_err(failed)?;
    let top = all
        .iter()
        .flat_map(|s| s.rates.iter().flat_map(|(_, v)| v.iter().copied()))
        .fold(0.1, f64::max);
    let last = releases.len() as f64 - 0.5;
    let mut chart = ChartBuilder::on(&root)
        .caption("Forwarding rate per DPDK release", (FONT, 24))
        .margin(16)
        .x_label_area_size(50)
        .y_label_area_size(64)
        .build_cartesian_2d(-0.5..last, 0.0..top * 1.15)
        .map_err(failed)?;
    let name = |x: &f64| {
        let i = x.round();
        match releases.get(i as usize) {
            Some(r) if (x - i).abs() < 1e-9 => r.to_string(),
            _ => String::new(),
        }
    };
    chart
        .configure_mesh()
        .x_labels(releases.len() * 2 + 1)
        .x_label_formatter(&name)
        .x_desc("DPDK release")
        .y_desc("Mpps, both ports (median; bars: min..max over rounds)")
        .label_style((FONT, 16))
        .axis_desc_style((FONT, 17))
        .draw()
        .map_err(failed)?;
    for (i, s) in all.iter().enumerate() {
        let colour = Palette99::pick(i).to_rgba();
        let points: Vec<(f64, f64, f64, f64)> = s
            .rates
            .iter()
            .filter_map(|(release, rates)| {
                let x = releases.iter().position(|r| r == release)? as f64;
                let spread = stats::spread(rates)?;
                Some((x, spread.median, spread.min, spread.max))
            })
            .collect();
        chart
            .draw_series(LineSeries::new(
                points.iter().map(|&(x, median, ..)| (x, median)),
                colour.stroke_width(2),
            ))
            .map_err(failed)?
            .label(s.base.label())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 24, y)], colour.stroke_width(2)));
        draw_spreads(&mut chart, &points, colour)?;
    }
    draw_legend(&mut chart, SeriesLabelPosition::LowerRight)?;
    root.present().map_err(failed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::configs::tests::config;

    fn release(s: &str) -> Release {
        Release::parse(s).unwrap()
    }

    #[test]
    fn every_configuration_runs_on_every_release_in_turn() {
        let selected = vec![config("c-lpm"), config("rs-lpm"), config("io")];
        let ids: Vec<String> = on_releases(
            selected.clone(),
            &[release("25.11"), release("24.11"), release("25.11")],
        )
        .unwrap()
        .into_iter()
        .map(Config::id)
        .collect();
        assert_eq!(
            ids,
            [
                "c-lpm@24.11",
                "rs-lpm@24.11",
                "io@24.11",
                "c-lpm@25.11",
                "rs-lpm@25.11",
                "io@25.11"
            ]
        );
        assert_eq!(on_releases(selected.clone(), &[]).unwrap(), selected);
        let rs = config("rs-lpm@24.11");
        assert_eq!(rs.reference(), Some(config("c-lpm@24.11")));
        assert_eq!(rs.floor(), config("io@24.11"));
        assert_eq!(rs.label(), "l3fwd-rs LPM 24.11");
    }

    #[test]
    fn the_table_and_the_plot_come_from_a_report_of_two_releases() {
        use crate::report::{Run, Settings};
        use crate::run::Sample;
        let selected = on_releases(
            vec![config("c-lpm"), config("rs-lpm")],
            &[release("24.11"), release("25.11")],
        )
        .unwrap();
        let runs: Vec<Run> = (1..=3)
            .flat_map(|round| {
                selected.iter().map(move |&config| Run {
                    config,
                    cell: None,
                    round,
                    result: Ok(Sample {
                        mpps: 10.0 + f64::from(round) + if config.is_rs() { 5.0 } else { 0.0 },
                        first_tx_secs: 0.3,
                        rss_mb: 30.0,
                        cycles_per_packet: None,
                    }),
                })
            })
            .collect();
        let settings = Settings {
            rounds: 3,
            warmup_secs: 2.0,
            window_secs: 3.0,
            frames: 1024,
            selected: selected.iter().map(|c| c.id()).collect(),
            memory: "no-huge (test)".into(),
            ..Settings::default()
        };
        let machine = crate::machine::Machine::test();
        let r = Report::new(settings, machine, "2026-12-04T00:00:00Z".into(), &selected, &[], &runs);
        assert_eq!(r.ratios.get("rs-lpm@24.11/c-lpm@24.11"), Some(&1.4166666666666667));
        let scratch = testkit::Scratch::new("versions");
        let png = scratch.path("versions.png");
        report(&r, &png).unwrap();
        assert!(std::fs::metadata(&png).unwrap().len() > 1000);
    }

    #[test]
    fn verdicts_say_which_way_and_how_sure() {
        let old = [10.0, 10.1, 9.9, 10.05, 9.95];
        let slower = verdict(&old, &old.map(|v| v * 0.9));
        assert!(slower.starts_with("-10.0%, slower (p = 0.004)"), "{slower}");
        assert!(verdict(&old, &old.map(|v| v * 1.1)).contains("faster"));
        let same = verdict(&old, &old);
        assert!(same.contains("no significant change"), "{same}");
        assert!(verdict(&[1.0, 1.0], &[0.5, 0.5]).contains("too few rounds"));
        assert!(verdict(&old, &[]).contains("failed"));
    }
}
