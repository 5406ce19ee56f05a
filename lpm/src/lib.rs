//! l3fwd's LPM mode: route rule files and the rte_lpm / rte_lpm6 tables
//! built from them, sized for them (or by `--lpm-max-rules` / `--lpm-tbl8s`)
//! and loaded fast enough for a real router's million routes.
//!
//! The pieces, in the order a run meets them:
//! - [`rules`]: `R<prefix>/<depth> <port>` lines into [`rules::Route`]s, as
//!   `lpm_route_parse.c` reads them;
//! - [`Size`]: the rules and tbl8 groups each table is created with,
//!   counted from its routes the way the libraries allocate them, unless
//!   [`Limits`] gives them; a route that does not fit is a [`Shortage`];
//! - [`LpmTables::build`]: both tables, the IPv4 one written in one pass
//!   rather than route by route with rte_lpm_add; then burst lookups
//!   ([`LpmTables::lookup_v4`], inline, and [`LpmTables::lookup_v6_bulk`]);
//! - [`LpmTables::build_live`]: the same tables, with room to grow and
//!   their writers ([`LiveWriters`]: [`LiveRoutes`] and [`LiveRoutes6`]),
//!   which change them in place while lcores read them.
//!
//! [`LpmTables::build`] has a runnable example, from rule text to lookups.
//! FIB mode takes the same route files into rte_fib / rte_fib6
//! ([`FibTables`]).

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod dir24;
mod fib;
mod in_place;
mod in_place6;
mod route_index;
pub mod rules;
mod sizing;
mod table;

pub use fib::{FibRefused, FibTables, LiveFibRoutes};
pub use in_place::{LiveRoutes, Refused};
pub use in_place6::{LiveRoutes6, Place, Refused6, Table6};
pub use sizing::{Limits, Shortage, Size};
pub use table::{LiveWriters, LoadReport, LpmError, LpmTables, HEADROOM};
