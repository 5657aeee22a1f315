//! Device memory on the CPU: host allocations whose addresses are the device pointers, so a
//! kernel dereferences them as they are.

use std::alloc::{Layout, alloc_zeroed, dealloc};
use std::collections::HashMap;
use std::sync::Mutex;

/// The alignment of every allocation (the driver's is at least 256 bytes).
const ALIGN: usize = 256;

/// Live allocations: address -> layout.
static ALLOCATIONS: Mutex<Option<HashMap<u64, Layout>>> = Mutex::new(None);

/// A zeroed allocation of `bytes` (at least one), or `None` when the host has no memory left.
pub(crate) fn allocate(bytes: usize) -> Option<u64> {
    let layout = Layout::from_size_align(bytes.max(1), ALIGN).ok()?;
    // SAFETY: the layout has a non-zero size.
    let ptr = unsafe { alloc_zeroed(layout) };
    if ptr.is_null() {
        return None;
    }
    let address = ptr as u64;
    ALLOCATIONS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get_or_insert_with(HashMap::new)
        .insert(address, layout);
    Some(address)
}

/// Frees an allocation made by [allocate]; false when `address` is not one.
pub(crate) fn free(address: u64) -> bool {
    let layout = ALLOCATIONS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get_or_insert_with(HashMap::new)
        .remove(&address);
    match layout {
        Some(layout) => {
            // SAFETY: allocated by `allocate` with this layout, and removed from the table.
            unsafe { dealloc(address as *mut u8, layout) };
            true
        }
        None => false,
    }
}

/// The context's limits (`cuCtxSetLimit`), by `CUlimit` value; the driver's defaults.
static LIMITS: Mutex<Option<HashMap<u32, usize>>> = Mutex::new(None);

/// `CU_LIMIT_MALLOC_HEAP_SIZE`.
const HEAP_LIMIT: u32 = 2;

/// Sets limit `limit` to `value`.
pub(crate) fn set_limit(limit: u32, value: usize) {
    LIMITS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get_or_insert_with(HashMap::new)
        .insert(limit, value);
}

/// The value of limit `limit` (the device heap's default is 8 MiB, as on a GPU).
pub(crate) fn limit(limit: u32) -> usize {
    let set = LIMITS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get_or_insert_with(HashMap::new)
        .get(&limit)
        .copied();
    set.unwrap_or(match limit {
        HEAP_LIMIT => 8 << 20,
        0 => 1024,
        _ => 0,
    })
}

/// The device heap's live blocks: address -> size.
static HEAP: Mutex<Option<(usize, HashMap<usize, usize>)>> = Mutex::new(None);

/// `malloc` of device code: null once the live blocks would exceed the heap's limit.
pub(crate) fn heap_allocate(bytes: usize) -> *mut u8 {
    let mut heap = HEAP.lock().unwrap_or_else(|e| e.into_inner());
    let (used, blocks) = heap.get_or_insert_with(|| (0, HashMap::new()));
    if used.saturating_add(bytes) > limit(HEAP_LIMIT) {
        return std::ptr::null_mut();
    }
    let Ok(layout) = Layout::from_size_align(bytes.max(1), 16) else {
        return std::ptr::null_mut();
    };
    // SAFETY: a non-zero size.
    let ptr = unsafe { std::alloc::alloc(layout) };
    if !ptr.is_null() {
        *used += bytes;
        blocks.insert(ptr as usize, bytes);
    }
    ptr
}

/// `free` of device code (null and unknown pointers are ignored).
pub(crate) fn heap_free(ptr: *mut u8) {
    let mut heap = HEAP.lock().unwrap_or_else(|e| e.into_inner());
    let (used, blocks) = heap.get_or_insert_with(|| (0, HashMap::new()));
    if let Some(bytes) = blocks.remove(&(ptr as usize)) {
        *used -= bytes;
        // SAFETY: allocated by `heap_allocate` with this layout.
        unsafe { dealloc(ptr, Layout::from_size_align_unchecked(bytes.max(1), 16)) };
    }
}
