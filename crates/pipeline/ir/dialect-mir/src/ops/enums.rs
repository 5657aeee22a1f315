//! Enums, always in memory: reading and writing the discriminant, addressing variant fields.

use pliron::{
    builtin::op_interfaces::{NOpdsInterface, NResultsInterface, OneResultInterface},
    common_traits::Verify,
    context::Context,
    derive::pliron_op,
    op::Op,
    operation::Operation,
    result::Result,
    r#type::{TypeHandle, Typed},
    value::Value,
};

use super::{
    expect_type_eq, invalid,
    memory::{expect_ptr_operand, expect_ptr_result, ptr_parts},
    no_side_effects, opd, opd_ty, res, res_ty, wrong_type,
};
use crate::{
    attributes::IndexAttr,
    types::{EnumType, PtrType},
};

/// Check that operand 0 of `op` points to an enum, returning a copy of the enum's parts that
/// `check` needs.
fn with_enum_operand<R>(
    op: &dyn Op,
    ctx: &Context,
    check: impl FnOnce(&EnumType) -> R,
) -> Result<(R, u32)> {
    let (pointee, address_space) = expect_ptr_operand(op, ctx, 0, "operand")?;
    let pointee_ref = pointee.deref(ctx);
    match pointee_ref.downcast_ref::<EnumType>() {
        Some(enum_ty) => Ok((check(enum_ty), address_space)),
        None => wrong_type(
            op,
            ctx,
            "operand",
            "a pointer to a mir.enum",
            opd_ty(op, ctx, 0),
        ),
    }
}

/// The discriminant value of the enum that `ptr` points to, of the enum's discriminant type.
/// Reads the tag and decodes a niche; an enum without tag yields the discriminant of its only
/// variant.
///
/// Printed as `d = mir.get_discriminant p : D`.
///
/// | operand / result | type |
/// |---------|------|
/// | `ptr` | `mir.ptr<E, _>`, `E` a `mir.enum` |
/// | `res` | the discriminant type of `E` |
#[pliron_op(
    name = "mir.get_discriminant",
    format = "$0 ` : ` type($0)",
    interfaces = [NOpdsInterface<1>, OneResultInterface]
)]
pub struct GetDiscriminantOp;

impl GetDiscriminantOp {
    /// The discriminant of the enum at `ptr`.
    ///
    /// Panics if `ptr` does not point to a `mir.enum`.
    pub fn new(ctx: &mut Context, ptr: Value) -> Self {
        let (pointee, _) =
            ptr_parts(ctx, ptr.get_type(ctx)).expect("mir.get_discriminant needs a mir.ptr");
        let discr_ty: TypeHandle = pointee
            .deref(ctx)
            .downcast_ref::<EnumType>()
            .expect("mir.get_discriminant needs a pointer to a mir.enum")
            .discr_ty()
            .into();
        let op = Operation::new(
            ctx,
            Self::get_concrete_op_info(),
            vec![discr_ty],
            vec![ptr],
            vec![],
            0,
        );
        Self { op }
    }

    /// The address of the enum.
    pub fn ptr(&self, ctx: &Context) -> Value {
        opd(self, ctx, 0)
    }

    /// The discriminant.
    pub fn result(&self, ctx: &Context) -> Value {
        res(self, ctx, 0)
    }
}

impl Verify for GetDiscriminantOp {
    fn verify(&self, ctx: &Context) -> Result<()> {
        let (discr_ty, _) = with_enum_operand(self, ctx, |enum_ty| enum_ty.discr_ty())?;
        expect_type_eq(self, ctx, "result", discr_ty.into(), res_ty(self, ctx, 0))
    }
}

/// Mark the enum that `ptr` points to as holding variant `variant`: writes the tag (the
/// variant's discriminant) or the niche value, or nothing for the untagged variant.
///
/// Printed as `mir.set_discriminant p variant N`.
///
/// | operand | type |
/// |---------|------|
/// | `ptr` | `mir.ptr<E, _>`, `E` a `mir.enum` |
#[pliron_op(
    name = "mir.set_discriminant",
    format = "$0 ` variant ` attr($mir_set_discriminant_variant, $IndexAttr)",
    interfaces = [NOpdsInterface<1>, NResultsInterface<0>],
    attributes = (mir_set_discriminant_variant: IndexAttr)
)]
pub struct SetDiscriminantOp;

impl SetDiscriminantOp {
    /// Set the enum at `ptr` to variant index `variant`.
    pub fn new(ctx: &mut Context, ptr: Value, variant: u32) -> Self {
        let op = Operation::new(
            ctx,
            Self::get_concrete_op_info(),
            vec![],
            vec![ptr],
            vec![],
            0,
        );
        let op = Self { op };
        op.set_attr_mir_set_discriminant_variant(ctx, IndexAttr(variant));
        op
    }

    /// The address of the enum.
    pub fn ptr(&self, ctx: &Context) -> Value {
        opd(self, ctx, 0)
    }

    /// The variant index.
    pub fn variant_index(&self, ctx: &Context) -> usize {
        self.get_attr_mir_set_discriminant_variant(ctx)
            .expect("mir.set_discriminant has a variant index")
            .index()
    }
}

impl Verify for SetDiscriminantOp {
    fn verify(&self, ctx: &Context) -> Result<()> {
        let Some(variant) = self
            .get_attr_mir_set_discriminant_variant(ctx)
            .map(|attr| attr.index())
        else {
            return invalid(self, ctx, "missing variant index");
        };
        let (num_variants, _) = with_enum_operand(self, ctx, |enum_ty| enum_ty.num_variants())?;
        if variant >= num_variants {
            return invalid(
                self,
                ctx,
                format!("variant {variant} out of range: the enum has {num_variants} variants"),
            );
        }
        Ok(())
    }
}

/// The address of field `field` of variant `variant` of the enum that `ptr` points to (the
/// enum's address plus the field's offset).
///
/// Printed as `f = mir.variant_field_addr p variant V field F : mir.ptr<T, AS>`.
///
/// | operand / result | type |
/// |---------|------|
/// | `ptr` | `mir.ptr<E, AS>`, `E` a `mir.enum` |
/// | `res` | `mir.ptr<T, AS>`, `T` the type of the field |
#[pliron_op(
    name = "mir.variant_field_addr",
    format = "$0 ` variant ` attr($mir_variant_index, $IndexAttr) ` field ` attr($mir_variant_field_index, $IndexAttr) ` : ` type($0)",
    interfaces = [NOpdsInterface<1>, OneResultInterface],
    attributes = (mir_variant_index: IndexAttr, mir_variant_field_index: IndexAttr)
)]
pub struct VariantFieldAddrOp;

/// The type of field `field` of variant `variant` of `enum_ty`, if it exists.
fn variant_field_type(enum_ty: &EnumType, variant: usize, field: usize) -> Option<TypeHandle> {
    enum_ty
        .variant(variant)
        .and_then(|variant| variant.fields.get(field))
        .map(|field| field.ty)
}

impl VariantFieldAddrOp {
    /// The address of field `field` of variant `variant` of the enum at `ptr`.
    ///
    /// Panics if there is no such field.
    pub fn new(ctx: &mut Context, ptr: Value, variant: u32, field: u32) -> Self {
        let (pointee, address_space) =
            ptr_parts(ctx, ptr.get_type(ctx)).expect("mir.variant_field_addr needs a mir.ptr");
        let field_ty = variant_field_type(
            pointee
                .deref(ctx)
                .downcast_ref::<EnumType>()
                .expect("mir.variant_field_addr needs a pointer to a mir.enum"),
            variant as usize,
            field as usize,
        )
        .expect("mir.variant_field_addr: no such variant field");
        let ty = PtrType::get(ctx, field_ty, address_space).into();
        let op = Operation::new(
            ctx,
            Self::get_concrete_op_info(),
            vec![ty],
            vec![ptr],
            vec![],
            0,
        );
        let op = Self { op };
        op.set_attr_mir_variant_index(ctx, IndexAttr(variant));
        op.set_attr_mir_variant_field_index(ctx, IndexAttr(field));
        op
    }

    /// The address of the enum.
    pub fn ptr(&self, ctx: &Context) -> Value {
        opd(self, ctx, 0)
    }

    /// The variant index.
    pub fn variant_index(&self, ctx: &Context) -> usize {
        self.get_attr_mir_variant_index(ctx)
            .expect("mir.variant_field_addr has a variant index")
            .index()
    }

    /// The field index within the variant.
    pub fn field_index(&self, ctx: &Context) -> usize {
        self.get_attr_mir_variant_field_index(ctx)
            .expect("mir.variant_field_addr has a field index")
            .index()
    }

    /// The address of the field.
    pub fn result(&self, ctx: &Context) -> Value {
        res(self, ctx, 0)
    }
}

impl Verify for VariantFieldAddrOp {
    fn verify(&self, ctx: &Context) -> Result<()> {
        let (Some(variant), Some(field)) = (
            self.get_attr_mir_variant_index(ctx)
                .map(|attr| attr.index()),
            self.get_attr_mir_variant_field_index(ctx)
                .map(|attr| attr.index()),
        ) else {
            return invalid(self, ctx, "missing variant or field index");
        };
        let (field_ty, address_space) = with_enum_operand(self, ctx, |enum_ty| {
            variant_field_type(enum_ty, variant, field)
        })?;
        let Some(field_ty) = field_ty else {
            return invalid(
                self,
                ctx,
                format!("the enum has no field {field} in variant {variant}"),
            );
        };
        expect_ptr_result(self, ctx, field_ty, address_space)
    }
}

no_side_effects!(GetDiscriminantOp, VariantFieldAddrOp);
