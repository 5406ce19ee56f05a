//! getopt_long's abbreviations, as C l3fwd's users type them: a long option
//! may be shortened to any prefix that names one option (`--hash` for
//! `--hash-entry-num`, `--par` for `--parse-ptype`).
//!
//! Options l3fwd-rs adds must not make a prefix that is unique among C's
//! options ambiguous (`--h` is `--hash-entry-num` in C, though l3fwd-rs also
//! has `--help`): a prefix is first looked up among C 22.11's options, then
//! among all of them.

/// The long options of C l3fwd 22.11 (`lgopts` in its main.c).
pub const C_LONG_OPTIONS: [&str; 20] = [
    "config",
    "rx-queue-size",
    "tx-queue-size",
    "eth-dest",
    "no-numa",
    "ipv6",
    "max-pkt-len",
    "hash-entry-num",
    "parse-ptype",
    "per-port-pool",
    "mode",
    "eventq-sched",
    "event-eth-rxqs",
    "lookup",
    "event-vector",
    "event-vector-size",
    "event-vector-tmo",
    "rule_ipv4",
    "rule_ipv6",
    "alg",
];

/// `args` with every abbreviated long option written out. `all` are the
/// long options l3fwd-rs knows (C's among them); the argument after one of
/// `with_value` (`-p`, `--config`, ...) is its value, as getopt takes it,
/// and kept (`-p --rule_` is a bad port mask, not an ambiguous option). A
/// prefix of several options is an error naming them; an unknown name is
/// left for the parser to refuse.
pub fn expand(args: &[String], all: &[&str], with_value: &[String]) -> Result<Vec<String>, String> {
    let mut expanded = Vec::with_capacity(args.len());
    let mut is_value = false;
    for arg in args {
        let arg = if std::mem::take(&mut is_value) {
            arg.clone()
        } else {
            expand_one(arg, all)?
        };
        is_value = with_value.contains(&arg);
        expanded.push(arg);
    }
    Ok(expanded)
}

fn expand_one(arg: &str, all: &[&str]) -> Result<String, String> {
    let Some(body) = arg.strip_prefix("--").filter(|body| !body.is_empty()) else {
        return Ok(arg.to_owned());
    };
    let (name, value) = match body.split_once('=') {
        Some((name, value)) => (name, Some(value)),
        None => (body, None),
    };
    if all.contains(&name) {
        return Ok(arg.to_owned());
    }
    let in_c = with_prefix(&C_LONG_OPTIONS, name);
    let candidates = if in_c.is_empty() { with_prefix(all, name) } else { in_c };
    match candidates[..] {
        [] => Ok(arg.to_owned()),
        [full] => Ok(match value {
            Some(value) => format!("--{full}={value}"),
            None => format!("--{full}"),
        }),
        _ => {
            let names: Vec<String> = candidates.iter().map(|n| format!("--{n}")).collect();
            Err(format!("option '--{name}' is ambiguous: {}", names.join(", ")))
        }
    }
}

fn with_prefix<'a>(names: &[&'a str], prefix: &str) -> Vec<&'a str> {
    names.iter().copied().filter(|name| name.starts_with(prefix)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: &[&str] = &[
        "config",
        "c-drain",
        "help",
        "hash-entry-num",
        "parse-ptype",
        "per-port-pool",
        "no-numa",
        "num-mbufs",
    ];

    fn one(arg: &str) -> Result<String, String> {
        expand_one(arg, ALL)
    }

    #[test]
    fn unique_prefixes_expand_keeping_the_value() {
        assert_eq!(one("--hash").unwrap(), "--hash-entry-num");
        assert_eq!(one("--par").unwrap(), "--parse-ptype");
        assert_eq!(one("--hash=16").unwrap(), "--hash-entry-num=16");
        assert_eq!(one("--num").unwrap(), "--num-mbufs");
    }

    #[test]
    fn prefixes_unique_in_c_stay_c_s() {
        // l3fwd-rs also has --help, --c-drain and --num-mbufs.
        assert_eq!(one("--h").unwrap(), "--hash-entry-num");
        assert_eq!(one("--c").unwrap(), "--config");
        assert_eq!(one("--n").unwrap(), "--no-numa");
    }

    #[test]
    fn exact_names_and_non_options_are_kept() {
        for arg in ["--config", "--c-drain", "-p", "0x3", "--", "--bogus", "(0,0,0)"] {
            assert_eq!(one(arg).unwrap(), arg);
        }
    }

    #[test]
    fn an_options_value_is_kept() {
        let args: Vec<String> = ["l3fwd-rs", "-p", "--p", "--conf", "--h", "--h"]
            .map(String::from)
            .to_vec();
        let with_value = ["-p", "--config"].map(String::from);
        let expanded = expand(&args, ALL, &with_value).unwrap();
        assert_eq!(
            expanded,
            ["l3fwd-rs", "-p", "--p", "--config", "--h", "--hash-entry-num"]
        );
    }

    #[test]
    fn ambiguous_prefixes_name_the_candidates() {
        assert_eq!(
            one("--p").unwrap_err(),
            "option '--p' is ambiguous: --parse-ptype, --per-port-pool"
        );
    }
}
