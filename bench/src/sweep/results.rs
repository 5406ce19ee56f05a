//! A sweep's report as CSV: a line per run and a line per cell.

use crate::report::{Rates, Report};
use std::fmt::Write as _;

/// Every run, one line each: `cell,table,size,flows,rules,forwarder,round,mpps,first_tx_secs,rss_mb,error`.
pub fn runs_csv(report: &Report) -> String {
    let mut out = String::from("cell,table,size,flows,rules,forwarder,round,mpps,first_tx_secs,rss_mb,error\n");
    for run in &report.runs {
        let Some(cell) = report.cells.iter().find(|c| Some(&c.cell) == run.cell.as_ref()) else {
            continue;
        };
        let _ = writeln!(
            out,
            "{},{},{},{},{},{},{},{},{},{},{}",
            cell.cell,
            cell.table,
            cell.size,
            cell.flows,
            cell.rules,
            run.forwarder(),
            run.round,
            number(run.mpps, 4),
            number(run.first_tx_secs, 3),
            number(run.rss_mb, 1),
            csv_text(run.error.as_deref().unwrap_or(""))
        );
    }
    out
}

/// One line per cell: medians, min..max and the ratio.
pub fn cells_csv(report: &Report) -> String {
    let mut out = String::from(
        "cell,table,size,flows,rules,mbufs,c_median_mpps,c_min_mpps,c_max_mpps,c_ok_runs,\
         rs_median_mpps,rs_min_mpps,rs_max_mpps,rs_ok_runs,rs_over_c,io_median_mpps,\
         c_cycles_above_io,rs_cycles_above_io,c_over_rs_above_io\n",
    );
    for c in &report.cells {
        let rates = |r: &Rates| {
            let (median, min, max) = (number(r.median_mpps, 4), number(r.min_mpps, 4), number(r.max_mpps, 4));
            format!("{median},{min},{max},{}", r.ok_runs)
        };
        let above = c.above_io;
        let _ = writeln!(
            out,
            "{},{},{},{},{},{},{},{},{},{},{},{},{}",
            c.cell,
            c.table,
            c.size,
            c.flows,
            c.rules,
            c.mbufs,
            rates(&c.c),
            rates(&c.rs),
            number(c.ratio, 4),
            number(c.io.as_ref().and_then(|io| io.median_mpps), 4),
            number(above.map(|a| a.c_cycles), 1),
            number(above.map(|a| a.rs_cycles), 1),
            number(above.map(|a| a.c_over_rs), 3)
        );
    }
    out
}

fn number(v: Option<f64>, decimals: usize) -> String {
    v.map_or_else(String::new, |v| format!("{v:.decimals$}"))
}

/// A CSV field: quoted (quotes doubled) when it holds a comma, quote or line break.
fn csv_text(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::configs::Forwarder;
    use crate::grid::tests::mode;
    use crate::grid::{Cell, Table};
    use crate::machine::Machine;
    use crate::report::{Run, Settings};
    use crate::run::Sample;

    fn cell_run(cell: Cell, forwarder: Forwarder, round: u32, result: Result<Sample, String>) -> Run {
        Run {
            config: cell.config(forwarder),
            cell: Some(cell),
            round,
            result,
        }
    }

    pub fn cell(table: Table, size: u32, flows: usize) -> Cell {
        Cell { table, size, flows }
    }

    fn ok(mpps: f64) -> Result<Sample, String> {
        Ok(Sample {
            mpps,
            first_tx_secs: 1.0,
            rss_mb: 100.0,
            cycles_per_packet: None,
        })
    }

    /// The cells of [`sample`]: two LPM cells and an EM cell.
    pub fn sample_cells() -> [Cell; 3] {
        let lpm = Table {
            mode: mode("lpm"),
            routes: Some(16),
        };
        let em = Table {
            mode: mode("em"),
            routes: None,
        };
        [cell(lpm, 64, 16), cell(lpm, 1518, 16), cell(em, 64, 1024)]
    }

    /// Three rounds of [`sample_cells`]; C failed every EM run, "with, comma".
    pub fn sample() -> Report {
        let cells = sample_cells();
        let mut runs = Vec::new();
        let rates = [
            (cells[0], [10.0, 12.0, 11.0], [13.0, 15.0, 14.0]),
            (cells[1], [2.0, 2.0, 2.0], [2.4, 2.6, 2.5]),
        ];
        for round in 1..=3 {
            for (cell, c, rs) in &rates {
                let i = round as usize - 1;
                runs.push(cell_run(*cell, Forwarder::C, round, ok(c[i])));
                runs.push(cell_run(*cell, Forwarder::Rs, round, ok(rs[i])));
            }
            let failed = Err("exited early, \"Cause: no memory\"".to_string());
            runs.push(cell_run(cells[2], Forwarder::C, round, failed));
            runs.push(cell_run(cells[2], Forwarder::Rs, round, ok(5.0)));
        }
        let settings = Settings {
            rounds: 3,
            warmup_secs: 1.0,
            window_secs: 2.0,
            sizes: vec![64, 1518],
            flows: vec![16, 1024],
            tables: vec!["lpm-16".into(), "em".into()],
            memory: "no-huge (not root)".into(),
            ..Settings::default()
        };
        let machine = Machine::test();
        Report::new(settings, machine, "2026-01-01T00:00:00Z".into(), &[], &cells, &runs)
    }

    #[test]
    fn medians_spreads_and_ratios_per_cell() {
        let r = sample();
        let c0 = &r.cells[0];
        assert_eq!(c0.cell, "lpm-16/64B/16");
        assert_eq!(
            (c0.c.median_mpps, c0.c.min_mpps, c0.c.max_mpps),
            (Some(11.0), Some(10.0), Some(12.0))
        );
        assert_eq!((c0.rs.median_mpps, c0.rs.ok_runs, c0.rs.runs), (Some(14.0), 3, 3));
        assert!((c0.ratio.unwrap() - 14.0 / 11.0).abs() < 1e-12);
        assert!((r.cells[1].ratio.unwrap() - 1.25).abs() < 1e-12);
        let em = &r.cells[2];
        assert_eq!(
            (em.c.ok_runs, em.c.median_mpps, em.ratio),
            (0, None, None),
            "C n/a: no ratio"
        );
        assert_eq!(em.rs.median_mpps, Some(5.0));
        assert_eq!((em.rules, em.mbufs), (1024, 8192));
        assert!(em.c.error.as_deref().unwrap().contains("no memory"));
    }

    #[test]
    fn json_keeps_every_run() {
        let r = sample();
        assert_eq!(r.runs.len(), 3 * 3 * 2, "3 cells x 3 rounds x 2 forwarders");
        let text = serde_json::to_string_pretty(&r).unwrap();
        let back: Report = serde_json::from_str(&text).unwrap();
        assert_eq!(back, r);
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(value["runs"][0]["cell"], "lpm-16/64B/16");
        assert_eq!(value["runs"][0]["config"], "c-lpm", "make bench's ids");
        assert_eq!(value["runs"][1]["mpps"], 13.0);
        assert_eq!(value["cells"][1]["ratio"], 1.25);
        assert!(r.is_sweep() && value.get("configs").is_none() && value.get("ratios").is_none());
    }

    /// A sweep.json written before make bench and the sweep shared their
    /// schema still resumes and serves as a baseline.
    #[test]
    fn older_sweeps_are_read() {
        let old = r#"{"timestamp": "t", "machine": {"nproc": 2, "cpu_model": "m", "cpu_mhz": 2000.0},
            "settings": {"rounds": 1, "warmup_secs": 1.0, "window_secs": 2.0, "sizes": [64],
                "flows": [16], "tables": ["lpm-16"], "memory": "no-huge"},
            "runs": [{"cell": "lpm-16/64B/16", "forwarder": "rs", "round": 1, "mpps": 14.0,
                "first_tx_secs": 1.0, "rss_mb": 100.0, "error": null}],
            "cells": [{"cell": "lpm-16/64B/16", "table": "lpm-16", "table_label": "LPM, 16 routes",
                "size": 64, "flows": 16, "rules": 16, "mbufs": 8192, "ratio": null,
                "c": {"runs": 0, "ok_runs": 0, "median_mpps": null, "min_mpps": null, "max_mpps": null, "error": null},
                "rs": {"runs": 1, "ok_runs": 1, "median_mpps": 14.0, "min_mpps": 14.0, "max_mpps": 14.0, "error": null}}]}"#;
        let scratch = testkit::Scratch::new("l3fwd-bench-old-sweep");
        let path = scratch.path("l3fwd-bench-old-sweep.json");
        std::fs::write(&path, old).unwrap();
        let r = Report::read(&path).unwrap();
        assert!(r.is_sweep());
        assert_eq!(r.runs[0].config, "rs-lpm", "the cell's mode");
        assert_eq!(
            (r.runs[0].forwarder(), r.runs[0].cell.as_deref()),
            ("rs", Some("lpm-16/64B/16"))
        );
        assert_eq!(r.runs[0].result().unwrap().mpps, 14.0);
        assert_eq!(r.cells[0].rs.median_mpps, Some(14.0));
    }

    #[test]
    fn csv_has_a_line_per_run_and_per_cell() {
        let r = sample();
        let runs = runs_csv(&r);
        let lines: Vec<&str> = runs.lines().collect();
        assert_eq!(lines.len(), 1 + r.runs.len());
        let columns = lines[0].split(',').count();
        assert_eq!(columns, 11);
        assert_eq!(lines[1], "lpm-16/64B/16,lpm-16,64,16,16,c,1,10.0000,1.000,100.0,");
        let failed = lines
            .iter()
            .find(|l| l.starts_with("em/64B/1K,em,64,1024,1024,c,"))
            .unwrap();
        assert!(
            failed.ends_with(",,,,\"exited early, \"\"Cause: no memory\"\"\""),
            "{failed}"
        );
        let cells = cells_csv(&r);
        let lines: Vec<&str> = cells.lines().collect();
        assert_eq!(lines.len(), 1 + 3);
        assert!(lines.iter().all(|l| l.split(',').count() == 19), "{cells}");
        assert!(lines[2].ends_with(",2.5000,2.4000,2.6000,3,1.2500,,,,"), "{}", lines[2]);
        assert!(lines[3].ends_with(",,,,0,5.0000,5.0000,5.0000,3,,,,,"), "{}", lines[3]);
    }

    #[test]
    fn testpmd_io_is_summarised_only_when_it_ran() {
        let mut r = sample();
        assert!(r.cells.iter().all(|c| c.io.is_none()));
        let text = serde_json::to_string(&r).unwrap();
        assert!(!text.contains("\"io\""), "no io key with --no-io");
        let lpm = Table {
            mode: mode("lpm"),
            routes: Some(16),
        };
        let cells: Vec<Cell> = vec![cell(lpm, 64, 16)];
        let runs: Vec<Run> = [20.0, 22.0, 21.0]
            .into_iter()
            .zip(1..)
            .map(|(mpps, round)| cell_run(cells[0], Forwarder::Io, round, ok(mpps)))
            .collect();
        r = Report::new(r.settings, r.machine, r.timestamp, &[], &cells, &runs);
        let io = r.cells[0].io.as_ref().unwrap();
        assert_eq!((io.median_mpps, io.ok_runs), (Some(21.0), 3));
        assert_eq!(r.cells[0].ratio, None, "no l3fwd ran");
        assert_eq!(
            r.cells[0].above_io, None,
            "no work above the floor without both forwarders"
        );
        assert!(cells_csv(&r).lines().nth(1).unwrap().ends_with(",21.0000,,,"));
    }
}
