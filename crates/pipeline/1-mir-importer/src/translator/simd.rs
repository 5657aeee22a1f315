//! `core`'s portable SIMD intrinsics (`simd_add`, `simd_shuffle`, `simd_bitmask`, ...), one
//! lane at a time.
//!
//! A SIMD vector is a `#[repr(simd)]` struct around an array `[T; N]` (`core::arch`'s
//! `__m128`, `core::simd::Simd<T, N>`); it keeps rustc's layout, so it is the struct around the
//! array in dialect-mir too, and host and device agree on its bytes. Each intrinsic spills its
//! vector operands to slots, computes every lane with the scalar ops Rust's own operators use
//! (`mir.add`, `mir.lt`, `mir.math`, casts), stores the lanes into a result slot and loads the
//! result back. A GPU thread is scalar: NVPTX would split LLVM vector operations into lanes all
//! the same, and LLVM's SROA keeps the lanes in registers. Lane semantics are Rust's: integer
//! arithmetic wraps, float arithmetic is IEEE without contraction, comparisons give all-ones
//! or zero lanes.
//!
//! [SIMD_INTRINSICS] decides every `simd_*` intrinsic that `core` declares (a test checks it
//! against the toolchain's `rust-src`).

use dialect_mir::ops::*;
use dialect_mir::types::{is_float, usize_type};
use pliron::builtin::types::{IntegerType, Signedness};
use pliron::irbuild::inserter::IRInserter;
use pliron::r#type::{TypeHandle, Typed, TypedHandle};
use pliron::value::Value;
use rustc_public::mir::mono::Instance;
use rustc_public::mir::{BinOp, Operand, Place};
use rustc_public::ty::{ConstantKind, GenericArgKind, RigidTy, Ty, TyConstKind, TyKind};

use super::arith::{binary_op, is_signed};
use super::body::FnTranslator;
use super::error::{TResult, unsupported};

/// How a `simd_*` intrinsic is computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SimdOp {
    /// A binary operation on each pair of lanes (`simd_add`, `simd_and`, `simd_shl`, ...).
    Binary(BinOp),
    /// Negation of each lane.
    Neg,
    /// A math function of each lane, or of each pair or triple of lanes (`simd_fsqrt`,
    /// `simd_fma`, `simd_saturating_add`, `simd_ctpop`, ...). Saturating arithmetic and integer
    /// minimum/maximum follow the lanes' signedness.
    Math(MathFn),
    /// A comparison of each pair of lanes: an integer vector of all-ones (true) or zero lanes.
    Compare(BinOp),
    /// Each lane converted as `as` converts (`simd_cast`, `simd_as`: float to integer
    /// saturates, a valid result for `simd_cast`'s undefined out-of-range lanes).
    Cast,
    /// Each pointer lane cast to another pointer type.
    CastPtr,
    /// Each pointer lane's address.
    ExposeProvenance,
    /// Each address lane as a pointer.
    WithExposedProvenance,
    /// Each pointer lane moved by the element count in the other vector's lane.
    ArithOffset,
    /// Every lane the scalar operand.
    Splat,
    /// The vector with one lane (given by index) replaced.
    Insert,
    /// One lane (given by index).
    Extract,
    /// Lanes picked from two vectors by constant indices (the second's lanes follow the
    /// first's).
    Shuffle,
    /// Per lane, the second operand's lane where the mask lane is non-zero, else the third's.
    Select,
    /// As [SimdOp::Select], with bit `i` of an integer (or little-endian bytes) as lane `i`'s
    /// mask.
    SelectBitmask,
    /// Bit `i` of the result is the most significant bit of lane `i`.
    Bitmask,
    /// A fold of the lanes with a binary operation; `ordered` ones start from an initial
    /// value, unordered ones from lane 0 (any order is allowed; lane order is the one taken).
    Reduce { op: BinOp, ordered: bool },
    /// The minimum or maximum lane (ints by signedness, floats ignoring NaN).
    ReduceMinMax { max: bool },
    /// Whether every lane (`all`) or some lane of a mask is set.
    ReduceMask { all: bool },
    /// Per lane, a load through the pointer lane where the mask lane is set, else the
    /// fallback lane.
    Gather,
    /// Per lane, a store through the pointer lane where the mask lane is set.
    Scatter,
    /// Per lane `i`, a load from the pointer plus `i` elements where the mask lane is set,
    /// else the fallback lane (the pointer aligned to the element or the vector).
    MaskedLoad,
    /// Per lane `i`, a store to the pointer plus `i` elements where the mask lane is set.
    MaskedStore,
    /// Not available, for the reason given.
    Refused(&'static str),
}

/// Every `simd_*` intrinsic of `core`, sorted by name.
pub const SIMD_INTRINSICS: &[(&str, SimdOp)] = {
    use BinOp::*;
    use MathFn as M;
    use SimdOp::*;
    &[
        ("simd_add", Binary(Add)),
        ("simd_and", Binary(BitAnd)),
        ("simd_arith_offset", ArithOffset),
        ("simd_as", Cast),
        ("simd_bitmask", Bitmask),
        ("simd_bitreverse", Math(M::Bitreverse)),
        ("simd_bswap", Math(M::Bswap)),
        (
            "simd_carryless_mul",
            Refused("carry-less multiplication of vectors (`clmul`)"),
        ),
        ("simd_cast", Cast),
        ("simd_cast_ptr", CastPtr),
        ("simd_ceil", Math(M::Ceil)),
        ("simd_ctlz", Math(M::Ctlz)),
        ("simd_ctpop", Math(M::Ctpop)),
        ("simd_cttz", Math(M::Cttz)),
        ("simd_div", Binary(Div)),
        ("simd_eq", Compare(Eq)),
        ("simd_expose_provenance", ExposeProvenance),
        ("simd_extract", Extract),
        ("simd_extract_dyn", Extract),
        ("simd_fabs", Math(M::Fabs)),
        ("simd_fcos", Math(M::Cos)),
        ("simd_fexp", Math(M::Exp)),
        ("simd_fexp2", Math(M::Exp2)),
        ("simd_flog", Math(M::Log)),
        ("simd_flog10", Math(M::Log10)),
        ("simd_flog2", Math(M::Log2)),
        ("simd_floor", Math(M::Floor)),
        ("simd_fma", Math(M::Fma)),
        ("simd_fsin", Math(M::Sin)),
        ("simd_fsqrt", Math(M::Sqrt)),
        ("simd_funnel_shl", Math(M::Fshl)),
        ("simd_funnel_shr", Math(M::Fshr)),
        ("simd_gather", Gather),
        ("simd_ge", Compare(Ge)),
        ("simd_gt", Compare(Gt)),
        ("simd_insert", Insert),
        ("simd_insert_dyn", Insert),
        ("simd_le", Compare(Le)),
        ("simd_lt", Compare(Lt)),
        ("simd_masked_load", MaskedLoad),
        ("simd_masked_store", MaskedStore),
        ("simd_maximum_number_nsz", Math(M::Maxnum)),
        ("simd_minimum_number_nsz", Math(M::Minnum)),
        ("simd_mul", Binary(Mul)),
        ("simd_ne", Compare(Ne)),
        ("simd_neg", Neg),
        ("simd_or", Binary(BitOr)),
        (
            "simd_reduce_add_ordered",
            Reduce {
                op: Add,
                ordered: true,
            },
        ),
        (
            "simd_reduce_add_unordered",
            Reduce {
                op: Add,
                ordered: false,
            },
        ),
        ("simd_reduce_all", ReduceMask { all: true }),
        (
            "simd_reduce_and",
            Reduce {
                op: BitAnd,
                ordered: false,
            },
        ),
        ("simd_reduce_any", ReduceMask { all: false }),
        ("simd_reduce_max", ReduceMinMax { max: true }),
        ("simd_reduce_min", ReduceMinMax { max: false }),
        (
            "simd_reduce_mul_ordered",
            Reduce {
                op: Mul,
                ordered: true,
            },
        ),
        (
            "simd_reduce_mul_unordered",
            Reduce {
                op: Mul,
                ordered: false,
            },
        ),
        (
            "simd_reduce_or",
            Reduce {
                op: BitOr,
                ordered: false,
            },
        ),
        (
            "simd_reduce_xor",
            Reduce {
                op: BitXor,
                ordered: false,
            },
        ),
        // Fusing is one of the results `simd_relaxed_fma` allows, and the deterministic one.
        ("simd_relaxed_fma", Math(M::Fma)),
        ("simd_rem", Binary(Rem)),
        ("simd_round", Math(M::Round)),
        ("simd_round_ties_even", Math(M::Rint)),
        ("simd_saturating_add", Math(M::SaddSat)),
        ("simd_saturating_sub", Math(M::SsubSat)),
        ("simd_scatter", Scatter),
        ("simd_select", Select),
        ("simd_select_bitmask", SelectBitmask),
        ("simd_shl", Binary(Shl)),
        ("simd_shr", Binary(Shr)),
        ("simd_shuffle", Shuffle),
        ("simd_splat", Splat),
        ("simd_sub", Binary(Sub)),
        ("simd_trunc", Math(M::Trunc)),
        ("simd_with_exposed_provenance", WithExposedProvenance),
        ("simd_xor", Binary(BitXor)),
    ]
};

/// How the `simd_*` intrinsic `name` is computed, if `core` has it.
pub fn simd_op(name: &str) -> Option<SimdOp> {
    SIMD_INTRINSICS
        .binary_search_by(|(entry, _)| (*entry).cmp(name))
        .ok()
        .map(|found| SIMD_INTRINSICS[found].1)
}

/// A SIMD vector in memory: a pointer to it, its lane count and lane type.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Vector {
    /// `mir.ptr` to the vector (a struct whose field 0 is the lanes' array).
    pub(crate) ptr: Value,
    /// The number of lanes.
    pub(crate) lanes: u64,
    /// The dialect-mir type of a lane.
    pub(crate) lane_ty: TypeHandle,
}

/// The lane type and count of a `#[repr(simd)]` type, `None` for any other type.
pub(crate) fn simd_shape(ty: Ty) -> Option<(Ty, u64)> {
    let TyKind::RigidTy(RigidTy::Adt(def, args)) = ty.kind() else {
        return None;
    };
    if !def.is_simd() {
        return None;
    }
    let field = def
        .variants()
        .first()?
        .fields()
        .first()?
        .ty_with_args(&args);
    match field.kind() {
        TyKind::RigidTy(RigidTy::Array(lane, len)) => Some((lane, len.eval_target_usize().ok()?)),
        _ => None,
    }
}

impl FnTranslator<'_> {
    /// A call of the `simd_*` intrinsic `name`.
    pub(crate) fn translate_simd(
        &mut self,
        name: &str,
        instance: &Instance,
        args: &[Operand],
        destination: &Place,
    ) -> TResult<Option<Value>> {
        let Some(op) = simd_op(name) else {
            unsupported!("the SIMD intrinsic `{name}` (unknown to cuda-oxide)")
        };
        let arity = |n: usize| -> TResult<()> {
            if args.len() == n {
                Ok(())
            } else {
                unsupported!("the intrinsic `{name}` with {} arguments", args.len())
            }
        };
        let out_ty = self.place_type(destination)?;
        Ok(match op {
            SimdOp::Refused(reason) => {
                unsupported!("the SIMD intrinsic `{name}`: {reason}")
            }
            SimdOp::Binary(bin) => {
                arity(2)?;
                let (a, b) = (self.vector(&args[0])?, self.vector(&args[1])?);
                Some(self.map_lanes(out_ty, |this, i| {
                    let (x, y) = (this.lane(a, i), this.lane(b, i));
                    this.lane_binary(bin, x, y)
                })?)
            }
            SimdOp::Neg => {
                arity(1)?;
                let a = self.vector(&args[0])?;
                Some(self.map_lanes(out_ty, |this, i| {
                    let x = this.lane(a, i);
                    Ok(this.emit(|ctx| NegOp::new(ctx, x)).result(this.ctx))
                })?)
            }
            SimdOp::Math(function) => {
                let vectors = args
                    .iter()
                    .map(|arg| self.vector(arg))
                    .collect::<TResult<Vec<_>>>()?;
                if vectors.len() != function.arity() {
                    unsupported!("the intrinsic `{name}` with {} arguments", args.len())
                }
                let function = signed_variant(self.ctx, function, vectors[0].lane_ty);
                Some(self.map_lanes(out_ty, |this, i| {
                    let values = vectors.iter().map(|&v| this.lane(v, i)).collect();
                    Ok(this
                        .emit(|ctx| MathOp::new(ctx, function, values))
                        .result(this.ctx))
                })?)
            }
            SimdOp::Compare(bin) => {
                arity(2)?;
                let (a, b) = (self.vector(&args[0])?, self.vector(&args[1])?);
                let mask_lane = self.lane_type_of(out_ty)?;
                let (set, clear) = (self.all_ones(mask_lane)?, self.int_constant(mask_lane, 0)?);
                Some(self.map_lanes(out_ty, |this, i| {
                    let (x, y) = (this.lane(a, i), this.lane(b, i));
                    let holds = this.lane_binary(bin, x, y)?;
                    Ok(this
                        .emit(|ctx| SelectOp::new(ctx, holds, set, clear))
                        .result(this.ctx))
                })?)
            }
            SimdOp::Cast | SimdOp::CastPtr | SimdOp::ExposeProvenance => {
                arity(1)?;
                let a = self.vector(&args[0])?;
                let to = self.lane_type_of(out_ty)?;
                Some(self.map_lanes(out_ty, |this, i| {
                    let x = this.lane(a, i);
                    this.convert(x, to)
                })?)
            }
            SimdOp::WithExposedProvenance => {
                arity(1)?;
                let a = self.vector(&args[0])?;
                let to = self.lane_type_of(out_ty)?;
                Some(self.map_lanes(out_ty, |this, i| {
                    let x = this.lane(a, i);
                    let x = this.as_usize_value(x);
                    Ok(this
                        .emit(|ctx| IntToPtrOp::new(ctx, x, to))
                        .result(this.ctx))
                })?)
            }
            SimdOp::ArithOffset => {
                arity(2)?;
                let (a, b) = (self.vector(&args[0])?, self.vector(&args[1])?);
                Some(self.map_lanes(out_ty, |this, i| {
                    let (p, n) = (this.lane(a, i), this.lane(b, i));
                    Ok(this
                        .emit(|ctx| PtrOffsetOp::new(ctx, p, n))
                        .result(this.ctx))
                })?)
            }
            SimdOp::Splat => {
                arity(1)?;
                let Some(x) = self.translate_operand(&args[0])? else {
                    unsupported!("`{name}` of a zero-sized value")
                };
                Some(self.map_lanes(out_ty, |_, _| Ok(x))?)
            }
            SimdOp::Insert => {
                arity(3)?;
                let a = self.vector(&args[0])?;
                let index = self.scalar(&args[1], name)?;
                let x = self.scalar(&args[2], name)?;
                let result = self.new_vector(out_ty)?;
                self.copy_vector(a, result);
                let index = self.as_usize_value(index);
                let at = self.dynamic_lane_addr(result, index);
                self.emit(|ctx| StoreOp::new(ctx, x, at));
                Some(
                    self.emit(|ctx| LoadOp::new(ctx, result.ptr))
                        .result(self.ctx),
                )
            }
            SimdOp::Extract => {
                arity(2)?;
                let a = self.vector(&args[0])?;
                let index = self.scalar(&args[1], name)?;
                let index = self.as_usize_value(index);
                let at = self.dynamic_lane_addr(a, index);
                Some(self.emit(|ctx| LoadOp::new(ctx, at)).result(self.ctx))
            }
            SimdOp::Shuffle => {
                arity(3)?;
                let (a, b) = (self.vector(&args[0])?, self.vector(&args[1])?);
                let indices = constant_u32s(&args[2], name)?;
                Some(self.map_lanes(out_ty, |this, i| {
                    let Some(&index) = indices.get(i as usize) else {
                        unsupported!("`{name}` with fewer indices than result lanes")
                    };
                    let index = u64::from(index);
                    match index.checked_sub(a.lanes) {
                        None => Ok(this.lane(a, index)),
                        Some(index) if index < b.lanes => Ok(this.lane(b, index)),
                        Some(_) => unsupported!("`{name}` with the out-of-range index {index}"),
                    }
                })?)
            }
            SimdOp::Select => {
                arity(3)?;
                let mask = self.vector(&args[0])?;
                let (a, b) = (self.vector(&args[1])?, self.vector(&args[2])?);
                Some(self.map_lanes(out_ty, |this, i| {
                    let m = this.lane(mask, i);
                    let set = this.is_nonzero(m)?;
                    let (x, y) = (this.lane(a, i), this.lane(b, i));
                    Ok(this
                        .emit(|ctx| SelectOp::new(ctx, set, x, y))
                        .result(this.ctx))
                })?)
            }
            SimdOp::SelectBitmask => {
                arity(3)?;
                let bits = self.bitmask_operand(&args[0], name)?;
                let (a, b) = (self.vector(&args[1])?, self.vector(&args[2])?);
                Some(self.map_lanes(out_ty, |this, i| {
                    let set = this.bit_is_set(bits, i)?;
                    let (x, y) = (this.lane(a, i), this.lane(b, i));
                    Ok(this
                        .emit(|ctx| SelectOp::new(ctx, set, x, y))
                        .result(this.ctx))
                })?)
            }
            SimdOp::Bitmask => {
                arity(1)?;
                let a = self.vector(&args[0])?;
                Some(self.bitmask(a, out_ty, name)?)
            }
            SimdOp::Reduce { op, ordered } => {
                let a = self.vector(&args[0])?;
                let (mut acc, first) = if ordered {
                    arity(2)?;
                    (self.scalar(&args[1], name)?, 0)
                } else {
                    arity(1)?;
                    (self.lane(a, 0), 1)
                };
                for i in first..a.lanes {
                    let x = self.lane(a, i);
                    acc = self.lane_binary(op, acc, x)?;
                }
                Some(acc)
            }
            SimdOp::ReduceMinMax { max } => {
                arity(1)?;
                let a = self.vector(&args[0])?;
                let function = match (is_float(self.ctx, a.lane_ty), max) {
                    (true, true) => MathFn::Maxnum,
                    (true, false) => MathFn::Minnum,
                    (false, true) => signed_variant(self.ctx, MathFn::Umax, a.lane_ty),
                    (false, false) => signed_variant(self.ctx, MathFn::Umin, a.lane_ty),
                };
                let mut acc = self.lane(a, 0);
                for i in 1..a.lanes {
                    let x = self.lane(a, i);
                    acc = self
                        .emit(|ctx| MathOp::new(ctx, function, vec![acc, x]))
                        .result(self.ctx);
                }
                Some(acc)
            }
            SimdOp::ReduceMask { all } => {
                arity(1)?;
                let a = self.vector(&args[0])?;
                let mut acc = self.bool_constant(all);
                for i in 0..a.lanes {
                    let x = self.lane(a, i);
                    let set = self.is_nonzero(x)?;
                    let op = if all { BinOp::BitAnd } else { BinOp::BitOr };
                    acc = self.lane_binary(op, acc, set)?;
                }
                Some(acc)
            }
            SimdOp::Gather => {
                arity(3)?;
                let fallback = self.vector(&args[0])?;
                let (ptrs, mask) = (self.vector(&args[1])?, self.vector(&args[2])?);
                let result = self.new_vector(out_ty)?;
                self.copy_vector(fallback, result);
                for i in 0..result.lanes {
                    let m = self.lane(mask, i);
                    let set = self.is_nonzero(m)?;
                    self.when(set, "gather", |this| {
                        let p = this.lane(ptrs, i);
                        let x = this.emit(|ctx| LoadOp::new(ctx, p)).result(this.ctx);
                        let at = this.lane_addr(result, i);
                        this.emit(|ctx| StoreOp::new(ctx, x, at));
                    });
                }
                Some(
                    self.emit(|ctx| LoadOp::new(ctx, result.ptr))
                        .result(self.ctx),
                )
            }
            SimdOp::Scatter => {
                arity(3)?;
                let values = self.vector(&args[0])?;
                let (ptrs, mask) = (self.vector(&args[1])?, self.vector(&args[2])?);
                for i in 0..values.lanes {
                    let m = self.lane(mask, i);
                    let set = self.is_nonzero(m)?;
                    self.when(set, "scatter", |this| {
                        let (x, p) = (this.lane(values, i), this.lane(ptrs, i));
                        this.emit(|ctx| StoreOp::new(ctx, x, p));
                    });
                }
                None
            }
            SimdOp::MaskedLoad => {
                arity(3)?;
                element_aligned(instance, name)?;
                let mask = self.vector(&args[0])?;
                let base = self.scalar(&args[1], name)?;
                let fallback = self.vector(&args[2])?;
                let result = self.new_vector(out_ty)?;
                self.copy_vector(fallback, result);
                for i in 0..result.lanes {
                    let m = self.lane(mask, i);
                    let set = self.is_nonzero(m)?;
                    self.when(set, "masked_load", |this| {
                        let offset = this.usize_constant(u128::from(i));
                        let p = this
                            .emit(|ctx| PtrOffsetOp::new(ctx, base, offset))
                            .result(this.ctx);
                        let x = this.emit(|ctx| LoadOp::new(ctx, p)).result(this.ctx);
                        let at = this.lane_addr(result, i);
                        this.emit(|ctx| StoreOp::new(ctx, x, at));
                    });
                }
                Some(
                    self.emit(|ctx| LoadOp::new(ctx, result.ptr))
                        .result(self.ctx),
                )
            }
            SimdOp::MaskedStore => {
                arity(3)?;
                element_aligned(instance, name)?;
                let mask = self.vector(&args[0])?;
                let base = self.scalar(&args[1], name)?;
                let values = self.vector(&args[2])?;
                for i in 0..values.lanes {
                    let m = self.lane(mask, i);
                    let set = self.is_nonzero(m)?;
                    self.when(set, "masked_store", |this| {
                        let offset = this.usize_constant(u128::from(i));
                        let p = this
                            .emit(|ctx| PtrOffsetOp::new(ctx, base, offset))
                            .result(this.ctx);
                        let x = this.lane(values, i);
                        this.emit(|ctx| StoreOp::new(ctx, x, p));
                    });
                }
                None
            }
        })
    }

    /// A vector operand, spilled to a slot.
    pub(crate) fn vector(&mut self, operand: &Operand) -> TResult<Vector> {
        let ty = self.operand_ty(operand)?;
        let Some(value) = self.translate_operand(operand)? else {
            unsupported!("a zero-sized SIMD vector of type `{ty}`")
        };
        let vector = self.new_vector(ty)?;
        self.emit(|ctx| StoreOp::new(ctx, value, vector.ptr));
        Ok(vector)
    }

    /// A fresh slot for a vector of Rust type `ty`.
    pub(crate) fn new_vector(&mut self, ty: Ty) -> TResult<Vector> {
        let Some((lane, lanes)) = simd_shape(ty) else {
            unsupported!("the SIMD operation on `{ty}`, which is not a `#[repr(simd)]` vector")
        };
        if lanes == 0 {
            unsupported!("the SIMD vector `{ty}` without lanes")
        }
        let lane_ty = self.types.translate(self.ctx, lane)?;
        let mir_ty = self.types.translate(self.ctx, ty)?;
        let ptr = self.emit(|ctx| AllocaOp::new(ctx, mir_ty)).result(self.ctx);
        Ok(Vector {
            ptr,
            lanes,
            lane_ty,
        })
    }

    /// A vector of Rust type `ty` whose lane `i` is `lane(i)`, as a value.
    pub(crate) fn map_lanes(
        &mut self,
        ty: Ty,
        mut lane: impl FnMut(&mut Self, u64) -> TResult<Value>,
    ) -> TResult<Value> {
        let result = self.new_vector(ty)?;
        for i in 0..result.lanes {
            let value = lane(self, i)?;
            let at = self.lane_addr(result, i);
            self.emit(|ctx| StoreOp::new(ctx, value, at));
        }
        Ok(self
            .emit(|ctx| LoadOp::new(ctx, result.ptr))
            .result(self.ctx))
    }

    /// The value of lane `i` of `vector`.
    pub(crate) fn lane(&mut self, vector: Vector, i: u64) -> Value {
        let at = self.lane_addr(vector, i);
        self.emit(|ctx| LoadOp::new(ctx, at)).result(self.ctx)
    }

    /// The address of lane `i` of `vector`.
    pub(crate) fn lane_addr(&mut self, vector: Vector, i: u64) -> Value {
        let index = self.usize_constant(u128::from(i));
        self.dynamic_lane_addr(vector, index)
    }

    /// The address of the lane at the `usize` value `index`.
    fn dynamic_lane_addr(&mut self, vector: Vector, index: Value) -> Value {
        let array = self
            .emit(|ctx| FieldAddrOp::new(ctx, vector.ptr, 0))
            .result(self.ctx);
        let first = self
            .emit(|ctx| ArrayElemAddrOp::new(ctx, array))
            .result(self.ctx);
        self.emit(|ctx| PtrOffsetOp::new(ctx, first, index))
            .result(self.ctx)
    }

    /// Copies every lane of `from` into `to` (vectors of one type).
    fn copy_vector(&mut self, from: Vector, to: Vector) {
        let whole = self.emit(|ctx| LoadOp::new(ctx, from.ptr)).result(self.ctx);
        self.emit(|ctx| StoreOp::new(ctx, whole, to.ptr));
    }

    /// The dialect-mir type of a lane of the vector type `ty`.
    pub(crate) fn lane_type_of(&mut self, ty: Ty) -> TResult<TypeHandle> {
        let Some((lane, _)) = simd_shape(ty) else {
            unsupported!("the SIMD operation producing `{ty}`, which is not a vector")
        };
        self.types.translate(self.ctx, lane)
    }

    /// A scalar operand of a SIMD intrinsic (an index, an initial value, a lane).
    fn scalar(&mut self, operand: &Operand, name: &str) -> TResult<Value> {
        match self.translate_operand(operand)? {
            Some(value) => Ok(value),
            None => unsupported!("`{name}` with a zero-sized operand"),
        }
    }

    /// MIR binary operation `op` on two lanes.
    fn lane_binary(&mut self, op: BinOp, x: Value, y: Value) -> TResult<Value> {
        let y = if matches!(op, BinOp::Shl | BinOp::Shr) {
            let ty = x.get_type(self.ctx);
            self.emit(|ctx| IntCastOp::new(ctx, y, ty)).result(self.ctx)
        } else {
            y
        };
        let op = binary_op(self.ctx, op, x, y)?;
        self.inserter_append_operation(op);
        Ok(op.deref(self.ctx).get_result(0))
    }

    /// `x` converted to `to` as `as` converts between numbers, or between pointers.
    fn convert(&mut self, x: Value, to: TypeHandle) -> TResult<Value> {
        let from = x.get_type(self.ctx);
        if from == to {
            return Ok(x);
        }
        let ctx = &*self.ctx;
        let (from_float, to_float) = (is_float(ctx, from), is_float(ctx, to));
        let (from_ptr, to_ptr) = (
            dialect_mir::types::is_ptr(ctx, from),
            dialect_mir::types::is_ptr(ctx, to),
        );
        Ok(match (from_float, to_float, from_ptr, to_ptr) {
            (true, true, ..) => self
                .emit(|ctx| FloatCastOp::new(ctx, x, to))
                .result(self.ctx),
            (true, false, _, false) => self
                .emit(|ctx| FloatToIntOp::new(ctx, x, to))
                .result(self.ctx),
            (false, true, false, _) => self
                .emit(|ctx| IntToFloatOp::new(ctx, x, to))
                .result(self.ctx),
            (false, false, true, true) => {
                self.emit(|ctx| PtrCastOp::new(ctx, x, to)).result(self.ctx)
            }
            (false, false, true, false) => self
                .emit(|ctx| PtrToIntOp::new(ctx, x, to))
                .result(self.ctx),
            (false, false, false, false) => {
                self.emit(|ctx| IntCastOp::new(ctx, x, to)).result(self.ctx)
            }
            _ => unsupported!("a SIMD conversion between pointers and floats"),
        })
    }

    /// An integer as a `usize`.
    fn as_usize_value(&mut self, x: Value) -> Value {
        let usize_ty = usize_type(self.ctx).into();
        if x.get_type(self.ctx) == usize_ty {
            return x;
        }
        self.emit(|ctx| IntCastOp::new(ctx, x, usize_ty))
            .result(self.ctx)
    }

    /// Whether the integer lane `x` is not zero.
    fn is_nonzero(&mut self, x: Value) -> TResult<Value> {
        let ty = x.get_type(self.ctx);
        let zero = self.int_constant(ty, 0)?;
        Ok(self.emit(|ctx| NeOp::new(ctx, x, zero)).result(self.ctx))
    }

    /// The integer constant `bits` of the integer type `ty`.
    pub(crate) fn int_constant(&mut self, ty: TypeHandle, bits: u128) -> TResult<Value> {
        let Ok(int) = TypedHandle::<IntegerType>::from_handle(ty, self.ctx) else {
            unsupported!("a SIMD mask whose lanes are not integers")
        };
        Ok(self
            .emit(|ctx| ConstantOp::new_int(ctx, int, bits))
            .result(self.ctx))
    }

    /// The integer of type `ty` with every bit set.
    fn all_ones(&mut self, ty: TypeHandle) -> TResult<Value> {
        let width = integer_width(self.ctx, ty);
        self.int_constant(ty, u128::MAX >> (128 - width.clamp(1, 128)))
    }

    /// The mask operand of `simd_select_bitmask`: an unsigned integer, or an array of bytes read
    /// as a little-endian integer.
    fn bitmask_operand(&mut self, operand: &Operand, name: &str) -> TResult<Value> {
        let ty = self.operand_ty(operand)?;
        let value = self.scalar(operand, name)?;
        match ty.kind() {
            TyKind::RigidTy(RigidTy::Uint(_)) => Ok(value),
            TyKind::RigidTy(RigidTy::Array(..)) => {
                let bytes = super::types::layout(ty)?.size.bytes() as u32;
                let int = IntegerType::get(self.ctx, bytes * 8, Signedness::Unsigned);
                self.transmute(value, int.into())
            }
            _ => unsupported!("`{name}` with a mask of type `{ty}`"),
        }
    }

    /// Whether bit `i` of the unsigned integer `bits` is set.
    fn bit_is_set(&mut self, bits: Value, i: u64) -> TResult<Value> {
        let ty = bits.get_type(self.ctx);
        let amount = self.int_constant(ty, u128::from(i))?;
        let shifted = self
            .emit(|ctx| ShrOp::new(ctx, bits, amount))
            .result(self.ctx);
        let one = self.int_constant(ty, 1)?;
        let bit = self
            .emit(|ctx| BitAndOp::new(ctx, shifted, one))
            .result(self.ctx);
        self.is_nonzero(bit)
    }

    /// `simd_bitmask`: bit `i` of the result (an unsigned integer, or little-endian bytes) is
    /// the most significant bit of lane `i`.
    fn bitmask(&mut self, a: Vector, out_ty: Ty, name: &str) -> TResult<Value> {
        let width = super::types::layout(out_ty)?.size.bytes() as u32 * 8;
        if u64::from(width) < a.lanes {
            unsupported!("`{name}` into `{out_ty}`, narrower than the vector's lanes")
        }
        let acc_ty: TypeHandle = IntegerType::get(self.ctx, width, Signedness::Unsigned).into();
        let lane_width = integer_width(self.ctx, a.lane_ty);
        if lane_width == 0 {
            unsupported!("`{name}` of a vector whose lanes are not integers")
        }
        let signed: TypeHandle = IntegerType::get(self.ctx, lane_width, Signedness::Signed).into();
        let zero_lane = self.int_constant(signed, 0)?;
        let (one, zero) = (self.int_constant(acc_ty, 1)?, self.int_constant(acc_ty, 0)?);
        let mut acc = zero;
        for i in 0..a.lanes {
            let x = self.lane(a, i);
            let x = self
                .emit(|ctx| IntCastOp::new(ctx, x, signed))
                .result(self.ctx);
            let negative = self
                .emit(|ctx| LtOp::new(ctx, x, zero_lane))
                .result(self.ctx);
            let amount = self.int_constant(acc_ty, u128::from(i))?;
            let bit = self
                .emit(|ctx| ShlOp::new(ctx, one, amount))
                .result(self.ctx);
            let bit = self
                .emit(|ctx| SelectOp::new(ctx, negative, bit, zero))
                .result(self.ctx);
            acc = self
                .emit(|ctx| BitOrOp::new(ctx, acc, bit))
                .result(self.ctx);
        }
        let out_mir = self.types.translate(self.ctx, out_ty)?;
        self.transmute(acc, out_mir)
    }

    /// Runs `body` only where `cond` holds: `if cond { body }`, with the insertion point after
    /// it on return.
    pub(crate) fn when(&mut self, cond: Value, label: &str, body: impl FnOnce(&mut Self)) {
        let then = self.new_block(&format!("{label}_lane"));
        let after = self.new_block(&format!("{label}_next"));
        self.emit(|ctx| CondBrOp::new(ctx, cond, then, after));
        self.inserter = IRInserter::new_at_block_end(then);
        body(self);
        self.emit(|ctx| GotoOp::new(ctx, after));
        self.inserter = IRInserter::new_at_block_end(after);
    }
}

/// The variant of a saturating or min/max math function for the signedness of `ty`.
fn signed_variant(ctx: &pliron::context::Context, function: MathFn, ty: TypeHandle) -> MathFn {
    let signed = is_signed(ctx, ty);
    match function {
        MathFn::SaddSat | MathFn::UaddSat if signed => MathFn::SaddSat,
        MathFn::SaddSat | MathFn::UaddSat => MathFn::UaddSat,
        MathFn::SsubSat | MathFn::UsubSat if signed => MathFn::SsubSat,
        MathFn::SsubSat | MathFn::UsubSat => MathFn::UsubSat,
        MathFn::Smin | MathFn::Umin if signed => MathFn::Smin,
        MathFn::Smin | MathFn::Umin => MathFn::Umin,
        MathFn::Smax | MathFn::Umax if signed => MathFn::Smax,
        MathFn::Smax | MathFn::Umax => MathFn::Umax,
        other => other,
    }
}

/// The width of an integer type, 0 for any other type.
fn integer_width(ctx: &pliron::context::Context, ty: TypeHandle) -> u32 {
    ty.deref(ctx)
        .downcast_ref::<IntegerType>()
        .map_or(0, |int| int.width())
}

/// Refuses a masked load or store whose pointer may be unaligned to the element (`ALIGN`, the
/// intrinsic's fourth generic argument, is `SimdAlign::Unaligned`, encoded 0): the lanes are
/// accessed as elements.
fn element_aligned(instance: &Instance, name: &str) -> TResult<()> {
    let align = match instance.args().0.get(3) {
        Some(GenericArgKind::Const(constant)) => match constant.kind() {
            TyConstKind::Value(_, alloc) => alloc.bytes.first().copied().flatten(),
            _ => None,
        },
        _ => None,
    };
    match align {
        Some(1 | 2) => Ok(()),
        Some(_) => unsupported!(
            "`{name}` through a pointer that may be unaligned to the element (`SimdAlign::Unaligned`)"
        ),
        None => unsupported!("`{name}` whose alignment argument is not known"),
    }
}

/// The `u32` values of a constant operand (`simd_shuffle`'s indices: an array or a vector).
pub(crate) fn constant_u32s(operand: &Operand, name: &str) -> TResult<Vec<u32>> {
    let Operand::Constant(constant) = operand else {
        unsupported!("`{name}` whose indices are not a constant")
    };
    let ConstantKind::Allocated(alloc) = constant.const_.kind() else {
        unsupported!("`{name}` whose indices rustc did not evaluate")
    };
    Ok(alloc
        .bytes
        .chunks(4)
        .map(|word| {
            word.iter()
                .rev()
                .fold(0u32, |acc, byte| (acc << 8) | u32::from(byte.unwrap_or(0)))
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_sorted_without_duplicates() {
        for pair in SIMD_INTRINSICS.windows(2) {
            assert!(pair[0].0 < pair[1].0, "{} before {}", pair[0].0, pair[1].0);
        }
    }

    #[test]
    fn every_simd_intrinsic_of_core_is_decided_here() {
        let declared: Vec<String> = super::super::core_intrinsic::declared_intrinsics()
            .into_iter()
            .filter(|name| name.starts_with("simd_"))
            .collect();
        assert!(declared.len() > 50, "only {} found", declared.len());
        let missing: Vec<&String> = declared.iter().filter(|n| simd_op(n).is_none()).collect();
        assert!(missing.is_empty(), "undecided: {missing:?}");
        let stale: Vec<&str> = SIMD_INTRINSICS
            .iter()
            .map(|(name, _)| *name)
            .filter(|name| !declared.iter().any(|d| d == name))
            .collect();
        assert!(stale.is_empty(), "not declared by core: {stale:?}");
    }

    #[test]
    fn math_lanes_take_the_signedness_of_the_lanes() {
        let ctx = pliron::context::Context::new();
        let i32_ty = IntegerType::get(&ctx, 32, Signedness::Signed).into();
        let u8_ty = IntegerType::get(&ctx, 8, Signedness::Unsigned).into();
        assert_eq!(
            signed_variant(&ctx, MathFn::SaddSat, u8_ty),
            MathFn::UaddSat
        );
        assert_eq!(
            signed_variant(&ctx, MathFn::UsubSat, i32_ty),
            MathFn::SsubSat
        );
        assert_eq!(signed_variant(&ctx, MathFn::Umax, i32_ty), MathFn::Smax);
        assert_eq!(signed_variant(&ctx, MathFn::Sqrt, i32_ty), MathFn::Sqrt);
    }
}
