//! Fuzzes `--config` against `contract`: an error names the option, and
//! the tuples accepted, printed as `(port,queue,lcore),...`, read back the
//! same.
#![no_main]
#![forbid(unsafe_code)]

use libfuzzer_sys::fuzz_target;

#[path = "contract/mod.rs"]
mod contract;
use contract::{check_message, parse_app_args};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    match parse_app_args(&["-p", "0x3", &format!("--config={text}")]) {
        Err(message) => check_message(&message, "--config"),
        Ok(args) => {
            let printed: Vec<String> = args.config.iter().map(ToString::to_string).collect();
            let printed = printed.join(",");
            let again = parse_app_args(&["-p", "0x3", &format!("--config={printed}")])
                .unwrap_or_else(|e| panic!("printed config {printed}: {e}"));
            assert_eq!(args.config, again.config, "{printed}");
        }
    }
});
