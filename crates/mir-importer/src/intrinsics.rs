//! The `cuda_device` functions that are GPU instructions rather than calls.
//!
//! The table is keyed by the fully qualified path of the stub. The collector skips these
//! functions (their Rust bodies only panic on the host), and the translator replaces each call
//! by the `dialect-nvvm` operation named here.

use dialect_nvvm::{Axis, ShuffleMode, SpecialRegister};

/// What an intrinsic call becomes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Intrinsic {
    /// Reads a launch-coordinate special register (`%tid.x`, `%ctaid.y`, ...), returning `u32`.
    SpecialRegister(SpecialRegister, Axis),
    /// `bar.sync 0`.
    Barrier,
    /// `%laneid`.
    LaneId,
    /// A 32-bit warp shuffle over the full warp.
    Shuffle(ShuffleMode),
}

/// Every intrinsic, by the path of its `cuda_device` stub.
pub const TABLE: &[(&str, Intrinsic)] = {
    use Axis::{X, Y, Z};
    use Intrinsic::{Barrier, LaneId, Shuffle, SpecialRegister as Sreg};
    use SpecialRegister::{Ctaid, Nctaid, Ntid, Tid};
    &[
        ("cuda_device::thread::threadIdx_x", Sreg(Tid, X)),
        ("cuda_device::thread::threadIdx_y", Sreg(Tid, Y)),
        ("cuda_device::thread::threadIdx_z", Sreg(Tid, Z)),
        ("cuda_device::thread::blockIdx_x", Sreg(Ctaid, X)),
        ("cuda_device::thread::blockIdx_y", Sreg(Ctaid, Y)),
        ("cuda_device::thread::blockIdx_z", Sreg(Ctaid, Z)),
        ("cuda_device::thread::blockDim_x", Sreg(Ntid, X)),
        ("cuda_device::thread::blockDim_y", Sreg(Ntid, Y)),
        ("cuda_device::thread::blockDim_z", Sreg(Ntid, Z)),
        ("cuda_device::thread::gridDim_x", Sreg(Nctaid, X)),
        ("cuda_device::thread::gridDim_y", Sreg(Nctaid, Y)),
        ("cuda_device::thread::gridDim_z", Sreg(Nctaid, Z)),
        ("cuda_device::sync::syncthreads", Barrier),
        ("cuda_device::warp::lane_id", LaneId),
        ("cuda_device::warp::shuffle_b32", Shuffle(ShuffleMode::Idx)),
        (
            "cuda_device::warp::shuffle_xor_b32",
            Shuffle(ShuffleMode::Bfly),
        ),
        (
            "cuda_device::warp::shuffle_down_b32",
            Shuffle(ShuffleMode::Down),
        ),
        (
            "cuda_device::warp::shuffle_up_b32",
            Shuffle(ShuffleMode::Up),
        ),
    ]
};

/// The intrinsic whose stub has this fully qualified path, if any.
pub fn lookup(path: &str) -> Option<Intrinsic> {
    TABLE
        .iter()
        .find(|(name, _)| *name == path)
        .map(|&(_, intrinsic)| intrinsic)
}

/// Whether the function at `path` is an intrinsic stub.
pub fn is_intrinsic(path: &str) -> bool {
    lookup(path).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_unique_and_in_cuda_device() {
        for (i, (path, _)) in TABLE.iter().enumerate() {
            assert!(path.starts_with("cuda_device::"), "{path}");
            assert!(
                TABLE[i + 1..].iter().all(|(other, _)| other != path),
                "{path} listed twice"
            );
        }
    }

    #[test]
    fn lookup_finds_exact_paths_only() {
        assert_eq!(
            lookup("cuda_device::thread::blockDim_y"),
            Some(Intrinsic::SpecialRegister(SpecialRegister::Ntid, Axis::Y))
        );
        assert!(is_intrinsic("cuda_device::sync::syncthreads"));
        assert!(!is_intrinsic("cuda_device::thread::index_1d"));
        assert!(!is_intrinsic("other::thread::threadIdx_x"));
    }
}
