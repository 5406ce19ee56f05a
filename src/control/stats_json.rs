//! `--stats-json`: checked before any set-up, written at exit, and never
//! waited on for long. A FIFO's reader may never come, or stop reading
//! once the pipe's buffer is full; neither holds start-up or the exit.

use std::io;
use std::os::fd::OwnedFd;
use std::path::Path;
use std::time::{Duration, Instant};

use rustix::event::{poll, PollFd, PollFlags, Timespec};
use rustix::fs::{Mode, OFlags};
use rustix::io::Errno;

/// How long the JSON may take to go out at exit: time enough for any
/// reader that reads, and a stop within seconds of the signal.
pub const WRITE_DEADLINE: Duration = Duration::from_secs(2);

/// Fails now, before any set-up, if `--stats-json` could not be written at
/// exit. Creates the file (empty until then). A FIFO is opened for reading
/// too, which does not wait for a reader, and returned to be held open: the
/// JSON written at exit then goes into its buffer instead of waiting for a
/// reader that may never come.
pub fn check_writable(path: &Path) -> Result<Option<std::fs::File>, String> {
    use std::os::unix::fs::FileTypeExt;
    let fifo = std::fs::metadata(path).is_ok_and(|m| m.file_type().is_fifo());
    let mut options = std::fs::OpenOptions::new();
    if fifo {
        options.read(true).write(true);
    } else {
        options.append(true).create(true);
    }
    let file = options
        .open(path)
        .map_err(|e| format!("--stats-json {}: {e}", path.display()))?;
    Ok(fifo.then_some(file))
}

/// Writes `text` to `path` (replacing a regular file's contents) within
/// [`WRITE_DEADLINE`]; a reader that takes no more by then gets a cut
/// JSON, and the error says how much of it went out.
pub fn write(path: &Path, text: &str) -> io::Result<()> {
    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::TRUNC | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let fd = rustix::fs::open(path, flags, Mode::from_bits_truncate(0o666))?;
    write_within(&fd, text.as_bytes(), Instant::now() + WRITE_DEADLINE)
}

fn write_within(fd: &OwnedFd, bytes: &[u8], deadline: Instant) -> io::Result<()> {
    let mut written = 0;
    while written < bytes.len() {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!(
                    "its reader took {written} of {} bytes in {} s and no more",
                    bytes.len(),
                    WRITE_DEADLINE.as_secs()
                ),
            ));
        }
        // Under a second: the nanoseconds are the whole wait.
        let wait = Timespec {
            tv_sec: 0,
            tv_nsec: left.min(Duration::from_millis(100)).subsec_nanos().into(),
        };
        match poll(&mut [PollFd::new(fd, PollFlags::OUT)], Some(&wait)) {
            Ok(_) | Err(Errno::INTR) => {}
            Err(e) => return Err(e.into()),
        }
        match rustix::io::write(fd, &bytes[written..]) {
            Ok(n) => written += n,
            Err(Errno::AGAIN | Errno::INTR) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}
