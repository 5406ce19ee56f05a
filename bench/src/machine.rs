//! What the numbers were measured on, and when: rates only compare on the same machine.

use serde::{Deserialize, Serialize};
use std::time::{SystemTime, UNIX_EPOCH};

#[derive(Serialize, Deserialize, PartialEq, Debug, Clone)]
pub struct Machine {
    pub nproc: usize,
    pub cpu_model: String,
    /// The clock a cycle is counted in (`cpu MHz` of /proc/cpuinfo; 0 if
    /// unknown, or in a report written before it was recorded).
    #[serde(default)]
    pub cpu_mhz: f64,
}

impl Machine {
    pub fn current() -> Machine {
        let nproc = std::thread::available_parallelism().map_or(0, |n| n.get());
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let model = cpuinfo
            .lines()
            .find(|l| l.starts_with("model name"))
            .and_then(|l| l.split_once(':'));
        let cpu_model = model.map_or_else(|| "unknown".into(), |(_, m)| m.trim().to_string());
        let cpu_mhz = cpuinfo
            .lines()
            .find(|l| l.starts_with("cpu MHz"))
            .and_then(|l| l.split_once(':')?.1.trim().parse().ok())
            .unwrap_or(0.0);
        Machine {
            nproc,
            cpu_model,
            cpu_mhz,
        }
    }

    /// The machine of the tests' reports.
    #[cfg(test)]
    pub fn test() -> Machine {
        Machine {
            nproc: 2,
            cpu_model: "test".into(),
            cpu_mhz: 2000.0,
        }
    }
}

/// The current UTC time as "YYYY-MM-DDTHH:MM:SSZ".
pub fn timestamp() -> String {
    let secs = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    utc(secs)
}

fn utc(secs: u64) -> String {
    let (days, rest) = ((secs / 86_400) as i64, secs % 86_400);
    // Days since 1970-01-01 to a civil date (Howard Hinnant's days_from_civil, inverted).
    let z = days + 719_468;
    let (era, doe) = (z.div_euclid(146_097), z.rem_euclid(146_097));
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let (h, m, s) = (rest / 3600, rest / 60 % 60, rest % 60);
    format!("{year:04}-{month:02}-{day:02}T{h:02}:{m:02}:{s:02}Z")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_dates() {
        assert_eq!(utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(utc(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(utc(1_764_456_001), "2025-11-29T22:40:01Z");
    }
}
