//! rte_hash exact-match tables with fixed-size keys and CRC hashing.

use std::ffi::{c_void, CString};
use std::mem::MaybeUninit;
use std::ptr::NonNull;

use crate::error::{DpdkError, Result};
use crate::sys;

/// Most keys one bulk lookup takes (RTE_HASH_LOOKUP_BULK_MAX).
pub const HASH_BULK_MAX: usize = sys::RTE_HASH_LOOKUP_BULK_MAX as usize;

/// An exact-match table of `N`-byte keys, each mapped to a slot number
/// (its position) that callers use to index their own values. Built on one
/// thread, then only read.
pub struct Hash<const N: usize>(NonNull<sys::rte_hash>);

// SAFETY: rte_hash lookups are safe from many threads as long as nobody
// writes; writes need &mut Hash.
unsafe impl<const N: usize> Send for Hash<N> {}
// SAFETY: as above: &Hash only allows lookups.
unsafe impl<const N: usize> Sync for Hash<N> {}

impl<const N: usize> Hash<N> {
    /// Creates a table for `entries` keys hashed with CRC32 on `socket`.
    pub fn new(name: &str, entries: u32, socket: i32) -> Result<Hash<N>> {
        let cname = CString::new(name).map_err(|_| DpdkError::invalid("hash name", "contains a NUL byte"))?;
        let params = sys::rte_hash_parameters {
            name: cname.as_ptr(),
            entries,
            key_len: N as u32,
            hash_func: Some(sys::l3fwd_hash_crc),
            socket_id: socket,
            ..Default::default()
        };
        // SAFETY: params and the name it points to are valid for the call;
        // rte_hash copies the name.
        let p = unsafe { sys::rte_hash_create(&params) };
        NonNull::new(p)
            .map(Hash)
            .ok_or_else(|| DpdkError::from_errno(format!("cannot create hash table {name} of {entries} entries")))
    }

    /// Adds `key` (or finds it, if present); returns its position.
    pub fn add(&mut self, key: &[u8; N]) -> Result<u32> {
        // SAFETY: key points at N = key_len bytes; &mut self excludes readers.
        let ret = unsafe { sys::rte_hash_add_key(self.0.as_ptr(), key.as_ptr() as *const c_void) };
        if ret < 0 {
            return Err(DpdkError::from_code("cannot add key", ret));
        }
        Ok(ret as u32)
    }

    /// Position of `key`, if present.
    #[inline(always)]
    pub fn lookup(&self, key: &[u8; N]) -> Option<u32> {
        // SAFETY: key points at key_len bytes; the table is only read.
        let ret = unsafe { sys::rte_hash_lookup(self.0.as_ptr(), key.as_ptr() as *const c_void) };
        (ret >= 0).then_some(ret as u32)
    }

    /// Positions of up to [`HASH_BULK_MAX`] keys in one call: hashes and
    /// probes them together so their memory latencies overlap. `out[i]` is
    /// the position of `keys[i]`, or negative for a miss. Keys are passed by
    /// reference, never copied.
    #[inline(always)]
    pub fn lookup_bulk<K: AsRef<[u8; N]>>(&self, keys: &[K], out: &mut [i32]) {
        let n = keys.len().min(out.len()).min(HASH_BULK_MAX);
        if n == 0 {
            return;
        }
        let mut ptrs = [MaybeUninit::<*const c_void>::uninit(); HASH_BULK_MAX];
        for (p, k) in ptrs.iter_mut().zip(&keys[..n]) {
            p.write(k.as_ref().as_ptr() as *const c_void);
        }
        // SAFETY: the first n pointers are initialised and point at
        // key_len-byte keys that live for the call (rte_hash reads only
        // those n); out holds n slots; the table is only read.
        unsafe {
            sys::rte_hash_lookup_bulk(
                self.0.as_ptr(),
                ptrs.as_mut_ptr() as *mut *const c_void,
                n as u32,
                out.as_mut_ptr(),
            )
        };
    }
}

impl<const N: usize> Drop for Hash<N> {
    fn drop(&mut self) {
        // SAFETY: the table is ours and no lookup can run (we hold &mut).
        unsafe { sys::rte_hash_free(self.0.as_ptr()) }
    }
}
