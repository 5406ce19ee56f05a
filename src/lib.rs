//! l3fwd-rs as a library: the modules of the application, so that tests,
//! fuzzers and benchmarks can reach the data-path code. The binary
//! (`src/main.rs`) only parses the command line and calls [`app::run`].

#![forbid(unsafe_code)]

pub mod abbrev;
pub mod app;
pub mod cli;
pub mod control;
pub mod counters;
pub mod ctl;
pub mod event;
pub mod forward;
pub mod live;
pub mod lookup;
pub mod mode;
pub mod output;
pub mod packet;
pub mod plan;
pub mod poll;
pub mod portmask;
pub mod rule_files;
pub mod setup;
pub mod stats_json;

/// Most packets per RX burst and per TX buffer (`--rx-burst`, `--tx-burst`:
/// later l3fwd's MAX_PKT_BURST): the capacity of the per-lcore arrays.
pub const MAX_BURST: usize = 512;

/// Packets per RX burst and per TX buffer by default (C 22.11's
/// MAX_PKT_BURST).
pub const DEFAULT_BURST: usize = 32;
