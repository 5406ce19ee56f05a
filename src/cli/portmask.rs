//! l3fwd's `-p PORTMASK`: the set of ports to use.

use std::fmt;

/// The ports `-p` enables, one bit per port id. C l3fwd keeps the mask in
/// 32 bits (`enabled_port_mask`), so port ids of 32 and more can never be
/// enabled, whatever `dpdk::MAX_PORTS` is; [`PortMask::contains`] checks
/// that bound once for every user.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PortMask(u32);

impl PortMask {
    /// The mask with these bits.
    pub const fn from_bits(bits: u32) -> PortMask {
        PortMask(bits)
    }

    /// Whether `port` is enabled.
    pub fn contains(self, port: u16) -> bool {
        u32::from(port) < u32::BITS && self.0 & (1 << port) != 0
    }

    /// The enabled port ids, ascending.
    pub fn ports(self) -> impl Iterator<Item = u16> {
        (0..u32::BITS as u16).filter(move |&port| self.contains(port))
    }

    /// True when no port is enabled.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
}

/// As C prints it: `0x3`.
impl fmt::LowerHex for PortMask {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::LowerHex::fmt(&self.0, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_name_ports_below_32_only() {
        let mask = PortMask::from_bits(0x8000_0005);
        assert_eq!(mask.ports().collect::<Vec<_>>(), [0, 2, 31]);
        assert!(mask.contains(31) && !mask.contains(1));
        assert!(!PortMask::from_bits(u32::MAX).contains(32));
        assert!(!PortMask::from_bits(u32::MAX).contains(u16::MAX));
        assert_eq!(format!("{mask:#x}"), "0x80000005");
    }
}
