//! Fuzzes `-p PORTMASK` against `contract`: an error names the option, and
//! a mask accepted, printed as C prints it (`0x3`), reads back the same.
#![no_main]
#![forbid(unsafe_code)]

use libfuzzer_sys::fuzz_target;

#[path = "contract/mod.rs"]
mod contract;
use contract::{check_message, parse_app_args};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    match parse_app_args(&["-p", text, "--config", "(0,0,0)"]) {
        Err(message) => check_message(&message, "-p"),
        Ok(args) => {
            let printed = format!("{:#x}", args.portmask);
            let again = parse_app_args(&["-p", &printed, "--config", "(0,0,0)"])
                .unwrap_or_else(|e| panic!("printed mask {printed}: {e}"));
            assert_eq!(args.portmask, again.portmask, "{printed}");
        }
    }
});
