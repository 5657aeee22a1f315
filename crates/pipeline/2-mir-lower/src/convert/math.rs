//! `mir.math`, and `mir.rem` on floats, as what the GPU computes them with:
//!
//! - an LLVM intrinsic of the same name, overloaded on the operand type (`llvm.sqrt.f32`,
//!   `llvm.ctpop.i32`, `llvm.umin.i64`), where NVPTX makes it exact PTX instructions
//!   (`sqrt.rn`, `cvt.rmi`, `fma.rn`, `min`, ...) or integer code. `ctlz`, `cttz` and `abs`
//!   take an extra `i1 false` (zero input and the minimum are defined, as in Rust). Every Rust
//!   integer width (8 to 128 bits) is legal for these intrinsics except `bswap` on one byte,
//!   which is the identity;
//! - a call of NVIDIA's libdevice (`__nv_sinf`, `__nv_pow`, ...) for the functions no PTX
//!   instruction computes exactly: the same code as CUDA C++'s `sinf`/`pow` without fast-math,
//!   linked in after export (see `llvm_to_ptx::libdevice`). The functions called are declared in
//!   the module first, by [declare_libdevice_functions];
//! - `gamma_sign`, from comparisons.

use std::collections::HashSet;

use dialect_mir::ops::{AlgebraicRemOp, FuncOp, MathFn, MathOp, RemOp};
use pliron::{
    builtin::{
        attributes::{FPDoubleAttr, FPSingleAttr},
        op_interfaces::{
            CallOpCallable, OneRegionInterface, SingleBlockRegionInterface, SymbolOpInterface,
        },
        ops::ModuleOp,
        types::FP32Type,
    },
    context::Context,
    identifier::Identifier,
    linked_list::ContainsLinkedList,
    op::Op,
    operation::Operation,
    r#type::{TypeHandle, Typed},
    value::Value,
};
use pliron_llvm::{
    attributes::{FCmpPredicateAttr, FastmathFlagsAttr, ICmpPredicateAttr},
    op_interfaces::{BinArithOp, CastOpInterface, FastMathFlags, FloatBinArithOpWithFastMathFlags},
    ops::{
        AndOp, BitcastOp, CallOp, ConstantOp, FCmpOp, FMulOp, FPExtOp, FPTruncOp,
        FuncOp as LlvmFuncOp, ICmpOp, OrOp, SelectOp,
    },
};

use nvptx_attrs::LIBDEVICE_PREFIX;

use super::Rewrite;
use crate::{
    error::{LoweringError, OpError},
    types::{float_bits, function_type, int_type, int_width},
};

/// How a [MathFn] is computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lowering {
    /// The LLVM intrinsic `llvm.<name>.<type>`.
    Intrinsic,
    /// libdevice's `__nv_<name>` (`f64`) or `__nv_<name>f` (`f32`).
    Libdevice,
    /// Comparisons and a select (`gamma_sign`).
    GammaSign,
}

/// How `function` is computed. The intrinsics are those NVPTX lowers to instructions that
/// round exactly as Rust requires; every transcendental goes to libdevice, whose results are
/// CUDA's (within its documented ulp bounds), as does `fmod`, which NVPTX would expand as
/// `a - trunc(a / b) * b`, inexact for large quotients.
pub fn lowering(function: MathFn) -> Lowering {
    use MathFn::*;
    match function {
        Sqrt | Fabs | Floor | Ceil | Trunc | Round | Rint | Fma | Minnum | Maxnum | Minimum
        | Maximum | Copysign | Ctpop | Ctlz | Cttz | Bswap | Bitreverse | SaddSat | UaddSat
        | SsubSat | UsubSat | Fshl | Fshr | Smin | Smax | Umin | Umax | Abs => Lowering::Intrinsic,
        Fmod | Fdim | Powi | Pow | Exp | Exp2 | Expm1 | Log | Log2 | Log10 | Log1p | Cbrt
        | Hypot | Sin | Cos | Tan | Asin | Acos | Atan | Atan2 | Sinh | Cosh | Tanh | Asinh
        | Acosh | Tgamma | Lgamma | Erf | Erfc => Lowering::Libdevice,
        GammaSign => Lowering::GammaSign,
    }
}

/// The libdevice function computing `function` on floats of `bits` bits (`__nv_sinf`,
/// `__nv_sin`).
pub fn libdevice_name(function: MathFn, bits: u32) -> Result<String, OpError> {
    match bits {
        // libdevice has no `f16` functions: `f16` is computed in `f32` (see [libdevice_call]).
        16 | 32 => Ok(format!("{LIBDEVICE_PREFIX}{}f", function.name())),
        64 => Ok(format!("{LIBDEVICE_PREFIX}{}", function.name())),
        _ => Err(OpError::Unsupported(format!(
            "`{function}` on a {bits}-bit float (the GPU's math library has it for f32 and f64)"
        ))),
    }
}

/// `mir.math f(args)` -> `call T @llvm.f.<suffix>(args[, i1 false])`, `call T @__nv_f(args)`,
/// or the `gamma_sign` sequence.
pub fn math(op: &MathOp, ctx: &mut Context, rw: &mut Rewrite) -> Result<(), OpError> {
    let function = op.function(ctx);
    let ty = rw.result_mir_type(ctx, 0);
    let args = rw.operands(ctx);
    let wide = int_width(ctx, ty) == Some(128);
    let result = match lowering(function) {
        // NVPTX's own expansion of 128-bit funnel shifts goes wrong (see `wide_shift`).
        Lowering::Intrinsic if wide && matches!(function, MathFn::Fshl | MathFn::Fshr) => {
            let [a, b, s] = args[..] else {
                return Err(OpError::Malformed(format!(
                    "mir.math {function} takes three operands"
                )));
            };
            super::wide_shift::funnel_i128(ctx, rw, function == MathFn::Fshl, a, b, s)
        }
        Lowering::Intrinsic => intrinsic(ctx, rw, function, ty, args)?,
        Lowering::Libdevice => libdevice_call(ctx, rw, function, ty, args)?,
        Lowering::GammaSign => gamma_sign(ctx, rw, ty, args[0])?,
    };
    rw.replace(ctx, vec![result]);
    Ok(())
}

/// `a % b` on floats: libdevice's exact `fmod`.
pub fn float_rem(
    ctx: &mut Context,
    rw: &mut Rewrite,
    lhs: Value,
    rhs: Value,
) -> Result<Value, OpError> {
    let ty = rw.result_mir_type(ctx, 0);
    libdevice_call(ctx, rw, MathFn::Fmod, ty, vec![lhs, rhs])
}

fn intrinsic(
    ctx: &mut Context,
    rw: &mut Rewrite,
    function: MathFn,
    ty: TypeHandle,
    mut args: Vec<Value>,
) -> Result<Value, OpError> {
    let suffix = match (float_bits(ctx, ty), int_width(ctx, ty)) {
        (Some(bits), _) => format!("f{bits}"),
        (None, Some(width)) => format!("i{width}"),
        (None, None) => {
            return Err(OpError::Malformed(format!(
                "mir.math {function} on a non-scalar"
            )));
        }
    };
    let llvm_ty = args[0].get_type(ctx);
    if function == MathFn::Bswap && suffix == "i8" {
        let op = BitcastOp::new(ctx, args[0], llvm_ty);
        return Ok(rw.value(ctx, op));
    }
    if matches!(function, MathFn::Ctlz | MathFn::Cttz | MathFn::Abs) {
        args.push(rw.const_int(ctx, 1, 0));
    }
    let name = format!("llvm.{}.{suffix}", function.name().replace('_', "."));
    Ok(rw.intrinsic(ctx, &name, llvm_ty, args, false))
}

fn libdevice_call(
    ctx: &mut Context,
    rw: &mut Rewrite,
    function: MathFn,
    ty: TypeHandle,
    args: Vec<Value>,
) -> Result<Value, OpError> {
    let bits = float_bits(ctx, ty).unwrap_or(0);
    let name = libdevice_name(function, bits)?;
    let callee = Identifier::try_from(name.as_str())
        .map_err(|_| OpError::Malformed(format!("`{name}` is not a symbol name")))?;
    // An `f16` function is its `f32` one between conversions: exact for `fmod` (whose result
    // is representable), within libdevice's bounds plus one `f16` rounding for the others.
    let half = bits == 16;
    let single: TypeHandle = FP32Type::get(ctx).into();
    let args: Vec<Value> = args
        .into_iter()
        .map(|arg| {
            if half && float_bits(ctx, arg.get_type(ctx)) == Some(16) {
                let op = FPExtOp::new(ctx, arg, single);
                op.set_fast_math_flags(ctx, FastmathFlagsAttr::default());
                rw.value(ctx, op)
            } else {
                arg
            }
        })
        .collect();
    let arg_types: Vec<TypeHandle> = args.iter().map(|a| a.get_type(ctx)).collect();
    let result_ty = args[0].get_type(ctx);
    let func_ty = function_type(ctx, &arg_types, &[result_ty])?;
    let call = CallOp::new(ctx, CallOpCallable::Direct(callee), func_ty, args);
    let result = rw.value(ctx, call);
    if half {
        let half_ty = rw.operand(ctx, 0).get_type(ctx);
        let op = FPTruncOp::new(ctx, result, half_ty);
        op.set_fast_math_flags(ctx, FastmathFlagsAttr::default());
        return Ok(rw.value(ctx, op));
    }
    Ok(result)
}

/// `-1.0` for `-0` and for negative non-integers whose floor is odd (where gamma is
/// negative), `1.0` otherwise (see [MathFn::GammaSign]).
fn gamma_sign(
    ctx: &mut Context,
    rw: &mut Rewrite,
    ty: TypeHandle,
    x: Value,
) -> Result<Value, OpError> {
    let bits = float_bits(ctx, ty).unwrap_or(0);
    let constant = |ctx: &mut Context, rw: &mut Rewrite, v: f64| -> Result<Value, OpError> {
        let op = match bits {
            32 => ConstantOp::new(ctx, Box::new(FPSingleAttr::from(v as f32))),
            64 => ConstantOp::new(ctx, Box::new(FPDoubleAttr::from(v))),
            _ => {
                return Err(OpError::Unsupported(format!(
                    "`gamma_sign` on a {bits}-bit float"
                )));
            }
        };
        Ok(rw.value(ctx, op))
    };
    let fcmp = |ctx: &mut Context, rw: &mut Rewrite, pred, a, b| {
        let op = FCmpOp::new(ctx, pred, a, b);
        op.set_fast_math_flags(ctx, FastmathFlagsAttr::default());
        rw.value(ctx, op)
    };
    let and = |ctx: &mut Context, rw: &mut Rewrite, a, b| {
        let op = AndOp::new(ctx, a, b);
        rw.value(ctx, op)
    };
    let float_ty = x.get_type(ctx);
    let floor_name = format!("llvm.floor.f{bits}");
    let (zero, half) = (constant(ctx, rw, 0.0)?, constant(ctx, rw, 0.5)?);
    let (one, minus_one) = (constant(ctx, rw, 1.0)?, constant(ctx, rw, -1.0)?);

    // A negative non-integer with an odd floor (exact: such floats are far below 2^53).
    let floor = rw.intrinsic(ctx, &floor_name, float_ty, vec![x], false);
    let op = FMulOp::new_with_fast_math_flags(ctx, floor, half, FastmathFlagsAttr::default());
    let half_floor = rw.value(ctx, op);
    let floor_of_half = rw.intrinsic(ctx, &floor_name, float_ty, vec![half_floor], false);
    let odd = fcmp(ctx, rw, FCmpPredicateAttr::UNE, floor_of_half, half_floor);
    let negative = fcmp(ctx, rw, FCmpPredicateAttr::OLT, x, zero);
    let fractional = fcmp(ctx, rw, FCmpPredicateAttr::UNE, floor, x);
    let negative_fractional = and(ctx, rw, negative, fractional);
    let odd_negative = and(ctx, rw, negative_fractional, odd);

    // -0: zero with the sign bit set.
    let int_ty = int_type(ctx, bits);
    let op = BitcastOp::new(ctx, x, int_ty);
    let x_bits = rw.value(ctx, op);
    let int_zero = rw.const_int(ctx, bits, 0);
    let op = ICmpOp::new(ctx, ICmpPredicateAttr::SLT, x_bits, int_zero);
    let sign_bit = rw.value(ctx, op);
    let is_zero = fcmp(ctx, rw, FCmpPredicateAttr::OEQ, x, zero);
    let negative_zero = and(ctx, rw, is_zero, sign_bit);

    let op = OrOp::new(ctx, negative_zero, odd_negative);
    let is_negative = rw.value(ctx, op);
    let op = SelectOp::new(ctx, is_negative, minus_one, one);
    Ok(rw.value(ctx, op))
}

/// Declares, as external `llvm.func`s, the libdevice functions that the `mir.math` and float
/// `mir.rem` ops of `funcs` will call.
pub fn declare_libdevice_functions(
    ctx: &mut Context,
    module: ModuleOp,
    funcs: &[FuncOp],
) -> Result<(), LoweringError> {
    let mut declared = HashSet::new();
    for func in funcs {
        let ops: Vec<_> = func
            .get_region(ctx)
            .deref(ctx)
            .iter(ctx)
            .flat_map(|block| block.deref(ctx).iter(ctx).collect::<Vec<_>>())
            .collect();
        for op in ops {
            let function = if let Some(math) = Operation::get_op::<MathOp>(op, ctx) {
                math.function(ctx)
            } else if Operation::get_op::<RemOp>(op, ctx).is_some()
                || Operation::get_op::<AlgebraicRemOp>(op, ctx).is_some()
            {
                MathFn::Fmod
            } else {
                continue;
            };
            if lowering(function) != Lowering::Libdevice {
                continue;
            }
            let fail = |ctx: &Context, source| LoweringError::Op {
                function: func.get_symbol_name(ctx).to_string(),
                op: pliron::printable::Printable::disp(&*op.deref(ctx), ctx).to_string(),
                source,
            };
            let operand_types: Vec<TypeHandle> =
                op.deref(ctx).operands().map(|v| v.get_type(ctx)).collect();
            let Some(bits) = float_bits(ctx, operand_types[0]) else {
                continue; // an integer `mir.rem`
            };
            let name = libdevice_name(function, bits).map_err(|e| fail(ctx, e))?;
            if !declared.insert(name.clone()) {
                continue;
            }
            // `f16` operands are computed in `f32` (see `libdevice_call`).
            let single: TypeHandle = FP32Type::get(ctx).into();
            let operand_types: Vec<TypeHandle> = operand_types
                .into_iter()
                .map(|ty| {
                    if float_bits(ctx, ty) == Some(16) {
                        single
                    } else {
                        ty
                    }
                })
                .collect();
            let func_ty = function_type(ctx, &operand_types, &operand_types[..1])
                .map_err(|e| fail(ctx, e))?;
            let symbol = Identifier::try_from(name.as_str()).map_err(|_| {
                fail(
                    ctx,
                    OpError::Malformed(format!("`{name}` is not a symbol name")),
                )
            })?;
            let decl = LlvmFuncOp::new(ctx, symbol, func_ty);
            module.append_operation(ctx, decl.get_operation(), 0);
        }
    }
    Ok(())
}
