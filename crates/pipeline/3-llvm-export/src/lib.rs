//! Textual LLVM IR from pliron's LLVM dialect (see docs/device-ir.md).
//!
//! [`export_module`] writes a pliron `builtin.module` of pliron-llvm `llvm.func` and
//! `llvm.global` ops as LLVM IR text for the NVPTX target. pliron-llvm's own LLVM output goes
//! through llvm-sys, which is not available here, so this crate writes the text itself:
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
//! - with [`ExportOptions::cpu`], the module is the CPU device's flavour ([`cpu_image`]);
//! - with [`ExportOptions::debug`], the ops' source locations become debug metadata
//!   ([`debug_info`]), from which `llc` writes `.file`/`.loc` into the PTX.
//!
//! Unsupported ops, types and attributes are reported as [`ExportError`]s naming them.
//!
//! What happens to the text next is the next stage's work (`llvm-to-ptx`: libdevice, `opt`,
//! check hoisting, `llc`).

mod attrs;
mod const_expr;
mod constants;
pub mod cpu_image;
pub mod debug_info;
mod error;
mod function;
mod module;
mod module_state;
mod naming;
mod ops;
mod phi;
mod symbols;
mod types;

pub use cpu_image::{CPU_DYNAMIC_SHARED_BYTES, CPU_IMAGE_VERSION, CpuImage};
pub use debug_info::DeviceDebug;
pub use error::ExportError;
pub use module::{
    ExportOptions, NVPTX_DATA_LAYOUT, NVPTX_TRIPLE, export_module, export_module_with,
};
