//! The `cuda_device` functions that are GPU instructions rather than calls.
//!
//! The table is keyed by the fully qualified path of the stub. The collector skips these
//! functions (their Rust bodies only panic on the host), and the translator replaces each call
//! by the operation named here.

/// What an intrinsic call becomes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Intrinsic {
    /// Reads a PTX special register (`%tid.x`, `%ctaid.y`, ...), returning `u32`.
    SpecialRegister(SpecialRegister),
    /// `bar.sync 0`.
    Barrier,
    /// `%laneid`.
    LaneId,
    /// A 32-bit warp shuffle over the full warp.
    Shuffle(ShuffleMode),
}

/// A PTX special register holding a launch coordinate.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum SpecialRegister {
    /// `%tid`: thread index within the block.
    ThreadIdx(Axis),
    /// `%ctaid`: block index within the grid.
    BlockIdx(Axis),
    /// `%ntid`: block size.
    BlockDim(Axis),
    /// `%nctaid`: grid size.
    GridDim(Axis),
}

/// One of the three launch axes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Axis {
    X,
    Y,
    Z,
}

/// The lane a warp shuffle reads from.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ShuffleMode {
    /// From a given lane.
    Idx,
    /// From `lane ^ mask`.
    Bfly,
    /// From `lane + delta`.
    Down,
    /// From `lane - delta`.
    Up,
}

/// Every intrinsic, by the path of its `cuda_device` stub.
pub const TABLE: &[(&str, Intrinsic)] = {
    use self::SpecialRegister::{BlockDim, BlockIdx, GridDim, ThreadIdx};
    use Axis::*;
    use Intrinsic::{Barrier, LaneId, Shuffle, SpecialRegister};
    &[
        (
            "cuda_device::thread::threadIdx_x",
            SpecialRegister(ThreadIdx(X)),
        ),
        (
            "cuda_device::thread::threadIdx_y",
            SpecialRegister(ThreadIdx(Y)),
        ),
        (
            "cuda_device::thread::threadIdx_z",
            SpecialRegister(ThreadIdx(Z)),
        ),
        (
            "cuda_device::thread::blockIdx_x",
            SpecialRegister(BlockIdx(X)),
        ),
        (
            "cuda_device::thread::blockIdx_y",
            SpecialRegister(BlockIdx(Y)),
        ),
        (
            "cuda_device::thread::blockIdx_z",
            SpecialRegister(BlockIdx(Z)),
        ),
        (
            "cuda_device::thread::blockDim_x",
            SpecialRegister(BlockDim(X)),
        ),
        (
            "cuda_device::thread::blockDim_y",
            SpecialRegister(BlockDim(Y)),
        ),
        (
            "cuda_device::thread::blockDim_z",
            SpecialRegister(BlockDim(Z)),
        ),
        (
            "cuda_device::thread::gridDim_x",
            SpecialRegister(GridDim(X)),
        ),
        (
            "cuda_device::thread::gridDim_y",
            SpecialRegister(GridDim(Y)),
        ),
        (
            "cuda_device::thread::gridDim_z",
            SpecialRegister(GridDim(Z)),
        ),
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
            Some(Intrinsic::SpecialRegister(SpecialRegister::BlockDim(
                Axis::Y
            )))
        );
        assert!(is_intrinsic("cuda_device::sync::syncthreads"));
        assert!(!is_intrinsic("cuda_device::thread::index_1d"));
        assert!(!is_intrinsic("other::thread::threadIdx_x"));
    }
}
