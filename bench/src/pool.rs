//! The one pool model of every run: how many mbufs a forwarder's pool
//! needs to replay its pcap files, and the EAL memory that pool takes.
//!
//! A pcap port with `infinite_rx` holds one mbuf per frame of its file; a
//! forwarder also needs free mbufs for its RX bursts and TX buffers and for
//! the mempool caches of its lcores. Measured on one lcore: 2 x 4064 frames
//! forward in a pool of 8192, 2 x 4096 set up but forward nothing, so one
//! lcore needs some 64 more. A mempool cache may hoard up to 1.5 times its
//! size (C's 256: 384 mbufs) while another lcore starves, and eventdev runs
//! have two lcores: [`HEADROOM`] covers them, where the 256 `make bench` once
//! assumed did not cover one cache.

/// The C sample's smallest (stock) pool: what every program gets on the
/// default tables, and the step pools grow in (so that cells of nearby
/// flow counts share a C build).
pub const MIN_MBUFS: usize = 8192;
/// mbufs beyond the replayed frames (see the module's notes).
pub const HEADROOM: usize = 1024;
/// EAL memory of a run with the smallest pool, MB (tables, ports, EAL)...
const BASE_MEMORY_MB: usize = 1024;
/// ...plus this much per mbuf beyond it on 4 KB pages, KB: a 2176-byte
/// buffer and its headers take 2.3 KB, but with --no-huge a pool of 1M
/// mbufs (2387 MiB) fails in 4096 MB of EAL memory and fits in 5120
/// (measured)...
const MBUF_KB: usize = 6;
/// ...and on 2 MB pages, bytes: its headers take 2368, a ring slot 16
/// more (measured: C l3fwd built for 1M mbufs fills its pool within -m
/// 3564, and forwards in -m 3584).
const HUGE_MBUF_BYTES: usize = 2560;

/// The mbuf pool and EAL memory of a run.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Pool {
    /// mbufs per pool (l3fwd-rs's `--num-mbufs`, testpmd's
    /// `--total-num-mbufs`; the C binary must be built for it); None: each
    /// program's default.
    pub mbufs: Option<u32>,
    pub memory_mb: u32,
}

impl Pool {
    /// The runs on the default tables: every program's own pool.
    pub const DEFAULT: Pool = Pool {
        mbufs: None,
        memory_mb: BASE_MEMORY_MB as u32,
    };

    /// The pool of both forwarders (and testpmd) on two ports replaying
    /// `frames_per_port` frames each, with memory enough on either page size.
    pub fn replaying(frames_per_port: usize) -> Pool {
        let mbufs = mbufs_for(frames_per_port);
        Pool {
            mbufs: Some(u32::try_from(mbufs).unwrap_or(u32::MAX)),
            memory_mb: u32::try_from(memory_mb(mbufs, false)).unwrap_or(u32::MAX),
        }
    }
}

/// mbufs per pool for two ports replaying `frames_per_port` frames each,
/// in steps of the smallest pool.
pub fn mbufs_for(frames_per_port: usize) -> usize {
    (2 * frames_per_port + HEADROOM).next_multiple_of(MIN_MBUFS)
}

/// Whether a pool of `mbufs` holds two ports' `frames_per_port` frames each.
pub fn holds(mbufs: usize, frames_per_port: usize) -> bool {
    2 * frames_per_port + HEADROOM <= mbufs
}

/// EAL memory (-m) for a pool of `mbufs`, MB, on 2 MB pages if `huge`,
/// else on 4 KB ones (which take more: enough for both).
pub fn memory_mb(mbufs: usize, huge: bool) -> usize {
    let beyond = if huge {
        (mbufs * HUGE_MBUF_BYTES).div_ceil(1 << 20)
    } else {
        (mbufs.saturating_sub(MIN_MBUFS) * MBUF_KB).div_ceil(1024)
    };
    BASE_MEMORY_MB + beyond
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pools_hold_the_replayed_frames() {
        assert_eq!(mbufs_for(8), 8192, "the stock pool for few flows");
        assert_eq!(mbufs_for(512), 8192);
        assert_eq!(mbufs_for(3584), 8192);
        assert_eq!(mbufs_for(3585), 16_384, "7170 frames + headroom");
        assert_eq!(mbufs_for(1 << 15), (1 << 16) + 8192);
        assert_eq!(mbufs_for(1 << 19), (1 << 20) + 8192);
        assert!(holds(8192, 1024), "make bench's 1024 frames in the stock pool");
        assert!(holds(8192, 3584) && !holds(8192, 3585));
        assert!(!holds(8192, 4064), "two lcores' caches beside the measured edge");
        assert_eq!(memory_mb(8192, false), 1024, "as make bench");
        let big = Pool::replaying(1 << 19);
        assert_eq!((big.mbufs, big.memory_mb), (Some((1 << 20) + 8192), 1024 + 6144));
        assert_eq!(
            Pool::replaying(512),
            Pool {
                mbufs: Some(8192),
                memory_mb: 1024
            }
        );
    }

    #[test]
    fn memory_per_page_size() {
        // make bench-update's C (1M mbufs, 2368 MiB) on 2 MB pages: 1856
        // pages with hugepages::Memory's 64 spare.
        assert_eq!(memory_mb(1 << 20, true), 1024 + 2560);
        assert_eq!(memory_mb(32_768, true), 1024 + 80);
        assert_eq!(memory_mb(1 << 20, false), 1024 + 6096);
        assert!(memory_mb(1 << 16, true) < memory_mb(1 << 16, false));
    }
}
