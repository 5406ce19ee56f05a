//! One measured run: start a forwarder, wait until it forwards, count its TX packets
//! over a window, stop it. Also how long it took to forward its first packet and how
//! much memory it holds.

use std::io;
use std::path::Path;
use std::process::{Command, ExitStatus};
use std::thread::sleep;
use std::time::{Duration, Instant};
use testkit::{Process, Stop, Telemetry};

const PORTS: u16 = 2;
/// Until the first packet is sent, telemetry is read this often: the
/// resolution of [`Sample::first_tx_secs`].
const START_POLL: Duration = Duration::from_millis(10);
/// ...and the packets received, this often.
const START_RX_POLL: Duration = Duration::from_millis(500);
/// A forwarder that has received packets for this long without sending
/// one drops them all (rules that route none of its traffic): a failure
/// now, not at the start timeout (minutes for large tables). Long enough
/// for a first burst's way through valgrind or a software event device.
const SENDS_NOTHING_AFTER: Duration = Duration::from_secs(30);

#[derive(Clone, Copy)]
pub struct Timing {
    /// EAL init with --no-huge, tables and pcap setup take seconds; more
    /// than this means something is wrong.
    pub start_timeout: Duration,
    pub warmup: Duration,
    pub window: Duration,
}

/// What one run measured.
#[derive(Clone, Copy, PartialEq, Debug)]
pub struct Sample {
    /// TX packets of both ports per second over the window, in millions.
    pub mpps: f64,
    /// Seconds from starting the process to the first telemetry read that
    /// shows a packet sent.
    pub first_tx_secs: f64,
    /// Peak resident memory (VmHWM) at the end of the window, in MB.
    pub rss_mb: f64,
    /// l3fwd-rs's busy TSC cycles per received packet over the whole run
    /// (its `--stats-json`): the work of its forwarding lcores, idle polls
    /// left out. None for C and testpmd, which do not count them.
    pub cycles_per_packet: Option<f64>,
}

/// `sample`, unless the process it came from did not stop cleanly.
pub fn stopped_after(sample: Result<Sample, String>, stopped: Result<ExitStatus, String>) -> Result<Sample, String> {
    let sample = sample?;
    match stopped {
        Ok(_) => Ok(sample),
        Err(e) => Err(format!("measured {:.2} Mpps, but {e}", sample.mpps)),
    }
}

/// A forwarder that has sent its first packets, with its telemetry socket;
/// asked to stop if dropped while still running.
pub struct Forwarding {
    process: Process,
    telemetry: Telemetry,
    /// Seconds from starting the process to the first telemetry read that
    /// shows a packet sent.
    pub first_tx_secs: f64,
}

impl Forwarding {
    /// Starts `cmd` (EAL file prefix `prefix`, output into
    /// [`testkit::log_files`]`(logs)`) and waits until it forwards, at most
    /// `timeout`. A process that does not is killed.
    pub fn start(cmd: Command, stop: Stop, prefix: &str, logs: &Path, timeout: Duration) -> Result<Forwarding, String> {
        let started = Instant::now();
        let mut process = Process::spawn(cmd, prefix, logs, stop).map_err(|e| format!("cannot start {e}"))?;
        let wait_until = |what: &str| {
            if started.elapsed() > timeout {
                return Err(format!("{what} after {}s", timeout.as_secs()));
            }
            sleep(START_POLL);
            Ok(())
        };
        let telemetry = loop {
            process.check_alive()?;
            if let Ok(t) = process.telemetry() {
                break t;
            }
            wait_until("no telemetry socket")?;
        };
        let mut run = Forwarding {
            process,
            telemetry,
            first_tx_secs: 0.0,
        };
        // Warm-up starts once packets flow, so slow start-up does not eat into it.
        let (mut silence, mut rx_read) = (Silence::default(), None::<Instant>);
        while run.tx_packets().map_err(|e| run.process.why_lost(e))?.unwrap_or(0) == 0 {
            if rx_read.is_none_or(|at| at.elapsed() >= START_RX_POLL) {
                let rx = run.telemetry.ipackets_of_all().map_err(|e| run.process.why_lost(e))?;
                let now = Instant::now();
                rx_read = Some(now);
                silence.received(rx, now)?;
            }
            wait_until("forwarded nothing")?;
        }
        run.first_tx_secs = started.elapsed().as_secs_f64();
        Ok(run)
    }

    /// Its TX rate over `timing.window`, after `timing.warmup`.
    pub fn sample(&mut self, timing: &Timing) -> Result<Sample, String> {
        sleep(timing.warmup);
        let (before, start) = (self.opackets()?, Instant::now());
        sleep(timing.window);
        let (after, end) = (self.opackets()?, Instant::now());
        let rss_mb = peak_rss_mb(self.pid()).ok_or("cannot read the process's memory use")?;
        Ok(Sample {
            mpps: after.saturating_sub(before) as f64 / (end - start).as_secs_f64() / 1e6,
            first_tx_secs: self.first_tx_secs,
            rss_mb,
            cycles_per_packet: None,
        })
    }

    /// Freezes the process (SIGSTOP) with its tables, pool and ports as
    /// they are, so that another can run alone; [`Self::resume`] goes on.
    pub fn pause(&self) -> Result<(), String> {
        self.process.signal("STOP").map_err(|e| e.to_string())
    }

    pub fn resume(&self) -> Result<(), String> {
        self.process.signal("CONT").map_err(|e| e.to_string())
    }

    /// See [`Telemetry::set_timeout`].
    pub fn set_telemetry_timeout(&self, timeout: Duration) -> Result<(), String> {
        self.telemetry
            .set_timeout(timeout)
            .map_err(|e| format!("telemetry: {e}"))
    }

    pub fn pid(&self) -> u32 {
        self.process.pid()
    }

    /// TX packets of both ports so far.
    pub fn opackets(&mut self) -> Result<u64, String> {
        match self.tx_packets() {
            Ok(Some(n)) => Ok(n),
            Ok(None) => Err("ports disappeared from telemetry".into()),
            Err(e) => Err(self.process.why_lost(e)),
        }
    }

    /// TX packets of both ports; None while a port is not set up.
    fn tx_packets(&self) -> io::Result<Option<u64>> {
        (0..PORTS).map(|port| self.telemetry.opackets(port)).sum()
    }

    /// Stops the process ([`Process::stop_well`]).
    pub fn stop(&mut self) -> Result<ExitStatus, String> {
        self.process.stop_well()
    }

    /// [`Self::stop`] for a process whose exit may be slow (under
    /// valgrind): killed for not stopping in time is no failure, only a
    /// note (`Some`); exiting with an error still is one.
    pub fn stop_slowly(&mut self) -> Result<Option<String>, String> {
        match self.process.stop() {
            Ok(status) => self.process.ended_well(status).map(|_| None),
            Err(killed) => Ok(Some(killed)),
        }
    }
}

/// What a forwarder that has sent nothing yet has received.
#[derive(Default)]
struct Silence {
    /// When it was first seen to have received a packet.
    first_rx: Option<Instant>,
}

impl Silence {
    /// `rx` packets received so far, read at `now`, and none sent: an
    /// error once it has received for [`SENDS_NOTHING_AFTER`].
    fn received(&mut self, rx: u64, now: Instant) -> Result<(), String> {
        let since = match self.first_rx {
            _ if rx == 0 => return Ok(()),
            Some(since) => since,
            None => *self.first_rx.insert(now),
        };
        if now.duration_since(since) < SENDS_NOTHING_AFTER {
            return Ok(());
        }
        Err(format!(
            "received {rx} packets and sent none in {}s: its rules route none of its traffic, or it drops it (its log counts why)",
            SENDS_NOTHING_AFTER.as_secs()
        ))
    }
}

impl Drop for Forwarding {
    fn drop(&mut self) {
        // Asked before Process's drop would kill it, so that EAL cleans up.
        let _ = self.process.stop();
    }
}

/// VmHWM of process `pid`: the most memory it has held resident, in MB.
fn peak_rss_mb(pid: u32) -> Option<f64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find_map(|l| l.strip_prefix("VmHWM:"))?;
    let kb: f64 = line.trim().strip_suffix("kB")?.trim().parse().ok()?;
    Some(kb / 1024.0)
}

/// Busy cycles per received packet from an l3fwd-rs `--stats-json` file
/// (the sum over its lcores); None if it holds none.
pub fn cycles_per_packet(stats_json: &Path) -> Option<f64> {
    let text = std::fs::read_to_string(stats_json).ok()?;
    let stats: serde_json::Value = serde_json::from_str(&text).ok()?;
    let forwarded = &stats["forwarded"];
    let (cycles, rx) = (forwarded["busy_cycles"].as_f64()?, forwarded["rx"].as_f64()?);
    (rx > 0.0).then(|| cycles / rx)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_forwarder_that_receives_and_sends_nothing_fails_after_a_grace() {
        let t0 = Instant::now();
        let mut silence = Silence::default();
        assert!(silence.received(0, t0).is_ok(), "nothing received yet");
        assert!(
            silence.received(0, t0 + 2 * SENDS_NOTHING_AFTER).is_ok(),
            "still starting"
        );
        let first = t0 + 2 * SENDS_NOTHING_AFTER;
        assert!(silence.received(64, first + Duration::from_secs(1)).is_ok());
        assert!(
            silence.received(512, first + SENDS_NOTHING_AFTER).is_ok(),
            "the grace counts from the first packet"
        );
        let err = silence
            .received(1024, first + SENDS_NOTHING_AFTER + Duration::from_secs(2))
            .unwrap_err();
        assert!(err.starts_with("received 1024 packets and sent none in 30s"), "{err}");
    }

    #[test]
    fn cycles_per_packet_come_from_the_forwarded_totals() {
        let scratch = testkit::Scratch::new("l3fwd-bench-cycles");
        let dir = scratch.dir();
        let file = |name: &str, text: &str| {
            let path = dir.join(name);
            std::fs::write(&path, text).unwrap();
            path
        };
        let busy = file("busy.json", r#"{"forwarded": {"busy_cycles": 700, "rx": 10}}"#);
        assert_eq!(cycles_per_packet(&busy), Some(70.0));
        let idle = file("idle.json", r#"{"forwarded": {"busy_cycles": 0, "rx": 0}}"#);
        assert_eq!(cycles_per_packet(&idle), None);
        let cut = file("cut.json", r#"{"forwarded": {"busy_"#);
        assert_eq!(cycles_per_packet(&cut), None);
        assert_eq!(cycles_per_packet(&dir.join("absent.json")), None);
    }
}
