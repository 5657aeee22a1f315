//! Raw memory operations of `core::ptr` and `core::intrinsics`: bulk copies and fills
//! (`copy_nonoverlapping`, `copy`, `write_bytes`, LLVM's `memcpy` / `memmove` / `memset`) and
//! volatile accesses (`read_volatile`, `write_volatile`, and their unaligned forms).
//!
//! None of them is promoted by mem2reg: a slot they touch stays in memory.

use pliron::{
    builtin::{
        attributes::BoolAttr,
        op_interfaces::{NOpdsInterface, NResultsInterface, OneResultInterface},
        types::IntegerType,
    },
    common_traits::Verify,
    context::Context,
    derive::pliron_op,
    dict_key,
    identifier::Identifier,
    op::Op,
    operation::Operation,
    result::Result,
    r#type::Typed,
    value::Value,
};

use super::memory::{expect_index_operand, expect_ptr_operand, ptr_parts};
use super::{expect_type, expect_type_eq, invalid, opd, opd_ty, res, res_ty};
use crate::{attributes::AlignAttr, types::layout_of};

dict_key!(
    /// Whether a bulk memory op is volatile (a [BoolAttr]).
    ATTR_KEY_MIR_VOLATILE,
    "mir_volatile"
);

dict_key!(
    /// The alignment a volatile access assumes (an [AlignAttr]).
    ATTR_KEY_MIR_ALIGN,
    "mir_align"
);

/// The attribute of `op` under `key`, if it has one of type `A`.
fn get_attr<A: pliron::attribute::Attribute + Clone>(
    op: &dyn Op,
    ctx: &Context,
    key: &Identifier,
) -> Option<A> {
    op.get_operation()
        .deref(ctx)
        .attributes
        .get::<A>(key)
        .cloned()
}

/// Sets the attribute of `op` under `key`.
fn set_attr<A: pliron::attribute::Attribute>(
    op: &dyn Op,
    ctx: &Context,
    key: &Identifier,
    attr: A,
) {
    op.get_operation()
        .deref_mut(ctx)
        .attributes
        .set(key.clone(), attr);
}

/// What the second operand of a bulk op is.
#[derive(Clone, Copy)]
enum Second {
    /// A pointer to the destination's pointee type (the source of a copy).
    Source,
    /// An 8-bit integer (the byte of a fill).
    Byte,
}

/// Check the operands of a bulk op: a destination pointer to a type with a layout, the second
/// operand, an element count, and the volatile attribute.
fn verify_bulk(op: &dyn Op, ctx: &Context, second: Second) -> Result<()> {
    if get_attr::<BoolAttr>(op, ctx, &ATTR_KEY_MIR_VOLATILE).is_none() {
        return invalid(op, ctx, "missing volatile attribute");
    }
    let (pointee, _) = expect_ptr_operand(op, ctx, 0, "operand 0 (destination)")?;
    match second {
        Second::Source => {
            let (src_pointee, _) = expect_ptr_operand(op, ctx, 1, "operand 1 (source)")?;
            expect_type_eq(op, ctx, "the source's pointee", pointee, src_pointee)?;
        }
        Second::Byte => {
            let ty = opd_ty(op, ctx, 1);
            let ok = ty
                .deref(ctx)
                .downcast_ref::<IntegerType>()
                .is_some_and(|int| int.width() == 8 && !int.is_signless());
            expect_type(op, ctx, ok, "operand 1 (byte)", "ui8 or si8", ty)?;
        }
    }
    expect_index_operand(op, ctx, 2, "operand 2 (count)")?;
    if layout_of(ctx, pointee).is_none() {
        return invalid(op, ctx, "the pointee has no memory layout");
    }
    Ok(())
}

/// Declare a bulk memory op: `dst`, a second operand, an element count, and whether the access
/// is volatile.
macro_rules! bulk_op {
    ($(#[$doc:meta])* $name:ident, $opid:literal, $second:literal, second: $second_kind:ident) => {
        $(#[$doc])*
        #[pliron_op(
            name = $opid,
            format = "$0 `, ` $1 `, ` $2 ` volatile ` attr($mir_volatile, $BoolAttr)",
            interfaces = [NOpdsInterface<3>, NResultsInterface<0>]
        )]
        pub struct $name;

        impl $name {
            #[doc = concat!("The op on `dst`, `", $second, "` and `count` elements of `dst`'s pointee.")]
            pub fn new(
                ctx: &mut Context,
                dst: Value,
                second: Value,
                count: Value,
                volatile: bool,
            ) -> Self {
                let op = Operation::new(
                    ctx,
                    Self::get_concrete_op_info(),
                    vec![],
                    vec![dst, second, count],
                    vec![],
                    0,
                );
                let op = Self { op };
                set_attr(&op, ctx, &ATTR_KEY_MIR_VOLATILE, BoolAttr::new(volatile));
                op
            }

            /// The destination pointer.
            pub fn dst(&self, ctx: &Context) -> Value {
                opd(self, ctx, 0)
            }

            #[doc = concat!("The ", $second, " operand.")]
            pub fn second(&self, ctx: &Context) -> Value {
                opd(self, ctx, 1)
            }

            /// The number of elements (of the destination's pointee type).
            pub fn count(&self, ctx: &Context) -> Value {
                opd(self, ctx, 2)
            }

            /// Whether the access is volatile.
            pub fn is_volatile(&self, ctx: &Context) -> bool {
                get_attr::<BoolAttr>(self, ctx, &ATTR_KEY_MIR_VOLATILE).is_some_and(bool::from)
            }
        }

        impl Verify for $name {
            fn verify(&self, ctx: &Context) -> Result<()> {
                verify_bulk(self, ctx, Second::$second_kind)
            }
        }
    };
}

bulk_op!(
    /// Copies `count` values of `T` from `src` to `dst`, which do not overlap
    /// (`ptr::copy_nonoverlapping`, MIR's `CopyNonOverlapping` statement; LLVM's `memcpy`).
    ///
    /// Printed as `mir.copy_nonoverlapping dst, src, count volatile false`.
    ///
    /// | operand | type |
    /// |---------|------|
    /// | `dst`, `src` | `mir.ptr<T, _>` |
    /// | `count` | `ui64` or `si64` |
    CopyNonOverlappingOp,
    "mir.copy_nonoverlapping",
    "src",
    second: Source
);

bulk_op!(
    /// Copies `count` values of `T` from `src` to `dst`, which may overlap (`ptr::copy`; LLVM's
    /// `memmove`).
    ///
    /// Printed as `mir.copy dst, src, count volatile false`.
    ///
    /// | operand | type |
    /// |---------|------|
    /// | `dst`, `src` | `mir.ptr<T, _>` |
    /// | `count` | `ui64` or `si64` |
    CopyOp,
    "mir.copy",
    "src",
    second: Source
);

bulk_op!(
    /// Sets every byte of `count` values of `T` at `dst` to `byte` (`ptr::write_bytes`; LLVM's
    /// `memset`).
    ///
    /// Printed as `mir.write_bytes dst, byte, count volatile false`.
    ///
    /// | operand | type |
    /// |---------|------|
    /// | `dst` | `mir.ptr<T, _>` |
    /// | `byte` | `ui8` |
    /// | `count` | `ui64` or `si64` |
    WriteBytesOp,
    "mir.write_bytes",
    "byte",
    second: Byte
);

/// Check an alignment attribute: present and a power of two.
fn verify_align(op: &dyn Op, ctx: &Context, align: Option<AlignAttr>) -> Result<()> {
    match align {
        Some(AlignAttr(align)) if align.is_power_of_two() => Ok(()),
        Some(AlignAttr(align)) => {
            invalid(op, ctx, format!("alignment {align} is not a power of two"))
        }
        None => invalid(op, ctx, "missing alignment"),
    }
}

/// A volatile load (`ptr::read_volatile`, `unaligned_volatile_load`): never removed, merged or
/// reordered with other volatile accesses; `align` is what the address is known to be aligned
/// to (the type's alignment, or 1 for an unaligned access).
///
/// Printed as `v = mir.volatile_load p align A : T`.
///
/// | operand / result | type |
/// |---------|------|
/// | `ptr` | `mir.ptr<T, _>` |
/// | `res` | `T` |
#[pliron_op(
    name = "mir.volatile_load",
    format = "$0 ` align ` attr($mir_align, $AlignAttr) ` : ` type($0)",
    interfaces = [NOpdsInterface<1>, OneResultInterface]
)]
pub struct VolatileLoadOp;

impl VolatileLoadOp {
    /// A volatile load of the value `ptr` points to, assuming `align`.
    ///
    /// Panics if `ptr` is not a `mir.ptr`.
    pub fn new(ctx: &mut Context, ptr: Value, align: u64) -> Self {
        let ty = ptr_parts(ctx, ptr.get_type(ctx))
            .expect("mir.volatile_load needs a mir.ptr operand")
            .0;
        let op = Operation::new(
            ctx,
            Self::get_concrete_op_info(),
            vec![ty],
            vec![ptr],
            vec![],
            0,
        );
        let op = Self { op };
        set_attr(&op, ctx, &ATTR_KEY_MIR_ALIGN, AlignAttr(align));
        op
    }

    /// The address.
    pub fn ptr(&self, ctx: &Context) -> Value {
        opd(self, ctx, 0)
    }

    /// The assumed alignment of the address.
    pub fn align(&self, ctx: &Context) -> u64 {
        get_attr::<AlignAttr>(self, ctx, &ATTR_KEY_MIR_ALIGN).map_or(1, |a| a.0)
    }

    /// The loaded value.
    pub fn result(&self, ctx: &Context) -> Value {
        res(self, ctx, 0)
    }
}

impl Verify for VolatileLoadOp {
    fn verify(&self, ctx: &Context) -> Result<()> {
        verify_align(
            self,
            ctx,
            get_attr::<AlignAttr>(self, ctx, &ATTR_KEY_MIR_ALIGN),
        )?;
        let (pointee, _) = expect_ptr_operand(self, ctx, 0, "operand")?;
        expect_type_eq(self, ctx, "result", pointee, res_ty(self, ctx, 0))
    }
}

/// A volatile store (`ptr::write_volatile`, `unaligned_volatile_store`); `align` as for
/// `mir.volatile_load`.
///
/// Printed as `mir.volatile_store *p = v align A`.
///
/// | operand | type |
/// |---------|------|
/// | `value` | `T` |
/// | `ptr` | `mir.ptr<T, _>` |
#[pliron_op(
    name = "mir.volatile_store",
    format = "`*` $1 ` = ` $0 ` align ` attr($mir_align, $AlignAttr)",
    interfaces = [NOpdsInterface<2>, NResultsInterface<0>],
    attributes = (mir_load_align: AlignAttr)
)]
pub struct VolatileStoreOp;

impl VolatileStoreOp {
    /// A volatile store of `value` at `ptr`, assuming `align`.
    pub fn new(ctx: &mut Context, value: Value, ptr: Value, align: u64) -> Self {
        let op = Operation::new(
            ctx,
            Self::get_concrete_op_info(),
            vec![],
            vec![value, ptr],
            vec![],
            0,
        );
        let op = Self { op };
        set_attr(&op, ctx, &ATTR_KEY_MIR_ALIGN, AlignAttr(align));
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

    /// The assumed alignment of the address.
    pub fn align(&self, ctx: &Context) -> u64 {
        get_attr::<AlignAttr>(self, ctx, &ATTR_KEY_MIR_ALIGN).map_or(1, |a| a.0)
    }
}

impl Verify for VolatileStoreOp {
    fn verify(&self, ctx: &Context) -> Result<()> {
        verify_align(
            self,
            ctx,
            get_attr::<AlignAttr>(self, ctx, &ATTR_KEY_MIR_ALIGN),
        )?;
        let (pointee, _) = expect_ptr_operand(self, ctx, 1, "operand 1 (address)")?;
        expect_type_eq(
            self,
            ctx,
            "operand 0 (value)",
            pointee,
            opd_ty(self, ctx, 0),
        )
    }
}
