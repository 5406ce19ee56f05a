//! l3fwd-rs as a library: the modules of the application, so that tests,
//! fuzzers and benchmarks can reach the data-path code. The binary
//! (`src/main.rs`) only parses the command line and calls [`app::run`].

#![forbid(unsafe_code)]

pub mod abbrev;
pub mod app;
pub mod cli;
pub mod control;
pub mod counters;
pub mod forward;
pub mod lookup;
pub mod output;
pub mod packet;
pub mod plan;
pub mod portmask;
pub mod rule_files;
pub mod setup;

/// Packets per RX burst and per TX buffer (the C sample's MAX_PKT_BURST).
pub const BURST: usize = 32;
