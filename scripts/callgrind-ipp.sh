#!/usr/bin/env bash
# callgrind-ipp.sh: instructions per forwarded packet, counted by valgrind's
# callgrind, for l3fwd-rs, DPDK's C l3fwd and testpmd io (the I/O floor).
#
# Rates on this shared machine are noisy (see DESIGN.md "Measuring");
# instruction counts are not: they do not depend on load, so this gives a
# reproducible per-packet cost to compare the forwarders with.
#
# Usage:
#   scripts/callgrind-ipp.sh [options] CONFIG...      CONFIG: c-lpm rs-lpm c-fib
#                                                     rs-fib c-em rs-em rs-em-seq
#                                                     c-acl rs-acl
#                                                     io, or all
# Options:
#   -w, --window SECS     counted window (default 10)
#   -u, --warmup SECS     uninstrumented forwarding before the window (default 5)
#   -s, --settle SECS     instrumented forwarding before the window (default 2)
#   -k, --keep            keep the callgrind files as OUT_DIR/CONFIG.out
#   -o, --out-dir DIR     where --keep puts them (default target/callgrind)
#   -t, --top N           after the table, the N functions with the most self
#                         instructions per packet, per configuration (implies -k)
#   --acl-rules DIR       the ACL configurations' acl_v4.cfg and acl_v6.cfg
#                         (default configs/, a few example rules; make bench
#                         writes its generated set to target/bench/acl)
#   --em-flows N          EM configurations on a big table instead of the
#                         default rules and 16 flows: N IPv4 UDP rules and N
#                         flows of 60-byte frames hitting each rule once per
#                         pass, as the rate sweep's em/64B/N cell builds them
#                         (l3fwd-tablegen), and pools that hold the replayed
#                         frames (a C build with a larger pool minimum)
#   --lpm-flows N         LPM, FIB, ACL and io configurations on N flows (IPv4)
#                         over a 16-route table instead of l3fwd-gen's
#                         1024 frames, as the rate sweep's lpm-16/64B/N cell
#                         builds them (l3fwd-tablegen), with pools to match
#   --size BYTES          frame size, FCS included (64..1518, as the sweep's
#                         --sizes), of the --em-flows and --lpm-flows traffic
#                         (default 64)
#   --cache-sim           also simulate the caches (valgrind --cache-sim=yes)
#                         and report D1 and LL misses per packet
#   --valgrind-opt OPT    pass OPT to valgrind (repeatable), e.g. --LL=...
#   --no-build            do not (re)build l3fwd-rs, l3fwd-gen and the C l3fwd
#   --startup-timeout S   give up if a program does not forward within S s (300)
#   -h, --help
# Example:
#   scripts/callgrind-ipp.sh --top 15 c-lpm rs-lpm c-em rs-em
#   scripts/callgrind-ipp.sh --em-flows 65536 --cache-sim c-em rs-em
#   scripts/callgrind-ipp.sh --lpm-flows 65536 --size 1518 --cache-sim io c-lpm rs-lpm
#   callgrind_annotate --inclusive=no target/callgrind/rs-lpm.out | less
#
# What it does, per configuration: runs the program under
# `valgrind --tool=callgrind --instr-atstart=no` (nothing is counted while it
# starts up and sets up its tables), on one forwarding lcore (1), two pcap
# ports replaying 1024 generated frames each forever (l3fwd-gen, seeds 1 and 2,
# only valid IPv4/IPv6; --em traffic for the EM configurations, LPM traffic for
# the LPM and FIB ones and io), no tx_pcap (the PMD drops what is sent). Once the ports' TX counters
# move it lets it forward --warmup seconds, switches instrumentation on
# (vgdb, as callgrind_control -i on), lets it run --settle seconds at the
# instrumented rate (about 10x slower), zeroes the counters, waits --window
# seconds and dumps them. Packets in the window are the TX packets of ports 0
# and 1 (DPDK telemetry /ethdev/stats,N), read just before and just after the
# zero and the dump; the midpoints are used. (Switching instrumentation on is
# not used as the window edge: the rate changes across it, so the midpoint of
# the reads around it would be biased.)
#
# Reading the result:
#   config      c-lpm/c-fib/c-em/c-acl: DPDK 22.11 C l3fwd (target/c-l3fwd/dpdk-l3fwd);
#               rs-*: l3fwd-rs; *-fib: --lookup=fib on the LPM routes;
#               *-acl: --lookup=acl on the LPM traffic (--acl-rules);
#               rs-em-seq: l3fwd-rs --sequential-lookup;
#               io: dpdk-testpmd --forward-mode=io (RX + TX, no lookup)
#   packets     TX packets (both ports) in the window
#   Ir          instructions executed in the window, all threads of the
#               process (the forwarding lcore dominates; telemetry's few
#               requests are noise below 0.01%)
#   Ir/pkt      Ir / packets. Everything is in it: the pcap PMD's RX (a
#               memcpy of each frame) and TX (a free), i.e. most of `io`.
#               Subtract the io row to get the forwarder's own cost per packet.
#   D1miss/pkt  with --cache-sim: simulated L1 data cache misses (reads and
#               writes) per packet; LLmiss/pkt: last-level misses (data and
#               instructions), the accesses that go to memory. The simulated
#               caches are the host's (valgrind reads CPUID; --valgrind-opt
#               --LL=SIZE,ASSOC,LINE changes the LL). Valgrind ignores
#               prefetch instructions, so these count what is touched, not
#               how much of the wait prefetching hides: only rates show that.
#   edge        bound on the error of the packet count: half the packets sent
#               between the reads around the zero plus the same around the
#               dump, as % of packets (~1% with a 10 s window; the actual
#               error is much smaller, the rate being steady across both
#               edges: repeated runs agree on Ir/pkt within ~0.1%)
# Instruction counts are not cycles (no cache misses, branch mispredictions or
# SIMD width), but with the same traffic and PMD they show where one forwarder
# executes more work than the other. In --top lists, functions are summed over
# the source files their inlined code comes from; `???:0x...` are static
# functions of stripped DPDK libraries (in librte_net_pcap: the RX/TX burst
# functions). Run callgrind_annotate on the kept files for the per-file split.
#
# Needs valgrind (vgdb, callgrind_annotate), python3 (stdlib only),
# DPDK 22.11 with dpdk-testpmd and the pcap PMD. Runs as the DPDK user (root for
# /var/run/dpdk). Each configuration takes ~25 s with the defaults (a few
# seconds of start-up, then warm-up, settle, window). Unless --no-build, it
# first builds the working tree: the figures are those of the current sources.
# Removes its processes and /var/run/dpdk/<prefix> dirs on exit, including on
# Ctrl-C.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RS_BIN=$ROOT/target/release/l3fwd-rs
GEN_BIN=$ROOT/target/release/l3fwd-gen
TABLEGEN_BIN=$ROOT/target/release/l3fwd-tablegen
C_BIN=$ROOT/target/c-l3fwd/dpdk-l3fwd
TESTPMD=${TESTPMD:-/usr/bin/dpdk-testpmd}
ALL_CONFIGS=(c-lpm rs-lpm c-fib rs-fib c-em rs-em rs-em-seq c-acl rs-acl io)
FWD_LCORE=1
FRAMES=1024

WINDOW=10
WARMUP=5
SETTLE=2
KEEP=0
TOP=0
OUT_DIR=$ROOT/target/callgrind
BUILD=1
STARTUP_TIMEOUT=300
EM_FLOWS=0
LPM_FLOWS=0
SIZE=64
ACL_RULES=configs
CACHE_SIM=0
VALGRIND_OPTS=()

die() { echo "callgrind-ipp: $*" >&2; exit 1; }
usage() { sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"; }
is_uint() { [[ $1 =~ ^[0-9]+$ ]]; }

CONFIGS=()
while (($#)); do
    case $1 in
        -w | --window) WINDOW=${2:-}; shift 2 || die "$1 needs a value" ;;
        -u | --warmup) WARMUP=${2:-}; shift 2 || die "$1 needs a value" ;;
        -s | --settle) SETTLE=${2:-}; shift 2 || die "$1 needs a value" ;;
        -k | --keep) KEEP=1; shift ;;
        -o | --out-dir) OUT_DIR=${2:-}; shift 2 || die "$1 needs a value" ;;
        -t | --top) TOP=${2:-}; KEEP=1; shift 2 || die "$1 needs a value" ;;
        --em-flows) EM_FLOWS=${2:-}; shift 2 || die "$1 needs a value" ;;
        --lpm-flows) LPM_FLOWS=${2:-}; shift 2 || die "$1 needs a value" ;;
        --size) SIZE=${2:-}; shift 2 || die "$1 needs a value" ;;
        --acl-rules) ACL_RULES=${2:-}; shift 2 || die "$1 needs a value" ;;
        --cache-sim) CACHE_SIM=1; shift ;;
        --valgrind-opt) VALGRIND_OPTS+=("${2:-}"); shift 2 || die "$1 needs a value" ;;
        --no-build) BUILD=0; shift ;;
        --startup-timeout) STARTUP_TIMEOUT=${2:-}; shift 2 || die "$1 needs a value" ;;
        -h | --help) usage; exit 0 ;;
        all) CONFIGS+=("${ALL_CONFIGS[@]}"); shift ;;
        -*) die "unknown option '$1' (--help lists them)" ;;
        *)
            [[ " ${ALL_CONFIGS[*]} " == *" $1 "* ]] ||
                die "unknown configuration '$1' (one of: ${ALL_CONFIGS[*]}, all)"
            CONFIGS+=("$1"); shift ;;
    esac
done
# Each configuration once, in the order first given.
declare -A SEEN
UNIQUE=()
for c in "${CONFIGS[@]}"; do
    [[ -n ${SEEN[$c]:-} ]] || UNIQUE+=("$c")
    SEEN[$c]=1
done
CONFIGS=("${UNIQUE[@]}")
((${#CONFIGS[@]})) || { usage >&2; die "no configuration given"; }
is_uint "$WINDOW" && ((WINDOW > 0)) || die "--window: '$WINDOW' is not a positive number of seconds"
is_uint "$WARMUP" || die "--warmup: '$WARMUP' is not a number of seconds"
is_uint "$SETTLE" || die "--settle: '$SETTLE' is not a number of seconds"
is_uint "$TOP" || die "--top: '$TOP' is not a number"
is_uint "$EM_FLOWS" || die "--em-flows: '$EM_FLOWS' is not a number of flows"
is_uint "$LPM_FLOWS" || die "--lpm-flows: '$LPM_FLOWS' is not a number of flows"
is_uint "$SIZE" && ((SIZE >= 64 && SIZE <= 1518)) || die "--size: '$SIZE' is not a frame size of 64..1518 bytes"
is_uint "$STARTUP_TIMEOUT" || die "--startup-timeout: '$STARTUP_TIMEOUT' is not a number of seconds"
for tool in valgrind vgdb callgrind_annotate python3; do
    command -v "$tool" >/dev/null || die "'$tool' not found in PATH"
done

needs() { # needs PATTERN: is any selected config matching PATTERN?
    local c
    for c in "${CONFIGS[@]}"; do [[ $c == $1 ]] && return 0; done
    return 1
}

# Pools and EAL memory (MB): a pcap port with infinite_rx holds one mbuf per
# frame of its file; sized as bench/src/sweep/forwarders.rs does.
MBUFS=8192
MEMORY_MB=2048
C_DIR=target/c-l3fwd
FLOWS=$((EM_FLOWS > LPM_FLOWS ? EM_FLOWS : LPM_FLOWS))
if ((FLOWS)); then
    MBUFS=$(((2 * ((FLOWS + 1) / 2) + 1024 + 8191) / 8192 * 8192))
    MEMORY_MB=$((1024 + ((MBUFS - 8192) * 6 + 1023) / 1024))
    ((MEMORY_MB > 2048)) || MEMORY_MB=2048
    if ((MBUFS > 8192)); then
        C_DIR=target/c-l3fwd-mbufs-$MBUFS
        C_BIN=$ROOT/$C_DIR/dpdk-l3fwd
    fi
fi

cd "$ROOT"
if ((BUILD)); then
    cargo build --release -q -p l3fwd-rs -p trafficgen || die "cargo build failed"
    if needs 'c-*'; then
        C_L3FWD_MIN_MBUFS=$MBUFS scripts/build-c-l3fwd.sh "$C_DIR" ||
            die "building the C l3fwd failed (scripts/build-c-l3fwd.sh)"
    fi
fi
[[ -x $GEN_BIN ]] || die "$GEN_BIN missing: cargo build --release -p trafficgen"
((FLOWS)) && { [[ -x $TABLEGEN_BIN ]] || die "$TABLEGEN_BIN missing: cargo build --release -p trafficgen"; }
needs 'rs-*' && { [[ -x $RS_BIN ]] || die "$RS_BIN missing: cargo build --release -p l3fwd-rs"; }
needs 'c-*' && { [[ -x $C_BIN ]] || die "$C_BIN missing: C_L3FWD_MIN_MBUFS=$MBUFS scripts/build-c-l3fwd.sh $C_DIR"; }
needs 'io' && { [[ -x $TESTPMD ]] || die "$TESTPMD missing (apt-get install dpdk)"; }

# --- state for cleanup -------------------------------------------------------
WORK=$(mktemp -d "${TMPDIR:-/tmp}/callgrind-ipp.XXXXXX")
RUN_PID=
RUN_PREFIX=
RUN_STDIN=
cleanup() {
    local rc=$?
    stop_run
    rm -rf "$WORK"
    exit "$rc"
}
trap cleanup EXIT
trap 'echo "callgrind-ipp: interrupted" >&2; exit 130' INT TERM HUP

# stop_run: ends the running program (SIGINT, then SIGTERM, then SIGKILL) and
# removes its /var/run/dpdk/<prefix>.
stop_run() {
    local pid=$RUN_PID sig i
    # testpmd (not interactive) exits on a line on stdin; in 22.11 SIGINT and
    # SIGTERM do not interrupt its wait for one.
    if [[ -n $pid && -n $RUN_STDIN ]] && kill -0 "$pid" 2>/dev/null; then
        timeout 5 sh -c 'echo >"$1"' _ "$RUN_STDIN" 2>/dev/null || true
        for ((i = 0; i < 100; i++)); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.2
        done
    fi
    if [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null; then
        for sig in INT TERM KILL; do
            kill -s "$sig" "$pid" 2>/dev/null || true
            for ((i = 0; i < 100; i++)); do
                kill -0 "$pid" 2>/dev/null || break 2
                sleep 0.2
            done
        done
    fi
    [[ -n $pid ]] && { wait "$pid" 2>/dev/null || true; }
    RUN_PID=
    [[ -n $RUN_STDIN ]] && rm -f "$RUN_STDIN"
    RUN_STDIN=
    if [[ -n $RUN_PREFIX ]]; then
        rm -rf "/var/run/dpdk/$RUN_PREFIX"
        RUN_PREFIX=
    fi
}

# --- telemetry and the counted window ---------------------------------------
# `python3 -c "$WINDOW_PY" SOCKET PID probe` prints the TX packets of ports 0
# and 1 (exit 2 while the socket does not answer); `... window SETTLE SECS`
# switches instrumentation on, lets the rate settle, zeroes the counters,
# waits SECS, dumps them (to OUT.1) and switches instrumentation off. Zero and
# dump happen while the program runs at the same (instrumented) rate on both
# sides, so the TX counters read just before and just after each bracket it
# without bias. Prints the four reads "a1 a2 b1 b2".
read -r -d '' WINDOW_PY <<'EOF' || true
import json, socket, subprocess, sys, time
path, pid, what = sys.argv[1], sys.argv[2], sys.argv[3]

def connect():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.settimeout(30)
    s.connect(path)
    json.loads(s.recv(1 << 16))  # greeting
    return s

def opackets(s):
    total = 0
    for port in (0, 1):
        s.send(f"/ethdev/stats,{port}".encode())
        reply = json.loads(s.recv(1 << 20))
        stats = reply.get("/ethdev/stats")
        if not isinstance(stats, dict) or "opackets" not in stats:
            sys.exit(f"telemetry: unexpected reply for port {port}: {reply}")
        total += int(stats["opackets"])
    return total

def monitor(*cmd):
    # The callgrind monitor commands that callgrind_control sends, minus its perl.
    r = subprocess.run(["vgdb", f"--pid={pid}", *cmd], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"vgdb {' '.join(cmd)} failed ({r.returncode}): {r.stdout}{r.stderr}")

try:
    s = connect()
    if what == "probe":
        print(opackets(s))
        sys.exit(0)
    settle, secs = float(sys.argv[4]), float(sys.argv[5])
    monitor("instrumentation", "on")
    time.sleep(settle)
    a1 = opackets(s); monitor("zero"); a2 = opackets(s)
    time.sleep(secs)
    b1 = opackets(s); monitor("dump"); b2 = opackets(s)
    monitor("instrumentation", "off")
    print(a1, a2, b1, b2)
except (OSError, ValueError) as e:
    print(f"telemetry: {path}: {e}", file=sys.stderr)
    sys.exit(2)
EOF

opackets() { python3 -c "$WINDOW_PY" "/var/run/dpdk/$RUN_PREFIX/dpdk_telemetry.v2" "$RUN_PID" probe; }

# --- top functions -----------------------------------------------------------
# Reads `callgrind_annotate --inclusive=no --auto=no` output, sums self Ir per
# function over the source files its code comes from (inlining), prints the
# top N divided by the packet count. The total is the sum over all functions,
# i.e. the file's "totals:" as in the table (callgrind's "summary:", shown as
# PROGRAM TOTALS by callgrind_annotate, differs by ~0.2%: cost at the edges).
read -r -d '' TOP_PY <<'EOF' || true
import re, sys
n, packets = int(sys.argv[1]), int(sys.argv[2])
line_re = re.compile(r"^\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+(.*)$")
funcs, objs, in_list = {}, {}, False
for line in sys.stdin:
    if re.match(r"^Ir\s+file:function", line.strip()):
        in_list = True
        continue
    m = line_re.match(line) if in_list else None
    if not m:
        continue
    ir, name = int(m.group(1).replace(",", "")), m.group(2).strip()
    obj = ""
    mo = re.match(r"^(.*?)\s+\[(.*)\]$", name)
    if mo:
        name, obj = mo.group(1), mo.group(2).rsplit("/", 1)[-1]
    # "file:function"; the file is a path or ??? and has no ':'
    _, sep, func = name.partition(":")
    if not sep:
        func = name
    # Addresses (static functions of stripped objects) only mean something
    # with their object; callgrind_annotate names the object only for some lines.
    key = f"{func} [{obj}]" if func.startswith("0x") else func
    funcs[key] = funcs.get(key, 0) + ir
    if obj and not func.startswith("0x"):
        objs.setdefault(key, obj)
if not funcs:
    sys.exit("top: no functions in callgrind_annotate output")
total = sum(funcs.values())
top = sorted(funcs.items(), key=lambda kv: -kv[1])[:n]
print(f"  {'Ir/pkt':>8} {'%':>6}  function [object]")
for key, ir in top:
    shown = f"{key} [{objs[key]}]" if key in objs else key
    print(f"  {ir / packets:8.1f} {100 * ir / total:5.1f}%  {shown}")
rest = total - sum(ir for _, ir in top)
print(f"  {rest / packets:8.1f} {100 * rest / total:5.1f}%  (all other functions)")
print(f"  {total / packets:8.1f} 100.0%  total")
EOF

# --- traffic -----------------------------------------------------------------
# cell_traffic KIND FLOWS RULES: as the sweep's cells, a table of RULES IPv4
# rules and FLOWS flows of --size frames hitting it, each once per pass, no
# misses; EM traffic is UDP only (C looks groups mixing TCP and UDP up one by
# one). IPv6 keeps the default rules (C refuses an empty file). Sets
# ${KIND}_RULES.
cell_traffic() {
    local kind=$1 flows=$2 rules=$3 udp=()
    [[ $kind == em ]] && udp=(--tcp 0)
    "$TABLEGEN_BIN" "$kind" --seed 1 --ports 0,1 --pcaps 2 --in-turn --v4 "$rules" --v6 0 \
        --miss 0 "${udp[@]}" --frames $(((flows + 1) / 2)) --min-size $((SIZE - 4)) --max-size $((SIZE - 4)) \
        --dir "$WORK/$kind" >/dev/null || die "l3fwd-tablegen failed"
    mv "$WORK/$kind/${kind}_0.pcap" "$WORK/${kind}0.pcap"
    mv "$WORK/$kind/${kind}_1.pcap" "$WORK/${kind}1.pcap"
    local -n table=${kind^^}_RULES
    table=(--rule_ipv4="$WORK/$kind/${kind}_v4.cfg" --rule_ipv6="configs/${kind}_v6.cfg")
}
EM_RULES=(--rule_ipv4=configs/em_v4.cfg --rule_ipv6=configs/em_v6.cfg)
LPM_RULES=(--rule_ipv4=configs/lpm_v4.cfg --rule_ipv6=configs/lpm_v6.cfg)
for kind in lpm em; do
    if [[ $kind == lpm ]] && ! needs '*lpm' && ! needs '*fib' && ! needs '*acl' && ! needs io; then continue; fi
    if [[ $kind == em ]] && ! needs '*em*'; then continue; fi
    if [[ $kind == em ]] && ((EM_FLOWS)); then
        cell_traffic em "$EM_FLOWS" "$EM_FLOWS"
        continue
    fi
    if [[ $kind == lpm ]] && ((LPM_FLOWS)); then
        cell_traffic lpm "$LPM_FLOWS" 16
        continue
    fi
    flag=; [[ $kind == em ]] && flag=--em
    for port in 0 1; do
        "$GEN_BIN" --out "$WORK/$kind$port.pcap" --count "$FRAMES" --seed $((port + 1)) \
            --runt 0 --non-ip 0 --invalid 0 $flag >/dev/null ||
            die "l3fwd-gen failed for $kind traffic, port $port"
    done
done

# --- one configuration -------------------------------------------------------
# measure CONFIG: sets PACKETS, IR, EDGE_PCT; leaves the dump in $WORK/CONFIG.out
measure() {
    local cfg=$1 bin lcores traffic app=() eal=() stdin=/dev/null
    case $cfg in
        c-lpm | rs-lpm | c-fib | rs-fib | c-em | rs-em | rs-em-seq | c-acl | rs-acl)
            [[ $cfg == c-* ]] && bin=$C_BIN || bin=$RS_BIN
            lcores=$FWD_LCORE
            app=(-p 0x3 --config "(0,0,$FWD_LCORE),(1,0,$FWD_LCORE)" --parse-ptype)
            if [[ $cfg == *acl ]]; then
                traffic=lpm
                app+=(--lookup=acl --rule_ipv4="$ACL_RULES/acl_v4.cfg" --rule_ipv6="$ACL_RULES/acl_v6.cfg")
            elif [[ $cfg == *em* ]]; then
                traffic=em
                app+=(-E "${EM_RULES[@]}")
            else
                traffic=lpm
                app+=("${LPM_RULES[@]}")
            fi
            [[ $cfg == *fib ]] && app+=(--lookup=fib)
            [[ $cfg == rs-em-seq ]] && app+=(--sequential-lookup)
            [[ $cfg == rs-* ]] && app+=(--num-mbufs "$MBUFS")
            ;;
        io)
            # testpmd forwards on every lcore but its main one.
            bin=$TESTPMD
            lcores=0,$FWD_LCORE
            traffic=lpm
            app=(--forward-mode=io --nb-cores=1 --auto-start)
            ((FLOWS)) && app+=(--total-num-mbufs="$MBUFS")
            # Not interactive, it waits for a line on stdin and exits at EOF:
            # give it a FIFO opened read-write, which never reaches EOF.
            stdin=$WORK/io.stdin
            rm -f "$stdin"
            mkfifo "$stdin"
            RUN_STDIN=$stdin
            ;;
    esac
    RUN_PREFIX=cgipp-$cfg-$$
    rm -rf "/var/run/dpdk/$RUN_PREFIX"
    eal=(-l "$lcores" --no-huge -m "$MEMORY_MB" --no-pci --file-prefix "$RUN_PREFIX"
        "--vdev=net_pcap0,rx_pcap=$WORK/${traffic}0.pcap,infinite_rx=1"
        "--vdev=net_pcap1,rx_pcap=$WORK/${traffic}1.pcap,infinite_rx=1")
    local out=$WORK/$cfg.cg log=$WORK/$cfg.log
    # --fair-sched=yes: with valgrind's default lock the busy forwarding thread
    # can starve the telemetry thread (reads time out).
    local sim=()
    ((CACHE_SIM)) && sim=(--cache-sim=yes)
    valgrind --tool=callgrind --instr-atstart=no --fair-sched=yes --callgrind-out-file="$out" \
        "${sim[@]}" "${VALGRIND_OPTS[@]}" \
        "$bin" "${eal[@]}" -- "${app[@]}" <>"$stdin" >"$log" 2>&1 &
    RUN_PID=$!

    fail() {
        echo "callgrind-ipp: $cfg: $*" >&2
        echo "---- last lines of the program's output ($cfg) ----" >&2
        tail -n 25 "$log" >&2 || true
        exit 1
    }

    # Start-up: until the TX counters move.
    local t0=$SECONDS first= now
    while :; do
        kill -0 "$RUN_PID" 2>/dev/null || fail "exited during start-up"
        ((SECONDS - t0 < STARTUP_TIMEOUT)) || fail "not forwarding after ${STARTUP_TIMEOUT}s"
        if now=$(opackets 2>/dev/null); then
            if [[ -z $first ]]; then first=$now
            elif ((now > first)); then break
            fi
        fi
        sleep 1
    done
    echo "callgrind-ipp: $cfg: forwarding after $((SECONDS - t0))s; warm-up ${WARMUP}s, settle ${SETTLE}s, window ${WINDOW}s" >&2
    sleep "$WARMUP"

    local a1 a2 b1 b2 reads
    rm -f -- "$out" "$out".[0-9]*
    reads=$(python3 -c "$WINDOW_PY" "/var/run/dpdk/$RUN_PREFIX/dpdk_telemetry.v2" "$RUN_PID" \
        window "$SETTLE" "$WINDOW" 2>"$WORK/ctl.log") ||
        fail "counting window failed: $(cat "$WORK/ctl.log")"
    read -r a1 a2 b1 b2 <<<"$reads"
    # The dump is written as OUT.1 (OUT itself is the final dump at exit, empty).
    local i
    for ((i = 0; i < 150; i++)); do
        grep -q '^totals:' "$out.1" 2>/dev/null && break
        sleep 0.2
    done
    grep -q '^totals:' "$out.1" 2>/dev/null || fail "no callgrind dump ($out.1)"
    stop_run

    PACKETS=$(((b1 + b2 - a1 - a2) / 2))
    IR=$(awk '/^totals:/ {print $2; exit}' "$out.1")
    ((PACKETS > 0)) || fail "no packets forwarded in the window"
    ((IR > 0)) || fail "no instructions counted in the window (instrumentation did not switch on?)"
    # With --cache-sim: "D1 LL" misses, summed over reads and writes, by event name.
    MISSES=
    if ((CACHE_SIM)); then
        MISSES=$(awk '/^events:/ { for (i = 2; i <= NF; i++) col[$i] = i }
            /^totals:/ { print $col["D1mr"] + $col["D1mw"], $col["ILmr"] + $col["DLmr"] + $col["DLmw"]; exit }' "$out.1")
    fi
    EDGE_PCT=$(awk -v e=$(((a2 - a1 + b2 - b1) / 2)) -v p="$PACKETS" 'BEGIN {printf "%.2f", 100 * e / p}')
    mv -f "$out.1" "$WORK/$cfg.out"
}

declare -A R_PACKETS R_IR R_EDGE R_MISSES
for cfg in "${CONFIGS[@]}"; do
    measure "$cfg"
    R_PACKETS[$cfg]=$PACKETS R_IR[$cfg]=$IR R_EDGE[$cfg]=$EDGE_PCT R_MISSES[$cfg]=$MISSES
    if ((KEEP)); then
        mkdir -p "$OUT_DIR"
        cp -f "$WORK/$cfg.out" "$OUT_DIR/$cfg.out"
    fi
done

echo
printf '%-10s %12s %16s %9s %7s' config packets Ir Ir/pkt edge
((CACHE_SIM)) && printf ' %11s %11s' D1miss/pkt LLmiss/pkt
echo
for cfg in "${CONFIGS[@]}"; do
    printf '%-10s %12d %16d %9.1f %6s%%' "$cfg" "${R_PACKETS[$cfg]}" "${R_IR[$cfg]}" \
        "$(awk -v i="${R_IR[$cfg]}" -v p="${R_PACKETS[$cfg]}" 'BEGIN {print i / p}')" "${R_EDGE[$cfg]}"
    ((CACHE_SIM)) && awk -v m="${R_MISSES[$cfg]}" -v p="${R_PACKETS[$cfg]}" \
        'BEGIN { split(m, x, " "); printf " %11.2f %11.2f", x[1] / p, x[2] / p }'
    echo
done
((KEEP)) && echo "callgrind files: $OUT_DIR/<config>.out (callgrind_annotate --inclusive=no FILE)"

if ((TOP)); then
    for cfg in "${CONFIGS[@]}"; do
        echo
        echo "$cfg: top $TOP functions by self instructions per packet (${R_PACKETS[$cfg]} packets)"
        callgrind_annotate --inclusive=no --threshold=100 --auto=no --show=Ir "$WORK/$cfg.out" |
            python3 -c "$TOP_PY" "$TOP" "${R_PACKETS[$cfg]}"
    done
fi
