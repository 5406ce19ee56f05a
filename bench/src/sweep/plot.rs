//! Plots of a sweep, PNG and SVG, one pair per table: Mpps over frame size
//! (a line per flow count and forwarder) and a heat map of l3fwd-rs / C
//! over frame size x flows, each cell labelled with its ratio.

use crate::grid::format_count;
use crate::plot::{draw_legend, draw_spreads, failed, load_font, FONT, PIXELS};
use crate::report::CellSummary;
use crate::report::Report;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::path::{Path, PathBuf};

/// Heat-map colours reach full strength at a ratio this far from 1.
const FULL_COLOUR_AT: f64 = 0.5;

/// One table's cells, as the plots need them.
struct TableCells<'a> {
    label: &'a str,
    sizes: Vec<u32>,
    flows: Vec<usize>,
    cells: Vec<&'a CellSummary>,
}

impl<'a> TableCells<'a> {
    fn of(report: &'a Report, table: &str) -> Option<TableCells<'a>> {
        let cells: Vec<&CellSummary> = report.cells.iter().filter(|c| c.table == table).collect();
        let mut sizes: Vec<u32> = cells.iter().map(|c| c.size).collect();
        let mut flows: Vec<usize> = cells.iter().map(|c| c.flows).collect();
        sizes.sort();
        sizes.dedup();
        flows.sort();
        flows.dedup();
        Some(TableCells {
            label: &cells.first()?.table_label,
            sizes,
            flows,
            cells,
        })
    }

    fn cell(&self, size: u32, flows: usize) -> Option<&CellSummary> {
        self.cells.iter().copied().find(|c| c.size == size && c.flows == flows)
    }
}

/// Draws the plots of every table into `dir`, as PNG and SVG (the work
/// above the floor only where testpmd io ran); returns the files.
pub fn draw_all(report: &Report, dir: &Path) -> Result<Vec<PathBuf>, String> {
    load_font()?;
    let mut tables: Vec<&str> = report.cells.iter().map(|c| c.table.as_str()).collect();
    tables.dedup();
    let mut written = Vec::new();
    for table in tables {
        let Some(cells) = TableCells::of(report, table) else {
            continue;
        };
        let rates = dir.join(format!("{table}-mpps"));
        let [rates_png, rates_svg] = [rates.with_extension("png"), rates.with_extension("svg")];
        draw_rates(BitMapBackend::new(&rates_png, PIXELS).into_drawing_area(), &cells)?;
        draw_rates(SVGBackend::new(&rates_svg, PIXELS).into_drawing_area(), &cells)?;
        written.extend([rates_png, rates_svg]);
        let with_io = cells.cells.iter().any(|c| c.io.is_some());
        for map in [HeatMap::RATE].into_iter().chain(with_io.then_some(HeatMap::WORK)) {
            let path = dir.join(format!("{table}-{}", map.name));
            let [png, svg] = [path.with_extension("png"), path.with_extension("svg")];
            draw_heat_map(BitMapBackend::new(&png, PIXELS).into_drawing_area(), &cells, &map)?;
            draw_heat_map(SVGBackend::new(&svg, PIXELS).into_drawing_area(), &cells, &map)?;
            written.extend([png, svg]);
        }
    }
    Ok(written)
}

/// A ratio shown per cell, green where l3fwd-rs does better.
struct HeatMap {
    /// The files' suffix: `lpm-16-ratio.png`.
    name: &'static str,
    /// The title after the table's name, and the line under it that says
    /// how to read the cells (one line of both would not fit the width).
    title: &'static str,
    legend: &'static str,
    value: fn(&CellSummary) -> Option<f64>,
    /// Said in a cell without a value, when both forwarders have rates.
    missing: fn(&CellSummary) -> &'static str,
}

impl HeatMap {
    const RATE: HeatMap = HeatMap {
        name: "ratio",
        title: "l3fwd-rs / C l3fwd",
        legend: "median Mpps; green: l3fwd-rs faster",
        value: |c| c.ratio,
        missing: |_| "n/a",
    };
    const WORK: HeatMap = HeatMap {
        name: "work",
        title: "C / l3fwd-rs work above testpmd io",
        legend: "cycles per packet; green: l3fwd-rs does less",
        value: |c| c.above_io.map(|a| a.c_over_rs),
        // A forwarder measured at the floor has no work to compare.
        missing: |c| match c.io.as_ref().and_then(|io| io.median_mpps) {
            Some(_) => "at floor",
            None => "io n/a",
        },
    };
}

/// Mpps over frame size (log scale), medians joined by lines, min..max as
/// bars; a colour per flow count, solid l3fwd-rs, dashed C.
fn draw_rates<DB: DrawingBackend>(root: DrawingArea<DB, Shift>, table: &TableCells) -> Result<(), String> {
    root.fill(&WHITE).map_err(failed)?;
    let top = table
        .cells
        .iter()
        .flat_map(|c| [c.c.max_mpps, c.rs.max_mpps])
        .flatten()
        .fold(1.0, f64::max);
    let sizes: Vec<f64> = table.sizes.iter().map(|&s| f64::from(s)).collect();
    let (first, last) = (sizes[0], sizes[sizes.len() - 1]);
    let mut chart = ChartBuilder::on(&root)
        .caption(format!("{}: forwarding rate by frame size", table.label), (FONT, 24))
        .margin(16)
        .x_label_area_size(50)
        .y_label_area_size(64)
        .build_cartesian_2d(
            (first * 0.85..last * 1.15).log_scale().with_key_points(sizes.clone()),
            0.0..top * 1.12,
        )
        .map_err(failed)?;
    chart
        .configure_mesh()
        .x_desc("frame size, bytes (with FCS)")
        .y_desc("Mpps, both ports (median; bars: min..max)")
        .x_label_formatter(&|x| format!("{x:.0}"))
        .label_style((FONT, 16))
        .axis_desc_style((FONT, 17))
        .draw()
        .map_err(failed)?;
    for (i, &flows) in table.flows.iter().enumerate() {
        let colour = Palette99::pick(i).to_rgba();
        for rs in [false, true] {
            let points: Vec<(f64, f64, f64, f64)> = table
                .sizes
                .iter()
                .filter_map(|&size| {
                    let cell = table.cell(size, flows)?;
                    let rates = if rs { &cell.rs } else { &cell.c };
                    Some((f64::from(size), rates.median_mpps?, rates.min_mpps?, rates.max_mpps?))
                })
                .collect();
            if points.is_empty() {
                continue;
            }
            let name = format!(
                "{} {} flows",
                if rs { "l3fwd-rs" } else { "C l3fwd" },
                format_count(flows)
            );
            let line = points.iter().map(|&(x, y, _, _)| (x, y));
            let style = colour.stroke_width(2);
            let series = if rs {
                chart.draw_series(LineSeries::new(line, style))
            } else {
                chart.draw_series(DashedLineSeries::new(line, 8, 5, style))
            };
            series.map_err(failed)?.label(name).legend(move |(x, y)| {
                let dash = if rs { 24 } else { 8 };
                PathElement::new(vec![(x, y), (x + dash, y)], colour.stroke_width(2))
            });
            draw_spreads(&mut chart, &points, colour)?;
        }
    }
    draw_legend(&mut chart, SeriesLabelPosition::UpperRight)?;
    root.present().map_err(failed)
}

/// The colour of a ratio: white at 1, greener above (l3fwd-rs faster),
/// redder below; grey when there is no ratio.
fn ratio_colour(ratio: Option<f64>) -> RGBColor {
    let Some(r) = ratio else {
        return RGBColor(210, 210, 210);
    };
    let t = ((r - 1.0) / FULL_COLOUR_AT).clamp(-1.0, 1.0);
    let (to, t) = if t >= 0.0 {
        ((70, 175, 90), t)
    } else {
        ((225, 80, 70), -t)
    };
    let mix = |c: u8| (255.0 + (f64::from(c) - 255.0) * t).round() as u8;
    RGBColor(mix(to.0), mix(to.1), mix(to.2))
}

/// What a heat-map cell says: the value, or which forwarder has no rate.
fn heat_label(cell: Option<&CellSummary>, map: &HeatMap) -> String {
    match cell {
        None => String::new(),
        Some(c) => match ((map.value)(c), c.c.median_mpps, c.rs.median_mpps) {
            (Some(r), _, _) => format!("{r:.2}"),
            (None, None, _) => "C n/a".into(),
            (None, _, None) => "rs n/a".into(),
            (None, Some(_), Some(_)) => (map.missing)(c).into(),
        },
    }
}

/// A heat map's ratio over frame size (columns) x flows (rows).
fn draw_heat_map<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    table: &TableCells,
    map: &HeatMap,
) -> Result<(), String> {
    root.fill(&WHITE).map_err(failed)?;
    // Cell (column, row) spans 2 column..2 column + 2 (integer coordinates
    // take key points and label formatters; their centres are the odd numbers).
    let (columns, rows) = (table.sizes.len(), table.flows.len());
    let centres = |n: usize| (0..n as i32).map(|i| 2 * i + 1).collect::<Vec<i32>>();
    let index = |v: i32, n: usize| ((v.max(0) / 2) as usize).min(n - 1);
    let root = root
        .titled(&format!("{}: {}", table.label, map.title), (FONT, 24))
        .map_err(failed)?
        .titled(map.legend, (FONT, 16))
        .map_err(failed)?;
    let mut chart = ChartBuilder::on(&root)
        .margin(16)
        .x_label_area_size(50)
        .y_label_area_size(80)
        .build_cartesian_2d(
            (0..2 * columns as i32).with_key_points(centres(columns)),
            (0..2 * rows as i32).with_key_points(centres(rows)),
        )
        .map_err(failed)?;
    chart
        .configure_mesh()
        .disable_mesh()
        .x_desc("frame size, bytes (with FCS)")
        .y_desc("flows")
        .x_label_formatter(&|x| table.sizes[index(*x, columns)].to_string())
        .y_label_formatter(&|y| format_count(table.flows[index(*y, rows)]))
        .label_style((FONT, 16))
        .axis_desc_style((FONT, 17))
        .draw()
        .map_err(failed)?;
    let grid = (0..rows).flat_map(|row| (0..columns).map(move |column| (column, row)));
    let cells: Vec<(i32, i32, Option<&CellSummary>)> = grid
        .map(|(column, row)| {
            let cell = table.cell(table.sizes[column], table.flows[row]);
            (2 * column as i32, 2 * row as i32, cell)
        })
        .collect();
    chart
        .draw_series(cells.iter().map(|&(x, y, cell)| {
            let colour = ratio_colour(cell.and_then(map.value));
            Rectangle::new([(x, y), (x + 2, y + 2)], colour.filled())
        }))
        .map_err(failed)?;
    chart
        .draw_series(
            cells
                .iter()
                .map(|&(x, y, _)| Rectangle::new([(x, y), (x + 2, y + 2)], WHITE.stroke_width(2))),
        )
        .map_err(failed)?;
    let centred = Pos::new(HPos::Center, VPos::Center);
    chart
        .draw_series(cells.iter().map(|&(x, y, cell)| {
            let style = (FONT, 22).into_font().color(&BLACK).pos(centred);
            Text::new(heat_label(cell, map), (x + 1, y + 1), style)
        }))
        .map_err(failed)?;
    root.present().map_err(failed)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::super::results::tests::sample;
    use super::*;
    use crate::plot::tests::svg_texts;

    #[test]
    fn plots_are_written_as_png_and_svg_with_their_labels() {
        let scratch = testkit::Scratch::new("sweep-plots");
        let dir = scratch.dir();
        let written = draw_all(&sample(), dir).unwrap();
        let names: Vec<String> = written
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            names,
            [
                "lpm-16-mpps.png",
                "lpm-16-mpps.svg",
                "lpm-16-ratio.png",
                "lpm-16-ratio.svg",
                "em-mpps.png",
                "em-mpps.svg",
                "em-ratio.png",
                "em-ratio.svg"
            ]
        );
        let png = std::fs::read(dir.join("lpm-16-ratio.png")).unwrap();
        let texts = |name: &str| svg_texts(&std::fs::read_to_string(dir.join(name)).unwrap());
        let (ratios, em_ratios, rates) = (
            texts("lpm-16-ratio.svg"),
            texts("em-ratio.svg"),
            texts("lpm-16-mpps.svg"),
        );
        assert!(png.len() > 1000 && png.starts_with(b"\x89PNG"), "{} bytes", png.len());
        for label in ["1.27", "1.25", "64", "1518", "16", "flows"] {
            assert!(ratios.iter().any(|t| t == label), "{label} missing from {ratios:?}");
        }
        assert!(
            em_ratios.iter().any(|t| t == "C n/a"),
            "a cell without a C rate says so"
        );
        assert!(rates.iter().any(|t| t == "l3fwd-rs 16 flows") && rates.iter().any(|t| t == "C l3fwd 16 flows"));
    }

    #[test]
    fn the_work_above_the_floor_is_drawn_where_io_ran() {
        use crate::report::AboveIo;
        use crate::report::Rates;
        let mut report = sample();
        let io = |median| Rates {
            runs: 3,
            ok_runs: 3,
            median_mpps: Some(median),
            min_mpps: Some(median),
            max_mpps: Some(median),
            ..Rates::default()
        };
        report.cells[0].io = Some(io(20.0));
        report.cells[0].above_io = AboveIo::of(2000.0, Some(10.0), Some(16.0), Some(20.0));
        report.cells[1].io = Some(io(2.0));
        let scratch = testkit::Scratch::new("sweep-work");
        let dir = scratch.dir();
        let written = draw_all(&report, dir).unwrap();
        let work = svg_texts(&std::fs::read_to_string(dir.join("lpm-16-work.svg")).unwrap());
        assert!(written.iter().any(|p| p.ends_with("lpm-16-work.png")));
        assert!(!written.iter().any(|p| p.ends_with("em-work.png")), "EM ran no io");
        assert!(work.iter().any(|t| t == "4.00"), "{work:?}");
        assert!(
            work.iter().any(|t| t == "at floor"),
            "a cell at the floor says so: {work:?}"
        );
    }

    /// A heat map's title and legend fit the image's width (the title of
    /// the longest table name), rather than being cut at both edges.
    #[test]
    fn heat_map_titles_fit_the_width() {
        use plotters::style::IntoFont;
        load_font().unwrap();
        for map in [HeatMap::RATE, HeatMap::WORK] {
            for (text, size) in [(format!("lpm-1M: {}", map.title), 24.0), (map.legend.to_string(), 16.0)] {
                let (width, _) = (FONT, size).into_font().box_size(&text).unwrap();
                assert!(width < PIXELS.0 - 40, "{text:?}: {width} px of {}", PIXELS.0);
            }
        }
    }

    #[test]
    fn ratio_colours() {
        assert_eq!(ratio_colour(Some(1.0)), RGBColor(255, 255, 255));
        assert_eq!(ratio_colour(Some(2.0)), RGBColor(70, 175, 90));
        assert_eq!(ratio_colour(Some(0.1)), RGBColor(225, 80, 70));
        let RGBColor(r, g, _) = ratio_colour(Some(1.1));
        assert!(g > r, "faster is greener");
        assert_eq!(ratio_colour(None), RGBColor(210, 210, 210));
    }
}
