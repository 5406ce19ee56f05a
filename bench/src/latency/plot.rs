//! Latency percentiles against offered load, PNG and SVG: a panel per
//! percentile (p50, p90, p99, p99.9, max), a line per forwarder over the
//! under-load rates, and its ping-pong run as a cross at the rate it
//! reached. Both axes logarithmic: the forwarders differ by orders of
//! magnitude. Fonts and helpers are the sweep plots' (`sweep::plot`).

use super::results::{LatencyReport, Point};
use super::sockperf::Latency;
use crate::plot::{failed, load_font, FONT};
use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::{Path, PathBuf};

const PIXELS: (u32, u32) = (1500, 900);

/// What a panel shows of a run.
type Percentile = fn(&Latency) -> f64;

/// The panels: title and the value each takes from a run.
const PANELS: [(&str, Percentile); 5] = [
    ("p50", |l| l.p50_us),
    ("p90", |l| l.p90_us),
    ("p99", |l| l.p99_us),
    ("p99.9", |l| l.p99_9_us),
    ("max", |l| l.max_us),
];

/// A forwarder's points: under-load (offered rate, latency) in rate order,
/// and ping-pong (rate reached, latency).
struct Series<'a> {
    label: &'a str,
    under_load: Vec<(f64, &'a Latency)>,
    ping_pong: Option<(f64, &'a Latency)>,
}

fn series(report: &LatencyReport) -> Vec<Series<'_>> {
    let mut out: Vec<Series> = Vec::new();
    for p in &report.points {
        let Some(l) = &p.latency else { continue };
        let i = match out.iter().position(|s| s.label == p.label) {
            Some(i) => i,
            None => {
                out.push(Series {
                    label: &p.label,
                    under_load: Vec::new(),
                    ping_pong: None,
                });
                out.len() - 1
            }
        };
        match offered(p) {
            Some(mps) => out[i].under_load.push((mps, l)),
            None => out[i].ping_pong = Some((l.sent_per_sec().max(1.0), l)),
        }
    }
    for s in &mut out {
        s.under_load.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    out
}

fn offered(p: &Point) -> Option<f64> {
    p.offered_mps.map(|m| m as f64)
}

/// Writes latency.png and latency.svg into `dir`; returns them (none if
/// no run measured anything).
pub fn draw(report: &LatencyReport, dir: &Path) -> Result<Vec<PathBuf>, String> {
    load_font()?;
    let all = series(report);
    if all.is_empty() {
        return Ok(Vec::new());
    }
    let (png, svg) = (dir.join("latency.png"), dir.join("latency.svg"));
    draw_on(BitMapBackend::new(&png, PIXELS).into_drawing_area(), &all)?;
    draw_on(SVGBackend::new(&svg, PIXELS).into_drawing_area(), &all)?;
    Ok(vec![png, svg])
}

fn draw_on<DB: DrawingBackend>(root: DrawingArea<DB, Shift>, all: &[Series]) -> Result<(), String> {
    root.fill(&WHITE).map_err(failed)?;
    let root = root
        .titled(
            "One-way latency (sockperf RTT/2) by offered load; x: ping-pong at the rate it reached",
            (FONT, 26),
        )
        .map_err(failed)?;
    let rates = all
        .iter()
        .flat_map(|s| s.under_load.iter().map(|p| p.0).chain(s.ping_pong.map(|p| p.0)));
    let (x_min, x_max) = rates.fold((f64::INFINITY, 0.0_f64), |(lo, hi), x| (lo.min(x), hi.max(x)));
    let panels = root.split_evenly((2, 3));
    for ((title, value), area) in PANELS.iter().zip(&panels) {
        let ys = all
            .iter()
            .flat_map(|s| s.under_load.iter().chain(&s.ping_pong).map(|(_, l)| value(l)));
        let (y_min, y_max) = ys.fold((f64::INFINITY, 0.0_f64), |(lo, hi), y| (lo.min(y), hi.max(y)));
        let mut chart = ChartBuilder::on(area)
            .caption(*title, (FONT, 22))
            .margin(12)
            .x_label_area_size(44)
            .y_label_area_size(60)
            .build_cartesian_2d(
                (x_min / 1.5..x_max * 1.5).log_scale(),
                (y_min.max(0.1) / 1.3..y_max * 1.3).log_scale(),
            )
            .map_err(failed)?;
        chart
            .configure_mesh()
            .x_desc("messages/s offered")
            .y_desc("us")
            .y_labels(6)
            .x_label_formatter(&|x| format!("{x:.0}"))
            .y_label_formatter(&|y| format!("{y:.0}"))
            .label_style((FONT, 14))
            .axis_desc_style((FONT, 15))
            .draw()
            .map_err(failed)?;
        for (i, s) in all.iter().enumerate() {
            let colour = Palette99::pick(i).to_rgba();
            let line: Vec<(f64, f64)> = s.under_load.iter().map(|&(x, l)| (x, value(l))).collect();
            chart
                .draw_series(LineSeries::new(line.clone(), colour.stroke_width(2)))
                .map_err(failed)?;
            chart
                .draw_series(line.iter().map(|&p| Circle::new(p, 4, colour.filled())))
                .map_err(failed)?;
            if let Some((x, l)) = s.ping_pong {
                chart
                    .draw_series([Cross::new((x, value(l)), 7, colour.stroke_width(3))])
                    .map_err(failed)?;
            }
        }
    }
    if let Some(area) = panels.get(PANELS.len()) {
        draw_legend(area, all)?;
    }
    root.present().map_err(failed)
}

/// The forwarders' colours, in the panel left free.
fn draw_legend<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, all: &[Series]) -> Result<(), String> {
    let style = (FONT, 18).into_font().color(&BLACK);
    for (i, s) in all.iter().enumerate() {
        let colour = Palette99::pick(i).to_rgba();
        let y = 60 + 34 * i as i32;
        area.draw(&PathElement::new(vec![(40, y), (90, y)], colour.stroke_width(3)))
            .map_err(failed)?;
        area.draw(&Circle::new((65, y), 4, colour.filled())).map_err(failed)?;
        area.draw(&Text::new(s.label, (105, y - 9), style.clone()))
            .map_err(failed)?;
    }
    let y = 60 + 34 * all.len() as i32;
    let notes = [
        "lines: sockperf under-load at each offered rate",
        "x: ping-pong, at the rate it reached",
        "one-way latency = RTT/2, microseconds",
    ];
    for (i, note) in notes.iter().enumerate() {
        let style = (FONT, 15).into_font().color(&BLACK);
        area.draw(&Text::new(*note, (40, y + 10 + 24 * i as i32), style))
            .map_err(failed)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::results::tests::sample;
    use super::*;
    use crate::plot::tests::svg_texts;

    #[test]
    fn series_per_forwarder_in_rate_order() {
        let report = sample();
        let all = series(&report);
        assert_eq!(all.len(), 2);
        assert_eq!(all[0].label, "l3fwd-rs");
        let rates: Vec<f64> = all[0].under_load.iter().map(|p| p.0).collect();
        assert_eq!(rates, [10_000.0, 100_000.0]);
        assert_eq!(all[0].ping_pong.map(|p| p.0), Some(50_000.0), "at the rate it reached");
        assert_eq!(all[1].under_load.len(), 1, "a failed point is left out");
    }

    #[test]
    fn plot_is_written_as_png_and_svg_with_panels_and_legend() {
        let scratch = testkit::Scratch::new("latency-plot");
        let dir = scratch.dir();
        let written = draw(&sample(), dir).unwrap();
        assert_eq!(written, [dir.join("latency.png"), dir.join("latency.svg")]);
        let png = std::fs::read(&written[0]).unwrap();
        let svg = std::fs::read_to_string(&written[1]).unwrap();
        assert!(png.len() > 1000 && png.starts_with(b"\x89PNG"), "{} bytes", png.len());
        let texts = svg_texts(&svg);
        for text in [
            "p50",
            "p99.9",
            "max",
            "l3fwd-rs",
            "Linux kernel forwarding",
            "messages/s offered",
        ] {
            assert!(texts.iter().any(|t| t == text), "{text} missing from {texts:?}");
        }
    }
}
