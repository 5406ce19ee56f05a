//! One scratch directory per test (or run): where its files and logs go.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;

use crate::workspace;

/// A directory under `target/test-runs` (or `/tmp`, [`Scratch::short`]),
/// named `NAME-PID-N` (unique to this process and call), for a test's
/// files: rule files, pcaps, logs.
/// Removed when dropped, unless the thread is panicking: a failed test
/// leaves its files for a look.
pub struct Scratch {
    dir: PathBuf,
}

impl Scratch {
    /// Creates `target/test-runs/NAME-PID-N`.
    pub fn new(name: &str) -> Scratch {
        Scratch::under(&workspace().join("target/test-runs"), name)
    }

    /// Creates `NAME-PID-N` in the system's temporary folder (`/tmp`): for
    /// paths that must be short (DPDK 22.11 cuts device arguments a
    /// secondary process reads at 63 bytes).
    pub fn short(name: &str) -> Scratch {
        Scratch::under(&std::env::temp_dir(), name)
    }

    fn under(parent: &Path, name: &str) -> Scratch {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let unique = format!("{name}-{}-{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed));
        let dir = parent.join(unique);
        // A leftover of an earlier process of the same id.
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap_or_else(|err| panic!("create {}: {err}", dir.display()));
        // Canonical, to compare with the paths in /proc/PID/fd.
        let dir = fs::canonicalize(&dir).unwrap_or_else(|err| panic!("{}: {err}", dir.display()));
        Scratch { dir }
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The path of `name` inside the directory.
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// Writes `text` to `name` inside the directory; returns its path, as
    /// a command-line argument.
    pub fn file(&self, name: &str, text: &str) -> String {
        let path = self.path(name);
        fs::write(&path, text).unwrap_or_else(|err| panic!("write {}: {err}", path.display()));
        path.display().to_string()
    }

    /// The text of `name` inside the directory; empty if there is none
    /// (a log not written yet).
    pub fn read(&self, name: &str) -> String {
        fs::read_to_string(self.path(name)).unwrap_or_default()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if !thread::panicking() {
            let _ = fs::remove_dir_all(&self.dir);
        }
    }
}
