//! Network namespaces ("sites", two unless a test asks for three), each
//! joined to one DPDK port of the forwarder: a veth pair (one end in the
//! root namespace, given to `net_af_packet` or `net_af_xdp`, its peer in
//! the namespace) or a TAP
//! device that `net_tap` creates and the test moves into the namespace.
//!
//! Site `i` is DPDK port `i`. It has a documentation-range address, a
//! default route via a made-up gateway and a static neighbour entry mapping
//! that gateway to the DPDK port's MAC (l3fwd answers no ARP or ND), so the
//! kernel sends everything off-site to the forwarder. Nothing can leave
//! the machine: the namespaces have no other interface.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::process::Command;

pub use testkit::Pmd;

use super::run;

/// A network namespace, deleted on drop (with the interfaces in it).
pub struct Namespace {
    pub name: String,
}

impl Namespace {
    pub fn create(name: String) -> Namespace {
        // A leftover of an interrupted run of the same process id.
        let _ = Command::new("ip").args(["netns", "del", &name]).output();
        run("ip", &["netns", "add", &name]);
        Namespace { name }
    }

    /// `ip -n NS args`.
    pub fn ip(&self, args: &[&str]) {
        run("ip", &[&["-n", &self.name][..], args].concat());
    }

    /// Runs `program args` inside the namespace.
    pub fn exec(&self, program: &str, args: &[&str]) -> String {
        let out = run("ip", &[&["netns", "exec", &self.name, program][..], args].concat());
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// An interface counter from sysfs (`tx_packets`, `rx_dropped`, ...).
    pub fn counter(&self, iface: &str, name: &str) -> u64 {
        let path = format!("/sys/class/net/{iface}/statistics/{name}");
        let text = self.exec("cat", &[&path]);
        text.trim()
            .parse()
            .unwrap_or_else(|_| panic!("{}: {path}: {text:?}", self.name))
    }
}

impl Drop for Namespace {
    fn drop(&mut self) {
        let _ = Command::new("ip").args(["netns", "del", &self.name]).output();
    }
}

/// One side of the forwarder.
pub struct Site {
    /// The DPDK port this site is attached to.
    pub port: u16,
    /// The interface's name inside the namespace.
    pub iface: String,
    /// The namespace interface's MAC: the port's `--eth-dest`.
    pub mac: String,
    /// The DPDK port's own MAC, which the site's neighbour entry names.
    pub port_mac: String,
    pub addr4: Ipv4Addr,
    pub addr6: Ipv6Addr,
    /// The veth end in the root namespace (none for TAP).
    root_iface: Option<String>,
    pub ns: Namespace,
}

impl Site {
    /// The gateway (the forwarder, as far as this site knows).
    pub fn gateway4(&self) -> Ipv4Addr {
        let [a, b, c, _] = self.addr4.octets();
        Ipv4Addr::new(a, b, c, 1)
    }

    pub fn gateway6(&self) -> Ipv6Addr {
        let mut s = self.addr6.segments();
        s[7] = 1;
        s.into()
    }

    pub fn addr(&self, v6: bool) -> IpAddr {
        if v6 {
            self.addr6.into()
        } else {
            self.addr4.into()
        }
    }

    /// Packets the namespace interface sent and received so far.
    pub fn link_counts(&self) -> LinkCounts {
        LinkCounts {
            tx: self.ns.counter(&self.iface, "tx_packets"),
            rx: self.ns.counter(&self.iface, "rx_packets"),
            rx_dropped: self.ns.counter(&self.iface, "rx_dropped"),
        }
    }

    /// Addresses, routes and neighbour entries; the interface is in the
    /// namespace already.
    fn configure(&self) {
        let ns = &self.ns;
        ns.exec("ethtool", &["-K", &self.iface, "tx", "off"]);
        // No link-local address: no router solicitations or DAD, little
        // IPv6 chatter besides our own traffic.
        ns.ip(&["link", "set", &self.iface, "address", &self.mac, "addrgenmode", "none"]);
        ns.ip(&["link", "set", "lo", "up"]);
        ns.ip(&["link", "set", &self.iface, "up"]);
        let (gw4, gw6) = (self.gateway4().to_string(), self.gateway6().to_string());
        ns.ip(&["addr", "add", &format!("{}/24", self.addr4), "dev", &self.iface]);
        ns.ip(&[
            "-6",
            "addr",
            "add",
            &format!("{}/64", self.addr6),
            "dev",
            &self.iface,
            "nodad",
        ]);
        ns.ip(&["route", "add", "default", "via", &gw4, "dev", &self.iface]);
        ns.ip(&["-6", "route", "add", "default", "via", &gw6, "dev", &self.iface]);
        for gw in [&gw4, &gw6] {
            let lladdr = &self.port_mac;
            ns.ip(&[
                "neigh",
                "add",
                gw,
                "lladdr",
                lladdr,
                "dev",
                &self.iface,
                "nud",
                "permanent",
            ]);
        }
    }
}

impl Drop for Site {
    fn drop(&mut self) {
        // Deleting the namespace deletes the veth pair too; this covers a
        // pair whose peer never made it into the namespace.
        if let Some(root) = &self.root_iface {
            let _ = Command::new("ip").args(["link", "del", root]).output();
        }
    }
}

/// Packet counters of a site's interface.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinkCounts {
    pub tx: u64,
    pub rx: u64,
    pub rx_dropped: u64,
}

/// `N` sites (at most three: one documentation range each) on one PMD,
/// `queues` RX/TX queues per interface.
pub struct Sites<const N: usize = 2> {
    pub pmd: Pmd,
    pub queues: u16,
    pub sites: [Site; N],
}

impl<const N: usize> Sites<N> {
    /// Makes the namespaces and, for veth PMDs, the configured links;
    /// TAP sites are finished by [`Sites::attach_taps`] once the forwarder
    /// has created the devices.
    pub fn new(pmd: Pmd, queues: u16, tag: &str) -> Sites<N> {
        let site = |port: u16| {
            let ns = Namespace::create(format!("l3fwd-{tag}-{port}"));
            let iface = format!("l3n{tag}{port}");
            let addr4 = [
                Ipv4Addr::new(192, 0, 2, 2),
                Ipv4Addr::new(198, 51, 100, 2),
                Ipv4Addr::new(203, 0, 113, 2),
            ][port as usize];
            let addr6 = Ipv6Addr::new(0x2001, 0xdb8, 0, port + 1, 0, 0, 0, 2);
            let root_iface = (pmd != Pmd::Tap).then(|| format!("l3r{tag}{port}"));
            let site = Site {
                port,
                mac: format!("02:0a:00:00:00:{port:02x}"),
                port_mac: format!("02:0d:00:00:00:{port:02x}"),
                iface,
                addr4,
                addr6,
                root_iface,
                ns,
            };
            if let Some(root) = &site.root_iface {
                let q = queues.to_string();
                #[rustfmt::skip]
                run("ip", &[
                    "link", "add", root, "address", &site.port_mac,
                    "numtxqueues", &q, "numrxqueues", &q, "type", "veth",
                    "peer", "name", &site.iface, "netns", &site.ns.name,
                    "numtxqueues", &q, "numrxqueues", &q,
                ]);
                run("ethtool", &["-K", root, "tx", "off"]);
                // The root end carries only what DPDK sends: no IPv6 of its own
                // (router solicitations, MLD) to show up in the site's counters.
                let ipv6_off = format!("/proc/sys/net/ipv6/conf/{root}/disable_ipv6");
                std::fs::write(&ipv6_off, "1").unwrap_or_else(|err| panic!("{ipv6_off}: {err}"));
                run("ip", &["link", "set", root, "up"]);
                site.configure();
            }
            site
        };
        Sites {
            pmd,
            queues,
            sites: std::array::from_fn(|p| site(p as u16)),
        }
    }

    /// The forwarder's `--vdev` arguments, port 0 first.
    pub fn vdevs(&self) -> Vec<String> {
        self.sites
            .iter()
            .map(|s| {
                let (p, q) = (s.port, self.queues);
                match &s.root_iface {
                    Some(root) => self.pmd.vdev(p, root, q),
                    None => format!("{},mac={}", self.pmd.vdev(p, &s.iface, q), s.port_mac),
                }
            })
            .collect()
    }

    /// EAL's lcore list: one lcore per queue, all on CPU 1 (`--lcores`
    /// maps several lcores onto one CPU), so that the other CPU is left to
    /// the kernel's side of the traffic. net_tap needs as many TX queues
    /// as RX queues, and l3fwd gives each lcore one TX queue per port.
    pub fn eal_lcores(&self) -> Vec<String> {
        let lcores: Vec<String> = (0..self.queues).map(|q| format!("{}@1", q + 1)).collect();
        vec!["--lcores".into(), lcores.join(",")]
    }

    /// `-p` with every port; `--config`: queue q of each port polled by
    /// lcore q + 1; and the `--eth-dest` of each port.
    pub fn app_args(&self) -> Vec<String> {
        let config: Vec<String> = (0..N)
            .flat_map(|p| (0..self.queues).map(move |q| format!("({p},{q},{})", q + 1)))
            .collect();
        let mask = format!("{:#x}", (1u32 << N) - 1);
        let mut args = vec!["-p".into(), mask, "--config".into(), config.join(",")];
        for s in &self.sites {
            args.push(format!("--eth-dest={},{}", s.port, s.mac));
        }
        args
    }

    /// Moves the TAP devices the forwarder created into their namespaces
    /// and configures them; nothing to do for veth sites.
    pub fn attach_taps(&self) {
        if self.pmd != Pmd::Tap {
            return;
        }
        for s in &self.sites {
            run("ip", &["link", "set", &s.iface, "netns", &s.ns.name]);
            s.configure();
        }
    }
}
