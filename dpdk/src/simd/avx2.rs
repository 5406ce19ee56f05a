//! The AVX2 paths: eight lanes of 32 bits in a 256-bit register, and
//! what needs 64 bits a lane (mbuf pointers, table indices) in two of
//! four lanes each.

use std::arch::x86_64::*;
use std::marker::PhantomData;

use super::{prefetch_each, Dir24_8Entry, TaggedWord};
use crate::mbuf::{fields, Mbuf};

/// Entries of a tbl8 group: DIR-24-8's last 8 bits.
const TBL8_GROUP_ENTRIES: i32 = 256;

/// What a DIR-24-8 lookup of entries `E` works with in every lane: where
/// `E` keeps an entry's fields, and the hop a miss gets; and the steps
/// both instruction sets take alike.
pub(super) struct Lanes<E> {
    pub(super) group_bits: __m256i,
    pub(super) found_bits: __m256i,
    pub(super) absent: __m256i,
    pub(super) missed: __m256i,
    group_mask: __m256i,
    in_group_entry: __m256i,
    entry: PhantomData<E>,
}

impl<E: Dir24_8Entry> Lanes<E> {
    #[target_feature(enable = "avx2")]
    #[inline]
    pub(super) fn new(miss: u16) -> Self {
        Lanes {
            group_bits: _mm256_set1_epi32(E::GROUP_BITS as i32),
            found_bits: _mm256_set1_epi32(E::FOUND_BITS as i32),
            absent: _mm256_set1_epi32(E::ABSENT as i32),
            missed: _mm256_set1_epi32(i32::from(miss)),
            group_mask: _mm256_set1_epi32(E::GROUP_MASK as i32),
            in_group_entry: _mm256_set1_epi32(TBL8_GROUP_ENTRIES - 1),
            entry: PhantomData,
        }
    }

    /// The eight destinations at `dsts`, and their tbl24 entries.
    ///
    /// # Safety
    /// `dsts` points at eight; `tbl24` holds 2^24 entries.
    #[target_feature(enable = "avx2")]
    #[inline]
    pub(super) unsafe fn tbl24_entries(&self, tbl24: *const i32, dsts: *const u32) -> (__m256i, __m256i) {
        // SAFETY: `dsts` points at eight; `dst >> 8` is below 2^24,
        // inside tbl24 (the caller's word).
        unsafe {
            let dst = _mm256_loadu_si256(dsts.cast());
            (dst, _mm256_i32gather_epi32::<4>(tbl24, _mm256_srli_epi32::<8>(dst)))
        }
    }

    /// Where in tbl8 each lane's destination has its entry, if its tbl24
    /// entry `e` names a group.
    #[target_feature(enable = "avx2")]
    #[inline]
    pub(super) fn tbl8_index(&self, e: __m256i, dst: __m256i) -> __m256i {
        let group = _mm256_and_si256(
            _mm256_srl_epi32(e, _mm_cvtsi32_si128(E::GROUP_SHIFT as i32)),
            self.group_mask,
        );
        _mm256_add_epi32(
            _mm256_slli_epi32::<8>(group),
            _mm256_and_si256(dst, self.in_group_entry),
        )
    }

    /// The hop of each lane's entry `e`, with the bits above it.
    #[target_feature(enable = "avx2")]
    #[inline]
    pub(super) fn hop(&self, e: __m256i) -> __m256i {
        _mm256_srl_epi32(e, _mm_cvtsi32_si128(E::HOP_SHIFT as i32))
    }
}

/// [`super::Simd::dir24_8_lookup`] in AVX2: the tbl8 entries in two
/// gathers of four, with 64-bit indices (a group times 256 may not fit
/// an i32).
///
/// # Safety
/// The CPU has AVX2; as [`super::Simd::dir24_8_lookup`].
#[target_feature(enable = "avx2")]
#[inline]
pub(super) unsafe fn dir24_8_lookup<E: Dir24_8Entry>(
    tbl24: *const i32,
    tbl8: *const i32,
    dsts: &[u32],
    miss: u16,
    out: &mut [u16],
) -> usize {
    let groups = dsts.len() / 8;
    let lanes = Lanes::<E>::new(miss);
    let low16 = _mm256_set1_epi32(0xffff);
    for g in 0..groups {
        // SAFETY: group g is within both slices; tbl24 holds 2^24 entries
        // and a group entry's tbl8 index is inside tbl8 (the caller's
        // word); the other lanes are not read.
        unsafe {
            let (dst, mut e) = lanes.tbl24_entries(tbl24, dsts.as_ptr().add(8 * g));
            let in_group = _mm256_cmpeq_epi32(_mm256_and_si256(e, lanes.group_bits), lanes.group_bits);
            if _mm256_testz_si256(in_group, in_group) == 0 {
                let [e_lo, e_hi] = halves(e);
                let [index_lo, index_hi] = halves(lanes.tbl8_index(e, dst));
                let [in_lo, in_hi] = halves(in_group);
                let lo = _mm256_mask_i64gather_epi32::<4>(e_lo, tbl8, _mm256_cvtepu32_epi64(index_lo), in_lo);
                let hi = _mm256_mask_i64gather_epi32::<4>(e_hi, tbl8, _mm256_cvtepu32_epi64(index_hi), in_hi);
                e = _mm256_set_m128i(hi, lo);
            }
            let absent = _mm256_cmpeq_epi32(_mm256_and_si256(e, lanes.found_bits), lanes.absent);
            let hop = _mm256_and_si256(lanes.hop(e), low16);
            let [lo, hi] = halves(_mm256_blendv_epi8(hop, lanes.missed, absent));
            // Each lane is below 2^16, so the saturating pack keeps it.
            _mm_storeu_si128(out.as_mut_ptr().add(8 * g).cast(), _mm_packus_epi32(lo, hi));
        }
    }
    groups * 8
}

/// The low and the high 128 bits.
#[target_feature(enable = "avx2")]
#[inline]
fn halves(v: __m256i) -> [__m128i; 2] {
    [_mm256_castsi256_si128(v), _mm256_extracti128_si256::<1>(v)]
}

/// `bswap` of each 32-bit lane.
#[target_feature(enable = "avx2")]
#[inline]
pub(super) fn bswap32(v: __m256i) -> __m256i {
    let order = _mm256_setr_epi8(
        3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12, 3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12,
    );
    _mm256_shuffle_epi8(v, order)
}

/// Where the frames of the four mbufs at `four` start (64 bits a lane),
/// and their `data_len`s (32).
///
/// # Safety
/// `four` points at four live mbufs.
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn frames(four: *const Mbuf) -> (__m256i, __m128i) {
    let zero = std::ptr::null::<i64>();
    // SAFETY: an Mbuf is a pointer (repr(transparent)), so the four are
    // 32 bytes; each gather reads a field inside a live mbuf.
    unsafe {
        let mbufs = _mm256_loadu_si256(four.cast());
        let buf_addr = _mm256_i64gather_epi64::<1>(zero.wrapping_byte_add(fields::BUF_ADDR), mbufs);
        let data_off = _mm256_i64gather_epi32::<1>(zero.cast::<i32>().wrapping_byte_add(fields::DATA_OFF), mbufs);
        let data_len = _mm256_i64gather_epi32::<1>(zero.cast::<i32>().wrapping_byte_add(fields::DATA_LEN), mbufs);
        let low16 = _mm_set1_epi32(0xffff);
        let start = _mm256_add_epi64(buf_addr, _mm256_cvtepu32_epi64(_mm_and_si128(data_off, low16)));
        (start, _mm_and_si128(data_len, low16))
    }
}

/// Where the frames of the eight mbufs at `group` start (two halves of
/// four), and their `data_len`s (eight lanes).
///
/// # Safety
/// `group` points at eight live mbufs.
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn frames_of_eight(group: *const Mbuf) -> ([__m256i; 2], __m256i) {
    // SAFETY: both fours are within the eight.
    let ((lo, len_lo), (hi, len_hi)) = unsafe { (frames(group), frames(group.add(4))) };
    let mut each = [0u64; 8];
    // SAFETY: stores 2 x 32 bytes into an array of 64.
    unsafe {
        _mm256_storeu_si256(each.as_mut_ptr().cast(), lo);
        _mm256_storeu_si256(each.as_mut_ptr().add(4).cast(), hi);
    }
    prefetch_each(each);
    ([lo, hi], _mm256_set_m128i(len_hi, len_lo))
}

/// The 4 bytes at `at` of each frame (starting at `starts`) of `lanes`
/// (all bits set in a lane to read), as loaded; 0 in the other lanes.
///
/// # Safety
/// Each frame of `lanes` holds `at + 4` bytes.
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn word_at(starts: [__m256i; 2], lanes: __m256i, at: u16) -> __m256i {
    let at = std::ptr::null::<i32>().wrapping_byte_add(usize::from(at));
    let [lanes_lo, lanes_hi] = halves(lanes);
    let zero = _mm_setzero_si128();
    // SAFETY: the lanes read are within their frames (the caller's
    // word); the others are not read.
    unsafe {
        let lo = _mm256_mask_i64gather_epi32::<1>(zero, at, starts[0], lanes_lo);
        let hi = _mm256_mask_i64gather_epi32::<1>(zero, at, starts[1], lanes_hi);
        _mm256_set_m128i(hi, lo)
    }
}

/// [`super::Simd::tagged_words`] over `groups` groups, in AVX2; each
/// group's frames are prefetched as the group before is read.
///
/// # Safety
/// The CPU has AVX2; `pkts` and `words` hold `8 * groups` items and
/// `tagged` `groups`; `what` reads within its `min_len`.
#[target_feature(enable = "avx2")]
pub(super) unsafe fn tagged_words(
    pkts: &[Mbuf],
    groups: usize,
    what: &TaggedWord,
    words: &mut [u32],
    tagged: &mut [u8],
) {
    // Lengths are below 2^16, so a signed compare with min_len - 1 is >=.
    let shorter = _mm256_set1_epi32(i32::from(what.min_len) - 1);
    let tag = _mm256_set1_epi32(what.tag_as_loaded());
    let low16 = _mm256_set1_epi32(0xffff);
    // SAFETY: the first group is within `pkts` (groups > 0).
    let (mut starts, mut lens) = unsafe { frames_of_eight(pkts.as_ptr()) };
    for g in 0..groups {
        let (start, len) = (starts, lens);
        if g + 1 < groups {
            // SAFETY: group g + 1 is within `pkts` (8 * groups long).
            (starts, lens) = unsafe { frames_of_eight(pkts.as_ptr().add(8 * (g + 1))) };
        }
        let long = _mm256_cmpgt_epi32(len, shorter);
        // SAFETY: only lanes whose frame holds `min_len` bytes are read,
        // and 4 bytes at `tag_at` end within them (the caller's word).
        let at_tag = unsafe { word_at(start, long, what.tag_at) };
        let is_tagged = _mm256_and_si256(long, _mm256_cmpeq_epi32(_mm256_and_si256(at_tag, low16), tag));
        // SAFETY: as above (tagged lanes are long ones), for `word_at`.
        let word = unsafe { word_at(start, is_tagged, what.word_at) };
        // SAFETY: `words` holds 8 * groups words and `tagged` groups
        // bytes (the caller's word), so group g's are within them.
        unsafe {
            _mm256_storeu_si256(words.as_mut_ptr().add(8 * g).cast(), bswap32(word));
            *tagged.get_unchecked_mut(g) = _mm256_movemask_ps(_mm256_castsi256_ps(is_tagged)) as u8;
        }
    }
}
