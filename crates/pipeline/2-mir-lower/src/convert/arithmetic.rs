//! Arithmetic, bitwise, checked and comparison ops.
//!
//! Signedness comes from the `mir` type: the result type for arithmetic (`div`, `rem`, `shr`),
//! the operands' former type for comparisons. Integer ops carry no `nsw`/`nuw`: MIR's
//! arithmetic wraps (overflow checks are separate asserts). Float comparisons are ordered
//! except `!=`, which is true on NaN as in Rust.

use pliron::{
    context::Context,
    op::Op,
    r#type::{TypeHandle, Typed},
    value::Value,
};
use pliron_llvm::{
    attributes::{FCmpPredicateAttr, FastmathFlags, FastmathFlagsAttr, ICmpPredicateAttr},
    op_interfaces::{FastMathFlags, FloatBinArithOpWithFastMathFlags},
    ops::{
        AShrOp, AddOp, AndOp, ExtractValueOp, FAddOp, FCmpOp, FDivOp, FMulOp, FNegOp, FRemOp,
        FSubOp, ICmpOp, LShrOp, MulOp, OrOp, SDivOp, SRemOp, SelectOp, ShlOp, SubOp, UDivOp,
        URemOp, XorOp,
    },
    types::{StructLayout, StructType},
};

use super::Rewrite;
use crate::{
    error::OpError,
    types::{int_type, int_width, is_float, is_signed},
};

/// The binary ops whose operands and result share one type.
#[derive(Clone, Copy, Debug)]
pub enum Binary {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    And,
    Or,
    Xor,
    Shl,
    Shr,
}

/// `lhs <op> rhs`, on integers (signedness from the result type) or floats.
pub fn binary(
    _op: &dyn Op,
    ctx: &mut Context,
    rw: &mut Rewrite,
    kind: Binary,
) -> Result<(), OpError> {
    let ty = rw.result_mir_type(ctx, 0);
    let (lhs, rhs) = (rw.operand(ctx, 0), rw.operand(ctx, 1));
    let result = if is_float(ctx, ty) {
        float_binary(ctx, rw, kind, lhs, rhs)?
    } else {
        int_binary(ctx, rw, kind, is_signed(ctx, ty), lhs, rhs)
    };
    rw.replace(ctx, vec![result]);
    Ok(())
}

/// The fast-math flags of Rust's `algebraic_*` float methods, as rustc's LLVM backend sets
/// them: reassociation, contraction (`fma`), a reciprocal for a division, signed zeros
/// ignored. NaN and infinities keep their IEEE meaning (no `nnan`/`ninf`: those would make a
/// NaN operand undefined behaviour, which the safe methods do not allow).
pub fn algebraic_flags() -> FastmathFlagsAttr {
    FastmathFlagsAttr(
        FastmathFlags::REASSOC | FastmathFlags::NSZ | FastmathFlags::ARCP | FastmathFlags::CONTRACT,
    )
}

/// `lhs <op> rhs` of an `algebraic_*` method: a float op with [algebraic_flags]. The
/// remainder keeps the exact computation of `mir.rem` (LLVM's `frem` is inexact on NVPTX, and
/// the flags allow but do not require a different result).
pub fn algebraic(
    _op: &dyn Op,
    ctx: &mut Context,
    rw: &mut Rewrite,
    kind: Binary,
) -> Result<(), OpError> {
    let (lhs, rhs) = (rw.operand(ctx, 0), rw.operand(ctx, 1));
    let result = float_op(ctx, rw, kind, lhs, rhs, algebraic_flags())?;
    rw.replace(ctx, vec![result]);
    Ok(())
}

/// A float binary op. No fast-math flags (Rust's float semantics are IEEE), except `contract`
/// on additions, subtractions and multiplications in a function that opted into fused
/// multiply-adds ([super::contracts]): LLVM may then fuse `a * b + c` into one `fma`.
fn float_binary(
    ctx: &mut Context,
    rw: &mut Rewrite,
    kind: Binary,
    lhs: Value,
    rhs: Value,
) -> Result<Value, OpError> {
    float_op(ctx, rw, kind, lhs, rhs, FastmathFlagsAttr::default())
}

/// A float binary op with the fast-math flags `flags`.
fn float_op(
    ctx: &mut Context,
    rw: &mut Rewrite,
    kind: Binary,
    lhs: Value,
    rhs: Value,
    flags: FastmathFlagsAttr,
) -> Result<Value, OpError> {
    fn make<O: FloatBinArithOpWithFastMathFlags>(
        ctx: &mut Context,
        rw: &mut Rewrite,
        lhs: Value,
        rhs: Value,
        flags: FastmathFlagsAttr,
    ) -> Value {
        let op = O::new_with_fast_math_flags(ctx, lhs, rhs, flags);
        rw.value(ctx, op)
    }
    let contract = if super::contracts(ctx, rw) {
        FastmathFlags::CONTRACT
    } else {
        FastmathFlags::empty()
    };
    let with_contract = FastmathFlagsAttr(flags.0 | contract);
    Ok(match kind {
        Binary::Add => make::<FAddOp>(ctx, rw, lhs, rhs, with_contract),
        Binary::Sub => make::<FSubOp>(ctx, rw, lhs, rhs, with_contract),
        Binary::Mul => make::<FMulOp>(ctx, rw, lhs, rhs, with_contract),
        Binary::Div => make::<FDivOp>(ctx, rw, lhs, rhs, flags),
        // LLVM's `frem` becomes an inexact `a - trunc(a / b) * b` on NVPTX; on the host it
        // is the C library's exact `fmod`, as libdevice's is.
        Binary::Rem if rw.for_cpu() => make::<FRemOp>(ctx, rw, lhs, rhs, flags),
        Binary::Rem => super::math::float_rem(ctx, rw, lhs, rhs)?,
        other => {
            return Err(OpError::Malformed(format!("{other:?} on floats")));
        }
    })
}

/// An integer binary op; `signed` picks `sdiv`/`srem`/`ashr` over their unsigned forms.
fn int_binary(
    ctx: &mut Context,
    rw: &mut Rewrite,
    kind: Binary,
    signed: bool,
    lhs: Value,
    rhs: Value,
) -> Value {
    use pliron_llvm::op_interfaces::BinArithOp;
    fn plain<O: BinArithOp>(ctx: &mut Context, rw: &mut Rewrite, lhs: Value, rhs: Value) -> Value {
        let op = O::new(ctx, lhs, rhs);
        rw.value(ctx, op)
    }
    let wide = lhs.get_type(ctx) == int_type(ctx, 128);
    match (kind, signed) {
        (Binary::Shl, _) if wide => {
            super::wide_shift::shift_i128(ctx, rw, super::wide_shift::Shift::Left, lhs, rhs)
        }
        (Binary::Shr, signed) if wide => {
            let shift = if signed {
                super::wide_shift::Shift::RightArithmetic
            } else {
                super::wide_shift::Shift::RightLogical
            };
            super::wide_shift::shift_i128(ctx, rw, shift, lhs, rhs)
        }
        (Binary::Add, _) => rw.int_binary::<AddOp>(ctx, lhs, rhs),
        (Binary::Sub, _) => rw.int_binary::<SubOp>(ctx, lhs, rhs),
        (Binary::Mul, _) => rw.int_binary::<MulOp>(ctx, lhs, rhs),
        (Binary::Shl, _) => rw.int_binary::<ShlOp>(ctx, lhs, rhs),
        (Binary::Div, true) => plain::<SDivOp>(ctx, rw, lhs, rhs),
        (Binary::Div, false) => plain::<UDivOp>(ctx, rw, lhs, rhs),
        (Binary::Rem, true) => plain::<SRemOp>(ctx, rw, lhs, rhs),
        (Binary::Rem, false) => plain::<URemOp>(ctx, rw, lhs, rhs),
        (Binary::Shr, true) => plain::<AShrOp>(ctx, rw, lhs, rhs),
        (Binary::Shr, false) => plain::<LShrOp>(ctx, rw, lhs, rhs),
        (Binary::And, _) => plain::<AndOp>(ctx, rw, lhs, rhs),
        (Binary::Or, _) => plain::<OrOp>(ctx, rw, lhs, rhs),
        (Binary::Xor, _) => plain::<XorOp>(ctx, rw, lhs, rhs),
    }
}

/// `-x`: `fneg` for floats, `0 - x` (wrapping) for integers.
pub fn neg(_op: &dyn Op, ctx: &mut Context, rw: &mut Rewrite) -> Result<(), OpError> {
    let ty = rw.result_mir_type(ctx, 0);
    let value = rw.operand(ctx, 0);
    let result = if is_float(ctx, ty) {
        let op = FNegOp::new_with_fast_math_flags(ctx, value, FastmathFlagsAttr::default());
        rw.value(ctx, op)
    } else {
        let width = width_of(ctx, ty)?;
        let zero = rw.const_int(ctx, width, 0);
        rw.int_binary::<SubOp>(ctx, zero, value)
    };
    rw.replace(ctx, vec![result]);
    Ok(())
}

/// `!x`: `xor x, -1` (all ones; for a `bool`, `xor x, true`).
pub fn not(_op: &dyn Op, ctx: &mut Context, rw: &mut Rewrite) -> Result<(), OpError> {
    let ty = rw.result_mir_type(ctx, 0);
    let width = width_of(ctx, ty)?;
    let value = rw.operand(ctx, 0);
    let ones = rw.const_int(ctx, width, u128::MAX);
    let op = <XorOp as pliron_llvm::op_interfaces::BinArithOp>::new(ctx, value, ones);
    let result = rw.value(ctx, op);
    rw.replace(ctx, vec![result]);
    Ok(())
}

/// The width of integer type `ty`.
fn width_of(ctx: &Context, ty: TypeHandle) -> Result<u32, OpError> {
    int_width(ctx, ty).ok_or_else(|| OpError::Malformed("an integer op on a non-integer".into()))
}

/// The overflow-checked ops.
#[derive(Clone, Copy, Debug)]
pub enum Overflow {
    Add,
    Sub,
    Mul,
}

/// `llvm.{s,u}{add,sub,mul}.with.overflow.iN`, then its two fields.
pub fn checked(
    _op: &dyn Op,
    ctx: &mut Context,
    rw: &mut Rewrite,
    kind: Overflow,
) -> Result<(), OpError> {
    let ty = rw.result_mir_type(ctx, 0);
    let width = width_of(ctx, ty)?;
    let sign = if is_signed(ctx, ty) { "s" } else { "u" };
    let name = match kind {
        Overflow::Add => "add",
        Overflow::Sub => "sub",
        Overflow::Mul => "mul",
    };
    let int_ty = int_type(ctx, width);
    let pair = StructType::get_unnamed(
        ctx,
        (vec![int_ty, int_type(ctx, 1)], StructLayout::Unpacked),
    )
    .into();
    let args = rw.operands(ctx);
    let both = rw.intrinsic(
        ctx,
        &format!("llvm.{sign}{name}.with.overflow.i{width}"),
        pair,
        args,
        false,
    );
    let mut fields = vec![];
    for idx in 0..2 {
        let extract = ExtractValueOp::new(ctx, both, vec![idx])
            .map_err(|err| OpError::Malformed(err.to_string()))?;
        fields.push(rw.value(ctx, extract));
    }
    rw.replace(ctx, fields);
    Ok(())
}

/// The two-way comparisons.
#[derive(Clone, Copy, Debug)]
pub enum Compare {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

/// `lhs <cmp> rhs` -> `i1`.
pub fn compare(
    _op: &dyn Op,
    ctx: &mut Context,
    rw: &mut Rewrite,
    kind: Compare,
) -> Result<(), OpError> {
    let ty = rw.operand_mir_type(ctx, 0);
    let (lhs, rhs) = (rw.operand(ctx, 0), rw.operand(ctx, 1));
    let result = compare_values(ctx, rw, kind, ty, lhs, rhs);
    rw.replace(ctx, vec![result]);
    Ok(())
}

/// Compare two values whose `mir` type is `ty`.
fn compare_values(
    ctx: &mut Context,
    rw: &mut Rewrite,
    kind: Compare,
    ty: TypeHandle,
    lhs: Value,
    rhs: Value,
) -> Value {
    if is_float(ctx, ty) {
        let pred = match kind {
            Compare::Eq => FCmpPredicateAttr::OEQ,
            Compare::Ne => FCmpPredicateAttr::UNE,
            Compare::Lt => FCmpPredicateAttr::OLT,
            Compare::Le => FCmpPredicateAttr::OLE,
            Compare::Gt => FCmpPredicateAttr::OGT,
            Compare::Ge => FCmpPredicateAttr::OGE,
        };
        let op = FCmpOp::new(ctx, pred, lhs, rhs);
        op.set_fast_math_flags(ctx, FastmathFlagsAttr::default());
        return rw.value(ctx, op);
    }
    let signed = is_signed(ctx, ty);
    let pred = match (kind, signed) {
        (Compare::Eq, _) => ICmpPredicateAttr::EQ,
        (Compare::Ne, _) => ICmpPredicateAttr::NE,
        (Compare::Lt, true) => ICmpPredicateAttr::SLT,
        (Compare::Le, true) => ICmpPredicateAttr::SLE,
        (Compare::Gt, true) => ICmpPredicateAttr::SGT,
        (Compare::Ge, true) => ICmpPredicateAttr::SGE,
        (Compare::Lt, false) => ICmpPredicateAttr::ULT,
        (Compare::Le, false) => ICmpPredicateAttr::ULE,
        (Compare::Gt, false) => ICmpPredicateAttr::UGT,
        (Compare::Ge, false) => ICmpPredicateAttr::UGE,
    };
    let op = ICmpOp::new(ctx, pred, lhs, rhs);
    rw.value(ctx, op)
}

/// `mir.cmp` (Rust's `Ord::cmp` as `-1`/`0`/`1` in an `i8`): `llvm.scmp` / `llvm.ucmp` for
/// integers and `bool`s, `select(lt, -1, select(eq, 0, 1))` for floats.
pub fn three_way(_op: &dyn Op, ctx: &mut Context, rw: &mut Rewrite) -> Result<(), OpError> {
    let ty = rw.operand_mir_type(ctx, 0);
    let (lhs, rhs) = (rw.operand(ctx, 0), rw.operand(ctx, 1));
    let i8_ty = int_type(ctx, 8);
    let result = if is_float(ctx, ty) {
        let less = compare_values(ctx, rw, Compare::Lt, ty, lhs, rhs);
        let equal = compare_values(ctx, rw, Compare::Eq, ty, lhs, rhs);
        let minus_one = rw.const_int(ctx, 8, u128::MAX);
        let zero = rw.const_int(ctx, 8, 0);
        let one = rw.const_int(ctx, 8, 1);
        let op = SelectOp::new(ctx, equal, zero, one);
        let not_less = rw.value(ctx, op);
        let op = SelectOp::new(ctx, less, minus_one, not_less);
        rw.value(ctx, op)
    } else {
        let width = lhs
            .get_type(ctx)
            .deref(ctx)
            .downcast_ref::<pliron::builtin::types::IntegerType>()
            .map(|int_ty| int_ty.width())
            .ok_or_else(|| OpError::Malformed("mir.cmp of a non-integer".into()))?;
        let sign = if is_signed(ctx, ty) { "s" } else { "u" };
        rw.intrinsic(
            ctx,
            &format!("llvm.{sign}cmp.i8.i{width}"),
            i8_ty,
            vec![lhs, rhs],
            false,
        )
    };
    rw.replace(ctx, vec![result]);
    Ok(())
}

/// `mir.select` -> `llvm.select` (the values already have their LLVM types).
pub fn select(_op: &dyn Op, ctx: &mut Context, rw: &mut Rewrite) -> Result<(), OpError> {
    let (cond, a, b) = (rw.operand(ctx, 0), rw.operand(ctx, 1), rw.operand(ctx, 2));
    let op = SelectOp::new(ctx, cond, a, b);
    let result = rw.value(ctx, op);
    rw.replace(ctx, vec![result]);
    Ok(())
}
