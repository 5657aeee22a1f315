//! Calls between device functions, direct and through function pointers. Arguments and results
//! pass by value with their converted types, matching the callee's `llvm.func` type built from
//! the same `mir` type.

use dialect_mir::ops::{CallIndirectOp, CallOp};
use pliron::{
    builtin::{
        op_interfaces::{CallOpCallable, CallOpInterface},
        type_interfaces::FunctionTypeInterface,
        types::FunctionType,
    },
    context::Context,
    op::Op,
};
use pliron_llvm::ops::CallOp as LlvmCallOp;

use super::Rewrite;
use crate::{error::OpError, types::function_type};

/// `mir.call @f(args)` -> `llvm.call @f(args)`.
pub fn call(op: &CallOp, ctx: &mut Context, rw: &mut Rewrite) -> Result<(), OpError> {
    let callee = CallOpCallable::Direct(op.callee_name(ctx));
    let operands = rw.operands(ctx);
    emit_call(op, ctx, rw, callee, operands)
}

/// `mir.call_indirect %f(args)` -> `llvm.call %f(args)`.
pub fn call_indirect(
    op: &CallIndirectOp,
    ctx: &mut Context,
    rw: &mut Rewrite,
) -> Result<(), OpError> {
    let mut operands = rw.operands(ctx);
    let callee = CallOpCallable::Indirect(operands.remove(0));
    emit_call(op, ctx, rw, callee, operands)
}

/// An `llvm.call` of `callee` with `args`, of `op`'s callee type, replacing `op`.
fn emit_call(
    op: &dyn CallOpInterface,
    ctx: &mut Context,
    rw: &mut Rewrite,
    callee: CallOpCallable,
    args: Vec<pliron::value::Value>,
) -> Result<(), OpError> {
    let callee_ty = op.callee_type(ctx);
    let (arg_types, results) = {
        let ty_ref = callee_ty.deref(ctx);
        let func_ty = ty_ref
            .downcast_ref::<FunctionType>()
            .ok_or_else(|| OpError::Malformed("the callee type is not a function type".into()))?;
        (func_ty.arg_types(), func_ty.res_types())
    };
    let llvm_ty = function_type(ctx, &arg_types, &results)?;
    let call = LlvmCallOp::new(ctx, callee, llvm_ty, args);
    let call = rw.insert(ctx, call);
    let values = if results.is_empty() {
        vec![]
    } else {
        vec![call.get_operation().deref(ctx).get_result(0)]
    };
    rw.replace(ctx, values);
    Ok(())
}
