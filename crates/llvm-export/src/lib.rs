//! Textual LLVM IR, and PTX from it through `opt` and `llc` (see docs/device-ir.md).
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
//! - functions marked with `nvptx_attrs::mark_kernel` are `ptx_kernel` entry points;
//!   parameter attributes set with `nvptx_attrs::set_param_attrs` follow each parameter's
//!   type;
//! - intrinsics called with `llvm.call_intrinsic` are declared at the end of the module;
//! - with [`ExportOptions::debug`], the ops' source locations become debug metadata
//!   ([`debug_info`]), from which `llc` writes `.file`/`.loc` into the PTX.
//!
//! Unsupported ops, types and attributes are reported as [`ExportError`]s naming them.
//!
//! Between two `opt` runs, [`loop_versioning`] and [`check_merging`] hoist bounds checks out
//! of loops. Finding and running the tools, libdevice, and the passes over `llc`'s PTX are
//! `ptx_tools`'s.

pub mod check_merging;
mod const_expr;
mod constants;
pub mod debug_info;
mod error;
mod function;
mod ll_text;
pub mod llc;
pub mod loop_versioning;
mod module;
mod naming;
mod ops;
mod phi;
mod symbols;
mod types;

pub use check_merging::merge_check_runs;
pub use debug_info::DeviceDebug;
pub use error::ExportError;
pub use llc::{OPT_NVPTX_TUNING, PtxOptions, compile_to_ptx};
pub use loop_versioning::version_checked_loops;
pub use module::{
    ExportOptions, NVPTX_DATA_LAYOUT, NVPTX_TRIPLE, export_module, export_module_with,
};
