//! The lookup modes the bench runs: l3fwd-rs's own list
//! (`l3fwd_modes::MODES`), so that a new mode needs no bench change to be
//! selectable, swept and counted. The rest of the bench takes the modes'
//! types from here: this is the one file that names the crate they are in.

pub use l3fwd_modes::RuleFormat;
use l3fwd_modes::{self as mode, ModeInfo, MODES};
use std::cmp::Ordering;

/// One of l3fwd-rs's lookup modes, ordered as [`MODES`].
#[derive(Clone, Copy, Debug)]
pub struct Mode(&'static ModeInfo);

impl Mode {
    /// The default mode (LPM), first in [`MODES`].
    pub fn default_mode() -> Mode {
        Mode(mode::default_mode())
    }

    /// Every mode, in [`MODES`] order.
    pub fn all() -> impl Iterator<Item = Mode> {
        MODES.iter().map(|&m| Mode(m))
    }

    /// `--lookup=NAME`, and the mode's part of configuration ids (`rs-fib`).
    pub fn id(self) -> &'static str {
        self.0.name
    }

    /// As labels write it: `LPM`, `FIB`.
    pub fn label(self) -> String {
        self.0.name.to_ascii_uppercase()
    }

    /// The format of its rule files, which says what tables it runs on.
    pub fn rules(self) -> RuleFormat {
        self.0.rules
    }

    /// Which tables and traffic it runs on (l3fwd-tablegen's mode, the
    /// rule files' prefix): route modes on the LPM tables, ACL on rules
    /// made from them, exact match on its own.
    pub fn tables(self) -> &'static str {
        match self.rules() {
            RuleFormat::Routes | RuleFormat::Acl => "lpm",
            RuleFormat::Flows => "em",
        }
    }

    pub fn parse(s: &str) -> Result<Mode, String> {
        let name = s.trim().to_ascii_lowercase();
        mode::by_name(&name).map(Mode).ok_or_else(|| {
            let names: Vec<&str> = MODES.iter().map(|m| m.name).collect();
            format!("unknown mode '{name}': use {}", names.join(", "))
        })
    }

    fn rank(self) -> usize {
        MODES.iter().position(|&m| m == self.0).unwrap_or(MODES.len())
    }
}

impl PartialEq for Mode {
    fn eq(&self, other: &Mode) -> bool {
        self.0 == other.0
    }
}

impl Eq for Mode {}

impl Ord for Mode {
    fn cmp(&self, other: &Mode) -> Ordering {
        self.rank().cmp(&other.rank())
    }
}

impl PartialOrd for Mode {
    fn partial_cmp(&self, other: &Mode) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

#[cfg(test)]
pub mod tests {
    use super::*;

    pub fn mode(name: &str) -> Mode {
        Mode::parse(name).unwrap()
    }

    #[test]
    fn modes_come_from_the_application() {
        assert_eq!(Mode::parse("EM").map(Mode::id), Ok("em"));
        assert_eq!(mode("fib").rules(), RuleFormat::Routes);
        assert!(Mode::parse("vpp").unwrap_err().contains("use lpm, em, fib, acl"));
        assert!(
            mode("lpm") < mode("em") && mode("fib") < mode("acl"),
            "the order of MODES"
        );
        assert_eq!(Mode::default_mode(), mode("lpm"));
        assert_eq!(Mode::all().count(), MODES.len());
        assert_eq!(
            (mode("fib").tables(), mode("acl").tables(), mode("em").tables()),
            ("lpm", "lpm", "em")
        );
        assert_eq!(mode("acl").label(), "ACL");
    }
}
