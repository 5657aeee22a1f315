//! The kernel marker: a unit attribute on an `llvm.func` that makes it a GPU entry point.
//!
//! A marked function is written `define ptx_kernel void @name(...)`. LLVM 21 and newer derive
//! the `.entry` directive from the `ptx_kernel` calling convention alone, so no
//! `!nvvm.annotations` metadata is written. Launch bounds are the function attributes
//! `"nvvm.maxntid"` and `"nvvm.minctasm"`, which the NVPTX backend turns into `.maxntid` and
//! `.minnctapersm`. A grid-constant parameter carries the parameter attributes `byval(T)
//! align(A) "nvvm.grid_constant"`: its address is the parameter's own, in the param space.

use pliron::{
    builtin::attributes::UnitAttr, context::Context, dict_key, identifier::Identifier, op::Op,
    r#type::TypeHandle,
};
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
    update_func_attrs(ctx, func, |attrs| {
        attrs.set("nvvm.maxntid", LlvmAttrValue::Str(max_threads.to_string()));
        match min_blocks {
            Some(min) => attrs.set("nvvm.minctasm", LlvmAttrValue::Str(min.to_string())),
            None => attrs.remove("nvvm.minctasm"),
        }
    });
}

/// Give the kernel `func` a cluster shape of `dims` blocks: `"nvvm.cluster_dim"="x,y,z"`,
/// PTX `.explicitcluster` and `.reqnctapercluster x, y, z`.
pub fn set_cluster_dims(ctx: &Context, func: &FuncOp, dims: [u32; 3]) {
    set_dims(ctx, func, "nvvm.cluster_dim", dims);
}

/// Give the kernel `func` an exact block shape of `dims` threads: `"nvvm.reqntid"="x,y,z"`,
/// PTX `.reqntid x, y, z`; LLVM bounds `tid.x/y/z` (and `ntid`) by it.
pub fn set_block_dims(ctx: &Context, func: &FuncOp, dims: [u32; 3]) {
    set_dims(ctx, func, "nvvm.reqntid", dims);
}

/// Sets the function attribute `key` of `func` to `"x,y,z"`.
fn set_dims(ctx: &Context, func: &FuncOp, key: &str, [x, y, z]: [u32; 3]) {
    update_func_attrs(ctx, func, |attrs| {
        attrs.set(key, LlvmAttrValue::Str(format!("{x},{y},{z}")));
    });
}

/// Changes the function attributes of `func` (`"nvvm.*"` and the like) with `change`.
fn update_func_attrs(ctx: &Context, func: &FuncOp, change: impl FnOnce(&mut LlvmAttributesAttr)) {
    let mut attrs: LlvmAttributesAttr = func
        .get_attr_llvm_func_attrs(ctx)
        .map(|a| a.clone())
        .unwrap_or_default();
    change(&mut attrs);
    func.set_attr_llvm_func_attrs(ctx, attrs);
}

/// The most threads a block of kernel `func` may have: its launch bound, or the product of its
/// declared block shape; `None` when it has neither.
pub fn max_threads(ctx: &Context, func: &FuncOp) -> Option<u32> {
    let attrs = func.get_attr_llvm_func_attrs(ctx)?;
    let text = |key: &str| match attrs.get(key) {
        Some(LlvmAttrValue::Str(text)) => Some(text.clone()),
        _ => None,
    };
    if let Some(bound) = text("nvvm.maxntid").and_then(|t| t.parse().ok()) {
        return Some(bound);
    }
    text("nvvm.reqntid").and_then(|dims| {
        dims.split(',')
            .map(|d| d.trim().parse::<u32>().ok())
            .try_fold(1u32, |product, d| product.checked_mul(d?))
    })
}

/// Whether `func` carries the kernel marker.
pub fn is_kernel(ctx: &Context, func: &FuncOp) -> bool {
    func.get_operation()
        .deref(ctx)
        .attributes
        .get::<UnitAttr>(&ATTR_KEY_PTX_KERNEL)
        .is_some()
}

/// The attribute key of the parameter attributes of parameter `index`.
fn param_attrs_key(index: usize) -> Identifier {
    Identifier::try_from(format!("llvm_param_attrs_{index}")).expect("a valid identifier")
}

/// Make parameter `index` of the kernel `func` (an LLVM `ptr`) a grid constant holding a
/// `pointee` aligned to `align`: `ptr align(A) byval(T) "nvvm.grid_constant"=""`. The host
/// passes the value; the NVPTX backend keeps the parameter in the param space and gives the
/// pointer its address there (`cvta.param`), CUDA's `const __grid_constant__ T`.
pub fn set_grid_constant(
    ctx: &Context,
    func: &FuncOp,
    index: usize,
    pointee: TypeHandle,
    align: u32,
) {
    let mut attrs = LlvmAttributesAttr::new();
    attrs.set("align", LlvmAttrValue::Int(u64::from(align)));
    attrs.set("byval", LlvmAttrValue::Type(pointee));
    attrs.set("nvvm.grid_constant", LlvmAttrValue::Str(String::new()));
    func.get_operation()
        .deref_mut(ctx)
        .attributes
        .set(param_attrs_key(index), attrs);
}

/// The grid-constant attributes of parameter `index` of `func`, if it is one.
pub fn grid_constant_attrs(
    ctx: &Context,
    func: &FuncOp,
    index: usize,
) -> Option<LlvmAttributesAttr> {
    func.get_operation()
        .deref(ctx)
        .attributes
        .get::<LlvmAttributesAttr>(&param_attrs_key(index))
        .cloned()
}
