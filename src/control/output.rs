//! Lines for stdout that never bring the forwarder down: `println!` panics
//! when stdout is a closed pipe (`l3fwd-rs ... | head -1`) or a full disk,
//! and a panic would skip the shutdown (EAL cleanup, the `--stats-json`
//! file). [`outln!`](crate::outln) writes the line if it can; after the first
//! failure it warns once on stderr and prints nothing more, and forwarding
//! goes on.

use std::fmt;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

/// An output that goes quiet after its first failed write.
pub struct LineOutput {
    lost: AtomicBool,
}

impl LineOutput {
    pub const fn new() -> Self {
        LineOutput {
            lost: AtomicBool::new(false),
        }
    }

    /// Writes `line` and a newline to `out`, unless an earlier write
    /// failed. Returns whether it was written.
    pub fn write_line(&self, out: &mut impl Write, line: fmt::Arguments<'_>) -> bool {
        if self.lost.load(Relaxed) {
            return false;
        }
        match writeln!(out, "{line}").and_then(|()| out.flush()) {
            Ok(()) => true,
            Err(error) => {
                if !self.lost.swap(true, Relaxed) {
                    log::warn!("cannot write to stdout ({error}): no more statistics are printed; forwarding goes on");
                }
                false
            }
        }
    }
}

impl Default for LineOutput {
    fn default() -> Self {
        Self::new()
    }
}

/// The process's stdout.
static STDOUT: LineOutput = LineOutput::new();

/// Prints one line to stdout, as [`LineOutput::write_line`] does.
pub fn print_line(line: fmt::Arguments<'_>) {
    STDOUT.write_line(&mut std::io::stdout().lock(), line);
}

/// `println!` that does not panic: see the [module docs](crate::control::output).
#[macro_export]
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::control::output::print_line(format_args!($($arg)*))
    };
}

/// Prints an error line to stderr, if stderr can take it: `eprintln!`
/// panics on a closed or full stderr (`2>/dev/full`), which would turn an
/// exit status of 1 into an abort.
pub fn error_line(line: fmt::Arguments<'_>) {
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

/// `eprintln!` that does not panic: see [`error_line`].
#[macro_export]
macro_rules! errln {
    ($($arg:tt)*) => {
        $crate::control::output::error_line(format_args!($($arg)*))
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A writer like a pipe whose reader has gone.
    struct ClosedPipe;

    impl Write for ClosedPipe {
        fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
            Err(std::io::ErrorKind::BrokenPipe.into())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_failed_write_stops_further_lines_without_panicking() {
        let output = LineOutput::new();
        let mut buffer = Vec::new();
        assert!(output.write_line(&mut buffer, format_args!("rates {}", 1)));
        assert_eq!(buffer, b"rates 1\n");
        assert!(!output.write_line(&mut ClosedPipe, format_args!("lost")));
        assert!(!output.write_line(&mut buffer, format_args!("not any more")));
        assert_eq!(buffer, b"rates 1\n");
    }
}
