//! Ctrl-C and SIGTERM only set a flag, so that a run unwinds through the
//! drops that stop its processes and remove what it set up, instead of
//! dying with them in place.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::thread::sleep;
use std::time::{Duration, Instant};

/// Whether the user asked to stop; the run checks between steps.
pub fn interrupted() -> bool {
    flag().load(Ordering::Relaxed)
}

/// SIGINT and SIGTERM set the flag instead of ending the process. Children
/// in the same process group get Ctrl-C as well and end their run early.
pub fn catch_signals() -> Result<(), String> {
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, Arc::clone(flag())).map_err(|e| format!("signal handler: {e}"))?;
    }
    Ok(())
}

/// Sleeps `duration`, or less if interrupted (then an error).
pub fn pause(duration: Duration) -> Result<(), String> {
    const STEP: Duration = Duration::from_millis(100);
    let end = Instant::now() + duration;
    loop {
        if interrupted() {
            return Err("interrupted".into());
        }
        let left = end.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Ok(());
        }
        sleep(left.min(STEP));
    }
}

fn flag() -> &'static Arc<AtomicBool> {
    static FLAG: OnceLock<Arc<AtomicBool>> = OnceLock::new();
    FLAG.get_or_init(|| Arc::new(AtomicBool::new(false)))
}
