//! The rule files a run loads: the two given with `--rule_ipv4` and
//! `--rule_ipv6`, or the defaults built into the binary. The defaults are
//! `configs/*.cfg` compiled in (C l3fwd's own built-in tables), so a copied
//! or installed binary forwards with no source tree beside it.
//!
//! As in C l3fwd 22.11 (`read_config_files_lpm` / `_em`), the files are
//! used only when both are given: one alone is ignored, with a warning, and
//! both families take the defaults. The same argument list then forwards
//! alike in both programs.

use std::error::Error;
use std::net::{Ipv4Addr, Ipv6Addr};
use std::path::Path;

use ipnet::{Ipv4Net, Ipv6Net};
use lpm::rules::RouteFile;

use crate::cli::Args;
use crate::portmask::PortMask;

/// A default rule file compiled into the binary.
pub struct BuiltIn {
    /// Its name under `configs/`.
    pub name: &'static str,
    /// Its text.
    pub text: &'static str,
}

impl BuiltIn {
    /// How messages name it.
    pub fn origin(&self) -> String {
        format!("built-in {}", self.name)
    }
}

/// LPM defaults (IPv4, IPv6).
pub const LPM_DEFAULTS: [BuiltIn; 2] = [
    BuiltIn {
        name: "lpm_v4.cfg",
        text: include_str!("../configs/lpm_v4.cfg"),
    },
    BuiltIn {
        name: "lpm_v6.cfg",
        text: include_str!("../configs/lpm_v6.cfg"),
    },
];

/// Exact-match defaults (IPv4, IPv6).
pub const EM_DEFAULTS: [BuiltIn; 2] = [
    BuiltIn {
        name: "em_v4.cfg",
        text: include_str!("../configs/em_v4.cfg"),
    },
    BuiltIn {
        name: "em_v6.cfg",
        text: include_str!("../configs/em_v6.cfg"),
    },
];

/// The two files given, or `None` for the built-in defaults. One option
/// without the other is ignored as C ignores it, loudly.
fn given_files(args: &Args) -> Option<(&Path, &Path)> {
    match (&args.rule_ipv4, &args.rule_ipv6) {
        (Some(v4), Some(v6)) => Some((v4, v6)),
        (None, None) => None,
        (v4, _) => {
            let (given, missing) = if v4.is_some() {
                ("--rule_ipv4", "--rule_ipv6")
            } else {
                ("--rule_ipv6", "--rule_ipv4")
            };
            log::warn!(
                "{given} without {missing} is IGNORED, as C l3fwd 22.11 ignores it: \
                 the built-in rules are used for IPv4 and IPv6 (give both options to load your file)"
            );
            None
        }
    }
}

/// The LPM routes of this run.
pub fn lpm(args: &Args) -> Result<(RouteFile<Ipv4Net>, RouteFile<Ipv6Net>), Box<dyn Error>> {
    if let Some((v4, v6)) = given_files(args) {
        return Ok((lpm::rules::load_v4(v4)?, lpm::rules::load_v6(v6)?));
    }
    let [v4, v6] = &LPM_DEFAULTS;
    log_built_in(&LPM_DEFAULTS);
    let v4 = RouteFile {
        origin: v4.origin(),
        routes: lpm::rules::parse_v4(v4.text, &v4.origin())?,
    };
    let v6 = RouteFile {
        origin: v6.origin(),
        routes: lpm::rules::parse_v6(v6.text, &v6.origin())?,
    };
    Ok((v4, v6))
}

fn log_built_in(defaults: &[BuiltIn; 2]) {
    log::info!(
        "rules: {} and {} (no --rule_ipv4 / --rule_ipv6 pair given)",
        defaults[0].origin(),
        defaults[1].origin()
    );
}

/// The ACL rules of this run. ACL mode has no built-in rules: both files
/// are required, as C requires them.
pub fn acl(args: &Args) -> Result<(acl::RuleFile<Ipv4Net>, acl::RuleFile<Ipv6Net>), Box<dyn Error>> {
    match (&args.rule_ipv4, &args.rule_ipv6) {
        (Some(v4), Some(v6)) => Ok((acl::rules::load(v4)?, acl::rules::load(v6)?)),
        (v4, _) => {
            let missing = if v4.is_none() { "--rule_ipv4" } else { "--rule_ipv6" };
            Err(format!("ACL mode needs --rule_ipv4 and --rule_ipv6 (it has no built-in rules; C requires both too): {missing} missing").into())
        }
    }
}

/// Exact-match rules of one file, and the file's name for messages.
pub struct EmFile<A> {
    pub origin: String,
    pub rules: Vec<em::rules::Rule<A>>,
}

/// The exact-match rules of this run; rules C cannot load with `-p
/// portmask` are refused (see [`check_em_ports`]).
pub fn em(args: &Args) -> Result<(EmFile<Ipv4Addr>, EmFile<Ipv6Addr>), Box<dyn Error>> {
    let (v4, v6) = match given_files(args) {
        Some((v4, v6)) => (
            EmFile {
                origin: v4.display().to_string(),
                rules: em::rules::load_v4(v4)?,
            },
            EmFile {
                origin: v6.display().to_string(),
                rules: em::rules::load_v6(v6)?,
            },
        ),
        None => {
            let [v4, v6] = &EM_DEFAULTS;
            log_built_in(&EM_DEFAULTS);
            (
                EmFile {
                    origin: v4.origin(),
                    rules: em::rules::parse_v4(v4.text, &v4.origin())?,
                },
                EmFile {
                    origin: v6.origin(),
                    rules: em::rules::parse_v6(v6.text, &v6.origin())?,
                },
            )
        }
    };
    check_em_ports(&v4, args.portmask)?;
    check_em_ports(&v6, args.portmask)?;
    Ok((v4, v6))
}

/// C tests a rule's port against the mask with `1 << port`, undefined for
/// ports of 32 and more (x86 tests bit `port % 32`); when that bit is
/// enabled, C goes on to query the port and exits. Such a rule is refused
/// with its line rather than silently never matching.
pub fn check_em_ports<A>(file: &EmFile<A>, portmask: PortMask) -> Result<(), String> {
    match file
        .rules
        .iter()
        .find(|r| r.port >= 32 && portmask.contains(u16::from(r.port % 32)))
    {
        Some(rule) => Err(format!(
            "{}:{}: output port {} is 32 or more, which the 32-bit port mask cannot enable \
             (C l3fwd tests bit {} instead, which -p {portmask:#x} enables, and exits)",
            file.origin,
            rule.line,
            rule.port,
            rule.port % 32
        )),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(extra: &str) -> Args {
        let argv: Vec<String> = ["l3fwd-rs", "-p", "3"]
            .into_iter()
            .chain(extra.split_whitespace())
            .map(String::from)
            .collect();
        crate::cli::parse(&argv).unwrap()
    }

    #[test]
    fn built_in_defaults_are_the_files_in_configs() {
        for default in LPM_DEFAULTS.iter().chain(&EM_DEFAULTS) {
            let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("configs").join(default.name);
            assert_eq!(std::fs::read_to_string(path).unwrap(), default.text);
        }
        let (v4, v6) = lpm(&args("")).unwrap();
        assert_eq!((v4.routes.len(), v6.routes.len()), (16, 16));
        assert_eq!(v4.origin, "built-in lpm_v4.cfg");
        let (v4, v6) = em(&args("")).unwrap();
        assert_eq!((v4.rules.len(), v6.rules.len()), (16, 16));
    }

    #[test]
    fn one_rule_file_alone_is_ignored_as_in_c() {
        // The file does not exist: it is not even read.
        let (v4, _) = lpm(&args("--rule_ipv4 /nonexistent.cfg")).unwrap();
        assert_eq!(v4.origin, "built-in lpm_v4.cfg");
        let (_, v6) = em(&args("--rule_ipv6 /nonexistent.cfg")).unwrap();
        assert_eq!(v6.origin, "built-in em_v6.cfg");
        let error = lpm(&args("--rule_ipv4 /nonexistent.cfg --rule_ipv6 /x.cfg")).unwrap_err();
        assert!(error.to_string().contains("cannot read /nonexistent.cfg"), "{error}");
    }

    #[test]
    fn em_rule_to_port_32_or_more_is_refused_when_c_would_test_an_enabled_bit() {
        let file = |port| EmFile::<Ipv4Addr> {
            origin: "em.cfg".into(),
            rules: em::rules::parse_v4(
                format!("R1.1.1.1 2.2.2.2 1 2 6 0\nR1.1.1.2 2.2.2.2 1 2 6 {port}\n"),
                "em.cfg",
            )
            .unwrap(),
        };
        let mask = PortMask::from_bits(0x3);
        let error = check_em_ports(&file(33), mask).unwrap_err();
        assert!(error.starts_with("em.cfg:2: output port 33 is 32 or more"), "{error}");
        assert!(error.contains("tests bit 1 instead, which -p 0x3 enables"), "{error}");
        // Bit 34 % 32 = 2 is not enabled: C skips the rule, and so do we.
        assert!(check_em_ports(&file(34), mask).is_ok());
        assert!(check_em_ports(&file(31), mask).is_ok());
    }
}
