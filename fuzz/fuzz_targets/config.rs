//! Fuzzes `--config`'s parser against `contract`: an error names the
//! option, and the tuples accepted, printed as `(port,queue,lcore),...`,
//! read back the same. (That clap puts the option's name before the
//! parser's reason is `cli`'s unit tests' to check; calling the parser
//! directly runs ~100x more inputs a second.)
#![no_main]
#![forbid(unsafe_code)]

use l3fwd_rs::cli::values::parse_config;
use libfuzzer_sys::fuzz_target;

#[path = "contract/mod.rs"]
mod contract;
use contract::check_message;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    match parse_config(text) {
        Err(message) => check_message(&message, "--config"),
        Ok(config) => {
            let printed: Vec<String> = config.iter().map(ToString::to_string).collect();
            let printed = printed.join(",");
            let again = parse_config(&printed).unwrap_or_else(|e| panic!("printed config {printed}: {e}"));
            assert_eq!(config, again, "{printed}");
        }
    }
});
