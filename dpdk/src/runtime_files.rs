//! The files an EAL primary leaves when it exits: its runtime folder
//! (`config`, the fbarray files, `mp_socket`: several MB) and, on
//! hugepages, the page files of the segments still allocated at cleanup,
//! which keep their pages from the system. DPDK leaves both (a later
//! primary of the same prefix clears them), so a regression loop over
//! thousands of runs, each with its own prefix, filled the disk or /run.
//! [`remove_unless_shared`] takes them away unless another process still
//! uses them.

use std::collections::HashSet;
use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// DPDK's `--file-prefix` when none is given.
pub const DEFAULT_FILE_PREFIX: &str = "rte";

/// The runtime folder EAL makes for `prefix` (`eal_create_runtime_dir`):
/// under `/var/run/dpdk` for root, else under `$XDG_RUNTIME_DIR` (or
/// `/tmp`).
///
/// ```
/// assert!(dpdk::runtime_dir_of("p").ends_with("dpdk/p"));
/// ```
pub fn runtime_dir_of(prefix: &str) -> PathBuf {
    let is_root = fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0);
    let base = if is_root {
        PathBuf::from("/var/run")
    } else {
        std::env::var_os("XDG_RUNTIME_DIR").map_or_else(|| PathBuf::from("/tmp"), PathBuf::from)
    };
    base.join("dpdk").join(prefix)
}

/// The runtime folder EAL arguments `args` ask for: their last
/// `--file-prefix`, or DPDK's default.
pub(crate) fn runtime_dir_for(args: &[String]) -> PathBuf {
    runtime_dir_of(crate::eal_args::file_prefix(args).unwrap_or(DEFAULT_FILE_PREFIX))
}

/// Removes runtime folder `dir` and its prefix's hugepage files, unless
/// another process still uses them; says which file is in use if so. A
/// folder already gone is fine.
///
/// Every process attached to a prefix holds a lock on some of its files:
/// the primary an fcntl lock on `config`, every process flock locks on the
/// fbarray and page files it maps (DPDK's own `rte_fbarray_destroy` and
/// `clear_hugedir` test those). This process's own locks do not count: it
/// still holds some (the memzone fbarray is never detached, and a failed
/// `rte_eal_init` detaches nothing), so the kernel's list of locks
/// (`/proc/locks`) is read for other holders rather than probing with a
/// lock of our own.
pub(crate) fn remove_unless_shared(dir: &Path) -> Result<(), PathBuf> {
    let Some(prefix) = dir.file_name().and_then(|p| p.to_str()) else {
        return Ok(());
    };
    let Ok(entries) = fs::read_dir(dir) else {
        return Ok(());
    };
    let pages = hugepage_files(prefix);
    let files = entries.flatten().map(|e| e.path()).chain(pages.iter().cloned());
    let locked = locked_by_others();
    for file in files {
        if locked.contains(&key(&file)) {
            return Err(file);
        }
    }
    for page in &pages {
        let _ = fs::remove_file(page);
    }
    let _ = fs::remove_dir_all(dir);
    Ok(())
}

/// How `/proc/locks` names a file: device major, minor, inode.
fn key(file: &Path) -> (u32, u32, u64) {
    fs::metadata(file).map_or((0, 0, 0), |m| {
        (rustix::fs::major(m.dev()), rustix::fs::minor(m.dev()), m.ino())
    })
}

/// The files (device major, minor, inode) another process holds a lock
/// on, from `/proc/locks` (`1: FLOCK  ADVISORY  READ 1234 00:1a:5678 0
/// EOF`; a waiter's line has `->` after the number).
fn locked_by_others() -> HashSet<(u32, u32, u64)> {
    let me = std::process::id().to_string();
    let locks = fs::read_to_string("/proc/locks").unwrap_or_default();
    locks
        .lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().filter(|f| *f != "->").collect();
            let (pid, file) = (fields.get(4)?, fields.get(5)?);
            if *pid == me {
                return None;
            }
            let mut parts = file.split(':');
            let major = u32::from_str_radix(parts.next()?, 16).ok()?;
            let minor = u32::from_str_radix(parts.next()?, 16).ok()?;
            let inode = parts.next()?.parse().ok()?;
            Some((major, minor, inode))
        })
        .collect()
}

/// The page files of `prefix` (`PREFIXmap_N`, `eal_get_hugefile_path`) in
/// every hugetlbfs mount.
fn hugepage_files(prefix: &str) -> Vec<PathBuf> {
    let mounts = fs::read_to_string("/proc/self/mounts").unwrap_or_default();
    let name = format!("{prefix}map_");
    mounts
        .lines()
        .filter_map(|line| {
            let mut fields = line.split(' ');
            let mount = fields.nth(1)?;
            (fields.next()? == "hugetlbfs").then(|| PathBuf::from(mount))
        })
        .filter_map(|mount| fs::read_dir(mount).ok())
        .flat_map(|entries| entries.flatten())
        .filter(|e| e.file_name().to_str().is_some_and(|n| n.starts_with(&name)))
        .map(|e| e.path())
        .collect()
}

/// Ends every telemetry connection before EAL's cleanup unmaps the memory
/// DPDK's commands read. Telemetry answers each client on a thread of its
/// own that `rte_eal_cleanup` does not stop, and from DPDK 24.11 the
/// `/ethdev/*` commands take a lock that lives in that memory: a client
/// polling `/ethdev/stats` at exit (a monitor, `l3fwd-bench`) crashed the
/// process with SIGSEGV after the cleanup. The socket's path goes first,
/// so no client connects again; each accepted connection is then shut
/// down, so its thread reads the end and returns; a command already
/// running gets a moment to finish.
pub(crate) fn hang_up_telemetry_clients(runtime_dir: &std::path::Path) {
    use rustix::net::{getsockname, shutdown, sockopt, Shutdown, SocketAddrUnix};
    let socket = runtime_dir.join("dpdk_telemetry.v2");
    if std::fs::remove_file(&socket).is_err() {
        return; // no telemetry (--no-telemetry), or not ours
    }
    let Ok(fds) = std::fs::read_dir("/proc/self/fd") else {
        return;
    };
    let mut hung_up = 0;
    for fd in fds
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
    {
        // SAFETY: `fd` was open in this process when listed; it is only
        // queried, and shut down if it is one of telemetry's connections.
        // Nothing else closes descriptors at this point of the exit.
        let fd = unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) };
        let Ok(Ok(addr)) = getsockname(fd).map(SocketAddrUnix::try_from) else {
            continue;
        };
        let accepted = sockopt::socket_acceptconn(fd).is_ok_and(|listening| !listening);
        if accepted
            && addr
                .path()
                .is_some_and(|p| p.to_bytes() == socket.as_os_str().as_encoded_bytes())
        {
            let _ = shutdown(fd, Shutdown::Both);
            hung_up += 1;
        }
    }
    if hung_up > 0 {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|a| a.to_string()).collect()
    }

    #[test]
    fn the_folder_is_named_by_the_last_file_prefix_or_rte() {
        let dir = |list: &[&str]| runtime_dir_for(&args(list));
        assert_eq!(dir(&["x", "-l", "0"]), runtime_dir_of("rte"));
        assert_eq!(dir(&["x", "--file-prefix", "a"]), runtime_dir_of("a"));
        assert_eq!(
            dir(&["x", "--file-prefix=b", "--file-prefix", "c"]),
            runtime_dir_of("c")
        );
    }

    #[test]
    fn a_folder_whose_file_another_process_locks_is_kept() {
        let dir = std::env::temp_dir().join(format!("dpdk-runtime-files-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let file = dir.join("fbarray_memzone");
        fs::write(&file, b"").unwrap();
        // Our own lock does not keep it: we hold some to the end.
        let ours = fs::File::open(&file).unwrap();
        rustix::fs::flock(&ours, rustix::fs::FlockOperation::LockShared).unwrap();
        // Another process's does, as a secondary's would.
        // One process holds it, as sleep(1) after flock(1) on its fd 3.
        let mut other = std::process::Command::new("sh")
            .args(["-c", "exec 3<\"$0\" && flock --shared 3 && exec sleep 30"])
            .arg(&file)
            .spawn()
            .unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !locked_by_others().contains(&key(&file)) {
            assert!(std::time::Instant::now() < deadline, "flock(1) took no lock");
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert_eq!(remove_unless_shared(&dir), Err(file.clone()));
        assert!(dir.is_dir());
        other.kill().unwrap();
        other.wait().unwrap();
        assert_eq!(remove_unless_shared(&dir), Ok(()));
        assert!(!dir.exists());
        assert_eq!(remove_unless_shared(&dir), Ok(()), "a folder already gone");
    }
}
