//! DPDK's own tools on a running l3fwd-rs, as a DPDK user runs them:
//! `dpdk-proc-info` reads its ports, `dpdk-dumpcap` captures what it
//! forwards, `dpdk-telemetry.py` lists its ports. The first two are
//! secondary processes, which map the primary's memory: they need it on
//! hugepages, so this runs on hugepages, as root.

use std::fs;
use std::io::Write;
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Output, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use l3fwd_rs::dataplane::packet::{eth_rewrite, rewrite};
use pcap_file::pcapng::blocks::ENHANCED_PACKET_BLOCK;
use pcap_file::pcapng::PcapNgReader;
use testkit::{l3fwd_rs, Process, Run, Scratch, Stop, TWO_PORTS};

use crate::hugepages;

/// Frames of four flows to 198.18.1.0/24, which the built-in routes send
/// out of port 1.
fn input_frames() -> Vec<Vec<u8>> {
    (1..=4)
        .map(|n| testkit::frames::udp4([198, 18, 0, n], [198, 18, 1, n], 64, 18 + usize::from(n)))
        .collect()
}

/// What l3fwd-rs sends on port 1 for `frame`: its MACs (the next hop and
/// the pcap port's own), TTL and checksum rewritten.
fn forwarded(frame: &[u8]) -> Vec<u8> {
    let mut out = frame.to_vec();
    assert!(rewrite(
        &mut out,
        &eth_rewrite(testkit::frames::next_hop_mac(1), testkit::frames::port_mac(1))
    ));
    out
}

/// Runs `program args`, with a deadline: a tool that cannot attach may
/// wait forever.
fn tool(program: &str, args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{program} (Debian's dpdk package): {e}"));
    child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            break;
        }
        thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    // DPDK's dpdk-proc-info dies of SIGSEGV in its own clean-up, once it
    // has printed everything, when the primary has pcap ports: 22.11 and
    // 25.11 do the same beside C l3fwd.
    let crashed_at_exit = args.contains(&"dpdk-proc-info") && out.status.signal() == Some(11);
    assert!(
        out.status.success() || crashed_at_exit,
        "{program} {args:?}: {}\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

#[test]
fn proc_info_dumpcap_and_telemetry_work_on_a_running_forwarder() {
    if !rustix::process::geteuid().is_root() {
        eprintln!("skipped: hugepages need root");
        return;
    }
    let dir = Scratch::new("dpdk-tools");
    let mount = dir.path("mnt");
    let memory = hugepages::Memory::huge(512, &mount).expect("hugepages");
    // A secondary process re-opens the pcap ports' files from their device
    // arguments, which DPDK cuts at 63 bytes: short paths.
    let files = Scratch::short("l3t");
    let input = files.path("in.pcap");
    trafficgen::write_pcap(&input, &input_frames()).unwrap();
    let empty = files.path("empty.pcap");
    trafficgen::write_pcap(&empty, &Vec::<Vec<u8>>::new()).unwrap();
    // Port 0 replays the flows; port 1 receives nothing. With no TX file,
    // a pcap port has one TX queue (so one lcore) and drops what it sends,
    // after the capture saw it.
    let vdevs = [
        format!("--vdev=net_pcap0,rx_pcap={},infinite_rx=1", input.display()),
        format!("--vdev=net_pcap1,rx_pcap={}", empty.display()),
    ];
    let huge_dir = mount.display().to_string();
    let prefix = testkit::unique_prefix("tools");
    let json = dir.path("stats.json");
    let json_arg = json.display().to_string();
    let command = Run::new(l3fwd_rs())
        .eal_args(&["--huge-dir", &huge_dir, "-m", "256", &vdevs[0], &vdevs[1]])
        .args(&[TWO_PORTS, &["--stats-interval", "0", "--stats-json", &json_arg]].concat())
        .command(&prefix);
    // Stopped when dropped: a failed check must not leave it holding the
    // hugepages.
    let mut forwarder = Process::spawn(command, &prefix, &dir.path("l3fwd"), Stop::Sigint).expect("spawn l3fwd-rs");
    forwarder.wait_for_stderr("forwarding", Duration::from_secs(60));

    let proc_info = |what: &str| {
        // Line-buffered: a crash at exit (see `tool`) loses nothing printed.
        let args = [
            "-oL",
            "dpdk-proc-info",
            "--file-prefix",
            &prefix,
            "--no-pci",
            "--",
            what,
        ];
        tool("stdbuf", &args, "")
    };
    let stats = proc_info("--stats");
    let stats = String::from_utf8_lossy(&stats.stdout);
    for port in ["port 0", "port 1"] {
        assert!(stats.contains(&format!("NIC statistics for {port}")), "{stats}");
    }
    let rx: Vec<u64> = stats
        .lines()
        .filter_map(|l| l.trim().strip_prefix("RX-packets:"))
        .filter_map(|rest| rest.split_whitespace().next()?.parse().ok())
        .collect();
    assert!(rx.first().is_some_and(|&n| n > 0), "port 0 received nothing:\n{stats}");
    let xstats = proc_info("--xstats");
    let xstats = String::from_utf8_lossy(&xstats.stdout);
    assert!(xstats.contains("rx_good_packets"), "{xstats}");

    let capture = dir.path("capture.pcapng");
    let capture_arg = capture.display().to_string();
    let dumpcap_args = [
        "--file-prefix",
        &prefix,
        "-i",
        "net_pcap1",
        "-c",
        "64",
        "-w",
        &capture_arg,
    ];
    tool("dpdk-dumpcap", &dumpcap_args, "");
    // The capture ends while packets flow, so an lcore may be inside the
    // callback DPDK removes: before 25.11 the forwarder could die of it
    // (see dpdk/csrc/shim.c): in 5 of 57 runs on a loaded machine.
    forwarder
        .check_alive()
        .unwrap_or_else(|e| panic!("when dpdk-dumpcap ended: {e}"));

    let telemetry = tool("dpdk-telemetry.py", &["-f", &prefix], "/ethdev/list\n");
    let telemetry = String::from_utf8_lossy(&telemetry.stdout);
    let listed: Option<serde_json::Value> = telemetry.lines().find_map(|l| serde_json::from_str(l).ok());
    assert_eq!(
        listed.as_ref().and_then(|v| v.get("/ethdev/list")),
        Some(&serde_json::json!([0, 1])),
        "{telemetry}"
    );

    let status = forwarder
        .stop()
        .unwrap_or_else(|e| panic!("{e}: {}", forwarder.describe()));
    assert!(status.success(), "{status}: {}", forwarder.describe());
    drop(memory);

    // Every frame captured is one l3fwd-rs sent on port 1, byte for byte.
    let expected: Vec<Vec<u8>> = input_frames().iter().map(|f| forwarded(f)).collect();
    let mut reader = PcapNgReader::new(fs::File::open(&capture).unwrap()).unwrap();
    let mut captured = 0;
    // Raw blocks: pcap-file 2 refuses the options DPDK's pcapng writer
    // puts in its packet blocks (the RX/TX queue, a packet id); the block
    // itself is the interface, two timestamp words, the captured and the
    // original length, then the frame (in this host's byte order).
    while let Some(block) = reader.next_raw_block() {
        let block = block.unwrap();
        if block.type_ != ENHANCED_PACKET_BLOCK {
            continue;
        }
        let word = |at: usize| u32::from_ne_bytes(block.body[at..at + 4].try_into().unwrap()) as usize;
        let frame = &block.body[20..20 + word(12)];
        assert!(
            expected.iter().any(|e| e == frame),
            "not a forwarded frame: {frame:02x?}"
        );
        captured += 1;
    }
    assert_eq!(captured, 64, "dumpcap -c 64");
    // The capture's cost is in the summary: what it copied, what it lost.
    let stats: serde_json::Value = serde_json::from_str(&fs::read_to_string(&json).unwrap()).unwrap();
    let port1 = &stats["ports"][1];
    // From DPDK 25.03 rte_pdump clears a queue's counters after it has
    // installed the callback ("pdump: clear statistics when enabled"), so
    // a burst sent in between is captured but not counted: seen once on
    // 25.11, 64 frames in the file and 32 counted.
    let at_least = if dpdk::RELEASE < 2503 { 64 } else { 0 };
    assert!(port1["captured"].as_u64().is_some_and(|n| n >= at_least), "{port1}");
    assert_eq!(stats["ports"][0]["captured"], 0, "no capture on port 0");
    assert!(port1["capture_lost"].is_u64(), "{port1}");
}
