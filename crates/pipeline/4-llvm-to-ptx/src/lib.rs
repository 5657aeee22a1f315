//! LLVM IR text to PTX, with LLVM's tools and passes of our own between them:
//!
//! - [`libdevice`]: NVIDIA's libdevice linked in (`llvm-link`) when the math calls it;
//! - [`llvm_codegen`]: `opt` and `llc`, as separate calls ([`LlvmCodegen`]);
//! - [`hoist_checks`], between two `opt` runs: bounds checks that a test before a loop proves
//!   get a check-free copy of the loop ([`loop_versioning`]), and runs of checks branch once
//!   ([`check_merging`]). Both read `opt`'s output through one small model of the text
//!   ([`ll_text`]) rather than pliron IR, because by then `opt` has rotated the loops, hoisted
//!   invariants and simplified induction variables.
//!
//! The device pipeline (`device-pipeline`) runs them as its stages `link`, `opt`,
//! `check-hoisting` and `llc`.

pub mod check_merging;
pub mod libdevice;
mod ll_text;
pub mod llvm_codegen;
pub mod loop_versioning;

pub use check_merging::merge_check_runs;
pub use libdevice::{REFLECT_FLAGS, link_libdevice, link_libdevice_if_needed, needs_libdevice};
pub use llvm_codegen::{LlvmCodegen, OPT_NVPTX_TUNING, PtxOptions, compile_to_ptx};
pub use loop_versioning::version_checked_loops;

/// Both check-hoisting passes, in order: versioning, then merging. Returns the module and
/// whether either changed it (the caller then runs `opt` again to fold and unroll what they
/// exposed).
pub fn hoist_checks(ll_text: &str) -> (String, bool) {
    let (versioned, loops) = version_checked_loops(ll_text);
    let (merged, runs) = merge_check_runs(&versioned);
    (merged, loops + runs > 0)
}
