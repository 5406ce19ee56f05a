//! `l3fwd-bench latency`: one-way latency through each forwarder as users
//! measure it. Two network namespaces joined through the forwarder by veth
//! pairs ([`netns`]); a sockperf server in one, the client in the other,
//! both on one CPU, the forwarder polling on the other ([`forwarders`]);
//! sockperf ping-pong and under-load at several rates ([`sockperf`]), then
//! iperf3's TCP throughput and UDP packet rate ([`iperf`]). The result is
//! tables, JSON and a plot of percentiles against load ([`results`],
//! [`plot`]).

mod forwarders;
mod halt_poll;
mod iperf;
mod netns;
mod plot;
mod results;
mod sockperf;

use crate::failures::Failures;
use crate::files::{require, write_json};
use crate::machine;
use forwarders::{parse_pmd, Forwarder, Pmd, Programs, Running};
use netns::Join;
use results::{LatencyReport, LatencySettings, Point, ThroughputPoint};
use sockperf::Mode;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::thread::sleep;
use std::time::Duration;
use testkit::{Process, Stop};

/// The CPU the DPDK forwarders poll on (`make bench`'s lcore).
const FORWARDER_CPU: u32 = 1;
/// Replies a second an under-load run asks for when `--reply-every` is
/// not given: enough for a p99.9 within a few seconds, few enough that the
/// reply direction stays light.
const REPLIES_PER_SEC: u64 = 1000;

#[derive(clap::Args)]
pub struct LatencyArgs {
    /// Seconds of each sockperf run (sockperf's 400 ms warm-up included)
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..))]
    time: u32,
    /// sockperf under-load rates, messages a second, comma-separated (ping-pong runs as well)
    #[arg(long, value_delimiter = ',', default_value = "1000,10000,50000,100000,200000")]
    rates: Vec<u64>,
    /// Forwarders, comma-separated: rs (l3fwd-rs, idle flush at every short round), rs-gap10
    /// (l3fwd-rs --idle-flush-gap 10: at most every 10 us), rs-c-drain (l3fwd-rs --c-drain),
    /// c (C l3fwd), kernel (Linux forwarding in a middle namespace), kernel-rps (the same, its receive
    /// processing steered to CPU 1 by RPS, away from sockperf's CPU as the DPDK forwarders are)
    #[arg(long, value_delimiter = ',', value_parser = Forwarder::parse, default_value = "rs,rs-gap10,rs-c-drain,c,kernel,kernel-rps")]
    forwarders: Vec<Forwarder>,
    /// UDP payload bytes of each message
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u32).range(14..=1400))]
    msg_size: u32,
    /// Under-load: the server replies to one message in this many (default: about 1000 replies a second)
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    reply_every: Option<u64>,
    /// CPU of the sockperf client and server (the forwarder polls on CPU 1)
    #[arg(long, default_value_t = 0)]
    sockperf_cpu: u32,
    /// The DPDK forwarders' ports on the veth ends
    #[arg(long, value_parser = parse_pmd, default_value = "af_xdp")]
    pmd: Pmd,
    /// Seconds of each iperf3 run after the latency runs (a TCP stream, then a flood of 64-byte UDP
    /// frames); 0: none
    #[arg(long, default_value_t = 3)]
    throughput_secs: u32,
    /// The af_xdp ports' busy_budget (both DPDK forwarders): 0 leaves the
    /// sockets' NAPI to the kernel; DPDK's default, 64, has the PMD busy-poll
    /// it, which on veth costs l3fwd-rs ~6 us of p50 one-way latency
    #[arg(long, default_value_t = 0)]
    busy_budget: u32,
    /// Guest halt polling for the run, ns (cpuidle-haltpoll's guest_halt_poll_ns,
    /// restored after): how long an idle vCPU polls before it halts. Linux's
    /// default is 200000; a VM shipping 0 makes each wakeup of sockperf's CPU a
    /// halted-vCPU wakeup, ~6 us of l3fwd-rs's p50. Unset: the machine's setting
    #[arg(long)]
    halt_poll_ns: Option<u64>,
    #[arg(long, default_value = "target/release/l3fwd-rs")]
    rs_bin: PathBuf,
    #[arg(long, default_value = "target/c-l3fwd/dpdk-l3fwd")]
    c_bin: PathBuf,
    /// Makes and removes the namespaces (`up`, `clean`)
    #[arg(long, default_value = "scripts/netns-demo.sh")]
    netns_script: PathBuf,
    /// Where latency.json, the plots and the logs go
    #[arg(long, default_value = "target/bench/latency")]
    out_dir: PathBuf,
}

impl LatencyArgs {
    /// Ping-pong, then every rate, lowest first.
    fn modes(&self) -> Vec<Mode> {
        let mut rates = self.rates.clone();
        rates.sort();
        rates.dedup();
        let loads = rates.into_iter().filter(|&mps| mps > 0).map(|mps| Mode::UnderLoad {
            mps,
            reply_every: self.reply_every.unwrap_or((mps / REPLIES_PER_SEC).max(1)),
        });
        std::iter::once(Mode::PingPong).chain(loads).collect()
    }

    fn settings(&self) -> LatencySettings {
        LatencySettings {
            secs: self.time,
            msg_size: self.msg_size,
            rates: self.rates.clone(),
            forwarders: self.forwarders.iter().map(|f| f.id().to_string()).collect(),
            latency: "one-way: sockperf's RTT/2, microseconds".into(),
            sockperf_cpu: self.sockperf_cpu,
            forwarder_cpu: FORWARDER_CPU,
            pmd: self.pmd.id().into(),
            throughput_secs: self.throughput_secs,
            busy_budget: self.busy_budget,
            halt_poll_ns: halt_poll::current(),
        }
    }
}

pub fn latency(args: LatencyArgs) -> Result<ExitCode, String> {
    // Everything that can fail fast does, before minutes of runs.
    if !rustix::process::getuid().is_root() {
        return Err("latency runs need root (network namespaces, af_xdp)".into());
    }
    let forwarders: Vec<Forwarder> = forwarders::ALL
        .into_iter()
        .filter(|f| args.forwarders.contains(f))
        .collect();
    let hint = "`make bench-latency` builds it";
    if forwarders.iter().any(|&f| f != Forwarder::C && f.join() == Join::Dpdk) {
        require(&args.rs_bin, hint)?;
    }
    if forwarders.contains(&Forwarder::C) {
        require(&args.c_bin, hint)?;
    }
    require(&args.netns_script, "run from the workspace root or give --netns-script")?;
    let sockperf_ok = Command::new("sockperf")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !sockperf_ok {
        return Err("sockperf not found: install the Debian package (make deps)".into());
    }
    let iperf3_ok = Command::new("iperf3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if args.throughput_secs > 0 && !iperf3_ok {
        return Err("iperf3 not found: install the Debian package (make deps), or --throughput-secs 0".into());
    }
    crate::plot::load_font()?;
    let logs = args.out_dir.join("logs");
    std::fs::create_dir_all(&logs).map_err(|e| format!("{}: {e}", logs.display()))?;
    crate::interrupt::catch_signals()?;
    let _halt_poll = args.halt_poll_ns.map(halt_poll::HaltPoll::set).transpose()?;

    let modes = args.modes();
    println!(
        "{} forwarders x {} sockperf runs of {} s (ping-pong, under-load at {:?} msg/s) and 2 iperf3 runs \
         of {} s; sockperf and iperf3 on CPU {}, the forwarder on CPU {FORWARDER_CPU}, on {} ports",
        forwarders.len(),
        modes.len(),
        args.time,
        args.rates,
        args.throughput_secs,
        args.sockperf_cpu,
        args.pmd.id()
    );
    let programs = Programs {
        rs_bin: args.rs_bin.clone(),
        c_bin: args.c_bin.clone(),
        dir: args.out_dir.clone(),
        pmd: args.pmd,
        busy_budget: args.busy_budget,
    };
    let mut report = LatencyReport {
        timestamp: machine::timestamp(),
        machine: machine::Machine::current(),
        settings: args.settings(),
        points: Vec::new(),
        throughput: Vec::new(),
    };
    let json = args.out_dir.join("latency.json");
    let mut failures = Failures::new();
    for &forwarder in &forwarders {
        println!("{}:", forwarder.label());
        let (results, throughput) = through(forwarder, &programs, &args, &modes, &logs, &mut failures);
        let points = modes
            .iter()
            .zip(results)
            .map(|(&mode, r)| Point::new(forwarder, mode, r));
        report.points.extend(points);
        report.throughput.extend(throughput);
        // Written after every forwarder: an interrupted run keeps what it measured.
        write_json(&json, &report)?;
        if crate::interrupt::interrupted() {
            return Err(format!("interrupted; what was measured is in {}", json.display()));
        }
    }

    println!();
    print!("{}", results::table(&report));
    let plots = plot::draw(&report, &args.out_dir)?;
    let names: Vec<String> = plots.iter().map(|p| p.display().to_string()).collect();
    println!("\nwrote {} and {}", json.display(), names.join(", "));
    Ok(failures.finish(ExitCode::SUCCESS))
}

/// Every mode's result through `forwarder`, in order, and its iperf3
/// runs (none with `--throughput-secs 0`); the set-up is made for it and
/// removed after. Each failure goes into `failures` as well: a failed
/// start once, then each failed run, and a forwarder that did not stop
/// cleanly.
fn through(
    forwarder: Forwarder,
    programs: &Programs,
    args: &LatencyArgs,
    modes: &[Mode],
    logs: &Path,
    failures: &mut Failures,
) -> (Vec<Result<sockperf::Latency, String>>, Option<ThroughputPoint>) {
    let log = logs.join(forwarder.id());
    let started = Running::start(forwarder, programs, &args.netns_script, &log);
    failures.count(format!("{} start", forwarder.id()), &log, &started);
    let mut running = match started {
        Ok(r) => r,
        Err(e) => {
            println!("  FAILED to start: {e}{}", crate::failures::logs_note(&log));
            let why = format!("start: {e}");
            let throughput =
                (args.throughput_secs > 0).then(|| ThroughputPoint::new(forwarder, Err(why.clone()), Err(why.clone())));
            return (modes.iter().map(|_| Err(why.clone())).collect(), throughput);
        }
    };
    let latencies = latencies(forwarder, &mut running, args, modes, logs);
    for (mode, result) in modes.iter().zip(&latencies) {
        failures.count(format!("{} {}", forwarder.id(), mode_name(*mode)), &log, result);
    }
    let throughput = (args.throughput_secs > 0).then(|| {
        let [tcp, udp] = [iperf::Stream::Tcp, iperf::Stream::UdpFlood].map(|stream| {
            let result = iperf_run(stream, forwarder, args, logs).and_then(|t| running.check_alive().map(|()| t));
            failures.count(
                format!("{} iperf3 {}", forwarder.id(), stream_name(stream)),
                &log,
                &result,
            );
            result
        });
        let point = ThroughputPoint::new(forwarder, tcp, udp);
        print_throughput(&point);
        point
    });
    let stopped = running.stop();
    if let Err(e) = &stopped {
        println!("  stopping it: {e}{}", crate::failures::logs_note(&log));
    }
    failures.count(format!("{} stop", forwarder.id()), &log, &stopped);
    (latencies, throughput)
}

/// A mode's name in file names and failures: `ping-pong`, `under-load-MPS`.
fn mode_name(mode: Mode) -> String {
    match mode {
        Mode::PingPong => "ping-pong".to_string(),
        Mode::UnderLoad { mps, .. } => format!("under-load-{mps}"),
    }
}

fn stream_name(stream: iperf::Stream) -> &'static str {
    match stream {
        iperf::Stream::Tcp => "tcp",
        iperf::Stream::UdpFlood => "udp",
    }
}

/// The sockperf runs through a running forwarder, one per mode.
fn latencies(
    forwarder: Forwarder,
    running: &mut Running,
    args: &LatencyArgs,
    modes: &[Mode],
    logs: &Path,
) -> Vec<Result<sockperf::Latency, String>> {
    let server_log = logs.join(format!("{}-server", forwarder.id()));
    let server = sockperf::server(netns::SITE_ADDR[1], args.sockperf_cpu);
    let server = Process::spawn(
        netns::Netns::exec(&netns::site(1), server),
        "",
        &server_log,
        Stop::Sigint,
    );
    let mut server = match server {
        Ok(s) => s,
        Err(e) => return modes.iter().map(|_| Err(format!("sockperf server: {e}"))).collect(),
    };
    sleep(Duration::from_millis(300));
    let mut results = Vec::with_capacity(modes.len());
    for &mode in modes {
        let result = if crate::interrupt::interrupted() {
            Err("interrupted".to_string())
        } else {
            client_run(mode, forwarder, args, logs)
                .and_then(|l| running.check_alive().map(|()| l))
                .and_then(|l| server.check_alive().map(|()| l))
        };
        // Ctrl-C reaches sockperf too: its cut-short run is no measurement.
        let result = result.and_then(|l| match crate::interrupt::interrupted() {
            true => Err("interrupted".to_string()),
            false => Ok(l),
        });
        print_result(mode, &result);
        results.push(result);
    }
    let _ = server.stop();
    results
}

/// One iperf3 run from site 0 to a one-off server in site 1; the client's
/// JSON is kept in `logs`.
fn iperf_run(
    stream: iperf::Stream,
    forwarder: Forwarder,
    args: &LatencyArgs,
    logs: &Path,
) -> Result<iperf::Throughput, String> {
    if crate::interrupt::interrupted() {
        return Err("interrupted".into());
    }
    let name = stream_name(stream);
    let server = netns::Netns::exec(&netns::site(1), iperf::server(netns::SITE_ADDR[1], args.sockperf_cpu));
    let server_log = logs.join(format!("{}-iperf3-{name}-server", forwarder.id()));
    let mut server = Process::spawn(server, "", &server_log, Stop::Sigint).map_err(|e| format!("cannot start {e}"))?;
    sleep(Duration::from_millis(300));
    let client = iperf::client(stream, netns::SITE_ADDR[1], args.sockperf_cpu, args.throughput_secs);
    let out = netns::Netns::exec(&netns::site(0), client)
        .output()
        .map_err(|e| format!("cannot run iperf3: {e}"))?;
    let _ = server.stop();
    let path = logs.join(format!("{}-iperf3-{name}.json", forwarder.id()));
    let _ = std::fs::write(&path, &out.stdout);
    iperf::parse(stream, &String::from_utf8_lossy(&out.stdout)).map_err(|e| format!("{e} (output: {})", path.display()))
}

fn print_throughput(t: &ThroughputPoint) {
    if let Some(tcp) = t.tcp {
        println!("  TCP          {:.2} Gbit/s", tcp.bits_per_sec / 1e9);
    }
    if let Some(pps) = t.udp.and_then(|u| u.packets_per_sec) {
        println!("  UDP 64 B     {:.0} kpps arrived", pps / 1e3);
    }
    for e in &t.errors {
        println!("  iperf3 FAILED: {e}");
    }
    let _ = std::io::stdout().flush();
}

/// One sockperf client run from site 0 to site 1; its output is kept in `logs`.
fn client_run(mode: Mode, forwarder: Forwarder, args: &LatencyArgs, logs: &Path) -> Result<sockperf::Latency, String> {
    let client = sockperf::client(mode, netns::SITE_ADDR[1], args.sockperf_cpu, args.time, args.msg_size);
    let out = netns::Netns::exec(&netns::site(0), client)
        .output()
        .map_err(|e| format!("cannot run sockperf: {e}"))?;
    let path = logs.join(format!("{}-{}.txt", forwarder.id(), mode_name(mode)));
    let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    let _ = std::fs::write(&path, &text);
    sockperf::parse(&text).map_err(|e| format!("{e} (output: {})", path.display()))
}

fn print_result(mode: Mode, result: &Result<sockperf::Latency, String>) {
    let what = match mode {
        Mode::PingPong => "ping-pong".to_string(),
        Mode::UnderLoad { mps, .. } => format!("{mps} msg/s"),
    };
    match result {
        Ok(l) => println!(
            "  {what:<12} p50 {:.1} us, p99 {:.1} us, max {:.1} us ({} replies, {:.0} sent/s)",
            l.p50_us,
            l.p99_us,
            l.max_us,
            l.observations,
            l.sent_per_sec()
        ),
        Err(e) => println!("  {what:<12} FAILED: {e}"),
    }
    let _ = std::io::stdout().flush();
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: LatencyArgs,
    }

    fn args(line: &str) -> LatencyArgs {
        Cli::try_parse_from(std::iter::once("latency").chain(line.split_whitespace()))
            .map(|c| c.args)
            .unwrap()
    }

    #[test]
    fn ping_pong_then_rates_in_order_with_about_1000_replies_a_second() {
        let modes = args("--rates 50000,1000,500,1000").modes();
        let load = |mps, reply_every| Mode::UnderLoad { mps, reply_every };
        assert_eq!(modes, [Mode::PingPong, load(500, 1), load(1000, 1), load(50_000, 50)]);
        assert_eq!(args("--rates 1000 --reply-every 7").modes()[1], load(1000, 7));
    }

    #[test]
    fn defaults_and_settings() {
        let a = args("");
        assert_eq!(a.forwarders, forwarders::ALL);
        assert_eq!((a.time, a.msg_size, a.sockperf_cpu), (5, 64, 0));
        assert_eq!(a.modes().len(), 6);
        let s = args("--forwarders kernel,rs --time 2").settings();
        assert_eq!((s.secs, s.forwarders), (2, vec!["kernel".into(), "rs".into()]));
        assert!(Cli::try_parse_from(["latency", "--forwarders", "vpp"]).is_err());
    }
}
