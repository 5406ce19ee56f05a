//! The files every command reads and writes: a program or input that must
//! be there, and reports as JSON.

use std::path::Path;

/// Fails with `hint` unless `path` is a file.
pub fn require(path: &Path, hint: &str) -> Result<(), String> {
    if path.is_file() {
        Ok(())
    } else {
        Err(format!("{} not found: {hint}", path.display()))
    }
}

/// A report written earlier (a baseline, or the sweep `--resume` goes on
/// with), read from `path`.
pub fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("baseline {}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("baseline {}: {e}", path.display()))
}

/// Writes `report` to `path` as pretty JSON, making its directory.
pub fn write_json(path: &Path, report: &impl serde::Serialize) -> Result<(), String> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let text = serde_json::to_string_pretty(report).map_err(|e| e.to_string())?;
    std::fs::write(path, text + "\n").map_err(|e| format!("{}: {e}", path.display()))
}
