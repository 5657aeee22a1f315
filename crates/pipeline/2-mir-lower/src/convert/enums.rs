//! Enums in memory: reading and writing the discriminant, addressing variant fields.
//!
//! The enum is an opaque blob; its tag (direct or niche) is read and written as an integer at
//! its byte offset, following rustc's `codegen_get_discr` / `codegen_set_discr`:
//!
//! * direct: the tag is the discriminant truncated to the tag type; reading extends it back
//!   (sign-extending only when some discriminant is negative);
//! * niche: `relative = tag - niche_start` (wrapping); the enum holds a niche variant when
//!   `relative <= end - start` (unsigned), variant `start + relative`, else the untagged
//!   variant. The variant index then maps to its discriminant value.

use dialect_mir::{
    ops::{GetDiscriminantOp, SetDiscriminantOp, VariantFieldAddrOp},
    types::{EnumTag, EnumType},
};
use pliron::{context::Context, r#type::TypeHandle, value::Value};
use pliron_llvm::{
    attributes::ICmpPredicateAttr,
    ops::{AddOp, ICmpOp, LoadOp, SelectOp, StoreOp, SubOp},
};

use super::{Rewrite, aggregate::pointee, cast::resize, set_align};
use crate::{error::OpError, types::int_type};

/// What the lowering needs of an enum type.
struct EnumInfo {
    align: u64,
    discr_width: u32,
    discr_signed: bool,
    tag: EnumTag,
    discrs: Vec<u128>,
    fields: Vec<Vec<u64>>,
}

/// The enum that operand 0 (a pointer) points to.
fn enum_operand(ctx: &Context, rw: &Rewrite) -> Result<EnumInfo, OpError> {
    let enum_ty = pointee(ctx, rw.operand_mir_type(ctx, 0))?;
    let enum_ref = enum_ty.deref(ctx);
    let enum_ty = enum_ref
        .downcast_ref::<EnumType>()
        .ok_or_else(|| OpError::Malformed("expected a pointer to a mir.enum".into()))?;
    let discr = enum_ty.discr_ty().deref(ctx);
    Ok(EnumInfo {
        align: enum_ty.align(),
        discr_width: discr.width(),
        discr_signed: discr.is_signed(),
        tag: enum_ty.tag(),
        discrs: enum_ty
            .variants()
            .iter()
            .map(|variant| variant.discr)
            .collect(),
        fields: enum_ty
            .variants()
            .iter()
            .map(|variant| variant.fields.iter().map(|field| field.offset).collect())
            .collect(),
    })
}

/// The alignment of the byte at `offset` in a value aligned to `align`.
fn align_at(align: u64, offset: u64) -> u64 {
    if offset == 0 {
        align
    } else {
        align.min(1 << offset.trailing_zeros())
    }
}

/// The width of a tag's integer type.
fn tag_width(ctx: &Context, ty: TypeHandle) -> u32 {
    crate::types::int_width(ctx, ty).unwrap_or(8)
}

/// The address and alignment of the tag at `offset` of the enum at `base`.
fn tag_addr(
    ctx: &mut Context,
    rw: &mut Rewrite,
    base: Value,
    info: &EnumInfo,
    width: u32,
    offset: u64,
) -> (Value, u64) {
    let natural = u64::from(width.div_ceil(8)).next_power_of_two();
    let align = natural.min(align_at(info.align, offset));
    let addr = if offset == 0 {
        base
    } else {
        rw.byte_offset(ctx, base, offset)
    };
    (addr, align)
}

/// Load the `width`-bit tag at `offset`.
fn load_tag(
    ctx: &mut Context,
    rw: &mut Rewrite,
    base: Value,
    info: &EnumInfo,
    width: u32,
    offset: u64,
) -> Value {
    let (addr, align) = tag_addr(ctx, rw, base, info, width, offset);
    let load = LoadOp::new(ctx, addr, int_type(ctx, width));
    set_align(ctx, &load, align);
    rw.value(ctx, load)
}

/// Whether discriminant `discr` (bits of a `width`-bit integer) is negative when signed.
fn is_negative(discr: u128, width: u32, signed: bool) -> bool {
    signed && width > 0 && (discr >> (width - 1)) & 1 == 1
}

/// `mir.get_discriminant` -> read and decode the tag.
pub fn get_discriminant(
    _op: &GetDiscriminantOp,
    ctx: &mut Context,
    rw: &mut Rewrite,
) -> Result<(), OpError> {
    let info = enum_operand(ctx, rw)?;
    let base = rw.operand(ctx, 0);
    let discr_ty = int_type(ctx, info.discr_width);
    let result = match info.tag {
        EnumTag::None => {
            let discr = info.discrs.first().copied().unwrap_or(0);
            rw.const_int(ctx, info.discr_width, discr)
        }
        EnumTag::Direct { ty, offset } => {
            let width = tag_width(ctx, ty.into());
            let tag = load_tag(ctx, rw, base, &info, width, offset);
            let signed = info
                .discrs
                .iter()
                .any(|&discr| is_negative(discr, info.discr_width, info.discr_signed));
            resize(ctx, rw, tag, width, info.discr_width, signed, discr_ty)
        }
        EnumTag::Niche {
            ty,
            offset,
            niche_variants_start,
            niche_variants_end,
            niche_start,
            untagged_variant,
        } => {
            let width = tag_width(ctx, ty.into());
            let tag = load_tag(ctx, rw, base, &info, width, offset);
            let start = rw.const_int(ctx, width, niche_start);
            let relative = rw.int_binary::<SubOp>(ctx, tag, start);
            let span = u128::from(niche_variants_end - niche_variants_start);
            let span = rw.const_int(ctx, width, span);
            let cmp = ICmpOp::new(ctx, ICmpPredicateAttr::ULE, relative, span);
            let is_niche = rw.value(ctx, cmp);
            let index_width = width.max(32);
            let index_ty = int_type(ctx, index_width);
            let relative = resize(ctx, rw, relative, width, index_width, false, index_ty);
            let first = rw.const_int(ctx, index_width, niche_variants_start.into());
            let niche_variant = rw.int_binary::<AddOp>(ctx, relative, first);
            let untagged = rw.const_int(ctx, index_width, untagged_variant.into());
            let select = SelectOp::new(ctx, is_niche, niche_variant, untagged);
            let variant = rw.value(ctx, select);
            variant_to_discr(ctx, rw, &info, variant, index_width, discr_ty)
        }
    };
    rw.replace(ctx, vec![result]);
    Ok(())
}

/// Map a variant index (`index_width` bits) to its discriminant: a resize when every variant's
/// discriminant is its index (`Option`, `Result`, most niche enums), else a select chain.
fn variant_to_discr(
    ctx: &mut Context,
    rw: &mut Rewrite,
    info: &EnumInfo,
    variant: Value,
    index_width: u32,
    discr_ty: TypeHandle,
) -> Value {
    let identity = info
        .discrs
        .iter()
        .enumerate()
        .all(|(index, &discr)| discr == index as u128);
    if identity {
        return resize(
            ctx,
            rw,
            variant,
            index_width,
            info.discr_width,
            false,
            discr_ty,
        );
    }
    let Some((&last, rest)) = info.discrs.split_last() else {
        return rw.undef(ctx, discr_ty);
    };
    let mut result = rw.const_int(ctx, info.discr_width, last);
    for (index, &discr) in rest.iter().enumerate().rev() {
        let index = rw.const_int(ctx, index_width, index as u128);
        let cmp = ICmpOp::new(ctx, ICmpPredicateAttr::EQ, variant, index);
        let is_variant = rw.value(ctx, cmp);
        let discr = rw.const_int(ctx, info.discr_width, discr);
        let select = SelectOp::new(ctx, is_variant, discr, result);
        result = rw.value(ctx, select);
    }
    result
}

/// `mir.set_discriminant` -> store the tag (direct) or the niche value (niche variants);
/// nothing for an enum without tag or for the untagged variant.
pub fn set_discriminant(
    op: &SetDiscriminantOp,
    ctx: &mut Context,
    rw: &mut Rewrite,
) -> Result<(), OpError> {
    let info = enum_operand(ctx, rw)?;
    let variant = op.variant_index(ctx);
    let base = rw.operand(ctx, 0);
    let stored = match info.tag {
        EnumTag::None => None,
        EnumTag::Direct { ty, offset } => {
            let discr = *info
                .discrs
                .get(variant)
                .ok_or_else(|| OpError::Malformed(format!("no variant {variant}")))?;
            Some((tag_width(ctx, ty.into()), offset, discr))
        }
        EnumTag::Niche {
            ty,
            offset,
            niche_variants_start,
            niche_start,
            untagged_variant,
            ..
        } => (variant != untagged_variant as usize).then(|| {
            let relative = (variant as u128).wrapping_sub(niche_variants_start.into());
            (
                tag_width(ctx, ty.into()),
                offset,
                relative.wrapping_add(niche_start),
            )
        }),
    };
    if let Some((width, offset, value)) = stored {
        let (addr, align) = tag_addr(ctx, rw, base, &info, width, offset);
        let value = rw.const_int(ctx, width, value);
        let store = StoreOp::new(ctx, value, addr);
        set_align(ctx, &store, align);
        rw.insert(ctx, store);
    }
    rw.erase(ctx);
    Ok(())
}

/// `mir.variant_field_addr` -> the enum's address plus the field's byte offset.
pub fn variant_field_addr(
    op: &VariantFieldAddrOp,
    ctx: &mut Context,
    rw: &mut Rewrite,
) -> Result<(), OpError> {
    let info = enum_operand(ctx, rw)?;
    let (variant, field) = (op.variant_index(ctx), op.field_index(ctx));
    let offset = info
        .fields
        .get(variant)
        .and_then(|fields| fields.get(field))
        .copied()
        .ok_or_else(|| OpError::Malformed(format!("no field {field} in variant {variant}")))?;
    let base = rw.operand(ctx, 0);
    let result = rw.byte_offset(ctx, base, offset);
    rw.replace(ctx, vec![result]);
    Ok(())
}
