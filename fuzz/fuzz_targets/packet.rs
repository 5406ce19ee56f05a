//! Fuzzes the per-frame code of the forwarder: `packet::parse`,
//! `packet::rewrite`, `mode::em_key` and the vector parse, on every input
//! as a frame (libFuzzer's input buffer is exactly the frame, so
//! AddressSanitizer catches any read past it), in every lookup mode,
//! against the contract in tests/oracle: no panic, one decision, no read
//! past the frame, a rewrite of MACs/TTL/checksum only, the vector parse
//! reading what `packet::parse` reads (in mbufs of an EAL in this process).
//! `make fuzz` runs it for a fixed time.
#![no_main]
#![forbid(unsafe_code)]

use libfuzzer_sys::fuzz_target;

#[path = "../../tests/oracle/mod.rs"]
mod oracle;

fuzz_target!(
    // EAL and the vector check's mbufs start before the first input, so the
    // leak check of each input leaves EAL's process-long memory alone.
    init: oracle::check_vector(&[]),
    |frame: &[u8]| {
        for mode in l3fwd_modes::MODES {
            oracle::check(frame, mode);
        }
        oracle::check_vector(frame);
    }
);
