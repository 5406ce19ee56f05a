//! l3fwd's LPM mode: route rule files and the rte_lpm / rte_lpm6 tables
//! built from them, sized for them (or by `--lpm-max-rules` / `--lpm-tbl8s`)
//! and loaded fast enough for a real router's million routes.

mod dir24;
pub mod rules;
mod sizing;
mod table;

pub use sizing::{Limits, Shortage, Size};
pub use table::{LoadReport, LpmError, LpmTables};
