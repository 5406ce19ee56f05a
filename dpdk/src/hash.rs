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
//!
//! Every table is lock-free for readers (`RTE_HASH_EXTRA_FLAGS_RW_CONCURRENCY_LF`):
//! one writer may add and delete keys while lcores look up, and a key's
//! value is stored with the key, so a lookup sees a key with its value or
//! not at all. [`Hash::writer`] attaches the table to the lcores' RCU QSBR
//! variable (`rte_hash_rcu_qsbr_add`, defer-queue mode): a deleted key's
//! slot is reused only after every lcore has passed a quiescent state. The
//! types carry the rules:
//! - the [`HashWriter`] is the one writer; it is not `Sync`, so it cannot
//!   go where the lcores read (a [`crate::Live`] value must be `Sync`):
//!
//! ```compile_fail
//! # let eal = dpdk::Eal::for_tests(&[]).unwrap();
//! let qsbr = std::sync::Arc::new(dpdk::Qsbr::new(1).unwrap());
//! let mut table = dpdk::Hash::<16>::new(eal, "doc_lf_sync", 64, 0).unwrap();
//! let writer = table.writer(&qsbr).unwrap();
//! let live = dpdk::Live::new(qsbr, (table, writer)); // HashWriter is not Sync
//! ```
//!
//! - nor can it be cloned into a second writer:
//!
//! ```compile_fail
//! # let eal = dpdk::Eal::for_tests(&[]).unwrap();
//! let qsbr = std::sync::Arc::new(dpdk::Qsbr::new(1).unwrap());
//! let mut table = dpdk::Hash::<16>::new(eal, "doc_lf_clone", 64, 0).unwrap();
//! let writer = table.writer(&qsbr).unwrap();
//! let second = writer.clone();
//! ```
//!
//! - once a writer exists, the table itself no longer adds (it answers an
//!   error), and both hold the table and the QSBR variable, which outlive
//!   whichever of them goes last.

use std::cell::Cell;
use std::ffi::{c_void, CString};
use std::marker::PhantomData;
use std::mem::MaybeUninit;
use std::ptr::NonNull;
use std::sync::Arc;

use crate::eal::Eal;
use crate::error::{clear_errno, DpdkError, Result};
use crate::rcu::Qsbr;
use crate::sys;

/// Most keys one bulk lookup takes (RTE_HASH_LOOKUP_BULK_MAX, 64):
/// [`Hash::lookup_bulk`] makes one DPDK call per this many keys.
pub const HASH_BULK_MAX: usize = sys::RTE_HASH_LOOKUP_BULK_MAX as usize;

/// An exact-match table of `N`-byte keys, each with a `usize` value
/// stored beside it. Filled on one thread with [`Hash::insert`], then read
/// by many; [`Hash::writer`] hands the writing to one [`HashWriter`] that
/// changes the table while it is read.
///
/// ```
/// let eal = dpdk::Eal::for_tests(&[])?;
/// let mut table = dpdk::Hash::<16>::new(eal, "doc_hash", 1024, 0)?;
///
/// let key = [7u8; 16];
/// assert_eq!(table.insert(&key, 3)?, None);
/// // Inserting a key again replaces its value and gives the old one.
/// assert_eq!(table.insert(&key, 4)?, Some(3));
///
/// assert_eq!(table.lookup(&key), Some(4));
/// assert_eq!(table.lookup(&[8u8; 16]), None);
///
/// // Written while lcores read it: deletions reclaimed under their QSBR.
/// let qsbr = std::sync::Arc::new(dpdk::Qsbr::new(1)?);
/// let mut writer = table.writer(&qsbr)?;
/// assert!(table.insert(&key, 5).is_err()); // the writer writes now
/// assert_eq!(writer.remove(&key)?, Some(4));
/// assert_eq!(table.lookup(&key), None);
/// assert_eq!(writer.remove(&key)?, None);
/// # Ok::<(), dpdk::DpdkError>(())
/// ```
pub struct Hash<const N: usize> {
    table: Arc<Table<N>>,
}

/// The one writer of a [`Hash`](struct@Hash) that lcores read: on the control thread.
pub struct HashWriter<const N: usize> {
    table: Arc<Table<N>>,
    /// One thread writes: not shared, so not where the lcores read.
    _not_sync: PhantomData<Cell<()>>,
}

/// The rte_hash both handles share.
struct Table<const N: usize> {
    raw: NonNull<sys::rte_hash>,
    /// The CRC rte_hash was given: [`Hash::lookup_bulk`] computes the same.
    crc: Crc,
    /// The variable deleted keys' slots are reclaimed under, once a
    /// writer exists: freed after the table (fields drop after `drop`).
    qsbr: Option<Arc<Qsbr>>,
    _eal: Eal,
}

// SAFETY: rte_hash in lock-free mode allows lookups from any number of
// threads beside one writer; the writer is the one HashWriter (&mut, not
// Clone, not Sync) or, before there is one, &mut Hash with the table
// unshared (Arc::get_mut).
unsafe impl<const N: usize> Send for Table<N> {}
// SAFETY: as above: &Table only looks up, except through those two.
unsafe impl<const N: usize> Sync for Table<N> {}

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
            extra_flag: sys::RTE_HASH_EXTRA_FLAGS_RW_CONCURRENCY_LF as u8,
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
            table: Arc::new(Table {
                raw,
                crc,
                qsbr: None,
                _eal: eal.clone(),
            }),
        })
    }

    /// Adds `key` with `value`, or gives it `value` if present; returns
    /// the value it had. Fails (ENOSPC) when no room can be made for it,
    /// and once [`Hash::writer`] has handed the writing over.
    pub fn insert(&mut self, key: &[u8; N], value: usize) -> Result<Option<usize>> {
        match Arc::get_mut(&mut self.table) {
            Some(table) => table.insert(key, value),
            None => Err(DpdkError::invalid("cannot add key", "the table's HashWriter writes it")),
        }
    }

    /// The writer of this table while lcores read it, which report their
    /// quiescent states to `qsbr`: the table frees a deleted key's slot
    /// once they all have (`rte_hash_rcu_qsbr_add`, defer-queue mode).
    /// One per table: it fails if the table is shared already.
    pub fn writer(&mut self, qsbr: &Arc<Qsbr>) -> Result<HashWriter<N>> {
        let what = "cannot attach a hash table to RCU";
        let table = Arc::get_mut(&mut self.table).ok_or_else(|| DpdkError::invalid(what, "it has a writer"))?;
        let mut config = sys::rte_hash_rcu_config {
            v: qsbr.raw(),
            mode: sys::rte_hash_qsbr_mode_RTE_HASH_QSBR_MODE_DQ,
            ..Default::default()
        };
        // SAFETY: the table is ours alone (get_mut), so no lookup runs;
        // the variable is initialised and, held in `table.qsbr` below,
        // outlives the table; rte_hash copies the config.
        let rc = unsafe { sys::rte_hash_rcu_qsbr_add(table.raw.as_ptr(), &mut config) };
        if rc != 0 {
            return Err(DpdkError::from_code(what, rc));
        }
        table.qsbr = Some(Arc::clone(qsbr));
        Ok(HashWriter {
            table: Arc::clone(&self.table),
            _not_sync: PhantomData,
        })
    }

    /// Value of `key`, if present: one key per call, each waiting for
    /// its own cache misses (the `--sequential-lookup` path).
    #[inline(always)]
    pub fn lookup(&self, key: &[u8; N]) -> Option<usize> {
        self.table.lookup(key)
    }

    /// Values of `keys`, looked up [`HASH_BULK_MAX`] at a time: each
    /// call probes its keys together so their memory latencies overlap.
    /// `each` gets the index of every key and its value, or None for a
    /// miss. Keys are passed by reference, never copied. Each key is hashed
    /// once, here, with the table's CRC inlined
    /// (`rte_hash_lookup_with_hash_bulk_data`), rather than by rte_hash
    /// through two calls per key; the answers are those of [`Hash::lookup`].
    ///
    /// ```
    /// # let eal = dpdk::Eal::for_tests(&[])?;
    /// // A key type exposes its bytes with AsRef, as em::Ipv4Key does.
    /// struct Key([u8; 16]);
    /// impl AsRef<[u8; 16]> for Key {
    ///     fn as_ref(&self) -> &[u8; 16] { &self.0 }
    /// }
    /// let mut table = dpdk::Hash::<16>::new(eal, "doc_bulk", 1024, 0)?;
    /// let keys: Vec<Key> = (0..8u8).map(|i| Key([i; 16])).collect();
    /// for k in keys.iter().step_by(2) {
    ///     table.insert(k.as_ref(), 10 + k.0[0] as usize)?; // keys 0, 2, 4, 6
    /// }
    /// // One call for the 8 keys.
    /// let mut found = [None; 8];
    /// table.lookup_bulk(&keys, |i, value| found[i] = value);
    /// assert_eq!(found, [Some(10), None, Some(12), None, Some(14), None, Some(16), None]);
    ///
    /// // Over more keys than one call takes, hits and misses mixed, the
    /// // answers are those of one lookup per key (rte_hash hashing it).
    /// let keys: Vec<Key> = (0..300u32)
    ///     .map(|i| Key(std::array::from_fn(|b| i.to_le_bytes()[b % 4])))
    ///     .collect();
    /// for (i, k) in keys.iter().enumerate().step_by(3) {
    ///     table.insert(k.as_ref(), i)?;
    /// }
    /// let mut bulk = vec![None; keys.len()];
    /// table.lookup_bulk(&keys, |i, value| bulk[i] = value);
    /// let one_by_one: Vec<_> = keys.iter().map(|k| table.lookup(k.as_ref())).collect();
    /// assert_eq!(bulk, one_by_one);
    /// assert_eq!(bulk.iter().filter(|p| p.is_some()).count(), 100);
    /// # Ok::<(), dpdk::DpdkError>(())
    /// ```
    #[inline(always)]
    pub fn lookup_bulk<K: AsRef<[u8; N]>>(&self, keys: &[K], each: impl FnMut(usize, Option<usize>)) {
        self.table.lookup_bulk(keys, each)
    }
}

impl<const N: usize> HashWriter<N> {
    /// [`Hash::insert`], while lcores look up: they see the key with its
    /// old value or its new one, never a torn one. When the table is out of
    /// slots, it waits for a grace period, which gives back those of keys
    /// deleted before, and tries once more. Call it on a thread that is not
    /// an online reader of the QSBR variable: it would wait for itself.
    pub fn insert(&mut self, key: &[u8; N], value: usize) -> Result<Option<usize>> {
        match (self.table.insert(key, value), &self.table.qsbr) {
            (Err(e), Some(qsbr)) if e.is_out_of_space() => {
                qsbr.synchronize();
                self.table.insert(key, value)
            }
            (result, _) => result,
        }
    }

    /// How many keys the table holds.
    pub fn len(&self) -> usize {
        // SAFETY: raw is a live table; the count is read by its one
        // writer, so no add or delete runs beside it.
        let n = unsafe { sys::rte_hash_count(self.table.raw.as_ptr()) };
        usize::try_from(n).unwrap_or(0)
    }

    /// Calls `each` with every key and its value, in the table's order.
    pub fn for_each(&self, mut each: impl FnMut(&[u8; N], usize)) {
        let mut next = 0u32;
        loop {
            let (mut key, mut data) = (std::ptr::null(), std::ptr::null_mut());
            // SAFETY: raw is a live table; the out-parameters are valid;
            // this is its one writer, so nothing changes while it walks.
            let at = unsafe { sys::rte_hash_iterate(self.table.raw.as_ptr(), &mut key, &mut data, &mut next) };
            if at < 0 || key.is_null() {
                return;
            }
            // SAFETY: key points at the table's copy of an N-byte key
            // (key_len is N), which stays until a delete: none runs here.
            each(unsafe { &*(key as *const [u8; N]) }, data as usize);
        }
    }

    /// Whether the table holds no key.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Deletes `key`; returns the value it had, or None if absent. Its
    /// slot is reused once every lcore has passed a quiescent state.
    pub fn remove(&mut self, key: &[u8; N]) -> Result<Option<usize>> {
        let Some(old) = self.table.lookup(key) else {
            return Ok(None);
        };
        // SAFETY: key points at N = key_len bytes; this is the one writer
        // (&mut HashWriter); lock-free mode lets lookups run beside it, and
        // the RCU defer queue keeps the slot until they are done with it.
        let ret = unsafe { sys::rte_hash_del_key(self.table.raw.as_ptr(), key.as_ptr() as *const c_void) };
        if ret < 0 {
            return Err(DpdkError::from_code("cannot delete key", ret));
        }
        Ok(Some(old))
    }
}

impl<const N: usize> Table<N> {
    /// Adds or replaces `key`'s value (see [`Hash::insert`]); called by
    /// the one writer only, which [`Hash::insert`] and [`HashWriter`]
    /// ensure.
    fn insert(&self, key: &[u8; N], value: usize) -> Result<Option<usize>> {
        let old = self.lookup(key);
        // SAFETY: key points at N = key_len bytes; the caller is the one
        // writer; lock-free mode publishes the key with its value, and
        // replaces a present key's value with one atomic store.
        let ret = unsafe {
            sys::rte_hash_add_key_data(self.raw.as_ptr(), key.as_ptr() as *const c_void, value as *mut c_void)
        };
        if ret < 0 {
            return Err(DpdkError::from_code("cannot add key", ret));
        }
        Ok(old)
    }

    #[inline(always)]
    fn lookup(&self, key: &[u8; N]) -> Option<usize> {
        let mut data = std::ptr::null_mut();
        // SAFETY: key points at key_len bytes; data is written on a hit;
        // lookups may run beside the one writer (lock-free mode).
        let ret = unsafe { sys::rte_hash_lookup_data(self.raw.as_ptr(), key.as_ptr() as *const c_void, &mut data) };
        (ret >= 0).then_some(data as usize)
    }

    #[inline(always)]
    fn lookup_bulk<K: AsRef<[u8; N]>>(&self, keys: &[K], each: impl FnMut(usize, Option<usize>)) {
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
    unsafe fn lookup_bulk_sse42<K: AsRef<[u8; N]>>(&self, keys: &[K], each: impl FnMut(usize, Option<usize>)) {
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
        mut each: impl FnMut(usize, Option<usize>),
    ) {
        let mut ptrs = [MaybeUninit::<*const c_void>::uninit(); HASH_BULK_MAX];
        // Left uninitialised: a burst has at most 32 keys, and clearing 64
        // slots each time would cost more than the call's own bookkeeping.
        let mut sigs = [MaybeUninit::<u32>::uninit(); HASH_BULK_MAX];
        let mut values = [MaybeUninit::<*mut c_void>::uninit(); HASH_BULK_MAX];
        for (chunk, keys) in keys.chunks(HASH_BULK_MAX).enumerate() {
            let n = keys.len();
            for ((p, sig), k) in ptrs.iter_mut().zip(sigs.iter_mut()).zip(keys) {
                p.write(k.as_ref().as_ptr() as *const c_void);
                sig.write(hash(k.as_ref()));
            }
            let mut hits = 0u64;
            // SAFETY: the first n pointers and hashes are initialised; the
            // pointers point at key_len-byte keys that live for the call
            // (rte_hash reads only those n) and the hashes are the table's
            // own of those keys; values holds n slots, of which it writes
            // those of the hits; lookups may run beside the one writer.
            unsafe {
                sys::rte_hash_lookup_with_hash_bulk_data(
                    self.raw.as_ptr(),
                    ptrs.as_mut_ptr() as *mut *const c_void,
                    sigs.as_mut_ptr() as *mut u32,
                    n as u32,
                    &mut hits,
                    values.as_mut_ptr() as *mut *mut c_void,
                )
            };
            for (i, value) in values[..n].iter().enumerate() {
                // SAFETY: rte_hash wrote the value of every hit.
                let value = (hits & (1 << i) != 0).then(|| unsafe { value.assume_init() } as usize);
                each(chunk * HASH_BULK_MAX + i, value);
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

impl<const N: usize> Drop for Table<N> {
    fn drop(&mut self) {
        // SAFETY: the last handle is gone, so no lookup or write runs;
        // rte_hash_free also frees the defer queue, and the QSBR variable
        // it used is still alive (dropped after this).
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
