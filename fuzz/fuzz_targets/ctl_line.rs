//! Fuzzes a line of the control protocol (`l3fwd-ctl`'s commands, as the
//! socket reads them, any bytes) against `contract`: no panic, and an
//! error is one bounded line (it goes back to the client as its answer).
//! A flow's rule-file line is the `em_rules` target's.
#![no_main]
#![forbid(unsafe_code)]

use l3fwd_rs::control::protocol::parse_line;
use libfuzzer_sys::fuzz_target;

#[path = "contract/mod.rs"]
mod contract;
use contract::check_message;

fuzz_target!(|data: &[u8]| {
    if let Err(message) = parse_line(data) {
        check_message(&message, "");
    }
});
