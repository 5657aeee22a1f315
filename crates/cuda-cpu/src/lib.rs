//! The CPU device of cuda-oxide (`docs/cpu.md`): the CUDA driver API implemented on the host,
//! so that an unchanged program runs its kernels on the CPU under `CUDA_OXIDE_DEVICE=cpu`.
//!
//! - [`install`] loads the driver shim (a `libcuda.so` whose entry points jump through a table,
//!   built by `build.rs`) before anything opens the real driver, and points the table at
//!   [`driver`]'s functions: cudarc's `dlopen("libcuda.so")` then finds the shim, and every
//!   buffer, copy, stream, event and launch of the program reaches this crate.
//! - [`image`] reads the CPU flavour of a crate's kernels that the codegen backend linked into
//!   the binary (its image table), and fills the slots through which the kernels call the
//!   runtime.
//! - [`launch`] runs a grid: blocks spread over the CPU's cores, the threads of a block as
//!   cooperatively scheduled fibers that meet at barriers.
//! - [`runtime`] holds what the kernels call: special registers, barriers, warp operations
//!   ([`warp`]), the trap, the device heap, and the race detector's hooks ([`race`]).
//!
//! Streams run their work when it is queued (in order, as a stream must), so a synchronisation
//! only reports what already happened.

mod driver;
mod error;
mod graph;
pub mod image;
mod launch;
mod mbarrier;
mod memory;
mod printf;
mod race;
mod runtime;
mod sfu;
mod shim;
mod warp;

pub use error::CpuError;

/// The environment variable that selects the CPU device, and its value.
pub const DEVICE_VARIABLE: &str = kernel_abi::CPU_DEVICE_VARIABLE;

/// Whether the environment asks for the CPU device (`CUDA_OXIDE_DEVICE=cpu`).
pub fn requested() -> bool {
    std::env::var(DEVICE_VARIABLE).is_ok_and(|value| value.trim().eq_ignore_ascii_case("cpu"))
}

/// Makes the CPU device the process's CUDA driver, once; later calls return the first result.
/// Must run before anything loads the real driver.
pub fn install() -> Result<(), CpuError> {
    static INSTALLED: std::sync::OnceLock<Result<(), CpuError>> = std::sync::OnceLock::new();
    INSTALLED.get_or_init(shim::load).clone()
}

/// Whether [`install`] succeeded in this process.
pub fn installed() -> bool {
    shim::is_loaded()
}
