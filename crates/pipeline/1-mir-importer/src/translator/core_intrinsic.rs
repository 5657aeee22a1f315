//! `core`'s compiler intrinsics: a decision for every one of them, and the translation of those
//! decided here.
//!
//! [TABLE] lists every intrinsic `core` declares (`#[rustc_intrinsic]`) by name, and
//! [FAMILIES] the families named by a prefix (`atomic_*`, `simd_*`); [decision] looks a name
//! up in both. A test reads the intrinsics `core` declares in the toolchain's `rust-src` and
//! fails for any without a decision, so what device code does with each is a choice written
//! here, not an accident. The choices:
//!
//! - [Decision::Translate]: dialect-mir ops, built by this module as the [Lowering] says;
//! - [Decision::Math]: float math and bit manipulation, built by `math.rs`;
//! - [Decision::Atomic]: atomic operations, built by the atomics' module;
//! - [Decision::Simd]: portable SIMD operations, built lane by lane by `simd.rs`;
//! - [Decision::Fallback]: `core`'s own fallback body, compiled like any other function (the
//!   collector collects it, the call stays a call);
//! - [Decision::CompileTime]: rustc evaluates it during compilation (in a `const` block, or by
//!   a MIR pass); reaching it at run time is reported;
//! - [Decision::Refused]: a clear error, naming the intrinsic and why the GPU cannot do it.

use dialect_mir::ops::*;
use dialect_mir::types::usize_type;
use pliron::context::Ptr;
use pliron::op::Op;
use pliron::operation::Operation;
use pliron::r#type::Typed;
use pliron::value::Value;
use rustc_public::mir::mono::Instance;
use rustc_public::mir::{BinOp, Operand, Place};
use rustc_public::ty::{GenericArgKind, RigidTy, Ty, TyKind};

use super::arith::binary_op;
use super::body::FnTranslator;
use super::error::{TResult, unsupported};
use super::types::layout;
use super::validity::Validity;

/// What device code does with an intrinsic of `core`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Translated by this module.
    Translate(Lowering),
    /// A float math or bit-manipulation intrinsic, translated by `math.rs`.
    Math,
    /// An atomic operation, translated by the atomics' module.
    Atomic,
    /// A portable SIMD operation (`simd_*`), translated lane by lane by `simd.rs`.
    Simd,
    /// `core`'s fallback body is compiled and called like any other function.
    Fallback,
    /// Evaluated by rustc at compile time; never reached by run-time code.
    CompileTime,
    /// Not available in device code, for the reason given.
    Refused(&'static str),
}

/// How an intrinsic decided [Decision::Translate] becomes dialect-mir.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lowering {
    /// A binary operation of MIR (`wrapping_add` is `Add`, `exact_div` is `Div`,
    /// `disjoint_bitor` is `BitOr`, the `*_fast` float operations are the plain IEEE ones,
    /// which are valid implementations of them).
    Binary(BinOp),
    /// `f*_algebraic`: a float op that LLVM may reassociate and contract (`mir.*_algebraic`).
    Algebraic(BinOp),
    /// `unchecked_shl` / `unchecked_shr` (the amount is below the width).
    Shift(BinOp),
    /// `rotate_left` / `rotate_right`.
    Rotate { left: bool },
    /// `*_with_overflow`: the wrapped value and the overflow flag.
    WithOverflow(BinOp),
    /// `three_way_compare`: an `Ordering`.
    ThreeWayCompare,
    /// `offset` / `arith_offset`: a pointer moved by a count of elements.
    Offset,
    /// `ptr_offset_from` / `ptr_offset_from_unsigned`: the distance in elements.
    OffsetFrom { unsigned: bool },
    /// `ptr_mask`: the address with bits cleared.
    PtrMask,
    /// `ptr_metadata`: a slice pointer's length (nothing for a thin pointer).
    PtrMetadata,
    /// `aggregate_raw_ptr`: a pointer from its data pointer and metadata.
    RawPtrFromParts,
    /// `slice_get_unchecked`: the address of an element of a slice.
    SliceElementAddr,
    /// `caller_location`: the `&Location` of the call (see `caller_location.rs`).
    CallerLocation,
    /// `black_box`: its argument, through a volatile store and load of a stack slot, so that no
    /// optimisation sees the value (or removes the computation behind it).
    Opaque,
    /// Does nothing: `assume`, `cold_path`, `forget`, `prefetch_*` (hints).
    Nothing,
    /// A constant `false`: `ub_checks` (off on the device, as in a release build of `core`),
    /// `is_val_statically_known` (allowed to say `false`).
    False,
    /// `overflow_checks`: whether the session checks overflow.
    OverflowChecks,
    /// `size_of` / `align_of` of the type argument.
    SizeOf,
    /// `align_of`.
    AlignOf,
    /// `size_of_val`: the size of the pointee (a slice's length times its element's size).
    SizeOfVal,
    /// `align_of_val`.
    AlignOfVal,
    /// `needs_drop`: whether the type has drop glue.
    NeedsDrop,
    /// `variant_count`: the number of variants of an enum.
    VariantCount,
    /// `assert_inhabited` and friends: nothing, or a trap when the type does not allow it.
    AssertValid(Validity),
    /// `transmute` / `transmute_unchecked`.
    Transmute,
    /// `float_to_int_unchecked`: Rust's saturating conversion, which is a valid one.
    FloatToInt,
    /// `read_via_copy`: a load.
    Read,
    /// `write_via_move`, `nontemporal_store` (a hint): a store.
    Write,
    /// `discriminant_value`.
    Discriminant,
    /// `select_unpredictable`: `mir.select`.
    Select,
    /// `abort`: the kernel traps.
    Abort,
    /// `unreachable`.
    Unreachable,
    /// `raw_eq`: byte equality of two values.
    RawEq,
    /// `compare_bytes`: `memcmp`.
    CompareBytes,
    /// `copy_nonoverlapping`, `copy` and the volatile copies. `src_first` is the argument order
    /// of the non-volatile ones, `(src, dst, count)`; the volatile ones take `(dst, src, count)`.
    Copy {
        overlapping: bool,
        volatile: bool,
        src_first: bool,
    },
    /// `write_bytes`, `volatile_set_memory`.
    WriteBytes { volatile: bool },
    /// `volatile_load`, `unaligned_volatile_load`.
    VolatileLoad { aligned: bool },
    /// `volatile_store`, `unaligned_volatile_store`.
    VolatileStore { aligned: bool },
    /// `typed_swap_nonoverlapping`: two loads, two stores.
    Swap,
}

const VARIADIC: &str = "C variadic arguments (`VaList`): device functions take a fixed list";
const DYN_VTABLE: &str = "reading a vtable through a raw pointer (`size_of_val` and `align_of_val` \
     of a `dyn` reference are supported)";

/// Every intrinsic of `core` outside [FAMILIES], sorted by name.
pub const TABLE: &[(&str, Decision)] = {
    use BinOp::*;
    use Decision::*;
    use Lowering as L;
    &[
        ("abort", Translate(L::Abort)),
        ("add_with_overflow", Translate(L::WithOverflow(Add))),
        ("aggregate_raw_ptr", Translate(L::RawPtrFromParts)),
        ("align_of", Translate(L::AlignOf)),
        ("align_of_val", Translate(L::AlignOfVal)),
        (
            "amdgpu_dispatch_ptr",
            Refused("an AMD GPU intrinsic (this is an NVIDIA GPU)"),
        ),
        ("arith_offset", Translate(L::Offset)),
        (
            "assert_inhabited",
            Translate(L::AssertValid(Validity::Inhabited)),
        ),
        (
            "assert_mem_uninitialized_valid",
            Translate(L::AssertValid(Validity::Uninitialized)),
        ),
        (
            "assert_zero_valid",
            Translate(L::AssertValid(Validity::Zeroed)),
        ),
        ("assume", Translate(L::Nothing)),
        (
            "autodiff",
            Refused("automatic differentiation (`#[autodiff]`) of device code"),
        ),
        ("bitreverse", Math),
        ("black_box", Translate(L::Opaque)),
        (
            "breakpoint",
            Refused("a debugger breakpoint instruction (set breakpoints with `cuda-gdb` instead)"),
        ),
        ("bswap", Math),
        ("caller_location", Translate(L::CallerLocation)),
        ("carrying_mul_add", Fallback),
        ("carryless_mul", Fallback),
        (
            "catch_unwind",
            Refused("catching a panic: a panic on the GPU stops the kernel, nothing unwinds"),
        ),
        ("cold_path", Translate(L::Nothing)),
        ("compare_bytes", Translate(L::CompareBytes)),
        ("const_allocate", CompileTime),
        ("const_deallocate", CompileTime),
        ("const_eval_select", CompileTime),
        ("const_make_global", CompileTime),
        ("contract_check_ensures", Fallback),
        ("contract_check_requires", Fallback),
        (
            "copy",
            Translate(L::Copy {
                overlapping: true,
                volatile: false,
                src_first: true,
            }),
        ),
        (
            "copy_nonoverlapping",
            Translate(L::Copy {
                overlapping: false,
                volatile: false,
                src_first: true,
            }),
        ),
        ("ctlz", Math),
        ("ctlz_nonzero", Math),
        ("ctpop", Math),
        ("cttz", Math),
        ("cttz_nonzero", Math),
        ("discriminant_value", Translate(L::Discriminant)),
        ("disjoint_bitor", Translate(L::Binary(BitOr))),
        ("exact_div", Translate(L::Binary(Div))),
        ("fabs", Math),
        ("fadd_algebraic", Translate(L::Algebraic(Add))),
        ("fadd_fast", Translate(L::Binary(Add))),
        ("fdiv_algebraic", Translate(L::Algebraic(Div))),
        ("fdiv_fast", Translate(L::Binary(Div))),
        ("field_offset", CompileTime),
        ("float_to_int_unchecked", Translate(L::FloatToInt)),
        ("fmul_algebraic", Translate(L::Algebraic(Mul))),
        ("fmul_fast", Translate(L::Binary(Mul))),
        ("forget", Translate(L::Nothing)),
        ("frem_algebraic", Translate(L::Algebraic(Rem))),
        ("frem_fast", Translate(L::Binary(Rem))),
        ("fsub_algebraic", Translate(L::Algebraic(Sub))),
        ("fsub_fast", Translate(L::Binary(Sub))),
        (
            "gpu_launch_sized_workgroup_mem",
            Refused(
                "`core::intrinsics::gpu` workgroup memory (use `cuda_device::shared::DynamicSharedArray`)",
            ),
        ),
        ("is_val_statically_known", Translate(L::False)),
        ("mul_with_overflow", Translate(L::WithOverflow(Mul))),
        ("needs_drop", Translate(L::NeedsDrop)),
        ("nontemporal_store", Translate(L::Write)),
        (
            "offload",
            Refused("offloading to a GPU from code that already runs on one"),
        ),
        ("offset", Translate(L::Offset)),
        ("offset_of", CompileTime),
        ("overflow_checks", Translate(L::OverflowChecks)),
        ("prefetch_read_data", Translate(L::Nothing)),
        ("prefetch_read_instruction", Translate(L::Nothing)),
        ("prefetch_write_data", Translate(L::Nothing)),
        ("prefetch_write_instruction", Translate(L::Nothing)),
        ("ptr_guaranteed_cmp", Fallback),
        ("ptr_mask", Translate(L::PtrMask)),
        ("ptr_metadata", Translate(L::PtrMetadata)),
        (
            "ptr_offset_from",
            Translate(L::OffsetFrom { unsigned: false }),
        ),
        (
            "ptr_offset_from_unsigned",
            Translate(L::OffsetFrom { unsigned: true }),
        ),
        ("raw_eq", Translate(L::RawEq)),
        ("read_via_copy", Translate(L::Read)),
        ("return_address", Fallback),
        ("rotate_left", Translate(L::Rotate { left: true })),
        ("rotate_right", Translate(L::Rotate { left: false })),
        ("rustc_peek", CompileTime),
        ("saturating_add", Math),
        ("saturating_sub", Math),
        ("select_unpredictable", Translate(L::Select)),
        ("size_of", Translate(L::SizeOf)),
        ("size_of_type_id", CompileTime),
        ("size_of_val", Translate(L::SizeOfVal)),
        ("slice_get_unchecked", Translate(L::SliceElementAddr)),
        ("sub_with_overflow", Translate(L::WithOverflow(Sub))),
        ("three_way_compare", Translate(L::ThreeWayCompare)),
        ("transmute", Translate(L::Transmute)),
        ("transmute_unchecked", Translate(L::Transmute)),
        ("type_id", CompileTime),
        ("type_id_eq", Fallback),
        ("type_id_vtable", CompileTime),
        ("type_name", CompileTime),
        ("type_of", CompileTime),
        ("typed_swap_nonoverlapping", Translate(L::Swap)),
        ("ub_checks", Translate(L::False)),
        (
            "unaligned_volatile_load",
            Translate(L::VolatileLoad { aligned: false }),
        ),
        (
            "unaligned_volatile_store",
            Translate(L::VolatileStore { aligned: false }),
        ),
        ("unchecked_add", Translate(L::Binary(Add))),
        ("unchecked_div", Translate(L::Binary(Div))),
        ("unchecked_funnel_shl", Fallback),
        ("unchecked_funnel_shr", Fallback),
        ("unchecked_mul", Translate(L::Binary(Mul))),
        ("unchecked_rem", Translate(L::Binary(Rem))),
        ("unchecked_shl", Translate(L::Shift(Shl))),
        ("unchecked_shr", Translate(L::Shift(Shr))),
        ("unchecked_sub", Translate(L::Binary(Sub))),
        ("unreachable", Translate(L::Unreachable)),
        ("va_arg", Refused(VARIADIC)),
        ("va_copy", Refused(VARIADIC)),
        ("va_end", Refused(VARIADIC)),
        ("variant_count", Translate(L::VariantCount)),
        (
            "volatile_copy_memory",
            Translate(L::Copy {
                overlapping: true,
                volatile: true,
                src_first: false,
            }),
        ),
        (
            "volatile_copy_nonoverlapping_memory",
            Translate(L::Copy {
                overlapping: false,
                volatile: true,
                src_first: false,
            }),
        ),
        (
            "volatile_load",
            Translate(L::VolatileLoad { aligned: true }),
        ),
        (
            "volatile_set_memory",
            Translate(L::WriteBytes { volatile: true }),
        ),
        (
            "volatile_store",
            Translate(L::VolatileStore { aligned: true }),
        ),
        ("vtable_align", Refused(DYN_VTABLE)),
        ("vtable_size", Refused(DYN_VTABLE)),
        ("wrapping_add", Translate(L::Binary(Add))),
        ("wrapping_mul", Translate(L::Binary(Mul))),
        ("wrapping_sub", Translate(L::Binary(Sub))),
        ("write_bytes", Translate(L::WriteBytes { volatile: false })),
        ("write_via_move", Translate(L::Write)),
    ]
};

/// Families of intrinsics decided together, by name prefix.
pub const FAMILIES: &[(&str, Decision)] = &[
    ("atomic_", Decision::Atomic),
    ("simd_", Decision::Simd),
    (
        "sve_",
        Decision::Refused("Arm SVE vector intrinsics (this is an NVIDIA GPU)"),
    ),
];

/// The float math intrinsics, by the name before their `f16` / `f32` / `f64` / `f128` suffix
/// (`sqrtf32`, `round_ties_even_f64`): the math module's.
const FLOAT_MATH: &[&str] = &[
    "ceil",
    "copysign",
    "cos",
    "exp",
    "exp2",
    "floor",
    "fma",
    "fmuladd",
    "log",
    "log10",
    "log2",
    "maximum",
    "maximum_number_nsz_",
    "minimum",
    "minimum_number_nsz_",
    "pow",
    "powi",
    "round",
    "round_ties_even_",
    "sin",
    "sqrt",
    "trunc",
];

/// The decision for the intrinsic `name`, if it has one.
pub fn decision(name: &str) -> Option<Decision> {
    if let Ok(found) = TABLE.binary_search_by(|(entry, _)| (*entry).cmp(name)) {
        return Some(TABLE[found].1);
    }
    if let Some(&(_, family)) = FAMILIES.iter().find(|(prefix, _)| name.starts_with(prefix)) {
        return Some(family);
    }
    let base = ["f16", "f32", "f64", "f128"]
        .iter()
        .find_map(|suffix| name.strip_suffix(suffix))?;
    FLOAT_MATH.contains(&base).then_some(Decision::Math)
}

impl FnTranslator<'_> {
    /// A call of a compiler intrinsic of `core`, translated as [decision] says.
    pub(crate) fn translate_core_intrinsic(
        &mut self,
        name: &str,
        instance: &Instance,
        args: &[Operand],
        destination: &Place,
        target: Option<usize>,
    ) -> TResult<()> {
        let result = match decision(name) {
            Some(Decision::Translate(lowering)) => {
                match self.lower_intrinsic(lowering, name, instance, args, destination)? {
                    Outcome::Value(value) => value,
                    Outcome::Diverges => return Ok(()),
                }
            }
            Some(Decision::Math) => {
                let values = self.argument_values(args)?;
                match super::math::math_function(name) {
                    Some(function) => Some(self.math(function, name, values, destination)?),
                    None => unsupported!(
                        "the compiler intrinsic `{name}` (this math function is not supported yet)"
                    ),
                }
            }
            Some(Decision::Atomic) => {
                let values = self.argument_values(args)?;
                self.translate_core_atomic(name, instance, &values, destination)?
            }
            Some(Decision::Simd) => self.translate_simd(name, instance, args, destination)?,
            Some(Decision::Fallback) => {
                return self.call_fallback(instance, args, destination, target);
            }
            Some(Decision::CompileTime) => unsupported!(
                "the compiler intrinsic `{name}` at run time (rustc evaluates it at compile time)"
            ),
            Some(Decision::Refused(reason)) => {
                unsupported!("the compiler intrinsic `{name}`: {reason}")
            }
            None => unsupported!("the compiler intrinsic `{name}` (unknown to cuda-oxide)"),
        };
        self.store_result(destination, result)?;
        self.continue_to(target)
    }

    /// The ops of one translated intrinsic.
    fn lower_intrinsic(
        &mut self,
        lowering: Lowering,
        name: &str,
        instance: &Instance,
        args: &[Operand],
        destination: &Place,
    ) -> TResult<Outcome> {
        use Lowering as L;
        let values = self.argument_values(args)?;
        let arity = |n: usize| -> TResult<()> {
            if values.len() == n {
                Ok(())
            } else {
                unsupported!(
                    "the intrinsic `{name}` with {} non-zero-sized arguments",
                    values.len()
                )
            }
        };
        let value = |op: Ptr<Operation>, this: &mut Self| -> Value {
            this.inserter_append_operation(op);
            op.deref(this.ctx).get_result(0)
        };
        let result = match lowering {
            L::Binary(op) => {
                arity(2)?;
                let built = binary_op(self.ctx, op, values[0], values[1])?;
                Some(value(built, self))
            }
            L::Algebraic(op) => {
                arity(2)?;
                let (a, b) = (values[0], values[1]);
                let built = match op {
                    BinOp::Add => AlgebraicAddOp::new(self.ctx, a, b).get_operation(),
                    BinOp::Sub => AlgebraicSubOp::new(self.ctx, a, b).get_operation(),
                    BinOp::Mul => AlgebraicMulOp::new(self.ctx, a, b).get_operation(),
                    BinOp::Div => AlgebraicDivOp::new(self.ctx, a, b).get_operation(),
                    BinOp::Rem => AlgebraicRemOp::new(self.ctx, a, b).get_operation(),
                    other => unsupported!("the intrinsic `{name}` as an algebraic {other:?}"),
                };
                Some(value(built, self))
            }
            L::CallerLocation => {
                arity(0)?;
                Some(self.caller_location()?)
            }
            L::Shift(op) => {
                arity(2)?;
                let ty = values[0].get_type(self.ctx);
                let amount = self
                    .emit(|ctx| IntCastOp::new(ctx, values[1], ty))
                    .result(self.ctx);
                let built = binary_op(self.ctx, op, values[0], amount)?;
                Some(value(built, self))
            }
            L::Rotate { left } => Some(self.rotate(left, &values)?),
            L::WithOverflow(op) => {
                arity(2)?;
                self.store_checked(destination, op, values[0], values[1])?;
                None
            }
            L::ThreeWayCompare => {
                arity(2)?;
                let cmp = self
                    .emit(|ctx| CmpOp::new(ctx, values[0], values[1]))
                    .result(self.ctx);
                let ordering = self.place_type(destination)?;
                Some(self.ordering_from_cmp(cmp, ordering)?)
            }
            L::Offset => {
                arity(2)?;
                Some(
                    self.emit(|ctx| PtrOffsetOp::new(ctx, values[0], values[1]))
                        .result(self.ctx),
                )
            }
            L::OffsetFrom { unsigned } => {
                arity(2)?;
                Some(self.offset_from(instance, values[0], values[1], unsigned)?)
            }
            L::PtrMask => {
                arity(2)?;
                Some(self.ptr_mask(values[0], values[1])?)
            }
            L::PtrMetadata => {
                arity(1)?;
                let ptr_ty = self.operand_ty(&args[0])?;
                if super::types::pointee_is_unsized_slice(ptr_ty) {
                    Some(
                        self.emit(|ctx| SliceLenOp::new(ctx, values[0]))
                            .result(self.ctx),
                    )
                } else {
                    None
                }
            }
            L::RawPtrFromParts => {
                let ptr_ty = self.place_type(destination)?;
                let Some(pointee) = ptr_ty.kind().builtin_deref(true).map(|t| t.ty) else {
                    unsupported!("`aggregate_raw_ptr` to the non-pointer `{ptr_ty}`")
                };
                Some(self.raw_pointer_from_parts(ptr_ty, pointee, args)?)
            }
            L::SliceElementAddr => {
                arity(2)?;
                let data = self
                    .emit(|ctx| SlicePtrOp::new(ctx, values[0]))
                    .result(self.ctx);
                let elem = self
                    .emit(|ctx| PtrOffsetOp::new(ctx, data, values[1]))
                    .result(self.ctx);
                let to = self.place_type(destination)?;
                let to_mir = self.types.translate(self.ctx, to)?;
                Some(
                    self.emit(|ctx| PtrCastOp::new(ctx, elem, to_mir))
                        .result(self.ctx),
                )
            }
            L::Opaque => {
                let ty = type_arg(instance, 0)?;
                if super::types::is_zero_sized(ty)? {
                    None
                } else {
                    arity(1)?;
                    let align = layout(ty)?.abi_align;
                    let mir_ty = self.types.translate(self.ctx, ty)?;
                    let slot = self.emit(|ctx| AllocaOp::new(ctx, mir_ty)).result(self.ctx);
                    self.emit(|ctx| VolatileStoreOp::new(ctx, values[0], slot, align));
                    Some(
                        self.emit(|ctx| VolatileLoadOp::new(ctx, slot, align))
                            .result(self.ctx),
                    )
                }
            }
            L::Nothing => None,
            L::False => Some(self.bool_constant(false)),
            L::OverflowChecks => Some(self.bool_constant(self.overflow_checks)),
            L::SizeOf => {
                let size = layout(type_arg(instance, 0)?)?.size.bytes() as u128;
                Some(self.usize_constant(size))
            }
            L::AlignOf => {
                let align = u128::from(layout(type_arg(instance, 0)?)?.abi_align);
                Some(self.usize_constant(align))
            }
            L::SizeOfVal | L::AlignOfVal => {
                arity(1)?;
                let pointee = type_arg(instance, 0)?;
                Some(self.size_or_align_of_val(pointee, values[0], lowering == L::SizeOfVal)?)
            }
            L::NeedsDrop => {
                let ty = type_arg(instance, 0)?;
                let has_glue = !Instance::resolve_drop_in_place(ty).is_empty_shim();
                Some(self.bool_constant(has_glue))
            }
            L::VariantCount => {
                let ty = type_arg(instance, 0)?;
                let count = match ty.kind() {
                    TyKind::RigidTy(RigidTy::Adt(def, _))
                        if matches!(def.kind(), rustc_public::ty::AdtKind::Enum) =>
                    {
                        def.num_variants() as u128
                    }
                    _ => 0,
                };
                Some(self.usize_constant(count))
            }
            L::AssertValid(validity) => {
                let ty = type_arg(instance, 0)?;
                if !super::validity::allows(ty, validity)? {
                    // rustc's backends panic here: the kernel traps.
                    self.emit(TrapOp::new);
                    return Ok(Outcome::Diverges);
                }
                None
            }
            L::Transmute => {
                let [value] = values[..] else {
                    unsupported!("`transmute` of a zero-sized value")
                };
                let to = self.place_type(destination)?;
                let to_mir = self.types.translate(self.ctx, to)?;
                Some(self.transmute(value, to_mir)?)
            }
            L::FloatToInt => {
                arity(1)?;
                let to = self.place_type(destination)?;
                let to_mir = self.types.translate(self.ctx, to)?;
                Some(
                    self.emit(|ctx| FloatToIntOp::new(ctx, values[0], to_mir))
                        .result(self.ctx),
                )
            }
            L::Read => {
                arity(1)?;
                Some(
                    self.emit(|ctx| LoadOp::new(ctx, values[0]))
                        .result(self.ctx),
                )
            }
            L::Write => {
                if let [ptr, value] = values[..] {
                    self.emit(|ctx| StoreOp::new(ctx, value, ptr));
                }
                None
            }
            L::Discriminant => {
                arity(1)?;
                Some(self.discriminant_through(instance, values[0], destination)?)
            }
            L::Select => {
                let to = self.place_type(destination)?;
                if super::types::is_zero_sized(to)? {
                    None
                } else {
                    arity(3)?;
                    Some(
                        self.emit(|ctx| SelectOp::new(ctx, values[0], values[1], values[2]))
                            .result(self.ctx),
                    )
                }
            }
            L::Abort => {
                self.emit(TrapOp::new);
                return Ok(Outcome::Diverges);
            }
            L::Unreachable => {
                self.emit(UnreachableOp::new);
                return Ok(Outcome::Diverges);
            }
            L::RawEq => {
                let ty = type_arg(instance, 0)?;
                Some(self.raw_eq(ty, &values)?)
            }
            L::CompareBytes => {
                arity(3)?;
                Some(self.compare_bytes(values[0], values[1], values[2])?)
            }
            L::Copy {
                overlapping,
                volatile,
                src_first,
            } => {
                if !values.is_empty() {
                    arity(3)?;
                    let (src, dst) = if src_first {
                        (values[0], values[1])
                    } else {
                        (values[1], values[0])
                    };
                    self.copy(dst, src, values[2], overlapping, volatile);
                }
                None
            }
            L::WriteBytes { volatile } => {
                if !values.is_empty() {
                    arity(3)?;
                    self.write_bytes(values[0], values[1], values[2], volatile);
                }
                None
            }
            L::VolatileLoad { aligned } => {
                let ty = type_arg(instance, 0)?;
                if super::types::is_zero_sized(ty)? {
                    None
                } else {
                    arity(1)?;
                    let align = if aligned { layout(ty)?.abi_align } else { 1 };
                    Some(
                        self.emit(|ctx| VolatileLoadOp::new(ctx, values[0], align))
                            .result(self.ctx),
                    )
                }
            }
            L::VolatileStore { aligned } => {
                let ty = type_arg(instance, 0)?;
                if !super::types::is_zero_sized(ty)? {
                    arity(2)?;
                    let align = if aligned { layout(ty)?.abi_align } else { 1 };
                    self.emit(|ctx| VolatileStoreOp::new(ctx, values[1], values[0], align));
                }
                None
            }
            L::Swap => {
                let ty = type_arg(instance, 0)?;
                if !super::types::is_zero_sized(ty)? {
                    arity(2)?;
                    self.swap(values[0], values[1]);
                }
                None
            }
        };
        Ok(Outcome::Value(result))
    }

    /// A call of the fallback body `core` gives the intrinsic (the collector collected it
    /// under the same symbol).
    fn call_fallback(
        &mut self,
        instance: &Instance,
        args: &[Operand],
        destination: &Place,
        target: Option<usize>,
    ) -> TResult<()> {
        let mut values = self.argument_values(args)?;
        if super::track_caller::requires_caller_location(instance) {
            values.push(self.caller_location()?);
        }
        let name = crate::naming::export_name(instance, false);
        let result_ty =
            super::body::non_zst_type(self.ctx, self.types, self.place_type(destination)?)?;
        let result = self.emit_call(&name, values, result_ty)?;
        self.store_result(destination, result)?;
        self.continue_to(target)
    }

    /// An `Ordering` (of Rust type `ordering`) from the `si8` of `mir.cmp`: the enum is an
    /// `i8` with the same values (-1, 0, 1), so its bytes are the comparison's.
    pub(crate) fn ordering_from_cmp(&mut self, cmp: Value, ordering: Ty) -> TResult<Value> {
        let ordering_mir = self.types.translate(self.ctx, ordering)?;
        self.transmute(cmp, ordering_mir)
    }

    /// The distance from `base` to `ptr` in elements of the pointee (exact: the caller
    /// guarantees a multiple), as `isize` or `usize`.
    fn offset_from(
        &mut self,
        instance: &Instance,
        ptr: Value,
        base: Value,
        unsigned: bool,
    ) -> TResult<Value> {
        let size = layout(type_arg(instance, 0)?)?.size.bytes() as u128;
        if size == 0 {
            unsupported!("`offset_from` between pointers to a zero-sized type");
        }
        let int_ty = pliron::builtin::types::IntegerType::get(
            self.ctx,
            64,
            if unsigned {
                pliron::builtin::types::Signedness::Unsigned
            } else {
                pliron::builtin::types::Signedness::Signed
            },
        );
        let to_int = |this: &mut Self, p: Value| {
            this.emit(|ctx| PtrToIntOp::new(ctx, p, int_ty.into()))
                .result(this.ctx)
        };
        let (a, b) = (to_int(self, ptr), to_int(self, base));
        let bytes = self.emit(|ctx| SubOp::new(ctx, a, b)).result(self.ctx);
        if size == 1 {
            return Ok(bytes);
        }
        let size = self
            .emit(|ctx| ConstantOp::new_int(ctx, int_ty, size))
            .result(self.ctx);
        Ok(self
            .emit(|ctx| DivOp::new(ctx, bytes, size))
            .result(self.ctx))
    }

    /// `ptr` with its address and-ed with `mask`.
    fn ptr_mask(&mut self, ptr: Value, mask: Value) -> TResult<Value> {
        let usize_ty = usize_type(self.ctx);
        let ptr_ty = ptr.get_type(self.ctx);
        let address = self
            .emit(|ctx| PtrToIntOp::new(ctx, ptr, usize_ty.into()))
            .result(self.ctx);
        let mask = self
            .emit(|ctx| IntCastOp::new(ctx, mask, usize_ty.into()))
            .result(self.ctx);
        let masked = self
            .emit(|ctx| BitAndOp::new(ctx, address, mask))
            .result(self.ctx);
        Ok(self
            .emit(|ctx| IntToPtrOp::new(ctx, masked, ptr_ty))
            .result(self.ctx))
    }

    /// `size_of_val` / `align_of_val` of the pointee of `ptr`: fixed for a sized type; for a
    /// slice, `str` or a struct ending in one, the offset of the slice plus its length times
    /// the element size, rounded up to the alignment.
    fn size_or_align_of_val(&mut self, pointee: Ty, ptr: Value, size: bool) -> TResult<Value> {
        if let TyKind::RigidTy(RigidTy::Dynamic(..)) = pointee.kind() {
            return self.dyn_size_or_align(ptr, size);
        }
        let shape = layout(pointee)?;
        let Some(tail) = super::types::slice_tail(pointee) else {
            let value = if size {
                shape.size.bytes() as u128
            } else {
                u128::from(shape.abi_align)
            };
            return Ok(self.usize_constant(value));
        };
        let elem = layout(super::types::slice_elem(tail))?;
        let align = shape.abi_align.max(elem.abi_align);
        if !size {
            return Ok(self.usize_constant(u128::from(align)));
        }
        let offset = tail_offset(pointee)?;
        let len = self.emit(|ctx| SliceLenOp::new(ctx, ptr)).result(self.ctx);
        let elem_size = self.usize_constant(elem.size.bytes() as u128);
        let tail_bytes = self
            .emit(|ctx| MulOp::new(ctx, len, elem_size))
            .result(self.ctx);
        if offset == 0 && align <= elem.abi_align {
            return Ok(tail_bytes);
        }
        // (offset + tail + align - 1) & !(align - 1)
        let bias = self.usize_constant(u128::from(offset + align - 1));
        let unrounded = self
            .emit(|ctx| AddOp::new(ctx, tail_bytes, bias))
            .result(self.ctx);
        let mask = self.usize_constant(u128::from(!(align - 1)));
        Ok(self
            .emit(|ctx| BitAndOp::new(ctx, unrounded, mask))
            .result(self.ctx))
    }

    /// `discriminant_value(ptr)`: the discriminant of the enum `ptr` points to, 0 for any other
    /// type (as `mem::discriminant` promises).
    fn discriminant_through(
        &mut self,
        instance: &Instance,
        ptr: Value,
        destination: &Place,
    ) -> TResult<Value> {
        let ty = type_arg(instance, 0)?;
        let to = self.place_type(destination)?;
        let to_int = self.int_type(to)?;
        let is_enum = matches!(
            ty.kind(),
            TyKind::RigidTy(RigidTy::Adt(def, _)) if matches!(def.kind(), rustc_public::ty::AdtKind::Enum)
        );
        if !is_enum {
            return Ok(self
                .emit(|ctx| ConstantOp::new_int(ctx, to_int, 0))
                .result(self.ctx));
        }
        if let Some(constant) = self.single_variant_discriminant(ty)? {
            return Ok(self
                .emit(|ctx| IntCastOp::new(ctx, constant, to_int.into()))
                .result(self.ctx));
        }
        let discr = self
            .emit(|ctx| GetDiscriminantOp::new(ctx, ptr))
            .result(self.ctx);
        Ok(self
            .emit(|ctx| IntCastOp::new(ctx, discr, to_int.into()))
            .result(self.ctx))
    }

    /// A `bool` constant.
    pub(crate) fn bool_constant(&mut self, value: bool) -> Value {
        self.emit(|ctx| ConstantOp::new_bool(ctx, value))
            .result(self.ctx)
    }

    /// A `usize` constant.
    pub(crate) fn usize_constant(&mut self, value: u128) -> Value {
        let usize_ty = usize_type(self.ctx);
        self.emit(|ctx| ConstantOp::new_int(ctx, usize_ty, value))
            .result(self.ctx)
    }

    /// `x.rotate_left(n)` as `(x << (n & m)) | (x >> ((0 - n) & m))`, `m` = bits - 1, which
    /// LLVM recognises as a rotate.
    fn rotate(&mut self, left: bool, values: &[Value]) -> TResult<Value> {
        let [x, n] = values[..] else {
            unsupported!("a rotate with {} arguments", values.len())
        };
        let ty = x.get_type(self.ctx);
        let Ok(int_ty) =
            pliron::r#type::TypedHandle::<pliron::builtin::types::IntegerType>::from_handle(
                ty, self.ctx,
            )
        else {
            unsupported!("rotating a non-integer")
        };
        let width = int_ty.deref(self.ctx).width();
        let unsigned = pliron::builtin::types::IntegerType::get(
            self.ctx,
            width,
            pliron::builtin::types::Signedness::Unsigned,
        );
        let xu = self
            .emit(|ctx| IntCastOp::new(ctx, x, unsigned.into()))
            .result(self.ctx);
        let n = self
            .emit(|ctx| IntCastOp::new(ctx, n, unsigned.into()))
            .result(self.ctx);
        let mask = self
            .emit(|ctx| ConstantOp::new_int(ctx, unsigned, u128::from(width - 1)))
            .result(self.ctx);
        let zero = self
            .emit(|ctx| ConstantOp::new_int(ctx, unsigned, 0))
            .result(self.ctx);
        let forward = self
            .emit(|ctx| BitAndOp::new(ctx, n, mask))
            .result(self.ctx);
        let negated = self.emit(|ctx| SubOp::new(ctx, zero, n)).result(self.ctx);
        let backward = self
            .emit(|ctx| BitAndOp::new(ctx, negated, mask))
            .result(self.ctx);
        let (to_high, to_low) = if left {
            (forward, backward)
        } else {
            (backward, forward)
        };
        let high = self
            .emit(|ctx| ShlOp::new(ctx, xu, to_high))
            .result(self.ctx);
        let low = self
            .emit(|ctx| ShrOp::new(ctx, xu, to_low))
            .result(self.ctx);
        let rotated = self
            .emit(|ctx| BitOrOp::new(ctx, high, low))
            .result(self.ctx);
        Ok(self
            .emit(|ctx| IntCastOp::new(ctx, rotated, ty))
            .result(self.ctx))
    }
}

/// What translating an intrinsic produced.
enum Outcome {
    /// Its result (`None` when there is none to store), and control goes on.
    Value(Option<Value>),
    /// The intrinsic ended the block (a trap, `unreachable`).
    Diverges,
}

/// The byte offset of the slice an unsized struct ends in (0 for a slice itself).
fn tail_offset(ty: Ty) -> TResult<u64> {
    let TyKind::RigidTy(RigidTy::Adt(def, args)) = ty.kind() else {
        return Ok(0);
    };
    let Some(last) = def
        .variants()
        .first()
        .and_then(|v| v.fields().last().map(|f| f.ty_with_args(&args)))
    else {
        return Ok(0);
    };
    let offset = match layout(ty)?.fields {
        rustc_public::abi::FieldsShape::Arbitrary { offsets } => {
            offsets.last().map(|o| o.bytes() as u64).unwrap_or_default()
        }
        _ => 0,
    };
    Ok(offset + tail_offset(last)?)
}

/// Type argument `index` of an intrinsic instance.
fn type_arg(instance: &Instance, index: usize) -> TResult<Ty> {
    match instance.args().0.get(index) {
        Some(GenericArgKind::Type(ty)) => Ok(*ty),
        _ => unsupported!("an intrinsic without its type argument"),
    }
}

#[cfg(test)]
/// `relative` in the toolchain's standard library source (`rust-src`), which must exist.
pub(crate) fn library_source(relative: &str) -> std::path::PathBuf {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let out = std::process::Command::new(rustc)
        .args(["--print", "sysroot"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("rustc runs");
    let sysroot = String::from_utf8(out.stdout).expect("a UTF-8 path");
    let path = std::path::Path::new(sysroot.trim())
        .join("lib/rustlib/src/rust/library")
        .join(relative);
    assert!(
        path.exists(),
        "{} is missing: the toolchain's `rust-src` component is needed",
        path.display()
    );
    path
}

#[cfg(test)]
/// The names of the intrinsics `core` declares: every `fn` after a `#[rustc_intrinsic]`
/// attribute in the toolchain's `library/core/src/intrinsics/` (`rust-src`).
pub(crate) fn declared_intrinsics() -> Vec<String> {
    let mut files = vec![library_source("core/src/intrinsics")];
    let mut names = Vec::new();
    while let Some(path) = files.pop() {
        if path.is_dir() {
            files.extend(std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
            continue;
        }
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        for (_, after) in text
            .match_indices("#[rustc_intrinsic]")
            .map(|(i, m)| (i, &text[i + m.len()..]))
        {
            let at = after.find("fn ").expect("an intrinsic is a function");
            let name: String = after[at + 3..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            names.push(name);
        }
    }
    names.sort();
    names.dedup();
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_sorted_without_duplicates() {
        for pair in TABLE.windows(2) {
            assert!(pair[0].0 < pair[1].0, "{} before {}", pair[0].0, pair[1].0);
        }
    }

    #[test]
    fn every_intrinsic_of_core_has_a_decision() {
        let declared = declared_intrinsics();
        assert!(
            declared.len() > 200,
            "only {} intrinsics found",
            declared.len()
        );
        let undecided: Vec<&String> = declared.iter().filter(|n| decision(n).is_none()).collect();
        assert!(
            undecided.is_empty(),
            "intrinsics of `core` without a decision in core_intrinsic.rs: {undecided:?}"
        );
        let stale: Vec<&str> = TABLE
            .iter()
            .map(|(name, _)| *name)
            .filter(|name| !declared.iter().any(|d| d == name))
            .collect();
        assert!(
            stale.is_empty(),
            "TABLE lists intrinsics `core` does not declare: {stale:?}"
        );
    }

    #[test]
    fn families_and_float_math_are_decided_by_name() {
        assert_eq!(decision("atomic_xadd"), Some(Decision::Atomic));
        assert_eq!(decision("sinf32"), Some(Decision::Math));
        assert_eq!(decision("round_ties_even_f64"), Some(Decision::Math));
        assert_eq!(decision("powif16"), Some(Decision::Math));
        assert_eq!(decision("simd_add"), Some(Decision::Simd));
        assert_eq!(
            decision("ptr_offset_from_unsigned"),
            Some(Decision::Translate(Lowering::OffsetFrom { unsigned: true }))
        );
        assert_eq!(decision("no_such_intrinsic"), None);
        assert_eq!(decision("sinf33"), None);
    }
}
