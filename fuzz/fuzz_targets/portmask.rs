//! Fuzzes `-p PORTMASK`'s parser against `contract`: an error names the
//! portmask, and a mask accepted, printed as C prints it (`0x3`), reads
//! back the same.
#![no_main]
#![forbid(unsafe_code)]

use l3fwd_rs::cli::values::parse_portmask;
use libfuzzer_sys::fuzz_target;

#[path = "contract/mod.rs"]
mod contract;
use contract::check_message;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    match parse_portmask(text) {
        Err(message) => check_message(&message, "portmask"),
        Ok(mask) => {
            let printed = format!("{mask:#x}");
            let again = parse_portmask(&printed).unwrap_or_else(|e| panic!("printed mask {printed}: {e}"));
            assert_eq!(mask, again, "{printed}");
        }
    }
});
