//! What happens to PTX: finding and running the tools that make and check it ([`tools`]:
//! `llc`, `opt`, `llvm-link`, `ptxas`), LLVM IR to PTX with `opt` and `llc`
//! ([`llvm_codegen`]), NVIDIA's libdevice ([`libdevice`]), and the passes over `llc`'s PTX
//! text, which share one model of its lines ([`ptx_text`]):
//!
//! - [`faulting_checks`] makes a failed check fault at the access it guards instead of
//!   branching to a trap, which lets ptxas predicate guarded loads;
//! - [`declared_block_dims`] makes the block-size reads of a kernel with `.reqntid` the
//!   declared constants;
//! - [`debug_labels`] removes the debug-information labels nothing refers to.
//!
//! No dependency on pliron: `cargo oxide doctor` finds the tools with this crate.

pub mod debug_labels;
pub mod declared_block_dims;
mod error;
pub mod faulting_checks;
pub mod libdevice;
pub mod llvm_codegen;
mod ptx_text;
pub mod tools;

pub use debug_labels::remove_unreferenced_debug_labels;
pub use declared_block_dims::fold_declared_block_dims;
pub use error::PtxError;
pub use faulting_checks::fault_at_guarded_accesses;
pub use libdevice::{find_libdevice, link_libdevice, link_libdevice_if_needed, needs_libdevice};
pub use llvm_codegen::{LlvmCodegen, OPT_NVPTX_TUNING, PtxOptions, compile_to_ptx};
pub use tools::{
    LlvmTools, LlvmVersion, MIN_LLVM_MAJOR, TempDir, assemble_cubin, assemble_with_ptxas,
    find_llvm_tools, find_ptxas, is_debug_ptx, probe_llc, ptxas_options, run,
};
