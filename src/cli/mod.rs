//! l3fwd's application arguments: everything after EAL's `--`.
//!
//! Same spellings and meanings as C l3fwd 22.11 (`parse_args` in its main.c),
//! so one argument list runs both binaries. Options l3fwd-rs adds are extra
//! names, never renames. Long options may be abbreviated, as with getopt_long.

pub mod abbrev;
pub mod mode_args;
pub mod plan;
pub mod portmask;
pub mod rule_files;
pub mod values;

use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::parser::ValueSource;
use clap::{Arg, ArgAction, ArgMatches, CommandFactory, FromArgMatches, Parser};
use rulefile::quote;
use std::error::Error as _;
use std::path::PathBuf;

use crate::cli::plan::ConfigEntry;
use crate::cli::portmask::PortMask;
use crate::cli::values::{
    decimal, parse_alg, parse_burst, parse_config, parse_eth_dest, parse_event_eth_rxqs, parse_eventq_sched,
    parse_hash_entries, parse_link_speed, parse_lookup, parse_model, parse_portmask, parse_vector_number, positive,
    tbl8_groups,
};
use l3fwd_modes::{self as mode, ModeInfo, MODES};

/// C l3fwd's `lcore_params_array_default`, used when `--config` is absent.
const DEFAULT_CONFIG: &str = "(0,0,2),(0,1,2),(0,2,2),(1,0,2),(1,1,2),(1,2,2),(2,0,2),(3,0,3),(3,1,3)";

/// The command line's shape: EAL's options, then l3fwd's.
pub const USAGE: &str = "l3fwd-rs [EAL options] -- -p PORTMASK [--config (port,queue,lcore)[,...]] [options]";

/// A command line that runs anywhere DPDK is installed: no NIC, no
/// hugepages, two `net_null` ports (endless 64-byte frames) for 3 s.
pub const EXAMPLE: &str = "l3fwd-rs -l 0 --no-huge -m 512 --no-pci --vdev=net_null0 --vdev=net_null1 \
-- -p 0x3 --config '(0,0,0),(1,0,0)' --stats-interval 1 --duration 3";

/// The dataplane model: how packets reach the lcores (C's `--mode`), run
/// by [`crate::model`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Model {
    /// Each lcore polls the RX queues `--config` gives it.
    Poll,
    /// An event device schedules packets to every lcore.
    Eventdev,
}

/// When LPM mode looks a batch's IPv4 destinations up (`--ipv4-lookup`):
/// the same lookups either way, in a different order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Ipv4Lookup {
    // (Plain comments: clap would print doc comments as each value's help,
    // and --help in its long layout.)
    // Each lcore times both ways on its own traffic and keeps the faster.
    #[default]
    Timed,
    // As each packet is parsed: the faster while the table's reads hit the
    // caches.
    Parse,
    // After the batch is parsed, in one tight loop: the faster once the
    // reads miss the caches (traffic spread over a large table), as many
    // are then in flight at once.
    Batch,
}

/// One `--eth-dest`: the destination MAC written into frames sent on `port`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EthDest {
    pub port: u16,
    pub mac: [u8; 6],
}

/// l3fwd's application arguments.
#[derive(Debug, Clone, Parser)]
#[command(
    about = "DPDK's l3fwd sample in Rust",
    override_usage = USAGE,
    args_override_self = true,
    allow_negative_numbers = true
)]
pub struct Args {
    /// Hexadecimal bitmask of the ports to use (with or without 0x)
    #[arg(short = 'p', value_name = "PORTMASK", value_parser = parse_portmask, allow_hyphen_values = true)]
    pub portmask: PortMask,

    /// Put the ports in promiscuous mode
    #[arg(short = 'P')]
    pub promiscuous: bool,

    /// RX queues and the lcores polling them: (port,queue,lcore)[,(port,queue,lcore)...]
    // `::std::vec::Vec` keeps clap from treating the field as a list of values:
    // the whole option is one value parsed into many entries.
    #[arg(long, value_name = "CONFIG", value_parser = parse_config, default_value = DEFAULT_CONFIG)]
    pub config: ::std::vec::Vec<ConfigEntry>,

    /// Packet I/O: poll (lcores poll the RX queues of --config) or eventdev
    /// (an event device schedules packets to every lcore; C's --mode)
    #[arg(long = "mode", value_name = "MODE", default_value = "poll", value_parser = parse_model)]
    pub model: Model,

    /// Eventdev mode: how event queues schedule a flow, ordered, atomic
    /// (default) or parallel
    #[arg(long, value_name = "SYNC", value_parser = parse_eventq_sched)]
    pub eventq_sched: Option<dpdk::SchedType>,

    /// Eventdev mode: RX queues per port (default 1)
    #[arg(long = "event-eth-rxqs", value_name = "N", value_parser = parse_event_eth_rxqs)]
    pub event_eth_rxqs: Option<u16>,

    /// Eventdev mode: the RX adapter hands packets over in vectors (one
    /// event per up to --event-vector-size packets of one RX queue)
    #[arg(long = "event-vector")]
    pub event_vector: bool,

    /// With --event-vector: most packets in a vector (default 32)
    #[arg(long = "event-vector-size", value_name = "SIZE", value_parser = parse_vector_number)]
    pub event_vector_size: Option<u64>,

    /// With --event-vector: longest a vector waits for packets, in ns
    /// (default 1000000)
    #[arg(long = "event-vector-tmo", value_name = "NS", value_parser = parse_vector_number)]
    pub event_vector_tmo: Option<u64>,

    /// With --event-vector: use DPDK 22.11's software RX adapter's vectors
    /// anyway. It loses them after its first flush; tests use its first
    /// (one RX queue, at most 128 packets, a multiple of the vector size)
    /// to check the vector path.
    #[arg(long = "software-rx-vectors", hide = true)]
    pub software_rx_vectors: bool,

    /// Lookup method (the modes' names and legacy flags are added from
    /// `mode::MODES`, with their help)
    #[arg(long = "lookup", value_name = "METHOD", value_parser = parse_lookup)]
    lookup_arg: Vec<&'static ModeInfo>,

    /// The lookup mode chosen by --lookup or a mode's legacy flag (-E, -L)
    #[arg(skip = mode::default_mode())]
    pub lookup: &'static ModeInfo,

    /// IPv4 rule file (LPM, EM or ACL rules). Default: configs/lpm_v4.cfg
    /// (em_v4.cfg with -E), built into the binary (C l3fwd's own tables).
    /// As in C, the files are read only when both options are given; ACL
    /// has no default and needs both
    #[arg(long = "rule_ipv4", value_name = "FILE")]
    pub rule_ipv4: Option<PathBuf>,

    /// IPv6 rule file (LPM, EM or ACL rules). Default: configs/lpm_v6.cfg
    /// (em_v6.cfg with -E), built into the binary
    #[arg(long = "rule_ipv6", value_name = "FILE")]
    pub rule_ipv6: Option<PathBuf>,

    /// ACL classify method: scalar, sse, avx2, neon, altivec, avx512x16 or
    /// avx512x32 (default: the best the CPU has)
    #[arg(long, value_name = "ALG", value_parser = parse_alg)]
    pub alg: Option<dpdk::ClassifyAlg>,

    /// Destination MAC for frames sent on port X (repeatable)
    #[arg(long, value_name = "X,MM:MM:MM:MM:MM:MM", value_parser = parse_eth_dest)]
    pub eth_dest: Vec<EthDest>,

    /// Fixed link speed in Mbit/s, autonegotiation off (later l3fwd's
    /// option): 1000, 2500, 5000, 10000, 20000, 25000, 40000, 50000,
    /// 56000, 100000, 200000 or 400000
    #[arg(long, value_name = "MBPS", value_parser = parse_link_speed)]
    pub eth_link_speed: Option<dpdk::LinkSpeed>,

    /// Exact match: fill the IPv6 table instead of the IPv4 one
    #[arg(long)]
    pub ipv6: bool,

    /// Classify packet types in software (for ports that do not)
    #[arg(long)]
    pub parse_ptype: bool,

    /// One mbuf pool per port instead of one shared pool
    #[arg(long)]
    pub per_port_pool: bool,

    /// Disable NUMA awareness (all memory from socket 0)
    #[arg(long)]
    pub no_numa: bool,

    /// Maximum frame length in bytes, 64-9600 (sets the port MTU)
    #[arg(long, value_name = "PKTLEN", value_parser = decimal(64_u32, 9600))]
    pub max_pkt_len: Option<u32>,

    /// Exact-match table size in keys (decimal or 0x hex; default and 0: 4M,
    /// as the C sample's table)
    #[arg(long, value_name = "N", value_parser = parse_hash_entries)]
    pub hash_entry_num: Option<u32>,

    /// l3fwd-rs: rules of each LPM table (default: as many as the rule files need,
    /// and 65536 more in LPM mode, whose tables change in place)
    #[arg(long, value_name = "N", value_parser = positive("LPM rule count"))]
    pub lpm_max_rules: Option<u32>,

    /// l3fwd-rs: tbl8 groups of each LPM table (default: as many as the rule files need,
    /// and 1024 more in LPM mode; at most 16777216; IPv6 tables take
    /// at most 2097152 of them)
    #[arg(long, value_name = "N", value_parser = tbl8_groups)]
    pub lpm_tbl8s: Option<u32>,

    /// l3fwd-rs: mbufs per pool (default: as the C sample computes them); a pcap
    /// port replaying its file (infinite_rx) holds one per frame
    #[arg(long, value_name = "N", value_parser = positive("mbuf count"))]
    pub num_mbufs: Option<u32>,

    /// Descriptors per RX queue
    #[arg(long, value_name = "NPKTS", default_value_t = 1024, value_parser = decimal(1, u16::MAX))]
    pub rx_queue_size: u16,

    /// Descriptors per TX queue
    #[arg(long, value_name = "NPKTS", default_value_t = 1024, value_parser = decimal(1, u16::MAX))]
    pub tx_queue_size: u16,

    /// Per-lcore mbuf cache size of the pools, 0-512 (C l3fwd's --mbcache
    /// since 24.11; default 256 on DPDK 22.11, 512 from 24.11, as C's)
    #[arg(long, value_name = "CACHESZ", default_value_t = crate::DEFAULT_MBCACHE, value_parser = clap::value_parser!(u32).range(0..=512))]
    pub mbcache: u32,

    /// Accepted for later C l3fwd's command lines: C drops RX offloads the
    /// port lacks; l3fwd-rs requests none, so there is nothing to relax
    #[arg(long)]
    pub relax_rx_offload: bool,

    /// No RSS, even on ports with several RX queues (later C l3fwd's --disable-rss)
    #[arg(long)]
    pub disable_rss: bool,

    /// l3fwd-rs: look packets up one by one instead of in bulk (exact match)
    #[arg(long)]
    pub sequential_lookup: bool,

    /// l3fwd-rs: when LPM looks IPv4 destinations up: parse (as each packet is
    /// parsed), batch (after the batch is parsed: many table reads in flight),
    /// or timed: each lcore times both on its own traffic and keeps the faster
    #[arg(long, value_enum, value_name = "WHEN", default_value_t = Ipv4Lookup::Timed)]
    pub ipv4_lookup: Ipv4Lookup,

    /// l3fwd-rs: exact match looks keys up in bulk calls of at most N, 1-64
    /// (C's groups are 8; default: the whole burst, up to 64, per call)
    #[arg(long, value_name = "N", value_parser = decimal(1_u16, dpdk::HASH_BULK_MAX as u16), conflicts_with = "sequential_lookup")]
    pub em_lookup_group: Option<u16>,

    /// Packets per RX poll, 1-512 (later l3fwd's option; 0 or more than 512
    /// keep the default, as there)
    #[arg(long, value_name = "NPKTS", default_value = "32", value_parser = parse_burst)]
    pub rx_burst: usize,

    /// Packets buffered per TX port before they are sent, 1-512 (later
    /// l3fwd's option; 0 or more than 512 keep the default, as there)
    #[arg(long, value_name = "NPKTS", default_value = "32", value_parser = parse_burst)]
    pub tx_burst: usize,

    /// l3fwd-rs: start forwarding without waiting (up to 9 s, as C does)
    /// for the ports' links to come up
    #[arg(long)]
    pub skip_link_wait: bool,

    /// l3fwd-rs: flush TX buffers at least every US microseconds (C: 100)
    #[arg(long, value_name = "US", default_value_t = 100, value_parser = clap::value_parser!(u64).range(1..=1_000_000_000))]
    pub drain_us: u64,

    /// l3fwd-rs: flush TX buffers only when full or on the drain timer, as C
    /// does (default: also as soon as a poll round over the RX queues comes
    /// back short, so an idle lcore sends at once)
    #[arg(long)]
    pub c_drain: bool,

    /// l3fwd-rs: after a short poll round, flush only once US microseconds
    /// have passed since the last flush (default 0: at once). On af_xdp,
    /// af_packet and tap each flush is a system call; a gap bounds them
    /// under a trickle of packets, and delays a lone packet by up to US
    #[arg(long, value_name = "US", default_value_t = 0, value_parser = clap::value_parser!(u64).range(0..=1_000_000), conflicts_with = "c_drain")]
    pub idle_flush_gap: u64,

    /// l3fwd-rs: print port statistics every SECS seconds (0 = never)
    #[arg(long, value_name = "SECS", default_value_t = 0)]
    pub stats_interval: u64,

    /// l3fwd-rs: stop by itself after SECS seconds
    #[arg(long, value_name = "SECS")]
    pub duration: Option<u64>,

    /// l3fwd-rs: write final statistics as JSON to FILE
    #[arg(long, value_name = "FILE")]
    pub stats_json: Option<PathBuf>,

    /// l3fwd-rs: serve the counters in Prometheus' text format at
    /// http://ADDR:PORT/metrics (off by default)
    #[arg(long, value_name = "ADDR:PORT")]
    pub metrics: Option<std::net::SocketAddr>,

    /// Arguments that are not options: C's getopt leaves them unread, and
    /// l3fwd-rs ignores them too, with a warning, unless they look like a
    /// split `--config`.
    #[arg(hide = true, value_name = "IGNORED")]
    stray: Vec<String>,
}

/// Parses the application arguments: program name first, then what follows
/// EAL's `--`. Errors are one line; `--help` also comes back as an error, to
/// `exit()` on like any other.
pub fn parse(app_args: &[String]) -> Result<Args, clap::Error> {
    let command = command();
    let long_names: Vec<&str> = command.get_arguments().filter_map(Arg::get_long).collect();
    let with_value: Vec<String> = command
        .get_arguments()
        .filter(|a| a.get_action().takes_values())
        .flat_map(|a| {
            [
                a.get_long().map(|l| format!("--{l}")),
                a.get_short().map(|s| format!("-{s}")),
            ]
        })
        .flatten()
        .collect();
    let app_args =
        abbrev::expand(app_args, &long_names, &with_value).map_err(|e| error_line(ErrorKind::UnknownArgument, &e))?;
    let matches = command.clone().try_get_matches_from(app_args).map_err(one_line)?;
    let mut args = Args::from_arg_matches(&matches).map_err(one_line)?;
    check_event_options(&args, &matches).map_err(|message| error_line(ErrorKind::ArgumentConflict, message))?;
    check_stray(&args.stray).map_err(|message| error_line(ErrorKind::UnknownArgument, &message))?;
    args.lookup = args
        .chosen_lookup(&matches)
        .map_err(|message| error_line(ErrorKind::ArgumentConflict, &message))?;
    Ok(args)
}

/// An error printed as `error: <message>` on one line.
fn error_line(kind: ErrorKind, message: &str) -> clap::Error {
    clap::Error::raw(kind, format!("{message}\n"))
}

/// clap spreads an error over several lines (usage, tips); keep its first
/// paragraph, on one line. Help output is left alone.
fn one_line(error: clap::Error) -> clap::Error {
    if !error.use_stderr() {
        return error;
    }
    // clap renders a value's control characters its own way (a backspace
    // dropped, newlines kept), which no replacement finds: say it here.
    let value = (error.get(ContextKind::InvalidValue), error.get(ContextKind::InvalidArg));
    if let ((Some(ContextValue::String(value)), Some(ContextValue::String(arg))), Some(why)) = (value, error.source()) {
        return error_line(
            error.kind(),
            &format!("invalid value '{}' for '{arg}': {why}", quote(value)),
        );
    }
    let rendered = capped_values(&error);
    let paragraph = rendered.split("\n\n").next().unwrap_or_default();
    let message = paragraph.lines().map(str::trim).collect::<Vec<_>>().join(" ");
    error_line(error.kind(), message.strip_prefix("error: ").unwrap_or(&message))
}

/// clap's message, with every value of the command line it echoes (a
/// 50 KB `--config`, an unknown argument) cut as [`quote`] cuts it.
fn capped_values(error: &clap::Error) -> String {
    let mut rendered = error.render().to_string();
    for (_, value) in error.context() {
        if let ContextValue::String(text) = value {
            rendered = rendered.replace(text.as_str(), &quote(text));
        }
    }
    rendered
}

/// The command line as clap parses it: [`Args`] and the modes' legacy flags.
pub fn command() -> clap::Command {
    let modes: Vec<String> = MODES.iter().map(|m| format!("{} = {}", m.name, m.about)).collect();
    let lookup_help = format!("Lookup method: {}", modes.join("; "));
    let command = Args::command().mut_arg("lookup_arg", |a| a.help(lookup_help));
    let flags = MODES.iter().filter_map(|m| {
        let flag = m.flag?;
        let help = format!("{} (legacy spelling of --lookup={})", m.about, m.name);
        // Counted: C refuses a flag given twice (`-E -E`) as two modes.
        Some(Arg::new(m.name).short(flag).action(ArgAction::Count).help(help))
    });
    let command = command.version(version()).after_help(eal_help());
    command.args(flags)
}

/// `--version`: l3fwd-rs's and the DPDK libraries' it runs on.
fn version() -> &'static str {
    static VERSION: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    VERSION.get_or_init(|| format!("{} on {}", env!("CARGO_PKG_VERSION"), dpdk::version()))
}

/// The end of `--help`: where EAL's options are told, and [`EXAMPLE`].
fn eal_help() -> String {
    let release = dpdk::version()
        .split(' ')
        .nth(1)
        .and_then(|v| v.rsplit_once('.'))
        .map_or("22.11", |(r, _)| r);
    format!(
        "EAL options (before --) are DPDK's, e.g. -l CORES, -m MB, --no-huge, --no-pci, --vdev DEVICE, \
         --file-prefix NAME; `dpdk-testpmd --help` lists them all, as does \
         https://doc.dpdk.org/guides-{release}/linux_gsg/linux_eal_parameters.html\n\n\
         Example, on virtual ports (no NIC, no hugepages):\n  {EXAMPLE}"
    )
}

impl Args {
    /// C accepts one of --lookup and the legacy flags, once; none means
    /// the default mode.
    fn chosen_lookup(&self, matches: &ArgMatches) -> Result<&'static ModeInfo, String> {
        let flags = MODES.iter().copied().filter(|m| m.flag.is_some()).flat_map(|m| {
            let times = matches.get_count(m.name);
            std::iter::repeat_n(m, times.into())
        });
        let chosen: Vec<&'static ModeInfo> = flags.chain(self.lookup_arg.iter().copied()).collect();
        match chosen[..] {
            [] => Ok(mode::default_mode()),
            [mode] => Ok(mode),
            _ => Err("only one lookup mode is allowed at a time".to_owned()),
        }
    }
}

/// A stray argument is ignored as C ignores it, unless it starts with `(`:
/// then it is most likely the rest of a `--config` split by a space, which C
/// would silently drop.
fn check_stray(stray: &[String]) -> Result<(), String> {
    for arg in stray {
        if arg.starts_with('(') {
            return Err(format!(
                "stray argument '{}': part of --config? Quote the whole list, without spaces between tuples",
                quote(arg)
            ));
        }
        log::warn!("ignoring '{}': not an option (C l3fwd ignores it too)", quote(arg));
    }
    Ok(())
}

/// C's checks of the event options, with its messages: `--config` has no
/// meaning in eventdev mode (every lcore takes events), and the event
/// options none in poll mode.
fn check_event_options(args: &Args, matches: &ArgMatches) -> Result<(), &'static str> {
    let given = |id: &str| matches.value_source(id) == Some(ValueSource::CommandLine);
    match args.model {
        Model::Eventdev if given("config") => Err("lcore config is not valid when event mode is selected"),
        Model::Poll if given("event_eth_rxqs") => Err("eth_rx_queues is valid only when event mode is selected"),
        Model::Poll if given("eventq_sched") => Err("eventq_sched is valid only when event mode is selected"),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn try_parse(args: &str) -> Result<Args, clap::Error> {
        let argv: Vec<String> = std::iter::once("l3fwd-rs")
            .chain(args.split_whitespace())
            .map(String::from)
            .collect();
        parse(&argv)
    }

    fn ok(args: &str) -> Args {
        try_parse(args).unwrap_or_else(|e| panic!("{args}: {e}"))
    }

    /// The rendered error, which must be a single line.
    fn err(args: &str) -> String {
        let message = try_parse(args).expect_err(args).to_string();
        let message = message.trim_end();
        assert!(!message.contains('\n'), "multi-line error: {message}");
        message.to_owned()
    }

    fn entry(port: u16, queue: u16, lcore: u32) -> ConfigEntry {
        ConfigEntry { port, queue, lcore }
    }

    #[test]
    fn clap_definition_is_valid() {
        command().debug_assert();
    }

    #[test]
    fn defaults_match_c() {
        let args = ok("-p 3");
        assert_eq!(args.portmask, PortMask::from_bits(3));
        assert!(!args.promiscuous);
        assert_eq!(args.lookup, &mode::LPM);
        assert_eq!(args.rx_queue_size, 1024);
        assert_eq!(args.tx_queue_size, 1024);
        assert_eq!(args.max_pkt_len, None);
        assert_eq!(args.stats_interval, 0);
        assert_eq!(args.duration, None);
        assert!(args.eth_dest.is_empty());
        let defaults = [(0, 0, 2), (0, 1, 2), (0, 2, 2), (1, 0, 2), (1, 1, 2), (1, 2, 2)];
        let defaults = defaults.into_iter().chain([(2, 0, 2), (3, 0, 3), (3, 1, 3)]);
        let expected: Vec<_> = defaults.map(|(p, q, l)| entry(p, q, l)).collect();
        assert_eq!(args.config, expected);
    }

    /// A short round is flushed at once on every port, af_xdp's too: a
    /// gap there doubled a lone packet's latency (docs/BENCHMARKS.md).
    #[test]
    fn a_short_round_flushes_at_once_unless_a_gap_is_given() {
        assert_eq!(ok("-p 3").idle_flush_gap, 0);
        assert_eq!(ok("-p 3 --idle-flush-gap 10").idle_flush_gap, 10);
        assert!(err("-p 3 --idle-flush-gap 10 --c-drain").contains("cannot be used with"));
    }

    #[test]
    fn portmask_is_hex_with_or_without_prefix() {
        assert_eq!(ok("-p ff").portmask, PortMask::from_bits(0xff));
        assert_eq!(ok("-p 0x10").portmask, PortMask::from_bits(0x10));
        assert_eq!(ok("-p0X3").portmask, PortMask::from_bits(3));
        assert_eq!(ok("-p 10").portmask, PortMask::from_bits(0x10));
        // strtoul negates, and C keeps 32 bits: -1 is every port.
        assert_eq!(ok("-p -1").portmask, PortMask::from_bits(u32::MAX));
        assert_eq!(ok("-p -2").portmask, PortMask::from_bits(0xffff_fffe));
    }

    #[test]
    fn numbers_may_start_with_white_space_as_for_strtoul() {
        let argv = [
            "-p",
            " \t-2",
            "--max-pkt-len",
            " 1500",
            "--rx-queue-size",
            " 512",
            "--tx-queue-size",
            "\n64",
        ];
        let argv: Vec<String> = std::iter::once("l3fwd-rs").chain(argv).map(String::from).collect();
        let args = parse(&argv).unwrap();
        assert_eq!(args.portmask, PortMask::from_bits(0xffff_fffe));
        assert_eq!(args.max_pkt_len, Some(1500));
        assert_eq!((args.rx_queue_size, args.tx_queue_size), (512, 64));
        let argv = ["l3fwd-rs", "-p", " 3"].map(String::from);
        assert_eq!(parse(&argv).unwrap().portmask, PortMask::from_bits(3));
    }

    #[test]
    fn burst_sizes_as_later_l3fwd() {
        let bursts = |args: &str| {
            let a = ok(&format!("-p 1 {args}"));
            (a.rx_burst, a.tx_burst)
        };
        assert_eq!(bursts(""), (32, 32));
        assert_eq!(bursts("--rx-burst 512 --tx-burst 1"), (512, 1));
        // 0 and over 512: the default, as in C.
        assert_eq!(bursts("--rx-burst 0 --tx-burst 513"), (32, 32));
        assert!(err("-p 1 --rx-burst x").contains("invalid burst size 'x'"));
    }

    #[test]
    fn portmask_errors() {
        for bad in ["0", "0x0", "xyz", "0x", "1g", "100000000", "-0", "--1", "-x"] {
            assert!(err(&format!("-p {bad}")).contains(&format!("invalid portmask '{bad}'")));
        }
        assert!(err("--config (0,0,0)").contains("-p <PORTMASK>"));
    }

    #[test]
    fn config_tuples() {
        let args = ok("-p 1 --config (0,0,1),(0,1,2)");
        assert_eq!(args.config, vec![entry(0, 0, 1), entry(0, 1, 2)]);
        let args = ok("-p 1 --config=(0x1,010,0x7f)");
        assert_eq!(args.config, vec![entry(1, 8, 127)]);
    }

    #[test]
    fn config_accepts_what_has_one_meaning() {
        let both = vec![entry(0, 0, 1), entry(1, 0, 1)];
        assert_eq!(ok("-p 1 --config (0,0,1)(1,0,1)").config, both);
        assert_eq!(ok("-p 1 --config (0,0,1),(1,0,1),").config, both);
    }

    #[test]
    fn config_tolerates_whitespace() {
        let argv = ["l3fwd-rs", "-p", "1", "--config", " ( 0 , 1 ,2 ) , (1,0, 3) "];
        let args = parse(&argv.map(String::from)).unwrap();
        assert_eq!(args.config, vec![entry(0, 1, 2), entry(1, 0, 3)]);
    }

    #[test]
    fn config_errors_name_the_bad_token() {
        let cases = [
            ("(0,x,1)", "invalid --config tuple '(0,x,1)': queue 'x' is not a number"),
            ("(0,0,1", "invalid --config tuple '(0,0,1': missing ')'"),
            ("0,0,1)", "invalid --config: expected '(' at '0,0,1)'"),
            ("(0,0)", "invalid --config tuple '(0,0)': expected 3 fields, found 2"),
            (
                "(0,0,1,2)",
                "invalid --config tuple '(0,0,1,2)': expected 3 fields, found 4",
            ),
            (
                "(32,0,1)",
                "invalid --config tuple '(32,0,1)': port 32 out of range 0..32",
            ),
            ("(0,1024,1)", "tuple '(0,1024,1)': queue 1024 out of range 0..1024"),
            ("(0,0,128)", "tuple '(0,0,128)': lcore 128 out of range 0..128"),
            ("(0,0,-1)", "tuple '(0,0,-1)': lcore '-1' is not a number"),
            ("(,0,1)", "tuple '(,0,1)': port '' is not a number"),
            ("(0,0,1),x", "expected '(' at 'x'"),
            ("(0,0,1),,(1,0,1)", "expected '(' at ',(1,0,1)'"),
            ("(0,0,1)x", "expected ',' before 'x'"),
        ];
        for (config, expected) in cases {
            let message = err(&format!("-p 1 --config={config}"));
            assert!(message.contains(expected), "{config}: {message}");
        }
    }

    #[test]
    fn lookup_modes() {
        assert_eq!(ok("-p 1 -E").lookup, &mode::EM);
        assert_eq!(ok("-p 1 -L").lookup, &mode::LPM);
        assert_eq!(ok("-p 1 --lookup=em").lookup, &mode::EM);
        assert_eq!(ok("-p 1 --lookup lpm").lookup, &mode::LPM);
    }

    #[test]
    fn only_one_lookup_mode() {
        for args in [
            "-E -L",
            "-EL",
            "-L --lookup=em",
            "-L --lookup=lpm",
            "-E -E",
            "-LL",
            "--lookup em --lookup em",
        ] {
            let message = err(&format!("-p 1 {args}"));
            assert!(message.contains("only one lookup mode is allowed at a time"), "{args}");
        }
    }

    #[test]
    fn lookup_errors() {
        assert_eq!(ok("-p 1 --lookup=fib").lookup, &mode::FIB);
        assert_eq!(ok("-p 1 --lookup=acl").lookup, &mode::ACL);
        assert_eq!(
            ok("-p 1 --lookup=acl --alg scalar").alg,
            Some(dpdk::ClassifyAlg::Scalar)
        );
        assert_eq!(ok("-p 1 --al=avx2").alg, Some(dpdk::ClassifyAlg::Avx2));
        assert!(err("-p 1 --alg=fast").contains("invalid ACL classify method 'fast' (accepted: scalar, sse,"));
        assert!(err("-p 1 --lookup=hash").contains("invalid lookup method 'hash'"));
    }

    #[test]
    fn ipv4_lookup_is_timed_unless_told() {
        assert_eq!(ok("-p 1").ipv4_lookup, Ipv4Lookup::Timed);
        assert_eq!(ok("-p 1 --ipv4-lookup batch").ipv4_lookup, Ipv4Lookup::Batch);
        assert_eq!(ok("-p 1 --ipv4-lookup=parse").ipv4_lookup, Ipv4Lookup::Parse);
        assert!(err("-p 1 --ipv4-lookup later").contains("later"));
    }

    #[test]
    fn rule_files_and_flags() {
        let args = ok("-p 1 -P --rule_ipv4=a.cfg --rule_ipv6 b.cfg --ipv6 --parse-ptype \
                       --per-port-pool --no-numa --sequential-lookup");
        assert_eq!(args.rule_ipv4, Some(PathBuf::from("a.cfg")));
        assert_eq!(args.rule_ipv6, Some(PathBuf::from("b.cfg")));
        assert!(args.promiscuous && args.ipv6 && args.parse_ptype);
        assert!(args.per_port_pool && args.no_numa && args.sequential_lookup);
    }

    #[test]
    fn numbers() {
        let args = ok("-p 1 --max-pkt-len 9000 --rx-queue-size=512 --tx-queue-size 256 \
                       --hash-entry-num 0x10 --stats-interval 2 --duration=5 --stats-json s.json");
        assert_eq!(args.max_pkt_len, Some(9000));
        assert_eq!((args.rx_queue_size, args.tx_queue_size), (512, 256));
        assert_eq!(args.hash_entry_num, Some(16));
        // C ignores the option; 0 is its default size.
        assert_eq!(
            ok("-p 1 --hash-entry-num 0").hash_entry_num,
            Some(em::DEFAULT_HASH_ENTRIES)
        );
        assert_eq!((args.stats_interval, args.duration), (2, Some(5)));
        assert_eq!(args.stats_json, Some(PathBuf::from("s.json")));
        assert_eq!((args.lpm_max_rules, args.lpm_tbl8s, args.num_mbufs), (None, None, None));
        assert_eq!(args.mbcache, if dpdk::RELEASE >= 2411 { 512 } else { 256 });
        assert!(!args.relax_rx_offload && !args.disable_rss);
        let args = ok("-p 1 --mbcache 0 --relax-rx-offload --disable-rss");
        assert_eq!(args.mbcache, 0);
        assert!(args.relax_rx_offload && args.disable_rss);
        assert_eq!(ok("-p 1 --mbcache=512").mbcache, 512);
        let args = ok("-p 1 --lpm-max-rules 1000000 --lpm-tbl8s=0x10000 --num-mbufs 1048576");
        assert_eq!(args.lpm_max_rules, Some(1_000_000));
        assert_eq!(args.lpm_tbl8s, Some(65536));
        assert_eq!(args.num_mbufs, Some(1 << 20));
    }

    #[test]
    fn number_errors() {
        assert!(err("-p 1 --max-pkt-len 63").contains("'63'"));
        assert!(err("-p 1 --max-pkt-len 9601").contains("'9601'"));
        assert!(err("-p 1 --rx-queue-size 0").contains("'0'"));
        assert!(err("-p 1 --tx-queue-size 65536").contains("'65536'"));
        assert!(err("-p 1 --stats-interval x").contains("'x'"));
        assert!(err("-p 1 --hash-entry-num x").contains("invalid hash entry number 'x'"));
        assert!(err("-p 1 --lpm-max-rules 0").contains("invalid LPM rule count '0'"));
        assert!(err("-p 1 --lpm-tbl8s 4294967296").contains("invalid tbl8 group count '4294967296'"));
        assert!(err("-p 1 --lpm-tbl8s 16777217").contains("16777217 tbl8 groups: rte_lpm takes at most 16777216"));
        assert_eq!(ok("-p 1 --lpm-tbl8s 16777216").lpm_tbl8s, Some(1 << 24));
        assert!(err("-p 1 --num-mbufs x").contains("invalid mbuf count 'x'"));
        assert!(err("-p 1 --mbcache 513").contains("'513'"));
        // A negative number is a value of its option, not an unknown argument.
        for option in [
            "--rx-queue-size",
            "--stats-interval",
            "--num-mbufs",
            "--duration",
            "--max-pkt-len",
        ] {
            let message = err(&format!("-p 1 {option} -1"));
            assert!(
                message.contains(&format!("invalid value '-1' for '{option}")),
                "{message}"
            );
        }
    }

    #[test]
    fn echoed_values_are_cut() {
        let tuples = vec!["(0,0,0)"; 5000].join(",");
        let too_many = format!("{tuples},(0,1024,0)");
        let long = "x".repeat(100_000);
        let cases = [
            ("--config", too_many.as_str()),
            ("--config", &format!("{tuples},(0,0,0")),
            ("--eth-dest", &format!("0,{long}")),
            ("-p", &long),
            ("--lookup", &long),
            (&format!("--{long}"), "1"),
            ("--max-pkt-len", &long),
        ];
        for (option, value) in cases {
            let argv = ["l3fwd-rs", "-p", "1", option, value].map(String::from);
            let message = parse(&argv).expect_err(option).to_string();
            assert!(
                message.len() < 600,
                "{option}: {} bytes: {}",
                message.len(),
                &message[..600]
            );
            assert!(message.contains(" characters)"), "{option}: {message}");
        }
    }

    #[test]
    fn eth_dest() {
        let args = ok("-p 1 --eth-dest=0,00:11:22:33:44:55 --eth-dest 31,aabb:CCDD:eeff");
        assert_eq!(
            args.eth_dest,
            vec![
                EthDest {
                    port: 0,
                    mac: [0x00, 0x11, 0x22, 0x33, 0x44, 0x55]
                },
                EthDest {
                    port: 31,
                    mac: [0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff]
                },
            ]
        );
    }

    #[test]
    fn eth_dest_errors() {
        let cases = [
            ("32,00:11:22:33:44:55", "port 32 >= 32"),
            ("x,00:11:22:33:44:55", "port 'x' is not a number"),
            ("0", "expected X,MM:MM:MM:MM:MM:MM"),
            ("0,00:11:22:33:44", "invalid ethernet address '00:11:22:33:44'"),
            ("0,00-11-22-33-44-55", "invalid ethernet address '00-11-22-33-44-55'"),
            ("0,0:1:2:3:4:5", "invalid ethernet address '0:1:2:3:4:5'"),
            ("0,00:11:22:33:44:5g", "invalid ethernet address '00:11:22:33:44:5g'"),
            ("0,+0:11:22:33:44:55", "invalid ethernet address '+0:11:22:33:44:55'"),
        ];
        for (value, expected) in cases {
            let message = err(&format!("-p 1 --eth-dest={value}"));
            assert!(message.contains(expected), "{value}: {message}");
        }
    }

    #[test]
    fn event_vector_options() {
        let args = ok("-p 1 --mode=eventdev --event-vector --event-vector-size 64 --event-vector-tmo=200000");
        assert!(args.event_vector);
        assert_eq!(
            (args.event_vector_size, args.event_vector_tmo),
            (Some(64), Some(200_000))
        );
        // As C's strtol: not a number is 0, the default.
        assert_eq!(ok("-p 1 --event-vector-size x").event_vector_size, Some(0));
        // C's getopt abbreviations.
        assert_eq!(ok("-p 1 --event-vector-s 64").event_vector_size, Some(64));
        assert_eq!(ok("-p 1 --event-vector-t 1").event_vector_tmo, Some(1));
        assert!(!ok("-p 1").event_vector);
    }

    #[test]
    fn io_mode_and_event_options() {
        assert_eq!(ok("-p 1").model, Model::Poll);
        assert_eq!(ok("-p 1 --mode poll").model, Model::Poll);
        // C's parse_mode leaves poll mode for anything but "eventdev".
        assert_eq!(ok("-p 1 --mode=polling").model, Model::Poll);
        assert_eq!(ok("-p 1 --mode=").model, Model::Poll);
        let event = ok("-p 1 --mode=eventdev --eventq-sched=ordered --event-eth-rxqs 2");
        assert_eq!(event.model, Model::Eventdev);
        assert_eq!(event.eventq_sched, Some(dpdk::SchedType::Ordered));
        assert_eq!(event.event_eth_rxqs, Some(2));
        // Unknown values keep C's defaults.
        assert_eq!(
            ok("-p 1 --mode=eventdev --eventq-sched=fifo").eventq_sched,
            Some(dpdk::SchedType::Atomic)
        );
        assert_eq!(ok("-p 1 --mode=eventdev --event-eth-rxqs 0").event_eth_rxqs, Some(1));
        for (line, expected) in [
            (
                "-p 1 --mode=eventdev --config (0,0,0)",
                "lcore config is not valid when event mode is selected",
            ),
            (
                "-p 1 --event-eth-rxqs 2",
                "eth_rx_queues is valid only when event mode is selected",
            ),
            (
                "-p 1 --eventq-sched=atomic",
                "eventq_sched is valid only when event mode is selected",
            ),
        ] {
            assert!(err(line).contains(expected), "{line}: {}", err(line));
        }
    }

    #[test]
    fn long_options_may_be_abbreviated_and_repeated() {
        let args = ok("-p 1 -p 2 --conf (1,0,0) --max-pkt 128");
        assert_eq!(args.portmask, PortMask::from_bits(2));
        assert_eq!(args.config, vec![entry(1, 0, 0)]);
        assert_eq!(args.max_pkt_len, Some(128));
    }

    #[test]
    fn unknown_arguments_are_errors() {
        assert!(err("-p 1 --bogus").contains("--bogus"));
    }

    #[test]
    fn stray_arguments_are_ignored_as_in_c_unless_a_split_config() {
        assert_eq!(ok("-p 1 stray 0x3").portmask, PortMask::from_bits(1));
        let message = err("-p 3 --config (0,0,0), (1,0,0)");
        assert!(
            message.contains("stray argument '(1,0,0)': part of --config?"),
            "{message}"
        );
    }

    #[test]
    fn getopt_abbreviations_as_c_resolves_them() {
        let args = ok("-p 1 --hash 16 --par --h=32 --c (0,0,0) --rule_ipv4 a --rule_ipv6 b --n");
        assert_eq!(args.hash_entry_num, Some(32));
        assert!(args.parse_ptype && args.no_numa);
        assert_eq!(args.config, vec![entry(0, 0, 0)]);
        assert!(err("-p 1 --p").contains("option '--p' is ambiguous: --parse-ptype, --per-port-pool"));
        assert!(err("-p 1 --rule a").contains("ambiguous: --rule_ipv4, --rule_ipv6"));
    }

    #[test]
    fn help_lists_every_option() {
        // What the user sees: --help through the parser, against clap's own
        // list of the options (the modes' flags and every field of Args).
        let help = try_parse("--help").unwrap_err().to_string();
        let command = command();
        let shown: Vec<String> = command
            .get_arguments()
            .filter(|a| !a.is_hide_set())
            .flat_map(|a| {
                let long = a.get_long().map(|l| format!("--{l}"));
                let short = a.get_short().map(|c| format!("-{c}"));
                long.into_iter().chain(short)
            })
            .collect();
        assert!(shown.len() > 30, "{shown:?}");
        for mode in MODES {
            assert!(
                help.contains(mode.name) && help.contains(mode.about),
                "{} missing:\n{help}",
                mode.name
            );
        }
        for option in shown
            .iter()
            .map(String::as_str)
            .chain(["-E", "-L", "--alg", "--drain-us", "--help"])
        {
            assert!(help.contains(option), "{option} missing from help:\n{help}");
        }
        let error = try_parse("--help").unwrap_err();
        assert_eq!(error.kind(), ErrorKind::DisplayHelp);
        assert!(error.to_string().contains("--stats-json"));
    }
}
