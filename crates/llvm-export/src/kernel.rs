//! The kernel marker: a unit attribute on an `llvm.func` that makes it a GPU entry point.
//!
//! A marked function is written `define ptx_kernel void @name(...)`. LLVM 21 and newer derive
//! the `.entry` directive from the `ptx_kernel` calling convention alone, so no
//! `!nvvm.annotations` metadata is written.

use pliron::{builtin::attributes::UnitAttr, context::Context, dict_key, op::Op};
use pliron_llvm::ops::FuncOp;

dict_key!(
    /// Attribute key of the kernel marker (a `builtin.unit` attribute) on `llvm.func`.
    ATTR_KEY_PTX_KERNEL,
    "llvm_ptx_kernel"
);

/// Mark `func` as a kernel (GPU entry point). Kernels must return `void`.
pub fn mark_kernel(ctx: &Context, func: &FuncOp) {
    func.get_operation()
        .deref_mut(ctx)
        .attributes
        .set(ATTR_KEY_PTX_KERNEL.clone(), UnitAttr::new());
}

/// Whether `func` carries the kernel marker.
pub fn is_kernel(ctx: &Context, func: &FuncOp) -> bool {
    func.get_operation()
        .deref(ctx)
        .attributes
        .get::<UnitAttr>(&ATTR_KEY_PTX_KERNEL)
        .is_some()
}
