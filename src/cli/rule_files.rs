//! The rule files a run loads: the two given with `--rule_ipv4` and
//! `--rule_ipv6`, or the defaults built into the binary. The defaults are
//! `configs/*.cfg` compiled in (C l3fwd's own built-in tables), so a copied
//! or installed binary forwards with no source tree beside it.
//!
//! As in C l3fwd 22.11 (`read_config_files_lpm` / `_em`), the files are
//! used only when both are given: one alone is ignored, with a warning, and
//! both families take the defaults. The same argument list then forwards
//! alike in both programs.

use std::path::Path;

use crate::cli::mode_args::RuleFiles;

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

/// The two files given, or `None` for the built-in defaults. One option
/// without the other is ignored as C ignores it, loudly.
fn given_files(files: &RuleFiles) -> Option<(&Path, &Path)> {
    match (&files.ipv4, &files.ipv6) {
        (Some(v4), Some(v6)) => Some((v4, v6)),
        (None, None) => None,
        (v4, _) => {
            let (given, missing) = if v4.is_some() {
                ("--rule_ipv4", "--rule_ipv6")
            } else {
                ("--rule_ipv6", "--rule_ipv4")
            };
            log::warn!(
                "{given} without {missing} is IGNORED, as C l3fwd ignores it: \
                 the built-in rules are used for IPv4 and IPv6 (give both options to load your file)"
            );
            None
        }
    }
}

/// Where one family's rules come from.
pub enum Source<'a> {
    File(&'a Path),
    BuiltIn(&'static BuiltIn),
}

impl Source<'_> {
    /// The rules, read from the file with `load` or parsed from the
    /// built-in text with `parse` (given the text and its origin).
    pub fn read<T, E>(
        &self,
        load: impl FnOnce(&Path) -> Result<T, E>,
        parse: impl FnOnce(&'static str, &str) -> Result<T, E>,
    ) -> Result<T, E> {
        match self {
            Source::File(path) => load(path),
            Source::BuiltIn(b) => parse(b.text, &b.origin()),
        }
    }
}

/// The IPv4 and IPv6 rule sources of this run: the two files given, or
/// both `defaults`.
pub fn sources<'a>(files: &'a RuleFiles, defaults: &'static [BuiltIn; 2]) -> [Source<'a>; 2] {
    match given_files(files) {
        Some((v4, v6)) => [Source::File(v4), Source::File(v6)],
        None => {
            log::info!(
                "rules: {} and {} (no --rule_ipv4 / --rule_ipv6 pair given)",
                defaults[0].origin(),
                defaults[1].origin()
            );
            [Source::BuiltIn(&defaults[0]), Source::BuiltIn(&defaults[1])]
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use crate::cli::Args;

    /// `l3fwd-rs -p 3` and `extra`, parsed.
    pub(crate) fn args(extra: &str) -> Args {
        let argv: Vec<String> = ["l3fwd-rs", "-p", "3"]
            .into_iter()
            .chain(extra.split_whitespace())
            .map(String::from)
            .collect();
        crate::cli::parse(&argv).unwrap()
    }
}
