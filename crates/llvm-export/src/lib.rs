//! Textual LLVM IR and PTX (see docs/device-ir.md).
//!
//! [`export_module`] writes a pliron `builtin.module` of pliron-llvm `llvm.func` and
//! `llvm.global` ops as LLVM IR text for the NVPTX target; [`compile_to_ptx`] runs `opt` and
//! `llc` on that text. pliron-llvm's own LLVM output goes through llvm-sys, which is not
//! available here, so this crate writes the text itself:
//!
//! - every value and block is named before anything is written (given names, sanitised and
//!   made unique, else `%vN` / `bbN`), so forward references work;
//! - block arguments become `phi` nodes built from the predecessor edges, with trampoline blocks where parallel edges disagree;
//! - constant-like ops (`llvm.constant`, `llvm.zero`, `llvm.undef`, `llvm.poison`,
//!   `llvm.addressof`) are written inline at their uses;
//! - a global's initializer region is folded into one constant (constant expressions for
//!   `llvm.addrspacecast` and `llvm.gep`, aggregates built with `llvm.insert_value`);
//! - functions marked with [`mark_kernel`] are `ptx_kernel` entry points; parameter
//!   attributes set with [`set_param_attrs`] follow each parameter's type;
//! - intrinsics called with `llvm.call_intrinsic` are declared at the end of the module;
//! - with [`ExportOptions::debug`], the ops' source locations become debug metadata
//!   ([`debug_info`]), from which `llc` writes `.file`/`.loc` into the PTX.
//!
//! Unsupported ops, types and attributes are reported as [`ExportError`]s naming them.
//!
//! After `llc`, two rewrites of the PTX text: [`faulting_checks`] makes a failed check fault at
//! the access it guards instead of branching to a trap, which lets ptxas predicate guarded
//! loads; [`declared_block_dims`] makes the block-size reads of a kernel with `.reqntid` the
//! declared constants.
//!
//! [`libdevice`] finds NVIDIA's libdevice and links it into modules whose math calls it.

pub mod check_merging;
mod const_expr;
mod constants;
pub mod debug_info;
pub mod declared_block_dims;
mod error;
pub mod faulting_checks;
mod function;
mod kernel;
pub mod libdevice;
mod ll_text;
pub mod llc;
pub mod loop_versioning;
mod module;
mod naming;
mod ops;
mod param_attrs;
mod phi;
mod ptx_text;
mod symbols;
mod types;

pub use check_merging::merge_check_runs;
pub use debug_info::DeviceDebug;
pub use declared_block_dims::fold_declared_block_dims;
pub use error::{ExportError, PtxError};
pub use faulting_checks::fault_at_guarded_accesses;
pub use kernel::{
    ATTR_KEY_PTX_KERNEL, grid_constant_attrs, is_kernel, mark_kernel, set_block_dims,
    set_cluster_dims, set_grid_constant, set_launch_bounds,
};
pub use libdevice::{find_libdevice, link_libdevice, link_libdevice_if_needed, needs_libdevice};
pub use llc::{
    LlvmTools, LlvmVersion, PtxOptions, assemble_cubin, assemble_with_ptxas, compile_to_ptx,
    find_llvm_tools, find_ptxas, probe_llc, ptxas_options,
};
pub use loop_versioning::version_checked_loops;
pub use module::{
    ExportOptions, NVPTX_DATA_LAYOUT, NVPTX_TRIPLE, export_module, export_module_with,
};
pub use param_attrs::{ATTR_KEY_LLVM_PARAM_ATTRS, param_attrs, set_param_attrs};
