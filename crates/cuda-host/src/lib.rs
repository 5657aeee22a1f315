//! The host side of cuda-oxide: load the PTX that the codegen backend embedded in this binary,
//! and launch its kernels with type-checked arguments.
//!
//! ```ignore
//! use cuda_host::{cuda_module, CudaContext, LaunchConfig};
//!
//! #[cuda_module]
//! mod kernels {
//!     use cuda_device::{kernel, thread, DisjointSlice};
//!     #[kernel]
//!     pub fn vecadd(a: &[f32], b: &[f32], mut c: DisjointSlice<f32>) { /* ... */ }
//! }
//!
//! fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     let ctx = CudaContext::new(0)?;
//!     let stream = ctx.default_stream();
//!     let module = kernels::load(&ctx)?;
//!     let a = stream.clone_htod(&vec![1.0f32; 1024])?;
//!     let b = stream.clone_htod(&vec![2.0f32; 1024])?;
//!     let mut c = stream.alloc_zeros::<f32>(1024)?;
//!     module.vecadd(&stream, LaunchConfig::for_num_elems(1024), &a, &b, &mut c)?;
//!     assert_eq!(stream.clone_dtoh(&c)?, vec![3.0f32; 1024]);
//!     Ok(())
//! }
//! ```
//!
//! Buffers, views, streams and launch configurations are cudarc's; a launcher takes a buffer or
//! a view of part of one (`&a.slice(256..512)`, `&mut c.slice_mut(..n)`). Launches go to any
//! stream and return once queued; [`Event`]s order streams and time work, [`completion`] is a
//! future of a stream's work, and [`Graph`] records typed launches and copies into a CUDA graph
//! (see `docs/host.md`). The driver is loaded at run time,
//! so binaries build and start on machines without CUDA; there, [`CudaContext::new`] returns
//! [`Error::NoDriver`]. Nothing here panics on a missing driver or GPU, bad PTX or a faulting
//! kernel: each is an [`Error`] whose message says what to do.
//!
//! # Safety of launches
//!
//! The launch methods that [`cuda_module`] generates are safe functions: their parameter types
//! follow the kernel's signature, so the GPU receives exactly the values the kernel is
//! compiled for, device buffers carry their lengths (device code checks its indices against
//! them and traps instead of reading past the end), and Rust's borrows keep a buffer from
//! being passed as `&mut` twice or as `&` and `&mut` at once. A [`Graph`] owns the buffers its
//! replays use and checks, before each replay, that they hold all the memory its work touches.
//! Two cases depend on the caller,
//! and only these are `unsafe`: kernels with raw-pointer parameters (the caller promises the
//! pointers are valid device pointers), and [`Kernel::launch`] for hand-packed arguments.

mod atomic;
mod completion;
mod driver;
mod error;
mod event;
mod failure;
mod fault;
mod generic;
pub mod graph;
mod inflight;
mod library;
mod module;
pub mod nvrtc;
mod panic;
mod param;
mod ptx_compat;
mod registry;
mod target;
pub mod timing;
pub mod tma;
mod version;
mod views;

pub use atomic::AtomicElement;
pub use completion::{Completion, completion};
/// Whether the environment asks for the CPU device (`CUDA_OXIDE_DEVICE=cpu`, docs/cpu.md): the
/// program's `CudaContext` then runs the kernels on the host (GPU tools do not apply).
pub use cuda_cpu::requested as cpu_device_requested;
pub use cuda_macros::cuda_module;
pub use cudarc;
pub use cudarc::driver::{
    CudaSlice, CudaStream, CudaView, CudaViewMut, DeviceRepr, DriverError, LaunchConfig,
    PinnedHostSlice,
};
pub use driver::{
    CudaContext, REQUIRED_DRIVER, compute_capability, device_count, device_target, driver_version,
    init,
};
pub use error::Error;
pub use event::Event;
pub use failure::DriverFailure;
pub use graph::{Capture, Graph, GraphError, GraphState, StateVisitor, Update};
pub use kernel_abi::ParamKind;
pub use module::{DEFAULT_DYNAMIC_SHARED_BYTES, Kernel, ModuleImage, PtxModule, synchronize};
pub use panic::DevicePanic;
pub use param::{ByValue, DeviceValue, GridConstant, KernelArgs, KernelParam};
pub use version::{CudaVersion, PtxIsa};
pub use views::{DeviceSliceArg, DeviceSliceMutArg};

/// Support for the code `#[cuda_module]` generates; not a public API.
#[doc(hidden)]
pub mod __private {
    use std::ffi::CStr;

    use crate::Error;
    pub use crate::generic::{GenericKernels, entry_name};
    pub use crate::target::LaunchTarget;

    /// The PTX the backend embedded for `crate_name`: `len` bytes of text and a NUL.
    ///
    /// # Safety
    /// `ptx` must point to `len + 1` bytes that stay readable for the whole program (the
    /// backend's read-only data symbols are).
    pub unsafe fn embedded_ptx(
        crate_name: &'static str,
        ptx: *const u8,
        len: u64,
    ) -> Result<&'static CStr, Error> {
        let damaged = |reason| Error::BadEmbeddedPtx { crate_name, reason };
        let len = usize::try_from(len)
            .ok()
            .filter(|&len| len < isize::MAX as usize)
            .ok_or(damaged("its length symbol holds an impossible length"))?;
        // SAFETY: the caller guarantees `len + 1` readable bytes for 'static.
        let bytes = unsafe { std::slice::from_raw_parts(ptx, len + 1) };
        CStr::from_bytes_with_nul(bytes)
            .map_err(|_| damaged("the text is not NUL-terminated or holds a NUL byte"))
    }

    /// Refuses a launch of `kernel`, declared `#[block_dims(x, y, z)]`, whose block is not
    /// exactly `dims` (the driver would refuse it with a bare `CUDA_ERROR_INVALID_VALUE`).
    pub fn require_block_dims(
        kernel: &'static str,
        cfg: &crate::LaunchConfig,
        dims: (u32, u32, u32),
    ) -> Result<(), Error> {
        if cfg.block_dim == dims {
            return Ok(());
        }
        let (x, y, z) = dims;
        Err(Error::BadLaunchConfig {
            kernel,
            config: format!("grid {:?} and block {:?}", cfg.grid_dim, cfg.block_dim),
            problem: format!(
                "the kernel is declared `#[block_dims({x}, {y}, {z})]`: launch it with blocks of \
                 exactly ({x}, {y}, {z}) threads"
            ),
        })
    }

    /// The cubin the backend embedded for a crate: `len` bytes (none when the build had no
    /// `ptxas`).
    ///
    /// # Safety
    /// `cubin` must point to at least `len` bytes that stay readable for the whole program
    /// (the backend's read-only data symbols are).
    pub unsafe fn embedded_cubin(cubin: *const u8, len: u64) -> &'static [u8] {
        match usize::try_from(len) {
            Ok(len) if len > 0 && len < isize::MAX as usize => {
                // SAFETY: the caller guarantees `len` readable bytes for 'static.
                unsafe { std::slice::from_raw_parts(cubin, len) }
            }
            _ => &[],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::__private::{embedded_cubin, embedded_ptx};

    #[test]
    fn a_block_of_another_shape_is_refused_with_the_declared_one() {
        use super::__private::require_block_dims;
        let cfg = |block_dim| crate::LaunchConfig {
            grid_dim: (4, 1, 1),
            block_dim,
            shared_mem_bytes: 0,
        };
        assert!(require_block_dims("t", &cfg((32, 8, 1)), (32, 8, 1)).is_ok());
        let err = require_block_dims("t", &cfg((256, 1, 1)), (32, 8, 1)).unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("#[block_dims(32, 8, 1)]") && text.contains("(256, 1, 1)"),
            "{text}"
        );
    }

    #[test]
    fn embedded_ptx_is_checked() {
        let good = b".version 8.0\n\0";
        // SAFETY: 13 bytes of text and a NUL.
        let ptx = unsafe { embedded_ptx("app", good.as_ptr(), 13) }.unwrap();
        assert_eq!(ptx.to_bytes(), b".version 8.0\n");

        let no_nul = b".version";
        // SAFETY: 8 readable bytes; the length says 7 + NUL.
        let err = unsafe { embedded_ptx("app", no_nul.as_ptr(), 7) }.unwrap_err();
        assert!(err.to_string().contains("cargo oxide build"), "{err}");

        // SAFETY: never dereferenced: the length is refused first.
        let err = unsafe { embedded_ptx("app", good.as_ptr(), u64::MAX) }.unwrap_err();
        assert!(err.to_string().contains("impossible length"), "{err}");
    }

    #[test]
    fn an_embedded_cubin_is_its_bytes_or_nothing() {
        let image = b"\x7fELF....";
        // SAFETY: 8 readable bytes.
        assert_eq!(unsafe { embedded_cubin(image.as_ptr(), 8) }, image);
        // SAFETY: a length of 0 reads nothing; an impossible one is refused unread.
        assert!(unsafe { embedded_cubin(image.as_ptr(), 0) }.is_empty());
        assert!(unsafe { embedded_cubin(image.as_ptr(), u64::MAX) }.is_empty());
    }
}
