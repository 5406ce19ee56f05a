//! `--top N`: the functions with the most self instructions per packet, from
//! `callgrind_annotate --inclusive=no` output, summed per function over the
//! source files its inlined code comes from.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::Path;
use std::process::Command;

/// The annotation of `dump`, one line per file:function with its self Ir.
pub fn annotate(dump: &Path) -> Result<String, String> {
    let out = Command::new("callgrind_annotate")
        .args(["--inclusive=no", "--threshold=100", "--auto=no", "--show=Ir"])
        .arg(dump)
        .output()
        .map_err(|e| format!("cannot run callgrind_annotate: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "callgrind_annotate {} failed ({}): {}",
            dump.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The top `n` functions of `annotation`, per packet of `packets`, then the
/// rest and the total (the sum over all functions: the dump's totals, as in
/// the table; callgrind_annotate's PROGRAM TOTALS differ by ~0.2%, cost at
/// the window's edges).
pub fn top(annotation: &str, n: usize, packets: u64) -> Result<String, String> {
    let mut funcs: BTreeMap<String, u64> = BTreeMap::new();
    let mut objects: BTreeMap<String, String> = BTreeMap::new();
    let lines = annotation.lines().skip_while(|l| !is_list_header(l)).skip(1);
    for (ir, name) in lines.filter_map(cost_line) {
        let (name, object) = match name.split_once(" [") {
            Some((name, object)) if object.ends_with(']') => {
                let object = object.trim_end_matches(']');
                (name.trim_end(), object.rsplit('/').next().unwrap_or(object))
            }
            _ => (name, ""),
        };
        // "file:function"; the file is a path or ??? and has no ':'.
        let func = name.split_once(':').map_or(name, |(_, f)| f);
        // Addresses (static functions of stripped objects) only mean
        // something with their object, which the annotation names only on
        // some lines.
        let address = func.starts_with("0x");
        let key = if address {
            format!("{func} [{object}]")
        } else {
            func.to_string()
        };
        *funcs.entry(key.clone()).or_default() += ir;
        if !object.is_empty() && !address {
            objects.entry(key).or_insert_with(|| object.to_string());
        }
    }
    if funcs.is_empty() {
        return Err("top: no functions in callgrind_annotate output".into());
    }
    let total: u64 = funcs.values().sum();
    let mut sorted: Vec<(&String, &u64)> = funcs.iter().collect();
    sorted.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    let per_packet = |ir: u64| ir as f64 / packets as f64;
    let share = |ir: u64| 100.0 * ir as f64 / total as f64;
    let mut out = format!("  {:>8} {:>6}  function [object]\n", "Ir/pkt", "%");
    for &(key, &ir) in sorted.iter().take(n) {
        let shown = objects.get(key).map_or_else(|| key.clone(), |o| format!("{key} [{o}]"));
        let _ = writeln!(out, "  {:8.1} {:5.1}%  {shown}", per_packet(ir), share(ir));
    }
    let rest = total - sorted.iter().take(n).map(|(_, &ir)| ir).sum::<u64>();
    let _ = writeln!(
        out,
        "  {:8.1} {:5.1}%  (all other functions)",
        per_packet(rest),
        share(rest)
    );
    let _ = writeln!(out, "  {:8.1} 100.0%  total", per_packet(total));
    Ok(out)
}

/// The header above the function list: `Ir  file:function`.
fn is_list_header(line: &str) -> bool {
    let mut words = line.split_whitespace();
    words.next() == Some("Ir") && words.next().is_some_and(|w| w.starts_with("file:function"))
}

/// `1,234 ( 5.6%)  file:function [object]` -> `(1234, "file:function [object]")`.
fn cost_line(line: &str) -> Option<(u64, &str)> {
    let (count, rest) = line.trim_start().split_once(char::is_whitespace)?;
    let ir = count.replace(',', "").parse().ok()?;
    let rest = rest.trim_start().strip_prefix('(')?;
    let (percent, name) = rest.split_once(')')?;
    percent.trim().strip_suffix('%')?.parse::<f64>().ok()?;
    Some((ir, name.trim()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const ANNOTATION: &str = "\
--------------------------------------------------------------------------------
Profile data file 'rs-lpm.out' (creator: callgrind-3.19.0)
--------------------------------------------------------------------------------
Ir
--------------------------------------------------------------------------------
1,000,000 (100.0%)  PROGRAM TOTALS

--------------------------------------------------------------------------------
Ir                 file:function
--------------------------------------------------------------------------------
400,000 (40.00%)  src/forward.rs:l3fwd_rs::dataplane::forward::forward_batch [/w/target/release/l3fwd-rs]
250,000 (25.00%)  ???:0x0000000000004a20 [/usr/lib/x86_64-linux-gnu/dpdk/pmds-23.0/librte_net_pcap.so.23.0]
200,000 (20.00%)  src/lookup.rs:l3fwd_rs::dataplane::forward::forward_batch
 90,000 ( 9.00%)  ???:memcpy [/usr/lib/x86_64-linux-gnu/libc.so.6]
 60,000 ( 6.00%)  ???:0x0000000000004a20 [/usr/lib/other.so]
";

    #[test]
    fn functions_summed_over_their_files() {
        let out = top(ANNOTATION, 2, 1000).unwrap();
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(
            lines,
            [
                "    Ir/pkt      %  function [object]",
                "     600.0  60.0%  l3fwd_rs::dataplane::forward::forward_batch [l3fwd-rs]",
                "     250.0  25.0%  0x0000000000004a20 [librte_net_pcap.so.23.0]",
                "     150.0  15.0%  (all other functions)",
                "    1000.0 100.0%  total",
            ]
        );
    }

    #[test]
    fn lines_before_the_list_and_odd_lines_are_skipped() {
        assert_eq!(
            cost_line("1,000,000 (100.0%)  PROGRAM TOTALS"),
            Some((1_000_000, "PROGRAM TOTALS"))
        );
        assert_eq!(cost_line("Ir  file:function"), None);
        assert_eq!(cost_line("12 (x%) f"), None);
        let out = top(ANNOTATION, 10, 1000).unwrap();
        assert!(
            !out.contains("PROGRAM TOTALS"),
            "the summary line above the list is not a function"
        );
        assert!(top("nothing here", 5, 10).is_err());
    }
}
