//! `l3fwd-ctl trace N`: the next N packets the lcores forward, each
//! recorded as it is sent (its first bytes before and after the rewrite,
//! where it came in, what the lookup answered and where it went) into a
//! bounded channel the control thread prints from.
//!
//! Untraced, the lcores pay one relaxed load per batch ([`Trace::armed`]):
//! the traced batch is a second instance of the same code
//! ([`crate::dataplane::forward`]), chosen per batch, out of the way.

use std::sync::atomic::{AtomicU32, Ordering::Relaxed};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::Arc;

use crate::dataplane::counters::DropReason;
use crate::dataplane::lookup::Route;

/// Bytes of each traced frame kept: the Ethernet, IP (IPv4 with options
/// up to 40 bytes, IPv6 fixed) and TCP/UDP port fields.
pub const SNAPSHOT: usize = 96;

/// Most packets one trace asks for: the channel holds as many.
pub const MAX_TRACE: u32 = 1024;

/// Where a packet came in from: a port's RX queue, or an event port.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Input {
    Queue {
        port: u16,
        queue: u16,
    },
    /// Handed over by the event device (eventdev mode).
    Event {
        port: u16,
    },
}

impl Input {
    pub fn port(self) -> u16 {
        match self {
            Input::Queue { port, .. } | Input::Event { port } => port,
        }
    }
}

/// Where a packet went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fate {
    /// Rewritten and buffered for this port's TX queue.
    Sent(u16),
    Dropped(DropReason),
}

/// One traced packet.
#[derive(Clone)]
pub struct Record {
    pub lcore: u32,
    pub input: Input,
    /// The frame's length.
    pub len: usize,
    /// Its first bytes as received (zeros past its end).
    pub before: [u8; SNAPSHOT],
    /// Its first bytes as sent (as received if it was dropped).
    pub after: [u8; SNAPSHOT],
    /// What the lookup answered.
    pub route: Route,
    pub fate: Fate,
}

impl Record {
    /// A record of `frame` as it comes to the send step.
    pub(crate) fn new(lcore: u32, input: Input, frame: &[u8], route: Route) -> Record {
        let before = snapshot(frame);
        Record {
            lcore,
            input,
            len: frame.len(),
            before,
            after: before,
            route,
            fate: Fate::Dropped(DropReason::Invalid),
        }
    }

    /// The bytes of the frame as it leaves.
    pub(crate) fn rewritten(&mut self, frame: &[u8]) {
        self.after = snapshot(frame);
    }

    /// The recorded bytes of the frame as received.
    pub fn frame_before(&self) -> &[u8] {
        &self.before[..self.len.min(SNAPSHOT)]
    }

    /// The recorded bytes of the frame as sent.
    pub fn frame_after(&self) -> &[u8] {
        &self.after[..self.len.min(SNAPSHOT)]
    }
}

fn snapshot(frame: &[u8]) -> [u8; SNAPSHOT] {
    let mut bytes = [0; SNAPSHOT];
    let n = frame.len().min(SNAPSHOT);
    bytes[..n].copy_from_slice(&frame[..n]);
    bytes
}

/// The lcores' side of the trace: how many packets are still wanted, and
/// where their records go.
pub struct Trace {
    wanted: AtomicU32,
    records: SyncSender<Record>,
}

/// The control thread's side: arms the trace and takes its records.
pub struct TraceReader {
    trace: Arc<Trace>,
    records: Receiver<Record>,
}

impl Trace {
    /// Whether packets are wanted: the lcores' one test per batch.
    #[inline(always)]
    pub fn armed(&self) -> bool {
        self.wanted.load(Relaxed) != 0
    }

    /// Claims the next packet for the trace; false once enough are.
    pub(crate) fn claim(&self) -> bool {
        self.wanted.fetch_update(Relaxed, Relaxed, |w| w.checked_sub(1)).is_ok()
    }

    /// Hands a record to the control thread; never waits (the channel
    /// holds every packet a trace can claim).
    pub(crate) fn keep(&self, record: Record) {
        let _ = self.records.try_send(record);
    }
}

/// A trace nobody has asked for yet.
impl Default for TraceReader {
    fn default() -> TraceReader {
        let (records, taken) = sync_channel(MAX_TRACE as usize);
        let trace = Trace {
            wanted: AtomicU32::new(0),
            records,
        };
        TraceReader {
            trace: Arc::new(trace),
            records: taken,
        }
    }
}

impl TraceReader {
    /// Asks the lcores for the next `packets` packets (at most
    /// [`MAX_TRACE`]), dropping what an earlier trace left behind.
    pub fn start(&self, packets: u32) {
        self.stop();
        self.trace.wanted.store(packets.min(MAX_TRACE), Relaxed);
    }

    /// Wants no more packets; what was recorded is dropped.
    pub fn stop(&self) {
        self.trace.wanted.store(0, Relaxed);
        while self.records.try_recv().is_ok() {}
    }

    /// The next record, if one came.
    pub fn next(&self) -> Option<Record> {
        self.records.try_recv().ok()
    }

    /// The lcores' side, for their tasks.
    pub fn trace(&self) -> Arc<Trace> {
        Arc::clone(&self.trace)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claims_stop_at_what_was_asked_and_records_come_through() {
        let reader = TraceReader::default();
        let trace = reader.trace();
        assert!(!trace.armed() && !trace.claim());
        reader.start(2);
        assert!(trace.armed());
        for _ in 0..2 {
            assert!(trace.claim());
            trace.keep(Record::new(
                1,
                Input::Queue { port: 0, queue: 0 },
                &[1; 200],
                Route::port(1),
            ));
        }
        assert!(!trace.claim() && !trace.armed());
        let r = reader.next().unwrap();
        assert_eq!((r.len, r.frame_before().len()), (200, SNAPSHOT));
        assert!(reader.next().is_some() && reader.next().is_none());
    }

    #[test]
    fn a_new_trace_drops_what_the_last_left_behind() {
        let reader = TraceReader::default();
        let trace = reader.trace();
        reader.start(MAX_TRACE + 5);
        while trace.claim() {
            trace.keep(Record::new(0, Input::Event { port: 0 }, &[0; 10], Route::NO_MATCH));
        }
        reader.start(1);
        assert!(reader.next().is_none());
        reader.stop();
        assert!(!trace.armed());
    }
}
