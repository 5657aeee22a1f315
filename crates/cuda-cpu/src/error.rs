//! Why the CPU device could not be set up.

/// Why the CPU device could not be set up.
#[derive(Clone, Debug, thiserror::Error)]
pub enum CpuError {
    /// This host is not one the driver shim is built for.
    #[error(
        "the CPU device runs on x86-64 Linux hosts only (this build of cuda-cpu has no driver shim)"
    )]
    Unsupported,
    /// The shim could not be written or loaded.
    #[error("the CPU device's driver shim could not be loaded: {0}")]
    Shim(String),
    /// Something loaded the real CUDA driver before the CPU device was installed.
    #[error(
        "a CUDA driver was loaded before the CPU device could take its place: set \
         CUDA_OXIDE_DEVICE=cpu before the program's first CUDA call"
    )]
    DriverAlreadyLoaded,
}
