//! The signals l3fwd-rs answers: the ones that stop it as Ctrl-C does,
//! and SIGHUP, a stop during set-up and a reload once forwarding.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use signal_hook::consts::SIGHUP;
use signal_hook::SigId;

/// The signals that stop l3fwd-rs as Ctrl-C does (flush, summary,
/// `--stats-json`, EAL cleanup): every one whose default would kill it
/// silently, and SIGHUP until forwarding starts ([`Hangup`]). Those that
/// dump core by default (SIGQUIT, SIGABRT, SIGSEGV, ...) keep that
/// default: they ask for a post-mortem.
pub const STOP_SIGNALS: [i32; 10] = {
    use signal_hook::consts::*;
    [
        SIGINT, SIGTERM, SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM, SIGPROF, SIGIO, SIGXCPU, SIGXFSZ,
    ]
};

/// SIGHUP: during set-up a stop, as for a terminal closed before
/// l3fwd-rs got going; once forwarding, a reload of the rule files (the
/// daemon convention).
pub struct Hangup(SigId);

impl Hangup {
    /// From now on SIGHUP sets the flag returned instead of stopping.
    pub fn reloads_from_now(self) -> std::io::Result<Arc<AtomicBool>> {
        let reload = Arc::new(AtomicBool::new(false));
        signal_hook::flag::register(SIGHUP, Arc::clone(&reload))?;
        signal_hook::low_level::unregister(self.0);
        Ok(reload)
    }
}

/// From now on every signal of [`STOP_SIGNALS`], and SIGHUP until
/// [`Hangup::reloads_from_now`], sets `quit`.
pub fn stop_on_signals(quit: &Arc<AtomicBool>) -> std::io::Result<Hangup> {
    for sig in STOP_SIGNALS {
        signal_hook::flag::register(sig, Arc::clone(quit))?;
    }
    signal_hook::flag::register(SIGHUP, Arc::clone(quit)).map(Hangup)
}
