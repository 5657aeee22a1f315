//! Constants: `mir.constant` and `mir.undef`.

use std::num::NonZero;

use pliron::{
    attribute::{AttrObj, attr_cast},
    builtin::{
        attr_interfaces::{FloatAttr, TypedAttrInterface},
        attributes::{FPDoubleAttr, FPSingleAttr, IntegerAttr},
        op_interfaces::{NOpdsInterface, OneResultInterface},
        types::IntegerType,
    },
    common_traits::Verify,
    context::Context,
    derive::pliron_op,
    op::Op,
    operation::Operation,
    result::Result,
    r#type::{TypeHandle, TypedHandle},
    utils::apint::APInt,
    value::Value,
};

use super::{expect_type, expect_type_eq, invalid, no_side_effects};
use crate::types::{bool_type, is_float, is_int_or_bool};

/// A constant integer, `bool` or float. The value is a `builtin.integer` attribute (of the
/// result's integer type, `i1` for a `bool`) or a `builtin.single` / `builtin.double` attribute.
///
/// Printed as `v = mir.constant <attribute> : type`.
///
/// | result | type |
/// |--------|------|
/// | `res` | the attribute's type |
#[pliron_op(
    name = "mir.constant",
    format = "`<` $mir_constant_value `>` ` : ` type($0)",
    interfaces = [NOpdsInterface<0>, OneResultInterface],
    attributes = (mir_constant_value)
)]
pub struct ConstantOp;

impl ConstantOp {
    /// A constant holding `value`, an [IntegerAttr], `FPHalfAttr`, [FPSingleAttr] or
    /// [FPDoubleAttr].
    pub fn new(ctx: &mut Context, value: AttrObj) -> Self {
        let ty = attr_cast::<dyn TypedAttrInterface>(&*value)
            .expect("mir.constant value must have a type")
            .get_type(ctx);
        let op = Operation::new(
            ctx,
            Self::get_concrete_op_info(),
            vec![ty],
            vec![],
            vec![],
            0,
        );
        let op = Self { op };
        op.set_attr_mir_constant_value(ctx, value);
        op
    }

    /// An integer constant of type `ty` whose bits are the low bits of `bits` (pass a negative
    /// value as its two's complement, e.g. `-1i64 as u128`).
    pub fn new_int(ctx: &mut Context, ty: TypedHandle<IntegerType>, bits: u128) -> Self {
        let width = ty.deref(ctx).width() as usize;
        let width = NonZero::new(width).expect("integer types have a non-zero width");
        let value = IntegerAttr::new(ty, APInt::from_u128(bits, width));
        Self::new(ctx, Box::new(value))
    }

    /// A `bool` constant (type `i1`).
    pub fn new_bool(ctx: &mut Context, value: bool) -> Self {
        let ty = bool_type(ctx);
        Self::new_int(ctx, ty, u128::from(value))
    }

    /// An `f16` constant of the IEEE binary16 `bits`.
    pub fn new_f16(ctx: &mut Context, bits: u16) -> Self {
        use pliron::utils::apfloat::{Float, Half};
        Self::new(
            ctx,
            Box::new(pliron::builtin::attributes::FPHalfAttr(Half::from_bits(
                u128::from(bits),
            ))),
        )
    }

    /// An `f32` constant.
    pub fn new_f32(ctx: &mut Context, value: f32) -> Self {
        Self::new(ctx, Box::new(FPSingleAttr::from(value)))
    }

    /// An `f64` constant.
    pub fn new_f64(ctx: &mut Context, value: f64) -> Self {
        Self::new(ctx, Box::new(FPDoubleAttr::from(value)))
    }

    /// The value attribute.
    pub fn value(&self, ctx: &Context) -> AttrObj {
        self.get_attr_mir_constant_value(ctx)
            .expect("mir.constant has a value")
            .clone()
    }

    /// The value, if this is an integer or `bool` constant.
    pub fn int_value(&self, ctx: &Context) -> Option<IntegerAttr> {
        self.get_attr_mir_constant_value(ctx)?
            .downcast_ref::<IntegerAttr>()
            .cloned()
    }

    /// The result.
    pub fn result(&self, ctx: &Context) -> Value {
        self.get_result(ctx)
    }
}

impl Verify for ConstantOp {
    fn verify(&self, ctx: &Context) -> Result<()> {
        let Some(value) = self.get_attr_mir_constant_value(ctx) else {
            return invalid(self, ctx, "missing value attribute");
        };
        let is_scalar_attr =
            value.is::<IntegerAttr>() || attr_cast::<dyn FloatAttr>(&**value).is_some();
        let Some(typed) = attr_cast::<dyn TypedAttrInterface>(&**value).filter(|_| is_scalar_attr)
        else {
            return invalid(
                self,
                ctx,
                "value must be a builtin.integer, builtin.single or builtin.double attribute",
            );
        };
        let value_ty = typed.get_type(ctx);
        let result_ty = self.result_type(ctx);
        expect_type(
            self,
            ctx,
            is_int_or_bool(ctx, result_ty) || is_float(ctx, result_ty),
            "result",
            "an integer, bool or float",
            result_ty,
        )?;
        expect_type_eq(self, ctx, "result", value_ty, result_ty)
    }
}

/// An undefined value of any type: the value of a read of uninitialised memory, or a
/// placeholder (mem2reg uses it for a slot read before any write).
///
/// Printed as `v = mir.undef : type`.
#[pliron_op(
    name = "mir.undef",
    format = "`: ` type($0)",
    interfaces = [NOpdsInterface<0>, OneResultInterface],
    verifier = "succ"
)]
pub struct UndefOp;

impl UndefOp {
    /// An undefined value of type `ty`.
    pub fn new(ctx: &mut Context, ty: TypeHandle) -> Self {
        let op = Operation::new(
            ctx,
            Self::get_concrete_op_info(),
            vec![ty],
            vec![],
            vec![],
            0,
        );
        Self { op }
    }

    /// The result.
    pub fn result(&self, ctx: &Context) -> Value {
        self.get_result(ctx)
    }
}

no_side_effects!(ConstantOp, UndefOp);
