//! What happens to PTX after `llc`: the passes over its text, which share one model of its
//! lines ([`ptx_text`]), and assembling it with `ptxas` ([`ptxas`]).
//!
//! - [`debug_labels`] removes the debug-information labels nothing refers to;
//! - [`faulting_checks`] makes a failed check fault at the access it guards instead of
//!   branching to a trap, which lets ptxas predicate guarded loads;
//! - [`declared_block_dims`] makes the block-size reads of a kernel with `.reqntid` the
//!   declared constants;
//! - [`back_edges`] makes a loop's back edge the conditional branch of its latch;
//! - [`wide_negation`] computes 16-bit negations in 32 bits, which the CUDA 13.0 JIT gets wrong.
//!
//! No dependency on pliron: the tests and tools that check PTX link this crate alone.

pub mod back_edges;
pub mod debug_labels;
pub mod declared_block_dims;
pub mod faulting_checks;
mod ptx_text;
pub mod ptxas;
pub mod wide_negation;

pub use back_edges::branch_on_back_edges;
pub use debug_labels::remove_unreferenced_debug_labels;
pub use declared_block_dims::fold_declared_block_dims;
pub use faulting_checks::fault_at_guarded_accesses;
pub use ptxas::{assemble_cubin, assemble_with_ptxas, is_debug_ptx, ptxas_options};
pub use wide_negation::widen_16_bit_negations;
