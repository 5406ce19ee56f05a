//! Start-up failures that are not typos in l3fwd's own options: bad EAL
//! arguments, a vdev its driver refuses, memory that does not fit in `-m`,
//! queues a port lacks, unreadable rule files, a `--file-prefix` in use.
//! Each ends within the harness's timeout with exit code 1, one
//! `l3fwd-rs:` line naming the cause and no panic (but for an EAL option
//! EAL does not know, from 25.11: see `bad_eal_arguments`); where EAL had started,
//! `rte_eal_cleanup` ran (its runtime directory lost `mp_socket`, which only
//! that call removes).

use std::fs;
use std::time::Duration;

use crate::hugepages;
use testkit::{l3fwd_rs, run_cli, Outcome, Process, Run, Scratch, Stop};

const ONE_PORT: &[&str] = &["-p", "0x1", "--config", "(0,0,0)"];

/// Runs l3fwd-rs with `eal` (on lcore 0 unless it says `-l`: EAL refuses
/// two) and `app`, and asserts a clean failure: exit code 1, exactly one
/// `l3fwd-rs:` line, containing every one of `needles`, and no panic.
fn fails_with(eal: &[&str], app: &[&str], needles: &[&str]) -> Outcome {
    let lcores: &[&str] = if eal.contains(&"-l") { &[] } else { &["-l", "0"] };
    let out = run_cli(&l3fwd_rs(), &[lcores, eal].concat(), app);
    let line = out.error_line();
    for needle in needles {
        assert!(
            line.contains(needle),
            "args {eal:?} -- {app:?}: '{needle}' not in '{line}'"
        );
    }
    out
}

/// EAL had started and was cleaned up (and the test kit checks every run
/// took its runtime folder with it).
fn assert_eal_cleaned_up(out: &Outcome) {
    assert!(out.eal_started, "EAL never started: {}", out.stderr);
    assert!(out.eal_cleaned_up, "no rte_eal_cleanup: {}", out.stderr);
}

/// An EAL argument EAL does not know: up to 24.11 rte_eal_init returns
/// and l3fwd-rs says so in its own line; from 25.11 EAL's rte_argparse
/// says so and exits the process itself (status 234), before it made any
/// runtime file, as under C l3fwd. Either way one clear line names it.
#[test]
fn bad_eal_arguments() {
    if dpdk::RELEASE >= 2511 {
        let out = run_cli(&l3fwd_rs(), &["-l", "0", "--bogus-eal"], ONE_PORT);
        assert_eq!(out.status.code(), Some(234), "{}", out.stderr);
        assert!(
            out.stderr.contains("ARGPARSE: unknown argument --bogus-eal"),
            "{}",
            out.stderr
        );
    } else {
        let out = fails_with(&["--bogus-eal"], ONE_PORT, &["cannot initialise EAL"]);
        assert!(
            out.stderr.contains("unrecognized option '--bogus-eal'"),
            "{}",
            out.stderr
        );
    }
    let lcore = missing_lcore().to_string();
    let out = fails_with(
        &["-l", &lcore, "--vdev=net_null0"],
        ONE_PORT,
        &["cannot initialise EAL"],
    );
    assert!(
        out.stderr.contains(&format!("lcore {lcore} unavailable")),
        "{}",
        out.stderr
    );
}

/// The first lcore id EAL accepts (below RTE_MAX_LCORE, 128 in Debian's
/// build) but finds no CPU for: EAL's own test is the CPU's `core_id`.
fn missing_lcore() -> u32 {
    (0..128)
        .find(|cpu| !std::path::Path::new(&format!("/sys/devices/system/cpu/cpu{cpu}/topology/core_id")).exists())
        .expect("a CPU for every lcore id EAL accepts: no lcore is missing")
}

/// EAL goes on when a vdev's driver fails, and the ports after it take its
/// id: here port 0 (net_null0) would forward happily although the pcap
/// port asked for does not exist. l3fwd-rs refuses to start.
#[test]
fn vdev_that_cannot_be_created() {
    let out = fails_with(
        &["--vdev=net_null0", "--vdev=net_pcap1,rx_pcap=/nonexistent/in.pcap"],
        ONE_PORT,
        &[
            "--vdev net_pcap1,rx_pcap=/nonexistent/in.pcap",
            "could not create port net_pcap1",
        ],
    );
    assert!(
        out.stderr.contains("/nonexistent/in.pcap"),
        "the driver's reason: {}",
        out.stderr
    );
    assert_eal_cleaned_up(&out);
}

/// The same under a driver's alias name (`eth_pcap` for `net_pcap`).
#[test]
fn vdev_under_an_alias_name_that_cannot_be_created() {
    let out = fails_with(
        &["--vdev=eth_pcap0,rx_pcap=/nonexistent/in.pcap", "--vdev=net_null1"],
        ONE_PORT,
        &[
            "--vdev eth_pcap0,rx_pcap=/nonexistent/in.pcap",
            "could not create port eth_pcap0",
        ],
    );
    assert_eal_cleaned_up(&out);
}

/// EAL creates one device of a name; the second would shift the port ids.
#[test]
fn two_vdevs_with_one_name() {
    let out = fails_with(
        &["--vdev=net_null0", "--vdev=net_null0", "--vdev=net_null1"],
        ONE_PORT,
        &["--vdev net_null0: a second device named net_null0"],
    );
    assert_eal_cleaned_up(&out);
}

/// The --stats-json path is checked before anything is set up.
#[test]
fn stats_json_that_cannot_be_written() {
    let app = [ONE_PORT, &["--stats-json", "/nonexistent/dir/s.json"]].concat();
    let out = fails_with(&["--vdev=net_null0"], &app, &["--stats-json /nonexistent/dir/s.json"]);
    assert!(!out.eal_started, "EAL started: {}", out.stderr);
}

/// 65535-descriptor rings need a pool of 131102 mbufs and a per-lcore
/// cache (256 on 22.11, 512 from 24.11), about 300 MB: more than `-m 256`
/// leaves after the LPM tables.
#[test]
fn mempool_that_does_not_fit_in_eal_memory() {
    let out = fails_with(
        &["-m", "256", "--vdev=net_null0"],
        &[ONE_PORT, &["--rx-queue-size", "65535", "--tx-queue-size", "65535"]].concat(),
        &[
            "cannot create mempool",
            &format!("{} mbufs", 131_102 + l3fwd_rs::DEFAULT_MBCACHE),
            "MiB of EAL memory",
            "Cannot allocate memory; give EAL more: -m MB",
        ],
    );
    assert_eal_cleaned_up(&out);
}

/// What EAL memory does not hold tells how much it needs and what gives
/// more. The LPM table alone (a 2^24-entry first level, and room for 1024
/// more tbl8 groups, as it changes in place) needs
/// more than 64 MB; a FIB also RIB nodes for 65536 routes and 32768 tbl8 groups of
/// 1 KiB; the exact-match table of 4M keys about 193 MiB (rte_hash sets
/// no rte_errno when its memory runs out: what it had read ENOENT).
#[test]
fn lookup_table_that_does_not_fit_in_eal_memory() {
    let hint = "Cannot allocate memory; give EAL more: -m MB (with --no-huge), or more hugepages";
    let cases: [(&[&str], &[&str]); 3] = [
        (
            &[],
            &["cannot create LPM table l3fwd_v4 of 1025 tbl8 groups (about 66 MiB of EAL memory)"],
        ),
        (
            &["--lookup=fib"],
            &["cannot create FIB l3fwd_fib4 of 65536 routes and 32768 tbl8 groups (about 113 MiB of EAL memory)"],
        ),
        (
            &["-E"],
            &["cannot create hash table em_IPv4_0 of 4194304 entries (about 193 MiB of EAL memory)"],
        ),
    ];
    for (mode, needles) in cases {
        let out = fails_with(
            &["-m", "64", "--vdev=net_null0"],
            &[ONE_PORT, mode].concat(),
            &[needles, &[hint]].concat(),
        );
        assert_eal_cleaned_up(&out);
    }
}

/// Each lcore needs a TX queue on every port; a pcap port has one per
/// `tx_pcap` file. (Ring sizes are never refused: as in the C sample,
/// rte_eth_dev_adjust_nb_rx_tx_desc fits them to the device's limits.)
#[test]
fn more_tx_queues_than_the_port_has() {
    let dir = Scratch::new("one-frame");
    let vdev = testkit::one_frame_pcap_vdev(&dir);
    let out = fails_with(&["-l", "0-1", &vdev], ONE_PORT, &["port 0", "2 TX queues", "at most 1"]);
    assert_eal_cleaned_up(&out);
}

/// Rule files are read before EAL starts: no EAL runtime files at all.
#[test]
fn rule_files_that_cannot_be_read() {
    let dir = Scratch::new("rules-dir");
    let path = dir.path("").display().to_string();
    // Files are read only when both are given, as in C.
    for (mode, rule, other) in [
        ("-L", "--rule_ipv4", "--rule_ipv6=configs/lpm_v6.cfg"),
        ("-L", "--rule_ipv6", "--rule_ipv4=configs/lpm_v4.cfg"),
        ("-E", "--rule_ipv4", "--rule_ipv6=configs/em_v6.cfg"),
        ("-E", "--rule_ipv6", "--rule_ipv4=configs/em_v4.cfg"),
    ] {
        let rule = format!("{rule}={path}");
        let app = [ONE_PORT, &[mode, &rule, other]].concat();
        let out = fails_with(&["--vdev=net_null0"], &app, &[&path]);
        assert!(!out.eal_started, "EAL started: {}", out.stderr);
    }
}

/// A second forwarder with the file prefix of a running one: EAL refuses
/// (its message names the clash), l3fwd-rs says it could not start EAL, and
/// the first one is unharmed. Killing the first with SIGKILL (no
/// `rte_eal_cleanup`) leaves its `mp_socket`: the marker the other tests
/// rely on is real.
/// A forwarder on net_null0 with file prefix `prefix` and `eal`, running
/// 20 s, once `ready` exists (a file it makes at start).
fn first_forwarder(prefix: &str, eal: &[&str], ready: &std::path::Path, dir: &Scratch) -> Process {
    let command = Run::new(l3fwd_rs())
        .lcores("1")
        .eal_args(eal)
        .args(&["-p", "0x1", "--config", "(0,0,1)", "--duration", "20"])
        .command(prefix);
    let mut first =
        Process::spawn(command, prefix, &dir.path("first"), Stop::Sigint).expect("start the first forwarder");
    let made = first.wait_until(Duration::from_secs(10), |_| ready.exists());
    assert!(
        made.is_ok(),
        "first forwarder never made {} ({made:?}): {}",
        ready.display(),
        first.describe()
    );
    first
}

#[test]
fn file_prefix_in_use() {
    let prefix = format!("l3fwd-test-collide-{}", std::process::id());
    let runtime = dpdk::runtime_dir_of(&prefix);
    let mp_socket = runtime.join("mp_socket");
    let dir = Scratch::new("collide");
    let mut first = first_forwarder(&prefix, &["--vdev=net_null0"], &mp_socket, &dir);

    let out = fails_with(
        &["--file-prefix", &prefix, "--vdev=net_null0"],
        ONE_PORT,
        &["cannot initialise EAL"],
    );
    assert!(
        out.stderr.contains("Is another primary process running?"),
        "{}",
        out.stderr
    );
    assert!(first.try_wait().is_none(), "the first forwarder stopped");

    first.kill().unwrap();
    assert!(mp_socket.exists(), "mp_socket removed without rte_eal_cleanup");
    // Dropping it removes its runtime folder.
    drop(first);
    assert!(!runtime.exists());
}

/// Where EAL takes no lock on the prefix (`--no-shconf`), a second
/// instance of one `--file-prefix` still leaves the first's control
/// socket alone: it refuses to start, in one line, and the first still
/// answers `l3fwd-ctl`, also after the second exited.
#[test]
fn a_second_instance_of_one_prefix_leaves_the_first_its_socket() {
    let prefix = format!("l3fwd-test-shared-{}", std::process::id());
    let socket = dpdk::runtime_dir_of(&prefix).join("l3fwd_ctl");
    let dir = Scratch::new("shared");
    let first = first_forwarder(&prefix, &["--no-shconf", "--vdev=net_null0"], &socket, &dir);
    let route_get = || testkit::ctl(&prefix, &["--timeout", "5", "route", "get", "198.18.0.1"], "");
    assert!(route_get().status.success());

    fails_with(
        &["--no-shconf", "--file-prefix", &prefix, "--vdev=net_null0"],
        ONE_PORT,
        &["another l3fwd-rs answers on", "l3fwd_ctl", "--file-prefix"],
    );
    let answer = route_get();
    assert!(answer.status.success(), "{}", String::from_utf8_lossy(&answer.stderr));
    // Killed, and its runtime folder removed.
    drop(first);
}

/// A control socket path that something else took (a directory) is named
/// for what it is, rather than as "Address already in use".
#[test]
fn a_control_socket_path_that_is_a_directory_says_so() {
    let prefix = format!("l3fwd-test-dir-{}", std::process::id());
    fs::create_dir_all(dpdk::runtime_dir_of(&prefix).join("l3fwd_ctl")).unwrap();
    fails_with(
        &["--file-prefix", &prefix, "--vdev=net_null0"],
        ONE_PORT,
        &["l3fwd_ctl is a directory, not a socket: remove it"],
    );
    fs::remove_dir_all(dpdk::runtime_dir_of(&prefix)).unwrap();
}

/// On hugepages DPDK keeps a page file (`PREFIXmap_N`) for every segment
/// still allocated at cleanup, holding its 2 MB from the system until a
/// later DPDK process clears it. l3fwd-rs takes them with it: after a
/// clean run, a start that fails after EAL, and an EAL that cannot get the
/// memory it asks for, the mount is as empty as before (and the kit checks
/// the runtime folder went too).
#[test]
fn runs_on_hugepages_leave_no_page_files() {
    if !rustix::process::geteuid().is_root() {
        eprintln!("skipped: hugepages need root");
        return;
    }
    let dir = Scratch::new("hugepages");
    let mount = dir.path("mnt");
    let memory = hugepages::Memory::huge(512, &mount).expect("hugepages");
    assert!(matches!(memory, hugepages::Memory::Huge(_)));
    let huge_dir = mount.display().to_string();
    let page_files = || {
        fs::read_dir(&mount)
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect::<Vec<_>>()
    };
    let on_hugepages = |eal: &[&str], app: &[&str]| {
        Run::new(l3fwd_rs())
            .eal_args(&[&["--huge-dir", &huge_dir, "--vdev=net_null0"], eal].concat())
            .args(app)
            .run()
    };

    let clean = on_hugepages(&[], &[ONE_PORT, &["--duration", "1"]].concat());
    assert!(clean.status.success(), "{}", clean.stderr);
    assert!(clean.eal_started, "{}", clean.stderr);
    assert_eq!(page_files(), Vec::<std::ffi::OsString>::new(), "after a clean run");

    let after_eal = on_hugepages(&[], &["-p", "0x1", "--config", "(0,5,0)"]);
    assert_eq!(after_eal.status.code(), Some(1), "{}", after_eal.stderr);
    assert!(after_eal.stderr.contains("should have queue 0"), "{}", after_eal.stderr);
    assert_eq!(page_files(), Vec::<std::ffi::OsString>::new(), "after a failed start");

    let no_memory = on_hugepages(&["-m", "4096"], ONE_PORT);
    assert_eq!(no_memory.status.code(), Some(1), "{}", no_memory.stderr);
    assert!(
        no_memory.stderr.contains("cannot initialise EAL"),
        "{}",
        no_memory.stderr
    );
    assert_eq!(
        page_files(),
        Vec::<std::ffi::OsString>::new(),
        "after EAL found too few pages"
    );
    drop(memory);
}
