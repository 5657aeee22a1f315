//! Casts. The source's former `mir` type picks sign or zero extension and signed or unsigned
//! conversion; `mir.float_to_int` is Rust's saturating `as` (`llvm.fpto{s,u}i.sat`). Casts
//! that change nothing in LLVM (a change of signedness, a pointer cast within one address
//! space) still produce a new value, a `bitcast` to the same type, which `opt` removes.
//! Conversions between 128-bit integers and floats are left to llc, which expands them into
//! integer code when asked to (`llvm-export` passes `-expand-fp-convert-bits=64`).

use pliron::{
    builtin::attributes::{FPDoubleAttr, FPSingleAttr, UnitAttr},
    context::Context,
    op::Op,
    r#type::TypeHandle,
    value::Value,
};
use pliron_llvm::{
    attributes::{FCmpPredicateAttr, FastmathFlagsAttr, ICmpPredicateAttr},
    op_interfaces::{CastOpInterface, CastOpWithNNegInterface, FastMathFlags},
    ops::{
        AddrSpaceCastOp, BitcastOp, ConstantOp, FCmpOp, FPExtOp, FPToSIOp, FPToUIOp, FPTruncOp,
        ICmpOp, IntToPtrOp, PtrToIntOp, SExtOp, SIToFPOp, SelectOp, TruncOp, UIToFPOp, ZExtOp,
        ZeroOp,
    },
    types::{PointerType, VoidType},
};

use super::Rewrite;
use crate::{
    abi::ATTR_KEY_MIR_PTR_CAST_NONNULL,
    error::OpError,
    types::{float_bits, int_width, is_signed},
};

/// The kinds of cast, one per `mir` cast op.
#[derive(Clone, Copy, Debug)]
pub enum Cast {
    Int,
    IntToFloat,
    FloatToInt,
    Float,
    Ptr,
    PtrToInt,
    IntToPtr,
    Bits,
}

/// Convert operand 0 to the result type.
pub fn cast(op: &dyn Op, ctx: &mut Context, rw: &mut Rewrite, kind: Cast) -> Result<(), OpError> {
    let src = rw.operand_mir_type(ctx, 0);
    let dst = rw.result_mir_type(ctx, 0);
    let value = rw.operand(ctx, 0);
    let dst_llvm = rw.llvm_type(ctx, dst)?;
    let result = match kind {
        Cast::Int => int_resize(ctx, rw, value, src, dst_llvm)?,
        Cast::IntToFloat if is_signed(ctx, src) => make::<SIToFPOp>(ctx, rw, value, dst_llvm),
        Cast::IntToFloat => {
            let op = UIToFPOp::new_with_nneg(ctx, value, dst_llvm, false);
            rw.value(ctx, op)
        }
        Cast::FloatToInt => saturating_to_int(ctx, rw, value, src, dst, dst_llvm)?,
        Cast::Float => float_resize(ctx, rw, value, src, dst, dst_llvm)?,
        Cast::Ptr => {
            let result = ptr_to_ptr(ctx, rw, value, dst_llvm);
            let nonnull = op
                .get_operation()
                .deref(ctx)
                .attributes
                .get::<UnitAttr>(&ATTR_KEY_MIR_PTR_CAST_NONNULL)
                .is_some();
            if nonnull {
                assume_nonnull(ctx, rw, result, dst_llvm);
            }
            result
        }
        Cast::PtrToInt => make::<PtrToIntOp>(ctx, rw, value, dst_llvm),
        Cast::IntToPtr => make::<IntToPtrOp>(ctx, rw, value, dst_llvm),
        Cast::Bits => reinterpret(ctx, rw, value, dst_llvm),
    };
    rw.replace(ctx, vec![result]);
    Ok(())
}

/// `llvm.assume(ptr != null)` for `ptr` of pointer type `ty` (see
/// [ATTR_KEY_MIR_PTR_CAST_NONNULL]).
fn assume_nonnull(ctx: &mut Context, rw: &mut Rewrite, ptr: Value, ty: TypeHandle) {
    let zero = ZeroOp::new(ctx, ty);
    let null = rw.value(ctx, zero);
    let compare = ICmpOp::new(ctx, ICmpPredicateAttr::NE, ptr, null);
    let nonnull = rw.value(ctx, compare);
    let void = VoidType::get(ctx).into();
    rw.intrinsic(ctx, "llvm.assume", void, vec![nonnull], false);
}

/// Insert cast op `O` of `value` to `to`.
fn make<O: CastOpInterface>(
    ctx: &mut Context,
    rw: &mut Rewrite,
    value: Value,
    to: TypeHandle,
) -> Value {
    let op = O::new(ctx, value, to);
    rw.value(ctx, op)
}

/// Integer to integer: truncation, extension by the source's signedness (`bool` and unsigned
/// zero-extend), or a same-width no-op.
pub(crate) fn int_resize(
    ctx: &mut Context,
    rw: &mut Rewrite,
    value: Value,
    src: TypeHandle,
    to: TypeHandle,
) -> Result<Value, OpError> {
    let malformed = || OpError::Malformed("an integer cast of a non-integer".into());
    let from_width = int_width(ctx, src).ok_or_else(malformed)?;
    let to_width = int_width(ctx, to).ok_or_else(malformed)?;
    Ok(resize(
        ctx,
        rw,
        value,
        from_width,
        to_width,
        is_signed(ctx, src),
        to,
    ))
}

/// Resize an integer `value` of `from` bits to `to` bits (LLVM type `to_ty`), sign-extending
/// when `signed`.
pub(crate) fn resize(
    ctx: &mut Context,
    rw: &mut Rewrite,
    value: Value,
    from: u32,
    to: u32,
    signed: bool,
    to_ty: TypeHandle,
) -> Value {
    use std::cmp::Ordering;
    match to.cmp(&from) {
        Ordering::Less => make::<TruncOp>(ctx, rw, value, to_ty),
        Ordering::Greater if signed => make::<SExtOp>(ctx, rw, value, to_ty),
        Ordering::Greater => {
            let op = ZExtOp::new_with_nneg(ctx, value, to_ty, false);
            rw.value(ctx, op)
        }
        Ordering::Equal => make::<BitcastOp>(ctx, rw, value, to_ty),
    }
}

/// Rust's `float as int`: saturating at the bounds, NaN to 0.
fn saturating_to_int(
    ctx: &mut Context,
    rw: &mut Rewrite,
    value: Value,
    src: TypeHandle,
    dst: TypeHandle,
    dst_llvm: TypeHandle,
) -> Result<Value, OpError> {
    let bits = float_bits(ctx, src)
        .ok_or_else(|| OpError::Malformed("mir.float_to_int of a non-float".into()))?;
    let width = int_width(ctx, dst)
        .ok_or_else(|| OpError::Malformed("mir.float_to_int to a non-integer".into()))?;
    let signed = is_signed(ctx, dst);
    if width > 64 {
        return Ok(clamped_to_wide_int(
            ctx, rw, value, bits, width, signed, dst_llvm,
        ));
    }
    let sign = if signed { "s" } else { "u" };
    Ok(rw.intrinsic(
        ctx,
        &format!("llvm.fpto{sign}i.sat.i{width}.f{bits}"),
        dst_llvm,
        vec![value],
        false,
    ))
}

/// `float as i128` / `u128`: NVPTX cannot select `llvm.fpto{s,u}i.sat` at 128 bits, so a plain
/// `fptosi` / `fptoui` (which llc expands into integer code) is clamped by comparisons: NaN
/// gives 0, values below the range its minimum, values at or above `2^(width-1)` (signed) or
/// `2^width` (unsigned) its maximum. Both bounds are powers of two, exact in `f32` and `f64`
/// (`2^128` is `f32`'s infinity, which only infinity reaches).
fn clamped_to_wide_int(
    ctx: &mut Context,
    rw: &mut Rewrite,
    value: Value,
    float_bits: u32,
    width: u32,
    signed: bool,
    dst_llvm: TypeHandle,
) -> Value {
    let float_const = |ctx: &mut Context, rw: &mut Rewrite, x: f64| {
        let attr: Box<dyn pliron::builtin::attr_interfaces::TypedAttrInterface> =
            if float_bits == 32 {
                Box::new(FPSingleAttr::from(x as f32))
            } else {
                Box::new(FPDoubleAttr::from(x))
            };
        let op = ConstantOp::new(ctx, attr);
        rw.value(ctx, op)
    };
    let compare = |ctx: &mut Context, rw: &mut Rewrite, pred, rhs| {
        let op = FCmpOp::new(ctx, pred, value, rhs);
        op.set_fast_math_flags(ctx, FastmathFlagsAttr::default());
        rw.value(ctx, op)
    };
    let select = |ctx: &mut Context, rw: &mut Rewrite, cond, a, b| {
        let op = SelectOp::new(ctx, cond, a, b);
        rw.value(ctx, op)
    };
    let all_ones = u128::MAX >> (128 - width);
    let (plain, high, max, low, min, below) = if signed {
        let half = 2f64.powi(width as i32 - 1);
        let plain = make::<FPToSIOp>(ctx, rw, value, dst_llvm);
        let min = 1u128 << (width - 1);
        (plain, half, min - 1, -half, min, FCmpPredicateAttr::OLT)
    } else {
        let plain = make::<FPToUIOp>(ctx, rw, value, dst_llvm);
        let top = 2f64.powi(width as i32);
        (plain, top, all_ones, 0.0, 0, FCmpPredicateAttr::ULT)
    };
    let high = float_const(ctx, rw, high);
    let too_high = compare(ctx, rw, FCmpPredicateAttr::OGE, high);
    let max = rw.const_int(ctx, width, max);
    let result = select(ctx, rw, too_high, max, plain);
    let low = float_const(ctx, rw, low);
    let too_low = compare(ctx, rw, below, low);
    let min = rw.const_int(ctx, width, min);
    let result = select(ctx, rw, too_low, min, result);
    if !signed {
        // `ult` is already true for NaN.
        return result;
    }
    let is_nan = compare(ctx, rw, FCmpPredicateAttr::UNO, value);
    let zero = rw.const_int(ctx, width, 0);
    select(ctx, rw, is_nan, zero, result)
}

/// Float to float: `fpext`, `fptrunc`, or a same-type no-op.
fn float_resize(
    ctx: &mut Context,
    rw: &mut Rewrite,
    value: Value,
    src: TypeHandle,
    dst: TypeHandle,
    dst_llvm: TypeHandle,
) -> Result<Value, OpError> {
    let malformed = || OpError::Malformed("mir.float_cast of a non-float".into());
    let from = float_bits(ctx, src).ok_or_else(malformed)?;
    let to = float_bits(ctx, dst).ok_or_else(malformed)?;
    let no_flags = FastmathFlagsAttr::default();
    Ok(if to > from {
        let op = FPExtOp::new(ctx, value, dst_llvm);
        op.set_fast_math_flags(ctx, no_flags);
        rw.value(ctx, op)
    } else if to < from {
        let op = FPTruncOp::new(ctx, value, dst_llvm);
        op.set_fast_math_flags(ctx, no_flags);
        rw.value(ctx, op)
    } else {
        make::<BitcastOp>(ctx, rw, value, dst_llvm)
    })
}

/// The address space of an LLVM pointer type.
fn address_space(ctx: &Context, ty: TypeHandle) -> Option<u32> {
    ty.deref(ctx)
        .downcast_ref::<PointerType>()
        .map(PointerType::address_space)
}

/// Pointer to pointer: `addrspacecast` across address spaces, else a no-op.
fn ptr_to_ptr(ctx: &mut Context, rw: &mut Rewrite, value: Value, to: TypeHandle) -> Value {
    use pliron::r#type::Typed;
    if address_space(ctx, value.get_type(ctx)) == address_space(ctx, to) {
        make::<BitcastOp>(ctx, rw, value, to)
    } else {
        make::<AddrSpaceCastOp>(ctx, rw, value, to)
    }
}

/// `transmute` between same-size scalars: `ptrtoint` / `inttoptr` when one side is a pointer.
fn reinterpret(ctx: &mut Context, rw: &mut Rewrite, value: Value, to: TypeHandle) -> Value {
    use pliron::r#type::Typed;
    let from_ptr = address_space(ctx, value.get_type(ctx)).is_some();
    let to_ptr = address_space(ctx, to).is_some();
    match (from_ptr, to_ptr) {
        (true, true) => ptr_to_ptr(ctx, rw, value, to),
        (true, false) => make::<PtrToIntOp>(ctx, rw, value, to),
        (false, true) => make::<IntToPtrOp>(ctx, rw, value, to),
        (false, false) => make::<BitcastOp>(ctx, rw, value, to),
    }
}
