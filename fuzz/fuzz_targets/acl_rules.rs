//! Fuzzes the ACL (ClassBench) rule-file parser, IPv4 and IPv6, against
//! `contract`: no panic, and errors name `fuzz.cfg:LINE` (or the file, for
//! one without routes). It has no printer to read back.
#![no_main]
#![forbid(unsafe_code)]

use ipnet::{Ipv4Net, Ipv6Net};
use libfuzzer_sys::fuzz_target;

#[path = "contract/mod.rs"]
mod contract;
use contract::{check_rule_error, ORIGIN};

fuzz_target!(|text: &[u8]| {
    if let Err(error) = acl::rules::parse::<Ipv4Net>(text, ORIGIN) {
        check_rule_error(&error, text);
    }
    if let Err(error) = acl::rules::parse::<Ipv6Net>(text, ORIGIN) {
        check_rule_error(&error, text);
    }
});
