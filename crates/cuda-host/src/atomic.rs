//! Buffers of atomics: a kernel parameter `&[A]` whose elements are atomic cells (`AtomicU32`,
//! `DeviceAtomicU32`, ...) is a device buffer of their plain type, which the kernel updates:
//! its launcher takes `&mut CudaSlice<A::Plain>`.

use core::sync::atomic::{
    AtomicBool, AtomicI8, AtomicI16, AtomicI32, AtomicI64, AtomicIsize, AtomicU8, AtomicU16,
    AtomicU32, AtomicU64, AtomicUsize,
};

use cuda_device::atomic::{AtomicValue, ScopedAtomic};
use cudarc::driver::DeviceRepr;

/// An atomic cell over a plain type that the host can copy to and from the device.
///
/// # Safety
/// `Self` must have the size, alignment and bit validity of `Plain`, so that a device buffer
/// of `Plain` can be read by the kernel as a slice of `Self`.
pub unsafe trait AtomicElement {
    /// The plain type of the buffer.
    type Plain: DeviceRepr;
}

macro_rules! core_atomics {
    ($($atomic:ty => $plain:ty),* $(,)?) => {$(
        // SAFETY: `core` documents each atomic type as having the in-memory representation of
        // its plain type.
        unsafe impl AtomicElement for $atomic {
            type Plain = $plain;
        }
    )*};
}

core_atomics! {
    AtomicBool => bool,
    AtomicU8 => u8,
    AtomicI8 => i8,
    AtomicU16 => u16,
    AtomicI16 => i16,
    AtomicU32 => u32,
    AtomicI32 => i32,
    AtomicU64 => u64,
    AtomicI64 => i64,
    AtomicUsize => usize,
    AtomicIsize => isize,
}

// SAFETY: `ScopedAtomic<T, _>` is `repr(transparent)` over an `UnsafeCell<T>`, which has the
// representation of `T`.
unsafe impl<T: AtomicValue + DeviceRepr, const SCOPE: u8> AtomicElement for ScopedAtomic<T, SCOPE> {
    type Plain = T;
}
