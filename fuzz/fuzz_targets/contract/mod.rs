//! The contract every parser target checks (issue 23, item 9): no panic
//! (libFuzzer reports one), an error that is one bounded line naming the
//! file and line or the option (the control protocol's: one bounded
//! line), and, where there is a printer, an accepted
//! input that parses the same when printed and read again.

#![allow(dead_code)] // each target uses its part

/// The name the rule-file targets give their input.
pub const ORIGIN: &str = "fuzz.cfg";

/// Longest error line: whatever is echoed is cut at 80 characters, each
/// at most 6 bytes once escaped (`\u{9f}`), and a message echoes a value
/// and a part of it at most.
const MAX_MESSAGE: usize = 2048;

/// One line, bounded, containing `names`.
pub fn check_message(message: &str, names: &str) {
    assert!(message.contains(names), "'{names}' not named in: {message}");
    assert!(!message.contains('\n'), "more than one line: {message:?}");
    assert!(message.len() <= MAX_MESSAGE, "{} bytes: {message}", message.len());
}

/// A rule file's error names [`ORIGIN`], and its line, one of `text`'s.
pub fn check_rule_error<P: rulefile::Problem>(error: &rulefile::Error<P>, text: &[u8]) {
    let message = error.to_string();
    check_message(&message, ORIGIN);
    if let rulefile::Error::Line { line, .. } | rulefile::Error::LongLine { line, .. } = error {
        assert!(message.starts_with(&format!("{ORIGIN}:{line}: ")), "{message}");
        let lines = text.split(|&b| b == b'\n').count();
        assert!((1..=lines).contains(line), "line {line} of {lines}: {message}");
    }
}
