//! The forwarding tables of FIB mode (`--lookup=fib`): the LPM route files
//! in rte_fib (DIR-24-8) for IPv4 and rte_fib6 (a trie) for IPv6, sized as
//! the LPM tables are, with the routes to disabled ports left out.

use ipnet::{Ipv4Net, Ipv6Net};

use crate::rules::{Route, RouteFile};
use crate::sizing::Size;
use crate::table::{load_both, port_of, LoadReport, Loaded, LpmError};
use crate::Limits;

/// IPv4 and IPv6 FIBs, read-only once built.
pub struct FibTables {
    v4: dpdk::Fib,
    v6: dpdk::Fib6,
}

/// A route's next hop: its port.
fn hop<N>(r: &Route<N>) -> u64 {
    r.port.into()
}

/// Times an IPv6 FIB is rebuilt with twice the tbl8 groups before its
/// last error is reported.
const MAX_GROWTH: u32 = 3;

/// An IPv4 FIB of `size` holding `routes`.
fn fib4(eal: &dpdk::Eal, name: &str, socket: i32, size: Size, routes: &[&Route<Ipv4Net>]) -> Loaded<dpdk::Fib> {
    let mut fib = dpdk::Fib::new(eal, name, socket, size.rules, size.tbl8s).map_err(|e| (None, e))?;
    for r in routes {
        let (addr, depth) = (r.prefix.addr().into(), r.prefix.prefix_len());
        fib.add(addr, depth, hop(r)).map_err(|e| (Some(r.line), e))?;
    }
    Ok(fib)
}

/// An IPv6 FIB of `size` holding `routes`.
fn fib6(eal: &dpdk::Eal, name: &str, socket: i32, size: Size, routes: &[&Route<Ipv6Net>]) -> Loaded<dpdk::Fib6> {
    let mut fib = dpdk::Fib6::new(eal, name, socket, size.rules, size.tbl8s).map_err(|e| (None, e))?;
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
) -> Loaded<dpdk::Fib6> {
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
    /// let eal = dpdk::Eal::for_tests(256, &[])?;
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
        let (v4_name, v6_name) = (format!("{name}_fib4"), format!("{name}_fib6"));
        let ((v4, v6), report) = load_both(
            "FIB",
            (v4, v6),
            limits,
            enabled,
            |size, routes| fib4(eal, &v4_name, socket, fib_size(size, limits), routes),
            |size, routes| fib6_growing(eal, &v6_name, socket, fib_size(size, limits), limits, routes),
        )?;
        Ok((FibTables { v4, v6 }, report))
    }

    /// Output port of one IPv4 destination (host order), or None when no
    /// route matches: rte_fib's lookup inlined, the fast path for IPv4
    /// (see [`dpdk::Fib::lookup`]).
    #[inline(always)]
    pub fn lookup_v4(&self, dst: u32) -> Option<u16> {
        self.v4.lookup(dst).map(port_of)
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
        let eal = dpdk::Eal::for_tests(512, &[]).expect("EAL init");
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
