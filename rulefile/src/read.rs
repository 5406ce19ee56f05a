//! A rule file read so that nothing waits forever: a FIFO with no writer
//! (whose blocking `open` and reads a signal handler with `SA_RESTART`
//! would not end) is opened without blocking and polled with a timeout,
//! checking the stop flag between waits.

use std::io;
use std::os::fd::OwnedFd;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::{Arc, OnceLock};

use rustix::event::{poll, PollFd, PollFlags, Timespec};
use rustix::fs::{Mode, OFlags};

/// The flag that ends a waiting read (see [`crate::stop_reading_on`]).
pub(crate) static STOP: OnceLock<Arc<AtomicBool>> = OnceLock::new();

/// How long one wait lasts before the stop flag is checked again.
const WAIT: Timespec = Timespec {
    tv_sec: 0,
    tv_nsec: 100_000_000,
};

/// A file descriptor opened non-blocking, read only once `poll` says so.
pub(crate) struct Interruptible(OwnedFd);

impl Interruptible {
    pub(crate) fn open(path: &Path) -> io::Result<Self> {
        let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC;
        Ok(Self(rustix::fs::open(path, flags, Mode::empty())?))
    }

    /// Waits until the file can be read (or its writer left), or the stop
    /// flag is set. A FIFO whose writer has not come yet polls as not
    /// ready, where a read would return end-of-file at once.
    fn wait_readable(&self) -> io::Result<()> {
        loop {
            if STOP.get().is_some_and(|stop| stop.load(Relaxed)) {
                return Err(io::Error::other("stopped by a signal while waiting for input"));
            }
            let mut fds = [PollFd::new(&self.0, PollFlags::IN)];
            match poll(&mut fds, Some(&WAIT)) {
                Ok(0) | Err(rustix::io::Errno::INTR) => continue,
                Ok(_) => return Ok(()),
                Err(e) => return Err(e.into()),
            }
        }
    }
}

impl io::Read for Interruptible {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            self.wait_readable()?;
            match rustix::io::read(&self.0, &mut *buf) {
                Err(rustix::io::Errno::AGAIN | rustix::io::Errno::INTR) => continue,
                result => return Ok(result?),
            }
        }
    }
}
