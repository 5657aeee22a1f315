//! The LLVM x86 intrinsics that `core::arch`'s SIMD functions call (`_mm_min_ps` calls
//! `llvm.x86.sse.min.ps` through an `extern` declaration), computed lane by lane with their
//! exact x86 semantics, so that a crate's SSE path gives on the GPU the bits it gives on the
//! CPU.
//!
//! Device code is compiled from the host's MIR, where `cfg(target_feature = "sse2")` holds:
//! crates such as `glam` take their SSE2 paths there. Most of `core::arch::x86_64` is Rust over
//! the portable `simd_*` intrinsics (`simd.rs`); [X86_INTRINSICS] covers the rest that such
//! paths reach. Any other `llvm.*` intrinsic declared by the host's code is refused with its
//! name and where it is declared.

use dialect_mir::ops::*;
use pliron::builtin::types::{FP32Type, FP64Type, IntegerType, Signedness};
use pliron::r#type::{TypeHandle, Typed};
use pliron::value::Value;
use rustc_public::mir::{BinOp, Operand, Place};

use super::body::FnTranslator;
use super::error::{TResult, unsupported};
use super::simd::Vector;

/// What an LLVM x86 intrinsic computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum X86Op {
    /// `minps`/`maxps` (`scalar`: `minss`/`maxss`, lane 0 only, the other lanes from the first
    /// operand): `a < b ? a : b` (`a > b ? a : b`), so the second operand when either is NaN
    /// or both are zeros.
    MinMax { max: bool, scalar: bool },
    /// `cmpps`/`cmpss` with a predicate (0 to 31, AVX's encoding; 0 to 7 for SSE): lanes of all
    /// ones where it holds, else zero.
    Compare { scalar: bool },
    /// `cvtps2dq` (`truncate`: `cvttps2dq`): each `f32` lane to `i32`, rounding to nearest
    /// even (truncating), with `i32::MIN` for NaN and out-of-range lanes.
    ToI32 { truncate: bool },
}

/// The LLVM x86 intrinsics with a GPU version, by symbol, sorted.
pub const X86_INTRINSICS: &[(&str, X86Op)] = {
    use X86Op::*;
    &[
        ("llvm.x86.sse.cmp.ps", Compare { scalar: false }),
        ("llvm.x86.sse.cmp.ss", Compare { scalar: true }),
        (
            "llvm.x86.sse.max.ps",
            MinMax {
                max: true,
                scalar: false,
            },
        ),
        (
            "llvm.x86.sse.max.ss",
            MinMax {
                max: true,
                scalar: true,
            },
        ),
        (
            "llvm.x86.sse.min.ps",
            MinMax {
                max: false,
                scalar: false,
            },
        ),
        (
            "llvm.x86.sse.min.ss",
            MinMax {
                max: false,
                scalar: true,
            },
        ),
        ("llvm.x86.sse2.cmp.pd", Compare { scalar: false }),
        ("llvm.x86.sse2.cmp.sd", Compare { scalar: true }),
        ("llvm.x86.sse2.cvtps2dq", ToI32 { truncate: false }),
        ("llvm.x86.sse2.cvttps2dq", ToI32 { truncate: true }),
        (
            "llvm.x86.sse2.max.pd",
            MinMax {
                max: true,
                scalar: false,
            },
        ),
        (
            "llvm.x86.sse2.max.sd",
            MinMax {
                max: true,
                scalar: true,
            },
        ),
        (
            "llvm.x86.sse2.min.pd",
            MinMax {
                max: false,
                scalar: false,
            },
        ),
        (
            "llvm.x86.sse2.min.sd",
            MinMax {
                max: false,
                scalar: true,
            },
        ),
    ]
};

/// What the LLVM x86 intrinsic `symbol` computes, if it has a GPU version.
pub fn x86_op(symbol: &str) -> Option<X86Op> {
    X86_INTRINSICS
        .binary_search_by(|(entry, _)| (*entry).cmp(symbol))
        .ok()
        .map(|found| X86_INTRINSICS[found].1)
}

/// The comparison an x86 `cmp` predicate (`imm8 & 15`; bit 4 only changes signalling) makes of
/// `a` and `b`: `(ordered test, holds when unordered)`, where the ordered test is `None` for
/// the predicates that hold or fail whatever the ordered values.
fn predicate(imm: u32) -> (Option<Test>, bool) {
    use Test::*;
    match imm & 15 {
        0 => (Some(Is(BinOp::Eq)), false),
        1 => (Some(Is(BinOp::Lt)), false),
        2 => (Some(Is(BinOp::Le)), false),
        3 => (None, true),
        4 => (Some(Not(BinOp::Eq)), true),
        5 => (Some(Not(BinOp::Lt)), true),
        6 => (Some(Not(BinOp::Le)), true),
        7 => (Some(Always), false),
        8 => (Some(Is(BinOp::Eq)), true),
        9 => (Some(Not(BinOp::Ge)), true),
        10 => (Some(Not(BinOp::Gt)), true),
        11 => (None, false),
        12 => (Some(Not(BinOp::Eq)), false),
        13 => (Some(Is(BinOp::Ge)), false),
        14 => (Some(Is(BinOp::Gt)), false),
        _ => (Some(Always), true),
    }
}

/// A test of two ordered (non-NaN) floats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Test {
    /// The comparison holds.
    Is(BinOp),
    /// The comparison does not hold.
    Not(BinOp),
    /// Always true.
    Always,
}

impl FnTranslator<'_> {
    /// A call of the `extern` function `path` that links to the LLVM intrinsic `symbol`.
    pub(crate) fn translate_llvm_intrinsic(
        &mut self,
        symbol: &str,
        path: &str,
        args: &[Operand],
        destination: &Place,
    ) -> TResult<Option<Value>> {
        let Some(op) = x86_op(symbol) else {
            unsupported!(
                "the host CPU's LLVM intrinsic `{symbol}` (declared as `{path}`): device code is \
                 compiled from the host's MIR, where `cfg(target_arch = \"x86_64\")` and the \
                 host's `target_feature`s hold, and cuda-oxide has no GPU version of this \
                 intrinsic (see docs/crates.md)"
            )
        };
        let out_ty = self.place_type(destination)?;
        let arity = |n: usize| -> TResult<()> {
            if args.len() == n {
                Ok(())
            } else {
                unsupported!("`{symbol}` with {} arguments", args.len())
            }
        };
        let scalar = match op {
            X86Op::MinMax { scalar, .. } | X86Op::Compare { scalar } => scalar,
            X86Op::ToI32 { .. } => false,
        };
        let Some(first) = args.first() else {
            unsupported!("`{symbol}` without arguments")
        };
        let a = self.vector(first)?;
        let value = match op {
            X86Op::MinMax { max, .. } => {
                arity(2)?;
                let b = self.vector(&args[1])?;
                let test = if max { BinOp::Gt } else { BinOp::Lt };
                self.x86_lanes(out_ty, a, scalar, |this, i| {
                    let (x, y) = (this.lane(a, i), this.lane(b, i));
                    let first = this.float_test(test, x, y)?;
                    Ok(this
                        .emit(|ctx| SelectOp::new(ctx, first, x, y))
                        .result(this.ctx))
                })?
            }
            X86Op::Compare { .. } => {
                arity(3)?;
                let b = self.vector(&args[1])?;
                let imm = super::simd::constant_u32s(&args[2], symbol)?;
                let Some(&imm) = imm.first() else {
                    unsupported!("`{symbol}` without a predicate")
                };
                self.x86_lanes(out_ty, a, scalar, |this, i| {
                    let (x, y) = (this.lane(a, i), this.lane(b, i));
                    let holds = this.x86_compare(imm, x, y)?;
                    this.mask_lane(holds, x.get_type(this.ctx))
                })?
            }
            X86Op::ToI32 { truncate } => {
                arity(1)?;
                self.x86_lanes(out_ty, a, false, |this, i| {
                    let x = this.lane(a, i);
                    this.x86_to_i32(x, truncate)
                })?
            }
        };
        Ok(Some(value))
    }

    /// The result vector: lane `i` is `lane(i)`, for lane 0 only when `scalar` (the other
    /// lanes are `a`'s).
    fn x86_lanes(
        &mut self,
        out_ty: rustc_public::ty::Ty,
        a: Vector,
        scalar: bool,
        mut lane: impl FnMut(&mut Self, u64) -> TResult<Value>,
    ) -> TResult<Value> {
        self.map_lanes(out_ty, |this, i| {
            if scalar && i > 0 {
                Ok(this.lane(a, i))
            } else {
                lane(this, i)
            }
        })
    }

    /// Whether the ordered comparison `op` holds for the floats `x` and `y`.
    fn float_test(&mut self, op: BinOp, x: Value, y: Value) -> TResult<Value> {
        let op = super::core_intrinsic::binary_op(self.ctx, op, x, y)?;
        self.inserter_append_operation(op);
        Ok(op.deref(self.ctx).get_result(0))
    }

    /// Whether x86 predicate `imm` holds for `x` and `y`.
    fn x86_compare(&mut self, imm: u32, x: Value, y: Value) -> TResult<Value> {
        let (test, when_unordered) = predicate(imm);
        // `x != x` (an unordered `!=`) holds only for NaN.
        let x_nan = self.float_test(BinOp::Ne, x, x)?;
        let y_nan = self.float_test(BinOp::Ne, y, y)?;
        let unordered = self
            .emit(|ctx| BitOrOp::new(ctx, x_nan, y_nan))
            .result(self.ctx);
        let ordered_result = match test {
            None => self.bool_constant(false),
            Some(Test::Always) => self.bool_constant(true),
            Some(Test::Is(op)) => self.float_test(op, x, y)?,
            Some(Test::Not(op)) => {
                let holds = self.float_test(op, x, y)?;
                self.emit(|ctx| NotOp::new(ctx, holds)).result(self.ctx)
            }
        };
        let if_unordered = self.bool_constant(when_unordered);
        Ok(self
            .emit(|ctx| SelectOp::new(ctx, unordered, if_unordered, ordered_result))
            .result(self.ctx))
    }

    /// A float lane of all ones (true) or zeros, of the float type `float_ty`.
    fn mask_lane(&mut self, holds: Value, float_ty: TypeHandle) -> TResult<Value> {
        let width = if float_ty.deref(self.ctx).is::<FP64Type>() {
            64
        } else if float_ty.deref(self.ctx).is::<FP32Type>() {
            32
        } else {
            unsupported!("an x86 comparison of lanes that are not `f32` or `f64`")
        };
        let int = IntegerType::get(self.ctx, width, Signedness::Unsigned);
        let ones = self
            .emit(|ctx| ConstantOp::new_int(ctx, int, u128::MAX >> (128 - width)))
            .result(self.ctx);
        let zero = self
            .emit(|ctx| ConstantOp::new_int(ctx, int, 0))
            .result(self.ctx);
        let bits = self
            .emit(|ctx| SelectOp::new(ctx, holds, ones, zero))
            .result(self.ctx);
        Ok(self
            .emit(|ctx| BitcastOp::new(ctx, bits, float_ty))
            .result(self.ctx))
    }

    /// `cvtps2dq` / `cvttps2dq` of one lane: `i32::MIN` (x86's "integer indefinite") for NaN
    /// and lanes outside `i32`'s range, else rounded to nearest even (or truncated).
    fn x86_to_i32(&mut self, x: Value, truncate: bool) -> TResult<Value> {
        let rounded = if truncate {
            x
        } else {
            self.emit(|ctx| MathOp::new(ctx, MathFn::Rint, vec![x]))
                .result(self.ctx)
        };
        let i32_ty = IntegerType::get(self.ctx, 32, Signedness::Signed);
        let converted = self
            .emit(|ctx| FloatToIntOp::new(ctx, rounded, i32_ty.into()))
            .result(self.ctx);
        let float_ty = x.get_type(self.ctx);
        let bound = |this: &mut Self, value: f64| -> Value {
            if float_ty.deref(this.ctx).is::<FP64Type>() {
                this.emit(|ctx| ConstantOp::new_f64(ctx, value))
                    .result(this.ctx)
            } else {
                this.emit(|ctx| ConstantOp::new_f32(ctx, value as f32))
                    .result(this.ctx)
            }
        };
        let low = bound(self, -2_147_483_648.0);
        let high = bound(self, 2_147_483_648.0);
        let above_low = self.float_test(BinOp::Ge, rounded, low)?;
        let below_high = self.float_test(BinOp::Lt, rounded, high)?;
        let in_range = self
            .emit(|ctx| BitAndOp::new(ctx, above_low, below_high))
            .result(self.ctx);
        let indefinite = self
            .emit(|ctx| ConstantOp::new_int(ctx, i32_ty, u128::from(i32::MIN as u32)))
            .result(self.ctx);
        Ok(self
            .emit(|ctx| SelectOp::new(ctx, in_range, converted, indefinite))
            .result(self.ctx))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_sorted_and_names_x86_intrinsics() {
        for pair in X86_INTRINSICS.windows(2) {
            assert!(pair[0].0 < pair[1].0, "{} before {}", pair[0].0, pair[1].0);
        }
        for (symbol, _) in X86_INTRINSICS {
            assert!(symbol.starts_with("llvm.x86."), "{symbol}");
        }
        assert_eq!(
            x86_op("llvm.x86.sse2.cvttps2dq"),
            Some(X86Op::ToI32 { truncate: true })
        );
        assert_eq!(x86_op("llvm.x86.sse.rcp.ps"), None);
    }

    /// The predicates against x86's definition, on the four kinds of pairs: less, equal,
    /// greater, unordered.
    #[test]
    fn predicates_follow_the_x86_encoding() {
        let holds = |imm: u32, a: f64, b: f64| -> bool {
            let (test, when_unordered) = predicate(imm);
            if a.is_nan() || b.is_nan() {
                return when_unordered;
            }
            match test {
                None => false,
                Some(Test::Always) => true,
                Some(Test::Is(op)) | Some(Test::Not(op)) => {
                    let r = match op {
                        BinOp::Eq => a == b,
                        BinOp::Lt => a < b,
                        BinOp::Le => a <= b,
                        BinOp::Gt => a > b,
                        BinOp::Ge => a >= b,
                        _ => unreachable!(),
                    };
                    matches!(test, Some(Test::Is(_))) == r
                }
            }
        };
        // (imm, less, equal, greater, unordered), from Intel's table of VCMPPS predicates.
        let table = [
            (0, false, true, false, false),
            (1, true, false, false, false),
            (2, true, true, false, false),
            (3, false, false, false, true),
            (4, true, false, true, true),
            (5, false, true, true, true),
            (6, false, false, true, true),
            (7, true, true, true, false),
            (8, false, true, false, true),
            (9, true, false, false, true),
            (10, true, true, false, true),
            (11, false, false, false, false),
            (12, true, false, true, false),
            (13, false, true, true, false),
            (14, false, false, true, false),
            (15, true, true, true, true),
        ];
        for (imm, less, equal, greater, unordered) in table {
            for signalling in [0, 16] {
                let imm = imm + signalling;
                assert_eq!(holds(imm, 1.0, 2.0), less, "imm {imm} less");
                assert_eq!(holds(imm, 2.0, 2.0), equal, "imm {imm} equal");
                assert_eq!(holds(imm, 3.0, 2.0), greater, "imm {imm} greater");
                assert_eq!(holds(imm, f64::NAN, 2.0), unordered, "imm {imm} nan");
            }
        }
    }
}
