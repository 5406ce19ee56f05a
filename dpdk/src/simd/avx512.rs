//! The AVX-512 paths (`avx512f,avx512vl,avx2`): eight mbuf pointers, or
//! eight 64-bit table indices, in one 512-bit register.

use std::arch::x86_64::*;

use super::avx2::{bswap32, Lanes};
use super::{prefetch_each, Dir24_8Entry, TaggedWord};
use crate::mbuf::{fields, Mbuf};

/// [`super::Simd::dir24_8_lookup`] in AVX-512.
///
/// # Safety
/// The CPU has the features; as [`super::Simd::dir24_8_lookup`].
#[target_feature(enable = "avx512f,avx512vl,avx2")]
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
    for g in 0..groups {
        // SAFETY: group g is within both slices; tbl24 holds 2^24 entries
        // and a group entry's tbl8 index is inside tbl8 (the caller's
        // word; 64-bit indices, as a group times 256 may not fit an i32).
        unsafe {
            let (dst, mut e) = lanes.tbl24_entries(tbl24, dsts.as_ptr().add(8 * g));
            let in_group = _mm256_cmpeq_epi32_mask(_mm256_and_si256(e, lanes.group_bits), lanes.group_bits);
            if in_group != 0 {
                let index = _mm512_cvtepu32_epi64(lanes.tbl8_index(e, dst));
                e = _mm512_mask_i64gather_epi32::<4>(e, in_group, index, tbl8);
            }
            let found = _mm256_cmpneq_epi32_mask(_mm256_and_si256(e, lanes.found_bits), lanes.absent);
            let hop = _mm256_mask_blend_epi32(found, lanes.missed, lanes.hop(e));
            _mm_storeu_si128(out.as_mut_ptr().add(8 * g).cast(), _mm256_cvtepi32_epi16(hop));
        }
    }
    groups * 8
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
    prefetch_each(each);
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

/// [`super::Simd::tagged_words`] over `groups` groups.
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
    let tag = _mm256_set1_epi32(what.tag_as_loaded());
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
