//! `l3fwd-bench callgrind`: instructions per forwarded packet, counted by
//! valgrind's callgrind, for l3fwd-rs, DPDK's C l3fwd and testpmd io (the
//! I/O floor). Rates on a shared machine are noisy; instruction counts do
//! not depend on load, so they give a reproducible per-packet cost, and
//! `--baseline` a regression gate that machine noise cannot fool.
//!
//! Per configuration: make bench's command line under callgrind, counting
//! nothing while the program starts and sets up its tables; one forwarding
//! lcore, two pcap ports replaying their files forever, no tx_pcap (sent
//! packets are dropped). Once the TX counters move it forwards --warmup
//! seconds, then counting is switched on, it runs --settle seconds at the
//! instrumented rate (about 10x slower), the counters are zeroed, and after
//! --window seconds dumped. Packets are the TX packets of both ports
//! (telemetry), read just before and after the zero and the dump; the
//! midpoints are used. (Switching counting on is not the window's edge: the
//! rate changes across it, so the midpoint of the reads around it would be
//! biased.)
//!
//! Ir counts all threads of the process (the forwarding lcore dominates;
//! telemetry's few requests are noise below 0.01%), the pcap PMD's RX (a
//! memcpy per frame) and TX included: subtract the io row for a forwarder's
//! own cost. `edge` bounds the packet count's error: half the packets sent
//! between the reads around the zero plus the same around the dump, as % of
//! packets (~1-2% with a 10 s window; the actual error is much smaller, the
//! rate being steady across both edges). With --cache-sim, D1 and LL misses
//! are the simulated caches' (the host's, from CPUID; valgrind ignores
//! prefetches, so they count what is touched, not the wait prefetching hides).

mod report;
mod setup;
mod top;
mod window;

use crate::failures::Failure;
use crate::interrupt;
use crate::machine;
use crate::run::Timing;
use report::{Count, Report, TrafficSettings};
use setup::Plan;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Duration;
use window::Valgrind;

#[derive(clap::Args)]
pub struct CallgrindArgs {
    /// Configurations, space- or comma-separated, run once each in the order given: all, or c-lpm, rs-lpm,
    /// rs-lpm-c-drain, rs-lpm-burst64, rs-lpm-burst256, c-em, rs-em, rs-em-group8, rs-em-seq, c-fib, rs-fib,
    /// c-acl, rs-acl, io (make bench's, without eventdev: its service core's polling would drown the
    /// forwarding work)
    #[arg(required = true, value_delimiter = ',', value_name = "CONFIG")]
    configs: Vec<String>,
    /// The ports counted through: pcap, or ring (the lab port, whose I/O
    /// costs a few instructions a packet: the counts are mostly the forwarding)
    #[arg(long, value_enum, default_value_t)]
    ports: crate::command::Ports,
    /// EAL's maximum SIMD bitwidth (`--force-max-simd-bitwidth`): 64 counts
    /// l3fwd-rs's scalar parse and lookups; unset, EAL's default (256),
    /// its AVX2 ones (valgrind has no AVX-512, so 512 counts AVX2 too)
    #[arg(long, value_parser = crate::common::simd_bitwidth)]
    simd_bitwidth: Option<u16>,
    /// Counted window, seconds
    #[arg(short, long, default_value_t = 10.0, value_parser = crate::common::seconds)]
    window: f64,
    /// Uninstrumented forwarding before the window, seconds
    #[arg(short = 'u', long, default_value_t = 5.0, value_parser = non_negative_seconds)]
    warmup: f64,
    /// Instrumented forwarding before the window, seconds
    #[arg(short, long, default_value_t = 2.0, value_parser = non_negative_seconds)]
    settle: f64,
    /// Keep the callgrind files as OUT_DIR/CONFIG.out (callgrind_annotate --inclusive=no FILE)
    #[arg(short, long)]
    keep: bool,
    /// Where --keep puts them; traffic and logs go to OUT_DIR/work-PID, removed at the end
    #[arg(short, long, default_value = "target/callgrind")]
    out_dir: PathBuf,
    /// After the table, the N functions with the most self instructions per packet, per
    /// configuration (implies --keep)
    #[arg(short, long, default_value_t = 0, value_name = "N")]
    top: usize,
    /// The ACL configurations' acl_v4.cfg and acl_v6.cfg (make bench writes its generated set to
    /// target/bench/acl). Default: with --lpm-flows, the cell's routes as ACL rules behind the
    /// sweep's deny rules (the flows' cell of the sweep's ACL mode); otherwise the few example
    /// rules in configs/
    #[arg(long, value_name = "DIR")]
    acl_rules: Option<PathBuf>,
    /// EM configurations on N IPv4 UDP rules and N flows hitting each once per pass (the sweep's
    /// em/SIZE/N cell, l3fwd-tablegen) instead of the default rules and 16 flows; pools that hold the
    /// replayed frames (a C build with a larger pool)
    #[arg(long, value_parser = crate::grid::parse_count, value_name = "N")]
    em_flows: Option<usize>,
    /// LPM, FIB, ACL and io configurations on N IPv4 flows over a 16-route table (the sweep's
    /// lpm-16/SIZE/N cell) instead of l3fwd-gen's 1024 frames, with pools to match
    #[arg(long, value_parser = crate::grid::parse_count, value_name = "N")]
    lpm_flows: Option<usize>,
    /// Frame size in bytes, FCS included (64..1518), of the --em-flows and --lpm-flows traffic
    #[arg(long, default_value_t = 64, value_parser = crate::grid::parse_size, value_name = "BYTES")]
    size: u32,
    /// Also simulate the caches (valgrind --cache-sim=yes): D1 and LL misses per packet
    #[arg(long)]
    cache_sim: bool,
    /// Pass OPT to valgrind (repeatable), e.g. --valgrind-opt=--LL=8388608,16,64
    #[arg(long = "valgrind-opt", value_name = "OPT", allow_hyphen_values = true)]
    valgrind_opts: Vec<String>,
    /// Do not (re)build l3fwd-rs, the generators and the C l3fwd first
    #[arg(long)]
    no_build: bool,
    /// Give up if a program does not forward within S seconds
    #[arg(long, default_value_t = 300, value_name = "S")]
    startup_timeout: u64,
    /// Also write the counts (and settings) as JSON, for --baseline
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// An earlier --json on the same traffic: exit with status 2 if instructions per packet rose
    /// by more than --tolerance in any configuration both have
    #[arg(long, value_name = "FILE")]
    baseline: Option<PathBuf>,
    /// Relative rise of Ir/pkt that counts as a regression
    #[arg(long, default_value_t = 0.01)]
    tolerance: f64,
    #[arg(long, default_value = "target/release/l3fwd-rs")]
    rs_bin: PathBuf,
    #[arg(long, default_value = "target/release/l3fwd-gen")]
    gen_bin: PathBuf,
    #[arg(long, default_value = "target/release/l3fwd-tablegen")]
    tablegen_bin: PathBuf,
    #[arg(long, default_value = "/usr/bin/dpdk-testpmd")]
    testpmd: PathBuf,
    /// Directory of the default rule files lpm_v4.cfg, lpm_v6.cfg, em_v4.cfg, em_v6.cfg
    #[arg(long, default_value = "configs")]
    rules_dir: PathBuf,
    /// The stock C l3fwd's build directory (scripts/build-c-l3fwd.sh DIR)
    #[arg(long, default_value = "target/c-l3fwd")]
    c_dir: PathBuf,
    /// Where the C builds with larger pools go (shared with the sweep)
    #[arg(long, default_value = "target/c-l3fwd-sweep")]
    c_build_dir: PathBuf,
    #[arg(long, default_value = "scripts/build-c-l3fwd.sh")]
    c_build_script: PathBuf,
}

fn non_negative_seconds(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v >= 0.0 && v.is_finite() => Ok(v),
        _ => Err(format!("'{s}' is not a number of seconds")),
    }
}

pub fn callgrind(args: CallgrindArgs) -> Result<ExitCode, String> {
    let configs = setup::select(&args.configs)?;
    let traffic = TrafficSettings {
        lpm_flows: args.lpm_flows,
        em_flows: args.em_flows,
        size: args.size,
        acl_rules: setup::AclRules::of(&args, &configs).name(),
        ports: args.ports,
    };
    // Fail fast: a bad baseline should not cost minutes of runs.
    let baseline: Option<Report> = args.baseline.as_deref().map(crate::files::read_json).transpose()?;
    if let Some(old) = &baseline {
        report::check_comparable(&old.traffic, &traffic)?;
    }
    let tools = ["valgrind", "vgdb"]
        .into_iter()
        .chain((args.top > 0).then_some("callgrind_annotate"));
    for tool in tools {
        which(tool)?;
    }
    interrupt::catch_signals()?;
    crate::command::use_ports(args.ports);
    let simd = crate::command::simd_bitwidth_args(args.simd_bitwidth);
    crate::command::use_eal_args(vec!["--no-huge".into()], simd);
    let work = WorkDir::new(args.out_dir.join(format!("work-{}", std::process::id())))?;
    let timing = Timing {
        start_timeout: Duration::from_secs(args.startup_timeout),
        warmup: Duration::from_secs_f64(args.warmup),
        window: Duration::from_secs_f64(args.window),
    };
    let plan = Plan::new(&configs, &args, &work.0, timing)?;
    let settle = Duration::from_secs_f64(args.settle);
    let valgrind = Valgrind {
        cache_sim: args.cache_sim,
        options: &args.valgrind_opts,
    };
    let keep = args.keep || args.top > 0;
    let fixes_ipv4_lookup = !help_lacks(&args.rs_bin, "--ipv4-lookup");
    let mut report = Report {
        timestamp: machine::timestamp(),
        machine: machine::Machine::current(),
        traffic,
        warmup_secs: args.warmup,
        settle_secs: args.settle,
        window_secs: args.window,
        order: configs.iter().map(|c| c.id().to_string()).collect(),
        counts: Default::default(),
    };
    let mut dumps = Vec::new();
    let mut progress = crate::progress::Progress::new(configs.len());
    for (i, unit) in plan.units.iter().enumerate() {
        let id = unit.config.id();
        progress.start(id.clone());
        let prefix = format!("l3fwd-callgrind-{}-{i}", std::process::id());
        let (mut cmd, stop) = unit.command(&prefix)?;
        if unit.config.is_rs() && fixes_ipv4_lookup {
            // Under valgrind, an lcore timing its two ways of looking IPv4
            // up would time the emulator, not the CPU, and pick either from
            // run to run: count the way small tables take natively.
            cmd.args(["--ipv4-lookup", "parse"]);
        }
        let out = work.0.join(format!("{id}.cg"));
        let log = work.0.join(&id);
        let cmd = valgrind.wrap(&cmd, &out);
        let counted = window::count(cmd, stop, &prefix, &log, &out, &unit.timing, settle);
        let count = counted.and_then(|(reads, totals)| Count::new(&reads, &totals));
        let count = count.map_err(|e| Failure::new(&id, e, &keep_log(&log, &args.out_dir, &id)))?;
        let dump = window::numbered(&out, 1);
        if keep {
            let kept = args.out_dir.join(format!("{id}.out"));
            std::fs::copy(&dump, &kept).map_err(|e| format!("{}: {e}", kept.display()))?;
            dumps.push((id.clone(), kept, count.packets));
        }
        progress.done(&format!("{:.1} Ir/pkt", count.ir_per_packet));
        report.counts.insert(id, count);
    }
    drop(progress);

    println!("\n{}", report::table(&report));
    if keep {
        println!(
            "callgrind files: {}/<config>.out (callgrind_annotate --inclusive=no FILE)",
            args.out_dir.display()
        );
    }
    if let Some(path) = &args.json {
        crate::files::write_json(path, &report)?;
        println!("wrote {}", path.display());
    }
    if args.top > 0 {
        for (id, dump, packets) in &dumps {
            println!(
                "\n{id}: top {} functions by self instructions per packet ({packets} packets)",
                args.top
            );
            print!("{}", top::top(&top::annotate(dump)?, args.top, *packets)?);
        }
    }
    let Some(old) = baseline else {
        return Ok(ExitCode::SUCCESS);
    };
    let path = args.baseline.unwrap_or_default();
    println!("\nagainst baseline {} ({}):", path.display(), old.timestamp);
    let changes = report::compare(&old, &report, args.tolerance);
    report::print_changes(&changes, args.tolerance);
    let regressed = changes.iter().any(|c| c.verdict.is_regression());
    Ok(if regressed {
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    })
}

/// A directory for one run's traffic, dumps and logs, removed when dropped.
struct WorkDir(PathBuf);

impl WorkDir {
    fn new(path: PathBuf) -> Result<WorkDir, String> {
        std::fs::create_dir_all(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(WorkDir(path))
    }
}

impl Drop for WorkDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Whether `program --help` runs and does not list `option`: an older
/// l3fwd-rs (`--rs-bin`) that lacks it and needs none.
fn help_lacks(program: &Path, option: &str) -> bool {
    let help = Command::new(program).arg("--help").output();
    help.is_ok_and(|out| out.status.success() && !String::from_utf8_lossy(&out.stdout).contains(option))
}

fn which(tool: &str) -> Result<(), String> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    if std::env::split_paths(&path).any(|dir| dir.join(tool).is_file()) {
        Ok(())
    } else {
        Err(format!("'{tool}' not found in PATH (apt-get install valgrind)"))
    }
}

/// A failed run's logs (`log`, see [`testkit::log_files`]), copied out of
/// the work directory (removed at the end) to OUT_DIR/ID.stdout and
/// .stderr; where they are, or `log` if they cannot be kept.
fn keep_log(log: &Path, out_dir: &Path, id: &str) -> PathBuf {
    let kept = out_dir.join(id);
    let mut files = testkit::log_files(log).into_iter().zip(testkit::log_files(&kept));
    match files.try_for_each(|(from, to)| std::fs::copy(from, to).map(drop)) {
        Ok(()) => kept,
        Err(_) => log.to_path_buf(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: CallgrindArgs,
    }

    fn parse(line: &str) -> Result<CallgrindArgs, String> {
        let argv = std::iter::once("callgrind").chain(line.split_whitespace());
        Cli::try_parse_from(argv).map(|c| c.args).map_err(|e| e.to_string())
    }

    #[test]
    fn an_option_is_passed_unless_the_help_runs_without_it() {
        // echo's "help" is its argument.
        assert!(help_lacks(Path::new("/bin/echo"), "--ipv4-lookup"));
        assert!(!help_lacks(Path::new("/bin/echo"), "--help"));
        assert!(
            !help_lacks(Path::new("/nonexistent/l3fwd-rs"), "--ipv4-lookup"),
            "it cannot tell"
        );
    }

    /// `--help` names exactly what `all` runs, in its order.
    #[test]
    fn the_help_lists_what_all_runs() {
        use clap::CommandFactory;
        let help = Cli::command()
            .render_long_help()
            .to_string()
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        let ids: Vec<String> = setup::counted().into_iter().map(crate::configs::Config::id).collect();
        assert!(
            help.contains(&format!("all, or {} (make bench's", ids.join(", "))),
            "{help}"
        );
    }

    #[test]
    fn the_scripts_options() {
        let a = parse(
            "-w 3 -u 0 -s 1 -k -o /tmp/cg -t 15 --lpm-flows 65536 --em-flows 64K --size 1518 \
             --cache-sim --valgrind-opt --LL=8388608,16,64 --valgrind-opt=--D1=32768,8,64 \
             --no-build --startup-timeout 60 --acl-rules target/bench/acl io c-lpm rs-lpm",
        )
        .unwrap();
        assert_eq!((a.window, a.warmup, a.settle), (3.0, 0.0, 1.0));
        assert!(a.keep && a.cache_sim && a.no_build);
        assert_eq!((a.out_dir, a.top), (PathBuf::from("/tmp/cg"), 15));
        assert_eq!((a.lpm_flows, a.em_flows, a.size), (Some(65536), Some(65536), 1518));
        assert_eq!(a.valgrind_opts, ["--LL=8388608,16,64", "--D1=32768,8,64"]);
        assert_eq!(
            (a.startup_timeout, a.acl_rules),
            (60, Some(PathBuf::from("target/bench/acl")))
        );
        assert_eq!(a.configs, ["io", "c-lpm", "rs-lpm"]);
    }

    #[test]
    fn defaults_and_refusals() {
        let a = parse("rs-lpm,io").unwrap();
        assert_eq!(a.configs, ["rs-lpm", "io"]);
        assert_eq!((a.window, a.warmup, a.settle, a.size), (10.0, 5.0, 2.0, 64));
        assert_eq!((a.lpm_flows, a.em_flows, a.top, a.keep), (None, None, 0, false));
        assert_eq!((a.tolerance, a.json, a.baseline), (0.01, None, None));
        assert!(parse("").is_err(), "a configuration is required");
        assert!(parse("-w 0 io").is_err(), "the window must be positive");
        assert!(parse("-u -1 io").is_err());
        assert!(parse("--size 63 io").is_err());
        assert!(parse("--lpm-flows x io").is_err());
    }

    /// ACL runs on rules its traffic hits: the example rules on make
    /// bench's, the cell's own routes on --lpm-flows traffic (the example
    /// rules match none of it), unless --acl-rules says; without ACL the
    /// report records what older ones do, so their baselines compare.
    #[test]
    fn acl_rules_follow_the_traffic() {
        let name = |line: &str| {
            let args = parse(line).unwrap();
            let configs = setup::select(&args.configs).unwrap();
            setup::AclRules::of(&args, &configs).name()
        };
        assert_eq!(name("rs-acl"), PathBuf::from("configs"));
        assert_eq!(name("--lpm-flows 1K rs-acl"), PathBuf::from("cell"));
        assert_eq!(name("--lpm-flows 1K rs-lpm"), PathBuf::from("configs"));
        assert_eq!(name("--lpm-flows 1K --acl-rules d rs-acl"), PathBuf::from("d"));
    }
}
