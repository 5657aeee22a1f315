//! `mir.math` as the LLVM intrinsic of the same name, overloaded on the operand type:
//! `llvm.sqrt.f32`, `llvm.ctpop.i32`, `llvm.umin.i64`. `ctlz`, `cttz` and `abs` take an extra
//! `i1 false` (zero input and the minimum are defined, as in Rust). Every Rust integer width
//! (8 to 128 bits) is legal for these intrinsics except `bswap` on one byte, which is the
//! identity.

use dialect_mir::ops::{MathFn, MathOp};
use pliron::{context::Context, r#type::Typed};
use pliron_llvm::{op_interfaces::CastOpInterface, ops::BitcastOp};

use super::Rewrite;
use crate::{
    error::OpError,
    types::{float_bits, int_width},
};

/// `mir.math f(args)` -> `call T @llvm.f.<suffix>(args[, i1 false])`.
pub fn math(op: &MathOp, ctx: &mut Context, rw: &mut Rewrite) -> Result<(), OpError> {
    let function = op.function(ctx);
    let ty = rw.result_mir_type(ctx, 0);
    let suffix = match (float_bits(ctx, ty), int_width(ctx, ty)) {
        (Some(bits), _) => format!("f{bits}"),
        (None, Some(width)) => format!("i{width}"),
        (None, None) => {
            return Err(OpError::Malformed(format!(
                "mir.math {function} on a non-scalar"
            )));
        }
    };
    let mut args = rw.operands(ctx);
    let llvm_ty = args[0].get_type(ctx);
    let result = if function == MathFn::Bswap && suffix == "i8" {
        let op = BitcastOp::new(ctx, args[0], llvm_ty);
        rw.value(ctx, op)
    } else {
        if matches!(function, MathFn::Ctlz | MathFn::Cttz | MathFn::Abs) {
            args.push(rw.const_int(ctx, 1, 0));
        }
        let name = format!("llvm.{}.{suffix}", function.name().replace('_', "."));
        rw.intrinsic(ctx, &name, llvm_ty, args, false)
    };
    rw.replace(ctx, vec![result]);
    Ok(())
}
