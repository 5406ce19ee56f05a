//! `sweep --resume`: go on with an interrupted sweep. The cells its
//! sweep.json holds every run of are carried into the new report as they
//! were measured; only the others run. A full grid on hugepages takes
//! hours (the C sample adds 1M routes in minutes, per run), more than a
//! sitting may give it.

use crate::configs::Forwarder;
use crate::engine::Run;
use crate::grid::Cell;
use crate::machine::Machine;
use crate::report::{Report, Settings};

/// The earlier sweep `earlier`, if its runs can stand beside new ones made
/// with `settings` on `machine`; else why not.
pub fn check(earlier: Report, settings: &Settings, machine: &Machine) -> Result<Report, String> {
    let (old, new) = (&earlier.settings, settings);
    let differs = [
        (old.rounds != new.rounds, "rounds"),
        (old.warmup_secs != new.warmup_secs, "warm-up"),
        (old.window_secs != new.window_secs, "window"),
        (
            memory_kind(&old.memory) != memory_kind(&new.memory),
            "memory (hugepages or not)",
        ),
        (old.ports != new.ports, "ports"),
        (old.simd_bitwidth != new.simd_bitwidth, "SIMD bitwidth"),
        (old.ring_frames != new.ring_frames, "ring frames"),
        (earlier.machine.cpu_model != machine.cpu_model, "CPU"),
    ];
    match differs.iter().find(|(differs, _)| *differs) {
        Some((_, what)) => Err(format!(
            "the sweep of {} had other {what}: start a new one (without --resume) or give the same settings",
            earlier.timestamp
        )),
        None => Ok(earlier),
    }
}

/// `hugepages` or `no-huge`: the page size, not how many were reserved.
fn memory_kind(memory: &str) -> &str {
    memory.split_whitespace().next().unwrap_or("")
}

/// The runs of `cell` in `earlier`, if it holds one of each of `forwarders`
/// in each of `rounds` rounds.
pub fn carried(earlier: &Report, cell: &Cell, forwarders: &[Forwarder], rounds: u32) -> Option<Vec<Run>> {
    let key = cell.key();
    let mut runs = Vec::new();
    for round in 1..=rounds {
        for &forwarder in forwarders {
            let record = earlier
                .runs
                .iter()
                .find(|r| r.cell.as_ref() == Some(&key) && r.round == round && r.forwarder() == forwarder.id())?;
            runs.push(Run {
                config: cell.config(forwarder),
                cell: Some(*cell),
                round,
                result: record.result(),
            });
        }
    }
    Some(runs)
}

#[cfg(test)]
mod tests {
    use super::super::results::tests::{sample, sample_cells};
    use super::*;

    #[test]
    fn complete_cells_are_carried_with_their_failures() {
        let report = sample();
        let cells = sample_cells();
        let both = [Forwarder::C, Forwarder::Rs];
        let lpm = carried(&report, &cells[0], &both, 3).expect("every run of the first cell");
        assert_eq!(lpm.len(), 6);
        let rates: Vec<f64> = lpm.iter().map(|r| r.result.as_ref().unwrap().mpps).collect();
        assert_eq!(rates, [10.0, 13.0, 12.0, 15.0, 11.0, 14.0], "in the order they ran");
        let em = carried(&report, &cells[2], &both, 3).unwrap();
        assert!(
            em[0].result.as_ref().unwrap_err().contains("no memory"),
            "failures stay failures"
        );
        assert!(carried(&report, &cells[0], &both, 4).is_none(), "a round missing");
        assert!(
            carried(&report, &cells[0], &[Forwarder::C, Forwarder::Io], 3).is_none(),
            "testpmd io did not run"
        );
    }

    #[test]
    fn only_a_sweep_made_alike_is_resumed() {
        let report = sample();
        let (settings, machine) = (report.settings.clone(), report.machine.clone());
        let mut hugepages = settings.clone();
        hugepages.memory = "hugepages 2MB x 576".into();
        let mut window = settings.clone();
        window.window_secs = 3.0;
        assert!(check(sample(), &settings, &machine).is_ok());
        let refused = |s: &Settings| check(sample(), s, &machine).unwrap_err();
        assert!(refused(&hugepages).contains("memory"));
        assert!(refused(&window).contains("window"));
        let mut wider = settings.clone();
        wider.simd_bitwidth = Some(512);
        assert!(refused(&wider).contains("SIMD bitwidth"));
        let mut in_cache = settings.clone();
        in_cache.ring_frames = Some(128);
        assert!(refused(&in_cache).contains("ring frames"));
        let mut elsewhere = machine.clone();
        elsewhere.cpu_model = "another".into();
        assert!(check(sample(), &settings, &elsewhere).unwrap_err().contains("CPU"));
    }
}
