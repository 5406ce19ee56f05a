//! The plot of `bench update`: forwarding rate against change rate, a line
//! per table, PNG and SVG.

use super::changes::{Rate, Target};
use super::UpdateReport;
use crate::plot::{draw_legend, failed, load_font, FONT, PIXELS};
use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::{Path, PathBuf};

/// Writes `update.png` and `update.svg` into `dir`.
pub fn draw(report: &UpdateReport, dir: &Path) -> Result<Vec<PathBuf>, String> {
    load_font()?;
    let (png, svg) = (dir.join("update.png"), dir.join("update.svg"));
    draw_rates(BitMapBackend::new(&png, PIXELS).into_drawing_area(), report)?;
    draw_rates(SVGBackend::new(&svg, PIXELS).into_drawing_area(), report)?;
    Ok(vec![png, svg])
}

/// The x of a point: its change rate, or (for max) what it applied.
fn x_of(rate: Rate, applied: f64) -> f64 {
    match rate {
        Rate::PerSecond(n) => f64::from(n),
        Rate::Max => applied,
    }
}

fn draw_rates<DB: DrawingBackend>(root: DrawingArea<DB, Shift>, report: &UpdateReport) -> Result<(), String> {
    root.fill(&WHITE).map_err(failed)?;
    let top = report.points.iter().map(|p| p.mpps).fold(0.1, f64::max);
    // Log scale: 0 changes/s is drawn at 1.
    let right = report
        .points
        .iter()
        .map(|p| x_of(p.rate, p.applied_per_sec))
        .fold(10.0, f64::max);
    let mut chart = ChartBuilder::on(&root)
        .caption("l3fwd-rs: forwarding rate while its tables change", (FONT, 24))
        .margin(16)
        .x_label_area_size(50)
        .y_label_area_size(64)
        .build_cartesian_2d((1.0..right * 2.0).log_scale(), 0.0..top * 1.15)
        .map_err(failed)?;
    chart
        .configure_mesh()
        .x_desc("changes per second through l3fwd-ctl - (0 drawn at 1; max: as applied)")
        .y_desc("Mpps, both ports")
        .label_style((FONT, 16))
        .axis_desc_style((FONT, 17))
        .draw()
        .map_err(failed)?;
    for (i, target) in Target::ALL.into_iter().enumerate() {
        let colour = Palette99::pick(i).to_rgba();
        let mut points: Vec<(f64, f64)> = report
            .points
            .iter()
            .filter(|p| p.target == target)
            .map(|p| (x_of(p.rate, p.applied_per_sec).max(1.0), p.mpps))
            .collect();
        if points.is_empty() {
            continue;
        }
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
        chart
            .draw_series(LineSeries::new(points.clone(), colour.stroke_width(2)))
            .map_err(failed)?
            .label(target.label())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 24, y)], colour.stroke_width(2)));
        chart
            .draw_series(points.iter().map(|&p| Circle::new(p, 4, colour.filled())))
            .map_err(failed)?;
    }
    draw_legend(&mut chart, SeriesLabelPosition::LowerLeft)?;
    root.present().map_err(failed)
}
