//! Fuzzes `--eth-dest=X,MM:MM:MM:MM:MM:MM`'s parser against `contract`: an
//! error names the option, and a destination accepted, printed as the
//! start-up log prints it, reads back the same.
#![no_main]
#![forbid(unsafe_code)]

use l3fwd_rs::cli::values::parse_eth_dest;
use l3fwd_rs::dataplane::setup::fmt_mac;
use libfuzzer_sys::fuzz_target;

#[path = "contract/mod.rs"]
mod contract;
use contract::check_message;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    match parse_eth_dest(text) {
        Err(message) => check_message(&message, "--eth-dest"),
        Ok(dest) => {
            let printed = format!("{},{}", dest.port, fmt_mac(&dest.mac));
            let again = parse_eth_dest(&printed).unwrap_or_else(|e| panic!("printed {printed}: {e}"));
            assert_eq!(dest, again, "{printed}");
        }
    }
});
