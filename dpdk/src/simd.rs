//! AVX-512 paths over groups of eight packets: the headers of eight frames
//! read at once ([`Avx512::tagged_words`]), and eight IPv4 lookups at once
//! in a DIR-24-8 table, rte_lpm's or rte_fib's
//! ([`LpmTable::lookup_avx512`](crate::LpmTable::lookup_avx512),
//! [`Fib::lookup_avx512`](crate::Fib::lookup_avx512)).
//!
//! An [`Avx512`] exists only where the CPU has the instructions these
//! paths use, so holding one is the proof that calling them is sound: the
//! callers stay safe code, and each path's scalar twin stays the reference
//! it is tested equal to. Valgrind does not emulate AVX-512, so under
//! callgrind [`Avx512::detect`] finds none and the scalar paths run.

use crate::mbuf::{fields, Mbuf};

/// Proof that this CPU runs AVX-512F and AVX-512VL (with AVX2): made only
/// by [`Avx512::detect`]. The paths are compiled for exactly these
/// (`target_feature(enable = "avx512f,avx512vl,avx2")`).
#[derive(Clone, Copy, Debug)]
pub struct Avx512(Detected);

#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy, Debug)]
struct Detected;

/// Never made off x86_64: no [`Avx512`] exists there.
#[cfg(not(target_arch = "x86_64"))]
#[derive(Clone, Copy, Debug)]
enum Detected {}

impl Avx512 {
    /// The proof, if this CPU has the features.
    pub fn detect() -> Option<Avx512> {
        #[cfg(target_arch = "x86_64")]
        if is_x86_feature_detected!("avx512f")
            && is_x86_feature_detected!("avx512vl")
            && is_x86_feature_detected!("avx2")
        {
            return Some(Avx512(Detected));
        }
        None
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
        #[cfg(target_arch = "x86_64")]
        {
            let Avx512(Detected) = self;
            // SAFETY: an Avx512 exists only where detect() found the
            // features; the slices hold `groups` groups.
            unsafe { x86::tagged_words(pkts, groups, what, words, tagged) };
            groups * 8
        }
        #[cfg(not(target_arch = "x86_64"))]
        match self.0 {}
    }
}

/// What [`Avx512::tagged_words`] reads: the frames of at least `min_len`
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

    /// The scalar reference: what [`Avx512::tagged_words`] gives for one
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

#[cfg(target_arch = "x86_64")]
pub(crate) mod x86 {
    use std::arch::x86_64::*;

    use super::{fields, Dir24_8Entry, Mbuf, TaggedWord};

    /// Entries of a tbl8 group.
    const TBL8_GROUP_ENTRIES: i32 = 256;

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
    /// The CPU has the features; `tbl24` holds 2^24 entries and `tbl8`
    /// every group an entry of either names (as `E` decodes them), and
    /// both stay alive during the call; `out` is at least as long as
    /// `dsts`.
    #[target_feature(enable = "avx512f,avx512vl,avx2")]
    #[inline]
    pub(crate) unsafe fn dir24_8_lookup<E: Dir24_8Entry>(
        tbl24: *const i32,
        tbl8: *const i32,
        dsts: &[u32],
        miss: u16,
        out: &mut [u16],
    ) -> usize {
        let groups = dsts.len() / 8;
        let shift = |by: u32| _mm_cvtsi32_si128(by as i32);
        let group_bits = _mm256_set1_epi32(E::GROUP_BITS as i32);
        let group_mask = _mm256_set1_epi32(E::GROUP_MASK as i32);
        let found_bits = _mm256_set1_epi32(E::FOUND_BITS as i32);
        let absent = _mm256_set1_epi32(E::ABSENT as i32);
        let missed = _mm256_set1_epi32(i32::from(miss));
        let in_group_entry = _mm256_set1_epi32(TBL8_GROUP_ENTRIES - 1);
        for g in 0..groups {
            // SAFETY: group g is within both slices; `dst >> 8` is below
            // 2^24, inside tbl24; a group entry's tbl8 index is inside tbl8
            // (the caller's word; 64-bit indices, as a group times 256 may
            // not fit an i32).
            unsafe {
                let dst = _mm256_loadu_si256(dsts.as_ptr().add(8 * g).cast());
                let mut e = _mm256_i32gather_epi32::<4>(tbl24, _mm256_srli_epi32::<8>(dst));
                let in_group = _mm256_cmpeq_epi32_mask(_mm256_and_si256(e, group_bits), group_bits);
                if in_group != 0 {
                    let group = _mm256_and_si256(_mm256_srl_epi32(e, shift(E::GROUP_SHIFT)), group_mask);
                    let index = _mm256_add_epi32(_mm256_slli_epi32::<8>(group), _mm256_and_si256(dst, in_group_entry));
                    e = _mm512_mask_i64gather_epi32::<4>(e, in_group, _mm512_cvtepu32_epi64(index), tbl8);
                }
                let found = _mm256_cmpneq_epi32_mask(_mm256_and_si256(e, found_bits), absent);
                let hop = _mm256_mask_blend_epi32(found, missed, _mm256_srl_epi32(e, shift(E::HOP_SHIFT)));
                _mm_storeu_si128(out.as_mut_ptr().add(8 * g).cast(), _mm256_cvtepi32_epi16(hop));
            }
        }
        groups * 8
    }

    /// `bswap` of each 32-bit lane.
    #[target_feature(enable = "avx512f,avx512vl,avx2")]
    pub(crate) fn bswap32(v: __m256i) -> __m256i {
        let order = _mm256_setr_epi8(
            3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12, 3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12,
        );
        _mm256_shuffle_epi8(v, order)
    }

    /// Where the frames of the eight mbufs at `group` start, and their
    /// `data_len`s.
    ///
    /// # Safety
    /// `group` points at eight live mbufs.
    #[target_feature(enable = "avx512f,avx512vl,avx2")]
    unsafe fn frames(group: *const Mbuf) -> (__m512i, __m512i) {
        let zero = std::ptr::null::<i64>();
        // SAFETY: an Mbuf is a pointer (repr(transparent)), so the eight
        // are 64 bytes; each gather reads a field inside a live mbuf.
        unsafe {
            let mbufs = _mm512_loadu_si512(group.cast());
            let buf_addr = _mm512_i64gather_epi64::<1>(mbufs, zero.wrapping_byte_add(fields::BUF_ADDR));
            let data_off = _mm512_i64gather_epi32::<1>(mbufs, zero.cast::<i32>().wrapping_byte_add(fields::DATA_OFF));
            let data_len = _mm512_i64gather_epi32::<1>(mbufs, zero.cast::<i32>().wrapping_byte_add(fields::DATA_LEN));
            let low16 = _mm256_set1_epi32(0xffff);
            let start = _mm512_add_epi64(buf_addr, _mm512_cvtepu32_epi64(_mm256_and_si256(data_off, low16)));
            (start, _mm512_cvtepu32_epi64(_mm256_and_si256(data_len, low16)))
        }
    }

    #[target_feature(enable = "avx512f,avx512vl,avx2")]
    fn prefetch(starts: __m512i) {
        let mut each = [0u64; 8];
        // SAFETY: stores 64 bytes into an array of 64.
        unsafe { _mm512_storeu_si512(each.as_mut_ptr().cast(), starts) };
        for p in each {
            crate::prefetch(p as *const u8);
        }
    }

    /// The 4 bytes at `at` of each frame (starting at `starts`) of `lanes`,
    /// as loaded; 0 in the other lanes.
    ///
    /// # Safety
    /// Each frame of `lanes` holds `at + 4` bytes.
    #[target_feature(enable = "avx512f,avx512vl,avx2")]
    unsafe fn word_at(starts: __m512i, lanes: __mmask8, at: u16) -> __m256i {
        let at = std::ptr::null::<i32>().wrapping_byte_add(usize::from(at));
        // SAFETY: the lanes read are within their frames (the caller's
        // word); the others are not read.
        unsafe { _mm512_mask_i64gather_epi32::<1>(_mm256_setzero_si256(), lanes, starts, at) }
    }

    /// [`super::Avx512::tagged_words`] over `groups` groups.
    ///
    /// # Safety
    /// The CPU has the features; `pkts` and `words` hold `8 * groups`
    /// items and `tagged` `groups`; `what` reads within its `min_len`.
    #[target_feature(enable = "avx512f,avx512vl,avx2")]
    pub(super) unsafe fn tagged_words(
        pkts: &[Mbuf],
        groups: usize,
        what: &TaggedWord,
        words: &mut [u32],
        tagged: &mut [u8],
    ) {
        let min_len = _mm512_set1_epi64(i64::from(what.min_len));
        let tag = _mm256_set1_epi32(i32::from(u16::from_ne_bytes(what.tag.to_be_bytes())));
        let low16 = _mm256_set1_epi32(0xffff);
        // SAFETY: the first group is within `pkts` (groups > 0).
        let (mut starts, mut lens) = unsafe { frames(pkts.as_ptr()) };
        prefetch(starts);
        for g in 0..groups {
            let (start, len) = (starts, lens);
            if g + 1 < groups {
                // SAFETY: group g + 1 is within `pkts` (8 * groups long).
                (starts, lens) = unsafe { frames(pkts.as_ptr().add(8 * (g + 1))) };
                prefetch(starts);
            }
            let long = _mm512_cmpge_epu64_mask(len, min_len);
            // SAFETY: only lanes whose frame holds `min_len` bytes are
            // read, and 4 bytes at `tag_at` end within them (the caller's
            // word).
            let at_tag = unsafe { word_at(start, long, what.tag_at) };
            let is_tagged = _mm256_mask_cmpeq_epi32_mask(long, _mm256_and_si256(at_tag, low16), tag);
            // SAFETY: as above (tagged lanes are long ones), for `word_at`.
            let word = unsafe { word_at(start, is_tagged, what.word_at) };
            // SAFETY: `words` holds 8 * groups words and `tagged` groups
            // bytes (the caller's word), so group g's are within them.
            unsafe {
                _mm256_storeu_si256(words.as_mut_ptr().add(8 * g).cast(), bswap32(word));
                *tagged.get_unchecked_mut(g) = is_tagged;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Eal, Mempool};

    #[test]
    fn tagged_words_reads_each_frame_as_the_scalar_reference() {
        let Some(simd) = Avx512::detect() else {
            eprintln!("this CPU has no AVX-512: tagged_words is not tested here");
            return;
        };
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
        let (mut words, mut tagged) = (vec![0; frames.len()], vec![0; frames.len() / 8 + 1]);
        let read = simd.tagged_words(&pkts, &what, &mut words, &mut tagged);
        assert_eq!(read, 80, "every whole group");
        let mut seen = 0;
        for (i, f) in frames.iter().enumerate().take(read) {
            let expected = what.read(f);
            assert_eq!(
                tagged[i / 8] >> (i % 8) & 1 == 1,
                expected.is_some(),
                "frame {i} of {} bytes",
                f.len()
            );
            assert_eq!(words[i], expected.unwrap_or(0), "frame {i}");
            seen += usize::from(expected.is_some());
        }
        assert!(seen > 20 && seen < read, "both kinds of frame: {seen} tagged");
        // A word read past min_len is refused.
        let past = TaggedWord { word_at: 31, ..what };
        assert_eq!(simd.tagged_words(&pkts, &past, &mut words, &mut tagged), 0);
        drop(pkts);
        assert_eq!(pool.in_use(), 0);
    }
}
