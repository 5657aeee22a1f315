//! Terminators: branches keep their targets and forwarded block arguments; a trap (a reached
//! panic) is `call void @llvm.trap()` followed by `unreachable`.

use dialect_mir::ops::{CondBrOp, GotoOp, ReturnOp, SwitchIntOp, UnreachableOp};
use pliron::{
    builtin::{attributes::IntegerAttr, op_interfaces::BranchOpInterface},
    context::Context,
    op::Op,
};
use pliron_llvm::{
    ops::{
        BrOp, CondBrOp as LlvmCondBrOp, ReturnOp as LlvmReturnOp, SwitchCase, SwitchOp,
        UnreachableOp as LlvmUnreachableOp,
    },
    types::VoidType,
};

use super::{Rewrite, as_int_type};
use crate::{error::OpError, flavour::Flavour, types::int_type};

/// `mir.goto` -> `llvm.br`.
pub fn goto(op: &GotoOp, ctx: &mut Context, rw: &mut Rewrite) -> Result<(), OpError> {
    let args = op.successor_operands(ctx, 0);
    let br = BrOp::new(ctx, op.dest(ctx), args);
    rw.insert(ctx, br);
    rw.erase(ctx);
    Ok(())
}

/// `mir.cond_br` -> `llvm.cond_br`.
pub fn cond_br(op: &CondBrOp, ctx: &mut Context, rw: &mut Rewrite) -> Result<(), OpError> {
    let then_args = op.successor_operands(ctx, 0);
    let else_args = op.successor_operands(ctx, 1);
    let br = LlvmCondBrOp::new(
        ctx,
        op.condition(ctx),
        op.then_dest(ctx),
        then_args,
        op.else_dest(ctx),
        else_args,
    );
    rw.insert(ctx, br);
    rw.erase(ctx);
    Ok(())
}

/// `mir.switch_int` -> `llvm.switch` with signless case values.
pub fn switch_int(op: &SwitchIntOp, ctx: &mut Context, rw: &mut Rewrite) -> Result<(), OpError> {
    let values = op.case_values(ctx);
    let successors: Vec<_> = op.get_operation().deref(ctx).successors().collect();
    let mut cases = vec![];
    for (idx, value) in values.iter().enumerate() {
        let width = value.get_type().deref(ctx).width();
        let ty = as_int_type(ctx, int_type(ctx, width)).expect("an integer type");
        cases.push(SwitchCase {
            value: IntegerAttr::new(ty, value.value()),
            dest: successors[idx],
            dest_opds: op.successor_operands(ctx, idx),
        });
    }
    let otherwise = successors.len() - 1;
    let switch = SwitchOp::new(
        ctx,
        op.value(ctx),
        successors[otherwise],
        op.successor_operands(ctx, otherwise),
        cases,
    );
    rw.insert(ctx, switch);
    rw.erase(ctx);
    Ok(())
}

/// `mir.return` -> `llvm.return`.
pub fn ret(op: &ReturnOp, ctx: &mut Context, rw: &mut Rewrite) -> Result<(), OpError> {
    let value = op.value(ctx);
    let ret = LlvmReturnOp::new(ctx, value);
    rw.insert(ctx, ret);
    rw.erase(ctx);
    Ok(())
}

/// `mir.unreachable` -> `llvm.unreachable`.
pub fn unreachable(
    _op: &UnreachableOp,
    ctx: &mut Context,
    rw: &mut Rewrite,
) -> Result<(), OpError> {
    let op = LlvmUnreachableOp::new(ctx);
    rw.insert(ctx, op);
    rw.erase(ctx);
    Ok(())
}

/// `mir.trap` -> `call void @llvm.trap()` + `llvm.unreachable`.
pub fn trap(_op: &dyn Op, ctx: &mut Context, rw: &mut Rewrite) -> Result<(), OpError> {
    let void = VoidType::get(ctx).into();
    // On the CPU the runtime stops the thread's block (a `ud2` would stop the process).
    let name = if rw.for_cpu() {
        Flavour::runtime_function("trap")
    } else {
        "llvm.trap".to_owned()
    };
    rw.intrinsic(ctx, &name, void, vec![], false);
    let op = LlvmUnreachableOp::new(ctx);
    rw.insert(ctx, op);
    rw.erase(ctx);
    Ok(())
}
