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

/// `core`'s panic entry points (`core` ships them without MIR): each formats its message as
/// `core` does and hands it to [`crate::panic::record`], which writes it for the host and
/// traps. Those that are `#[track_caller]` in `core` are here too, so that callers pass them
/// the location of the user's code.
pub mod panicking {
    use core::fmt::Arguments;
    use core::panic::Location;

    use crate::panic::{record, record_parts};

    /// `core::panicking::panic_fmt`: where every `panic!` ends.
    #[track_caller]
    #[cold]
    pub fn panic_fmt(fmt: Arguments<'_>) -> ! {
        record(&fmt, Location::caller())
    }

    /// `core::panicking::panic_nounwind_fmt`.
    #[track_caller]
    #[cold]
    pub fn panic_nounwind_fmt(fmt: Arguments<'_>, _force_no_backtrace: bool) -> ! {
        record(&fmt, Location::caller())
    }

    /// `core::panicking::const_panic_fmt` (not `#[track_caller]`).
    #[cold]
    pub fn const_panic_fmt(fmt: Arguments<'_>) -> ! {
        record(&fmt, Location::caller())
    }

    /// `core::panicking::panic`: a message without arguments (`unwrap` on `None`, ...).
    #[track_caller]
    #[cold]
    pub fn panic(expr: &'static str) -> ! {
        record(&format_args!("{expr}"), Location::caller())
    }

    /// `core::panicking::panic_str_2015`.
    #[track_caller]
    #[cold]
    pub fn panic_str_2015(expr: &str) -> ! {
        record(&format_args!("{expr}"), Location::caller())
    }

    /// `core::panicking::panic_nounwind` (not `#[track_caller]`).
    #[cold]
    pub fn panic_nounwind(expr: &'static str) -> ! {
        record(&format_args!("{expr}"), Location::caller())
    }

    /// `core::panicking::panic_nounwind_nobacktrace` (not `#[track_caller]`).
    #[cold]
    pub fn panic_nounwind_nobacktrace(expr: &'static str) -> ! {
        record(&format_args!("{expr}"), Location::caller())
    }

    /// `core::panicking::panic_bounds_check`: a failed index check.
    #[track_caller]
    #[cold]
    pub fn panic_bounds_check(index: usize, len: usize) -> ! {
        record(
            &format_args!("index out of bounds: the len is {len} but the index is {index}"),
            Location::caller(),
        )
    }

    /// `core::panicking::panic_misaligned_pointer_dereference`.
    #[track_caller]
    #[cold]
    pub fn panic_misaligned_pointer_dereference(required: usize, found: usize) -> ! {
        record(
            &format_args!(
                "misaligned pointer dereference: address must be a multiple of {required:#x} but is {found:#x}"
            ),
            Location::caller(),
        )
    }

    /// `core::panicking::panic_null_pointer_dereference`.
    #[track_caller]
    #[cold]
    pub fn panic_null_pointer_dereference() -> ! {
        record(
            &format_args!("null pointer dereference occurred"),
            Location::caller(),
        )
    }

    /// `core::panicking::panic_invalid_enum_construction`.
    #[track_caller]
    #[cold]
    pub fn panic_invalid_enum_construction(source: u128) -> ! {
        record(
            &format_args!("trying to construct an enum from an invalid value {source:#x}"),
            Location::caller(),
        )
    }

    /// `core::panicking::assert_failed_inner`: `assert_eq!` / `assert_ne!` with their values.
    #[track_caller]
    #[cold]
    pub fn assert_failed_inner(
        kind: core::panicking::AssertKind,
        left: &dyn core::fmt::Debug,
        right: &dyn core::fmt::Debug,
        args: Option<Arguments<'_>>,
    ) -> ! {
        let op = match kind {
            core::panicking::AssertKind::Eq => "==",
            core::panicking::AssertKind::Ne => "!=",
            core::panicking::AssertKind::Match => "matches",
        };
        let values = format_args!("\n  left: {left:?}\n right: {right:?}");
        match args {
            // The assertion's own message is recorded as a part of its own, not nested.
            Some(args) => record_parts(
                &[
                    &format_args!("assertion `left {op} right` failed: "),
                    &args,
                    &values,
                ],
                Location::caller(),
            ),
            None => record_parts(
                &[&format_args!("assertion `left {op} right` failed"), &values],
                Location::caller(),
            ),
        }
    }

    /// The `core::panicking::panic_const` functions: overflow and division checks.
    pub mod panic_const {
        use core::panic::Location;

        use crate::panic::record;

        macro_rules! panic_const {
            ($($name:ident = $message:literal,)*) => {$(
                #[doc = concat!("`core::panicking::panic_const::", stringify!($name), "`: \"", $message, "\".")]
                #[track_caller]
                #[cold]
                pub fn $name() -> ! {
                    record(&format_args!($message), Location::caller())
                }
            )*};
        }

        panic_const! {
            panic_const_add_overflow = "attempt to add with overflow",
            panic_const_sub_overflow = "attempt to subtract with overflow",
            panic_const_mul_overflow = "attempt to multiply with overflow",
            panic_const_div_overflow = "attempt to divide with overflow",
            panic_const_rem_overflow = "attempt to calculate the remainder with overflow",
            panic_const_neg_overflow = "attempt to negate with overflow",
            panic_const_shr_overflow = "attempt to shift right with overflow",
            panic_const_shl_overflow = "attempt to shift left with overflow",
            panic_const_div_by_zero = "attempt to divide by zero",
            panic_const_rem_by_zero = "attempt to calculate the remainder with a divisor of zero",
        }
    }
}

/// `core::option`'s panics.
pub mod option {
    use core::panic::Location;

    use crate::panic::record;

    /// `core::option::unwrap_failed`: `unwrap()` on `None`.
    #[track_caller]
    #[cold]
    pub fn unwrap_failed() -> ! {
        record(
            &format_args!("called `Option::unwrap()` on a `None` value"),
            Location::caller(),
        )
    }

    /// `core::option::expect_failed`: `expect(msg)` on `None`.
    #[track_caller]
    #[cold]
    pub fn expect_failed(msg: &str) -> ! {
        record(&format_args!("{msg}"), Location::caller())
    }
}

/// `core::result`'s panics.
pub mod result {
    use core::panic::Location;

    use crate::panic::record;

    /// `core::result::unwrap_failed`: `unwrap()` / `expect()` on `Err`, with the error.
    #[track_caller]
    #[cold]
    pub fn unwrap_failed(msg: &str, error: &dyn core::fmt::Debug) -> ! {
        record(&format_args!("{msg}: {error:?}"), Location::caller())
    }
}

/// `core::slice::index`'s panics.
pub mod slice {
    use core::panic::Location;

    use crate::panic::record;

    /// `core::slice::index::slice_index_fail`: a range out of a slice's bounds.
    #[track_caller]
    #[cold]
    pub fn slice_index_fail(start: usize, end: usize, len: usize) -> ! {
        let location = Location::caller();
        if start > len {
            record(
                &format_args!("range start index {start} out of range for slice of length {len}"),
                location,
            )
        }
        if end > len {
            record(
                &format_args!("range end index {end} out of range for slice of length {len}"),
                location,
            )
        }
        if start > end {
            record(
                &format_args!("slice index starts at {start} but ends at {end}"),
                location,
            )
        }
        record(
            &format_args!("range end index {end} out of range for slice of length {len}"),
            location,
        )
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
