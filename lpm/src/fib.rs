//! The forwarding tables of FIB mode (`--lookup=fib`): the LPM route files
//! in rte_fib (DIR-24-8) for IPv4 and rte_fib6 (a trie) for IPv6, sized as
//! the LPM tables are, with the routes to disabled ports left out. Where
//! DPDK lets a FIB change in place under RCU (IPv4 from 24.11, IPv6 from
//! 25.11), [`FibTables::build_live`] also gives its writer,
//! [`LiveFibRoutes`].

use std::sync::Arc;

use dpdk::{DpdkError, Fib, Fib6, FibReader, LiveFib, Qsbr};
use ipnet::{IpNet, Ipv4Net, Ipv6Net};

use crate::rules::{Route, RouteFile};
use crate::sizing::Size;
use crate::table::{load_both, port_of, LoadReport, Loaded, LpmError};
use crate::Limits;

/// IPv4 and IPv6 FIBs, as the lcores read them.
pub struct FibTables {
    v4: FibReader<Fib>,
    v6: FibReader<Fib6>,
}

/// The writers of the FIBs that change in place (None: that family's
/// FIB changes only by a rebuild on this DPDK).
pub struct LiveFibRoutes {
    v4: Option<LiveFib<Fib>>,
    v6: Option<LiveFib<Fib6>>,
}

/// A route's next hop: its port.
fn hop<N>(r: &Route<N>) -> u64 {
    r.port.into()
}

/// Times an IPv6 FIB is rebuilt with twice the tbl8 groups before its
/// last error is reported.
const MAX_GROWTH: u32 = 3;

/// An IPv4 FIB of `size` holding `routes`.
fn fib4(eal: &dpdk::Eal, name: &str, socket: i32, size: Size, routes: &[&Route<Ipv4Net>]) -> Loaded<Fib> {
    let mut fib = Fib::new(eal, name, socket, size.rules, size.tbl8s).map_err(|e| (None, e))?;
    for r in routes {
        let (addr, depth) = (r.prefix.addr().into(), r.prefix.prefix_len());
        fib.add(addr, depth, hop(r)).map_err(|e| (Some(r.line), e))?;
    }
    Ok(fib)
}

/// An IPv6 FIB of `size` holding `routes`.
fn fib6(eal: &dpdk::Eal, name: &str, socket: i32, size: Size, routes: &[&Route<Ipv6Net>]) -> Loaded<Fib6> {
    let mut fib = Fib6::new(eal, name, socket, size.rules, size.tbl8s).map_err(|e| (None, e))?;
    for r in routes {
        let (addr, depth) = (r.prefix.addr().octets(), r.prefix.prefix_len());
        fib.add(&addr, depth, hop(r)).map_err(|e| (Some(r.line), e))?;
    }
    Ok(fib)
}

/// An IPv6 FIB holding `routes`, of `size` or, where rte_fib6 needs more
/// tbl8 groups than rte_lpm6 would, of twice as many (up to
/// [`MAX_GROWTH`] times), unless `--lpm-tbl8s` fixed the number.
fn fib6_growing(
    eal: &dpdk::Eal,
    name: &str,
    socket: i32,
    mut size: Size,
    limits: Limits,
    routes: &[&Route<Ipv6Net>],
) -> Loaded<Fib6> {
    let mut grown = 0;
    loop {
        match fib6(eal, name, socket, size, routes) {
            Err((Some(_), e)) if e.is_out_of_space() && limits.tbl8s.is_none() && grown < MAX_GROWTH => {
                grown += 1;
                size.tbl8s = size.tbl8s.saturating_mul(2);
                log::info!("FIB: IPv6: out of tbl8 groups, building again with {}", size.tbl8s);
            }
            built => return built,
        }
    }
}

/// Both FIBs of [`FibTables::build`], named `{name}_fib4` and `{name}_fib6`.
fn build_fibs(
    eal: &dpdk::Eal,
    name: &str,
    socket: i32,
    files: (&RouteFile<Ipv4Net>, &RouteFile<Ipv6Net>),
    limits: Limits,
    enabled: impl Fn(u8) -> bool,
) -> Result<((Fib, Fib6), LoadReport), LpmError> {
    let (v4_name, v6_name) = (format!("{name}_fib4"), format!("{name}_fib6"));
    load_both(
        "FIB",
        files,
        limits,
        enabled,
        |size, routes| fib4(eal, &v4_name, socket, fib_size(size, limits), routes),
        |size, routes| fib6_growing(eal, &v6_name, socket, fib_size(size, limits), limits, routes),
    )
}

/// `fib`'s reader, and its writer where this DPDK changes it in place.
fn live<T: dpdk::FibTable>(
    fib: T,
    qsbr: &Arc<Qsbr>,
    family: &'static str,
) -> Result<(FibReader<T>, Option<LiveFib<T>>), LpmError> {
    if !LiveFib::<T>::SUPPORTED {
        return Ok((fib.into(), None));
    }
    let writer = LiveFib::new(fib, qsbr).map_err(|source| LpmError::Create {
        kind: "FIB",
        family,
        source,
    })?;
    Ok((writer.reader(), Some(writer)))
}

/// Why [`LiveFibRoutes`] refused a change; nothing changed.
#[derive(Debug)]
pub enum FibRefused {
    /// This family's FIB does not change in place on this DPDK.
    NotLive,
    /// `route del` of a prefix that has no route.
    NoRoute,
    /// DPDK's refusal: out of routes or tbl8 groups ([`DpdkError::is_out_of_space`]), usually.
    Dpdk(DpdkError),
}

impl LiveFibRoutes {
    /// Whether `prefix`'s family changes in place.
    pub fn takes(&self, prefix: &IpNet) -> bool {
        match prefix {
            IpNet::V4(_) => self.v4.is_some(),
            IpNet::V6(_) => self.v6.is_some(),
        }
    }

    /// Adds `prefix -> port` (or gives the prefix that port), for the
    /// lcores at once.
    pub fn add(&mut self, prefix: IpNet, port: u8) -> Result<(), FibRefused> {
        let port = port.into();
        let done = match prefix {
            IpNet::V4(p) => self.v4.as_mut().map(|f| f.add(p.addr().into(), p.prefix_len(), port)),
            IpNet::V6(p) => self.v6.as_mut().map(|f| f.add(p.addr().octets(), p.prefix_len(), port)),
        };
        done.ok_or(FibRefused::NotLive)?.map_err(FibRefused::Dpdk)
    }

    /// Deletes the route of `prefix`.
    pub fn delete(&mut self, prefix: IpNet) -> Result<(), FibRefused> {
        let done = match prefix {
            IpNet::V4(p) => self.v4.as_mut().map(|f| f.delete(p.addr().into(), p.prefix_len())),
            IpNet::V6(p) => self.v6.as_mut().map(|f| f.delete(p.addr().octets(), p.prefix_len())),
        };
        done.ok_or(FibRefused::NotLive)?.map_err(|e| match e.is_not_found() {
            true => FibRefused::NoRoute,
            false => FibRefused::Dpdk(e),
        })
    }

    /// `route stats`: each live FIB's tbl8 groups.
    pub fn stats(&mut self) -> String {
        let groups = [
            ("IPv4", self.v4.as_mut().and_then(LiveFib::tbl8_groups)),
            ("IPv6", self.v6.as_mut().and_then(LiveFib::tbl8_groups)),
        ];
        let lines: Vec<String> = groups
            .into_iter()
            .filter_map(|(family, g)| {
                g.map(|g| {
                    format!(
                        "{family} FIB tbl8 groups: {} in use, {} awaiting reclaim, {} free, of {}",
                        g.linked,
                        g.awaiting_reclaim,
                        g.total - g.linked - g.awaiting_reclaim,
                        g.total
                    )
                })
            })
            .collect();
        lines.join("; ")
    }
}

/// C's FIB sizes (`setup_fib`): routes and tbl8 groups of each table.
const C_ROUTES: u32 = 1 << 16;
const C_TBL8S: u32 = 1 << 15;

/// The size a FIB is created with: what `--lpm-max-rules` / `--lpm-tbl8s`
/// give, else the LPM count with room to spare (twice the routes, a
/// quarter more tbl8 groups) and at least C's fixed
/// sizes. rte_fib reserves tbl8 groups per route against the nearest
/// node of its RIB, branch nodes included, which does not always share
/// them as rte_lpm6 does: the same count fails on C's default IPv6 routes.
fn fib_size(counted: Size, limits: Limits) -> Size {
    Size {
        rules: limits
            .max_rules
            .unwrap_or(counted.rules.saturating_mul(2).max(C_ROUTES)),
        tbl8s: limits
            .tbl8s
            .unwrap_or((counted.tbl8s.saturating_add(counted.tbl8s / 4)).max(C_TBL8S)),
    }
}

impl FibTables {
    /// Builds both FIBs on `socket` from `v4` and `v6` as
    /// [`crate::LpmTables::build`] builds the LPM tables: only the routes
    /// whose port `enabled` accepts, sized for them unless `limits` says
    /// otherwise; `name` prefixes the DPDK names (`{name}_fib4`,
    /// `{name}_fib6`).
    ///
    /// ```
    /// let eal = dpdk::Eal::for_tests(&[])?;
    /// use lpm::rules::{parse_v4, parse_v6, RouteFile};
    /// let v4 = RouteFile { origin: "v4".into(), routes: parse_v4("R198.18.0.0/16 1\nR198.18.7.0/25 2\n", "v4")? };
    /// let v6 = RouteFile { origin: "v6".into(), routes: parse_v6("R2001:db8::/32 3\n", "v6")? };
    /// let (fib, report) = lpm::FibTables::build(eal, "doc", 0, &v4, &v6, lpm::Limits::default(), |_| true)?;
    /// assert_eq!((report.v4_added, report.v6_added), (2, 1));
    /// let dsts = [[198, 18, 7, 9], [10, 0, 0, 1]].map(u32::from_be_bytes);
    /// assert_eq!(dsts.map(|dst| fib.lookup_v4(dst)), [Some(2), None]);
    /// let host: std::net::Ipv6Addr = "2001:db8::9".parse()?;
    /// assert_eq!(fib.lookup_v6(&host.octets()), Some(3));
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
    ) -> Result<(FibTables, LoadReport), LpmError> {
        let ((v4, v6), report) = build_fibs(eal, name, socket, (v4, v6), limits, enabled)?;
        let tables = FibTables {
            v4: v4.into(),
            v6: v6.into(),
        };
        Ok((tables, report))
    }

    /// As [`FibTables::build`], for lcores that report quiescent states
    /// on `qsbr`; also the writer of the FIBs this DPDK changes in place
    /// (None if neither: before 24.11).
    #[allow(clippy::too_many_arguments)]
    pub fn build_live(
        eal: &dpdk::Eal,
        name: &str,
        socket: i32,
        v4: &RouteFile<Ipv4Net>,
        v6: &RouteFile<Ipv6Net>,
        limits: Limits,
        enabled: impl Fn(u8) -> bool,
        qsbr: &Arc<Qsbr>,
    ) -> Result<(FibTables, Option<LiveFibRoutes>, LoadReport), LpmError> {
        let ((v4, v6), report) = build_fibs(eal, name, socket, (v4, v6), limits, enabled)?;
        let (v4, v4_writer) = live(v4, qsbr, "IPv4")?;
        let (v6, v6_writer) = live(v6, qsbr, "IPv6")?;
        let writer = (v4_writer.is_some() || v6_writer.is_some()).then_some(LiveFibRoutes {
            v4: v4_writer,
            v6: v6_writer,
        });
        Ok((FibTables { v4, v6 }, writer, report))
    }

    /// These FIBs with one family's rebuilt from its file in `files` as
    /// [`FibTables::build`] builds it, the other family's shared: a change
    /// of one family's routes rebuilds no table of the other. None if
    /// that family's FIB changes in place on this DPDK: its changes need
    /// no rebuild, and one would lose its writer.
    #[allow(clippy::too_many_arguments)]
    pub fn with_rebuilt(
        &self,
        eal: &dpdk::Eal,
        name: &str,
        socket: i32,
        (v4, v6): (&RouteFile<Ipv4Net>, &RouteFile<Ipv6Net>),
        limits: Limits,
        enabled: impl Fn(u8) -> bool,
        ipv6: bool,
    ) -> Option<Result<FibTables, LpmError>> {
        let rebuilt = match ipv6 {
            false if !LiveFib::<Fib>::SUPPORTED => {
                let name = format!("{name}_fib4");
                let make = |size, routes: &[&Route<Ipv4Net>]| fib4(eal, &name, socket, fib_size(size, limits), routes);
                crate::table::load("FIB", v4, limits, &enabled, make).map(|(fib, _)| FibTables {
                    v4: fib.into(),
                    v6: self.v6.clone(),
                })
            }
            true if !LiveFib::<Fib6>::SUPPORTED => {
                let name = format!("{name}_fib6");
                let make = |size, routes: &[&Route<Ipv6Net>]| {
                    // At least the groups the live FIB grew to: rte_fib6
                    // would run out of fewer again.
                    let mut size = fib_size(size, limits);
                    if limits.tbl8s.is_none() && self.v6.tbl8s() > size.tbl8s {
                        size.tbl8s = self.v6.tbl8s();
                        log::info!(
                            "FIB: IPv6: rebuilt with the {} tbl8 groups the live FIB grew to",
                            size.tbl8s
                        );
                    }
                    fib6_growing(eal, &name, socket, size, limits, routes)
                };
                crate::table::load("FIB", v6, limits, &enabled, make).map(|(fib, _)| FibTables {
                    v4: self.v4.clone(),
                    v6: fib.into(),
                })
            }
            _ => return None,
        };
        Some(rebuilt)
    }

    /// Output port of one IPv4 destination (host order), or None when no
    /// route matches: rte_fib's lookup inlined, the fast path for IPv4
    /// (see [`dpdk::Fib::lookup`]).
    #[inline(always)]
    pub fn lookup_v4(&self, dst: u32) -> Option<u16> {
        self.v4.lookup(dst).map(port_of)
    }

    /// [`FibTables::lookup_v4`] of each of `dsts`, eight at a time with the
    /// vector path `simd` names: each port found, or `miss`, into `out` (as many as the
    /// shorter of the two has).
    #[inline(always)]
    pub fn lookup_v4_simd(&self, simd: dpdk::Simd, dsts: &[u32], miss: u16, out: &mut [u16]) {
        self.v4.lookup_simd(simd, dsts, miss, out)
    }

    /// Output port of one IPv6 destination, or None when no route
    /// matches: rte_fib6's lookup inlined (see [`dpdk::Fib6::lookup`]).
    #[inline(always)]
    pub fn lookup_v6(&self, dst: &[u8; 16]) -> Option<u16> {
        self.v6.lookup(dst).map(port_of)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::{parse_v4, parse_v6};

    #[test]
    fn errors_name_the_fib_and_the_route_that_does_not_fit() {
        let eal = dpdk::Eal::for_tests(&[]).expect("EAL init");
        let v4 = RouteFile {
            origin: "v4.cfg".into(),
            routes: parse_v4("R10.0.0.0/8 0\nR11.0.0.0/8 0\n", "v4.cfg").unwrap(),
        };
        let v6 = RouteFile {
            origin: "v6.cfg".into(),
            routes: parse_v6("R2001:db8::/32 0\n", "v6.cfg").unwrap(),
        };
        let limits = Limits {
            max_rules: Some(1),
            tbl8s: None,
        };
        let err = FibTables::build(eal, "fib-full", 0, &v4, &v6, limits, |_| true)
            .err()
            .unwrap();
        assert_eq!(
            err.to_string(),
            "v4.cfg:2: IPv4 FIB table full: more than 1 rules (raise --lpm-max-rules)"
        );
    }
}
