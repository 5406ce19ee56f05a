//! rte_acl: packet classification against rules of several fields (exact
//! bit masks, prefixes, ranges), each rule with a priority and a 32-bit
//! answer. The rules are compiled once into a trie that classify walks a
//! burst at a time, with the SIMD width the CPU (and EAL's
//! `--force-max-simd-bitwidth`) allows.
//!
//! An [`Acl`] is created, filled and built in one call and cannot change
//! afterwards, so it is shared read-only between lcores. Its type carries
//! how many bytes of each input classify may read (`L`): the build refuses
//! field definitions that would read further, so classify never reads past
//! the inputs it is given.

use std::ffi::CString;
use std::num::NonZeroU32;
use std::ptr::NonNull;
use std::sync::Mutex;

use crate::eal::Eal;
use crate::error::{DpdkError, Result};
use crate::sys;

/// How a field of a rule matches its input bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldKind {
    /// `value/mask_range` is a prefix: the top `mask_range` bits must equal.
    Mask,
    /// `value..=mask_range`, compared as a big-endian number.
    Range,
    /// `input & mask_range == value`.
    Bitmask,
}

/// Where a field is in the input and how it matches. Fields are numbered
/// by their position in the array given to [`Acl::build`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldDef {
    pub kind: FieldKind,
    /// 1, 2, 4 or 8 bytes (the first field must be 1 byte, as rte_acl wants).
    pub size: u8,
    /// Fields sharing an input index are read together, as one 4-byte word.
    pub input_index: u8,
    /// Byte offset of the field in each input.
    pub offset: u32,
}

/// A field's value in a rule (host order), and its mask length, bit mask
/// or upper bound, by the field's [`FieldKind`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FieldValue {
    pub value: u64,
    pub mask_range: u64,
}

/// A rule of `N` fields: where several match, the highest `priority`
/// (1..=[`MAX_PRIORITY`]) wins and classify answers its `userdata`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AclRule<const N: usize> {
    pub priority: i32,
    pub userdata: NonZeroU32,
    pub fields: [FieldValue; N],
}

/// The highest rule priority.
pub const MAX_PRIORITY: i32 = sys::RTE_ACL_MAX_PRIORITY as i32;

/// A classify method of rte_acl (`--alg` of l3fwd).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClassifyAlg {
    Scalar,
    Sse,
    Avx2,
    Neon,
    Altivec,
    Avx512x16,
    Avx512x32,
}

impl ClassifyAlg {
    /// Every method, with l3fwd's name for it.
    pub const ALL: [(&'static str, ClassifyAlg); 7] = [
        ("scalar", ClassifyAlg::Scalar),
        ("sse", ClassifyAlg::Sse),
        ("avx2", ClassifyAlg::Avx2),
        ("neon", ClassifyAlg::Neon),
        ("altivec", ClassifyAlg::Altivec),
        ("avx512x16", ClassifyAlg::Avx512x16),
        ("avx512x32", ClassifyAlg::Avx512x32),
    ];

    /// l3fwd's name for it.
    pub fn name(self) -> &'static str {
        Self::ALL.iter().find(|(_, a)| *a == self).map_or("?", |(n, _)| n)
    }

    fn raw(self) -> sys::rte_acl_classify_alg {
        match self {
            ClassifyAlg::Scalar => sys::rte_acl_classify_alg_RTE_ACL_CLASSIFY_SCALAR,
            ClassifyAlg::Sse => sys::rte_acl_classify_alg_RTE_ACL_CLASSIFY_SSE,
            ClassifyAlg::Avx2 => sys::rte_acl_classify_alg_RTE_ACL_CLASSIFY_AVX2,
            ClassifyAlg::Neon => sys::rte_acl_classify_alg_RTE_ACL_CLASSIFY_NEON,
            ClassifyAlg::Altivec => sys::rte_acl_classify_alg_RTE_ACL_CLASSIFY_ALTIVEC,
            ClassifyAlg::Avx512x16 => sys::rte_acl_classify_alg_RTE_ACL_CLASSIFY_AVX512X16,
            ClassifyAlg::Avx512x32 => sys::rte_acl_classify_alg_RTE_ACL_CLASSIFY_AVX512X32,
        }
    }
}

/// The layout rte_acl expects of a rule of `N` fields
/// (`RTE_ACL_RULE_DEF(name, N)`).
#[repr(C)]
struct RawRule<const N: usize> {
    data: sys::rte_acl_rule_data,
    field: [sys::rte_acl_field; N],
}

impl<const N: usize> RawRule<N> {
    /// `RTE_ACL_RULE_SZ(N)`: the stride rte_acl reads rules at.
    const SIZE: usize = std::mem::size_of::<sys::rte_acl_rule>() + N * std::mem::size_of::<sys::rte_acl_field>();

    fn new(rule: &AclRule<N>) -> Self {
        RawRule {
            data: sys::rte_acl_rule_data {
                category_mask: 1,
                priority: rule.priority,
                userdata: rule.userdata.get(),
            },
            field: rule.fields.map(|f| sys::rte_acl_field {
                value: sys::rte_acl_field_types { u64_: f.value },
                mask_range: sys::rte_acl_field_types { u64_: f.mask_range },
            }),
        }
    }
}

/// Most inputs one classify call takes here (stack arrays of pointers and
/// results).
const BULK: usize = 64;

/// rte_acl_create hands back an existing context of the same name instead
/// of a new one: names are checked and created under this lock, so no two
/// [`Acl`]s ever share a context.
static CREATE: Mutex<()> = Mutex::new(());

/// A built classifier whose inputs are `L` bytes long.
///
/// ```
/// use dpdk::{Acl, AclRule, FieldDef, FieldKind, FieldValue};
/// use std::num::NonZeroU32;
/// let eal = dpdk::Eal::for_tests(&[])?;
/// // Input: 1 byte of protocol, then a 4-byte address (as in an IPv4 header).
/// let defs = [
///     FieldDef { kind: FieldKind::Bitmask, size: 1, input_index: 0, offset: 0 },
///     FieldDef { kind: FieldKind::Mask, size: 4, input_index: 1, offset: 1 },
/// ];
/// let rule = |priority, proto: u64, net: u32, len, answer| AclRule {
///     priority,
///     userdata: NonZeroU32::new(answer).unwrap(),
///     fields: [
///         FieldValue { value: proto, mask_range: if proto == 0 { 0 } else { 0xff } },
///         FieldValue { value: net.into(), mask_range: len },
///     ],
/// };
/// let rules = [rule(2, 17, 0xc612_0100, 24, 7), rule(1, 0, 0xc612_0000, 16, 9)];
/// let acl = Acl::<8>::build(eal, "doc_acl", 0, &defs, &rules, None)?;
/// let input = |proto: u8, ip: [u8; 4]| [proto, ip[0], ip[1], ip[2], ip[3], 0, 0, 0];
/// let inputs = [input(17, [198, 18, 1, 5]), input(6, [198, 18, 1, 5]), input(17, [10, 0, 0, 1])];
/// let mut found = vec![];
/// acl.classify(&inputs, |_, answer| found.push(answer.map(NonZeroU32::get)));
/// assert_eq!(found, [Some(7), Some(9), None]);
/// # Ok::<(), dpdk::DpdkError>(())
/// ```
pub struct Acl<const L: usize> {
    raw: NonNull<sys::rte_acl_ctx>,
    _eal: Eal,
}

// SAFETY: a built context is only read by rte_acl_classify, which any
// number of threads may call at once; nothing can change it after build.
unsafe impl<const L: usize> Send for Acl<L> {}
// SAFETY: as above.
unsafe impl<const L: usize> Sync for Acl<L> {}

impl<const L: usize> Acl<L> {
    /// Creates a context named `name` (unique in the process) on `socket`,
    /// adds `rules`, sets the classify method (`None`: the best the CPU and
    /// EAL allow) and builds it. Fails if a field would be read past `L`
    /// bytes of input, or as rte_acl fails (bad fields or rules, unknown
    /// or unsupported method, out of memory).
    pub fn build<const N: usize>(
        eal: &Eal,
        name: &str,
        socket: i32,
        defs: &[FieldDef; N],
        rules: &[AclRule<N>],
        alg: Option<ClassifyAlg>,
    ) -> Result<Acl<L>> {
        let config = build_config(defs, L)?;
        let cname = CString::new(name).map_err(|_| DpdkError::invalid("ACL name", "contains a NUL byte"))?;
        let param = sys::rte_acl_param {
            name: cname.as_ptr(),
            socket_id: socket,
            rule_size: RawRule::<N>::SIZE as u32,
            max_rule_num: u32::try_from(rules.len().max(1))
                .map_err(|_| DpdkError::invalid(format!("{} ACL rules", rules.len()), "too many"))?,
        };
        let acl = {
            let _only_us = CREATE.lock().unwrap_or_else(|e| e.into_inner());
            // SAFETY: cname is a valid C string for the call.
            if !unsafe { sys::rte_acl_find_existing(cname.as_ptr()) }.is_null() {
                return Err(DpdkError::invalid(format!("ACL context {name}"), "already exists"));
            }
            // SAFETY: param and the name it points to are valid for the call.
            let p = unsafe { sys::rte_acl_create(&param) };
            let raw = NonNull::new(p).ok_or_else(|| DpdkError::from_errno(format!("cannot create ACL {name}")))?;
            Acl::<L> { raw, _eal: eal.clone() }
        };
        if let Some(alg) = alg {
            // SAFETY: the context is ours and not yet shared.
            let ret = unsafe { sys::rte_acl_set_ctx_classify(acl.raw.as_ptr(), alg.raw()) };
            if ret == -(sys::ENOTSUP as i32) {
                return Err(DpdkError::invalid(
                    format!("ACL classify method {}", alg.name()),
                    "not supported by this CPU, or wider than EAL allows (--force-max-simd-bitwidth)",
                ));
            }
            if ret != 0 {
                return Err(DpdkError::from_code(format!("ACL classify method {}", alg.name()), ret));
            }
        }
        let raw_rules: Vec<RawRule<N>> = rules.iter().map(RawRule::new).collect();
        // SAFETY: raw_rules holds rules.len() rules laid out as
        // RTE_ACL_RULE_DEF(N), at the stride (rule_size) the context was
        // created with, and it has room for all of them (max_rule_num).
        let ret = unsafe {
            sys::rte_acl_add_rules(
                acl.raw.as_ptr(),
                raw_rules.as_ptr().cast::<sys::rte_acl_rule>(),
                rules.len() as u32,
            )
        };
        if ret != 0 {
            return Err(DpdkError::from_code("cannot add ACL rules", ret));
        }
        // SAFETY: the context is ours; config is a valid build configuration.
        let ret = unsafe { sys::rte_acl_build(acl.raw.as_ptr(), &config) };
        if ret != 0 {
            return Err(DpdkError::from_code("cannot build ACL trie", ret));
        }
        Ok(acl)
    }

    /// Classifies every input of `inputs` and hands `each` its index and
    /// the userdata of the highest-priority rule it matches, or None.
    #[inline(always)]
    pub fn classify(&self, inputs: &[[u8; L]], mut each: impl FnMut(usize, Option<NonZeroU32>)) {
        let mut data = [std::ptr::null::<u8>(); BULK];
        let mut results = [0u32; BULK];
        for (chunk, inputs) in inputs.chunks(BULK).enumerate() {
            for (d, input) in data.iter_mut().zip(inputs) {
                *d = input.as_ptr();
            }
            // SAFETY: data holds inputs.len() pointers to inputs of L bytes,
            // and the build checked that classify reads no byte at or past
            // L of any of them; results has room for inputs.len() answers
            // of one category; the built context is only read.
            unsafe {
                sys::rte_acl_classify(
                    self.raw.as_ptr(),
                    data.as_mut_ptr(),
                    results.as_mut_ptr(),
                    inputs.len() as u32,
                    1,
                )
            };
            for (i, &r) in results[..inputs.len()].iter().enumerate() {
                each(chunk * BULK + i, NonZeroU32::new(r));
            }
        }
    }
}

/// The build configuration of `defs` (one category), once it is sure no
/// field is read at or past `input_len`: rte_acl reads every input index
/// as a 4-byte word from its first field's offset (8 bytes for an 8-byte
/// field).
fn build_config<const N: usize>(defs: &[FieldDef; N], input_len: usize) -> Result<sys::rte_acl_config> {
    let mut config = sys::rte_acl_config {
        num_categories: 1,
        num_fields: N as u32,
        ..Default::default()
    };
    if N > config.defs.len() {
        return Err(DpdkError::invalid(format!("{N} ACL fields"), "too many"));
    }
    for (i, (d, raw)) in defs.iter().zip(config.defs.iter_mut()).enumerate() {
        let read = usize::from(d.size).max(4);
        if !matches!(d.size, 1 | 2 | 4 | 8) || d.offset as usize + read > input_len {
            return Err(DpdkError::invalid(
                format!("ACL field {i} ({} bytes at offset {})", d.size, d.offset),
                format!("must be 1, 2, 4 or 8 bytes read within an input of {input_len}"),
            ));
        }
        *raw = sys::rte_acl_field_def {
            type_: match d.kind {
                FieldKind::Mask => sys::RTE_ACL_FIELD_TYPE_MASK,
                FieldKind::Range => sys::RTE_ACL_FIELD_TYPE_RANGE,
                FieldKind::Bitmask => sys::RTE_ACL_FIELD_TYPE_BITMASK,
            } as u8,
            size: d.size,
            field_index: i as u8,
            input_index: d.input_index,
            offset: d.offset,
        };
    }
    Ok(config)
}

impl<const L: usize> Drop for Acl<L> {
    fn drop(&mut self) {
        // SAFETY: the context is ours and &mut self excludes any classify.
        unsafe { sys::rte_acl_free(self.raw.as_ptr()) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_rules_have_the_c_layout() {
        // RTE_ACL_RULE_DEF(x, 5) in C: 12 bytes of data, padding to 16,
        // 16 bytes per field.
        assert_eq!(std::mem::size_of::<RawRule<5>>(), RawRule::<5>::SIZE);
        assert_eq!(RawRule::<5>::SIZE, 16 + 5 * 16);
        assert_eq!(RawRule::<11>::SIZE, std::mem::size_of::<RawRule<11>>());
    }

    #[test]
    fn fields_read_past_the_input_are_refused() {
        let def = |offset| FieldDef {
            kind: FieldKind::Range,
            size: 2,
            input_index: 0,
            offset,
        };
        assert!(build_config(&[def(4)], 8).is_ok());
        assert!(build_config(&[def(5)], 8).is_err(), "4-byte word at 5 ends past 8");
        let odd = FieldDef { size: 3, ..def(0) };
        assert!(build_config(&[odd], 8).is_err());
    }
}
