//! `DisjointSlice`: an output buffer that each thread writes at its own index.

use core::marker::PhantomData;

use crate::thread::ThreadIndex;

/// A mutable view of a device buffer in which each thread may borrow the element at its own
/// [`ThreadIndex`].
///
/// Many threads hold the same `DisjointSlice` at once, so it cannot hand out `&mut [T]`; but a
/// `ThreadIndex` is unique to its thread, so `get_mut(index)` gives each thread a `&mut T` that
/// no other thread can alias.
///
/// At a kernel boundary it travels as a pointer into global memory and a length, exactly like
/// `&mut [T]`; the host passes a device buffer for it.
pub struct DisjointSlice<T> {
    ptr: *mut T,
    len: usize,
    _owns: PhantomData<T>,
}

impl<T> DisjointSlice<T> {
    /// The number of elements.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the slice has no elements.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The element at this thread's index, or `None` when the index is past the end (the grid
    /// usually has a few more threads than there are elements).
    #[inline]
    pub fn get_mut(&mut self, index: ThreadIndex) -> Option<&mut T> {
        let i = index.get();
        if i < self.len {
            // SAFETY: `i` is in bounds, and no other thread holds the same `ThreadIndex`, so
            // this is the only reference to element `i`.
            Some(unsafe { &mut *self.ptr.add(i) })
        } else {
            None
        }
    }
}
