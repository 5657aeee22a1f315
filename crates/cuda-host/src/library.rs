//! Whether the CUDA driver library loads: asked before every first call into it (cudarc
//! panics on a missing library), and by error messages that would quote the driver's own text.

use std::sync::OnceLock;

use cudarc::driver::sys;

/// Whether `libcuda` can be loaded (checked once per process).
///
/// The driver is first opened by its versioned name, `libcuda.so.1`, and kept loaded for the
/// life of the process: cudarc opens `libcuda.so` (the development link, when installed), which
/// then resolves to that same library, so the process holds the driver under the name that CUDA's
/// own runtime uses and that cuda-gdb looks for.
pub(crate) fn library_present() -> bool {
    if cuda_cpu::installed() {
        return true;
    }
    static PRESENT: OnceLock<bool> = OnceLock::new();
    *PRESENT.get_or_init(|| {
        // SAFETY: loading the NVIDIA driver library runs no initialisation with requirements
        // on the caller; the handle is kept (leaked) so that the library stays loaded.
        if let Ok(driver) = unsafe { libloading::Library::new("libcuda.so.1") } {
            std::mem::forget(driver);
        }
        // SAFETY: only tries to open the library with the loader.
        unsafe { sys::is_culib_present() }
    })
}
