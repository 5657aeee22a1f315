//! Shared memory: memory that the threads of one block share, much faster than global memory.
//!
//! A [`SharedArray`] is declared as a `static mut` inside a kernel or device function:
//!
//! ```ignore
//! use cuda_device::{kernel, sync, thread, SharedArray};
//!
//! #[kernel]
//! pub fn reverse_block(data: &mut [f32]) {
//!     static mut TILE: SharedArray<f32, 256> = SharedArray::UNINIT;
//!     let t = thread::threadIdx_x() as usize;
//!     let i = thread::index_1d().get();
//!     unsafe { TILE[t] = data[i] };
//!     sync::syncthreads();
//!     data[i] = unsafe { TILE[255 - t] };
//! }
//! ```
//!
//! Each block gets its own copy of every such static, uninitialised when the block starts; two
//! statics are two separate arrays. Accessing one is `unsafe`: the threads of a block share it,
//! and it is up to the kernel to order their reads and writes with
//! [`syncthreads`](crate::sync::syncthreads). Indexing checks the bounds (a bad index traps the
//! kernel) and compiles to plain `ld.shared` / `st.shared`.
//!
//! Indexing a `static mut` directly creates no reference to it; [`SharedArray::as_mut_ptr`]
//! does, which edition 2024 refuses (`static_mut_refs`) for a `static mut`:
//! `(&raw mut TILE).cast::<f32>()` is the same pointer without a reference.
//!
//! [`DynamicSharedArray`] addresses the block's *dynamic* shared memory, whose size the host
//! chooses at launch (`LaunchConfig::shared_mem_bytes`).
//!
//! A `SharedArray` anywhere else than in a `static mut` (a local variable, a plain `static`) is
//! a compile error of the device code.

use core::marker::PhantomData;
use core::mem::MaybeUninit;
use core::ops::{Index, IndexMut};

use crate::intrinsic::stubs;

/// Address conversions.
pub mod raw {
    use super::*;

    stubs! { "shared::raw";
        /// The shared-window address (`u32`) of the generic address `addr`, which must point
        /// into shared memory (`cvta.to.shared`). Intrinsic.
        pub fn cvta_to_shared(addr: u64) -> u32;
    }
}

/// The address of `ptr`, a pointer into shared memory, in the shared-memory window: what
/// matrix descriptors (`wgmma`) and shared-state-space PTX take. Meaningless for a pointer
/// elsewhere.
#[inline]
pub fn shared_address<T>(ptr: *const T) -> u32 {
    raw::cvta_to_shared(ptr as u64)
}

/// An array of `N` values of type `T` in shared memory, aligned to `ALIGN` bytes (0, the
/// default, means `T`'s own alignment; any other value must be a power of two). Any `T` works,
/// atomics included.
///
/// Declare it as `static mut NAME: SharedArray<T, N> = SharedArray::UNINIT;` in device code.
#[repr(transparent)]
pub struct SharedArray<T, const N: usize, const ALIGN: usize = 0> {
    data: MaybeUninit<[T; N]>,
}

impl<T, const N: usize, const ALIGN: usize> SharedArray<T, N, ALIGN> {
    /// The only initial value a shared array can have: none. Shared memory holds whatever the
    /// previous block left there until the kernel writes it.
    pub const UNINIT: Self = {
        assert!(
            ALIGN == 0 || ALIGN.is_power_of_two(),
            "the alignment of a SharedArray must be 0 (the element's) or a power of two"
        );
        Self {
            data: MaybeUninit::uninit(),
        }
    };

    /// The number of elements, `N`.
    #[inline]
    pub const fn len(&self) -> usize {
        N
    }

    /// Whether the array has no element.
    #[inline]
    pub const fn is_empty(&self) -> bool {
        N == 0
    }

    /// A pointer to the first element.
    #[inline]
    pub const fn as_ptr(&self) -> *const T {
        (self as *const Self).cast()
    }

    /// A mutable pointer to the first element.
    #[inline]
    pub const fn as_mut_ptr(&mut self) -> *mut T {
        (self as *mut Self).cast()
    }
}

impl<T, const N: usize, const ALIGN: usize> Index<usize> for SharedArray<T, N, ALIGN> {
    type Output = T;

    /// The element at `index`. The index is checked as an array's is (the same bounds check,
    /// so the same panic: `index out of bounds: the len is N but the index is I` in a dev
    /// build, a bare trap, merged with its neighbours or turned into a fault, in a release
    /// build).
    #[inline]
    fn index(&self, index: usize) -> &T {
        // SAFETY: the storage is `N` elements of `T`, laid out as `[T; N]`.
        unsafe { &(*self.as_ptr().cast::<[T; N]>())[index] }
    }
}

impl<T, const N: usize, const ALIGN: usize> IndexMut<usize> for SharedArray<T, N, ALIGN> {
    /// The element at `index`, checked as in [`Index::index`].
    #[inline]
    fn index_mut(&mut self, index: usize) -> &mut T {
        // SAFETY: as in `index`; `self` is borrowed mutably for as long as the element.
        unsafe { &mut (*self.as_mut_ptr().cast::<[T; N]>())[index] }
    }
}

/// The block's dynamic shared memory, viewed as an array of `T`: its size is
/// `LaunchConfig::shared_mem_bytes` of the launch (above 48 KiB, the launcher raises the
/// kernel's limit itself). It starts 16-byte aligned; [`offset`](Self::offset) carves several
/// arrays out of it.
pub struct DynamicSharedArray<T>(PhantomData<T>);

impl<T> DynamicSharedArray<T> {
    /// The start of the block's dynamic shared memory.
    #[inline]
    pub fn get() -> *mut T {
        Self::offset(0)
    }

    /// The address `bytes` bytes into the block's dynamic shared memory (keep it aligned for
    /// `T`, and within the launch's `shared_mem_bytes`).
    #[inline]
    pub fn offset(bytes: usize) -> *mut T {
        (&raw mut DYNAMIC_SHARED_MEMORY)
            .cast::<u8>()
            .wrapping_add(bytes)
            .cast()
    }
}

/// What the compiler makes the block's dynamic shared memory of: an external, 16-byte aligned
/// shared array (`.extern .shared .align 16 .b8 name[]`), recognised by this type. On the host
/// it is an empty static that nothing reads.
#[repr(C, align(16))]
pub struct DynamicSharedMemory([u8; 0]);

static mut DYNAMIC_SHARED_MEMORY: DynamicSharedMemory = DynamicSharedMemory([]);
