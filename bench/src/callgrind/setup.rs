//! What the selected configurations run: their programs (built first
//! unless --no-build), traffic and pools, from the bench's own pieces: make
//! bench's configurations and command lines, l3fwd-gen's default traffic,
//! and for --lpm-flows/--em-flows the sweep's cells, pools and C builds.

use super::CallgrindArgs;
use crate::cbuild::{self, Build};
use crate::configs::{self, Config, Forwarder};
use crate::engine::Unit;
use crate::grid::{Cell, Table};
use crate::mode::Mode;
use crate::mode::RuleFormat;
use crate::pool::Pool;
use crate::run::Timing;
use crate::traffic::Files;
use crate::traffic::{self, CellFiles};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Frames in each port's pcap file on the default rules (as make bench).
const FRAMES: usize = 1024;
/// Routes of the LPM table of --lpm-flows: the sweep's lpm-16 cells.
const CELL_ROUTES: usize = 16;

/// make bench's configurations but its eventdev ones: under valgrind the
/// event device's service core polls thousands of times per packet, so
/// its polling (about 88,700 Ir/pkt, C and l3fwd-rs alike) drowns the
/// forwarding work these counts are for. make bench measures their rates.
pub fn counted() -> Vec<Config> {
    configs::all().into_iter().filter(|c| !c.is_event()).collect()
}

/// Resolves the configuration arguments: ids of [`counted`]'s
/// configurations or `all` (all of them), each once, in the order first
/// given.
pub fn select(items: &[String]) -> Result<Vec<Config>, String> {
    let mut chosen = Vec::new();
    for item in items.iter().map(|s| s.trim()).filter(|s| !s.is_empty()) {
        let group = match item {
            "all" => counted(),
            id => match counted().into_iter().find(|c| c.id() == id) {
                Some(c) => vec![c],
                None => {
                    let ids: Vec<String> = counted().into_iter().map(Config::id).collect();
                    let event = if id.ends_with("-event") {
                        " (eventdev is not counted: the service core's polling would drown the forwarding)"
                    } else {
                        ""
                    };
                    return Err(format!(
                        "unknown configuration '{id}'{event} (one of: {}, all)",
                        ids.join(", ")
                    ));
                }
            },
        };
        for c in group {
            if !chosen.contains(&c) {
                chosen.push(c);
            }
        }
    }
    if chosen.is_empty() {
        return Err("no configuration given".into());
    }
    Ok(chosen)
}

/// The traffic of the LPM-traffic configurations (LPM, FIB, ACL, io) or of
/// the EM ones: a sweep cell, or the default rules with l3fwd-gen's frames.
struct Kind {
    files: Files,
    pool: Pool,
    /// The C build this traffic needs, and where it goes.
    c_build: Build,
    c_dir: PathBuf,
    /// The sweep cell it is, and its files (removed when dropped).
    cell: Option<(Cell, CellFiles)>,
}

/// The units of the selected configurations, and the traffic they run on
/// (a cell's files are removed when the plan is dropped).
pub struct Plan {
    pub units: Vec<Unit>,
    _kinds: [Option<Kind>; 2],
}

impl Plan {
    /// Builds what `configs` need unless `--no-build`, checks that the
    /// programs are there, writes the traffic into `work`: a unit per
    /// configuration, each run with `timing`.
    pub fn new(configs: &[Config], args: &CallgrindArgs, work: &Path, timing: Timing) -> Result<Plan, String> {
        let needs = |em: bool| configs.iter().any(|c| c.is_em() == em);
        let needs_c = |em: bool| configs.iter().any(|c| c.is_em() == em && c.forwarder == Forwarder::C);
        if !args.no_build {
            cargo_build()?;
        }
        let kind = |em: bool, flows_of: Option<usize>| -> Result<Option<Kind>, String> {
            if !needs(em) {
                return Ok(None);
            }
            // The cell of the exact-match configurations' mode, or a plain
            // LPM cell (ACL runs on it with --acl-rules).
            let mode = match configs.iter().find(|c| c.is_em() && em) {
                Some(c) => c.mode,
                None => Mode::default_mode(),
            };
            let kind = match flows_of {
                Some(n) => cell_kind(args, mode, n, work)?,
                None => default_kind(args, em, work)?,
            };
            if needs_c(em) {
                if !args.no_build {
                    kind.c_build.make(&args.c_build_script, &kind.c_dir)?;
                }
                crate::files::require(&kind.c_dir.join(cbuild::BINARY), "build it, or drop --no-build")?;
            }
            Ok(Some(kind))
        };
        let kinds = [kind(false, args.lpm_flows)?, kind(true, args.em_flows)?];
        let acl_rules = match AclRules::of(args, configs) {
            AclRules::Dir(dir) => ["v4", "v6"].map(|f| dir.join(format!("acl_{f}.cfg"))),
            AclRules::Cell => {
                let cell = kinds[0].as_ref().and_then(|k| k.cell.as_ref());
                cell.ok_or("no --lpm-flows cell for the ACL rules")?.1.acl_rules()?
            }
        };
        let unit = |config: Config| -> Result<Unit, String> {
            let kind = kinds[usize::from(config.is_em())]
                .as_ref()
                .expect("the traffic of every configuration is made");
            let program = match config.forwarder {
                Forwarder::Io => args.testpmd.clone(),
                Forwarder::Rs => args.rs_bin.clone(),
                Forwarder::C => kind.c_dir.join(cbuild::BINARY),
            };
            crate::files::require(&program, "build it, or drop --no-build")?;
            // ACL runs on the LPM traffic with the --acl-rules rules.
            let rules = match config.mode.rules() {
                RuleFormat::Acl => acl_rules.clone(),
                RuleFormat::Routes | RuleFormat::Flows => kind.files.rules.clone(),
            };
            let pcaps = kind.files.pcaps.clone();
            Ok(Unit {
                config,
                cell: kind.cell.as_ref().map(|(cell, _)| *cell),
                program: Ok(program),
                files: args.ports.feed(&Files { rules, pcaps }, crate::command::RING_PRIME),
                pool: kind.pool,
                timing,
                may_keep: false,
            })
        };
        let units: Vec<Unit> = configs.iter().map(|&c| unit(c)).collect::<Result<_, _>>()?;
        if configs.iter().any(|c| c.mode.rules() == RuleFormat::Acl) {
            for rules in &acl_rules {
                crate::files::require(rules, "give --acl-rules DIR")?;
            }
        }
        Ok(Plan { units, _kinds: kinds })
    }
}

/// Where the ACL configurations' rules come from.
pub enum AclRules {
    /// acl_v4.cfg and acl_v6.cfg of a directory: --acl-rules, or the
    /// example rules in configs/.
    Dir(PathBuf),
    /// The --lpm-flows cell's routes as ACL rules (the example rules
    /// route none of its flows).
    Cell,
}

impl AclRules {
    /// Those of `configs` (no ACL configuration among them: the
    /// directory, unread, as older reports record it).
    pub fn of(args: &CallgrindArgs, configs: &[Config]) -> AclRules {
        let runs_acl = configs.iter().any(|c| c.mode.rules() == RuleFormat::Acl);
        match &args.acl_rules {
            Some(dir) => AclRules::Dir(dir.clone()),
            None if runs_acl && args.lpm_flows.is_some() => AclRules::Cell,
            None => AclRules::Dir("configs".into()),
        }
    }

    /// As a report records them: the directory, or `cell`.
    pub fn name(&self) -> PathBuf {
        match self {
            AclRules::Dir(dir) => dir.clone(),
            AclRules::Cell => "cell".into(),
        }
    }
}

/// The working tree's l3fwd-rs and generators, so that the figures are
/// those of the current sources ($CARGO, as make sets it, or cargo).
fn cargo_build() -> Result<(), String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = Command::new(&cargo)
        .args(["build", "--release", "-q", "-p", "l3fwd-rs", "-p", "trafficgen"])
        .status()
        .map_err(|e| format!("cannot run {}: {e}", cargo.to_string_lossy()))?;
    if !status.success() {
        return Err(format!("cargo build failed ({status})"));
    }
    Ok(())
}

/// The default rule files and 1024 frames per port of l3fwd-gen's traffic
/// for them; every program's default pool.
fn default_kind(args: &CallgrindArgs, em: bool, work: &Path) -> Result<Kind, String> {
    let mode = if em { "em" } else { "lpm" };
    let pcaps = traffic::default_pcaps(work, mode, FRAMES);
    crate::files::require(&args.gen_bin, "build it with `cargo build --release -p trafficgen`")?;
    traffic::write_pair(&args.gen_bin, &pcaps, FRAMES, em)?;
    Ok(Kind {
        files: Files {
            rules: ["v4", "v6"].map(|f| args.rules_dir.join(format!("{mode}_{f}.cfg"))),
            pcaps,
        },
        pool: Pool::DEFAULT,
        c_dir: args.c_dir.clone(),
        c_build: Build::STOCK,
        cell: None,
    })
}

/// The sweep's cell of `flows` flows of `--size`-byte frames: its table,
/// traffic, pool and C build.
fn cell_kind(args: &CallgrindArgs, mode: Mode, flows: usize, work: &Path) -> Result<Kind, String> {
    let size = args.size;
    let routes = (mode.rules() != RuleFormat::Flows).then_some(CELL_ROUTES);
    let table = Table { mode, routes };
    let cell = Cell { table, size, flows };
    crate::files::require(
        &args.tablegen_bin,
        "build it with `cargo build --release -p trafficgen`",
    )?;
    let files = traffic::generate_cell(&args.tablegen_bin, &args.rules_dir, work, &cell)?;
    let c_build = Build {
        mbufs: cell.mbufs(),
        lpm_routes: CELL_ROUTES,
        sequential: false,
    };
    Ok(Kind {
        files: files.files.clone(),
        pool: cell.pool(),
        c_dir: c_build.dir(&args.c_build_dir),
        c_build,
        cell: Some((cell, files)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sel(items: &[&str]) -> Result<Vec<String>, String> {
        let items: Vec<String> = items.iter().map(|s| s.to_string()).collect();
        Ok(select(&items)?.into_iter().map(Config::id).collect())
    }

    #[test]
    fn configurations_in_the_order_given_each_once() {
        assert_eq!(
            sel(&["rs-lpm", "io", "c-lpm", "rs-lpm"]).unwrap(),
            ["rs-lpm", "io", "c-lpm"]
        );
        let all = sel(&["io", "all"]).unwrap();
        assert_eq!(all[0], "io");
        assert_eq!(all.len(), counted().len());
        assert!(!all.iter().any(|c| c.ends_with("-event")), "{all:?}");
        assert!(sel(&["rs-lpm-event"]).unwrap_err().contains("eventdev is not counted"));
        for id in ["c-lpm", "rs-fib", "c-em", "rs-em-seq", "c-acl", "rs-acl"] {
            assert!(
                all.iter().any(|c| c == id),
                "{id}: the script's configurations are in all"
            );
        }
        assert!(sel(&["rs-em-1m"])
            .unwrap_err()
            .contains("unknown configuration 'rs-em-1m'"));
        assert!(sel(&["", " "]).is_err());
    }
}
