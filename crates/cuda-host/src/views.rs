//! Device buffers as kernel arguments: a whole `CudaSlice`, or a view of part of one
//! (`buffer.slice(a..b)`, `buffer.slice_mut(..)`, `split_at_mut`, ...), checked against the
//! kernel's parameter types at compile time like whole buffers.
//!
//! | kernel parameter | the launcher takes |
//! |---|---|
//! | `&[T]` | `&CudaSlice<T>`, `&CudaView<T>`, `&CudaViewMut<T>` |
//! | `&mut [T]`, `DisjointSlice<T>`, `&[Atomic]` | `&mut CudaSlice<T>`, `&mut CudaViewMut<T>` |
//!
//! The kernel sees a view as a slice of the view's own length, starting at its first element.

use cudarc::driver::sys::CUdeviceptr;
use cudarc::driver::{
    CudaSlice, CudaStream, CudaView, CudaViewMut, DevicePtr, DevicePtrMut, DeviceSlice, SyncOnDrop,
};

/// Where a buffer lies in device memory, and the guard that records its use on the stream it
/// was located for (cudarc's ordering of later copies and frees after this use).
pub struct Located<'s> {
    /// The device address of the first element.
    pub ptr: CUdeviceptr,
    /// The number of elements.
    pub len: usize,
    /// Records the use on the stream when dropped: drop it once the work is queued.
    pub guard: SyncOnDrop<'s>,
}

mod sealed {
    pub trait Sealed {}
    impl<T> Sealed for cudarc::driver::CudaSlice<T> {}
    impl<T> Sealed for cudarc::driver::CudaView<'_, T> {}
    impl<T> Sealed for cudarc::driver::CudaViewMut<'_, T> {}
}

/// A device buffer of `T` that a kernel reads through a `&[T]` parameter: a `CudaSlice<T>`,
/// or a view of one. Launchers take it by reference (`&a`, `&a.slice(256..512)`).
///
/// Sealed: the launch trusts the pointer and length it reports.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a device buffer of `{T}` that the kernel can read",
    label = "the kernel takes `&[{T}]` here",
    note = "pass `&CudaSlice<{T}>`, or a view of one: `&buffer.slice(start..end)` (`&CudaView<{T}>`)"
)]
pub trait DeviceSliceArg<T>: sealed::Sealed {
    /// The number of elements the kernel sees.
    fn elements(&self) -> usize;

    /// Locates the buffer for a read on `stream`: makes `stream` wait for earlier writes
    /// (cudarc's event tracking), and returns the guard that records this read.
    #[doc(hidden)]
    fn locate_read<'s>(&'s self, stream: &'s CudaStream) -> Located<'s>;
}

/// A device buffer of `T` that a kernel writes through a `&mut [T]`, `DisjointSlice<T>` or
/// atomic-slice parameter: a `CudaSlice<T>`, or a mutable view of one. Launchers take it by
/// mutable reference (`&mut c`, `&mut c.slice_mut(..n)`).
///
/// Sealed: the launch trusts the pointer and length it reports.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a device buffer of `{T}` that the kernel can write",
    label = "the kernel writes `{T}`s here",
    note = "pass `&mut CudaSlice<{T}>`, or a mutable view of one: `&mut buffer.slice_mut(start..end)` (`&mut CudaViewMut<{T}>`)"
)]
pub trait DeviceSliceMutArg<T>: sealed::Sealed {
    /// The number of elements the kernel sees.
    fn elements(&self) -> usize;

    /// Locates the buffer for a write on `stream`: makes `stream` wait for earlier reads and
    /// writes, and returns the guard that records this write.
    #[doc(hidden)]
    fn locate_write<'s>(&'s mut self, stream: &'s CudaStream) -> Located<'s>;
}

macro_rules! readable {
    ($($buffer:ty),*) => {$(
        impl<T> DeviceSliceArg<T> for $buffer {
            fn elements(&self) -> usize {
                DeviceSlice::len(self)
            }

            fn locate_read<'s>(&'s self, stream: &'s CudaStream) -> Located<'s> {
                let (ptr, guard) = DevicePtr::device_ptr(self, stream);
                Located { ptr, len: DeviceSlice::len(self), guard }
            }
        }
    )*};
}

readable!(CudaSlice<T>, CudaView<'_, T>, CudaViewMut<'_, T>);

macro_rules! writable {
    ($($buffer:ty),*) => {$(
        impl<T> DeviceSliceMutArg<T> for $buffer {
            fn elements(&self) -> usize {
                DeviceSlice::len(self)
            }

            fn locate_write<'s>(&'s mut self, stream: &'s CudaStream) -> Located<'s> {
                let len = DeviceSlice::len(self);
                let (ptr, guard) = DevicePtrMut::device_ptr_mut(self, stream);
                Located { ptr, len, guard }
            }
        }
    )*};
}

writable!(CudaSlice<T>, CudaViewMut<'_, T>);
