//! MIR's binary operations as dialect-mir ops, shared by the translators of rvalues,
//! intrinsics, SIMD lanes and x86 intrinsics: a leaf that imports no other translator module.

use dialect_mir::ops::*;
use pliron::context::Ptr;
use pliron::op::Op;
use pliron::operation::Operation;
use pliron::value::Value;
use rustc_public::mir::BinOp;

use super::error::{TResult, unsupported};

/// The dialect-mir op of MIR binary operation `op` on two values of one type.
pub(crate) fn binary_op(
    ctx: &mut pliron::context::Context,
    op: BinOp,
    a: Value,
    b: Value,
) -> TResult<Ptr<Operation>> {
    Ok(match op {
        BinOp::Add | BinOp::AddUnchecked => AddOp::new(ctx, a, b).get_operation(),
        BinOp::Sub | BinOp::SubUnchecked => SubOp::new(ctx, a, b).get_operation(),
        BinOp::Mul | BinOp::MulUnchecked => MulOp::new(ctx, a, b).get_operation(),
        BinOp::Div => DivOp::new(ctx, a, b).get_operation(),
        BinOp::Rem => RemOp::new(ctx, a, b).get_operation(),
        BinOp::BitXor => BitXorOp::new(ctx, a, b).get_operation(),
        BinOp::BitAnd => BitAndOp::new(ctx, a, b).get_operation(),
        BinOp::BitOr => BitOrOp::new(ctx, a, b).get_operation(),
        BinOp::Shl | BinOp::ShlUnchecked => ShlOp::new(ctx, a, b).get_operation(),
        BinOp::Shr | BinOp::ShrUnchecked => ShrOp::new(ctx, a, b).get_operation(),
        BinOp::Eq => EqOp::new(ctx, a, b).get_operation(),
        BinOp::Ne => NeOp::new(ctx, a, b).get_operation(),
        BinOp::Lt => LtOp::new(ctx, a, b).get_operation(),
        BinOp::Le => LeOp::new(ctx, a, b).get_operation(),
        BinOp::Gt => GtOp::new(ctx, a, b).get_operation(),
        BinOp::Ge => GeOp::new(ctx, a, b).get_operation(),
        BinOp::Offset => PtrOffsetOp::new(ctx, a, b).get_operation(),
        BinOp::Cmp => unsupported!("a three-way comparison outside its own translation"),
    })
}

/// Whether `ty` is a signed integer type.
pub(crate) fn is_signed(ctx: &pliron::context::Context, ty: pliron::r#type::TypeHandle) -> bool {
    ty.deref(ctx)
        .downcast_ref::<pliron::builtin::types::IntegerType>()
        .is_some_and(|int| int.is_signed())
}
