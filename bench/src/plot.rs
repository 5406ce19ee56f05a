//! What every plot of the bench shares: its font (plotters' pure-Rust
//! ab_glyph backend with DejaVu Sans from Debian's fonts-dejavu-core, so no
//! fontconfig or freetype is needed), its size, spreads drawn as bars, a
//! boxed legend, and how a drawing error reads.

use plotters::prelude::*;
use plotters::style::{register_font, FontStyle};
use std::path::PathBuf;
use std::sync::OnceLock;

/// Where Debian (fonts-dejavu-core) and some other systems put the font;
/// L3FWD_BENCH_FONT names another TrueType file.
const FONT_FILES: [&str; 2] = [
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
];
pub const FONT: &str = "sans-serif";
pub const PIXELS: (u32, u32) = (1000, 640);

/// Registers the font once; fails if no font file is found.
pub fn load_font() -> Result<(), String> {
    static LOADED: OnceLock<Result<(), String>> = OnceLock::new();
    LOADED
        .get_or_init(|| {
            let chosen = std::env::var_os("L3FWD_BENCH_FONT").map(PathBuf::from);
            let path = chosen
                .or_else(|| FONT_FILES.iter().map(PathBuf::from).find(|p| p.is_file()))
                .ok_or("no font for the plots: install fonts-dejavu-core (or set L3FWD_BENCH_FONT to a .ttf file)")?;
            let bytes = std::fs::read(&path).map_err(|e| format!("font {}: {e}", path.display()))?;
            // plotters keeps fonts for the life of the program.
            let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
            for family in [FONT, "serif", "monospace"] {
                register_font(family, FontStyle::Normal, bytes)
                    .map_err(|_| format!("font {}: not a TrueType font", path.display()))?;
            }
            Ok(())
        })
        .clone()
}

/// A drawing error, as the commands print it.
pub fn failed(e: impl std::fmt::Display) -> String {
    format!("plot: {e}")
}

/// Each point's min..max as a bar through its median: points are
/// `(x, median, min, max)`.
pub fn draw_spreads<'a, DB: DrawingBackend + 'a, X: Ranged<ValueType = f64>>(
    chart: &mut ChartContext<'a, DB, Cartesian2d<X, plotters::coord::types::RangedCoordf64>>,
    points: &[(f64, f64, f64, f64)],
    colour: RGBAColor,
) -> Result<(), String> {
    let bars = points
        .iter()
        .map(|&(x, median, min, max)| ErrorBar::new_vertical(x, min, median, max, colour.filled(), 8));
    chart.draw_series(bars).map_err(failed)?;
    Ok(())
}

/// The series' labels, boxed, at `position`.
pub fn draw_legend<'a, DB: DrawingBackend + 'a, CT: CoordTranslate>(
    chart: &mut ChartContext<'a, DB, CT>,
    position: SeriesLabelPosition,
) -> Result<(), String> {
    chart
        .configure_series_labels()
        .label_font((FONT, 15))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .position(position)
        .draw()
        .map_err(failed)
}

#[cfg(test)]
pub(crate) mod tests {
    /// The text of every `<text>` element.
    pub(crate) fn svg_texts(svg: &str) -> Vec<String> {
        svg.split("<text")
            .skip(1)
            .filter_map(|t| Some(t.split_once('>')?.1.split_once("</text>")?.0.trim().to_string()))
            .collect()
    }
}
