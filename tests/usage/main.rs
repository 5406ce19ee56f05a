//! The command line and the ways a run starts and ends, one test binary:
//! bad options, rule files and set-ups fail in one line, inputs that never
//! come hold nothing up, every way to stop ends cleanly, the options for
//! large tables, and what the README and the examples promise a user.

mod cli_errors;
mod examples;
mod installed_binary;
mod readme_claims;
mod scale_options;
mod setup_failures;
mod shutdown_paths;
mod user_errors;
