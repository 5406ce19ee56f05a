//! `l3fwd-bench update`: l3fwd-rs's forwarding rate while its tables change
//! through `l3fwd-ctl -` at set rates (LPM and FIB IPv4 and IPv6 routes,
//! EM flows, on router-size generated tables; ACL rules), the changes it applies per second,
//! and the time a `reload` of the whole table takes beside C l3fwd's
//! restart to its first packet on the same table. Table, JSON and a plot.

mod changes;
mod plot;

use crate::cbuild::Build;
use crate::command;
use crate::common::{Common, SCALE_START_TIMEOUT};
use crate::configs::{Config, Forwarder, Variant};
use crate::failures::Failures;
use crate::files::{require, write_json};
use crate::mode::Mode;
use crate::pool::Pool;
use crate::run::{Forwarding, Timing};
use crate::{hugepages, interrupt, machine, traffic};
use changes::{Changes, Rate, Target};
use serde::{Deserialize, Serialize};
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::{self, sleep};
use std::time::{Duration, Instant};

#[derive(clap::Args)]
pub struct UpdateArgs {
    #[command(flatten)]
    common: Common,
    /// Change rates per second, comma-separated (10K = 10000); max: as fast as `l3fwd-ctl -` sends
    #[arg(long, value_delimiter = ',', value_parser = Rate::parse, default_value = "0,1K,10K,100K,max")]
    rates: Vec<Rate>,
    /// Tables to change, comma-separated (a mode none of them is in is not run, nor reloaded); also
    /// fib-v4, fib-v6 (in place from DPDK 24.11 and 25.11; on 22.11 each batch is a rebuild)
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        default_value = "lpm-v4,lpm-v6,fib-v4,fib-v6,em,acl"
    )]
    targets: Vec<Target>,
    /// Small tables (10K IPv4 routes, 2K IPv6, 10K flows), l3fwd-rs's pool of 32K mbufs and rates
    /// 0, 1K, max: a smoke test for a shared machine; the real run needs a quiet one. C l3fwd keeps
    /// the pool it was built with (--mbufs), and the hugepages are reserved for it
    #[arg(long)]
    quick: bool,
    /// IPv4 exact-match rules
    #[arg(long, default_value_t = 1_000_000)]
    em_rules: usize,
    /// IPv4 ACL deny rules, before the routes of the default ACL files (each
    /// change rebuilds the IPv4 classifier)
    #[arg(long, default_value_t = 10_000)]
    acl_rules: usize,
    /// IPv4 LPM routes
    #[arg(long, default_value_t = 1_000_000)]
    v4_routes: usize,
    /// IPv6 LPM routes
    #[arg(long, default_value_t = 230_000)]
    v6_routes: usize,
    /// Frames in each port's pcap file
    #[arg(long, default_value_t = 131_072)]
    frames: usize,
    /// Entries each run adds beyond its table and deletes again, over and over
    #[arg(long, default_value_t = 10_000)]
    span: u32,
    /// mbufs per pool (the C binary is built with it; --quick gives l3fwd-rs fewer)
    #[arg(long, default_value_t = 1 << 20)]
    mbufs: u32,
    /// EAL memory (-m) in MB: a shadow-swap change holds two tables for a moment
    #[arg(long, default_value_t = 8192)]
    memory: u32,
    #[arg(long, default_value = "target/release/l3fwd-ctl")]
    ctl_bin: PathBuf,
    /// C l3fwd for the restart time, built there with --mbufs; skipped if it cannot be built (a C
    /// that fails to start fails the run)
    #[arg(long, default_value = "target/c-l3fwd-scale/dpdk-l3fwd")]
    c_scale_bin: PathBuf,
    #[arg(long, default_value = "target/release/l3fwd-gen")]
    gen_bin: PathBuf,
    /// Where update.json, the plots, traffic and logs go
    #[arg(long, default_value = "target/bench/update")]
    out_dir: PathBuf,
}

/// One rate's measurement.
#[derive(Serialize, Deserialize, Clone, Debug)]
pub struct RatePoint {
    pub target: Target,
    pub rate: Rate,
    /// Forwarding rate over the window, both ports, Mpps.
    pub mpps: f64,
    /// Changes answered `ok` per second over the window.
    pub applied_per_sec: f64,
    /// Changes answered with an error over the whole run.
    pub errors: u64,
}

/// One table's reload against C's restart.
#[derive(Serialize, Deserialize, Clone, Debug)]
pub struct Reload {
    /// `lpm`, `fib`, `em` or `acl`.
    pub mode: String,
    pub entries: usize,
    /// From sending `reload` to its `ok` (the new table forwarding), s.
    pub reload_secs: f64,
    /// C l3fwd from its start to its first packet sent on the same table, s.
    pub c_restart_secs: Option<f64>,
    /// Why C l3fwd did not forward, if it was run and failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub c_restart_error: Option<String>,
}

#[derive(Serialize, Deserialize)]
pub struct UpdateReport {
    pub timestamp: String,
    pub machine: machine::Machine,
    pub warmup_secs: f64,
    pub window_secs: f64,
    pub points: Vec<RatePoint>,
    pub reloads: Vec<Reload>,
}

/// EAL memory (-m, MB) for a forwarder whose pool holds `mbufs`, on 2 MB
/// pages if `huge`, else 4 KB ones.
fn pool_memory_mb(mbufs: u32, huge: bool) -> u32 {
    u32::try_from(crate::pool::memory_mb(mbufs as usize, huge)).unwrap_or(u32::MAX)
}

pub fn update(mut args: UpdateArgs) -> Result<ExitCode, String> {
    // C's pool is the one it was built with (make bench-update builds it
    // for --mbufs); --quick shrinks l3fwd-rs's alone.
    let c_mbufs = args.mbufs;
    if args.quick {
        (args.v4_routes, args.v6_routes, args.em_rules, args.frames) = (10_000, 2_000, 10_000, 8192);
        (args.mbufs, args.memory, args.span) = (32_768, 1024, 1000);
        args.rates = vec![Rate::PerSecond(0), Rate::PerSecond(1000), Rate::Max];
    }
    for (bin, hint) in [
        (&args.common.rs_bin, "cargo build --release"),
        (&args.ctl_bin, "cargo build --release"),
        (&args.common.tablegen_bin, "cargo build --release -p trafficgen"),
    ] {
        require(bin, hint)?;
    }
    // C restarts on the EM table only: its LPM holds 1024 rules.
    // Built with its pool here (nothing to do when it is up to date).
    let c_build = Build {
        mbufs: c_mbufs as usize,
        ..Build::STOCK
    };
    let c_dir = args.c_scale_bin.parent().unwrap_or(Path::new("."));
    let c_runs = args.targets.iter().any(|t| t.mode() == "em")
        && match c_build.make(&args.common.c_build_script, c_dir) {
            Ok(_) => true,
            Err(e) => {
                println!("{}: {e}: no C restart time", args.c_scale_bin.display());
                false
            }
        };
    let logs = args.out_dir.join("logs");
    std::fs::create_dir_all(&logs).map_err(|e| format!("{}: {e}", logs.display()))?;
    let generators = args.common.generators(&args.gen_bin);
    let sizes = traffic::ScaleSizes {
        em_rules: args.em_rules,
        v4_routes: args.v4_routes,
        v6_routes: args.v6_routes,
        frames: args.frames,
        mbufs: args.mbufs,
    };
    // ACL runs take the default LPM traffic (l3fwd-gen's), the others
    // the scale tables'.
    let acl = args.targets.contains(&Target::Acl);
    let needed = |scale: bool, em: bool| scale || (acl && !em);
    let traffic = traffic::generate(&generators, &args.out_dir, args.frames, &sizes, needed)?;
    if acl {
        traffic::write_acl_rules(&traffic.acl, args.acl_rules)?;
    }
    interrupt::catch_signals()?;
    // Hugepages for the largest forwarder, one at a time: l3fwd-rs's
    // --memory, or C's pool.
    let largest = match c_runs {
        true => args.memory.max(pool_memory_mb(c_mbufs, true)),
        false => args.memory,
    };
    let memory = hugepages::Memory::for_runs(largest, Path::new(hugepages::DIR), args.common.no_huge);
    command::use_eal_args(
        memory.eal_args(),
        command::simd_bitwidth_args(args.common.simd_bitwidth),
    );
    let pool = Pool {
        mbufs: Some(args.mbufs),
        memory_mb: args.memory,
    };
    let c_pool = Pool {
        mbufs: Some(c_mbufs),
        memory_mb: args.memory.max(pool_memory_mb(c_mbufs, memory.is_huge())),
    };
    let timing = args.common.timing(SCALE_START_TIMEOUT);
    let mut report = UpdateReport {
        timestamp: machine::timestamp(),
        machine: machine::Machine::current(),
        warmup_secs: args.common.warmup,
        window_secs: args.common.window,
        points: Vec::new(),
        reloads: Vec::new(),
    };
    let mut failures = Failures::new();
    for mode in ["lpm", "fib", "em", "acl"] {
        let targets: Vec<Target> = args.targets.iter().copied().filter(|t| t.mode() == mode).collect();
        if targets.is_empty() {
            continue;
        }
        let config = Config::new(Forwarder::Rs, Mode::parse(mode)?, Variant::Default, true);
        let files = traffic.files(config);
        let log = logs.join(format!("rs-{mode}"));
        let run = Changing {
            config,
            files,
            pool: &pool,
            log: &log,
        };
        let reload_secs = run.measure(&args, &targets, &timing, &mut report.points);
        if interrupt::interrupted() {
            return Err("interrupted".into());
        }
        failures.count(format!("l3fwd-rs {mode}"), &log, &reload_secs);
        let Ok(reload_secs) = reload_secs else {
            continue;
        };
        let c_log = logs.join("c-em");
        let c_restart = (mode == "em" && c_runs).then(|| c_restart(&args, &c_pool, files, &c_log, &timing));
        if let Some(result) = &c_restart {
            failures.count("C l3fwd em", &c_log, result);
            if let Err(e) = result {
                println!("C l3fwd em: FAILED: {e}{}", crate::failures::logs_note(&c_log));
            }
        }
        let entries = match mode {
            "em" => args.em_rules,
            "acl" => args.acl_rules,
            _ => args.v4_routes + args.v6_routes,
        };
        report.reloads.push(Reload {
            mode: mode.into(),
            entries,
            reload_secs,
            c_restart_secs: c_restart.as_ref().and_then(|r| r.as_ref().ok().copied()),
            c_restart_error: c_restart.and_then(Result::err),
        });
    }
    print_table(&report);
    let json = args.out_dir.join("update.json");
    write_json(&json, &report)?;
    println!("\nwrote {}", json.display());
    for path in plot::draw(&report, &args.out_dir)? {
        println!("wrote {}", path.display());
    }
    Ok(failures.finish(ExitCode::SUCCESS))
}

/// l3fwd-rs on `config`'s tables while they change.
struct Changing<'a> {
    config: Config,
    files: &'a crate::traffic::Files,
    pool: &'a Pool,
    /// Its logs ([`testkit::log_files`]).
    log: &'a Path,
}

impl Changing<'_> {
    /// Forwards while each of `targets` changes at each of `args.rates` (a
    /// point each into `points`), then reloads the whole table: its seconds.
    fn measure(
        &self,
        args: &UpdateArgs,
        targets: &[Target],
        timing: &Timing,
        points: &mut Vec<RatePoint>,
    ) -> Result<f64, String> {
        let prefix = format!("l3fwd-bench-update-{}-{}", std::process::id(), self.config.mode.id());
        let (cmd, stop) = command::command(self.config, &args.common.rs_bin, self.files, self.pool, &prefix);
        let mut run = Forwarding::start(cmd, stop, &prefix, self.log, timing.start_timeout)?;
        for &target in targets {
            for &rate in &args.rates {
                if interrupt::interrupted() {
                    return Err("interrupted".into());
                }
                let point = measure_rate(&mut run, &args.ctl_bin, &prefix, target, rate, args.span, timing)?;
                println!(
                    "{:<16} {:>7}/s: {:7.3} Mpps, {:9.0} changes/s applied{}",
                    target.label(),
                    rate.label(),
                    point.mpps,
                    point.applied_per_sec,
                    if point.errors > 0 {
                        format!(", {} errors", point.errors)
                    } else {
                        String::new()
                    }
                );
                points.push(point);
            }
        }
        let reload_secs = reload(&args.ctl_bin, &prefix)?;
        run.stop()?;
        Ok(reload_secs)
    }
}

/// C l3fwd's time from its start to its first packet on the EM table
/// (`files`), with the pool it was built with (`pool`), logs `log`.
fn c_restart(
    args: &UpdateArgs,
    pool: &Pool,
    files: &crate::traffic::Files,
    log: &Path,
    timing: &Timing,
) -> Result<f64, String> {
    let c = Config::new(Forwarder::C, Mode::parse("em")?, Variant::Default, true);
    let prefix = format!("l3fwd-bench-update-c-{}", std::process::id());
    let (cmd, stop) = command::command(c, &args.c_scale_bin, files, pool, &prefix);
    let mut run = Forwarding::start(cmd, stop, &prefix, log, timing.start_timeout)?;
    run.stop()?;
    Ok(run.first_tx_secs)
}

/// Forwards while `l3fwd-ctl -` sends `target`'s changes at `rate`:
/// warm-up, then the TX packets and `ok`s over the window.
fn measure_rate(
    run: &mut Forwarding,
    ctl_bin: &Path,
    prefix: &str,
    target: Target,
    rate: Rate,
    span: u32,
    timing: &Timing,
) -> Result<RatePoint, String> {
    let ctl = Ctl::start(ctl_bin, prefix, target, rate, span)?;
    sleep(timing.warmup);
    let (packets, oks, start) = (run.opackets()?, ctl.oks.load(Ordering::Relaxed), Instant::now());
    sleep(timing.window);
    let (packets_after, oks_after, secs) = (
        run.opackets()?,
        ctl.oks.load(Ordering::Relaxed),
        start.elapsed().as_secs_f64(),
    );
    let errors = ctl.finish()?;
    Ok(RatePoint {
        target,
        rate,
        mpps: packets_after.saturating_sub(packets) as f64 / secs / 1e6,
        applied_per_sec: oks_after.saturating_sub(oks) as f64 / secs,
        errors,
    })
}

/// `l3fwd-ctl -` fed paced changes by one thread, its answers counted by another.
struct Ctl {
    child: Child,
    stop: Arc<AtomicBool>,
    oks: Arc<AtomicU64>,
    errors: Arc<AtomicU64>,
    feeder: thread::JoinHandle<()>,
    reader: thread::JoinHandle<()>,
}

impl Ctl {
    fn start(ctl_bin: &Path, prefix: &str, target: Target, rate: Rate, span: u32) -> Result<Ctl, String> {
        let mut child = Command::new(ctl_bin)
            .args(["--file-prefix", prefix, "-"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", ctl_bin.display()))?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err("l3fwd-ctl without pipes".into());
        };
        let stop = Arc::new(AtomicBool::new(false));
        let (oks, errors) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
        let feeder = {
            let stop = Arc::clone(&stop);
            thread::spawn(move || feed(BufWriter::new(stdin), Changes::new(target, span), rate, &stop))
        };
        let reader = {
            let (oks, errors) = (Arc::clone(&oks), Arc::clone(&errors));
            thread::spawn(move || {
                for answer in BufReader::new(stdout).lines().map_while(Result::ok) {
                    let counter = if answer == "ok" { &oks } else { &errors };
                    counter.fetch_add(1, Ordering::Relaxed);
                }
            })
        };
        Ok(Ctl {
            child,
            stop,
            oks,
            errors,
            feeder,
            reader,
        })
    }

    /// Stops the changes, waits for the answers of those sent; the errors.
    fn finish(mut self) -> Result<u64, String> {
        self.stop.store(true, Ordering::Relaxed);
        let joined = self.feeder.join().is_ok() & self.reader.join().is_ok();
        let status = self.child.wait().map_err(|e| e.to_string())?;
        let errors = self.errors.load(Ordering::Relaxed);
        match (joined, status.success() || errors > 0) {
            (true, true) => Ok(errors),
            _ => Err(format!("l3fwd-ctl failed ({status})")),
        }
    }
}

/// Writes `changes` at `rate` until `stop`; closing the pipe ends `l3fwd-ctl`'s input.
fn feed(mut to_ctl: impl Write, mut changes: Changes, rate: Rate, stop: &AtomicBool) {
    let start = Instant::now();
    let mut sent = 0u64;
    while !stop.load(Ordering::Relaxed) {
        // At max, batches of 256 between looks at `stop`.
        let due = rate.due(start.elapsed()).unwrap_or(sent + 256);
        for line in changes.by_ref().take(due.saturating_sub(sent) as usize) {
            if writeln!(to_ctl, "{line}").is_err() {
                return;
            }
        }
        sent = sent.max(due);
        if to_ctl.flush().is_err() {
            return;
        }
        if rate != Rate::Max {
            sleep(Duration::from_millis(1));
        }
    }
}

/// Sends `reload` and waits for its answer: the new tables forward. Seconds.
fn reload(ctl_bin: &Path, prefix: &str) -> Result<f64, String> {
    let start = Instant::now();
    let out = Command::new(ctl_bin)
        .args(["--file-prefix", prefix, "reload"])
        .output()
        .map_err(|e| format!("cannot start {}: {e}", ctl_bin.display()))?;
    let secs = start.elapsed().as_secs_f64();
    match String::from_utf8_lossy(&out.stdout).trim() {
        "ok" => Ok(secs),
        answer => Err(format!("reload: {answer}")),
    }
}

fn print_table(report: &UpdateReport) {
    println!(
        "
{:<16} {:>9} {:>9} {:>13} {:>7}",
        "table", "changes/s", "Mpps", "applied/s", "errors"
    );
    for p in &report.points {
        println!(
            "{:<16} {:>9} {:>9.3} {:>13.0} {:>7}",
            p.target.label(),
            p.rate.label(),
            p.mpps,
            p.applied_per_sec,
            p.errors
        );
    }
    println!(
        "
{:<6} {:>10} {:>12} {:>16}",
        "mode", "entries", "reload, s", "C restart, s"
    );
    for r in &report.reloads {
        let c = match (r.c_restart_secs, &r.c_restart_error) {
            (Some(s), _) => format!("{s:.2}"),
            (None, Some(_)) => "FAILED".into(),
            (None, None) => "n/a".into(),
        };
        println!("{:<6} {:>10} {:>12.3} {:>16}", r.mode, r.entries, r.reload_secs, c);
    }
}
