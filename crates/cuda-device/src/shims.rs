//! Device versions of functions that device code reaches but cannot compile as they are. The
//! compiler calls these instead of the originals wherever device code calls them (the table is
//! `mir_importer::shims`, the reasons are in `docs/crates.md`); they are not meant to be called
//! directly, and each has exactly the signature of the function it replaces.
//!
//! Device code is compiled from the host's MIR, so every crate sees the host's `cfg`
//! (`target_arch = "x86_64"`, `target_feature = "sse2"`) and may pick code written for the
//! CPU: inline assembly, CPU feature detection. The functions replaced here are the ones
//! popular `no_std` crates reach that way, and the few functions `core` ships without MIR.

/// `core::slice::memchr`: `core` ships these without MIR (they are neither generic nor
/// `#[inline]`, so only their machine code for the host exists).
pub mod memchr {
    /// `core::slice::memchr::memchr_aligned`: the first index of `x` in `text` (what
    /// `<[u8]>::contains` and `str::find(char)` reach for long inputs).
    pub fn memchr_aligned(x: u8, text: &[u8]) -> Option<usize> {
        let mut i = 0;
        while i < text.len() {
            if text[i] == x {
                return Some(i);
            }
            i += 1;
        }
        None
    }

    /// `core::slice::memchr::memrchr`: the last index of `x` in `text`.
    pub fn memrchr(x: u8, text: &[u8]) -> Option<usize> {
        let mut i = text.len();
        while i > 0 {
            i -= 1;
            if text[i] == x {
                return Some(i);
            }
        }
        None
    }
}

/// The `libm` crate's x86-64 paths (`libm::math::arch::x86`), which it takes when the target
/// has SSE2: `sqrtsd`/`sqrtss` in inline assembly, and an FMA chosen by CPU detection. Both
/// operations are correctly rounded in IEEE 754, so the GPU's `sqrt.rn` and `fma.rn` give the
/// very bits the CPU gives.
pub mod libm {
    /// `libm::math::arch::x86::sqrt` (`sqrtsd`).
    pub fn sqrt(x: f64) -> f64 {
        core::f64::math::sqrt(x)
    }

    /// `libm::math::arch::x86::sqrtf` (`sqrtss`).
    pub fn sqrtf(x: f32) -> f32 {
        core::f32::math::sqrt(x)
    }

    /// `libm::math::arch::x86::fma::fma` (`vfmadd213sd`, or a software fallback).
    pub fn fma(x: f64, y: f64, z: f64) -> f64 {
        core::f64::math::mul_add(x, y, z)
    }

    /// `libm::math::arch::x86::fma::fmaf` (`vfmadd213ss`, or a software fallback).
    pub fn fmaf(x: f32, y: f32, z: f32) -> f32 {
        core::f32::math::mul_add(x, y, z)
    }
}

/// CPU identification (`core::arch::x86_64::__cpuid_count`, `_xgetbv`), which crates read to
/// choose an implementation at run time. The GPU is no x86 CPU: it reports no leaves and no
/// features, so such crates take their portable paths.
#[cfg(target_arch = "x86_64")]
pub mod x86 {
    use core::arch::x86_64::CpuidResult;

    /// `core::arch::x86_64::__cpuid_count`: every register 0 (highest leaf 0, no features).
    pub fn __cpuid_count(_leaf: u32, _sub_leaf: u32) -> CpuidResult {
        CpuidResult {
            eax: 0,
            ebx: 0,
            ecx: 0,
            edx: 0,
        }
    }

    /// `core::arch::x86_64::_xgetbv`: no extended state enabled.
    ///
    /// # Safety
    ///
    /// None needed; `unsafe` only to match the signature of the function it replaces.
    pub unsafe fn _xgetbv(_xcr_no: u32) -> u64 {
        0
    }
}

/// `alloc`'s calls of the global allocator (`__rust_alloc` and its siblings, which rustc
/// defines for the host program's allocator): on the device they allocate from the device
/// heap ([`crate::heap`]).
pub mod alloc {
    use core::mem::Alignment;
    use core::ptr::NonNull;

    use crate::heap::{allocate, release};

    /// `alloc::alloc::__rust_alloc`.
    ///
    /// # Safety
    ///
    /// As `GlobalAlloc::alloc`.
    pub unsafe fn __rust_alloc(size: usize, align: Alignment) -> *mut u8 {
        // SAFETY: an `Alignment` is a power of two.
        unsafe { allocate(size, align.as_usize()) }
    }

    /// `alloc::alloc::__rust_alloc_zeroed`.
    ///
    /// # Safety
    ///
    /// As `GlobalAlloc::alloc_zeroed`.
    pub unsafe fn __rust_alloc_zeroed(size: usize, align: Alignment) -> *mut u8 {
        // SAFETY: as above; the block has `size` bytes.
        unsafe {
            let ptr = allocate(size, align.as_usize());
            if !ptr.is_null() {
                core::ptr::write_bytes(ptr, 0, size);
            }
            ptr
        }
    }

    /// `alloc::alloc::__rust_dealloc`.
    ///
    /// # Safety
    ///
    /// As `GlobalAlloc::dealloc`.
    pub unsafe fn __rust_dealloc(ptr: NonNull<u8>, _size: usize, align: Alignment) {
        // SAFETY: the caller passes what `__rust_alloc` returned for `align`.
        unsafe { release(ptr.as_ptr(), align.as_usize()) }
    }

    /// `alloc::alloc::__rust_realloc`: a new block, the old contents copied, the old block
    /// freed (CUDA has no `realloc`).
    ///
    /// # Safety
    ///
    /// As `GlobalAlloc::realloc`.
    pub unsafe fn __rust_realloc(
        ptr: NonNull<u8>,
        old_size: usize,
        align: Alignment,
        new_size: usize,
    ) -> *mut u8 {
        // SAFETY: the caller's block holds `old_size` bytes; the new one `new_size`.
        unsafe {
            let new = allocate(new_size, align.as_usize());
            if !new.is_null() {
                core::ptr::copy_nonoverlapping(ptr.as_ptr(), new, old_size.min(new_size));
                release(ptr.as_ptr(), align.as_usize());
            }
            new
        }
    }

    /// `alloc::alloc::__rust_no_alloc_shim_is_unstable_v2`: nothing to do.
    pub fn __rust_no_alloc_shim_is_unstable_v2() {}
}
