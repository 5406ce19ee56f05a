//! l3fwd-rs as a library: the modules of the application, so that tests,
//! fuzzers and benchmarks can reach the data-path code. The binary
//! (`src/main.rs`) only parses the command line and calls [`app::run`].

#![forbid(unsafe_code)]

pub mod app;
pub mod cli;
pub mod control;
pub mod dataplane;
pub mod model;

/// Most packets per RX burst and per TX buffer (`--rx-burst`, `--tx-burst`:
/// later l3fwd's MAX_PKT_BURST): the capacity of the per-lcore arrays.
pub const MAX_BURST: usize = 512;

/// Packets per RX burst and per TX buffer by default (C 22.11's
/// MAX_PKT_BURST, later C's DEFAULT_PKT_BURST).
pub const DEFAULT_BURST: usize = 32;

// Defaults that follow the C sample of the DPDK release built against
// (dpdk::RELEASE), so that one command line gives the same run.

/// The C sample's per-lcore mempool cache (MEMPOOL_CACHE_SIZE): 256 before
/// 24.11, the largest a cache can be (RTE_MEMPOOL_CACHE_MAX_SIZE, 512)
/// since. `--mbcache`'s default, and what the pool size counts per lcore.
pub const DEFAULT_MBCACHE: u32 = if dpdk::RELEASE >= 2411 { 512 } else { 256 };

/// The C sample's event vector size without `--event-vector-size`
/// (VECTOR_SIZE_DEFAULT, its MAX_PKT_BURST): 32 before 24.11, 512 since.
pub const DEFAULT_VECTOR_SIZE: u64 = if dpdk::RELEASE >= 2411 { 512 } else { 32 };
