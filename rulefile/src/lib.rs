//! Line-oriented rule files as DPDK 22.11's l3fwd reads them (`--rule_ipv4`,
//! `--rule_ipv6`), whatever the rule syntax: one rule per line, lines starting
//! with `#` and blank lines skipped, numbers read like C's `strtoul`, and
//! errors naming the file and the line. The LPM and exact-match parsers each
//! bring their own line syntax.
//!
//! Files are bytes, as C's `fgets` reads them: a comment may hold any byte,
//! a line ends at its first NUL (C's string functions stop there), and a
//! byte that is not UTF-8 in a rule line makes that line's field invalid,
//! with its line number. A UTF-8 byte-order mark, which C refuses as a line
//! not starting with `R`, is refused by name. Unlike C l3fwd, Windows line
//! endings are accepted.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

use std::borrow::Cow;
use std::fmt;
use std::io::{self, BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Instant;

mod read;

/// Parses C-style unsigned numbers as `strtoul(s, &end, base)` does when the
/// whole string must be consumed, so l3fwd's inputs mean the same here.
///
/// `base` 0 picks hexadecimal for `0x`, octal for a leading `0`, decimal
/// otherwise; base 16 accepts an optional `0x`. Leading white space and a
/// `+` are skipped, as in C. `base` must be 0 or 2..=36.
///
/// ```
/// use rulefile::parse_c_ulong;
///
/// assert_eq!(parse_c_ulong("0x18", 0), Some(24));
/// assert_eq!(parse_c_ulong("030", 0), Some(24));
/// assert_eq!(parse_c_ulong("+24", 0), Some(24));
/// assert_eq!(parse_c_ulong("ff", 16), Some(255));
/// assert_eq!(parse_c_ulong(" \t24", 0), Some(24));
/// assert_eq!(parse_c_ulong("24 ", 0), None); // not wholly a number
/// assert_eq!(parse_c_ulong("-1", 0), None);
/// ```
pub fn parse_c_ulong(s: &str, base: u32) -> Option<u64> {
    let s = skip_c_space(s);
    let s = s.strip_prefix('+').unwrap_or(s);
    let hex = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X"));
    let (digits, radix) = match (base, hex) {
        (0 | 16, Some(rest)) => (rest, 16),
        (0, None) if s.len() > 1 && s.starts_with('0') => (&s[1..], 8),
        (0, None) => (s, 10),
        (base, _) => (s, base),
    };
    // from_str_radix alone would also take a sign after the prefix ("0x+1").
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    u64::from_str_radix(digits, radix).ok()
}

/// `s` without the leading white space C's `isspace` skips (`strtoul` does).
pub fn skip_c_space(s: &str) -> &str {
    s.trim_start_matches([' ', '\t', '\n', '\x0b', '\x0c', '\r'])
}

/// A numeric field of a rule that is not what its field takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NumberError {
    /// Not a number as `strtoul` reads one.
    NotANumber {
        /// Which field.
        field: &'static str,
        /// The field as written.
        text: String,
    },
    /// A number larger than its field allows.
    OutOfRange {
        /// Which field.
        field: &'static str,
        /// The value read.
        value: u64,
        /// The field's largest value.
        max: u64,
    },
}

impl fmt::Display for NumberError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotANumber { field, text } => write!(f, "{field} '{text}' is not a number"),
            Self::OutOfRange { field, value, max } => write!(f, "{field} {value} out of range 0..={max}"),
        }
    }
}

/// A rule's numeric `field`, read as C's `strtoul(text, NULL, 0)` reads it,
/// and at most `max` (C's `GET_CB_FIELD(text, value, 0, max, 0)`).
///
/// ```
/// use rulefile::{number, NumberError};
///
/// assert_eq!(number("0x10", "port", 255), Ok(16));
/// assert_eq!(number("256", "port", 255), Err(NumberError::OutOfRange { field: "port", value: 256, max: 255 }));
/// assert_eq!(number("1x", "port", 255).unwrap_err().to_string(), "port '1x' is not a number");
/// ```
pub fn number(text: &str, field: &'static str, max: u64) -> Result<u64, NumberError> {
    let value = parse_c_ulong(text, 0).ok_or_else(|| NumberError::NotANumber {
        field,
        text: quote(text),
    })?;
    if value > max {
        return Err(NumberError::OutOfRange { field, value, max });
    }
    Ok(value)
}

/// One rule line of a file: neither a comment nor blank.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Line<'a> {
    /// 1-based line number in the file.
    pub number: usize,
    /// The line, without its line ending (`\n` or `\r\n`).
    pub text: &'a str,
}

/// The UTF-8 encoding of U+FEFF, which some editors put at the start of a file.
const BYTE_ORDER_MARK: &[u8] = b"\xEF\xBB\xBF";

/// How much of a bad line an error quotes.
const QUOTED_CHARS: usize = 80;

/// The rule lines of a file's bytes, in order, as `(line number, text)`.
/// A line ends at `\n` (a `\r` before it is dropped) or at its first NUL;
/// comments only count in the first column, as in C's `is_bypass_line`; a
/// line that is empty or all white space is skipped too. Bytes that are not
/// UTF-8 become U+FFFD, which no rule field accepts.
///
/// ```
/// use rulefile::lines;
///
/// let text = b"# routes \xff\r\nR10.0.0.0/8 1\r\n \t\r\n  # not a comment\nR1\0junk\n\0\n";
/// let found: Vec<(usize, String)> = lines(text).map(|(n, t)| (n, t.into_owned())).collect();
/// assert_eq!(
///     found,
///     [(2, "R10.0.0.0/8 1".into()), (4, "  # not a comment".into()), (5, "R1".into())]
/// );
/// ```
pub fn lines(text: &[u8]) -> impl Iterator<Item = (usize, Cow<'_, str>)> {
    text.split(|&b| b == b'\n')
        .enumerate()
        .filter_map(|(index, line)| Some((index + 1, rule_text(line)?)))
}

/// One line's rule text (without its `\n`), or `None` for a comment or a
/// blank line, as [`lines`] reads them.
fn rule_text(line: &[u8]) -> Option<Cow<'_, str>> {
    let line = line.split(|&b| b == 0).next().unwrap_or_default();
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let skipped = line.starts_with(b"#") || line.iter().all(u8::is_ascii_whitespace);
    (!skipped).then(|| String::from_utf8_lossy(line))
}

/// `text` as an error message may echo it: at most `QUOTED_CHARS` (80)
/// characters, without trailing white space; where cut, `...` and the
/// whole length, so that a 10 MB field gives a short line. Control
/// characters but tabs are escaped (`\n`, `\u{1b}`): an echo neither
/// breaks the message's line nor drives the terminal.
///
/// ```
/// assert_eq!(rulefile::quote("R1 "), "R1");
/// let long = rulefile::quote(&"x".repeat(1000));
/// assert_eq!(long, format!("{}... (1000 characters)", "x".repeat(80)));
/// assert_eq!(rulefile::quote("3\n\nx\u{1b}[2J"), "3\\n\\nx\\u{1b}[2J");
/// ```
pub fn quote(text: &str) -> String {
    let text = text.trim_end();
    let whole = text.chars().count();
    let mut shown = String::new();
    for c in text.chars().take(QUOTED_CHARS) {
        if c.is_control() && c != '\t' {
            shown.extend(c.escape_default());
        } else {
            shown.push(c);
        }
    }
    if whole > QUOTED_CHARS {
        format!("{shown}... ({whole} characters)")
    } else {
        shown
    }
}

/// The problems a rule syntax finds in a line; its [`Display`](fmt::Display)
/// ends the message of an [`Error::Line`].
pub trait Problem: fmt::Display {
    /// What the syntax calls its rules, with their form, for the message
    /// about a file without any (`"<origin>: no <RULES>"`), e.g.
    /// `"routes ('R<prefix>/<depth> <port>' lines)"`.
    const RULES: &'static str;
}

/// A rule file that could not be read or parsed; `P` says what is wrong
/// with a line.
#[derive(Debug)]
pub enum Error<P> {
    /// The file could not be read.
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: io::Error,
    },
    /// A line is not a comment, blank, or valid rule.
    Line {
        /// The file (its path, usually).
        origin: String,
        /// 1-based line number.
        line: usize,
        /// The line as [`quote`] gives it.
        text: String,
        /// What is wrong with it.
        problem: P,
    },
    /// The file holds no rule (C l3fwd refuses such files too).
    NoRules {
        /// The file.
        origin: String,
    },
    /// A line longer than [`MAX_LINE_BYTES`].
    LongLine {
        /// The file.
        origin: String,
        /// 1-based line number.
        line: usize,
    },
    /// The file starts with a UTF-8 byte-order mark.
    ByteOrderMark {
        /// The file.
        origin: String,
    },
}

impl<P: Problem> fmt::Display for Error<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Io { path, source } => write!(f, "cannot read {}: {source}", path.display()),
            Self::Line {
                origin,
                line,
                text,
                problem,
            } => write!(f, "{origin}:{line}: '{text}': {problem}"),
            Self::NoRules { origin } => write!(f, "{origin}: no {}", P::RULES),
            Self::LongLine { origin, line } => {
                write!(f, "{origin}:{line}: line longer than {MAX_LINE_BYTES} bytes")
            }
            Self::ByteOrderMark { origin } => write!(
                f,
                "{origin}:1: the file starts with a UTF-8 byte-order mark (bytes EF BB BF), which C l3fwd refuses too: save it without one"
            ),
        }
    }
}

impl<P: Problem + fmt::Debug> std::error::Error for Error<P> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// Parses every rule line of `text` with `parse_line`, in order; `origin`
/// (usually the path) names the file in errors. The first line
/// `parse_line` rejects is an [`Error::Line`]; a text without rule lines is
/// [`Error::NoRules`], one starting with a byte-order mark
/// [`Error::ByteOrderMark`].
pub fn parse<R, P>(
    text: impl AsRef<[u8]>,
    origin: &str,
    mut parse_line: impl FnMut(Line<'_>) -> Result<R, P>,
) -> Result<Vec<R>, Error<P>> {
    let text = text.as_ref();
    check_start(text, origin)?;
    let rules = lines(text)
        .map(|(number, text)| parse_one(&mut parse_line, number, &text, origin))
        .collect::<Result<Vec<_>, _>>()?;
    some_rules(rules, origin)
}

/// Reads the file at `path` and parses it line by line as [`parse`] does,
/// the path naming it in errors; logs how many rules it holds and how long
/// that took. A line longer than [`MAX_LINE_BYTES`] is an
/// [`Error::LongLine`] (`/dev/zero` fails at once); a pipe or FIFO is read
/// as it comes, and the flag of [`stop_reading_on`] ends a read that waits.
pub fn load<R, P>(
    path: impl AsRef<Path>,
    mut parse_line: impl FnMut(Line<'_>) -> Result<R, P>,
) -> Result<Vec<R>, Error<P>> {
    let start = Instant::now();
    let path = path.as_ref();
    let origin = path.display().to_string();
    let io = |source| Error::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut reader = BufReader::new(read::Interruptible::open(path).map_err(io)?);
    let mut rules = Vec::new();
    let mut raw = Vec::new();
    for number in 1.. {
        raw.clear();
        let limit = MAX_LINE_BYTES as u64 + 1;
        if (&mut reader).take(limit).read_until(b'\n', &mut raw).map_err(io)? == 0 {
            break;
        }
        let line = raw.strip_suffix(b"\n").unwrap_or(&raw);
        if line.len() > MAX_LINE_BYTES {
            return Err(Error::LongLine { origin, line: number });
        }
        if number == 1 {
            check_start(line, &origin)?;
        }
        if let Some(text) = rule_text(line) {
            rules.push(parse_one(&mut parse_line, number, &text, &origin)?);
        }
    }
    let rules = some_rules(rules, &origin)?;
    log::info!("{origin}: {} rules read in {:.1?}", rules.len(), start.elapsed());
    Ok(rules)
}

/// Longest line [`load`] reads, in bytes: far above any rule with a
/// comment, and a bound on what a file without line ends can make it hold.
pub const MAX_LINE_BYTES: usize = 64 * 1024;

/// From now on, `flag` set (by a signal handler) ends a [`load`] that
/// waits for input, with an [`Error::Io`]. The first call wins.
pub fn stop_reading_on(flag: Arc<AtomicBool>) {
    // A second flag is ignored: the process has one set of signals.
    let _ = read::STOP.set(flag);
}

/// Refuses a text that starts with a byte-order mark.
fn check_start<P>(text: &[u8], origin: &str) -> Result<(), Error<P>> {
    if text.starts_with(BYTE_ORDER_MARK) {
        return Err(Error::ByteOrderMark {
            origin: origin.to_owned(),
        });
    }
    Ok(())
}

/// One rule line parsed, or its [`Error::Line`].
fn parse_one<R, P>(
    parse_line: &mut impl FnMut(Line<'_>) -> Result<R, P>,
    number: usize,
    text: &str,
    origin: &str,
) -> Result<R, Error<P>> {
    parse_line(Line { number, text }).map_err(|problem| Error::Line {
        origin: origin.to_owned(),
        line: number,
        text: quote(text),
        problem,
    })
}

/// `rules`, unless there are none.
fn some_rules<R, P>(rules: Vec<R>, origin: &str) -> Result<Vec<R>, Error<P>> {
    if rules.is_empty() {
        return Err(Error::NoRules {
            origin: origin.to_owned(),
        });
    }
    Ok(rules)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A syntax of single numbers.
    #[derive(Debug, PartialEq)]
    struct NotANumber;

    impl fmt::Display for NotANumber {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write!(f, "not a number")
        }
    }

    impl Problem for NotANumber {
        const RULES: &'static str = "numbers";
    }

    fn number(line: Line<'_>) -> Result<(usize, u64), NotANumber> {
        let value = parse_c_ulong(line.text.trim(), 0).ok_or(NotANumber)?;
        Ok((line.number, value))
    }

    fn numbers(text: impl AsRef<[u8]>) -> Result<Vec<(usize, u64)>, Error<NotANumber>> {
        parse(text, "t.cfg", number)
    }

    #[test]
    fn load_bounds_lines_at_max_line_bytes() {
        let path = std::env::temp_dir().join(format!("rulefile-long-{}.cfg", std::process::id()));
        let comment = |len: usize| format!("#{}\n", "c".repeat(len - 1));
        std::fs::write(&path, comment(MAX_LINE_BYTES) + "7\n").unwrap();
        assert_eq!(load(&path, number).unwrap(), [(2, 7)]);
        std::fs::write(&path, "7\n".to_owned() + &comment(MAX_LINE_BYTES + 1)).unwrap();
        let err = load(&path, number).unwrap_err().to_string();
        std::fs::remove_file(&path).unwrap();
        assert_eq!(err, format!("{}:2: line longer than 65536 bytes", path.display()));
    }

    #[test]
    fn c_ulong_bases() {
        assert_eq!(parse_c_ulong("24", 0), Some(24));
        assert_eq!(parse_c_ulong("0x18", 0), Some(24));
        assert_eq!(parse_c_ulong("0X18", 0), Some(24));
        assert_eq!(parse_c_ulong("030", 0), Some(24));
        assert_eq!(parse_c_ulong("0", 0), Some(0));
        assert_eq!(parse_c_ulong("+7", 0), Some(7));
        assert_eq!(parse_c_ulong("ff", 16), Some(255));
        assert_eq!(parse_c_ulong("0xff", 16), Some(255));
        assert_eq!(parse_c_ulong("12", 10), Some(12));
        // strtoul skips leading white space.
        assert_eq!(parse_c_ulong(" \t\n\x0b\x0c\r+0x1f", 0), Some(31));
    }

    #[test]
    fn c_ulong_rejects_partial_or_signed_numbers() {
        for bad in ["", " ", "0x", "08", "1x", "x", "-1", "0x+1", "++1", "+ 1", "1 "] {
            assert_eq!(parse_c_ulong(bad, 0), None, "{bad:?}");
        }
        assert_eq!(parse_c_ulong("0x10", 10), None);
        assert_eq!(parse_c_ulong("g", 16), None);
        assert_eq!(parse_c_ulong("99999999999999999999999", 0), None);
    }

    #[test]
    fn lines_skip_first_column_comments_and_blank_lines() {
        let text = "#c\n\n \t\r\n1\r\n #x\n\r\n2 \r\n3";
        let found: Vec<_> = lines(text.as_bytes()).collect();
        assert_eq!(
            found,
            [(4, "1".into()), (5, " #x".into()), (7, "2 ".into()), (8, "3".into())]
        );
    }

    #[test]
    fn parse_keeps_order_and_line_numbers() {
        assert_eq!(numbers("# n\n0x10\n\n010\n").unwrap(), [(2, 16), (4, 8)]);
    }

    #[test]
    fn line_error_names_origin_line_trimmed_text_and_problem() {
        let err = numbers("1\n\nx \t\r\n").unwrap_err();
        assert!(matches!(
            err,
            Error::Line {
                line: 3,
                problem: NotANumber,
                ..
            }
        ));
        assert_eq!(err.to_string(), "t.cfg:3: 'x': not a number");
        assert!(std::error::Error::source(&err).is_none());
    }

    #[test]
    fn bytes_c_reads_past_are_accepted() {
        // A comment with a byte that is not UTF-8; a NUL ends a line (a line
        // starting with one is empty).
        assert_eq!(
            numbers(b"# caf\xe9\n1\0 junk \xff\n\0x\n2\n").unwrap(),
            [(2, 1), (4, 2)]
        );
        // In a rule's own field the byte is an error, with its line number.
        assert_eq!(
            numbers(b"1\n2\xff\n").unwrap_err().to_string(),
            "t.cfg:2: '2\u{fffd}': not a number"
        );
    }

    #[test]
    fn byte_order_mark_is_named() {
        let err = numbers(b"\xEF\xBB\xBF1\n").unwrap_err().to_string();
        assert!(
            err.starts_with("t.cfg:1: the file starts with a UTF-8 byte-order mark"),
            "{err}"
        );
    }

    #[test]
    fn long_lines_are_quoted_cut() {
        let line = "x".repeat(10_000_000);
        let err = numbers(&line).unwrap_err().to_string();
        let cut = format!("{}... (10000000 characters)", "x".repeat(80));
        assert_eq!(err, format!("t.cfg:1: '{cut}': not a number"));
        assert_eq!(quote("é".repeat(80).as_str()), "é".repeat(80));
    }

    #[test]
    fn text_without_rules_is_an_error() {
        for text in ["", "# only a comment\n", "\n \n"] {
            let err = numbers(text).unwrap_err();
            assert_eq!(err.to_string(), "t.cfg: no numbers", "{text:?}");
        }
    }

    #[test]
    fn load_names_the_path() {
        let err = load("/nonexistent/rules.cfg", number).unwrap_err();
        assert_eq!(
            err.to_string(),
            "cannot read /nonexistent/rules.cfg: No such file or directory (os error 2)"
        );
        assert!(std::error::Error::source(&err).is_some());
        let path = std::env::temp_dir().join(format!("rulefile-{}.cfg", std::process::id()));
        std::fs::write(&path, "1\nx\n").unwrap();
        let err = load(&path, number).unwrap_err().to_string();
        std::fs::remove_file(&path).unwrap();
        assert_eq!(err, format!("{}:2: 'x': not a number", path.display()));
    }
}
