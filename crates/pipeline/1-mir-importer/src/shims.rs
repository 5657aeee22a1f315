//! Functions that device code reaches but cannot compile as they are, each replaced by a device
//! version in `cuda_device::shims` with the same signature: the collector collects the device
//! version in place of the original, and [`crate::naming::export_name`] gives calls to the
//! original its symbol. Two kinds of functions need one (see `docs/crates.md`):
//!
//! - functions that `core` ships without MIR (non-generic, not `#[inline]`: only their host
//!   machine code exists), such as `memchr_aligned`;
//! - the paths that crates take because device code is compiled from the host's MIR, where
//!   `cfg(target_arch = "x86_64")` and `cfg(target_feature = "sse2")` hold: inline assembly
//!   (`libm`'s `sqrtsd`). CPU identification (`cpuid`) is answered where it is
//!   computed instead (`translator::inline_asm`, `translator::x86`), so that it holds however
//!   far a release build inlines it.
//!
//! The x86 SIMD intrinsics of `core::arch` are not here: most are Rust over the portable
//! `simd_*` intrinsics (`translator::simd`), the rest call LLVM's x86 intrinsics, which the
//! translator maps to portable operations (`translator::x86`).

/// A function with a device version: the original's path, the device version's path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shim {
    /// The replaced function's path (`libm::math::arch::x86::sqrt`), as rustc prints it
    /// without re-exports.
    pub original: &'static str,
    /// The device version's path (`cuda_device::shims::libm::sqrt`).
    pub device: &'static str,
}

/// Declares [SHIMS]: `original => device` pairs, grouped by why the original cannot be used.
macro_rules! shims {
    ($($(#[doc = $doc:literal])* $($original:literal => $device:literal),+;)*) => {
        /// Every function with a device version.
        pub const SHIMS: &[Shim] = &[$($(Shim { original: $original, device: $device },)+)*];
    };
}

shims! {
    /// `core` ships these without MIR.
    "core::slice::memchr::memchr_aligned" => "cuda_device::shims::memchr::memchr_aligned",
    "core::slice::memchr::memrchr" => "cuda_device::shims::memchr::memrchr";
    /// `core`'s panic entry points (without MIR): device versions that record the message
    /// for the host (`cuda_device::panic`, see `translator::panic`).
    "core::panicking::panic_fmt" => "cuda_device::shims::panicking::panic_fmt",
    "core::panicking::panic_nounwind_fmt" => "cuda_device::shims::panicking::panic_nounwind_fmt",
    "core::panicking::const_panic_fmt" => "cuda_device::shims::panicking::const_panic_fmt",
    "core::panicking::panic" => "cuda_device::shims::panicking::panic",
    "core::panicking::panic_str_2015" => "cuda_device::shims::panicking::panic_str_2015",
    "core::panicking::panic_nounwind" => "cuda_device::shims::panicking::panic_nounwind",
    "core::panicking::panic_nounwind_nobacktrace" => "cuda_device::shims::panicking::panic_nounwind_nobacktrace",
    "core::panicking::panic_bounds_check" => "cuda_device::shims::panicking::panic_bounds_check",
    "core::panicking::panic_misaligned_pointer_dereference" => "cuda_device::shims::panicking::panic_misaligned_pointer_dereference",
    "core::panicking::panic_null_pointer_dereference" => "cuda_device::shims::panicking::panic_null_pointer_dereference",
    "core::panicking::panic_invalid_enum_construction" => "cuda_device::shims::panicking::panic_invalid_enum_construction",
    "core::panicking::assert_failed_inner" => "cuda_device::shims::panicking::assert_failed_inner",
    "core::panicking::panic_const::panic_const_add_overflow" => "cuda_device::shims::panicking::panic_const::panic_const_add_overflow",
    "core::panicking::panic_const::panic_const_sub_overflow" => "cuda_device::shims::panicking::panic_const::panic_const_sub_overflow",
    "core::panicking::panic_const::panic_const_mul_overflow" => "cuda_device::shims::panicking::panic_const::panic_const_mul_overflow",
    "core::panicking::panic_const::panic_const_div_overflow" => "cuda_device::shims::panicking::panic_const::panic_const_div_overflow",
    "core::panicking::panic_const::panic_const_rem_overflow" => "cuda_device::shims::panicking::panic_const::panic_const_rem_overflow",
    "core::panicking::panic_const::panic_const_neg_overflow" => "cuda_device::shims::panicking::panic_const::panic_const_neg_overflow",
    "core::panicking::panic_const::panic_const_shr_overflow" => "cuda_device::shims::panicking::panic_const::panic_const_shr_overflow",
    "core::panicking::panic_const::panic_const_shl_overflow" => "cuda_device::shims::panicking::panic_const::panic_const_shl_overflow",
    "core::panicking::panic_const::panic_const_div_by_zero" => "cuda_device::shims::panicking::panic_const::panic_const_div_by_zero",
    "core::panicking::panic_const::panic_const_rem_by_zero" => "cuda_device::shims::panicking::panic_const::panic_const_rem_by_zero",
    "core::option::unwrap_failed" => "cuda_device::shims::option::unwrap_failed",
    "core::option::expect_failed" => "cuda_device::shims::option::expect_failed",
    "core::result::unwrap_failed" => "cuda_device::shims::result::unwrap_failed",
    "core::slice::index::slice_index_fail" => "cuda_device::shims::slice::slice_index_fail";
    /// `libm` 0.2 on x86-64: inline assembly (`sqrtsd`, `sqrtss`) and an FMA chosen at run
    /// time by `cpuid`. The device versions are the correctly rounded GPU instructions.
    "libm::math::arch::x86::sqrt" => "cuda_device::shims::libm::sqrt",
    "libm::math::arch::x86::sqrtf" => "cuda_device::shims::libm::sqrtf",
    "libm::math::arch::x86::fma::fma" => "cuda_device::shims::libm::fma",
    "libm::math::arch::x86::fma::fmaf" => "cuda_device::shims::libm::fmaf";
    /// `alloc`'s calls of the global allocator, which rustc defines for the host program: on
    /// the device, the device heap (CUDA's `malloc`/`free`).
    "alloc::alloc::__rust_alloc" => "cuda_device::shims::alloc::__rust_alloc",
    "alloc::alloc::__rust_alloc_zeroed" => "cuda_device::shims::alloc::__rust_alloc_zeroed",
    "alloc::alloc::__rust_dealloc" => "cuda_device::shims::alloc::__rust_dealloc",
    "alloc::alloc::__rust_realloc" => "cuda_device::shims::alloc::__rust_realloc",
    "alloc::alloc::__rust_no_alloc_shim_is_unstable_v2" =>
        "cuda_device::shims::alloc::__rust_no_alloc_shim_is_unstable_v2";
}

/// The path of the device version of the function at `path`, if it has one.
pub fn shim_for(path: &str) -> Option<&'static str> {
    SHIMS
        .iter()
        .find(|shim| shim.original == path)
        .map(|shim| shim.device)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_device_version_is_in_cuda_device_shims_under_the_original_name() {
        for shim in SHIMS {
            assert!(
                shim.device.starts_with("cuda_device::shims::"),
                "{}",
                shim.device
            );
            let base = |path: &'static str| path.rsplit("::").next().unwrap();
            assert_eq!(base(shim.original), base(shim.device));
            assert_eq!(shim_for(shim.original), Some(shim.device));
        }
        assert_eq!(shim_for("core::slice::memchr::memchr"), None);
        assert_eq!(shim_for("libm::math::sqrt::sqrt"), None);
    }

    #[test]
    fn each_function_is_replaced_once() {
        for (i, shim) in SHIMS.iter().enumerate() {
            assert!(
                SHIMS[i + 1..].iter().all(|s| s.original != shim.original),
                "{} twice",
                shim.original
            );
        }
    }
}
