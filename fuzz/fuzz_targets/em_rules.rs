//! Fuzzes the exact-match rule-file parser, IPv4 and IPv6, against
//! `contract`: errors name `fuzz.cfg:LINE`, and the rules read, printed as
//! `R<dst> <src> <dport> <sport> <proto> <port>` lines, read back the same.
#![no_main]
#![forbid(unsafe_code)]

use em::rules::{parse_v4, parse_v6, Rule, RuleError};
use libfuzzer_sys::fuzz_target;

#[path = "contract/mod.rs"]
mod contract;
use contract::{check_rule_error, ORIGIN};

fn check<A: std::fmt::Display + PartialEq + std::fmt::Debug + Copy>(
    text: &[u8],
    parse: impl Fn(&[u8]) -> Result<Vec<Rule<A>>, RuleError>,
) {
    match parse(text) {
        Err(error) => check_rule_error(&error, text),
        Ok(rules) => {
            let printed: String = rules
                .iter()
                .map(|r| {
                    let t = &r.tuple;
                    format!(
                        "R{} {} {} {} {} {}\n",
                        t.dst, t.src, t.dst_port, t.src_port, t.proto, r.port
                    )
                })
                .collect();
            let again = parse(printed.as_bytes()).unwrap_or_else(|e| panic!("printed rules: {e}\n{printed}"));
            let fields = |rules: &[Rule<A>]| rules.iter().map(|r| (r.tuple, r.port)).collect::<Vec<_>>();
            assert_eq!(fields(&rules), fields(&again), "{printed}");
        }
    }
}

fuzz_target!(|text: &[u8]| {
    check(text, |t| parse_v4(t, ORIGIN));
    check(text, |t| parse_v6(t, ORIGIN));
});
