//! Which installed DPDK the crate builds against: shared by build.rs and
//! the crate's tests.

/// The release line whose private layouts the crate reads inline
/// (rte_fib's DIR-24-8 and trie heads, `fib.rs`).
pub const SUPPORTED: &str = "22.11";

/// Ok for `version` (pkg-config's `--modversion libdpdk`) of the 22.11
/// line, an error saying why for anything else.
pub fn check(version: &str) -> Result<(), String> {
    let line: Vec<&str> = version.split('.').take(2).collect();
    if line.join(".") == SUPPORTED {
        Ok(())
    } else {
        Err(format!(
            "DPDK {version} found by pkg-config, but the dpdk crate needs DPDK {SUPPORTED}.x: \
             it reads rte_fib's private table layout of that release inline"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::check;

    #[test]
    fn only_the_22_11_line_builds() {
        for ok in ["22.11", "22.11.0", "22.11.11", "22.11.1-rc1"] {
            assert_eq!(check(ok), Ok(()), "{ok}");
        }
        for refused in ["23.11.0", "24.11.1", "22.07.0", "22.1", "221.1"] {
            let why = check(refused).unwrap_err();
            assert!(
                why.contains(&format!("DPDK {refused} found")) && why.contains("22.11.x"),
                "{why}"
            );
        }
    }
}
