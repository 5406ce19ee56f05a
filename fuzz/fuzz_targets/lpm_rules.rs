//! Fuzzes the LPM (and FIB) route-file parser, IPv4 and IPv6, against
//! `contract`: errors name `fuzz.cfg:LINE`, and the routes read, printed as
//! `R<prefix>/<depth> <port>` lines, read back the same.
#![no_main]
#![forbid(unsafe_code)]

use libfuzzer_sys::fuzz_target;
use lpm::rules::{parse_v4, parse_v6, Route, RuleError};

#[path = "contract/mod.rs"]
mod contract;
use contract::{check_rule_error, ORIGIN};

fn check<N: std::fmt::Display + PartialEq + std::fmt::Debug>(
    text: &[u8],
    parse: impl Fn(&[u8]) -> Result<Vec<Route<N>>, RuleError>,
) {
    match parse(text) {
        Err(error) => check_rule_error(&error, text),
        Ok(routes) => {
            let printed: String = routes.iter().map(|r| format!("R{} {}\n", r.prefix, r.port)).collect();
            let again = parse(printed.as_bytes()).unwrap_or_else(|e| panic!("printed routes: {e}\n{printed}"));
            let pairs = |routes: &[Route<N>]| {
                routes
                    .iter()
                    .map(|r| (r.prefix.to_string(), r.port))
                    .collect::<Vec<_>>()
            };
            assert_eq!(pairs(&routes), pairs(&again), "{printed}");
        }
    }
}

fuzz_target!(|text: &[u8]| {
    check(text, |t| parse_v4(t, ORIGIN));
    check(text, |t| parse_v6(t, ORIGIN));
});
