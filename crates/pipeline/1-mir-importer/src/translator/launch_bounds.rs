//! `#[launch_bounds(MAX_THREADS, MIN_BLOCKS)]` on a kernel, `#[cluster_dims(X, Y, Z)]` and
//! `#[block_dims(X, Y, Z)]` (the markers `cuda_device::cluster_dims_marker::<X, Y, Z>()` and
//! `block_dims_marker`, read the same way), and the `fmad`
//! option of `#[kernel(fmad)]` (a call to the marker `cuda_device::fmad_marker()`).
//!
//! The attribute macro puts a call to the marker `cuda_device::launch_bounds_marker::<MAX,
//! MIN>()` (an empty function) at the start of the kernel; its `u32` const generic arguments
//! carry the bounds, already evaluated by rustc (they may name constants). The kernel's `mir.func`
//! gets them as attributes; the call itself is an ordinary call to an empty function, which the
//! optimiser removes.

use dialect_mir::ops::{BlockDims, ClusterDims, LaunchBounds, MAX_THREADS_PER_BLOCK};
use rustc_public::CrateDef;
use rustc_public::mir::{Body, TerminatorKind};
use rustc_public::ty::{GenericArgKind, TyConstKind};

use super::error::{TResult, unsupported};

/// The path of the marker the macro calls.
pub const MARKER: &str = "cuda_device::launch_bounds_marker";

/// The path of the marker `#[cluster_dims]` calls.
pub const CLUSTER_MARKER: &str = "cuda_device::cluster_dims_marker";

/// The path of the marker `#[block_dims]` calls.
pub const BLOCK_MARKER: &str = "cuda_device::block_dims_marker";

/// The path of the marker `#[kernel(fmad)]` calls.
pub const FMAD_MARKER: &str = "cuda_device::fmad_marker";

/// Whether a kernel's body calls the marker of `#[kernel(fmad)]` (contract float
/// multiplications and additions into fused multiply-adds).
pub fn asks_for_fmad(body: &Body) -> bool {
    body.blocks.iter().any(|block| {
        let TerminatorKind::Call { func, .. } = &block.terminator.kind else {
            return false;
        };
        func.ty(body.locals())
            .ok()
            .and_then(|ty| ty.kind().fn_def().map(|(def, _)| def))
            .is_some_and(|def| def.name() == FMAD_MARKER)
    })
}

/// The const generic arguments of each call of the marker `marker` in `body` (`None` for an
/// argument that is not an evaluated integer).
fn marker_calls(body: &Body, marker: &str) -> Vec<Vec<Option<u128>>> {
    let mut calls = vec![];
    for block in &body.blocks {
        let TerminatorKind::Call { func, .. } = &block.terminator.kind else {
            continue;
        };
        let Ok(ty) = func.ty(body.locals()) else {
            continue;
        };
        let Some((def, args)) = ty.kind().fn_def().map(|(d, a)| (d, a.clone())) else {
            continue;
        };
        if def.name() != marker {
            continue;
        }
        let values = args
            .0
            .iter()
            .map(|arg| match arg {
                GenericArgKind::Const(c) => match c.kind() {
                    TyConstKind::Value(_, bytes) => bytes.read_uint().ok(),
                    _ => None,
                },
                _ => None,
            })
            .collect();
        calls.push(values);
    }
    calls
}

/// The cluster shape a kernel's body declares (`#[cluster_dims]`), if any.
pub fn declared_cluster(body: &Body) -> TResult<Option<ClusterDims>> {
    Ok(
        declared_shape(body, CLUSTER_MARKER, "cluster", ClusterDims::problem)?
            .map(|dims| ClusterDims { dims }),
    )
}

/// The block shape a kernel's body declares (`#[block_dims]`), if any.
pub fn declared_block(body: &Body) -> TResult<Option<BlockDims>> {
    Ok(
        declared_shape(body, BLOCK_MARKER, "block", BlockDims::problem)?
            .map(|dims| BlockDims { dims }),
    )
}

/// The sides of the shape marker `marker` in `body`, checked by `problem`.
fn declared_shape(
    body: &Body,
    marker: &str,
    what: &str,
    problem: fn([u32; 3]) -> Option<String>,
) -> TResult<Option<[u32; 3]>> {
    let mut found = None;
    for values in marker_calls(body, marker) {
        let mut dims = [0u32; 3];
        for (side, value) in dims.iter_mut().zip(values.iter().chain([None; 3].iter())) {
            match value.map(u32::try_from) {
                Some(Ok(v)) => *side = v,
                _ => unsupported!("a {what} shape whose sides are not `u32` constants"),
            }
        }
        if let Some(problem) = problem(dims) {
            unsupported!("{problem}")
        }
        if found.is_some_and(|other| other != dims) {
            unsupported!("two different {what} shapes on one kernel")
        }
        found = Some(dims);
    }
    Ok(found)
}

/// The launch bounds a kernel's body declares, if any.
pub fn declared(body: &Body) -> TResult<Option<LaunchBounds>> {
    let mut found = None;
    for values in marker_calls(body, MARKER) {
        let value = |index: usize| values.get(index).copied().flatten();
        let (Some(max_threads), Some(min_blocks)) = (value(0), value(1)) else {
            unsupported!("launch bounds that are not constants")
        };
        if !(1..=u128::from(MAX_THREADS_PER_BLOCK)).contains(&max_threads) {
            unsupported!(
                "launch bounds of {max_threads} threads per block (1 to {MAX_THREADS_PER_BLOCK} \
                 are possible)"
            )
        }
        let bounds = LaunchBounds {
            max_threads: max_threads as u32,
            min_blocks: match u32::try_from(min_blocks) {
                Ok(0) => None,
                Ok(min) => Some(min),
                Err(_) => unsupported!("launch bounds of {min_blocks} blocks per multiprocessor"),
            },
        };
        if found.is_some_and(|other| other != bounds) {
            unsupported!("two different launch bounds on one kernel")
        }
        found = Some(bounds);
    }
    Ok(found)
}
