//! 128-bit shifts and funnel shifts by a variable amount, written as operations on the two
//! 64-bit halves.
//!
//! NVPTX's lowering of a variable `shl`/`lshr`/`ashr` on `i128` (`SHL_PARTS` and friends)
//! computes the bits that cross between the halves as `lo >> (64 - s)`, an out-of-range shift
//! when `s` is 0 that it relies on PTX to clamp; LLVM's own folding treats that shift as
//! undefined and, when it knows enough about `s`, folds it into a wrong value (seen on the H200:
//! `shl i128 C, s` with `s` known to be 0 or 64 gave `hi | lo` instead of `hi` for `s = 0`, in
//! Rustlantis seed 232 and a reduced kernel, at `llc -O0` and `-O2` alike). Here every shift
//! amount stays below 64 (`(lo >> 1) >> (63 - s)` carries the crossing bits), so no
//! optimisation can choose a different meaning.

use pliron::{builtin::types::IntegerType, context::Context, r#type::Typed, value::Value};
use pliron_llvm::{
    attributes::ICmpPredicateAttr,
    op_interfaces::{BinArithOp, CastOpInterface, CastOpWithNNegInterface},
    ops::{AShrOp, AndOp, ICmpOp, LShrOp, OrOp, SelectOp, ShlOp, SubOp, TruncOp, ZExtOp},
};

use super::Rewrite;
use crate::types::int_type;

/// Which shift.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shift {
    Left,
    /// Logical (unsigned) right shift.
    RightLogical,
    /// Arithmetic (signed) right shift.
    RightArithmetic,
}

/// `x << s`, `x >> s` of the `i128` `x` by the `i128` amount `s` (taken modulo 128: LLVM leaves
/// larger amounts undefined, and Rust masks them before).
pub fn shift_i128(ctx: &mut Context, rw: &mut Rewrite, shift: Shift, x: Value, s: Value) -> Value {
    let (lo, hi) = halves(ctx, rw, x);
    let amount = amount_word(ctx, rw, s);
    let amount = and_const(ctx, rw, amount, 127);
    let (lo, hi) = shift_halves(ctx, rw, shift, lo, hi, amount);
    join(ctx, rw, lo, hi)
}

/// `fshl(a, b, s)` / `fshr(a, b, s)` on `i128` (a rotation when `a` and `b` are the same):
/// the high 128 bits of `a:b << s`, or the low 128 bits of `a:b >> s`, `s` modulo 128.
pub fn funnel_i128(
    ctx: &mut Context,
    rw: &mut Rewrite,
    left: bool,
    a: Value,
    b: Value,
    s: Value,
) -> Value {
    let amount = amount_word(ctx, rw, s);
    let amount = and_const(ctx, rw, amount, 127);
    let c127 = rw.const_int(ctx, 64, 127);
    let rest = rw.int_binary::<SubOp>(ctx, c127, amount);
    let (a_lo, a_hi) = halves(ctx, rw, a);
    let (b_lo, b_hi) = halves(ctx, rw, b);
    let one = rw.const_int(ctx, 64, 1);
    // fshl: (a << s) | ((b >> 1) >> (127 - s)); fshr: ((a << 1) << (127 - s)) | (b >> s).
    let (x_lo, x_hi, y_lo, y_hi) = if left {
        let (a_lo, a_hi) = shift_halves(ctx, rw, Shift::Left, a_lo, a_hi, amount);
        let (b_lo, b_hi) = shift_halves(ctx, rw, Shift::RightLogical, b_lo, b_hi, one);
        let (b_lo, b_hi) = shift_halves(ctx, rw, Shift::RightLogical, b_lo, b_hi, rest);
        (a_lo, a_hi, b_lo, b_hi)
    } else {
        let (a_lo, a_hi) = shift_halves(ctx, rw, Shift::Left, a_lo, a_hi, one);
        let (a_lo, a_hi) = shift_halves(ctx, rw, Shift::Left, a_lo, a_hi, rest);
        let (b_lo, b_hi) = shift_halves(ctx, rw, Shift::RightLogical, b_lo, b_hi, amount);
        (a_lo, a_hi, b_lo, b_hi)
    };
    let lo = binary::<OrOp>(ctx, rw, x_lo, y_lo);
    let hi = binary::<OrOp>(ctx, rw, x_hi, y_hi);
    join(ctx, rw, lo, hi)
}

/// The halves of `lo:hi` shifted by `amount` (an `i64` below 128).
fn shift_halves(
    ctx: &mut Context,
    rw: &mut Rewrite,
    shift: Shift,
    lo: Value,
    hi: Value,
    amount: Value,
) -> (Value, Value) {
    let s = and_const(ctx, rw, amount, 63);
    let c63 = rw.const_int(ctx, 64, 63);
    let back = rw.int_binary::<SubOp>(ctx, c63, s);
    let c64 = rw.const_int(ctx, 64, 64);
    let far = ICmpOp::new(ctx, ICmpPredicateAttr::UGE, amount, c64);
    let far = rw.value(ctx, far);
    let one = rw.const_int(ctx, 64, 1);
    let zero = rw.const_int(ctx, 64, 0);
    match shift {
        Shift::Left => {
            let lo_s = rw.int_binary::<ShlOp>(ctx, lo, s);
            let hi_s = rw.int_binary::<ShlOp>(ctx, hi, s);
            // The bits of `lo` that cross into `hi`: `lo >> (64 - s)`, 0 when s = 0.
            let cross = binary::<LShrOp>(ctx, rw, lo, one);
            let cross = binary::<LShrOp>(ctx, rw, cross, back);
            let hi_near = binary::<OrOp>(ctx, rw, hi_s, cross);
            (
                select(ctx, rw, far, zero, lo_s),
                select(ctx, rw, far, lo_s, hi_near),
            )
        }
        Shift::RightLogical | Shift::RightArithmetic => {
            let hi_s = if shift == Shift::RightLogical {
                binary::<LShrOp>(ctx, rw, hi, s)
            } else {
                binary::<AShrOp>(ctx, rw, hi, s)
            };
            let lo_s = binary::<LShrOp>(ctx, rw, lo, s);
            let cross = rw.int_binary::<ShlOp>(ctx, hi, one);
            let cross = rw.int_binary::<ShlOp>(ctx, cross, back);
            let lo_near = binary::<OrOp>(ctx, rw, lo_s, cross);
            let fill = if shift == Shift::RightLogical {
                zero
            } else {
                binary::<AShrOp>(ctx, rw, hi, c63)
            };
            (
                select(ctx, rw, far, hi_s, lo_near),
                select(ctx, rw, far, fill, hi_s),
            )
        }
    }
}

/// The low and high 64 bits of the `i128` `x`.
fn halves(ctx: &mut Context, rw: &mut Rewrite, x: Value) -> (Value, Value) {
    let lo = low_word(ctx, rw, x);
    let c64 = rw.const_int(ctx, 128, 64);
    let high = binary::<LShrOp>(ctx, rw, x, c64);
    let hi = low_word(ctx, rw, high);
    (lo, hi)
}

/// The `i128` `hi:lo`.
fn join(ctx: &mut Context, rw: &mut Rewrite, lo: Value, hi: Value) -> Value {
    let i128_ty = int_type(ctx, 128);
    let lo = ZExtOp::new_with_nneg(ctx, lo, i128_ty, false);
    let lo = rw.value(ctx, lo);
    let hi = ZExtOp::new_with_nneg(ctx, hi, i128_ty, false);
    let hi = rw.value(ctx, hi);
    let c64 = rw.const_int(ctx, 128, 64);
    let hi = rw.int_binary::<ShlOp>(ctx, hi, c64);
    binary::<OrOp>(ctx, rw, hi, lo)
}

/// A shift amount of any integer width as an `i64` (its low 64 bits, or zero-extended).
fn amount_word(ctx: &mut Context, rw: &mut Rewrite, s: Value) -> Value {
    let width = s
        .get_type(ctx)
        .deref(ctx)
        .downcast_ref::<IntegerType>()
        .map_or(64, |int| int.width());
    let i64_ty = int_type(ctx, 64);
    match width.cmp(&64) {
        std::cmp::Ordering::Equal => s,
        std::cmp::Ordering::Greater => low_word(ctx, rw, s),
        std::cmp::Ordering::Less => {
            let op = ZExtOp::new_with_nneg(ctx, s, i64_ty, false);
            rw.value(ctx, op)
        }
    }
}

/// The low 64 bits of the `i128` `x`.
fn low_word(ctx: &mut Context, rw: &mut Rewrite, x: Value) -> Value {
    let i64_ty = int_type(ctx, 64);
    let op = TruncOp::new(ctx, x, i64_ty);
    rw.value(ctx, op)
}

fn and_const(ctx: &mut Context, rw: &mut Rewrite, x: Value, mask: u128) -> Value {
    let mask = rw.const_int(ctx, 64, mask);
    binary::<AndOp>(ctx, rw, x, mask)
}

fn select(ctx: &mut Context, rw: &mut Rewrite, cond: Value, a: Value, b: Value) -> Value {
    let op = SelectOp::new(ctx, cond, a, b);
    rw.value(ctx, op)
}

fn binary<O: BinArithOp>(ctx: &mut Context, rw: &mut Rewrite, lhs: Value, rhs: Value) -> Value {
    let op = O::new(ctx, lhs, rhs);
    rw.value(ctx, op)
}
