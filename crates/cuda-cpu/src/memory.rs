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
