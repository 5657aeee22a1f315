//! The device heap: CUDA's device-side `malloc` and `free` (PTX system calls), as a
//! [`GlobalAlloc`].
//!
//! Device code that uses `alloc` (`Box`, `Vec`, `String`, `Box<dyn Trait>`, ...) allocates
//! here: the compiler routes `alloc`'s allocator calls (`__rust_alloc` and its siblings) to
//! this heap on the GPU, whatever `#[global_allocator]` the host program has. The heap is
//! shared by every thread of every kernel of the context; its size is fixed before the first
//! launch that allocates (8 MiB by default; `CudaContext::set_heap_size` on the host changes
//! it). An allocation that does not fit fails: `alloc` then calls `handle_alloc_error`, which
//! panics: on the device the kernel stops (a trap) and its launch returns an error.
//!
//! `malloc` returns memory aligned to 16 bytes; a larger alignment is served by allocating
//! more and aligning inside, with the address `malloc` gave kept just below the aligned one
//! for `free`.

use core::alloc::{GlobalAlloc, Layout};

/// The alignment of every address CUDA's device `malloc` returns.
pub const MALLOC_ALIGN: usize = 16;

#[crate::device]
unsafe extern "C" {
    /// CUDA's device-side `malloc`: `size` bytes from the device heap, aligned to
    /// [`MALLOC_ALIGN`], or null when the heap has no room. A PTX system call.
    pub fn malloc(size: usize) -> *mut u8;
    /// CUDA's device-side `free` of an address `malloc` returned (null does nothing). A PTX
    /// system call.
    pub fn free(ptr: *mut u8);
}

/// The device heap as a [`GlobalAlloc`]. Every device allocation goes through it; using it
/// directly is allowed too (`DeviceHeap.alloc(layout)`). On the host its methods call
/// `malloc`/`free` symbols that only exist on the GPU, so it is for device code only.
#[derive(Clone, Copy, Debug, Default)]
pub struct DeviceHeap;

/// `size` bytes aligned to `align` (a power of two) from the device heap, or null.
///
/// # Safety
///
/// Device code only; `align` is a power of two.
pub unsafe fn allocate(size: usize, align: usize) -> *mut u8 {
    if align <= MALLOC_ALIGN {
        // SAFETY: a PTX system call, any size.
        return unsafe { malloc(size) };
    }
    let Some(total) = size.checked_add(align) else {
        return core::ptr::null_mut();
    };
    // SAFETY: as above.
    let raw = unsafe { malloc(total) };
    if raw.is_null() {
        return raw;
    }
    // `raw` is 16-aligned and `align` at least 32, so the aligned address is at least 16
    // bytes past `raw`: room for the pointer `free` needs, below it.
    let offset = align - (raw as usize & (align - 1));
    // SAFETY: `offset` is at most `align`, inside the `size + align` bytes allocated.
    unsafe {
        let aligned = raw.add(offset);
        aligned.cast::<*mut u8>().sub(1).write(raw);
        aligned
    }
}

/// Frees what [`allocate`] returned for the same `align`.
///
/// # Safety
///
/// `ptr` came from [`allocate`] with this `align`, and is not used afterwards.
pub unsafe fn release(ptr: *mut u8, align: usize) {
    // SAFETY: the caller's contract; an over-aligned block keeps `malloc`'s address below it.
    unsafe {
        if align <= MALLOC_ALIGN {
            free(ptr)
        } else {
            free(ptr.cast::<*mut u8>().sub(1).read())
        }
    }
}

// SAFETY: `allocate` returns blocks of the layout's size and alignment (or null), which stay
// valid until `release`.
unsafe impl GlobalAlloc for DeviceHeap {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: a layout's alignment is a power of two.
        unsafe { allocate(layout.size(), layout.align()) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller passes what `alloc` returned for `layout`.
        unsafe { release(ptr, layout.align()) }
    }
}
