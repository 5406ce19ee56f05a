//! Fuzzes `--eth-dest=X,MM:MM:MM:MM:MM:MM` against `contract`: an error
//! names the option, and a destination accepted, printed as the start-up
//! log prints it, reads back the same.
#![no_main]
#![forbid(unsafe_code)]

use l3fwd_rs::setup::fmt_mac;
use libfuzzer_sys::fuzz_target;

#[path = "contract/mod.rs"]
mod contract;
use contract::{check_message, parse_app_args};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    match parse_app_args(&["-p", "0x3", &format!("--eth-dest={text}")]) {
        Err(message) => check_message(&message, "--eth-dest"),
        Ok(args) => {
            let printed: Vec<String> = args
                .eth_dest
                .iter()
                .map(|d| format!("--eth-dest={},{}", d.port, fmt_mac(&d.mac)))
                .collect();
            let mut again: Vec<&str> = vec!["-p", "0x3"];
            again.extend(printed.iter().map(String::as_str));
            let again = parse_app_args(&again).unwrap_or_else(|e| panic!("printed {printed:?}: {e}"));
            assert_eq!(args.eth_dest, again.eth_dest, "{printed:?}");
        }
    }
});
