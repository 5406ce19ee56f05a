//! The command line, the ways a run starts and ends, and the tools that
//! watch it, one test binary: bad options, rule files and set-ups fail in
//! one line, inputs that never come hold nothing up, every way to stop
//! ends cleanly, the options for large tables, what the README and the
//! examples promise a user, `--metrics`, and DPDK's own tools (proc-info,
//! dumpcap, telemetry) beside a forwarder.

mod cli_errors;
mod dpdk_tools;
mod examples;
mod installed_binary;
mod metrics;
mod readme_claims;
mod scale_options;
mod setup_failures;
mod shutdown_paths;
mod user_errors;

/// The bench's hugepage reservation, shared rather than copied (the tests
/// use part of it).
#[allow(dead_code)]
#[path = "../../bench/src/hugepages.rs"]
mod hugepages;
