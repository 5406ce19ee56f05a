//! The forwarding tables of LPM mode: rte_lpm for IPv4 (its tables computed
//! in one go, see [`crate::dir24`]), rte_lpm6 for IPv6, sized for their
//! routes (see [`crate::sizing`]) and loaded from them, with the routes to
//! disabled ports left out.

use std::fmt;
use std::sync::Arc;
use std::time::Instant;

use dpdk::DpdkError;
use ipnet::{Ipv4Net, Ipv6Net};

use crate::dir24;
use crate::in_place::LiveRoutes;
use crate::in_place6::LiveRoutes6;
use crate::rules::{Route, RouteFile};
use crate::sizing::{self, Family, Limits, Shortage, Size};

/// IPv4 and IPv6 route tables, read-only once built (but for the
/// [`LiveRoutes`] and [`LiveRoutes6`] writers that
/// [`LpmTables::build_live`] hands back).
pub struct LpmTables {
    v4: dpdk::LpmReader,
    v6: dpdk::Lpm6Reader,
}

/// The writers of tables changed in place, one per family.
pub struct LiveWriters {
    /// IPv4's.
    pub v4: LiveRoutes,
    /// IPv6's.
    pub v6: LiveRoutes6,
}

/// Room a table changed in place keeps for additions, beside its routes'
/// rules and groups, unless `--lpm-max-rules` / `--lpm-tbl8s` give the
/// sizes: 64K rules and 1024 tbl8 groups (1 KB each).
pub const HEADROOM: Size = Size {
    rules: 1 << 16,
    tbl8s: 1 << 10,
};

/// How many rules went into the tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoadReport {
    /// IPv4 routes added.
    pub v4_added: usize,
    /// IPv6 routes added.
    pub v6_added: usize,
    /// Routes skipped because their port is not enabled.
    pub skipped: usize,
}

/// A table could not be built.
#[derive(Debug)]
pub enum LpmError {
    /// A route needs more rules or tbl8 groups than the table has.
    Full {
        /// The rule file (its path, usually).
        origin: String,
        /// 1-based line of the first route that does not fit.
        line: usize,
        /// `"LPM"` or `"FIB"`.
        kind: &'static str,
        /// `"IPv4"` or `"IPv6"`.
        family: &'static str,
        /// What the table lacks, and whether an option can raise it.
        shortage: Shortage,
    },
    /// rte_lpm_create / rte_lpm6_create / rte_fib_create / rte_fib6_create
    /// failed (out of memory, usually).
    Create {
        /// `"LPM"` or `"FIB"`.
        kind: &'static str,
        /// `"IPv4"` or `"IPv6"`.
        family: &'static str,
        /// DPDK's error, with the size asked for (a FIB asks for more
        /// than the routes need: see `fib_size`).
        source: DpdkError,
    },
    /// rte_lpm6_add refused a route.
    Add {
        /// The rule file (its path, usually).
        origin: String,
        /// 1-based line of the route.
        line: usize,
        /// DPDK's error.
        source: DpdkError,
    },
    /// A route of depth 0, which rte_lpm and rte_lpm6 refuse (rte_fib
    /// takes it).
    DefaultRoute {
        /// The rule file (its path, usually).
        origin: String,
        /// 1-based line of the route.
        line: usize,
        /// The DPDK library that refuses it: rte_lpm or rte_lpm6.
        library: &'static str,
    },
}

impl fmt::Display for LpmError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Full {
                origin,
                line,
                kind,
                family,
                shortage,
            } => {
                write!(f, "{}{family} {kind} table full: ", at(origin, *line))?;
                match shortage {
                    Shortage::Rules { limit } => write!(f, "more than {limit} rules (raise --lpm-max-rules)"),
                    Shortage::Tbl8s {
                        limit,
                        library_max: false,
                    } => write!(f, "more than {limit} tbl8 groups (raise --lpm-tbl8s)"),
                    Shortage::Tbl8s {
                        limit,
                        library_max: true,
                    } => write!(f, "more than {limit} tbl8 groups, the library's maximum"),
                }
            }
            Self::Create { kind, family, source } => write!(f, "{family} {kind} table: {source}"),
            Self::Add { origin, line, source } => write!(f, "{}{source}", at(origin, *line)),
            Self::DefaultRoute { origin, line, library } => write!(
                f,
                "{}{library} takes no depth 0 (split a default route into two /1 routes)",
                at(origin, *line)
            ),
        }
    }
}

/// `origin:line: ` before an error about a route of a file; nothing for
/// one added through l3fwd-ctl (line 0), whose command the answer follows.
fn at(origin: &str, line: usize) -> String {
    match line {
        0 => String::new(),
        _ => format!("{origin}:{line}: "),
    }
}

impl std::error::Error for LpmError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Full { .. } | Self::DefaultRoute { .. } => None,
            Self::Create { source, .. } | Self::Add { source, .. } => Some(source),
        }
    }
}

impl LpmTables {
    /// Builds the tables on `socket` from `v4` and `v6`, adding only the
    /// routes whose port `enabled` accepts (so a less specific route to an
    /// enabled port may match instead, as in the C sample). Each table is
    /// sized for its routes unless `limits` says otherwise. `name` prefixes
    /// the DPDK tables' names (`{name}_v4`, `{name}_v6`), which must be
    /// unique in the process.
    ///
    /// ```
    /// let eal = dpdk::Eal::for_tests(&[])?;
    /// use lpm::rules::{parse_v4, parse_v6, RouteFile};
    ///
    /// let v4_text = "R198.18.0.0/16 1\nR198.18.7.128/25 2\nR198.18.9.0/24 5\n";
    /// let v4 = RouteFile { origin: "v4.cfg".into(), routes: parse_v4(v4_text, "v4.cfg")? };
    /// let v6 = RouteFile { origin: "v6.cfg".into(), routes: parse_v6("R2001:db8::/32 3\n", "v6.cfg")? };
    /// // Ports 0-3 are enabled: the route to port 5 is left out.
    /// let (tables, report) = lpm::LpmTables::build(eal, "doc", 0, &v4, &v6, lpm::Limits::default(), |port| port < 4)?;
    /// assert_eq!((report.v4_added, report.v6_added, report.skipped), (2, 1, 1));
    ///
    /// // The longest prefix wins; 198.18.9.0/24 was skipped, so its
    /// // addresses match the /16; None is a miss.
    /// let dsts = [[198, 18, 7, 200], [198, 18, 7, 1], [198, 18, 9, 1], [10, 0, 0, 1]].map(u32::from_be_bytes);
    /// let ports = dsts.map(|dst| tables.lookup_v4(dst));
    /// assert_eq!(ports, [Some(2), Some(1), Some(1), None]);
    ///
    /// let host: std::net::Ipv6Addr = "2001:db8::1".parse()?;
    /// assert_eq!(tables.lookup_v6(&host.octets()), Some(3));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn build(
        eal: &dpdk::Eal,
        name: &str,
        socket: i32,
        v4: &RouteFile<Ipv4Net>,
        v6: &RouteFile<Ipv6Net>,
        limits: Limits,
        enabled: impl Fn(u8) -> bool,
    ) -> Result<(LpmTables, LoadReport), LpmError> {
        let make_v4 = |eal: &dpdk::Eal, name: &str, size: Size, routes: &[&Route<Ipv4Net>]| {
            Ipv4Net::load(eal, name, socket, size, routes).map(|t| (t.into(), ()))
        };
        let make_v6 = |eal: &dpdk::Eal, name: &str, size, routes: &[&Route<Ipv6Net>]| {
            Ok((Ipv6Net::load(eal, name, socket, size, routes)?.into(), ()))
        };
        let (tables, ((), ()), report) = Self::build_with(eal, name, (v4, v6), limits, enabled, make_v4, make_v6)?;
        Ok((tables, report))
    }

    /// As [`LpmTables::build`], with [`HEADROOM`] in both tables, whose
    /// unlinked tbl8 groups wait for grace periods of the readers' `qsbr`,
    /// and their writers, to change them in place.
    #[allow(clippy::too_many_arguments)]
    pub fn build_live(
        eal: &dpdk::Eal,
        name: &str,
        socket: i32,
        v4: &RouteFile<Ipv4Net>,
        v6: &RouteFile<Ipv6Net>,
        limits: Limits,
        enabled: impl Fn(u8) -> bool,
        qsbr: &Arc<dpdk::Qsbr>,
    ) -> Result<(LpmTables, LiveWriters, LoadReport), LpmError> {
        // What the options do not give has room for additions.
        let room = |size: Size| Size {
            rules: limits.max_rules.map_or(size.rules + HEADROOM.rules, |_| size.rules),
            tbl8s: limits.tbl8s.map_or(size.tbl8s + HEADROOM.tbl8s, |_| size.tbl8s),
        };
        let make_v4 = |eal: &dpdk::Eal, name: &str, size: Size, routes: &[&Route<Ipv4Net>]| {
            let Size { rules, tbl8s } = room(size);
            let fill = |tbl24: &mut dpdk::Tbl24<'_>, tbl8: &mut [u32]| dir24::fill(routes, tbl24, tbl8);
            let table = dpdk::LiveLpm::filled(eal, name, socket, tbl8s, qsbr, fill).map_err(|e| (None, e))?;
            log::info!("LPM: IPv4: changed in place, with room for {rules} rules and {tbl8s} tbl8 groups");
            let routes = LiveRoutes::new(table, routes, rules);
            Ok((routes.reader(), routes))
        };
        let make_v6 = |eal: &dpdk::Eal, name: &str, size: Size, routes: &[&Route<Ipv6Net>]| {
            let Size { rules, tbl8s } = room(size);
            let table = dpdk::LiveLpm6::new(eal, name, socket, tbl8s, qsbr).map_err(|e| (None, e))?;
            let mut live = LiveRoutes6::new(table, rules);
            for r in routes {
                // The table was sized for these routes.
                live.add(r.prefix, r.port.into()).map_err(|refused| {
                    let what = format!("cannot add IPv6 route {}: {refused:?}", r.prefix);
                    (Some(r.line), dpdk::DpdkError::table_full(what))
                })?;
            }
            log::info!("LPM: IPv6: changed in place, with room for {rules} rules and {tbl8s} tbl8 groups");
            Ok((live.table().reader(), live))
        };
        let (tables, (v4, v6), report) = Self::build_with(eal, name, (v4, v6), limits, enabled, make_v4, make_v6)?;
        Ok((tables, LiveWriters { v4, v6 }, report))
    }

    /// Both tables, each (and its writer, if any) made by its family's
    /// `make`, from `name`, the table's own name and the routes it holds.
    #[allow(clippy::type_complexity)]
    fn build_with<W4, W6>(
        eal: &dpdk::Eal,
        name: &str,
        files: (&RouteFile<Ipv4Net>, &RouteFile<Ipv6Net>),
        limits: Limits,
        enabled: impl Fn(u8) -> bool,
        make_v4: impl FnOnce(&dpdk::Eal, &str, Size, &[&Route<Ipv4Net>]) -> Loaded<(dpdk::LpmReader, W4)>,
        make_v6: impl FnOnce(&dpdk::Eal, &str, Size, &[&Route<Ipv6Net>]) -> Loaded<(dpdk::Lpm6Reader, W6)>,
    ) -> Result<(LpmTables, (W4, W6), LoadReport), LpmError> {
        let (v4_name, v6_name) = (format!("{name}_v4"), format!("{name}_v6"));
        let (((v4, w4), (v6, w6)), report) = load_both(
            "LPM",
            files,
            limits,
            enabled,
            |size, routes| make_v4(eal, &v4_name, size, routes),
            |size, routes| make_v6(eal, &v6_name, size, routes),
        )?;
        Ok((LpmTables { v4, v6 }, (w4, w6), report))
    }

    /// Output ports of IPv6 destinations, looked up in bulk: `each` gets
    /// the index of each destination and its port, or None when no route
    /// matches.
    #[inline(always)]
    pub fn lookup_v6_bulk(&self, dsts: &[[u8; 16]], mut each: impl FnMut(usize, Option<u16>)) {
        self.v6.lookup_bulk(dsts, |i, hop| each(i, hop.map(port_of)));
    }

    /// Output port of one IPv4 destination (host order): rte_lpm's lookup
    /// inlined, the fast path for IPv4 (see [`dpdk::LpmTable::lookup`]).
    #[inline(always)]
    pub fn lookup_v4(&self, dst: u32) -> Option<u16> {
        self.v4.lookup(dst).map(port_of)
    }

    /// [`LpmTables::lookup_v4`] of each of `dsts`, eight at a time with the
    /// vector path `simd` names: each port found, or `miss`, into `out` (as many as the
    /// shorter of the two has).
    #[inline(always)]
    pub fn lookup_v4_simd(&self, simd: dpdk::Simd, dsts: &[u32], miss: u16, out: &mut [u16]) {
        self.v4.lookup_simd(simd, dsts, miss, out)
    }

    /// Output port of one IPv6 destination.
    #[inline(always)]
    pub fn lookup_v6(&self, dst: &[u8; 16]) -> Option<u16> {
        self.v6.lookup(dst).map(port_of)
    }
}

/// The port a next hop names: the LPM and FIB tables hold routes' ports
/// (`u8`) only, as `u32` or `u64` next hops.
#[inline(always)]
pub(crate) fn port_of(hop: impl Into<u64>) -> u16 {
    hop.into() as u16
}

/// A loaded table, or why not: DPDK's error and the line of the route it
/// refused, if it was one.
pub(crate) type Loaded<T> = Result<T, (Option<usize>, DpdkError)>;

/// A family's DPDK table.
pub(crate) trait Library: Family + Sized {
    const FAMILY: &'static str;
    /// The DPDK library holding the family's routes, for messages.
    const LIBRARY: &'static str;
    type Table;
    /// The table of `size` holding `routes`.
    fn load(eal: &dpdk::Eal, name: &str, socket: i32, size: Size, routes: &[&Route<Self>]) -> Loaded<Self::Table>;
}

impl Library for Ipv4Net {
    const FAMILY: &'static str = "IPv4";
    const LIBRARY: &'static str = "rte_lpm";
    type Table = dpdk::FrozenLpm;

    fn load(eal: &dpdk::Eal, name: &str, socket: i32, size: Size, routes: &[&Route<Self>]) -> Loaded<dpdk::FrozenLpm> {
        let fill = |tbl24: &mut dpdk::Tbl24<'_>, tbl8: &mut [u32]| dir24::fill(routes, tbl24, tbl8);
        dpdk::Lpm::filled(eal, name, socket, size.tbl8s, fill).map_err(|e| (None, e))
    }
}

impl Library for Ipv6Net {
    const FAMILY: &'static str = "IPv6";
    const LIBRARY: &'static str = "rte_lpm6";
    type Table = dpdk::Lpm6;

    fn load(eal: &dpdk::Eal, name: &str, socket: i32, size: Size, routes: &[&Route<Self>]) -> Loaded<dpdk::Lpm6> {
        let mut table = dpdk::Lpm6::new(eal, name, socket, size.rules, size.tbl8s).map_err(|e| (None, e))?;
        for r in routes {
            let (addr, depth) = (r.prefix.addr().octets(), r.prefix.prefix_len());
            table.add(&addr, depth, r.port.into()).map_err(|e| (Some(r.line), e))?;
        }
        Ok(table)
    }
}

/// Both families' `kind` tables (`"LPM"`, `"FIB"`) from `files` (IPv4,
/// IPv6), each made by its `make` as [`load`] describes, and how many
/// routes went in.
pub(crate) fn load_both<T4, T6>(
    kind: &'static str,
    files: (&RouteFile<Ipv4Net>, &RouteFile<Ipv6Net>),
    limits: Limits,
    enabled: impl Fn(u8) -> bool,
    make_v4: impl FnOnce(Size, &[&Route<Ipv4Net>]) -> Loaded<T4>,
    make_v6: impl FnOnce(Size, &[&Route<Ipv6Net>]) -> Loaded<T6>,
) -> Result<((T4, T6), LoadReport), LpmError> {
    let (v4, v6) = files;
    let (v4_table, v4_added) = load(kind, v4, limits, &enabled, make_v4)?;
    let (v6_table, v6_added) = load(kind, v6, limits, &enabled, make_v6)?;
    let report = LoadReport {
        v4_added,
        v6_added,
        skipped: v4.routes.len() + v6.routes.len() - v4_added - v6_added,
    };
    Ok(((v4_table, v6_table), report))
}

/// One family's `kind` table (`"LPM"`, `"FIB"`), made by `make` for the
/// routes of `file` to enabled ports and the size they need; also returns
/// how many routes it holds.
pub(crate) fn load<N: Library, T>(
    kind: &'static str,
    file: &RouteFile<N>,
    limits: Limits,
    enabled: &impl Fn(u8) -> bool,
    make: impl FnOnce(Size, &[&Route<N>]) -> Loaded<T>,
) -> Result<(T, usize), LpmError> {
    let start = Instant::now();
    let family = N::FAMILY;
    let at = |line| (file.origin.clone(), line);
    let routes: Vec<&Route<N>> = file.routes.iter().filter(|r| enabled(r.port)).collect();
    // rte_lpm and rte_lpm6 refuse depth 0 (and so does C's LPM mode);
    // rte_fib and rte_fib6 take it (as C's FIB mode does).
    let default_route = routes.iter().find(|r| r.prefix.depth() == 0);
    if let (Some(r), "LPM") = (default_route, kind) {
        let (origin, line) = at(r.line);
        return Err(LpmError::DefaultRoute {
            origin,
            line,
            library: N::LIBRARY,
        });
    }
    let size = sizing::size(&routes, limits).map_err(|(line, shortage)| {
        let (origin, line) = at(line);
        LpmError::Full {
            origin,
            line,
            kind,
            family,
            shortage,
        }
    })?;
    let table = make(size, &routes).map_err(|(line, source)| match line {
        Some(line) => {
            let (origin, line) = at(line);
            LpmError::Add { origin, line, source }
        }
        None => LpmError::Create { kind, family, source },
    })?;
    log::info!(
        "{kind}: {family}: {} routes in a table of {} rules and {} tbl8 groups, built in {:.1?}",
        routes.len(),
        size.rules,
        size.tbl8s,
        start.elapsed()
    );
    Ok((table, routes.len()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;
    use std::net::{Ipv4Addr, Ipv6Addr};
    use std::sync::atomic::{AtomicU32, Ordering};

    fn eal() -> &'static dpdk::Eal {
        dpdk::Eal::for_tests(&[]).expect("EAL init")
    }

    /// Table names are unique in a process.
    fn name() -> String {
        static TABLES: AtomicU32 = AtomicU32::new(0);
        format!("t{}", TABLES.fetch_add(1, Ordering::Relaxed))
    }

    const SEED: u64 = 7;

    /// Random IPv4 routes of every depth crowded into 10.0.0.0/14, so that
    /// they nest, share /24s and repeat prefixes with other ports.
    fn v4_routes(n: usize) -> Vec<Route<Ipv4Net>> {
        let mut rng = ChaCha8Rng::seed_from_u64(SEED);
        let mut route = |line| {
            let addr = Ipv4Addr::from(0x0a00_0000 | rng.gen_range(0..1 << 18));
            let prefix = Ipv4Net::new(addr, rng.gen_range(1..=32)).unwrap();
            let port = rng.gen_range(0..4);
            Route { prefix, port, line }
        };
        (1..=n).map(&mut route).collect()
    }

    /// Random IPv6 routes of every depth crowded into 2001:db8::/40.
    fn v6_routes(n: usize) -> Vec<Route<Ipv6Net>> {
        let mut rng = ChaCha8Rng::seed_from_u64(SEED);
        let mut route = |line| {
            let addr = Ipv6Addr::from(0x2001_0db8u128 << 96 | rng.gen::<u128>() >> 40);
            let prefix = Ipv6Net::new(addr, rng.gen_range(1..=128)).unwrap();
            let port = rng.gen_range(0..4);
            Route { prefix, port, line }
        };
        (1..=n).map(&mut route).collect()
    }

    fn file<N>(origin: &str, routes: Vec<Route<N>>) -> RouteFile<N> {
        RouteFile {
            origin: origin.into(),
            routes,
        }
    }

    fn sizes<N: Family>(routes: &[Route<N>], limits: Limits) -> Result<Size, (usize, Shortage)> {
        sizing::size(&routes.iter().collect::<Vec<_>>(), limits)
    }

    #[test]
    fn ipv4_tables_look_up_as_rte_lpm_add_builds_them() {
        let eal = eal();
        let routes = v4_routes(3000);
        let size = sizes(&routes, Limits::default()).unwrap();
        let mut added = dpdk::Lpm::new(eal, &name(), 0, size.rules, size.tbl8s).unwrap();
        for r in &routes {
            let (addr, depth) = (r.prefix.addr().into(), r.prefix.prefix_len());
            added.add(addr, depth, r.port.into()).unwrap();
        }
        let (v4, v6) = (file("v4.cfg", routes.clone()), file("v6.cfg", vec![]));
        let (tables, _) = LpmTables::build(eal, &name(), 0, &v4, &v6, Limits::default(), |_| true).unwrap();
        // Every route's edges, and random addresses in and around the routes.
        let edges = routes.iter().flat_map(|r| {
            let (first, last) = (u32::from(r.prefix.network()), u32::from(r.prefix.broadcast()));
            [first.wrapping_sub(1), first, last, last.wrapping_add(1)]
        });
        let mut rng = ChaCha8Rng::seed_from_u64(SEED);
        let random = (0..100_000).map(|_| 0x0a00_0000 ^ rng.gen_range(0..1 << 20));
        // The inline lookup of both tables against DPDK's own bulk lookup
        // of the table rte_lpm_add built.
        let addrs: Vec<u32> = edges.chain(random).collect();
        for &addr in &addrs {
            let mut by_dpdk = None;
            added.lookup_bulk(&[addr], |_, hop| by_dpdk = hop);
            assert_eq!(added.lookup(addr), by_dpdk, "{}", Ipv4Addr::from(addr));
            let by_dpdk = by_dpdk.map(|hop| hop as u16);
            assert_eq!(tables.lookup_v4(addr), by_dpdk, "{}", Ipv4Addr::from(addr));
        }
        assert_vector_looks_up_as_inline(
            &addrs,
            |a| tables.lookup_v4(a),
            |simd, dsts, out| tables.lookup_v4_simd(simd, dsts, u16::MAX, out),
        );
    }

    /// Each vector lookup this CPU runs (`vector`, misses as u16::MAX)
    /// gives for `addrs` what the inline one (`scalar`) gives each, in
    /// every position of a group of eight and in the tail after the last
    /// group.
    fn assert_vector_looks_up_as_inline(
        addrs: &[u32],
        scalar: impl Fn(u32) -> Option<u16>,
        vector: impl Fn(dpdk::Simd, &[u32], &mut [u16]),
    ) {
        let available = dpdk::Simd::available();
        if available.is_empty() {
            eprintln!("this CPU has no vector path: no vector lookup is tested here");
        }
        for (simd, skip) in available.into_iter().flat_map(|simd| [(simd, 0), (simd, 3)]) {
            let addrs = &addrs[skip..];
            let mut ports = vec![0; addrs.len()];
            vector(simd, addrs, &mut ports);
            for (&addr, &port) in addrs.iter().zip(&ports) {
                assert_eq!(
                    scalar(addr).unwrap_or(u16::MAX),
                    port,
                    "{}: {}",
                    simd.name(),
                    Ipv4Addr::from(addr)
                );
            }
        }
    }

    /// With one rule or one tbl8 group less than computed, rte_lpm_add and
    /// rte_lpm6_add fail at the very route the sizing names: the counts are
    /// exactly the libraries'.
    #[test]
    fn computed_sizes_are_exactly_what_the_libraries_need() {
        let eal = eal();
        /// The line of the first route `add` refuses, checked against the
        /// one sizing names for `limits`, which must be `exact` or not fit.
        fn check<N: Family>(
            routes: &[Route<N>],
            limits: Limits,
            exact: Size,
            mut add: impl FnMut(&Route<N>) -> dpdk::Result<()>,
        ) {
            let refused = routes.iter().find(|r| add(r).is_err()).map(|r| r.line);
            let named = sizes(routes, limits).err().map(|(line, _)| line);
            let fits = limits
                == Limits {
                    max_rules: Some(exact.rules),
                    tbl8s: Some(exact.tbl8s),
                };
            assert_eq!((refused, named.is_none()), (named, fits), "{limits:?}");
        }
        let v4 = v4_routes(3000);
        let v6 = v6_routes(1000);
        let (s4, s6) = (
            sizes(&v4, Limits::default()).unwrap(),
            sizes(&v6, Limits::default()).unwrap(),
        );
        assert!(s4.rules < 3000 && s4.tbl8s > 100 && s6.tbl8s > 1000, "{s4:?} {s6:?}");
        for (rules, tbl8s) in [(s4.rules, s4.tbl8s), (s4.rules - 1, s4.tbl8s), (s4.rules, s4.tbl8s - 1)] {
            let limits = Limits {
                max_rules: Some(rules),
                tbl8s: Some(tbl8s),
            };
            let mut lpm = dpdk::Lpm::new(eal, &name(), 0, rules, tbl8s).unwrap();
            check(&v4, limits, s4, |r| {
                lpm.add(r.prefix.addr().into(), r.prefix.prefix_len(), 0)
            });
        }
        for (rules, tbl8s) in [(s6.rules, s6.tbl8s), (s6.rules - 1, s6.tbl8s), (s6.rules, s6.tbl8s - 1)] {
            let limits = Limits {
                max_rules: Some(rules),
                tbl8s: Some(tbl8s),
            };
            let mut lpm = dpdk::Lpm6::new(eal, &name(), 0, rules, tbl8s).unwrap();
            check(&v6, limits, s6, |r| {
                lpm.add(&r.prefix.addr().octets(), r.prefix.prefix_len(), 0)
            });
        }
    }

    fn build_error(v4: &[&str], v6: &[&str], limits: Limits) -> String {
        let routes = |text: &[&str]| text.iter().map(|l| format!("{l}\n")).collect::<String>();
        let v4 = file("v4.cfg", crate::rules::parse_v4(routes(v4), "v4.cfg").unwrap());
        let v6 = file("v6.cfg", crate::rules::parse_v6(routes(v6), "v6.cfg").unwrap());
        match LpmTables::build(eal(), &name(), 0, &v4, &v6, limits, |port| port < 2) {
            Ok(_) => panic!("built"),
            Err(err) => err.to_string(),
        }
    }

    #[test]
    fn errors_name_the_route_that_does_not_fit() {
        let v4 = [
            "R10.0.0.0/8 0",
            "R10.0.0.0/8 1",
            "R11.0.0.0/8 5",
            "R12.1.1.0/25 0",
            "R12.1.2.0/25 1",
        ];
        let v6 = ["R2001:db8::/32 0", "R2001:db8:1::/48 0"];
        // Line 2 repeats line 1's prefix; line 3's port is disabled.
        let cases = [
            (
                Some(1),
                None,
                "v4.cfg:4: IPv4 LPM table full: more than 1 rules (raise --lpm-max-rules)",
            ),
            (
                None,
                Some(1),
                "v4.cfg:5: IPv4 LPM table full: more than 1 tbl8 groups (raise --lpm-tbl8s)",
            ),
            (
                None,
                Some(2),
                "v6.cfg:2: IPv6 LPM table full: more than 2 tbl8 groups (raise --lpm-tbl8s)",
            ),
        ];
        for (max_rules, tbl8s, expected) in cases {
            assert_eq!(build_error(&v4, &v6, Limits { max_rules, tbl8s }), expected);
        }
        assert_eq!(
            build_error(&v4, &["R::/0 1"], Limits::default()),
            "v6.cfg:1: rte_lpm6 takes no depth 0 (split a default route into two /1 routes)"
        );
    }

    /// A route change: `Some(port)` adds (or replaces), `None` deletes.
    type Change = (u32, u8, Option<u8>);

    /// Changes crowded into 10.0.0.0/22, so that they nest, share /24s
    /// (tbl8 groups) and hit the same prefixes again; some up to /8, so
    /// that they span many /24s and cover groups.
    fn changes() -> impl proptest::strategy::Strategy<Value = Vec<Change>> {
        use proptest::prelude::*;
        let change = (0u32..1 << 10, 8u8..=32, proptest::option::weighted(0.6, 0u8..4));
        proptest::collection::vec(change.prop_map(|(a, d, p)| (0x0a00_0000 | a, d, p)), 1..200)
    }

    /// Where the IPv6 changes are: 2001:db8::/44.
    const CHANGES6: u128 = 0x2001_0db8u128 << 96;

    /// IPv6 changes in 2001:db8::/44 (so that they nest and share groups),
    /// of every depth, the ones up to /24 (which span up to 2^23 entries
    /// each) fewer.
    fn changes6() -> impl proptest::strategy::Strategy<Value = Vec<(u128, u8, Option<u8>)>> {
        use proptest::prelude::*;
        let depth = prop_oneof![1 => 1..=24u8, 8 => 25..=128u8];
        let change = (any::<u128>(), depth, proptest::option::weighted(0.6, 0u8..4));
        proptest::collection::vec(change.prop_map(|(a, d, p)| (CHANGES6 | a >> 44, d, p)), 1..60)
    }

    /// The port of the longest of `routes` (by network and depth) that
    /// covers `addr`: what a lookup must give.
    fn longest(routes: &std::collections::BTreeMap<(u32, u8), u8>, addr: u32) -> Option<u32> {
        (1..=32u8).rev().find_map(|d| {
            let net = u32::from(Ipv4Net::new(addr.into(), d).unwrap().network());
            routes.get(&(net, d)).map(|&port| port.into())
        })
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(10))]

        /// A table written whole from routes, then changed in place by adds,
        /// replaces and deletes, looks up after each change as the longest
        /// route left (around the change and at random), and at the end
        /// everywhere as rte_lpm built fresh from those routes by
        /// rte_lpm_add; once every route is deleted, every tbl8 group is
        /// unlinked.
        #[test]
        fn a_table_changed_in_place_looks_up_as_rte_lpm_built_fresh(start in changes(), changes in changes()) {
            use std::collections::BTreeMap;
            let eal = eal();
            let qsbr = Arc::new(dpdk::Qsbr::new(1).unwrap());
            let key = |addr: u32, depth: u8| (u32::from(Ipv4Net::new(addr.into(), depth).unwrap().network()), depth);
            // The table starts with the adds among `start`.
            let routes: Vec<Route<Ipv4Net>> = start
                .iter()
                .filter_map(|&(addr, depth, port)| {
                    let prefix = Ipv4Net::new(addr.into(), depth).unwrap();
                    port.map(|port| Route { prefix, port, line: 0 })
                })
                .collect();
            let mut left: BTreeMap<(u32, u8), u8> =
                routes.iter().map(|r| (key(r.prefix.addr().into(), r.prefix.prefix_len()), r.port)).collect();
            let (v4, v6) = (file("v4.cfg", routes), file("v6.cfg", vec![]));
            let limits = Limits { max_rules: Some(1024), tbl8s: Some(64) };
            let (_, writers, _) = LpmTables::build_live(eal, &name(), 0, &v4, &v6, limits, |_| true, &qsbr).unwrap();
            let mut live = writers.v4;
            let reader = live.reader();
            let mut rng = ChaCha8Rng::seed_from_u64(SEED);
            for &(addr, depth, port) in &changes {
                let prefix = Ipv4Net::new(addr.into(), depth).unwrap();
                match port {
                    Some(port) => {
                        live.add(prefix, port).unwrap();
                        left.insert(key(addr, depth), port);
                    }
                    None => proptest::prop_assert_eq!(live.delete(prefix), left.remove(&key(addr, depth)).is_some()),
                }
                let (first, last) = (u32::from(prefix.network()), u32::from(prefix.broadcast()));
                let around = [first - 1, first, (first + last) / 2, last, last + 1];
                let random = (0..32).map(|_| 0x0a00_0000 - 256 + rng.gen_range(0..(1 << 10) + 512));
                let addrs: Vec<u32> = around.into_iter().chain(random).collect();
                for &a in &addrs {
                    proptest::prop_assert_eq!(reader.lookup(a), longest(&left, a), "{} after {}", Ipv4Addr::from(a), prefix);
                }
                assert_vector_looks_up_as_inline(&addrs, |a| reader.lookup(a).map(|hop| hop as u16), |simd, dsts, out| {
                    reader.lookup_simd(simd, dsts, u16::MAX, out)
                });
            }
            let mut fresh = dpdk::Lpm::new(eal, &name(), 0, 1024, 64).unwrap();
            for (&(net, depth), &port) in &left {
                fresh.add(net, depth, port.into()).unwrap();
            }
            // Every address the changes touched the /24 of, and beyond.
            for addr in 0x0a00_0000u32 - 4096..0x0a00_0000 + (1 << 10) + 4096 {
                let mut by_dpdk = None;
                fresh.lookup_bulk(&[addr], |_, hop| by_dpdk = hop);
                proptest::prop_assert_eq!(reader.lookup(addr), by_dpdk, "{}", Ipv4Addr::from(addr));
            }
            for (net, depth) in left.into_keys() {
                proptest::prop_assert!(live.delete(Ipv4Net::new(net.into(), depth).unwrap()));
            }
            proptest::prop_assert_eq!(live.tbl8_groups().linked, 0);
        }

        /// As the IPv4 test, for IPv6: a table built from routes, then
        /// changed in place, looks up as the longest route left after each
        /// change, and at the end as rte_lpm6 built fresh by rte_lpm6_add
        /// from those routes; deleting them all unlinks every group.
        #[test]
        fn an_ipv6_table_changed_in_place_looks_up_as_rte_lpm6_built_fresh(start in changes6(), changes in changes6()) {
            use std::collections::BTreeMap;
            let eal = eal();
            let qsbr = Arc::new(dpdk::Qsbr::new(1).unwrap());
            let net = |addr: u128, depth: u8| Ipv6Net::new(addr.into(), depth).unwrap().trunc();
            let routes: Vec<Route<Ipv6Net>> = start
                .iter()
                .filter_map(|&(addr, depth, port)| port.map(|port| Route { prefix: net(addr, depth), port, line: 0 }))
                .collect();
            let mut left: BTreeMap<Ipv6Net, u8> = routes.iter().map(|r| (r.prefix, r.port)).collect();
            let (v4, v6) = (file("v4.cfg", vec![]), file("v6.cfg", routes));
            let limits = Limits { max_rules: Some(1024), tbl8s: Some(2048) };
            let (tables, writers, _) = LpmTables::build_live(eal, &name(), 0, &v4, &v6, limits, |_| true, &qsbr).unwrap();
            let mut live = writers.v6;
            let longest = |left: &BTreeMap<Ipv6Net, u8>, addr: u128| {
                (1..=128u8).rev().find_map(|d| left.get(&net(addr, d)).map(|&port| u16::from(port)))
            };
            let mut rng = ChaCha8Rng::seed_from_u64(SEED);
            let mut probes = Vec::new();
            for &(addr, depth, port) in &changes {
                let prefix = net(addr, depth);
                match port {
                    Some(port) => {
                        live.add(prefix, port.into()).unwrap();
                        left.insert(prefix, port);
                    }
                    None => proptest::prop_assert_eq!(live.delete(prefix), left.remove(&prefix).is_some()),
                }
                let (first, last) = (u128::from(prefix.network()), u128::from(prefix.broadcast()));
                let around = [first.wrapping_sub(1), first, first / 2 + last / 2, last, last.wrapping_add(1)];
                let random = (0..16).map(|_| CHANGES6 | rng.gen::<u128>() >> 44);
                for a in around.into_iter().chain(random) {
                    let found = tables.lookup_v6(&a.to_be_bytes());
                    proptest::prop_assert_eq!(found, longest(&left, a), "{} after {:?}", Ipv6Addr::from(a), (prefix, port));
                    probes.push(a);
                }
            }
            let mut fresh = dpdk::Lpm6::new(eal, &name(), 0, 1024, 2048).unwrap();
            for (prefix, &port) in &left {
                fresh.add(&prefix.network().octets(), prefix.prefix_len(), port.into()).unwrap();
            }
            for a in probes {
                let by_dpdk = fresh.lookup(&a.to_be_bytes()).map(port_of);
                proptest::prop_assert_eq!(tables.lookup_v6(&a.to_be_bytes()), by_dpdk, "{}", Ipv6Addr::from(a));
            }
            for prefix in left.into_keys() {
                proptest::prop_assert!(live.delete(prefix));
            }
            proptest::prop_assert_eq!(live.table().tbl8_groups().linked, 0);
        }
    }
}
