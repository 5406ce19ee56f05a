//! l3fwd's LPM mode: route rule files and the rte_lpm / rte_lpm6 tables
//! built from them.

pub mod rules;
mod table;

pub use table::{LoadReport, LpmTables};
