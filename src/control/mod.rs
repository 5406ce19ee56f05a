//! What runs beside the lcores: the control thread ([`thread`]: rate
//! lines, `--duration`, the pool watch), the `l3fwd-ctl` socket
//! ([`socket`]) and the live tables it changes ([`live`]), the summary at
//! exit ([`summary`], [`stats_json`]), stdout lines that never stop the
//! forwarder ([`output`]), the signals that stop or reload it
//! ([`signals`]), `--metrics` ([`metrics`]) and `trace`'s lines ([`trace`]).

pub mod live;
pub mod metrics;
pub mod output;
pub mod protocol;
pub mod signals;
pub mod socket;
pub mod stats_json;
pub mod summary;
pub mod thread;
pub mod trace;
