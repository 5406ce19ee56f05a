//! The poll-mode drivers the tests (and the bench) put a forwarder's ports
//! on when they are Linux interfaces.

/// A poll-mode driver of a DPDK port on a Linux interface.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pmd {
    /// A packet socket with mmap'ed rings on an existing interface.
    AfPacket,
    /// An AF_XDP socket per queue on an existing interface.
    AfXdp,
    /// A TAP device the driver creates.
    Tap,
}

impl Pmd {
    /// Its short name: `af_packet`, `af_xdp`, `tap`.
    pub fn id(self) -> &'static str {
        match self {
            Pmd::AfPacket => "af_packet",
            Pmd::AfXdp => "af_xdp",
            Pmd::Tap => "tap",
        }
    }

    /// `--vdev` of port `port` on interface `iface` with `queues` RX/TX
    /// queues; a caller appends more devargs (`,mac=...`) as it needs.
    pub fn vdev(self, port: u16, iface: &str, queues: u16) -> String {
        match self {
            Pmd::AfPacket => format!("--vdev=net_af_packet{port},iface={iface},qpairs={queues}"),
            Pmd::AfXdp => format!("--vdev=net_af_xdp{port},iface={iface},queue_count={queues}"),
            // A TAP port has as many queues as l3fwd sets up.
            Pmd::Tap => format!("--vdev=net_tap{port},iface={iface}"),
        }
    }
}
