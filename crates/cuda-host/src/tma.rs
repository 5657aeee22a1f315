//! Tensor maps for the tensor memory accelerator (TMA, sm_90): the host describes a tensor in
//! device memory once (`cuTensorMapEncodeTiled`), and kernels copy boxes of it between global
//! and shared memory with `cuda_device::tma`.
//!
//! Pass the [TensorMap] to the kernel as a `&TensorMap` parameter: the launcher copies it into
//! the kernel's parameter space (a grid constant), where the copy engine reads it.

use std::mem::size_of;

use cudarc::driver::sys;
use cudarc::driver::{CudaSlice, CudaStream, DevicePtr};

pub use cuda_device::tma::TensorMap;

use crate::error::Error;
use crate::failure::DriverFailure;

pub use cuda_device::tma::Swizzle;

/// The driver's name of `swizzle`.
fn driver_swizzle(swizzle: Swizzle) -> sys::CUtensorMapSwizzle {
    match swizzle {
        Swizzle::None => sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_NONE,
        Swizzle::B32 => sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_32B,
        Swizzle::B64 => sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_64B,
        Swizzle::B128 => sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_128B,
    }
}

/// The widest inner box row, in bytes, `swizzle` allows (`None`: no limit but 256 elements).
fn max_inner_bytes(swizzle: Swizzle) -> Option<u64> {
    match swizzle {
        Swizzle::None => None,
        Swizzle::B32 => Some(32),
        Swizzle::B64 => Some(64),
        Swizzle::B128 => Some(128),
    }
}

/// An element type the copy engine knows. `u16` also carries `bf16`/`f16` bit patterns (the
/// copy does not look at the values).
pub trait TensorElement: Copy {
    /// The driver's data type.
    const DATA_TYPE: sys::CUtensorMapDataType;
}

macro_rules! tensor_elements {
    ($($t:ty => $v:ident),* $(,)?) => {$(
        impl TensorElement for $t {
            const DATA_TYPE: sys::CUtensorMapDataType = sys::CUtensorMapDataType::$v;
        }
    )*};
}

tensor_elements! {
    u8 => CU_TENSOR_MAP_DATA_TYPE_UINT8,
    i8 => CU_TENSOR_MAP_DATA_TYPE_UINT8,
    u16 => CU_TENSOR_MAP_DATA_TYPE_UINT16,
    i16 => CU_TENSOR_MAP_DATA_TYPE_UINT16,
    u32 => CU_TENSOR_MAP_DATA_TYPE_UINT32,
    i32 => CU_TENSOR_MAP_DATA_TYPE_INT32,
    u64 => CU_TENSOR_MAP_DATA_TYPE_UINT64,
    i64 => CU_TENSOR_MAP_DATA_TYPE_INT64,
    f32 => CU_TENSOR_MAP_DATA_TYPE_FLOAT32,
    f64 => CU_TENSOR_MAP_DATA_TYPE_FLOAT64,
}

/// The tensor map of `buffer` seen as a packed tensor of sizes `dims` (innermost first: a
/// row-major `rows × cols` matrix is `[cols, rows]`), copied in boxes of `box_dims` elements
/// with `swizzle`. Ranks 1 to 5; each box side 1 to 256; the inner box side times the element
/// size a multiple of 16 bytes (and at most the swizzle's row); the rows of the tensor 16-byte
/// aligned.
///
/// The map holds `buffer`'s address: use it only while `buffer` lives. Boxes reaching past the
/// tensor's edges read zeros and are clipped on stores.
pub fn tiled<T: TensorElement>(
    stream: &CudaStream,
    buffer: &CudaSlice<T>,
    dims: &[u64],
    box_dims: &[u32],
    swizzle: Swizzle,
) -> Result<TensorMap, Error> {
    let invalid = |reason: String| Err(Error::TensorMap(reason));
    let rank = dims.len();
    if !(1..=5).contains(&rank) || box_dims.len() != rank {
        return invalid(format!(
            "a tensor map has rank 1 to 5, with one box size per dimension (got {rank} \
             dimensions and {} box sizes)",
            box_dims.len()
        ));
    }
    let elem = size_of::<T>() as u64;
    let elements: u64 = dims.iter().product();
    if dims.contains(&0) || elements > buffer.len() as u64 {
        return invalid(format!(
            "the tensor {dims:?} needs {elements} elements, the buffer holds {}",
            buffer.len()
        ));
    }
    if let Some(bad) = box_dims.iter().find(|&&b| !(1..=256).contains(&b)) {
        return invalid(format!("a box side of {bad}: each is 1 to 256 elements"));
    }
    let inner_bytes = u64::from(box_dims[0]) * elem;
    if !inner_bytes.is_multiple_of(16) {
        return invalid(format!(
            "the inner box side is {inner_bytes} bytes; the copy engine needs a multiple of 16"
        ));
    }
    if let Some(max) = max_inner_bytes(swizzle)
        && inner_bytes > max
    {
        return invalid(format!(
            "the inner box side is {inner_bytes} bytes, more than the {max}-byte rows of \
             {swizzle:?}"
        ));
    }
    // Strides of dimensions 1.. in bytes, for a packed tensor.
    let mut strides = Vec::with_capacity(rank - 1);
    let mut stride = elem;
    for &d in &dims[..rank - 1] {
        stride *= d;
        strides.push(stride);
    }
    if let Some(bad) = strides.iter().find(|&&s| !s.is_multiple_of(16)) {
        return invalid(format!(
            "a row stride of {bad} bytes; the copy engine needs multiples of 16"
        ));
    }
    let element_strides = vec![1u32; rank];
    let (address, _guard) = buffer.device_ptr(stream);
    let mut map = std::mem::MaybeUninit::<sys::CUtensorMap>::uninit();
    // SAFETY: every array has `rank` (strides `rank - 1`) entries, as the driver reads them;
    // `map` is written by the call before being read.
    let result = unsafe {
        sys::cuTensorMapEncodeTiled(
            map.as_mut_ptr(),
            T::DATA_TYPE,
            rank as u32,
            address as *mut std::ffi::c_void,
            dims.as_ptr(),
            strides.as_ptr(),
            box_dims.as_ptr(),
            element_strides.as_ptr(),
            sys::CUtensorMapInterleave::CU_TENSOR_MAP_INTERLEAVE_NONE,
            driver_swizzle(swizzle),
            sys::CUtensorMapL2promotion::CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
            sys::CUtensorMapFloatOOBfill::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
        )
    };
    if result != sys::CUresult::CUDA_SUCCESS {
        return Err(Error::Driver {
            call: "cuTensorMapEncodeTiled",
            source: DriverFailure(result),
        });
    }
    // SAFETY: the driver wrote the map.
    let map = unsafe { map.assume_init() };
    Ok(TensorMap::from_words(map.opaque))
}
