//! The kernel marker: a unit attribute on an `llvm.func` that makes it a GPU entry point.
//!
//! A marked function is written `define ptx_kernel void @name(...)`. LLVM 21 and newer derive
//! the `.entry` directive from the `ptx_kernel` calling convention alone, so no
//! `!nvvm.annotations` metadata is written. Launch bounds are the function attributes
//! `"nvvm.maxntid"` and `"nvvm.minctasm"`, which the NVPTX backend turns into `.maxntid` and
//! `.minnctapersm`.

use pliron::{builtin::attributes::UnitAttr, context::Context, dict_key, op::Op};
use pliron_llvm::llvm_attrs::{LlvmAttrValue, LlvmAttributesAttr};
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

/// Give the kernel `func` launch bounds: at most `max_threads` threads per block, and (when
/// given) at least `min_blocks` resident blocks per multiprocessor.
pub fn set_launch_bounds(ctx: &Context, func: &FuncOp, max_threads: u32, min_blocks: Option<u32>) {
    let mut attrs: LlvmAttributesAttr = func
        .get_attr_llvm_func_attrs(ctx)
        .map(|a| a.clone())
        .unwrap_or_default();
    attrs.set("nvvm.maxntid", LlvmAttrValue::Str(max_threads.to_string()));
    match min_blocks {
        Some(min) => attrs.set("nvvm.minctasm", LlvmAttrValue::Str(min.to_string())),
        None => attrs.remove("nvvm.minctasm"),
    }
    func.set_attr_llvm_func_attrs(ctx, attrs);
}

/// Whether `func` carries the kernel marker.
pub fn is_kernel(ctx: &Context, func: &FuncOp) -> bool {
    func.get_operation()
        .deref(ctx)
        .attributes
        .get::<UnitAttr>(&ATTR_KEY_PTX_KERNEL)
        .is_some()
}
