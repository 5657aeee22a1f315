//! `mir.constant` and `mir.undef`: integer constants lose their signedness, floats keep their
//! attribute.

use dialect_mir::ops::{ConstantOp, UndefOp};
use pliron::{
    attribute::attr_cast,
    builtin::{attr_interfaces::TypedAttrInterface, attributes::IntegerAttr},
    context::Context,
    dyn_clone::clone_box,
};
use pliron_llvm::ops::ConstantOp as LlvmConstantOp;

use super::{Rewrite, as_int_type};
use crate::{error::OpError, types::int_type};

/// `mir.constant` -> `llvm.constant` of the signless integer type, or of the same float.
pub fn constant(op: &ConstantOp, ctx: &mut Context, rw: &mut Rewrite) -> Result<(), OpError> {
    let value = op.value(ctx);
    let attr: Box<dyn TypedAttrInterface> = if let Some(int) = value.downcast_ref::<IntegerAttr>() {
        let apint = int.value();
        let width = int.get_type().deref(ctx).width();
        let ty = as_int_type(ctx, int_type(ctx, width)).expect("an integer type");
        Box::new(IntegerAttr::new(ty, apint))
    } else if let Some(typed) = attr_cast::<dyn TypedAttrInterface>(&*value) {
        clone_box(typed)
    } else {
        return Err(OpError::Malformed(
            "a constant without a typed value".into(),
        ));
    };
    let llvm_op = LlvmConstantOp::new(ctx, attr);
    let result = rw.value(ctx, llvm_op);
    rw.replace(ctx, vec![result]);
    Ok(())
}

/// `mir.undef` -> `llvm.undef` of the value type.
pub fn undef(_op: &UndefOp, ctx: &mut Context, rw: &mut Rewrite) -> Result<(), OpError> {
    let ty = rw.llvm_type(ctx, rw.result_mir_type(ctx, 0))?;
    let result = rw.undef(ctx, ty);
    rw.replace(ctx, vec![result]);
    Ok(())
}
