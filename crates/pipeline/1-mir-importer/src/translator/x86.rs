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

/// Whether an x86 operation works on every lane (`ps`/`pd`) or on lane 0 only (`ss`/`sd`, the
/// other lanes from the first operand).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lanes {
    Packed,
    Scalar,
}

/// The shifts of `psll`/`psrl`/`psra`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShiftKind {
    /// `psll`: zero once the count reaches the lane width.
    Left,
    /// `psrl`: zero once the count reaches the lane width.
    LogicalRight,
    /// `psra`: every bit a copy of the sign once the count reaches the lane width.
    ArithmeticRight,
}

/// What an LLVM x86 intrinsic computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum X86Op {
    /// `minps`/`minss`: `a < b ? a : b`, so the second operand when either is NaN or both are
    /// zeros.
    Min(Lanes),
    /// `maxps`/`maxss`: `a > b ? a : b`, likewise.
    Max(Lanes),
    /// `cmpps`/`cmpss` with a predicate (0 to 31, AVX's encoding; 0 to 7 for SSE): lanes of all
    /// ones where it holds, else zero.
    Compare(Lanes),
    /// `comiss`/`ucomiss` (and `sd`) as LLVM lowers them: 1 when the comparison of the low
    /// lanes holds, else 0; false when either is NaN, but for `!=`, which is then true. (The
    /// two forms differ only in which NaNs raise an exception flag.)
    CompareLow(BinOp),
    /// `cvtps2dq`/`cvtss2si`/`cvtpd2dq`... (`truncate`: the `cvtt` forms): floats to integers
    /// of the destination's width, rounding to nearest even (truncating), with the integer's
    /// minimum ("integer indefinite") for NaN and out-of-range lanes. `Scalar`: lane 0 to an
    /// integer; `Packed`: lane by lane into a vector, lanes past the source's zero.
    ToInt { truncate: bool, lanes: Lanes },
    /// `cvtsd2ss`: lane 0 of the second operand (`f64`) rounded to `f32`, the other lanes from
    /// the first.
    NarrowLow,
    /// `rcpps`/`rcpss` (`sqrt`: `rsqrtps`/`rsqrtss`): `1 / x` (`1 / sqrt(x)`), here correctly
    /// rounded. The CPU's are approximations (relative error at most 1.5 * 2^-12) whose bits
    /// differ between processor models, so no GPU version can give the host's bits.
    Reciprocal { sqrt: bool, lanes: Lanes },
    /// `pmaddwd`: lane `i` of the `i32` result is `a[2i] * b[2i] + a[2i+1] * b[2i+1]` of the
    /// `i16` lanes, wrapping.
    MultiplyAddPairs,
    /// `psadbw`: lane `i` of the `u64` result is the sum of `|a[j] - b[j]|` over the `u8`
    /// lanes `8i..8i+8`.
    SumAbsoluteDifferences,
    /// `psll`/`psrl`/`psra` by the unsigned 64-bit count in the low half of the second operand.
    Shift(ShiftKind),
    /// `maskmovdqu`: byte `i` of the first operand is stored at `address + i` when the top bit
    /// of byte `i` of the mask is set; other bytes are not written.
    StoreMaskedBytes,
    /// `sfence`, `lfence`, `mfence`: ordering of this thread's memory accesses for every
    /// observer, the GPU's `fence.sc.sys` (`__threadfence_system()`).
    Fence,
    /// `pause`, `clflush`, `llvm.prefetch`: hints and cache control, without effect on values.
    NoEffect,
    /// `stmxcsr`/`ldmxcsr`: the CPU's floating-point control and status register, which the
    /// GPU does not have (its rounding is per instruction, it keeps no exception flags).
    ControlRegister,
}

/// The LLVM x86 intrinsics with a GPU version, by symbol, sorted: every one that the SSE and
/// SSE2 functions of `core::arch::x86_64` call (the x86-64 baseline; a test checks the list
/// against `core`'s source).
pub const X86_INTRINSICS: &[(&str, X86Op)] = {
    use BinOp::{Eq, Ge, Gt, Le, Lt, Ne};
    use Lanes::*;
    use X86Op::*;
    const fn to_int(truncate: bool, lanes: Lanes) -> X86Op {
        ToInt { truncate, lanes }
    }
    const fn reciprocal(sqrt: bool, lanes: Lanes) -> X86Op {
        Reciprocal { sqrt, lanes }
    }
    &[
        ("llvm.prefetch", NoEffect),
        ("llvm.x86.sse.cmp.ps", Compare(Packed)),
        ("llvm.x86.sse.cmp.ss", Compare(Scalar)),
        ("llvm.x86.sse.comieq.ss", CompareLow(Eq)),
        ("llvm.x86.sse.comige.ss", CompareLow(Ge)),
        ("llvm.x86.sse.comigt.ss", CompareLow(Gt)),
        ("llvm.x86.sse.comile.ss", CompareLow(Le)),
        ("llvm.x86.sse.comilt.ss", CompareLow(Lt)),
        ("llvm.x86.sse.comineq.ss", CompareLow(Ne)),
        ("llvm.x86.sse.cvtss2si", to_int(false, Scalar)),
        ("llvm.x86.sse.cvtss2si64", to_int(false, Scalar)),
        ("llvm.x86.sse.cvttss2si", to_int(true, Scalar)),
        ("llvm.x86.sse.cvttss2si64", to_int(true, Scalar)),
        ("llvm.x86.sse.ldmxcsr", ControlRegister),
        ("llvm.x86.sse.max.ps", Max(Packed)),
        ("llvm.x86.sse.max.ss", Max(Scalar)),
        ("llvm.x86.sse.min.ps", Min(Packed)),
        ("llvm.x86.sse.min.ss", Min(Scalar)),
        ("llvm.x86.sse.rcp.ps", reciprocal(false, Packed)),
        ("llvm.x86.sse.rcp.ss", reciprocal(false, Scalar)),
        ("llvm.x86.sse.rsqrt.ps", reciprocal(true, Packed)),
        ("llvm.x86.sse.rsqrt.ss", reciprocal(true, Scalar)),
        ("llvm.x86.sse.sfence", Fence),
        ("llvm.x86.sse.stmxcsr", ControlRegister),
        ("llvm.x86.sse.ucomieq.ss", CompareLow(Eq)),
        ("llvm.x86.sse.ucomige.ss", CompareLow(Ge)),
        ("llvm.x86.sse.ucomigt.ss", CompareLow(Gt)),
        ("llvm.x86.sse.ucomile.ss", CompareLow(Le)),
        ("llvm.x86.sse.ucomilt.ss", CompareLow(Lt)),
        ("llvm.x86.sse.ucomineq.ss", CompareLow(Ne)),
        ("llvm.x86.sse2.clflush", NoEffect),
        ("llvm.x86.sse2.cmp.pd", Compare(Packed)),
        ("llvm.x86.sse2.cmp.sd", Compare(Scalar)),
        ("llvm.x86.sse2.comieq.sd", CompareLow(Eq)),
        ("llvm.x86.sse2.comige.sd", CompareLow(Ge)),
        ("llvm.x86.sse2.comigt.sd", CompareLow(Gt)),
        ("llvm.x86.sse2.comile.sd", CompareLow(Le)),
        ("llvm.x86.sse2.comilt.sd", CompareLow(Lt)),
        ("llvm.x86.sse2.comineq.sd", CompareLow(Ne)),
        ("llvm.x86.sse2.cvtpd2dq", to_int(false, Packed)),
        ("llvm.x86.sse2.cvtps2dq", to_int(false, Packed)),
        ("llvm.x86.sse2.cvtsd2si", to_int(false, Scalar)),
        ("llvm.x86.sse2.cvtsd2si64", to_int(false, Scalar)),
        ("llvm.x86.sse2.cvtsd2ss", NarrowLow),
        ("llvm.x86.sse2.cvttpd2dq", to_int(true, Packed)),
        ("llvm.x86.sse2.cvttps2dq", to_int(true, Packed)),
        ("llvm.x86.sse2.cvttsd2si", to_int(true, Scalar)),
        ("llvm.x86.sse2.cvttsd2si64", to_int(true, Scalar)),
        ("llvm.x86.sse2.lfence", Fence),
        ("llvm.x86.sse2.maskmov.dqu", StoreMaskedBytes),
        ("llvm.x86.sse2.max.pd", Max(Packed)),
        ("llvm.x86.sse2.max.sd", Max(Scalar)),
        ("llvm.x86.sse2.mfence", Fence),
        ("llvm.x86.sse2.min.pd", Min(Packed)),
        ("llvm.x86.sse2.min.sd", Min(Scalar)),
        ("llvm.x86.sse2.pause", NoEffect),
        ("llvm.x86.sse2.pmadd.wd", MultiplyAddPairs),
        ("llvm.x86.sse2.psad.bw", SumAbsoluteDifferences),
        ("llvm.x86.sse2.psll.d", Shift(ShiftKind::Left)),
        ("llvm.x86.sse2.psll.q", Shift(ShiftKind::Left)),
        ("llvm.x86.sse2.psll.w", Shift(ShiftKind::Left)),
        ("llvm.x86.sse2.psra.d", Shift(ShiftKind::ArithmeticRight)),
        ("llvm.x86.sse2.psra.w", Shift(ShiftKind::ArithmeticRight)),
        ("llvm.x86.sse2.psrl.d", Shift(ShiftKind::LogicalRight)),
        ("llvm.x86.sse2.psrl.q", Shift(ShiftKind::LogicalRight)),
        ("llvm.x86.sse2.psrl.w", Shift(ShiftKind::LogicalRight)),
        ("llvm.x86.sse2.ucomieq.sd", CompareLow(Eq)),
        ("llvm.x86.sse2.ucomige.sd", CompareLow(Ge)),
        ("llvm.x86.sse2.ucomigt.sd", CompareLow(Gt)),
        ("llvm.x86.sse2.ucomile.sd", CompareLow(Le)),
        ("llvm.x86.sse2.ucomilt.sd", CompareLow(Lt)),
        ("llvm.x86.sse2.ucomineq.sd", CompareLow(Ne)),
    ]
};

/// What `cpuid` answers on the GPU, by leaf (`eax`, `ebx`, `ecx`, `edx`; any other leaf gives
/// zeros): an x86-64 CPU with the baseline features only (x86-64-v1: FPU, CX8, CMOV, MMX,
/// FXSR, SSE, SSE2 in leaf 1, SYSCALL and LM in leaf 0x8000_0001), no vendor string. Crates
/// that detect features at run time then take the paths the device compiles: the baseline's,
/// which `cfg(target_feature)` already enables in the host's MIR.
pub const BASELINE_CPUID: &[(u32, [u32; 4])] = &[
    (0, [1, 0, 0, 0]),
    (
        1,
        [
            0,
            0,
            0,
            1 | (1 << 8) | (1 << 15) | (1 << 23) | (1 << 24) | (1 << 25) | (1 << 26),
        ],
    ),
    (0x8000_0000, [0x8000_0001, 0, 0, 0]),
    (0x8000_0001, [0, 0, 0, (1 << 11) | (1 << 29)]),
];

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
                 intrinsic (the x86-64 baseline, SSE and SSE2, has one; see docs/crates.md)"
            )
        };
        let arity = match op {
            X86Op::Fence => 0,
            X86Op::NoEffect | X86Op::ControlRegister => args.len(),
            X86Op::ToInt { .. } | X86Op::Reciprocal { .. } => 1,
            X86Op::Compare(_) | X86Op::StoreMaskedBytes => 3,
            _ => 2,
        };
        if args.len() != arity {
            unsupported!("`{symbol}` with {} arguments", args.len())
        }
        let out_ty = self.place_type(destination)?;
        let value = match op {
            X86Op::Min(lanes) | X86Op::Max(lanes) => {
                let (a, b) = (self.vector(&args[0])?, self.vector(&args[1])?);
                let test = if op == X86Op::Max(lanes) {
                    BinOp::Gt
                } else {
                    BinOp::Lt
                };
                self.x86_lanes(out_ty, a, lanes, |this, i| {
                    let (x, y) = (this.lane(a, i), this.lane(b, i));
                    let first = this.float_test(test, x, y)?;
                    Ok(this
                        .emit(|ctx| SelectOp::new(ctx, first, x, y))
                        .result(this.ctx))
                })?
            }
            X86Op::Compare(lanes) => {
                let (a, b) = (self.vector(&args[0])?, self.vector(&args[1])?);
                let imm = super::simd::constant_u32s(&args[2], symbol)?;
                let Some(&imm) = imm.first() else {
                    unsupported!("`{symbol}` without a predicate")
                };
                self.x86_lanes(out_ty, a, lanes, |this, i| {
                    let (x, y) = (this.lane(a, i), this.lane(b, i));
                    let holds = this.x86_compare(imm, x, y)?;
                    this.mask_lane(holds, x.get_type(this.ctx))
                })?
            }
            X86Op::CompareLow(test) => {
                let (a, b) = (self.vector(&args[0])?, self.vector(&args[1])?);
                let (x, y) = (self.lane(a, 0), self.lane(b, 0));
                let holds = self.float_test(test, x, y)?;
                let int = self.types.translate(self.ctx, out_ty)?;
                self.bool_to_int(holds, int)?
            }
            X86Op::ToInt { truncate, lanes } => {
                let a = self.vector(&args[0])?;
                match lanes {
                    Lanes::Scalar => {
                        let int = self.types.translate(self.ctx, out_ty)?;
                        let x = self.lane(a, 0);
                        self.x86_to_int(x, truncate, int)?
                    }
                    Lanes::Packed => {
                        let int = self.lane_type_of(out_ty)?;
                        self.map_lanes(out_ty, |this, i| {
                            if i < a.lanes {
                                let x = this.lane(a, i);
                                this.x86_to_int(x, truncate, int)
                            } else {
                                this.int_constant(int, 0)
                            }
                        })?
                    }
                }
            }
            X86Op::NarrowLow => {
                let (a, b) = (self.vector(&args[0])?, self.vector(&args[1])?);
                self.x86_lanes(out_ty, a, Lanes::Scalar, |this, _| {
                    let x = this.lane(b, 0);
                    let f32_ty = FP32Type::get(this.ctx).into();
                    Ok(this
                        .emit(|ctx| FloatCastOp::new(ctx, x, f32_ty))
                        .result(this.ctx))
                })?
            }
            X86Op::Reciprocal { sqrt, lanes } => {
                let a = self.vector(&args[0])?;
                self.x86_lanes(out_ty, a, lanes, |this, i| {
                    let x = this.lane(a, i);
                    let x = if sqrt {
                        this.emit(|ctx| MathOp::new(ctx, MathFn::Sqrt, vec![x]))
                            .result(this.ctx)
                    } else {
                        x
                    };
                    let one = this.float_like(x, 1.0);
                    Ok(this.emit(|ctx| DivOp::new(ctx, one, x)).result(this.ctx))
                })?
            }
            X86Op::MultiplyAddPairs => {
                let (a, b) = (self.vector(&args[0])?, self.vector(&args[1])?);
                let int = self.lane_type_of(out_ty)?;
                self.map_lanes(out_ty, |this, i| {
                    let mut sum = None;
                    for j in [2 * i, 2 * i + 1] {
                        let x = this.lane(a, j);
                        let y = this.lane(b, j);
                        let x = this
                            .emit(|ctx| IntCastOp::new(ctx, x, int))
                            .result(this.ctx);
                        let y = this
                            .emit(|ctx| IntCastOp::new(ctx, y, int))
                            .result(this.ctx);
                        let product = this.emit(|ctx| MulOp::new(ctx, x, y)).result(this.ctx);
                        sum = Some(match sum {
                            None => product,
                            Some(s) => this
                                .emit(|ctx| AddOp::new(ctx, s, product))
                                .result(this.ctx),
                        });
                    }
                    Ok(sum.expect("two products"))
                })?
            }
            X86Op::SumAbsoluteDifferences => {
                let (a, b) = (self.vector(&args[0])?, self.vector(&args[1])?);
                let sum_ty = self.lane_type_of(out_ty)?;
                let per_lane = a.lanes / 2;
                self.map_lanes(out_ty, |this, i| {
                    let mut sum = this.int_constant(sum_ty, 0)?;
                    for j in i * per_lane..(i + 1) * per_lane {
                        let x = this.lane(a, j);
                        let y = this.lane(b, j);
                        let x = this
                            .emit(|ctx| IntCastOp::new(ctx, x, sum_ty))
                            .result(this.ctx);
                        let y = this
                            .emit(|ctx| IntCastOp::new(ctx, y, sum_ty))
                            .result(this.ctx);
                        let x_above = this.emit(|ctx| GtOp::new(ctx, x, y)).result(this.ctx);
                        let up = this.emit(|ctx| SubOp::new(ctx, x, y)).result(this.ctx);
                        let down = this.emit(|ctx| SubOp::new(ctx, y, x)).result(this.ctx);
                        let difference = this
                            .emit(|ctx| SelectOp::new(ctx, x_above, up, down))
                            .result(this.ctx);
                        sum = this
                            .emit(|ctx| AddOp::new(ctx, sum, difference))
                            .result(this.ctx);
                    }
                    Ok(sum)
                })?
            }
            X86Op::Shift(shift) => {
                let a = self.vector(&args[0])?;
                let count = self.low_u64(&args[1])?;
                self.x86_shift(out_ty, a, count, shift)?
            }
            X86Op::StoreMaskedBytes => {
                let (a, mask) = (self.vector(&args[0])?, self.vector(&args[1])?);
                let Some(address) = self.translate_operand(&args[2])? else {
                    unsupported!("`{symbol}` without an address")
                };
                for i in 0..a.lanes {
                    let byte = self.lane(mask, i);
                    let zero = self.int_constant(byte.get_type(self.ctx), 0)?;
                    let top_set = self.emit(|ctx| LtOp::new(ctx, byte, zero)).result(self.ctx);
                    self.when(top_set, "maskmov", |this| {
                        let value = this.lane(a, i);
                        let offset = this.usize_constant(u128::from(i));
                        let at = this
                            .emit(|ctx| PtrOffsetOp::new(ctx, address, offset))
                            .result(this.ctx);
                        this.emit(|ctx| StoreOp::new(ctx, value, at));
                    });
                }
                return Ok(None);
            }
            X86Op::Fence => {
                self.emit(|ctx| {
                    dialect_nvvm::IntrinsicOp::new(ctx, &dialect_nvvm::table::fence_sc_sys, vec![])
                });
                return Ok(None);
            }
            X86Op::NoEffect => return Ok(None),
            X86Op::ControlRegister => unsupported!(
                "`{path}`, the CPU's floating-point control and status register (MXCSR, read by \
                 `_mm_getcsr` and the `_MM_GET_*` functions, written by `_mm_setcsr` and \
                 `_MM_SET_*`): the GPU has no such register; its rounding is chosen per \
                 instruction and it keeps no exception flags"
            ),
        };
        Ok(Some(value))
    }

    /// The result vector: lane `i` is `lane(i)`, for lane 0 only when `lanes` is `Scalar`
    /// (the other lanes are `a`'s).
    fn x86_lanes(
        &mut self,
        out_ty: rustc_public::ty::Ty,
        a: Vector,
        lanes: Lanes,
        mut lane: impl FnMut(&mut Self, u64) -> TResult<Value>,
    ) -> TResult<Value> {
        self.map_lanes(out_ty, |this, i| {
            if lanes == Lanes::Scalar && i > 0 {
                Ok(this.lane(a, i))
            } else {
                lane(this, i)
            }
        })
    }

    /// 1 or 0 of the integer type `ty`, as `holds`.
    fn bool_to_int(&mut self, holds: Value, ty: TypeHandle) -> TResult<Value> {
        let one = self.int_constant(ty, 1)?;
        let zero = self.int_constant(ty, 0)?;
        Ok(self
            .emit(|ctx| SelectOp::new(ctx, holds, one, zero))
            .result(self.ctx))
    }

    /// The float constant `value` of `x`'s type (`f32` or `f64`).
    fn float_like(&mut self, x: Value, value: f64) -> Value {
        if x.get_type(self.ctx).deref(self.ctx).is::<FP64Type>() {
            self.emit(|ctx| ConstantOp::new_f64(ctx, value))
                .result(self.ctx)
        } else {
            self.emit(|ctx| ConstantOp::new_f32(ctx, value as f32))
                .result(self.ctx)
        }
    }

    /// The low 64 bits of a 128-bit vector operand, as a `u64` (the count of `psll` & co.).
    fn low_u64(&mut self, operand: &Operand) -> TResult<Value> {
        let Some(value) = self.translate_operand(operand)? else {
            unsupported!("an x86 shift by a zero-sized count")
        };
        let u128_ty = IntegerType::get(self.ctx, 128, Signedness::Unsigned);
        let u64_ty = IntegerType::get(self.ctx, 64, Signedness::Unsigned);
        let whole = self.transmute(value, u128_ty.into())?;
        Ok(self
            .emit(|ctx| IntCastOp::new(ctx, whole, u64_ty.into()))
            .result(self.ctx))
    }

    /// `psll`/`psrl`/`psra`: every lane of `a` shifted by the `u64` `count`, as x86 does for
    /// counts past the lane width (zero, or the sign everywhere).
    fn x86_shift(
        &mut self,
        out_ty: rustc_public::ty::Ty,
        a: Vector,
        count: Value,
        shift: ShiftKind,
    ) -> TResult<Value> {
        let width = match a.lane_ty.deref(self.ctx).downcast_ref::<IntegerType>() {
            Some(int) => int.width(),
            None => unsupported!("an x86 shift of lanes that are not integers"),
        };
        let u64_ty: TypeHandle = IntegerType::get(self.ctx, 64, Signedness::Unsigned).into();
        let last_bit = self.int_constant(u64_ty, u128::from(width - 1))?;
        let within = self
            .emit(|ctx| LeOp::new(ctx, count, last_bit))
            .result(self.ctx);
        let clamped = self
            .emit(|ctx| SelectOp::new(ctx, within, count, last_bit))
            .result(self.ctx);
        let signed = IntegerType::get(self.ctx, width, Signedness::Signed).into();
        let unsigned = IntegerType::get(self.ctx, width, Signedness::Unsigned).into();
        let lane_ty = a.lane_ty;
        self.map_lanes(out_ty, |this, i| {
            let x = this.lane(a, i);
            // The lane's bits as a signed (arithmetic shift) or unsigned (logical) integer.
            let as_ty = if shift == ShiftKind::ArithmeticRight {
                signed
            } else {
                unsigned
            };
            let x = this
                .emit(|ctx| IntCastOp::new(ctx, x, as_ty))
                .result(this.ctx);
            let amount = this
                .emit(|ctx| IntCastOp::new(ctx, clamped, as_ty))
                .result(this.ctx);
            let shifted = match shift {
                ShiftKind::Left => this.emit(|ctx| ShlOp::new(ctx, x, amount)).result(this.ctx),
                ShiftKind::LogicalRight | ShiftKind::ArithmeticRight => {
                    this.emit(|ctx| ShrOp::new(ctx, x, amount)).result(this.ctx)
                }
            };
            let result = if shift == ShiftKind::ArithmeticRight {
                shifted
            } else {
                let zero = this.int_constant(as_ty, 0)?;
                this.emit(|ctx| SelectOp::new(ctx, within, shifted, zero))
                    .result(this.ctx)
            };
            Ok(this
                .emit(|ctx| IntCastOp::new(ctx, result, lane_ty))
                .result(this.ctx))
        })
    }

    /// Whether the ordered comparison `op` holds for the floats `x` and `y`.
    fn float_test(&mut self, op: BinOp, x: Value, y: Value) -> TResult<Value> {
        let op = super::arith::binary_op(self.ctx, op, x, y)?;
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

    /// A float converted to the signed integer type `int` as `cvt(t)ss2si` and `cvt(t)ps2dq`
    /// convert: the integer's minimum (x86's "integer indefinite") for NaN and values outside
    /// its range, else rounded to nearest even (or truncated when `truncate`).
    fn x86_to_int(&mut self, x: Value, truncate: bool, int: TypeHandle) -> TResult<Value> {
        let width = match int.deref(self.ctx).downcast_ref::<IntegerType>() {
            Some(int) => int.width(),
            None => unsupported!("an x86 conversion to a type that is not an integer"),
        };
        let rounded = if truncate {
            x
        } else {
            self.emit(|ctx| MathOp::new(ctx, MathFn::Rint, vec![x]))
                .result(self.ctx)
        };
        let converted = self
            .emit(|ctx| FloatToIntOp::new(ctx, rounded, int))
            .result(self.ctx);
        // -2^(w-1) and 2^(w-1), exact in `f32` and `f64`.
        let limit = 2f64.powi(width as i32 - 1);
        let low = self.float_like(x, -limit);
        let high = self.float_like(x, limit);
        let above_low = self.float_test(BinOp::Ge, rounded, low)?;
        let below_high = self.float_test(BinOp::Lt, rounded, high)?;
        let in_range = self
            .emit(|ctx| BitAndOp::new(ctx, above_low, below_high))
            .result(self.ctx);
        let indefinite = self.int_constant(int, 1u128 << (width - 1))?;
        Ok(self
            .emit(|ctx| SelectOp::new(ctx, in_range, converted, indefinite))
            .result(self.ctx))
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn the_table_is_sorted_and_names_x86_intrinsics() {
        for pair in X86_INTRINSICS.windows(2) {
            assert!(pair[0].0 < pair[1].0, "{} before {}", pair[0].0, pair[1].0);
        }
        for (symbol, _) in X86_INTRINSICS {
            // `llvm.prefetch`, generic in LLVM, is what `_mm_prefetch` calls.
            assert!(
                symbol.starts_with("llvm.x86.") || *symbol == "llvm.prefetch",
                "{symbol}"
            );
        }
        assert_eq!(
            x86_op("llvm.x86.sse2.cvttps2dq"),
            Some(X86Op::ToInt {
                truncate: true,
                lanes: Lanes::Packed
            })
        );
        assert_eq!(x86_op("llvm.x86.sse41.round.ps"), None);
    }

    /// The source files of `core::arch::x86_64`'s SSE and SSE2 functions: the x86-64 baseline.
    pub(crate) fn baseline_sources() -> Vec<String> {
        [
            "x86/sse.rs",
            "x86/sse2.rs",
            "x86_64/sse.rs",
            "x86_64/sse2.rs",
        ]
        .iter()
        .map(|file| {
            let path = super::super::core_intrinsic::library_source(&format!(
                "stdarch/crates/core_arch/src/{file}"
            ));
            let text = std::fs::read_to_string(&path).unwrap();
            // The functions, without the file's own tests.
            match text.find("#[cfg(test)]\nmod tests") {
                Some(end) => text[..end].to_owned(),
                None => text,
            }
        })
        .collect()
    }

    /// Every LLVM intrinsic that an SSE or SSE2 function of this toolchain's `core` calls has a
    /// GPU version: the list is complete by construction, whatever `core` adds.
    #[test]
    fn every_llvm_intrinsic_of_the_baseline_has_a_gpu_version() {
        let mut declared = Vec::new();
        for text in baseline_sources() {
            for (at, _) in text.match_indices("link_name = \"") {
                let name = &text[at + 13..];
                declared.push(name[..name.find('"').unwrap()].to_owned());
            }
        }
        assert!(declared.len() > 60, "{declared:?}");
        let missing: Vec<&String> = declared.iter().filter(|n| x86_op(n).is_none()).collect();
        assert!(missing.is_empty(), "no GPU version: {missing:?}");
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
