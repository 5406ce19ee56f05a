//! Guest halt polling (the cpuidle-haltpoll driver of KVM guests) for the
//! length of a latency run. An idle vCPU polls this long before it halts;
//! a halted vCPU needs the host to wake it, which costs a wakeup from
//! another CPU several microseconds. Linux's default is 200 us; some VMs
//! ship 0, which makes every reply the forwarder hands to sockperf's CPU
//! wait for that wakeup. The kernel's own forwarding never hands off (it
//! runs on the sender's CPU), so the setting is part of a fair comparison.

use std::path::{Path, PathBuf};

const PARAMETER: &str = "/sys/module/haltpoll/parameters/guest_halt_poll_ns";

/// The machine's halt polling, if it has cpuidle-haltpoll.
pub fn current() -> Option<u64> {
    read(Path::new(PARAMETER)).ok()
}

/// Halt polling set for a run; the earlier value comes back on drop (also
/// when the run fails or is interrupted by Ctrl-C).
pub struct HaltPoll {
    path: PathBuf,
    earlier: u64,
}

impl HaltPoll {
    /// Sets halt polling to `ns`.
    pub fn set(ns: u64) -> Result<HaltPoll, String> {
        HaltPoll::set_at(PathBuf::from(PARAMETER), ns)
    }

    fn set_at(path: PathBuf, ns: u64) -> Result<HaltPoll, String> {
        let earlier = read(&path).map_err(|e| {
            format!("--halt-poll-ns: {e}: this machine has no cpuidle-haltpoll (a KVM guest's idle driver)")
        })?;
        write(&path, ns)?;
        Ok(HaltPoll { path, earlier })
    }
}

impl Drop for HaltPoll {
    fn drop(&mut self) {
        if let Err(e) = write(&self.path, self.earlier) {
            eprintln!("restoring guest halt polling to {} ns: {e}", self.earlier);
        }
    }
}

fn read(path: &Path) -> Result<u64, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    text.trim()
        .parse()
        .map_err(|e| format!("{}: '{}': {e}", path.display(), text.trim()))
}

fn write(path: &Path, ns: u64) -> Result<(), String> {
    std::fs::write(path, ns.to_string()).map_err(|e| format!("{}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_for_the_run_and_restored_after() {
        let scratch = testkit::Scratch::new("halt-poll");
        let path = scratch.path("halt-pollNone");
        std::fs::write(&path, "0\n").unwrap();
        {
            let _run = HaltPoll::set_at(path.clone(), 200_000).unwrap();
            assert_eq!(read(&path), Ok(200_000));
        }
        assert_eq!(read(&path), Ok(0));
    }

    #[test]
    fn a_machine_without_the_driver_is_a_clear_error() {
        let missing = PathBuf::from("/nonexistent/guest_halt_poll_ns");
        let e = HaltPoll::set_at(missing, 1).err().unwrap();
        assert!(e.contains("no cpuidle-haltpoll"), "{e}");
    }
}
