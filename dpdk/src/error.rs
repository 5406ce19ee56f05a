//! Errors from DPDK calls: what failed and DPDK's own reason.
//!
//! DPDK reports failure three ways: a negative `errno` return, a NULL
//! pointer with `rte_errno` set, or (for EAL init) `-1` with `rte_errno`
//! sometimes set. Every safe wrapper turns each into one [`DpdkError`] whose
//! text reads "what we tried: why DPDK refused" (`rte_strerror`), so the
//! application can print it as is and exit, where the C sample calls
//! `rte_exit`.

use std::ffi::CStr;
use std::fmt;

use crate::sys;

/// A failed DPDK call, with DPDK's error text.
///
/// It displays as `what: reason`, e.g. `cannot create LPM table l3fwd_v4:
/// Cannot allocate memory`. Arguments rejected before DPDK is called (a
/// name with a NUL byte, a queue set up twice) give the same kind of
/// error, with the reason this crate found.
///
/// ```
/// let eal = dpdk::Eal::for_tests(&[])?;
/// // Rejected before DPDK is called.
/// let err = dpdk::Lpm::new(eal, "bad\0name", 0, 16, 16).err().unwrap();
/// assert_eq!(err.to_string(), "table name: contains a NUL byte");
/// // It is a std::error::Error, so `?` turns it into Box<dyn Error>.
/// let boxed: Box<dyn std::error::Error> = err.into();
/// assert!(boxed.to_string().starts_with("table name"));
/// # Ok::<(), dpdk::DpdkError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DpdkError {
    what: String,
    reason: String,
    /// DPDK's errno, 0 for errors found before calling it.
    errno: i32,
}

/// Result of a DPDK call: the value, or the [`DpdkError`] saying what
/// failed and why.
pub type Result<T> = std::result::Result<T, DpdkError>;

impl DpdkError {
    /// An error for a call that returned `-errno` (or set `rte_errno` when
    /// `code` is 0 or positive).
    pub(crate) fn from_code(what: impl Into<String>, code: i32) -> Self {
        let errno = if code < 0 { -code } else { last_errno() };
        Self {
            what: what.into(),
            reason: strerror(errno),
            errno,
        }
    }

    /// An error for a call that returned NULL and set `rte_errno`.
    pub(crate) fn from_errno(what: impl Into<String>) -> Self {
        Self::from_code(what, 0)
    }

    /// An error for a call that returned NULL while allocating about
    /// `bytes` of EAL memory: the size, and for want of memory the EAL
    /// options that give more. Call [`clear_errno`] before the call.
    /// `rte_errno` left at 0 or ENOENT is taken as want of memory:
    /// rte_hash_create's allocation failures set nothing, and leave what
    /// a lookup inside it set (ENOENT: "No such file or directory"); no
    /// allocation fails for want of a name.
    pub(crate) fn from_allocation(what: impl fmt::Display, bytes: u64) -> Self {
        let mib = bytes.div_ceil(1 << 20);
        let errno = match last_errno() {
            errno if errno == 0 || errno == sys::ENOENT as i32 => sys::ENOMEM as i32,
            errno => errno,
        };
        let mut reason = strerror(errno);
        if errno == sys::ENOMEM as i32 {
            reason += "; give EAL more: -m MB (with --no-huge), or more hugepages";
        }
        Self {
            what: format!("{what} (about {mib} MiB of EAL memory)"),
            reason,
            errno,
        }
    }

    /// As [`DpdkError::from_allocation`], for a library that reports want
    /// of memory as `EINVAL` too (rte_fib / rte_fib6, whose RIB node pool
    /// fails so): with valid arguments, checked before the call, that
    /// `EINVAL` gets the same hint.
    pub(crate) fn from_allocation_or_einval(what: impl fmt::Display, bytes: u64) -> Self {
        let mut e = Self::from_allocation(what, bytes);
        if e.errno == sys::EINVAL as i32 {
            e.reason +=
                "; at this size, likely want of memory: give EAL more: -m MB (with --no-huge), or more hugepages";
        }
        e
    }

    /// An error detected before calling DPDK.
    pub(crate) fn invalid(what: impl Into<String>, reason: impl Into<String>) -> Self {
        Self {
            what: what.into(),
            reason: reason.into(),
            errno: 0,
        }
    }

    /// A table refused an entry for want of room, as DPDK's own would
    /// (`ENOSPC`), where a table is written without DPDK's calls.
    pub fn table_full(what: impl Into<String>) -> Self {
        Self::from_code(what, -(sys::ENOSPC as i32))
    }

    /// Whether DPDK refused for want of room (`ENOSPC`: a table's rules or
    /// groups are used up), which a bigger table would cure.
    pub fn is_out_of_space(&self) -> bool {
        self.errno == sys::ENOSPC as i32
    }

    /// Whether DPDK found nothing to act on (`ENOENT`: a route to delete
    /// that is not there).
    pub fn is_not_found(&self) -> bool {
        self.errno == sys::ENOENT as i32
    }
}

/// `what: reason`, on one line.
impl fmt::Display for DpdkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.what, self.reason)
    }
}

impl std::error::Error for DpdkError {}

/// Sets this thread's `rte_errno` to 0 (see [`DpdkError::from_allocation`]).
pub(crate) fn clear_errno() {
    // SAFETY: writes this thread's rte_errno through the shim; no arguments.
    unsafe { sys::shim_clear_errno() }
}

fn last_errno() -> i32 {
    // SAFETY: reads this thread's rte_errno through the shim; no arguments.
    unsafe { sys::shim_errno() }
}

fn strerror(errno: i32) -> String {
    // SAFETY: rte_strerror returns a pointer to a static or thread-local
    // NUL-terminated string, valid until the next call on this thread; it is
    // copied at once.
    unsafe { CStr::from_ptr(sys::rte_strerror(errno)) }
        .to_string_lossy()
        .into_owned()
}
