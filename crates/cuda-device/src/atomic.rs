//! Atomic memory operations with a scope: [`DeviceAtomicU32`] (the GPU, PTX `.gpu`),
//! [`BlockAtomicU32`] (the thread block, `.cta`), [`SystemAtomicU32`] (the GPU, the host and
//! peer GPUs, `.sys`), and the same for `i32`, `u64`, `i64`, `f32` and `f64`.
//!
//! Each is `#[repr(transparent)]` over its plain type: a `&[DeviceAtomicU32]` kernel parameter
//! is a buffer of `u32` (the host passes `&mut CudaSlice<u32>`), and
//! [`from_ptr`](ScopedAtomic::from_ptr) views any `u32` in global or shared memory as one.
//! The methods follow `core::sync::atomic` and take an [`AtomicOrdering`]; an ordering that an
//! operation cannot have (a `Release` load, a `Release` failure ordering) panics, which traps
//! the kernel, as `core` does.
//!
//! A narrower scope is cheaper: a block-scope atomic only synchronises with the threads of the
//! same block, and is the right choice for block-private counters and shared memory.
//! `core::sync::atomic` types work in device code too, with the `.gpu` scope.
//!
//! Every operation compiles to one PTX instruction of the memory model (`ld.acquire.gpu`,
//! `atom.acq_rel.cta.add.u32`, ...; `SeqCst` adds `fence.sc.<scope>` before it) and needs
//! sm_70 or newer.

use core::cell::UnsafeCell;

/// The memory ordering of an atomic operation, as in `core::sync::atomic::Ordering`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum AtomicOrdering {
    /// Only atomicity: no ordering with other memory accesses (PTX `.relaxed`).
    Relaxed,
    /// For loads: accesses after it are not moved before it (PTX `.acquire`).
    Acquire,
    /// For stores: accesses before it are not moved after it (PTX `.release`).
    Release,
    /// Both, for read-modify-write operations (PTX `.acq_rel`).
    AcqRel,
    /// `AcqRel`, and all `SeqCst` operations of the scope in one total order (PTX
    /// `fence.sc` before the operation).
    SeqCst,
}

/// The threads an atomic operation or fence synchronises with.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Scope {
    /// The threads of the same block (PTX `.cta`).
    Block = 0,
    /// The threads of the same GPU (PTX `.gpu`).
    Device = 1,
    /// Every thread of the system: the host's and other GPUs' too (PTX `.sys`).
    System = 2,
}

/// The stubs the compiler replaces by atomic instructions. Orderings are encoded as `core`'s
/// compiler intrinsics encode them; scopes as [`Scope`]; read-modify-writes as the `OP_*`
/// constants.
pub(crate) mod intrinsics {
    use crate::intrinsic::host_call;

    pub const RELAXED: u8 = 0;
    pub const RELEASE: u8 = 1;
    pub const ACQUIRE: u8 = 2;
    pub const ACQ_REL: u8 = 3;
    pub const SEQ_CST: u8 = 4;

    pub const OP_XCHG: u8 = 0;
    pub const OP_ADD: u8 = 1;
    pub const OP_SUB: u8 = 2;
    pub const OP_AND: u8 = 3;
    pub const OP_OR: u8 = 4;
    pub const OP_XOR: u8 = 5;
    pub const OP_MAX: u8 = 6;
    pub const OP_MIN: u8 = 7;

    /// Atomically reads `*ptr`.
    #[inline(never)]
    pub unsafe fn load<T: Copy, const SCOPE: u8, const ORDER: u8>(ptr: *const T) -> T {
        let _ = ptr;
        host_call("cuda_device::atomic::intrinsics::load")
    }

    /// Atomically writes `value` to `*ptr`.
    #[inline(never)]
    pub unsafe fn store<T: Copy, const SCOPE: u8, const ORDER: u8>(ptr: *mut T, value: T) {
        let _ = (ptr, value);
        host_call("cuda_device::atomic::intrinsics::store")
    }

    /// Atomically replaces `*ptr` by `old <OP> value`; returns `old`.
    #[inline(never)]
    pub unsafe fn rmw<T: Copy, const OP: u8, const SCOPE: u8, const ORDER: u8>(
        ptr: *mut T,
        value: T,
    ) -> T {
        let _ = (ptr, value);
        host_call("cuda_device::atomic::intrinsics::rmw")
    }

    /// Atomically replaces `*ptr` by `new` if it equals `current`; returns the old value and
    /// whether it was replaced.
    #[inline(never)]
    pub unsafe fn cmpxchg<T: Copy, const SCOPE: u8, const SUCCESS: u8, const FAILURE: u8>(
        ptr: *mut T,
        current: T,
        new: T,
    ) -> (T, bool) {
        let _ = (ptr, current, new);
        host_call("cuda_device::atomic::intrinsics::cmpxchg")
    }

    /// A memory fence.
    #[inline(never)]
    pub fn fence<const SCOPE: u8, const ORDER: u8>() {
        host_call("cuda_device::atomic::intrinsics::fence")
    }
}

use intrinsics::*;

/// Evaluates `$body` with `$o` the constant of `$order`; the orderings in `$invalid` panic
/// with `$message`.
macro_rules! with_ordering {
    ($order:expr, |$o:ident| $body:expr $(, $invalid:ident => $message:literal)*) => {
        match $order {
            $(AtomicOrdering::$invalid => panic!($message),)*
            #[allow(unreachable_patterns)]
            AtomicOrdering::Relaxed => {
                const $o: u8 = RELAXED;
                $body
            }
            #[allow(unreachable_patterns)]
            AtomicOrdering::Acquire => {
                const $o: u8 = ACQUIRE;
                $body
            }
            #[allow(unreachable_patterns)]
            AtomicOrdering::Release => {
                const $o: u8 = RELEASE;
                $body
            }
            #[allow(unreachable_patterns)]
            AtomicOrdering::AcqRel => {
                const $o: u8 = ACQ_REL;
                $body
            }
            AtomicOrdering::SeqCst => {
                const $o: u8 = SEQ_CST;
                $body
            }
        }
    };
}

/// A memory fence at `scope` (`cuda::atomic_thread_fence(order, scope)`): with `Acquire`,
/// this thread's later accesses stay after its earlier loads; with `Release`, its earlier
/// accesses stay before its later stores; `AcqRel` both; `SeqCst` a sequentially consistent
/// fence (PTX `fence.sc`, the others `fence.acq_rel`). A `Relaxed` fence panics.
#[inline]
pub fn fence(order: AtomicOrdering, scope: Scope) {
    match scope {
        Scope::Block => fence_at::<{ Scope::Block as u8 }>(order),
        Scope::Device => fence_at::<{ Scope::Device as u8 }>(order),
        Scope::System => fence_at::<{ Scope::System as u8 }>(order),
    }
}

#[inline]
fn fence_at<const SCOPE: u8>(order: AtomicOrdering) {
    with_ordering!(order, |O| intrinsics::fence::<SCOPE, O>(),
        Relaxed => "there is no such thing as a relaxed fence")
}

/// An atomic `T` whose operations synchronise with the threads of scope `SCOPE` (a [`Scope`]
/// as `u8`). Use it through its aliases: [`DeviceAtomicU32`], [`BlockAtomicF32`], ...
#[repr(transparent)]
pub struct ScopedAtomic<T, const SCOPE: u8> {
    value: UnsafeCell<T>,
}

// SAFETY: every access to the value is atomic.
unsafe impl<T: Send, const SCOPE: u8> Sync for ScopedAtomic<T, SCOPE> {}

impl<T: Copy, const SCOPE: u8> ScopedAtomic<T, SCOPE> {
    /// A new atomic holding `value`.
    #[inline]
    pub const fn new(value: T) -> Self {
        ScopedAtomic {
            value: UnsafeCell::new(value),
        }
    }

    /// Views the `T` at `ptr` as an atomic.
    ///
    /// # Safety
    /// `ptr` must be aligned for `T`, valid for reads and writes for `'a`, and every access
    /// to it during `'a` must be atomic.
    #[inline]
    pub const unsafe fn from_ptr<'a>(ptr: *mut T) -> &'a Self {
        // SAFETY: `Self` is `repr(transparent)` over `T`; the caller upholds the rest.
        unsafe { &*ptr.cast::<Self>() }
    }

    /// The address of the value.
    #[inline]
    pub const fn as_ptr(&self) -> *mut T {
        self.value.get()
    }

    /// The value, consuming the atomic.
    #[inline]
    pub fn into_inner(self) -> T {
        self.value.into_inner()
    }

    /// The value, through an exclusive reference (no atomic access needed).
    #[inline]
    pub fn get_mut(&mut self) -> &mut T {
        self.value.get_mut()
    }
}

/// The value types of scoped atomics: `u32`, `i32`, `u64`, `i64`, `f32`, `f64`.
pub trait AtomicValue: Copy + sealed::Sealed {
    /// The unsigned integer of the same width, which exchanges and compare-exchanges move.
    type Bits: Copy;
    /// The bits of `self`.
    fn to_bits(self) -> Self::Bits;
    /// The value of `bits`.
    fn from_bits(bits: Self::Bits) -> Self;
}

/// The integer types of scoped atomics, which also have bitwise and min/max operations.
pub trait AtomicInteger: AtomicValue {}

mod sealed {
    pub trait Sealed {}
}

macro_rules! values {
    ($($t:ty => $bits:ty, |$v:ident| $to:expr, |$b:ident| $from:expr;)*) => {$(
        impl sealed::Sealed for $t {}
        impl AtomicValue for $t {
            type Bits = $bits;
            #[inline]
            fn to_bits(self) -> $bits {
                let $v = self;
                $to
            }
            #[inline]
            fn from_bits($b: $bits) -> Self {
                $from
            }
        }
    )*};
}

values! {
    u32 => u32, |v| v, |b| b;
    i32 => u32, |v| v as u32, |b| b as i32;
    u64 => u64, |v| v, |b| b;
    i64 => u64, |v| v as u64, |b| b as i64;
    f32 => u32, |v| v.to_bits(), |b| f32::from_bits(b);
    f64 => u64, |v| v.to_bits(), |b| f64::from_bits(b);
}

impl AtomicInteger for u32 {}
impl AtomicInteger for i32 {}
impl AtomicInteger for u64 {}
impl AtomicInteger for i64 {}

/// `OP` on the value at `ptr`.
///
/// # Safety
/// `ptr` is valid for atomic accesses.
#[inline]
unsafe fn rmw_at<T: Copy, const OP: u8, const SCOPE: u8>(
    ptr: *mut T,
    value: T,
    order: AtomicOrdering,
) -> T {
    // SAFETY: the caller's pointer is valid for atomic accesses.
    unsafe { with_ordering!(order, |O| intrinsics::rmw::<T, OP, SCOPE, O>(ptr, value)) }
}

impl<T: AtomicValue, const SCOPE: u8> ScopedAtomic<T, SCOPE> {
    /// The value's bits, as the integer that exchanges move.
    #[inline]
    fn bits(&self) -> *mut T::Bits {
        self.as_ptr().cast()
    }

    #[inline]
    fn rmw<const OP: u8>(&self, value: T, order: AtomicOrdering) -> T {
        // SAFETY: the pointer is this atomic's own, which only atomic accesses touch.
        unsafe { rmw_at::<T, OP, SCOPE>(self.as_ptr(), value, order) }
    }

    /// Atomically reads the value. A `Release` or `AcqRel` load panics.
    #[inline]
    pub fn load(&self, order: AtomicOrdering) -> T {
        let ptr = self.as_ptr();
        // SAFETY: as in `rmw`.
        unsafe {
            with_ordering!(order, |O| intrinsics::load::<T, SCOPE, O>(ptr),
                Release => "there is no such thing as a release load",
                AcqRel => "there is no such thing as an acquire-release load")
        }
    }

    /// Atomically writes `value`. An `Acquire` or `AcqRel` store panics.
    #[inline]
    pub fn store(&self, value: T, order: AtomicOrdering) {
        let ptr = self.as_ptr();
        // SAFETY: as in `rmw`.
        unsafe {
            with_ordering!(order, |O| intrinsics::store::<T, SCOPE, O>(ptr, value),
                Acquire => "there is no such thing as an acquire store",
                AcqRel => "there is no such thing as an acquire-release store")
        }
    }

    /// Atomically writes `value`; returns the previous value.
    #[inline]
    pub fn swap(&self, value: T, order: AtomicOrdering) -> T {
        // SAFETY: `T::Bits` has the size and alignment of `T`; as in `rmw`.
        let old = unsafe { rmw_at::<T::Bits, OP_XCHG, SCOPE>(self.bits(), value.to_bits(), order) };
        T::from_bits(old)
    }

    /// Atomically adds `value` (wrapping for integers); returns the previous value.
    #[inline]
    pub fn fetch_add(&self, value: T, order: AtomicOrdering) -> T {
        self.rmw::<OP_ADD>(value, order)
    }

    /// Atomically subtracts `value` (wrapping for integers); returns the previous value.
    #[inline]
    pub fn fetch_sub(&self, value: T, order: AtomicOrdering) -> T {
        self.rmw::<OP_SUB>(value, order)
    }

    /// Atomically writes `new` if the value is `current` (for floats: has the bits of
    /// `current`, so `-0.0` is not `0.0` and a NaN matches itself): `Ok(current)` if it did,
    /// else `Err(value)`. `failure` orders the load when it does not write; a `Release` or
    /// `AcqRel` failure ordering panics.
    #[inline]
    pub fn compare_exchange(
        &self,
        current: T,
        new: T,
        success: AtomicOrdering,
        failure: AtomicOrdering,
    ) -> Result<T, T> {
        let (ptr, current, new) = (self.bits(), current.to_bits(), new.to_bits());
        // SAFETY: as in `swap`.
        let (old, ok) = unsafe {
            with_ordering!(success, |S| with_ordering!(failure,
                |F| intrinsics::cmpxchg::<T::Bits, SCOPE, S, F>(ptr, current, new),
                Release => "there is no such thing as a release failure ordering",
                AcqRel => "there is no such thing as an acquire-release failure ordering"))
        };
        if ok {
            Ok(T::from_bits(old))
        } else {
            Err(T::from_bits(old))
        }
    }

    /// Applies `f` to the value until a compare-exchange stores its result, as
    /// `core::sync::atomic::AtomicU32::fetch_update`: returns `Ok(previous)`, or
    /// `Err(previous)` once `f` returns `None`.
    #[inline]
    pub fn fetch_update(
        &self,
        set_order: AtomicOrdering,
        fetch_order: AtomicOrdering,
        mut f: impl FnMut(T) -> Option<T>,
    ) -> Result<T, T> {
        let mut previous = self.load(fetch_order);
        while let Some(next) = f(previous) {
            match self.compare_exchange(previous, next, set_order, fetch_order) {
                Ok(value) => return Ok(value),
                Err(value) => previous = value,
            }
        }
        Err(previous)
    }
}

impl<T: AtomicInteger, const SCOPE: u8> ScopedAtomic<T, SCOPE> {
    /// Atomically ands with `value`; returns the previous value.
    #[inline]
    pub fn fetch_and(&self, value: T, order: AtomicOrdering) -> T {
        self.rmw::<OP_AND>(value, order)
    }

    /// Atomically ors with `value`; returns the previous value.
    #[inline]
    pub fn fetch_or(&self, value: T, order: AtomicOrdering) -> T {
        self.rmw::<OP_OR>(value, order)
    }

    /// Atomically exclusive-ors with `value`; returns the previous value.
    #[inline]
    pub fn fetch_xor(&self, value: T, order: AtomicOrdering) -> T {
        self.rmw::<OP_XOR>(value, order)
    }

    /// Atomically keeps the larger of the value and `value`; returns the previous value.
    #[inline]
    pub fn fetch_max(&self, value: T, order: AtomicOrdering) -> T {
        self.rmw::<OP_MAX>(value, order)
    }

    /// Atomically keeps the smaller of the value and `value`; returns the previous value.
    #[inline]
    pub fn fetch_min(&self, value: T, order: AtomicOrdering) -> T {
        self.rmw::<OP_MIN>(value, order)
    }
}

/// 128-bit atomics (sm_90 and newer: PTX's `atom.cas.b128` and `atom.exch.b128`, the only
/// 128-bit atomic instructions). Building one for an older GPU is an error at the call.
macro_rules! atomics_128 {
    ($($t:ty),*) => {$(
        impl<const SCOPE: u8> ScopedAtomic<$t, SCOPE> {
            /// Atomically writes `value`; returns the previous value (`atom.exch.b128`).
            #[inline]
            pub fn swap(&self, value: $t, order: AtomicOrdering) -> $t {
                // SAFETY: the pointer is this atomic's own, which only atomic accesses touch.
                unsafe { rmw_at::<$t, OP_XCHG, SCOPE>(self.as_ptr(), value, order) }
            }

            /// Atomically writes `new` if the value is `current`: `Ok(current)` if it did,
            /// else `Err(value)` (`atom.cas.b128`). A `Release` or `AcqRel` failure ordering
            /// panics.
            #[inline]
            pub fn compare_exchange(
                &self,
                current: $t,
                new: $t,
                success: AtomicOrdering,
                failure: AtomicOrdering,
            ) -> Result<$t, $t> {
                let ptr = self.as_ptr();
                // SAFETY: as in `swap`.
                let (old, ok) = unsafe {
                    with_ordering!(success, |S| with_ordering!(failure,
                        |F| intrinsics::cmpxchg::<$t, SCOPE, S, F>(ptr, current, new),
                        Release => "there is no such thing as a release failure ordering",
                        AcqRel => "there is no such thing as an acquire-release failure ordering"))
                };
                if ok { Ok(old) } else { Err(old) }
            }

            /// Atomically reads the value, as a compare-exchange of 0 with 0 (the GPU has no
            /// 128-bit atomic load; the memory must be writable). A `Release` or `AcqRel`
            /// load panics.
            #[inline]
            pub fn load(&self, order: AtomicOrdering) -> $t {
                if matches!(order, AtomicOrdering::Release | AtomicOrdering::AcqRel) {
                    panic!("there is no such thing as a release or acquire-release load");
                }
                match self.compare_exchange(0, 0, order, order) {
                    Ok(value) | Err(value) => value,
                }
            }

            /// Atomically writes `value`, as a [`swap`](Self::swap) whose result is unused.
            #[inline]
            pub fn store(&self, value: $t, order: AtomicOrdering) {
                self.swap(value, order);
            }
        }
    )*};
}

atomics_128!(u128, i128);

macro_rules! aliases {
    ($($scope:ident: $($name:ident = $t:ty),*;)*) => {$($(
        #[doc = concat!("An atomic `", stringify!($t), "` of scope [`Scope::", stringify!($scope), "`].")]
        pub type $name = ScopedAtomic<$t, { Scope::$scope as u8 }>;
    )*)*};
}

aliases! {
    Device: DeviceAtomicU32 = u32, DeviceAtomicI32 = i32, DeviceAtomicU64 = u64,
        DeviceAtomicI64 = i64, DeviceAtomicF32 = f32, DeviceAtomicF64 = f64;
    Block: BlockAtomicU32 = u32, BlockAtomicI32 = i32, BlockAtomicU64 = u64,
        BlockAtomicI64 = i64, BlockAtomicF32 = f32, BlockAtomicF64 = f64;
    System: SystemAtomicU32 = u32, SystemAtomicI32 = i32, SystemAtomicU64 = u64,
        SystemAtomicI64 = i64, SystemAtomicF32 = f32, SystemAtomicF64 = f64;
    Device: DeviceAtomicU128 = u128, DeviceAtomicI128 = i128;
    Block: BlockAtomicU128 = u128, BlockAtomicI128 = i128;
    System: SystemAtomicU128 = u128, SystemAtomicI128 = i128;
}
