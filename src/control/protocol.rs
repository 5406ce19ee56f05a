//! The control protocol `l3fwd-ctl` speaks over the socket: one command
//! per line, one answer per command. An answer is one line, or (`trace`,
//! the lists) lines that begin with [`MORE`] before its last line, which
//! does not.

use std::net::IpAddr;
use std::str::FromStr;

use rulefile::quote;

use crate::dataplane::mode::{Listing, RuleChange};
use crate::dataplane::trace::MAX_TRACE;

/// One line of the control protocol (`l3fwd-ctl`'s commands).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// Re-reads the rule files given at start and swaps their tables in.
    Reload,
    /// The port the live tables give an address now.
    RouteGet(IpAddr),
    /// `route add/del`, `flow add/del`, `acl add/del`.
    Change(RuleChange),
    /// How the tables that change in place use their room.
    RouteStats,
    /// The next packets forwarded, one line each.
    Trace(u32),
    /// The live tables' entries, in rule-file form: a page of them.
    List(Listing, Page),
}

/// Which of a list's entries an answer shows: `limit` of them, after the
/// first `skip` (`--skip`: the next page of a list longer than an answer).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Page {
    pub skip: usize,
    pub limit: usize,
}

/// Entries a list shows without `--limit`, and at most: a longer answer
/// would outgrow what a client may leave unread.
pub const LIST_DEFAULT: usize = 100;
pub const LIST_MAX: usize = 10_000;

/// What begins each line of an answer before its last.
pub const MORE: char = ' ';

/// Packets `trace` shows without a count.
pub const TRACE_DEFAULT: u32 = 10;

/// The commands, for error messages.
pub const USAGE: &str =
    "reload | route get ADDRESS | route add PREFIX PORT | route del PREFIX | route stats | route list [PREFIX] [--limit N] [--skip N] | flow add RULE | flow del RULE | flow list [--limit N] [--skip N] | acl add RULE | acl del RULE | acl list [--limit N] [--skip N] | trace [PACKETS]";

impl FromStr for Command {
    type Err = String;

    fn from_str(line: &str) -> Result<Command, String> {
        let words: Vec<&str> = line.split_whitespace().collect();
        // Prefixes and ports read as the route files read them.
        let prefix = |p: &str| {
            lpm::rules::prefix_of(p).map_err(|e| {
                format!("bad prefix: {e}; expected ADDRESS/LENGTH, such as 198.18.0.0/16 or 2001:db8::/32")
            })
        };
        Ok(match words[..] {
            ["reload"] => Command::Reload,
            ["route", "get", a] => Command::RouteGet(a.parse().map_err(|_| format!("bad address '{}'", quote(a)))?),
            ["route", "add", p, port] => {
                let port = lpm::rules::port_of(port).map_err(|e| format!("bad port: {e}"))?;
                Command::Change(RuleChange::AddRoute(prefix(p)?, port.into()))
            }
            ["route", "del", p] => Command::Change(RuleChange::DelRoute(prefix(p)?)),
            ["route", "stats"] => Command::RouteStats,
            ["route", "list", ref rest @ ..] => match rest {
                [p, ref limit @ ..] if !p.starts_with('-') => list(Listing::Routes(Some(prefix(p)?)), limit)?,
                limit => list(Listing::Routes(None), limit)?,
            },
            ["flow", "list", ref limit @ ..] => list(Listing::Flows, limit)?,
            ["acl", "list", ref limit @ ..] => list(Listing::AclRules, limit)?,
            ["trace"] => Command::Trace(TRACE_DEFAULT),
            ["trace", n] => Command::Trace(match n.parse() {
                Ok(n @ 1..=MAX_TRACE) => n,
                _ => return Err(format!("bad packet count '{}': 1 to {MAX_TRACE}", quote(n))),
            }),
            // An EM rule-file line: `R<dst> <src> <dport> <sport> <proto> <port>`.
            ["flow", "add", ref rule @ ..] if !rule.is_empty() => Command::Change(RuleChange::AddFlow(rule.join(" "))),
            ["flow", "del", ref rule @ ..] if !rule.is_empty() => Command::Change(RuleChange::DelFlow(rule.join(" "))),
            // An ACL rule-file line: `@...` denies, `R... PORT` routes.
            ["acl", "add", ref rule @ ..] if !rule.is_empty() => Command::Change(RuleChange::AddAcl(rule.join(" "))),
            ["acl", "del", ref rule @ ..] if !rule.is_empty() => Command::Change(RuleChange::DelAcl(rule.join(" "))),
            _ => return Err(format!("unknown command '{}'; commands: {USAGE}", quote(line))),
        })
    }
}

/// A `list` command with its `--limit N` and `--skip N` words, if any.
fn list(what: Listing, options: &[&str]) -> Result<Command, String> {
    let mut page = Page {
        skip: 0,
        limit: LIST_DEFAULT,
    };
    let (mut limit_given, mut skip_given) = (false, false);
    for pair in options.chunks(2) {
        match pair {
            ["--limit", n] if !limit_given => {
                limit_given = true;
                page.limit = match n.parse() {
                    Ok(n @ 1..=LIST_MAX) => n,
                    _ => return Err(format!("bad --limit '{}': 1 to {LIST_MAX}", quote(n))),
                };
            }
            ["--skip", n] if !skip_given => {
                skip_given = true;
                page.skip = n
                    .parse()
                    .map_err(|_| format!("bad --skip '{}': a count of entries", quote(n)))?;
            }
            _ => {
                return Err(format!(
                    "unknown list options '{}'; expected --limit N, --skip N",
                    quote(&options.join(" "))
                ))
            }
        }
    }
    Ok(Command::List(what, page))
}

/// One answer per command: a line to send back (`ok`, a port, `miss`),
/// or the error line.
pub type Answer = Result<String, String>;

/// One line of the protocol, as the socket reads it: UTF-8, then a
/// [`Command`].
pub fn parse_line(line: &[u8]) -> Result<Command, String> {
    std::str::from_utf8(line).map_err(|_| "not UTF-8".to_string())?.parse()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(skip: usize, limit: usize) -> Page {
        Page { skip, limit }
    }

    #[test]
    fn commands_parse_and_bad_lines_say_why() {
        assert_eq!("reload".parse(), Ok(Command::Reload));
        assert_eq!(
            " route  add 10.0.0.0/8 1 ".parse(),
            Ok(Command::Change(RuleChange::AddRoute("10.0.0.0/8".parse().unwrap(), 1)))
        );
        assert_eq!(
            "route del 2001:db8::/32".parse(),
            Ok(Command::Change(RuleChange::DelRoute("2001:db8::/32".parse().unwrap())))
        );
        assert_eq!("route get ::1".parse(), Ok(Command::RouteGet("::1".parse().unwrap())));
        assert_eq!("trace".parse(), Ok(Command::Trace(TRACE_DEFAULT)));
        assert_eq!("trace 1024".parse(), Ok(Command::Trace(1024)));
        assert_eq!(
            "route list 10.0.0.0/8 --limit 5".parse(),
            Ok(Command::List(
                Listing::Routes(Some("10.0.0.0/8".parse().unwrap())),
                page(0, 5)
            ))
        );
        assert_eq!(
            "route list".parse(),
            Ok(Command::List(Listing::Routes(None), page(0, LIST_DEFAULT)))
        );
        assert_eq!(
            "flow list --limit 10000".parse(),
            Ok(Command::List(Listing::Flows, page(0, 10_000)))
        );
        assert_eq!(
            "acl list".parse(),
            Ok(Command::List(Listing::AclRules, page(0, LIST_DEFAULT)))
        );
        assert_eq!(
            "route list --skip 20000 --limit 10000".parse(),
            Ok(Command::List(Listing::Routes(None), page(20_000, 10_000)))
        );
        assert_eq!(
            "flow list --skip 3".parse(),
            Ok(Command::List(Listing::Flows, page(3, LIST_DEFAULT)))
        );
        assert_eq!(
            "flow add R198.18.0.0  198.18.0.1 9 9 0x11 1".parse(),
            Ok(Command::Change(RuleChange::AddFlow(
                "R198.18.0.0 198.18.0.1 9 9 0x11 1".into()
            )))
        );
        assert_eq!(
            "acl add @1.2.3.4/32  0.0.0.0/0 0 : 65535 0 : 65535 0/0".parse(),
            Ok(Command::Change(RuleChange::AddAcl(
                "@1.2.3.4/32 0.0.0.0/0 0 : 65535 0 : 65535 0/0".into()
            )))
        );
        for (line, why) in [
            ("acl del", "unknown command"),
            ("route add 10.0.0.0/33 1", "bad prefix"),
            ("route add 10.0.0.0/8 65536", "bad port"),
            ("route add 010.0.0.0/8 1", "bad prefix"),
            ("route add 10.0.0.0/08 1", "bad prefix"),
            ("flow del", "unknown command"),
            ("route get 10.0.0", "bad address"),
            ("route add 10.0.0.0/8", "unknown command"),
            ("trace 0", "bad packet count"),
            ("route list --limit 0", "bad --limit"),
            ("flow list --limit 10001", "bad --limit"),
            ("acl list 5", "unknown list options"),
            ("acl list --skip -1", "bad --skip"),
            ("flow list --skip 1 --skip 2", "unknown list options"),
            ("flow list --limit 1 --limit 2", "unknown list options"),
            ("route list --skip", "unknown list options"),
            ("route list 10.0.0.0/33", "bad prefix"),
            ("trace 1025", "bad packet count"),
            ("trace 5 5", "unknown command"),
            ("", "unknown command"),
        ] {
            let e = line.parse::<Command>().unwrap_err();
            assert!(e.contains(why), "{line}: {e}");
        }
    }
}
