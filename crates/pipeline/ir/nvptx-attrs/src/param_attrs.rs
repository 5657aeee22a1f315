//! Parameter attributes of an `llvm.func` (`noalias`, `readonly`, `nonnull`, `align(N)`, ...),
//! which pliron-llvm does not model: a `builtin.vec` of one `LlvmAttributesAttr` per parameter
//! under [ATTR_KEY_LLVM_PARAM_ATTRS], written after each parameter's type in the `define` line.

use pliron::{builtin::attributes::VecAttr, context::Context, dict_key, op::Op};
use pliron_llvm::{llvm_attrs::LlvmAttributesAttr, ops::FuncOp};

dict_key!(
    /// Attribute key of the parameter attributes of an `llvm.func` (a `builtin.vec` of
    /// `LlvmAttributesAttr`, one per parameter, in order).
    ATTR_KEY_LLVM_PARAM_ATTRS,
    "llvm_param_attrs"
);

/// Give `func`'s parameters the attributes `attrs` (one set per parameter, in order; an empty
/// set for a parameter without any).
pub fn set_param_attrs(ctx: &Context, func: &FuncOp, attrs: Vec<LlvmAttributesAttr>) {
    let list = VecAttr::new(attrs.into_iter().map(|a| a.into()).collect());
    func.get_operation()
        .deref_mut(ctx)
        .attributes
        .set(ATTR_KEY_LLVM_PARAM_ATTRS.clone(), list);
}

/// The attributes of `func`'s parameter `index`, if it has any.
pub fn param_attrs(ctx: &Context, func: &FuncOp, index: usize) -> Option<LlvmAttributesAttr> {
    let op = func.get_operation().deref(ctx);
    let list = op.attributes.get::<VecAttr>(&ATTR_KEY_LLVM_PARAM_ATTRS)?;
    list.0
        .get(index)?
        .downcast_ref::<LlvmAttributesAttr>()
        .cloned()
}
