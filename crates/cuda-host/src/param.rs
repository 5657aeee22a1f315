//! Host-side argument packing: each kernel argument becomes exactly the PTX parameters that
//! [`kernel_abi::slots`] gives for its [`ParamKind`], the same function the device lowering
//! uses to build the kernel's `.entry` signature.

use std::ffi::c_void;
use std::mem::{MaybeUninit, align_of, size_of};

use cudarc::driver::sys::CUdeviceptr;
use cudarc::driver::{CudaSlice, CudaStream, CudaView, CudaViewMut, SyncOnDrop};
use kernel_abi::ParamKind;

use crate::target::{LaunchTarget, Placed};
use crate::views::{DeviceSliceArg, DeviceSliceMutArg};

/// A value that can be an argument of a kernel launch.
///
/// Implemented for the host side of every kernel parameter type:
///
/// | kernel parameter | host argument |
/// |---|---|
/// | `&[T]` | `&CudaSlice<T>`, `&CudaView<T>`, `&CudaViewMut<T>` |
/// | `&mut [T]`, `DisjointSlice<T>` | `&mut CudaSlice<T>`, `&mut CudaViewMut<T>` |
/// | integers, floats, `bool`, `char` | the value |
/// | raw pointers | the (device) pointer |
/// | structs, tuples, closures | [`ByValue`] of the value |
/// | `&T` (a grid constant) | [`GridConstant`] of a `&T` |
///
/// # Safety
/// [`push`](Self::push) must push device-valid data in exactly the slots of
/// `kernel_abi::slots(Self::KIND)`: the kernel reads them as that type. (The launch checks the
/// count and sizes; it cannot check the contents.)
pub unsafe trait KernelParam<'a> {
    /// How the kernel receives this parameter.
    const KIND: ParamKind;

    /// Appends this argument's PTX parameters to `args`.
    fn push(self, args: &mut KernelArgs<'a>);
}

/// One PTX parameter value, in storage aligned for any kernel parameter type.
struct Slot {
    chunks: Box<[Chunk]>,
    size: usize,
}

/// 16 bytes aligned to 16: the largest alignment of a scalar kernel parameter.
#[derive(Copy, Clone)]
#[repr(C, align(16))]
struct Chunk([MaybeUninit<u8>; 16]);

impl Slot {
    fn new<T: Copy>(value: &T) -> Self {
        let size = size_of::<T>();
        let mut chunks =
            vec![Chunk([MaybeUninit::uninit(); 16]); size.div_ceil(16).max(1)].into_boxed_slice();
        // SAFETY: `chunks` holds at least `size` bytes and does not overlap `value`; the copy
        // is untyped, so padding bytes stay uninitialised instead of being read as `u8`.
        unsafe {
            std::ptr::copy_nonoverlapping(
                (value as *const T).cast::<MaybeUninit<u8>>(),
                chunks.as_mut_ptr().cast::<MaybeUninit<u8>>(),
                size,
            );
        }
        Slot { chunks, size }
    }
}

/// The arguments of one launch, in PTX parameter order, with the stream-ordering guards of the
/// buffers they borrow.
pub struct KernelArgs<'a> {
    /// Where the launch goes, which decides where buffers are located.
    target: LaunchTarget<'a>,
    slots: Vec<Slot>,
    /// Record each buffer's read or write event on the stream when dropped, after the launch,
    /// so that cudarc orders later copies and frees of the buffer after this kernel.
    guards: Vec<SyncOnDrop<'a>>,
    /// Per argument: its kind, and how many slots it pushed.
    params: Vec<(ParamKind, usize)>,
}

impl<'a> KernelArgs<'a> {
    /// Starts an empty argument list for a launch on `stream`.
    pub fn new(stream: &'a CudaStream) -> Self {
        Self::for_target(LaunchTarget::of(stream))
    }

    /// Starts an empty argument list for a launch to `target`, which the generated launcher
    /// chose.
    #[doc(hidden)]
    pub fn for_target(target: LaunchTarget<'a>) -> Self {
        KernelArgs {
            target,
            slots: Vec::new(),
            guards: Vec::new(),
            params: Vec::new(),
        }
    }

    #[cfg(test)]
    fn without_stream() -> Self {
        Self::for_target(LaunchTarget::nowhere())
    }

    /// Appends a device buffer the kernel reads (a `&[T]` parameter): a whole `CudaSlice` or
    /// a view of one.
    pub fn slice<T, B: DeviceSliceArg<T>>(&mut self, buffer: &'a B) -> &mut Self {
        let before = self.slots.len();
        self.push_read(buffer);
        self.params
            .push((ParamKind::Slice, self.slots.len() - before));
        self
    }

    /// Appends a device buffer the kernel writes (a `&mut [T]`, `DisjointSlice<T>` or atomic
    /// slice parameter): a whole `CudaSlice` or a mutable view of one.
    pub fn slice_mut<T, B: DeviceSliceMutArg<T>>(&mut self, buffer: &'a mut B) -> &mut Self {
        let before = self.slots.len();
        self.push_write(buffer);
        self.params
            .push((ParamKind::Slice, self.slots.len() - before));
        self
    }

    fn push_read<T, B: DeviceSliceArg<T>>(&mut self, buffer: &'a B) {
        let Placed { ptr, len, guard } = self.target.read::<T, B>(buffer);
        self.push_located::<T>(ptr, len, guard);
    }

    fn push_write<T, B: DeviceSliceMutArg<T>>(&mut self, buffer: &'a mut B) {
        let Placed { ptr, len, guard } = self.target.write::<T, B>(buffer);
        self.push_located::<T>(ptr, len, guard);
    }

    /// Pushes a buffer as the ABI's slice: device pointer, then element count. The pointer is
    /// never null: the kernel's code assumes so (LLVM `nonnull`, as for a Rust slice), so an
    /// empty buffer without an address is passed as a dangling, aligned one, like
    /// `NonNull::dangling`; the kernel never dereferences it (the length is 0).
    fn push_located<T>(&mut self, ptr: CUdeviceptr, len: usize, guard: Option<SyncOnDrop<'a>>) {
        let ptr = non_null_slice_ptr::<T>(ptr);
        self.push_slot(&ptr);
        self.push_slot(&(len as u64));
        self.guards.extend(guard);
    }

    /// Where the launch goes, as chosen when the list was started.
    pub(crate) fn target(&mut self) -> &mut LaunchTarget<'a> {
        &mut self.target
    }

    /// Appends one kernel argument.
    pub fn arg<P: KernelParam<'a>>(&mut self, param: P) -> &mut Self {
        let before = self.slots.len();
        param.push(self);
        self.params.push((P::KIND, self.slots.len() - before));
        self
    }

    /// Appends one PTX parameter holding the bytes of `value`.
    pub fn push_slot<T: Copy>(&mut self, value: &T) {
        if size_of::<T>() > 0 {
            self.slots.push(Slot::new(value));
        }
    }

    /// Keeps a buffer's ordering guard alive until the launch has been queued.
    pub fn keep(&mut self, guard: SyncOnDrop<'a>) {
        self.guards.push(guard);
    }

    /// The size in bytes of every PTX parameter pushed so far.
    pub fn slot_sizes(&self) -> Vec<u32> {
        self.slots.iter().map(|s| s.size as u32).collect()
    }

    /// Checks that every argument pushed exactly its kind's slots; returns the first that
    /// did not, as (argument index, expected sizes, pushed sizes).
    pub(crate) fn check(&self) -> Result<(), (usize, ParamKind, Vec<u32>, Vec<u32>)> {
        let mut next = 0;
        for (index, &(kind, count)) in self.params.iter().enumerate() {
            let expected: Vec<u32> = kernel_abi::slots(kind)
                .as_slice()
                .iter()
                .map(|s| s.size())
                .collect();
            let pushed: Vec<u32> = self.slots[next..next + count]
                .iter()
                .map(|s| s.size as u32)
                .collect();
            if expected != pushed {
                return Err((index, kind, expected, pushed));
            }
            next += count;
        }
        Ok(())
    }

    /// The `void**` array `cuLaunchKernel` reads: one pointer per slot, into storage that lives
    /// as long as `self`.
    pub(crate) fn pointers(&mut self) -> Vec<*mut c_void> {
        self.slots
            .iter_mut()
            .map(|s| s.chunks.as_mut_ptr().cast::<c_void>())
            .collect()
    }
}

macro_rules! read_buffers {
    ($($buffer:ty),*) => {$(
        /// `&[T]` in the kernel: the buffer's device pointer and its length.
        // SAFETY: `KernelArgs::slice` pushes a pointer to `len` elements of device memory, then
        // `len`; the ordering guard makes the kernel wait for earlier writes to the buffer.
        unsafe impl<'a, T> KernelParam<'a> for &'a $buffer {
            const KIND: ParamKind = ParamKind::Slice;

            fn push(self, args: &mut KernelArgs<'a>) {
                args.push_read(self);
            }
        }
    )*};
}

read_buffers!(CudaSlice<T>, CudaView<'_, T>, CudaViewMut<'_, T>);

macro_rules! write_buffers {
    ($($buffer:ty),*) => {$(
        /// `&mut [T]` or `DisjointSlice<T>` in the kernel: the buffer's device pointer and its
        /// length.
        // SAFETY: as for reads; the guard orders the kernel after earlier reads and writes.
        unsafe impl<'a, T> KernelParam<'a> for &'a mut $buffer {
            const KIND: ParamKind = ParamKind::Slice;

            fn push(self, args: &mut KernelArgs<'a>) {
                args.push_write(self);
            }
        }
    )*};
}

write_buffers!(CudaSlice<T>, CudaViewMut<'_, T>);

macro_rules! scalar_params {
    ($($ty:ty),*) => {$(
        // SAFETY: a scalar is plain data, the same on host and device.
        unsafe impl KernelParam<'_> for $ty {
            const KIND: ParamKind = ParamKind::Scalar { size: size_of::<$ty>() as u32 };

            fn push(self, args: &mut KernelArgs<'_>) {
                args.push_slot(&self);
            }
        }
    )*};
}

scalar_params!(
    u8, u16, u32, u64, u128, usize, i8, i16, i32, i64, i128, isize, f32, f64, bool, char
);

/// A raw pointer parameter. The pointer must point into device memory: kernels with raw
/// pointer parameters get an `unsafe` launcher, whose caller promises that.
// SAFETY: the pointer's value is passed as is; what it points to is the launcher caller's
// responsibility.
unsafe impl<T> KernelParam<'_> for *const T {
    const KIND: ParamKind = ParamKind::Scalar {
        size: size_of::<*const T>() as u32,
    };

    fn push(self, args: &mut KernelArgs<'_>) {
        args.push_slot(&self);
    }
}

// SAFETY: as for `*const T`.
unsafe impl<T> KernelParam<'_> for *mut T {
    const KIND: ParamKind = ParamKind::Scalar {
        size: size_of::<*mut T>() as u32,
    };

    fn push(self, args: &mut KernelArgs<'_>) {
        args.push_slot(&self);
    }
}

/// A value a kernel takes by value: `Copy` (its bytes are all there is to it), `Send` (every
/// GPU thread gets a copy, like a thread of the host would) and `'static` (it borrows nothing
/// from the host's stack, which the kernel could outlive).
///
/// Raw pointers are not `Send`, so a struct holding one cannot be passed this way: give the
/// kernel a slice instead.
pub trait DeviceValue: Copy + Send + 'static {}

impl<T: Copy + Send + 'static> DeviceValue for T {}

/// A struct, tuple or closure passed to a kernel by value, with rustc's layout (host and
/// device code come from the same rustc, so they agree on it). Zero-sized values are not
/// passed at all.
#[derive(Copy, Clone, Debug)]
pub struct ByValue<T>(pub T);

// SAFETY: `T: DeviceValue` holds no host pointers; its bytes are what the kernel reads.
unsafe impl<T: DeviceValue> KernelParam<'_> for ByValue<T> {
    const KIND: ParamKind = if size_of::<T>() == 0 {
        ParamKind::ZeroSized
    } else {
        ParamKind::Aggregate {
            size: size_of::<T>() as u32,
            align: align_of::<T>() as u32,
        }
    };

    fn push(self, args: &mut KernelArgs<'_>) {
        args.push_slot(&self.0);
    }
}

/// A grid constant: the host side of a `&T` kernel parameter. The value is copied into the
/// kernel's parameter space, and the kernel's `&T` is its address there (CUDA's `const
/// __grid_constant__ T`): a TMA tensor map is passed this way.
pub struct GridConstant<'v, T>(pub &'v T);

// SAFETY: `T: DeviceValue` holds no host pointers; its bytes are what the kernel reads through
// its `&T`, in the one `Aggregate` slot of `ParamKind::GridConstant`.
unsafe impl<T: DeviceValue> KernelParam<'_> for GridConstant<'_, T> {
    const KIND: ParamKind = ParamKind::GridConstant {
        size: size_of::<T>() as u32,
        align: align_of::<T>() as u32,
    };

    fn push(self, args: &mut KernelArgs<'_>) {
        const { assert!(size_of::<T>() > 0, "a grid constant cannot be zero-sized") };
        args.push_slot(self.0);
    }
}

/// `ptr`, or for a null one the address `align_of::<T>()`: a slice's data pointer is never
/// null, even when it has no elements.
fn non_null_slice_ptr<T>(ptr: CUdeviceptr) -> CUdeviceptr {
    if ptr == 0 {
        align_of::<T>() as CUdeviceptr
    } else {
        ptr
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kernel_abi::{Slot as AbiSlot, slots};

    fn expected_sizes(kind: ParamKind) -> Vec<u32> {
        slots(kind).as_slice().iter().map(|s| s.size()).collect()
    }

    /// What one argument pushes, checked against `kernel_abi::slots` of its declared kind.
    /// Needs no stream for scalars and values: buffers are covered by `slice_slots` below.
    fn pushes_its_slots<'a, P: KernelParam<'a>>(param: P, args: &mut KernelArgs<'a>) {
        let before = args.slot_sizes().len();
        args.arg(param);
        let pushed = args.slot_sizes()[before..].to_vec();
        assert_eq!(pushed, expected_sizes(P::KIND), "{:?}", P::KIND);
        assert!(args.check().is_ok());
    }

    #[derive(Copy, Clone)]
    #[allow(dead_code)]
    struct Mixed {
        a: u8,
        b: u32,
        c: u16,
    }

    #[derive(Copy, Clone)]
    struct Empty;

    /// cudarc cannot make a stream without a GPU; scalars and values never use it.
    fn with_args(f: impl FnOnce(&mut KernelArgs<'_>)) {
        f(&mut KernelArgs::without_stream());
    }

    #[test]
    fn scalars_push_one_slot_of_their_size() {
        with_args(|args| {
            pushes_its_slots(1u8, args);
            pushes_its_slots(-2i16, args);
            pushes_its_slots(3u32, args);
            pushes_its_slots(4i64, args);
            pushes_its_slots(5u128, args);
            pushes_its_slots(6usize, args);
            pushes_its_slots(7.0f32, args);
            pushes_its_slots(8.0f64, args);
            pushes_its_slots(true, args);
            pushes_its_slots('x', args);
            pushes_its_slots(std::ptr::null::<f32>(), args);
            pushes_its_slots(std::ptr::null_mut::<u8>(), args);
            assert_eq!(args.slot_sizes(), vec![1, 2, 4, 8, 16, 8, 4, 8, 1, 4, 8, 8]);
        });
    }

    #[test]
    fn grid_constants_push_the_value_they_refer_to() {
        let map = cuda_device::tma::TensorMap::from_words(core::array::from_fn(|i| i as u64 * 3));
        with_args(|args| {
            pushes_its_slots(GridConstant(&map), args);
            assert_eq!(args.slot_sizes(), vec![128]);
            let ptrs = args.pointers();
            // SAFETY: the one slot holds the 128 bytes of the map.
            let bytes = unsafe { std::slice::from_raw_parts(ptrs[0].cast::<u64>(), 16) };
            assert_eq!(bytes, map.words());
        });
        assert_eq!(
            <GridConstant<cuda_device::tma::TensorMap> as KernelParam>::KIND,
            ParamKind::GridConstant {
                size: 128,
                align: 64
            }
        );
    }

    #[test]
    fn scalar_bytes_are_the_value() {
        with_args(|args| {
            args.arg(0x1122_3344u32).arg(1.5f64).arg(true);
            let ptrs = args.pointers();
            // SAFETY: each pointer points to a slot of the pushed size.
            unsafe {
                assert_eq!(*ptrs[0].cast::<u32>(), 0x1122_3344);
                assert_eq!(*ptrs[1].cast::<f64>(), 1.5);
                assert_eq!(*ptrs[2].cast::<u8>(), 1);
            }
            assert!(ptrs.iter().all(|p| (*p as usize).is_multiple_of(16)));
        });
    }

    #[test]
    fn values_are_one_aggregate_slot_and_zsts_none() {
        with_args(|args| {
            pushes_its_slots(ByValue(Mixed { a: 1, b: 2, c: 3 }), args);
            pushes_its_slots(ByValue((1.0f32, 2u64, [0u8; 3])), args);
            pushes_its_slots(ByValue([7u32; 9]), args);
            pushes_its_slots(ByValue(Empty), args);
            pushes_its_slots(ByValue(()), args);
            let closure_state = 3.0f32;
            pushes_its_slots(ByValue(move |x: f32| x * closure_state), args);
            // rustc reorders the tuple: u64, f32, [u8; 3] fit in 16 bytes.
            assert_eq!(args.slot_sizes(), vec![8, 16, 36, 4]);
        });
        assert_eq!(
            <ByValue<Mixed> as KernelParam>::KIND,
            ParamKind::Aggregate { size: 8, align: 4 }
        );
        assert_eq!(<ByValue<Empty> as KernelParam>::KIND, ParamKind::ZeroSized);
    }

    #[test]
    fn aggregate_bytes_keep_rustcs_layout() {
        let value = Mixed {
            a: 0xaa,
            b: 0xbbbb_bbbb,
            c: 0xcccc,
        };
        with_args(|args| {
            args.arg(ByValue(value));
            let ptr = args.pointers()[0].cast::<Mixed>();
            // SAFETY: the slot holds the bytes of a `Mixed`, 16-aligned.
            let back = unsafe { *ptr };
            assert_eq!((back.a, back.b, back.c), (value.a, value.b, value.c));
        });
    }

    /// Stands for a `CudaSlice` (which needs a GPU to exist) and packs through the same
    /// `push_located` as the real buffer impls.
    struct FakeBuffer(CUdeviceptr, usize);

    // SAFETY: test only, never launched.
    unsafe impl KernelParam<'_> for FakeBuffer {
        const KIND: ParamKind = <&CudaSlice<f32> as KernelParam>::KIND;
        fn push(self, args: &mut KernelArgs<'_>) {
            args.push_located::<f32>(self.0, self.1, Some(SyncOnDrop::Sync(None)));
        }
    }

    #[test]
    fn slices_are_pointer_then_length() {
        assert_eq!(<&CudaSlice<f32> as KernelParam>::KIND, ParamKind::Slice);
        assert_eq!(<&mut CudaSlice<u8> as KernelParam>::KIND, ParamKind::Slice);
        assert_eq!(
            slots(ParamKind::Slice).as_slice(),
            &[AbiSlot::GlobalPointer, AbiSlot::Length]
        );
        with_args(|args| {
            pushes_its_slots(FakeBuffer(0x7f00_dead_0000, 1000), args);
            let ptrs = args.pointers();
            // SAFETY: two 8-byte slots.
            unsafe {
                assert_eq!(*ptrs[0].cast::<u64>(), 0x7f00_dead_0000);
                assert_eq!(*ptrs[1].cast::<u64>(), 1000);
            }
        });
    }

    #[test]
    fn an_empty_buffer_without_address_is_passed_non_null_and_aligned() {
        with_args(|args| {
            pushes_its_slots(FakeBuffer(0, 0), args);
            let ptrs = args.pointers();
            // SAFETY: two 8-byte slots.
            unsafe {
                assert_eq!(*ptrs[0].cast::<u64>(), align_of::<f32>() as u64);
                assert_eq!(*ptrs[1].cast::<u64>(), 0);
            }
        });
        assert_eq!(non_null_slice_ptr::<u64>(0), 8);
        assert_eq!(non_null_slice_ptr::<u8>(0x1234), 0x1234);
    }

    #[test]
    fn a_kernel_signature_packs_like_kernel_abi_says() {
        // vecadd(a: &[f32], b: &[f32], c: DisjointSlice<f32>, scale: f32, p: Mixed, z: ())
        with_args(|args| {
            args.arg(FakeBuffer(0x1000, 4))
                .arg(FakeBuffer(0x2000, 4))
                .arg(FakeBuffer(0x3000, 4))
                .arg(2.0f32)
                .arg(ByValue(Mixed { a: 1, b: 2, c: 3 }))
                .arg(ByValue(()));
            assert!(args.check().is_ok());
            let kinds = [
                ParamKind::Slice,
                ParamKind::Slice,
                ParamKind::Slice,
                ParamKind::Scalar { size: 4 },
                ParamKind::Aggregate { size: 8, align: 4 },
                ParamKind::ZeroSized,
            ];
            let abi: Vec<u32> = kernel_abi::signature_slots(&kinds)
                .map(AbiSlot::size)
                .collect();
            assert_eq!(args.slot_sizes(), abi);
        });
    }

    #[test]
    fn a_wrong_implementation_is_caught() {
        struct Liar;
        // SAFETY: test only; the launch would refuse it.
        unsafe impl KernelParam<'_> for Liar {
            const KIND: ParamKind = ParamKind::Slice;
            fn push(self, args: &mut KernelArgs<'_>) {
                args.push_slot(&0u32);
            }
        }
        with_args(|args| {
            args.arg(1u32).arg(Liar);
            let (index, _, expected, pushed) = args.check().unwrap_err();
            assert_eq!((index, expected, pushed), (1, vec![8, 8], vec![4]));
        });
    }
}
