//! l3fwd-rs: DPDK's l3fwd sample as a Rust application.

mod cli;
mod plan;

fn main() {}
