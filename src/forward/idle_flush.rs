//! When an lcore flushes its TX buffers after a short poll round.
//!
//! Flushing as soon as the RX queues run dry wins latency, and costs
//! nothing where a TX call writes to memory (pcap, ring, memif, vhost-user,
//! a NIC's descriptor ring). On af_xdp, af_packet and tap every flush is a
//! system call, and a trickle of packets such as a TCP stream's would make
//! one per packet. There an idle flush waits until [`SYSCALL_TX_GAP_US`]
//! have passed since the lcore's last flush: the calls are bounded, and a
//! lone packet still leaves at once.

/// Drivers whose TX burst makes a system call: af_xdp's `sendto()` kick,
/// af_packet's `sendto()`, tap's `writev()`.
pub const SYSCALL_TX_DRIVERS: [&str; 3] = ["net_af_xdp", "net_af_packet", "net_tap"];

/// The least time between two idle flushes on an lcore that sends on a
/// port of [`SYSCALL_TX_DRIVERS`], in microseconds.
pub const SYSCALL_TX_GAP_US: u64 = 10;

/// Microseconds between idle flushes for an lcore that sends on ports of
/// `drivers`: `given` (`--idle-flush-gap`) if any, else
/// [`SYSCALL_TX_GAP_US`] if one of them makes system calls, else 0.
pub fn gap_us<'a>(drivers: impl IntoIterator<Item = &'a str>, given: Option<u64>) -> u64 {
    given.unwrap_or_else(|| match drivers.into_iter().any(|d| SYSCALL_TX_DRIVERS.contains(&d)) {
        true => SYSCALL_TX_GAP_US,
        false => 0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_lcores_sending_through_system_calls_space_their_idle_flushes() {
        assert_eq!(gap_us(["net_pcap", "net_ring"], None), 0);
        assert_eq!(gap_us(["net_pcap", "net_af_xdp"], None), SYSCALL_TX_GAP_US);
        assert_eq!(gap_us(["net_af_packet"], None), SYSCALL_TX_GAP_US);
        assert_eq!(gap_us(["net_tap"], None), SYSCALL_TX_GAP_US);
        assert_eq!(gap_us([], None), 0);
        assert_eq!(gap_us(["net_af_xdp"], Some(0)), 0, "the option wins");
        assert_eq!(gap_us(["net_memif"], Some(25)), 25);
    }
}
