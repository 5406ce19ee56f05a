//! Vector paths over groups of eight packets: the headers of eight frames
//! read at once ([`Simd::tagged_words`]), and eight IPv4 lookups at once
//! in a DIR-24-8 table, rte_lpm's or rte_fib's
//! ([`LpmTable::lookup_simd`](crate::LpmTable::lookup_simd),
//! [`Fib::lookup_simd`](crate::Fib::lookup_simd)); each in AVX-512
//! ([`avx512`]) and in AVX2 ([`avx2`]).
//!
//! A [`Simd`] exists only where the CPU has the instructions of the path
//! it names, so holding one is the proof that calling it is sound: the
//! callers stay safe code, and each path's scalar twin stays the reference
//! it is tested equal to. Which path runs follows EAL's maximum SIMD
//! bitwidth, as DPDK's own libraries and drivers choose theirs (rte_fib's
//! AVX-512 lookup among them): AVX2 at EAL's default on x86 (256 bits),
//! AVX-512 with `--force-max-simd-bitwidth=512`, none (scalar) below 256.
//! Valgrind emulates AVX2 but not AVX-512, so callgrind counts the AVX2
//! path.

use crate::mbuf::Mbuf;
use crate::Eal;

#[cfg(target_arch = "x86_64")]
mod avx2;
#[cfg(target_arch = "x86_64")]
mod avx512;

/// Proof that this CPU runs one of the vector paths, and which: made only
/// by [`Simd::detect`] and [`Simd::available`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Simd(Isa);

/// The instruction set of a path, each compiled for exactly these
/// features (`target_feature(enable = ...)`).
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Isa {
    /// `avx2`.
    Avx2,
    /// `avx512f,avx512vl,avx2`.
    Avx512,
}

/// Never made off x86_64: no [`Simd`] exists there.
#[cfg(not(target_arch = "x86_64"))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Isa {}

impl Simd {
    /// The widest path this CPU runs within EAL's maximum SIMD bitwidth
    /// (`--force-max-simd-bitwidth`); None: the scalar paths.
    pub fn detect(eal: &Eal) -> Option<Simd> {
        let allowed = eal.max_simd_bitwidth();
        Simd::available().into_iter().find(|simd| simd.bits() <= allowed)
    }

    /// Every path this CPU runs, widest first, whatever EAL allows: for
    /// tests of each against the scalar paths.
    pub fn available() -> Vec<Simd> {
        #[cfg(target_arch = "x86_64")]
        {
            let avx512 = is_x86_feature_detected!("avx512f")
                && is_x86_feature_detected!("avx512vl")
                && is_x86_feature_detected!("avx2");
            let avx2 = is_x86_feature_detected!("avx2");
            [(avx512, Isa::Avx512), (avx2, Isa::Avx2)]
                .into_iter()
                .filter_map(|(has, isa)| has.then_some(Simd(isa)))
                .collect()
        }
        #[cfg(not(target_arch = "x86_64"))]
        Vec::new()
    }

    /// The width of the path's widest registers, as EAL's bitwidth counts.
    pub fn bits(self) -> u16 {
        match self.0 {
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 => 256,
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512 => 512,
        }
    }

    /// The instruction set's name: `AVX2`, `AVX-512`.
    pub fn name(self) -> &'static str {
        match self.0 {
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 => "AVX2",
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512 => "AVX-512",
        }
    }

    /// Reads, of each whole group of eight packets of `pkts`, which frames
    /// are tagged as `what` says (bit `i` of `tagged[g]` for packet `8g + i`)
    /// and the big-endian word `what` names of each tagged frame
    /// (`words[8g + i]`; 0 for a frame not tagged). Each group's frames are
    /// prefetched while the group before is read. Returns how many packets
    /// it read: a multiple of 8, as many as `pkts`, `words` and `tagged`
    /// have room for; none for a `what` that reads past its `min_len`.
    #[inline]
    pub fn tagged_words(self, pkts: &[Mbuf], what: &TaggedWord, words: &mut [u32], tagged: &mut [u8]) -> usize {
        let groups = pkts.len().min(words.len()).min(tagged.len() * 8) / 8;
        if groups == 0 || !what.reads_within_min_len() {
            return 0;
        }
        // In each arm: a Simd exists only where available() found its
        // features; the slices hold `groups` groups and `what` reads within
        // its min_len.
        match self.0 {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: as above, for AVX2.
            Isa::Avx2 => unsafe { avx2::tagged_words(pkts, groups, what, words, tagged) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: as above, for AVX-512.
            Isa::Avx512 => unsafe { avx512::tagged_words(pkts, groups, what, words, tagged) },
        }
        groups * 8
    }

    /// Looks up each of `dsts` in the DIR-24-8 table of `tbl24` and `tbl8`,
    /// whose entries `E` decodes, eight at a time: the low 16 bits of
    /// each next hop found, or `miss`, into `out`. Returns how many it
    /// looked up (the whole groups of eight); the caller looks up the rest.
    ///
    /// Both libraries' tables may be written while they are read (live
    /// tables, with atomic 4-byte stores): each element of a gather is one
    /// aligned 4-byte load, read whole, as DPDK's own vector lookups
    /// (rte_fib's AVX-512 one) rely on; x86 keeps loads in order, so the
    /// tbl8 gather (whose addresses come from the tbl24 one) sees a group
    /// linked in full, as the scalar lookups' acquire loads do.
    ///
    /// # Safety
    /// `tbl24` holds 2^24 entries and `tbl8` every group an entry of
    /// either names (as `E` decodes them), and both stay alive during the
    /// call; `out` is at least as long as `dsts`.
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    pub(crate) unsafe fn dir24_8_lookup<E: Dir24_8Entry>(
        self,
        tbl24: *const i32,
        tbl8: *const i32,
        dsts: &[u32],
        miss: u16,
        out: &mut [u16],
    ) -> usize {
        // In each arm: a Simd exists only where available() found its
        // features; the tables are the caller's word.
        match self.0 {
            // SAFETY: as above, for AVX2.
            Isa::Avx2 => unsafe { avx2::dir24_8_lookup::<E>(tbl24, tbl8, dsts, miss, out) },
            // SAFETY: as above, for AVX-512.
            Isa::Avx512 => unsafe { avx512::dir24_8_lookup::<E>(tbl24, tbl8, dsts, miss, out) },
        }
    }
}

/// Starts loading the first cache line at each of eight addresses.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn prefetch_each(addrs: [u64; 8]) {
    for p in addrs {
        crate::prefetch(p as *const u8);
    }
}

/// What [`Simd::tagged_words`] reads: the frames of at least `min_len`
/// bytes whose big-endian u16 at `tag_at` is `tag` are tagged, and of
/// each, the big-endian u32 at `word_at` is read. Both reads must lie
/// within `min_len` (4 bytes are read at `tag_at`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TaggedWord {
    pub min_len: u16,
    pub tag_at: u16,
    pub tag: u16,
    pub word_at: u16,
}

impl TaggedWord {
    /// Whether both reads end within `min_len` bytes.
    pub const fn reads_within_min_len(&self) -> bool {
        self.tag_at as u32 + 4 <= self.min_len as u32 && self.word_at as u32 + 4 <= self.min_len as u32
    }

    /// The tag as a little-endian load of its two bytes reads it, in the
    /// low 16 bits: what the vector paths compare each frame's with.
    const fn tag_as_loaded(&self) -> i32 {
        u16::from_ne_bytes(self.tag.to_be_bytes()) as i32
    }

    /// The scalar reference: what [`Simd::tagged_words`] gives for one
    /// frame, the word if tagged.
    pub fn read(&self, frame: &[u8]) -> Option<u32> {
        let at = |i: u16, n: usize| frame.get(usize::from(i)..usize::from(i) + n);
        let tagged = frame.len() >= usize::from(self.min_len) && at(self.tag_at, 2)? == self.tag.to_be_bytes();
        tagged.then(|| Some(u32::from_be_bytes(at(self.word_at, 4)?.try_into().ok()?)))?
    }
}

/// How a DIR-24-8 table (rte_lpm's, rte_fib's) encodes its 4-byte entries,
/// for the lookups of eight addresses at once: the two libraries differ
/// only in where an entry keeps its bits. Constants of a type, so that
/// each library's lookup is compiled with them (shifts by an immediate).
#[cfg(target_arch = "x86_64")]
pub(crate) trait Dir24_8Entry {
    /// An entry names a tbl8 group when it has all these bits...
    const GROUP_BITS: u32;
    /// ...the group `(entry >> GROUP_SHIFT) & GROUP_MASK`.
    const GROUP_SHIFT: u32;
    const GROUP_MASK: u32;
    /// An entry holds a next hop when `entry & FOUND_BITS != ABSENT`...
    const FOUND_BITS: u32;
    const ABSENT: u32;
    /// ...the hop `entry >> HOP_SHIFT` (its low 16 bits are kept).
    const HOP_SHIFT: u32;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Eal, Mempool};

    #[test]
    fn tagged_words_reads_each_frame_as_the_scalar_reference() {
        let eal = Eal::for_tests(&[]).expect("EAL init");
        let pool = Mempool::create(eal, "test_tagged_words", 256, 0, 0).expect("pool");
        let what = TaggedWord {
            min_len: 34,
            tag_at: 12,
            tag: 0x0800,
            word_at: 30,
        };
        // Frames of every length from 0 to 69 bytes, most of them tagged,
        // each byte different.
        let frames: Vec<Vec<u8>> = (0..83u32)
            .map(|i| {
                let mut f: Vec<u8> = (0..(i * 13) % 70).map(|b| (b * 31 + i * 17) as u8).collect();
                if i % 4 != 0 && f.len() >= 14 {
                    f[12..14].copy_from_slice(&what.tag.to_be_bytes());
                }
                f
            })
            .collect();
        let pkts: Vec<Mbuf> = frames
            .iter()
            .map(|f| Mbuf::from_frame(&pool, f).expect("an mbuf"))
            .collect();
        let available = Simd::available();
        if available.is_empty() {
            eprintln!("this CPU has no vector path: tagged_words is not tested here");
        }
        for simd in available {
            tagged_words_read_as_the_scalar_reference(simd, &pkts, &frames, &what);
        }
        drop(pkts);
        assert_eq!(pool.in_use(), 0);
    }

    fn tagged_words_read_as_the_scalar_reference(simd: Simd, pkts: &[Mbuf], frames: &[Vec<u8>], what: &TaggedWord) {
        let (mut words, mut tagged) = (vec![0; frames.len()], vec![0; frames.len() / 8 + 1]);
        let read = simd.tagged_words(pkts, what, &mut words, &mut tagged);
        assert_eq!(read, 80, "every whole group");
        let mut seen = 0;
        for (i, f) in frames.iter().enumerate().take(read) {
            let expected = what.read(f);
            assert_eq!(
                tagged[i / 8] >> (i % 8) & 1 == 1,
                expected.is_some(),
                "{}: frame {i} of {} bytes",
                simd.name(),
                f.len()
            );
            assert_eq!(words[i], expected.unwrap_or(0), "{}: frame {i}", simd.name());
            seen += usize::from(expected.is_some());
        }
        assert!(seen > 20 && seen < read, "both kinds of frame: {seen} tagged");
        // A word read past min_len is refused.
        let past = TaggedWord { word_at: 31, ..*what };
        assert_eq!(simd.tagged_words(pkts, &past, &mut words, &mut tagged), 0);
    }
}
