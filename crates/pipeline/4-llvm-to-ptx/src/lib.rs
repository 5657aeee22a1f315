//! LLVM IR text to PTX, with LLVM's tools and passes of our own between them:
//!
//! - [`libdevice`]: NVIDIA's libdevice linked in (`llvm-link`) when the math calls it;
//! - [`llvm_codegen`]: `opt` and `llc`, as separate calls ([`LlvmCodegen`]);
//! - [`cpu_object`]: the CPU device's flavour of the module to a host object file, with
//!   libdevice's NVVM intrinsics defined for the host ([`nvvm_on_cpu`]);
//! - [`hoist_checks`], between two `opt` runs: thread-indexed checks that a test of the
//!   block's size proves get a check-free copy of the kernel ([`block_versioning`]), bounds
//!   checks that a test before a loop proves get a check-free copy of the loop
//!   ([`loop_versioning`]), and runs of checks branch once ([`check_merging`]). All read
//!   `opt`'s output through one small model of the text ([`ll_text`]) rather than pliron IR, because by then `opt` has rotated the loops, hoisted
//!   invariants and simplified induction variables.
//!
//! The device pipeline (`device-pipeline`) runs them as its stages `link`, `opt`,
//! `check-hoisting` and `llc`.

pub mod block_versioning;
pub mod check_merging;
pub mod cpu_object;
pub mod libdevice;
mod ll_text;
pub mod llvm_codegen;
pub mod loop_versioning;
pub mod nvvm_on_cpu;

pub use block_versioning::version_on_block_size;
pub use check_merging::merge_check_runs;
pub use cpu_object::{CpuObjectError, compile_cpu_object};
pub use libdevice::{REFLECT_FLAGS, link_libdevice, link_libdevice_if_needed, needs_libdevice};
pub use llvm_codegen::{LlvmCodegen, OPT_NVPTX_TUNING, PtxOptions, compile_to_ptx};
pub use loop_versioning::version_checked_loops;

/// The check-hoisting passes, in order: kernels versioned on their block's size, loops
/// versioned, then runs of checks merged. Returns the module and whether any changed it (the
/// caller then runs `opt` again to fold and unroll what they exposed).
pub fn hoist_checks(ll_text: &str) -> (String, bool) {
    let (by_block, kernels) = version_on_block_size(ll_text);
    let (versioned, loops) = version_checked_loops(&by_block);
    let (merged, runs) = merge_check_runs(&versioned);
    (merged, kernels + loops + runs > 0)
}
