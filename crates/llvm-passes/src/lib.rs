//! Passes over the LLVM IR text that `opt` prints, run between two `opt` runs: bounds checks
//! that a test before a loop proves get a check-free copy of the loop ([`loop_versioning`]),
//! and runs of checks branch once ([`check_merging`]). Both read the text through one small
//! model of it ([`ll_text`]). They read `opt`'s output rather than pliron IR because by then
//! `opt` has rotated the loops, hoisted invariants and simplified induction variables.

pub mod check_merging;
mod ll_text;
pub mod loop_versioning;

pub use check_merging::merge_check_runs;
pub use loop_versioning::version_checked_loops;

/// Both passes, in order: versioning, then merging. Returns the module and whether either
/// changed it (the caller then runs `opt` again to fold and unroll what they exposed).
pub fn hoist_checks(ll_text: &str) -> (String, bool) {
    let (versioned, loops) = version_checked_loops(ll_text);
    let (merged, runs) = merge_check_runs(&versioned);
    (merged, loops + runs > 0)
}
