//! The `cuda_device` functions that are GPU instructions rather than calls.
//!
//! Two kinds, both keyed by the fully qualified path of the stub: the GPU intrinsics declared
//! in `dialect_nvvm::table` (each becomes an `nvvm.intrinsic`), and the atomic memory
//! operations of `cuda_device::atomic` (each becomes a `mir.atomic_*` op, see
//! [crate::translator::atomic]). The collector skips these functions (their Rust bodies only
//! panic on the host), and the translator replaces each call.

use dialect_nvvm::Intrinsic;

/// The module of `cuda_device` whose functions are the atomic stubs.
pub const ATOMIC_STUBS: &str = "cuda_device::atomic::intrinsics::";

/// The GPU intrinsic whose stub has this fully qualified path, if any.
pub fn lookup(path: &str) -> Option<&'static Intrinsic> {
    dialect_nvvm::by_rust_path(path)
}

/// The name of the atomic stub at `path` (`load`, `rmw`, ...), if it is one.
pub fn atomic_stub(path: &str) -> Option<&str> {
    path.strip_prefix(ATOMIC_STUBS)
}

/// Whether the function at `path` is an intrinsic stub.
pub fn is_intrinsic(path: &str) -> bool {
    lookup(path).is_some() || atomic_stub(path).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookup_finds_exact_paths_only() {
        assert_eq!(
            lookup("cuda_device::thread::blockDim_y").map(|i| i.name),
            Some("read_ptx_sreg_ntid_y")
        );
        assert!(is_intrinsic("cuda_device::sync::syncthreads"));
        assert!(is_intrinsic("cuda_device::atomic::intrinsics::rmw"));
        assert_eq!(
            atomic_stub("cuda_device::atomic::intrinsics::cmpxchg"),
            Some("cmpxchg")
        );
        assert!(!is_intrinsic("cuda_device::thread::index_1d"));
        assert!(!is_intrinsic("cuda_device::atomic::DeviceAtomicU32::load"));
        assert!(!is_intrinsic("other::thread::threadIdx_x"));
    }
}
