//! Forwarding through the real binary, one test binary: each module runs
//! l3fwd-rs (and DPDK's C l3fwd, to compare) on virtual ports with the
//! test kit (`testkit::Run`) and checks every frame that comes out.
//!
//! - [`lpm`], [`em`], [`lpm_scale`]: the lookup modes, up to a router's
//!   table sizes;
//! - [`against_c`], [`drop_in`]: the same command lines and traffic through
//!   C l3fwd, the same output;
//! - the event model, `--mode=eventdev` ([`eventdev`]);
//! - [`robustness`]: hostile traffic, every packet and mbuf accounted for;
//! - [`packet_props`]: the per-frame code against [`oracle`], without a
//!   forwarder.

mod against_c;
mod drop_in;
mod em;
mod eventdev;
mod lpm;
mod lpm_scale;
mod packet_props;
mod robustness;

// Also the fuzz target's (fuzz/fuzz_targets/packet.rs), which includes it
// by this path.
#[path = "../oracle/mod.rs"]
mod oracle;
