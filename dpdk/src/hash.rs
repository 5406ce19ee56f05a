//! rte_hash exact-match tables with fixed-size keys and CRC hashing.
//!
//! rte_hash is a cuckoo hash: each key has two candidate buckets of 8
//! entries, and a lookup hashes the key, reads its bucket's signatures, then
//! compares the key itself. Each step waits on memory. The bulk lookup
//! ([`Hash::lookup_bulk`]) runs each step for a whole group of keys before
//! the next step (it prefetches every key's buckets, then compares
//! signatures and prefetches the matching key slots, then compares keys),
//! so the cache misses of the group overlap instead of queueing up: this is
//! the "multi-lookup" of l3fwd's exact-match mode.
//!
//! The key size is a type parameter (`Hash<16>` for IPv4 5-tuples,
//! `Hash<48>` for IPv6), so a key of the wrong length does not compile.

use std::ffi::{c_void, CString};
use std::mem::MaybeUninit;
use std::ptr::NonNull;

use crate::eal::Eal;
use crate::error::{clear_errno, DpdkError, Result};
use crate::sys;

/// Most keys one bulk lookup takes (RTE_HASH_LOOKUP_BULK_MAX, 64):
/// [`Hash::lookup_bulk`] makes one DPDK call per this many keys.
pub const HASH_BULK_MAX: usize = sys::RTE_HASH_LOOKUP_BULK_MAX as usize;

/// An exact-match table of `N`-byte keys, each mapped to a slot number
/// (its position) that callers use to index their own values. Built on one
/// thread, then only read.
///
/// The table stores keys, not values: [`Hash::add`] returns the key's
/// position, and the caller keeps its values in an array indexed by it
/// (the `em` crate keeps the output port of each rule there, as the C
/// sample's `ipv4_l3fwd_out_if`).
///
/// ```
/// let eal = dpdk::Eal::for_tests(256, &[])?;
/// let mut table = dpdk::Hash::<16>::new(eal, "doc_hash", 1024, 0)?;
/// let mut ports = vec![0u16; 1024]; // the values, by position
///
/// let key = [7u8; 16];
/// let pos = table.add(&key)?;
/// ports[pos as usize] = 3;
/// // Adding a key again finds its position.
/// assert_eq!(table.add(&key)?, pos);
///
/// assert_eq!(table.lookup(&key).map(|p| ports[p as usize]), Some(3));
/// assert_eq!(table.lookup(&[8u8; 16]), None);
/// # Ok::<(), dpdk::DpdkError>(())
/// ```
pub struct Hash<const N: usize> {
    raw: NonNull<sys::rte_hash>,
    /// The CRC rte_hash was given: [`Hash::lookup_bulk`] computes the same.
    crc: Crc,
    _eal: Eal,
}

// SAFETY: rte_hash lookups are safe from many threads as long as nobody
// writes; writes need &mut Hash.
unsafe impl<const N: usize> Send for Hash<N> {}
// SAFETY: as above: &Hash only allows lookups.
unsafe impl<const N: usize> Sync for Hash<N> {}

impl<const N: usize> Hash<N> {
    /// Creates a table for `entries` keys hashed with CRC32 on `socket`.
    /// `name` must be unique in the process (DPDK keeps a list of tables by
    /// name).
    pub fn new(eal: &Eal, name: &str, entries: u32, socket: i32) -> Result<Hash<N>> {
        let cname = CString::new(name).map_err(|_| DpdkError::invalid("hash name", "contains a NUL byte"))?;
        let crc = Crc::for_key::<N>();
        let params = sys::rte_hash_parameters {
            name: cname.as_ptr(),
            entries,
            key_len: N as u32,
            hash_func: Some(crc.function::<N>()),
            hash_func_init_val: CRC_INIT,
            socket_id: socket,
            ..Default::default()
        };
        clear_errno();
        // SAFETY: params and the name it points to are valid for the call;
        // rte_hash copies the name.
        let p = unsafe { sys::rte_hash_create(&params) };
        let raw = NonNull::new(p).ok_or_else(|| {
            let what = format_args!("cannot create hash table {name} of {entries} entries");
            DpdkError::from_allocation(what, eal_memory(entries, N))
        })?;
        Ok(Hash {
            raw,
            crc,
            _eal: eal.clone(),
        })
    }

    /// Adds `key` (or finds it, if present); returns its position, below
    /// the table's capacity. Fails (ENOSPC) when no room can be made for it.
    pub fn add(&mut self, key: &[u8; N]) -> Result<u32> {
        // SAFETY: key points at N = key_len bytes; &mut self excludes readers.
        let ret = unsafe { sys::rte_hash_add_key(self.raw.as_ptr(), key.as_ptr() as *const c_void) };
        if ret < 0 {
            return Err(DpdkError::from_code("cannot add key", ret));
        }
        Ok(ret as u32)
    }

    /// Position of `key`, if present: one key per call, each waiting for
    /// its own cache misses (the `--sequential-lookup` path).
    #[inline(always)]
    pub fn lookup(&self, key: &[u8; N]) -> Option<u32> {
        // SAFETY: key points at key_len bytes; the table is only read.
        let ret = unsafe { sys::rte_hash_lookup(self.raw.as_ptr(), key.as_ptr() as *const c_void) };
        (ret >= 0).then_some(ret as u32)
    }

    /// Positions of `keys`, looked up [`HASH_BULK_MAX`] at a time: each
    /// call probes its keys together so their memory latencies overlap.
    /// `each` gets the index of every key and its position, or None for a
    /// miss. Keys are passed by reference, never copied. Each key is hashed
    /// once, here, with the table's CRC inlined
    /// (`rte_hash_lookup_with_hash_bulk`), rather than by rte_hash through
    /// two calls per key; the answers are those of [`Hash::lookup`].
    ///
    /// ```
    /// # let eal = dpdk::Eal::for_tests(256, &[])?;
    /// // A key type exposes its bytes with AsRef, as em::Ipv4Key does.
    /// struct Key([u8; 16]);
    /// impl AsRef<[u8; 16]> for Key {
    ///     fn as_ref(&self) -> &[u8; 16] { &self.0 }
    /// }
    /// let mut table = dpdk::Hash::<16>::new(eal, "doc_bulk", 1024, 0)?;
    /// let keys: Vec<Key> = (0..8u8).map(|i| Key([i; 16])).collect();
    /// for k in keys.iter().step_by(2) {
    ///     table.add(k.as_ref())?; // keys 0, 2, 4, 6
    /// }
    /// // One call for the 8 keys.
    /// let mut found = [None; 8];
    /// table.lookup_bulk(&keys, |i, pos| found[i] = pos);
    /// let hits: Vec<bool> = found.iter().map(Option::is_some).collect();
    /// assert_eq!(hits, [true, false, true, false, true, false, true, false]);
    ///
    /// // Over more keys than one call takes, hits and misses mixed, the
    /// // answers are those of one lookup per key (rte_hash hashing it).
    /// let keys: Vec<Key> = (0..300u32)
    ///     .map(|i| Key(std::array::from_fn(|b| i.to_le_bytes()[b % 4])))
    ///     .collect();
    /// for k in keys.iter().step_by(3) {
    ///     table.add(k.as_ref())?;
    /// }
    /// let mut bulk = vec![None; keys.len()];
    /// table.lookup_bulk(&keys, |i, pos| bulk[i] = pos);
    /// let one_by_one: Vec<_> = keys.iter().map(|k| table.lookup(k.as_ref())).collect();
    /// assert_eq!(bulk, one_by_one);
    /// assert_eq!(bulk.iter().filter(|p| p.is_some()).count(), 100);
    /// # Ok::<(), dpdk::DpdkError>(())
    /// ```
    #[inline(always)]
    pub fn lookup_bulk<K: AsRef<[u8; N]>>(&self, keys: &[K], each: impl FnMut(usize, Option<u32>)) {
        match self.crc {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: Crc::Words is chosen only where the CPU has SSE4.2.
            Crc::Words => unsafe { self.lookup_bulk_sse42(keys, each) },
            Crc::Generic => self.lookup_bulk_hashed(keys, generic_crc::<N>, each),
        }
    }

    /// [`Hash::lookup_bulk`] with the CRC32-C instructions inlined.
    ///
    /// # Safety
    /// The CPU must have SSE4.2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "sse4.2")]
    unsafe fn lookup_bulk_sse42<K: AsRef<[u8; N]>>(&self, keys: &[K], each: impl FnMut(usize, Option<u32>)) {
        // SAFETY: the caller guarantees SSE4.2.
        self.lookup_bulk_hashed(keys, |key| unsafe { crc32c(key, CRC_INIT) }, each);
    }

    /// [`Hash::lookup_bulk`], hashing each key with `hash`, which must be
    /// the table's function.
    #[inline(always)]
    fn lookup_bulk_hashed<K: AsRef<[u8; N]>>(
        &self,
        keys: &[K],
        hash: impl Fn(&[u8; N]) -> u32,
        mut each: impl FnMut(usize, Option<u32>),
    ) {
        let mut ptrs = [MaybeUninit::<*const c_void>::uninit(); HASH_BULK_MAX];
        // Left uninitialised: a burst has at most 32 keys, and clearing 64
        // slots each time would cost more than the call's own bookkeeping.
        let mut sigs = [MaybeUninit::<u32>::uninit(); HASH_BULK_MAX];
        let mut positions = [MaybeUninit::<i32>::uninit(); HASH_BULK_MAX];
        for (chunk, keys) in keys.chunks(HASH_BULK_MAX).enumerate() {
            let n = keys.len();
            for ((p, sig), k) in ptrs.iter_mut().zip(sigs.iter_mut()).zip(keys) {
                p.write(k.as_ref().as_ptr() as *const c_void);
                sig.write(hash(k.as_ref()));
            }
            // SAFETY: the first n pointers and hashes are initialised; the
            // pointers point at key_len-byte keys that live for the call
            // (rte_hash reads only those n) and the hashes are the table's
            // own of those keys; positions holds n slots, which it writes;
            // the table is only read.
            unsafe {
                sys::rte_hash_lookup_with_hash_bulk(
                    self.raw.as_ptr(),
                    ptrs.as_mut_ptr() as *mut *const c_void,
                    sigs.as_mut_ptr() as *mut u32,
                    n as u32,
                    positions.as_mut_ptr() as *mut i32,
                )
            };
            for (i, pos) in positions[..n].iter().enumerate() {
                // SAFETY: rte_hash_lookup_with_hash_bulk wrote the first n positions.
                let pos = unsafe { pos.assume_init() };
                each(chunk * HASH_BULK_MAX + i, u32::try_from(pos).ok());
            }
        }
    }
}

/// The signature rte_hash calls for every key it hashes.
type HashFn = unsafe extern "C" fn(*const c_void, u32, u32) -> u32;

/// Initial value of every table's CRC (rte_hash's default).
const CRC_INIT: u32 = 0;

/// CRC32-C over the key: the key-size-specialised version below where the
/// CPU has SSE4.2 (every CPU DPDK's x86 build runs on) and the key is whole
/// 8-byte words, DPDK's generic rte_hash_crc otherwise. Chosen once per
/// table, so a table always hashes one way.
#[derive(Clone, Copy)]
enum Crc {
    #[cfg(target_arch = "x86_64")]
    Words,
    Generic,
}

impl Crc {
    fn for_key<const N: usize>() -> Crc {
        #[cfg(target_arch = "x86_64")]
        if N.is_multiple_of(8) && std::arch::is_x86_feature_detected!("sse4.2") {
            return Crc::Words;
        }
        Crc::Generic
    }

    /// The function rte_hash calls.
    fn function<const N: usize>(self) -> HashFn {
        match self {
            #[cfg(target_arch = "x86_64")]
            Crc::Words => crc32c_words::<N>,
            Crc::Generic => sys::shim_hash_crc,
        }
    }
}

/// DPDK's generic CRC of an N-byte key.
fn generic_crc<const N: usize>(key: &[u8; N]) -> u32 {
    // SAFETY: key points at N readable bytes.
    unsafe { sys::shim_hash_crc(key.as_ptr() as *const c_void, N as u32, CRC_INIT) }
}

/// [`crc32c`] as rte_hash calls it.
///
/// # Safety
/// `key` must point at N readable bytes and the CPU must have SSE4.2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse4.2")]
unsafe extern "C" fn crc32c_words<const N: usize>(key: *const c_void, _len: u32, init: u32) -> u32 {
    // SAFETY: rte_hash passes a key of key_len = N bytes ([u8; N] has
    // alignment 1); the caller guarantees SSE4.2.
    unsafe { crc32c(&*(key as *const [u8; N]), init) }
}

/// CRC32-C of an N-byte key (N a multiple of 8), 8 bytes per instruction,
/// unrolled for the key size: a fraction of the generic loop's
/// instructions per lookup.
///
/// # Safety
/// The CPU must have SSE4.2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse4.2")]
#[inline]
unsafe fn crc32c<const N: usize>(key: &[u8; N], init: u32) -> u32 {
    let mut crc = u64::from(init);
    for word in key.chunks_exact(8) {
        let word = u64::from_ne_bytes(word.try_into().expect("8-byte chunk"));
        crc = std::arch::x86_64::_mm_crc32_u64(crc, word);
    }
    crc as u32
}

impl<const N: usize> Drop for Hash<N> {
    fn drop(&mut self) {
        // SAFETY: the table is ours and no lookup can run (we hold &mut).
        unsafe { sys::rte_hash_free(self.raw.as_ptr()) }
    }
}
/// EAL memory an rte_hash of `entries` keys of `key_len` bytes takes
/// (DPDK 22.11's rte_cuckoo_hash.c, no extra flags): 64-byte buckets of 8
/// slots for the entries rounded up to a power of two, a key store of
/// `entries + 1` slots (the key after an 8-byte pointer, in 16-byte
/// steps), and a ring of 4-byte free-slot indexes.
pub(crate) fn eal_memory(entries: u32, key_len: usize) -> u64 {
    let slots = u64::from(entries) + 1;
    let buckets = u64::from(entries).next_power_of_two() / 8;
    let key_slot = (8 + key_len as u64).next_multiple_of(16);
    buckets * 64 + slots * key_slot + slots.next_power_of_two() * 4
}
