//! What l3fwd-rs knows of each lookup mode without building it: its names
//! on the command line, its help and its rule-file format. The command
//! line, the tests and the bench read the modes from here, so none of them
//! depends on the modes' code (or on DPDK); each mode's `Mode::INFO` in
//! l3fwd-rs is its entry here.

/// What the rest of the program knows of a mode without building it.
#[derive(Debug, PartialEq, Eq)]
pub struct ModeInfo {
    /// `--lookup=NAME`, and the mode's name in the bench's configurations
    /// and reports.
    pub name: &'static str,
    /// C's legacy one-letter option for it (`-E`, `-L`), if any.
    pub flag: Option<char>,
    /// One line for `--help`.
    pub about: &'static str,
    /// The format of its `--rule_ipv4` / `--rule_ipv6` files.
    pub rules: RuleFormat,
}

/// The rule-file formats the modes read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuleFormat {
    /// `R<prefix>/<depth> <port>` routes (LPM's and FIB's); built-in
    /// defaults.
    Routes,
    /// `R<dst> <src> <dport> <sport> <proto> <port>` flows (exact match);
    /// built-in defaults.
    Flows,
    /// ClassBench rules, `@` deny and `R` route lines (ACL); no defaults.
    Acl,
}

/// `--lookup=lpm` (`-L`), the default.
pub const LPM: ModeInfo = ModeInfo {
    name: "lpm",
    flag: Some('L'),
    about: "longest prefix match (rte_lpm / rte_lpm6), the default",
    rules: RuleFormat::Routes,
};

/// `--lookup=em` (`-E`).
pub const EM: ModeInfo = ModeInfo {
    name: "em",
    flag: Some('E'),
    about: "exact match on the 5-tuple (rte_hash)",
    rules: RuleFormat::Flows,
};

/// `--lookup=fib`.
pub const FIB: ModeInfo = ModeInfo {
    name: "fib",
    flag: None,
    about: "longest prefix match in a forwarding information base (rte_fib / rte_fib6), \
            from the LPM route files",
    rules: RuleFormat::Routes,
};

/// `--lookup=acl`.
pub const ACL: ModeInfo = ModeInfo {
    name: "acl",
    flag: None,
    about: "access control list (rte_acl): deny and route rules on the 5-tuple",
    rules: RuleFormat::Acl,
};

/// Every mode, in the order `--help` and the bench list them; the first is
/// the default. l3fwd-rs's `modes!` runs each (a test holds the two lists equal).
pub const MODES: [&ModeInfo; 4] = [&LPM, &EM, &FIB, &ACL];

/// The default mode: LPM, as in C.
pub fn default_mode() -> &'static ModeInfo {
    MODES[0]
}

/// The mode `--lookup=name` selects.
pub fn by_name(name: &str) -> Option<&'static ModeInfo> {
    MODES.iter().copied().find(|m| m.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_flags_are_unique() {
        for (i, a) in MODES.iter().enumerate() {
            for b in &MODES[i + 1..] {
                assert_ne!(a.name, b.name);
                assert!(a.flag.is_none() || a.flag != b.flag, "{} and {}", a.name, b.name);
            }
        }
        assert_eq!(default_mode().name, "lpm");
        assert_eq!(by_name("acl").map(|m| m.rules), Some(RuleFormat::Acl));
        assert_eq!(by_name("hash"), None);
    }
}
