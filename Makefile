# l3fwd-rs: `make run` forwards generated traffic on virtual ports and prints
# rates; `make test` runs every test. Both set up what they need first.

SHELL := /bin/bash
CARGO ?= cargo
DEBS := dpdk dpdk-dev libdpdk-dev dpdk-doc libclang-dev pkg-config libpcap-dev fonts-dejavu-core \
	iproute2 iputils-ping ethtool tcpdump iperf3 sockperf valgrind
OUT := out
RELEASE := target/release

# DPDK=24.11 or DPDK=25.11: any target below, built and run against that
# release of DPDK, in a Debian root that has it (scripts/dpdk-root.sh makes
# it once under target/dpdk-root/, ~4 min; what it builds goes to
# target/dpdk-VERSION, which the target sees as target/).
# Without DPDK=, the machine's own (Debian 12: 22.11).
DPDK ?=
ifneq ($(DPDK),)
.DEFAULT_GOAL := build
Makefile: ;
%:
	DPDK_ROOT_PACKAGES="$(DEBS)" scripts/dpdk-root.sh run $(DPDK) $(MAKE) --no-print-directory $@ DPDK=
else
# One forwarding lcore (1); the control thread runs on the other CPU.
RUN_LCORE ?= 1
RUN_SECS ?= 10
RUN_FRAMES ?= 1024
EAL_VIRT := --no-huge -m 1024 --no-pci

.PHONY: all deps build install run demo demo-clean test lint c-l3fwd bench bench-versions bench-calibrate bench-callgrind bench-scale bench-sweep bench-latency bench-update fuzz clean

all: build

# Debian packages: DPDK 22.11 (libraries, headers, the C sample's source in
# dpdk-doc), libclang for bindgen, libpcap for the pcap PMD, DejaVu Sans for
# the text of bench-sweep's plots; iproute2, iputils-ping, ethtool, tcpdump
# and iperf3 for the tests and the demo on network namespaces; sockperf for
# bench-latency; valgrind for bench-callgrind.
# (In another DPDK's root, scripts/dpdk-root.sh installed them.)
deps:
	@[ -n "$$L3FWD_DPDK_ROOT" ] && exit 0; \
	missing=$$(for p in $(DEBS); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "installing:" $$missing; \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing >/dev/null; \
	fi

build: deps
	$(CARGO) build --release --workspace --bins

# The binaries into $(PREFIX)/bin. They need no file of this tree: the
# default rule files are built in (the copies in share/l3fwd-rs/configs are
# for reading and editing, e.g. as a starting point for --rule_ipv4/6).
PREFIX ?= /usr/local
install: build
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/l3fwd-rs/configs
	install -m 755 $(RELEASE)/l3fwd-rs $(RELEASE)/l3fwd-ctl $(RELEASE)/l3fwd-gen $(RELEASE)/l3fwd-tablegen $(DESTDIR)$(PREFIX)/bin/
	install -m 644 configs/*.cfg $(DESTDIR)$(PREFIX)/share/l3fwd-rs/configs/

$(OUT)/demo0.pcap $(OUT)/demo1.pcap: build
	@mkdir -p $(OUT)
	$(RELEASE)/l3fwd-gen --out $(OUT)/demo0.pcap --count $(RUN_FRAMES) --seed 1 --runt 0 --non-ip 0 --invalid 0
	$(RELEASE)/l3fwd-gen --out $(OUT)/demo1.pcap --count $(RUN_FRAMES) --seed 2 --runt 0 --non-ip 0 --invalid 0

# Two pcap ports replaying generated traffic forever (TX is dropped by the
# PMD), one forwarding lcore, rates every second for RUN_SECS seconds.
run: build $(OUT)/demo0.pcap $(OUT)/demo1.pcap
	$(RELEASE)/l3fwd-rs -l $(RUN_LCORE) $(EAL_VIRT) --file-prefix l3fwd-run \
		--vdev=net_pcap0,rx_pcap=$(OUT)/demo0.pcap,infinite_rx=1 \
		--vdev=net_pcap1,rx_pcap=$(OUT)/demo1.pcap,infinite_rx=1 \
		-- -p 0x3 --config "($(strip 0,0,$(RUN_LCORE))),($(strip 1,0,$(RUN_LCORE)))" \
		--stats-interval 1 --duration $(RUN_SECS)

# Real interfaces: two network namespaces joined by veth pairs, l3fwd-rs
# routing between them on af_xdp (af_packet where af_xdp cannot start);
# ping RTT, TCP throughput (iperf3) and l3fwd-rs's rates, then teardown.
# DEMO_PMD=af_packet|tap|kernel (kernel: Linux forwarding, the baseline).
# Needs root. `make demo-clean` removes what an interrupted run left.
DEMO_PMD ?= af_xdp
DEMO_SECS ?= 3
demo: build
	PMD=$(DEMO_PMD) SECS=$(DEMO_SECS) LCORE=$(RUN_LCORE) BIN=$(RELEASE)/l3fwd-rs scripts/netns-demo.sh run

demo-clean:
	scripts/netns-demo.sh clean

# DPDK's own C l3fwd, built from dpdk-doc: the behavioural reference.
c-l3fwd: deps
	scripts/build-c-l3fwd.sh target/c-l3fwd

# Forwarding rates side by side (C l3fwd, l3fwd-rs, testpmd io), alternating
# runs; BASELINE=old.json exits 2 if a ratio fell by more than 5% and
# significantly (Mann-Whitney over rounds, p <= 0.05).
# BENCH_ARGS e.g. "--only lpm,io --rounds 5".
BASELINE ?=
BENCH_ARGS ?=
bench: c-l3fwd
	$(CARGO) build --release -p l3fwd-rs -p trafficgen -p l3fwd-bench
	$(RELEASE)/l3fwd-bench $(if $(BASELINE),--baseline $(BASELINE)) $(BENCH_ARGS)

# Rates across DPDK releases: C l3fwd, l3fwd-rs and testpmd io built on the
# machine's DPDK and on each of VERSIONS (in its root, as DPDK=VERSION
# builds), every release in turn in each round, on hugepages (as root). Per
# release: median Mpps and cycles per packet; per change from one release to
# the next: a verdict (Mann-Whitney over rounds); JSON and versions.png in
# target/bench/versions/. ~7 s per configuration, release and round: the
# default (LPM and io, 3 releases, 5 rounds) ~6 min after the builds.
# VERSIONS_ARGS as BENCH_ARGS, e.g. "--only lpm,em,fib,acl,io --rounds 5".
VERSIONS ?= 24.11 25.11
comma := ,
space := $(subst ,, )
VERSIONS_ARGS ?= --only c-lpm,rs-lpm,io --rounds 5
bench-versions: c-l3fwd
	$(CARGO) build --release -p l3fwd-rs -p trafficgen -p l3fwd-bench
	for v in $(VERSIONS); do $(MAKE) --no-print-directory build c-l3fwd DPDK=$$v || exit 1; done
	$(RELEASE)/l3fwd-bench --dpdk $$(pkg-config --modversion libdpdk)$(comma)$(subst $(space),$(comma),$(strip $(VERSIONS))) \
		--json target/bench/versions/versions.json --work-dir target/bench/versions $(VERSIONS_ARGS)

# Whether BASELINE= verdicts hold on this machine: make bench's runs three
# times, l3fwd-rs, the same again (at least 95% of ratios must say "no
# change"), then a build 5% slower on purpose (the calibration-slowdown
# feature, built into target/calibration; every ratio of l3fwd-rs over C or
# testpmd that could detect 5% must fall significantly). Exits 2 on FAIL;
# JSON in target/bench/calibrate.json. CALIBRATE_ARGS as BENCH_ARGS, e.g.
# "--only lpm,em,io --rounds 5" (~3 x 6 s x configurations x rounds).
CALIBRATE_ARGS ?= --rounds 5
bench-calibrate: c-l3fwd
	$(CARGO) build --release -p l3fwd-rs -p trafficgen -p l3fwd-bench
	$(CARGO) build --release -p l3fwd-rs --features calibration-slowdown --target-dir target/calibration
	$(RELEASE)/l3fwd-bench calibrate $(CALIBRATE_ARGS)

# Instructions per forwarded packet under valgrind's callgrind (repeatable on
# a noisy machine, unlike rates): config, packets, Ir, Ir/pkt, edge; JSON in
# CALLGRIND_JSON. BASELINE=old.json exits 2 if Ir/pkt rose by more than 1% in
# a configuration both have. ~30 s per configuration; CALLGRIND_ARGS e.g.
# "rs-lpm io", "--top 15 c-lpm rs-lpm" or "--lpm-flows 64K --cache-sim io rs-lpm"
# (l3fwd-bench callgrind --help lists the options).
CALLGRIND_ARGS ?= all
CALLGRIND_JSON ?= target/callgrind/callgrind.json
bench-callgrind: deps
	$(CARGO) build --release -p l3fwd-bench
	$(RELEASE)/l3fwd-bench callgrind --json $(CALLGRIND_JSON) $(if $(BASELINE),--baseline $(BASELINE)) $(CALLGRIND_ARGS)

# TEST_ARGS: passed to the test binaries, e.g. "--skip NAME". Fails if the
# run left DPDK runtime folders or hugepage files behind.
TEST_ARGS ?=
test: deps
	scripts/no-leftovers.sh $(CARGO) test --workspace $(if $(TEST_ARGS),-- $(TEST_ARGS))

# At a real router's scale: l3fwd-rs and the C sample (pool raised to
# SCALE_MBUFS) on 1M exact-match rules and 131072 flows per port, multi and
# sequential lookup, and l3fwd-rs alone on 1M IPv4 + 230K IPv6 routes (C's
# LPM holds 1024 rules). Rates, start-up time (first TX) and peak memory;
# ~5 GB RAM per run, ~2.5 min.
SCALE_MBUFS ?= 1048576
SCALE_ARGS ?=
bench-scale: deps
	$(CARGO) build --release -p l3fwd-rs -p trafficgen -p l3fwd-bench
	$(RELEASE)/l3fwd-bench --only scale --scale-mbufs $(SCALE_MBUFS) --json target/bench/bench-scale.json $(SCALE_ARGS)

# The rate while tables change: l3fwd-rs on 1M IPv4 + 230K IPv6 routes,
# 1M flows and 10K ACL rules while l3fwd-ctl sends changes at 0, 1K, 10K, 100K/s and as fast
# as it can; the changes applied per second; reload time beside C's restart
# (EM; C's LPM holds 1024 rules). Table, target/bench/update/update.json and
# update.png. A quiet machine, ~8 GB RAM; UPDATE_ARGS=--quick for a smoke test
# (~3.7 GB of hugepages: C keeps the pool of SCALE_MBUFS it is built with).
# Exits 1, naming the forwarder and its log, if l3fwd-rs or C fails.
UPDATE_ARGS ?=
bench-update: deps
	$(CARGO) build --release -p l3fwd-rs -p trafficgen -p l3fwd-bench
	$(RELEASE)/l3fwd-bench update --mbufs $(SCALE_MBUFS) $(UPDATE_ARGS)

# Rates over frame size x flows, C l3fwd against l3fwd-rs, per table (LPM of
# 16, 10K and 1M routes; EM with a rule per flow): table, CSV, JSON and PNG/SVG
# plots in target/bench/sweep/. The C sample is rebuilt per pool size (and
# with an LPM table for 1M routes) into target/c-l3fwd-sweep/. The full grid
# (6 sizes x 4 flow counts x 4 tables) with SWEEP_ARGS="--rounds 2 --warmup 1
# --window 2" took 2.4 hours on hugepages (2026-12-03) and 79 min on 4 KB
# pages (2026-12-01), most of it the C sample adding 1M routes one by one
# (docs/BENCHMARKS.md); a quick sweep (~5 min):
#   make bench-sweep SWEEP_ARGS="--sizes 64,1518 --flows 16,1K,64K --routes 10K --warmup 1 --window 2"
# BASELINE=old-sweep.json exits 2 if a cell's ratio fell by more than 5% and
# significantly, as for make bench.
SWEEP_ARGS ?=
bench-sweep: deps
	$(CARGO) build --release -p l3fwd-rs -p trafficgen -p l3fwd-bench
	$(RELEASE)/l3fwd-bench sweep $(if $(BASELINE),--baseline $(BASELINE)) $(SWEEP_ARGS)

# One-way latency (sockperf ping-pong and under-load, RTT/2) between two
# network namespaces through l3fwd-rs on af_xdp (idle flush, and --c-drain),
# C l3fwd on af_xdp and the Linux kernel's forwarding: table, JSON and PNG/SVG
# plot in target/bench/latency/. Needs root; tears the namespaces down also
# on failure or Ctrl-C. Defaults take about 4 minutes; a quick run (~1.5 min):
#   make bench-latency LATENCY_ARGS="--time 2 --rates 1000,50000"
LATENCY_ARGS ?=
bench-latency: c-l3fwd
	$(CARGO) build --release -p l3fwd-rs -p l3fwd-bench
	$(RELEASE)/l3fwd-bench latency $(LATENCY_ARGS)

# Fuzzes FUZZ_TARGET (libFuzzer + ASan) for FUZZ_SECS seconds, or for
# FUZZ_RUNS inputs (then without a time limit); not in CI.
# packet: the per-frame code and the vector parse against tests/oracle;
# lpm_rules, em_rules, acl_rules: the rule-file parsers; config, portmask,
# eth_dest: those options' parsers; ctl_line: a line of l3fwd-ctl's protocol
# (fuzz/fuzz_targets/contract: no panic, errors naming file:line or the
# option, printed input reads back the same). RUSTC_BOOTSTRAP lets stable
# take cargo-fuzz's -Z flags (the machine has no nightly toolchain).
FUZZ_TARGET ?= packet
FUZZ_RUNS ?= -1
FUZZ_SECS ?= $(if $(filter -1,$(FUZZ_RUNS)),60,0)
fuzz:
	@command -v cargo-fuzz >/dev/null || $(CARGO) install cargo-fuzz --version 0.13.2 --locked
	cd fuzz && RUSTC_BOOTSTRAP=1 $(CARGO) fuzz run $(FUZZ_TARGET) -- \
		-max_total_time=$(FUZZ_SECS) -runs=$(FUZZ_RUNS) -max_len=2048 -print_final_stats=1

lint: deps
	$(CARGO) fmt --all --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc --workspace --no-deps --quiet
	@# The fuzz crate's tracked lock is current: make fuzz would rewrite it.
	$(CARGO) metadata --locked --format-version 1 --manifest-path fuzz/Cargo.toml >/dev/null

clean:
	$(CARGO) clean
	rm -rf $(OUT)

endif
