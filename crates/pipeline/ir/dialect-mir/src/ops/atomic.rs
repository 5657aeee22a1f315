//! Atomic memory operations with Rust's orderings and a GPU scope: `mir.atomic_load`,
//! `mir.atomic_store`, `mir.atomic_rmw`, `mir.atomic_cmpxchg` and `mir.fence`.
//!
//! The value type `T` is an integer of 8, 16, 32 or 64 bits (the translator turns atomics on
//! pointers into atomics on `usize`), or `f32`/`f64` for loads, stores, `add` and `sub`. Orderings
//! are Rust's ([AtomicOrdering]); the [SyncScope] says which threads the operation
//! synchronises with (`.cta`, `.gpu`, `.sys` in PTX). Every op has a side effect: none is
//! ever removed as dead code.

use pliron::{
    builtin::op_interfaces::{NOpdsInterface, NResultsInterface, OneResultInterface},
    combine::{Parser, many1, parser::char::alpha_num, satisfy},
    common_traits::Verify,
    context::Context,
    derive::pliron_op,
    impl_printable_for_display, input_error,
    op::Op,
    operation::Operation,
    parsable::{IntoParseResult, Parsable, ParseResult, StateStream, StreamLocation},
    result::Result,
    r#type::{TypeHandle, Typed},
    value::Value,
};
use thiserror::Error;

use super::{expect_type, expect_type_eq, invalid, memory::expect_ptr_operand, opd, res, res_ty};
use crate::types::{bool_type, is_float};

/// An attribute that is one of a fixed set of lower-case keywords, as `mir.math_fn` is.
macro_rules! keyword_attr {
    (
        $(#[$meta:meta])*
        $name:ident = $attr:literal {
            $($(#[$vmeta:meta])* $variant:ident = $word:literal,)+
        }
    ) => {
        $(#[$meta])*
        #[pliron::derive::pliron_attr(name = $attr, verifier = "succ")]
        #[derive(PartialEq, Eq, Clone, Copy, Debug, Hash)]
        pub enum $name {
            $($(#[$vmeta])* $variant,)+
        }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &[$name] = &[$($name::$variant),+];

            /// The keyword, as printed.
            pub fn name(self) -> &'static str {
                match self {
                    $($name::$variant => $word,)+
                }
            }
        }

        impl core::fmt::Display for $name {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.write_str(self.name())
            }
        }

        impl_printable_for_display!($name);

        impl Parsable for $name {
            type Arg = ();
            type Parsed = Self;

            fn parse<'a>(
                state_stream: &mut StateStream<'a>,
                _arg: Self::Arg,
            ) -> ParseResult<'a, Self::Parsed> {
                let loc = state_stream.loc();
                let (word, _): (String, _) = many1(alpha_num().or(satisfy(|c| c == '_')))
                    .parse_stream(state_stream)
                    .into_result()?;
                $name::ALL
                    .iter()
                    .copied()
                    .find(|value| value.name() == word)
                    .ok_or_else(|| input_error!(loc, UnknownKeyword($attr, word)))
                    .into_parse_result()
            }
        }
    };
}

/// A keyword that its attribute does not have.
#[derive(Debug, Error)]
#[error("{0}: unknown keyword `{1}`")]
pub struct UnknownKeyword(pub &'static str, pub String);

keyword_attr! {
    /// Rust's memory orderings (`core::sync::atomic::Ordering`).
    AtomicOrdering = "mir.atomic_ordering" {
        /// Atomicity only.
        Relaxed = "relaxed",
        /// Later accesses stay after this load.
        Acquire = "acquire",
        /// Earlier accesses stay before this store.
        Release = "release",
        /// Both, for read-modify-writes.
        AcqRel = "acq_rel",
        /// One total order of all `SeqCst` operations, in addition to `AcqRel`.
        SeqCst = "seq_cst",
    }
}

keyword_attr! {
    /// The threads an atomic operation synchronises with.
    SyncScope = "mir.sync_scope" {
        /// Only the thread itself: a compiler fence, no instruction (fences only).
        Thread = "thread",
        /// The thread block (PTX `.cta`).
        Block = "block",
        /// The GPU (PTX `.gpu`).
        Device = "device",
        /// The system: the host and other GPUs too (PTX `.sys`).
        System = "system",
    }
}

keyword_attr! {
    /// The operation of a `mir.atomic_rmw`. `max` and `min` compare as `T` is signed or
    /// unsigned.
    RmwKind = "mir.rmw_kind" {
        /// Stores the operand.
        Xchg = "xchg",
        /// Adds the operand (wrapping for integers).
        Add = "add",
        /// Subtracts the operand (wrapping).
        Sub = "sub",
        /// Bitwise and.
        And = "and",
        /// `!(old & operand)`.
        Nand = "nand",
        /// Bitwise or.
        Or = "or",
        /// Bitwise exclusive or.
        Xor = "xor",
        /// The larger of the two.
        Max = "max",
        /// The smaller of the two.
        Min = "min",
    }
}

impl AtomicOrdering {
    /// Whether a load may have this ordering (not `Release` or `AcqRel`).
    pub fn valid_for_load(self) -> bool {
        !matches!(self, AtomicOrdering::Release | AtomicOrdering::AcqRel)
    }

    /// Whether a store may have this ordering (not `Acquire` or `AcqRel`).
    pub fn valid_for_store(self) -> bool {
        !matches!(self, AtomicOrdering::Acquire | AtomicOrdering::AcqRel)
    }
}

/// Whether `ty` is a value type of atomics: an integer of 8 to 64 bits, `f32` or `f64`.
pub fn is_atomic_value_type(ctx: &Context, ty: TypeHandle) -> bool {
    atomic_int_width(ctx, ty).is_some() || is_float(ctx, ty)
}

/// The width of `ty` if it is a signed or unsigned integer of 8, 16, 32 or 64 bits.
pub fn atomic_int_width(ctx: &Context, ty: TypeHandle) -> Option<u32> {
    ty.deref(ctx)
        .downcast_ref::<pliron::builtin::types::IntegerType>()
        .filter(|int| !int.is_signless() && matches!(int.width(), 8 | 16 | 32 | 64))
        .map(|int| int.width())
}

/// Whether `ty` is a signed or unsigned 128-bit integer: the type of the compare-exchanges
/// and exchanges that sm_90 has as `atom.cas.b128` / `atom.exch.b128` (no other atomic
/// accepts it).
pub fn is_wide_atomic_int(ctx: &Context, ty: TypeHandle) -> bool {
    ty.deref(ctx)
        .downcast_ref::<pliron::builtin::types::IntegerType>()
        .is_some_and(|int| !int.is_signless() && int.width() == 128)
}

/// The PTX ISA version (times ten) that the 128-bit atomics need: 8.3.
pub const PTX_ISA_OF_128_BIT_ATOMICS: u32 = 83;

/// The oldest architecture with 128-bit atomics (`atom.cas.b128`): sm_90.
pub const SM_OF_128_BIT_ATOMICS: u32 = 90;

/// Whether the atomic op `op` is on a 128-bit value (what [PTX_ISA_OF_128_BIT_ATOMICS] is
/// needed for).
pub fn is_128_bit_atomic(ctx: &Context, op: pliron::context::Ptr<Operation>) -> bool {
    let is_atomic = Operation::get_op::<AtomicCmpxchgOp>(op, ctx).is_some()
        || Operation::get_op::<AtomicRmwOp>(op, ctx).is_some();
    let op = op.deref(ctx);
    is_atomic && op.get_num_results() > 0 && is_wide_atomic_int(ctx, op.get_result(0).get_type(ctx))
}

/// Check the pointer operand `idx` of an atomic op: it points to `T` (returned), a 128-bit
/// integer too when `wide` (compare-exchange, exchange).
fn expect_value_ptr(op: &dyn Op, ctx: &Context, idx: usize, wide: bool) -> Result<TypeHandle> {
    let (pointee, _) = expect_ptr_operand(op, ctx, idx, "the pointer")?;
    let ok = is_atomic_value_type(ctx, pointee) || (wide && is_wide_atomic_int(ctx, pointee));
    expect_type(
        op,
        ctx,
        ok,
        "the pointee",
        "an integer of 8 to 64 bits, f32 or f64",
        pointee,
    )?;
    Ok(pointee)
}

/// Fail for the `thread` scope, which only fences have.
fn expect_memory_scope(op: &dyn Op, ctx: &Context, scope: Option<SyncScope>) -> Result<()> {
    match scope {
        None => invalid(op, ctx, "missing scope attribute"),
        Some(SyncScope::Thread) => invalid(op, ctx, "the thread scope is for fences only"),
        Some(_) => Ok(()),
    }
}

/// Atomically loads the `T` at `ptr`.
///
/// Printed as `r = mir.atomic_load <ordering> <scope> ptr : T`.
///
/// | operand / result | type |
/// |---------|------|
/// | `ptr` | `mir.ptr<T>` |
/// | `res` | `T` |
#[pliron_op(
    name = "mir.atomic_load",
    format = "attr($mir_atomic_load_ordering, $AtomicOrdering) ` ` attr($mir_atomic_load_scope, $SyncScope) ` ` $0 ` : ` type($0)",
    interfaces = [NOpdsInterface<1>, OneResultInterface],
    attributes = (mir_atomic_load_ordering: AtomicOrdering, mir_atomic_load_scope: SyncScope)
)]
pub struct AtomicLoadOp;

impl AtomicLoadOp {
    /// Load from `ptr`, a `mir.ptr<T>`; the result has type `ty` (`T`).
    pub fn new(
        ctx: &mut Context,
        ptr: Value,
        ty: TypeHandle,
        ordering: AtomicOrdering,
        scope: SyncScope,
    ) -> Self {
        let op = Operation::new(
            ctx,
            Self::get_concrete_op_info(),
            vec![ty],
            vec![ptr],
            vec![],
            0,
        );
        let op = Self { op };
        op.set_attr_mir_atomic_load_ordering(ctx, ordering);
        op.set_attr_mir_atomic_load_scope(ctx, scope);
        op
    }

    /// The address.
    pub fn ptr(&self, ctx: &Context) -> Value {
        opd(self, ctx, 0)
    }

    /// The ordering.
    pub fn ordering(&self, ctx: &Context) -> AtomicOrdering {
        *self
            .get_attr_mir_atomic_load_ordering(ctx)
            .expect("verified")
    }

    /// The scope.
    pub fn scope(&self, ctx: &Context) -> SyncScope {
        *self.get_attr_mir_atomic_load_scope(ctx).expect("verified")
    }

    /// The loaded value.
    pub fn result(&self, ctx: &Context) -> Value {
        res(self, ctx, 0)
    }
}

impl Verify for AtomicLoadOp {
    fn verify(&self, ctx: &Context) -> Result<()> {
        let ty = expect_value_ptr(self, ctx, 0, false)?;
        expect_type_eq(self, ctx, "result", ty, res_ty(self, ctx, 0))?;
        expect_memory_scope(
            self,
            ctx,
            self.get_attr_mir_atomic_load_scope(ctx).map(|s| *s),
        )?;
        match self.get_attr_mir_atomic_load_ordering(ctx).map(|o| *o) {
            None => invalid(self, ctx, "missing ordering attribute"),
            Some(o) if !o.valid_for_load() => invalid(self, ctx, format!("a load cannot be {o}")),
            Some(_) => Ok(()),
        }
    }
}

/// Atomically stores `value` at `ptr`.
///
/// Printed as `mir.atomic_store <ordering> <scope> value, ptr`.
///
/// | operand | type |
/// |---------|------|
/// | `value` | `T` |
/// | `ptr` | `mir.ptr<T>` |
#[pliron_op(
    name = "mir.atomic_store",
    format = "attr($mir_atomic_store_ordering, $AtomicOrdering) ` ` attr($mir_atomic_store_scope, $SyncScope) ` ` $0 `, ` $1",
    interfaces = [NOpdsInterface<2>, NResultsInterface<0>],
    attributes = (mir_atomic_store_ordering: AtomicOrdering, mir_atomic_store_scope: SyncScope)
)]
pub struct AtomicStoreOp;

impl AtomicStoreOp {
    /// Store `value` at `ptr`.
    pub fn new(
        ctx: &mut Context,
        value: Value,
        ptr: Value,
        ordering: AtomicOrdering,
        scope: SyncScope,
    ) -> Self {
        let op = Operation::new(
            ctx,
            Self::get_concrete_op_info(),
            vec![],
            vec![value, ptr],
            vec![],
            0,
        );
        let op = Self { op };
        op.set_attr_mir_atomic_store_ordering(ctx, ordering);
        op.set_attr_mir_atomic_store_scope(ctx, scope);
        op
    }

    /// The stored value.
    pub fn value(&self, ctx: &Context) -> Value {
        opd(self, ctx, 0)
    }

    /// The address.
    pub fn ptr(&self, ctx: &Context) -> Value {
        opd(self, ctx, 1)
    }

    /// The ordering.
    pub fn ordering(&self, ctx: &Context) -> AtomicOrdering {
        *self
            .get_attr_mir_atomic_store_ordering(ctx)
            .expect("verified")
    }

    /// The scope.
    pub fn scope(&self, ctx: &Context) -> SyncScope {
        *self.get_attr_mir_atomic_store_scope(ctx).expect("verified")
    }
}

impl Verify for AtomicStoreOp {
    fn verify(&self, ctx: &Context) -> Result<()> {
        let ty = expect_value_ptr(self, ctx, 1, false)?;
        expect_type_eq(self, ctx, "operand 0", ty, self.value(ctx).get_type(ctx))?;
        expect_memory_scope(
            self,
            ctx,
            self.get_attr_mir_atomic_store_scope(ctx).map(|s| *s),
        )?;
        match self.get_attr_mir_atomic_store_ordering(ctx).map(|o| *o) {
            None => invalid(self, ctx, "missing ordering attribute"),
            Some(o) if !o.valid_for_store() => invalid(self, ctx, format!("a store cannot be {o}")),
            Some(_) => Ok(()),
        }
    }
}

/// Atomically replaces the `T` at `ptr` by `old <kind> value` and returns `old`.
///
/// Printed as `r = mir.atomic_rmw <kind> <ordering> <scope> ptr, value : T`.
///
/// | operand / result | type |
/// |---------|------|
/// | `ptr` | `mir.ptr<T>` |
/// | `value` | `T`: an integer for every kind, `f32`/`f64` for `add` and `sub` |
/// | `res` | `T` |
#[pliron_op(
    name = "mir.atomic_rmw",
    format = "attr($mir_atomic_rmw_kind, $RmwKind) ` ` attr($mir_atomic_rmw_ordering, $AtomicOrdering) ` ` attr($mir_atomic_rmw_scope, $SyncScope) ` ` $0 `, ` $1 ` : ` type($0)",
    interfaces = [NOpdsInterface<2>, OneResultInterface],
    attributes = (mir_atomic_rmw_kind: RmwKind, mir_atomic_rmw_ordering: AtomicOrdering, mir_atomic_rmw_scope: SyncScope)
)]
pub struct AtomicRmwOp;

impl AtomicRmwOp {
    /// `old = *ptr; *ptr = old <kind> value; old`.
    pub fn new(
        ctx: &mut Context,
        kind: RmwKind,
        ptr: Value,
        value: Value,
        ordering: AtomicOrdering,
        scope: SyncScope,
    ) -> Self {
        let ty = value.get_type(ctx);
        let op = Operation::new(
            ctx,
            Self::get_concrete_op_info(),
            vec![ty],
            vec![ptr, value],
            vec![],
            0,
        );
        let op = Self { op };
        op.set_attr_mir_atomic_rmw_kind(ctx, kind);
        op.set_attr_mir_atomic_rmw_ordering(ctx, ordering);
        op.set_attr_mir_atomic_rmw_scope(ctx, scope);
        op
    }

    /// The operation.
    pub fn kind(&self, ctx: &Context) -> RmwKind {
        *self.get_attr_mir_atomic_rmw_kind(ctx).expect("verified")
    }

    /// The address.
    pub fn ptr(&self, ctx: &Context) -> Value {
        opd(self, ctx, 0)
    }

    /// The operand combined with the old value.
    pub fn value(&self, ctx: &Context) -> Value {
        opd(self, ctx, 1)
    }

    /// The ordering.
    pub fn ordering(&self, ctx: &Context) -> AtomicOrdering {
        *self
            .get_attr_mir_atomic_rmw_ordering(ctx)
            .expect("verified")
    }

    /// The scope.
    pub fn scope(&self, ctx: &Context) -> SyncScope {
        *self.get_attr_mir_atomic_rmw_scope(ctx).expect("verified")
    }

    /// The old value.
    pub fn result(&self, ctx: &Context) -> Value {
        res(self, ctx, 0)
    }
}

impl Verify for AtomicRmwOp {
    fn verify(&self, ctx: &Context) -> Result<()> {
        let exchange = self.get_attr_mir_atomic_rmw_kind(ctx).map(|k| *k) == Some(RmwKind::Xchg);
        let ty = expect_value_ptr(self, ctx, 0, exchange)?;
        expect_type_eq(self, ctx, "operand 1", ty, self.value(ctx).get_type(ctx))?;
        expect_type_eq(self, ctx, "result", ty, res_ty(self, ctx, 0))?;
        expect_memory_scope(
            self,
            ctx,
            self.get_attr_mir_atomic_rmw_scope(ctx).map(|s| *s),
        )?;
        if self.get_attr_mir_atomic_rmw_ordering(ctx).is_none() {
            return invalid(self, ctx, "missing ordering attribute");
        }
        match self.get_attr_mir_atomic_rmw_kind(ctx).map(|k| *k) {
            None => invalid(self, ctx, "missing kind attribute"),
            Some(kind) if !matches!(kind, RmwKind::Add | RmwKind::Sub) && is_float(ctx, ty) => {
                invalid(self, ctx, format!("{kind} on a float"))
            }
            Some(_) => Ok(()),
        }
    }
}

/// Atomically: if the `T` at `ptr` equals `expected`, replaces it by `new`. Returns the old
/// value and whether it was replaced. `failure` orders the load when it was not.
///
/// Printed as `r, ok = mir.atomic_cmpxchg <success> <failure> <scope> ptr, expected, new : T, i1`.
///
/// | operand / result | type |
/// |---------|------|
/// | `ptr` | `mir.ptr<T>`, `T` an integer |
/// | `expected`, `new` | `T` |
/// | `res0` | `T` |
/// | `res1` | `i1` |
#[pliron_op(
    name = "mir.atomic_cmpxchg",
    format = "attr($mir_cmpxchg_success, $AtomicOrdering) ` ` attr($mir_cmpxchg_failure, $AtomicOrdering) ` ` attr($mir_cmpxchg_scope, $SyncScope) ` ` $0 `, ` $1 `, ` $2 ` : ` types(CharSpace(`,`))",
    interfaces = [NOpdsInterface<3>, NResultsInterface<2>],
    attributes = (mir_cmpxchg_success: AtomicOrdering, mir_cmpxchg_failure: AtomicOrdering, mir_cmpxchg_scope: SyncScope)
)]
pub struct AtomicCmpxchgOp;

impl AtomicCmpxchgOp {
    /// Compare the value at `ptr` with `expected` and replace it by `new` when equal.
    pub fn new(
        ctx: &mut Context,
        ptr: Value,
        expected: Value,
        new: Value,
        (success, failure): (AtomicOrdering, AtomicOrdering),
        scope: SyncScope,
    ) -> Self {
        let ty = expected.get_type(ctx);
        let flag = bool_type(ctx).into();
        let op = Operation::new(
            ctx,
            Self::get_concrete_op_info(),
            vec![ty, flag],
            vec![ptr, expected, new],
            vec![],
            0,
        );
        let op = Self { op };
        op.set_attr_mir_cmpxchg_success(ctx, success);
        op.set_attr_mir_cmpxchg_failure(ctx, failure);
        op.set_attr_mir_cmpxchg_scope(ctx, scope);
        op
    }

    /// The address.
    pub fn ptr(&self, ctx: &Context) -> Value {
        opd(self, ctx, 0)
    }

    /// The value compared with.
    pub fn expected(&self, ctx: &Context) -> Value {
        opd(self, ctx, 1)
    }

    /// The value stored on success.
    pub fn new_value(&self, ctx: &Context) -> Value {
        opd(self, ctx, 2)
    }

    /// The orderings on success and on failure.
    pub fn orderings(&self, ctx: &Context) -> (AtomicOrdering, AtomicOrdering) {
        (
            *self.get_attr_mir_cmpxchg_success(ctx).expect("verified"),
            *self.get_attr_mir_cmpxchg_failure(ctx).expect("verified"),
        )
    }

    /// The scope.
    pub fn scope(&self, ctx: &Context) -> SyncScope {
        *self.get_attr_mir_cmpxchg_scope(ctx).expect("verified")
    }

    /// The old value.
    pub fn old(&self, ctx: &Context) -> Value {
        res(self, ctx, 0)
    }

    /// Whether `new` was stored.
    pub fn success(&self, ctx: &Context) -> Value {
        res(self, ctx, 1)
    }
}

impl Verify for AtomicCmpxchgOp {
    fn verify(&self, ctx: &Context) -> Result<()> {
        let ty = expect_value_ptr(self, ctx, 0, true)?;
        expect_type(
            self,
            ctx,
            atomic_int_width(ctx, ty).is_some() || is_wide_atomic_int(ctx, ty),
            "the pointee",
            "an integer of 8 to 64 bits, or of 128 bits",
            ty,
        )?;
        for (idx, what) in [(1, "operand 1"), (2, "operand 2")] {
            expect_type_eq(self, ctx, what, ty, opd(self, ctx, idx).get_type(ctx))?;
        }
        expect_type_eq(self, ctx, "result 0", ty, res_ty(self, ctx, 0))?;
        expect_type_eq(
            self,
            ctx,
            "result 1",
            bool_type(ctx).into(),
            res_ty(self, ctx, 1),
        )?;
        expect_memory_scope(self, ctx, self.get_attr_mir_cmpxchg_scope(ctx).map(|s| *s))?;
        if self.get_attr_mir_cmpxchg_success(ctx).is_none() {
            return invalid(self, ctx, "missing success ordering attribute");
        }
        match self.get_attr_mir_cmpxchg_failure(ctx).map(|o| *o) {
            None => invalid(self, ctx, "missing failure ordering attribute"),
            Some(o) if !o.valid_for_load() => {
                invalid(self, ctx, format!("the failure ordering cannot be {o}"))
            }
            Some(_) => Ok(()),
        }
    }
}

/// Orders memory accesses around it for the threads of `scope` (`thread`: for the compiler
/// only, as `core::sync::atomic::compiler_fence`).
///
/// Printed as `mir.fence <ordering> <scope>`.
#[pliron_op(
    name = "mir.fence",
    format = "attr($mir_fence_ordering, $AtomicOrdering) ` ` attr($mir_fence_scope, $SyncScope)",
    interfaces = [NOpdsInterface<0>, NResultsInterface<0>],
    attributes = (mir_fence_ordering: AtomicOrdering, mir_fence_scope: SyncScope)
)]
pub struct FenceOp;

impl FenceOp {
    /// A fence.
    pub fn new(ctx: &mut Context, ordering: AtomicOrdering, scope: SyncScope) -> Self {
        let op = Operation::new(ctx, Self::get_concrete_op_info(), vec![], vec![], vec![], 0);
        let op = Self { op };
        op.set_attr_mir_fence_ordering(ctx, ordering);
        op.set_attr_mir_fence_scope(ctx, scope);
        op
    }

    /// The ordering.
    pub fn ordering(&self, ctx: &Context) -> AtomicOrdering {
        *self.get_attr_mir_fence_ordering(ctx).expect("verified")
    }

    /// The scope.
    pub fn scope(&self, ctx: &Context) -> SyncScope {
        *self.get_attr_mir_fence_scope(ctx).expect("verified")
    }
}

impl Verify for FenceOp {
    fn verify(&self, ctx: &Context) -> Result<()> {
        if self.get_attr_mir_fence_scope(ctx).is_none() {
            return invalid(self, ctx, "missing scope attribute");
        }
        match self.get_attr_mir_fence_ordering(ctx).map(|o| *o) {
            None => invalid(self, ctx, "missing ordering attribute"),
            Some(AtomicOrdering::Relaxed) => invalid(self, ctx, "a fence cannot be relaxed"),
            Some(_) => Ok(()),
        }
    }
}
