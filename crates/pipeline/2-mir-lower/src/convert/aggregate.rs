//! Address computations into structs, arrays and slices, and the slice and trait object values
//! themselves.
//!
//! Field addresses map the declaration index to the LLVM field of the lowered struct
//! ([crate::types::lower_struct]); a zero-sized field has no LLVM field and is addressed by its
//! byte offset. Element addresses are `getelementptr inbounds` over the element's memory type,
//! as rustc emits them for indexing (after the bounds check) and `Offset`.

use dialect_mir::{
    ops::{ArrayElemAddrOp, FieldAddrOp, MakeDynOp, MakeSliceOp},
    types::{PtrType, StructType, UnionType},
};
use pliron::{context::Context, op::Op, r#type::TypeHandle, value::Value};
use pliron_llvm::{
    attributes::GepNoWrapFlags,
    ops::{ExtractValueOp, GepIndex, GetElementPtrOp, InsertValueOp},
};

use super::Rewrite;
use crate::{
    error::OpError,
    types::{FieldSlot, dyn_ptr_type, lower_struct, memory_type, slice_type, value_type},
};

/// The pointee of `mir.ptr` type `ty`.
pub(crate) fn pointee(ctx: &Context, ty: TypeHandle) -> Result<TypeHandle, OpError> {
    ty.deref(ctx)
        .downcast_ref::<PtrType>()
        .map(PtrType::pointee)
        .ok_or_else(|| OpError::Malformed("expected a mir.ptr operand".into()))
}

/// `getelementptr inbounds elem, base, indices`.
fn gep(
    ctx: &mut Context,
    rw: &mut Rewrite,
    base: Value,
    elem: TypeHandle,
    indices: Vec<GepIndex>,
) -> Value {
    let op =
        GetElementPtrOp::new_with_no_wrap_flags(ctx, base, indices, elem, GepNoWrapFlags::INBOUNDS);
    rw.value(ctx, op)
}

/// `mir.field_addr` -> a GEP to the field's LLVM index (or a byte offset for a zero-sized
/// field); for slices, field 0 is the pointer and 1 the length; a union's fields are at its
/// address.
pub fn field_addr(op: &FieldAddrOp, ctx: &mut Context, rw: &mut Rewrite) -> Result<(), OpError> {
    let base = op.base(ctx);
    let aggregate = pointee(ctx, rw.mir_type(ctx, base))?;
    let field = op.field_index(ctx);
    if aggregate.deref(ctx).is::<UnionType>() {
        // Every field of a union is at its start.
        let result = rw.byte_offset(ctx, base, 0);
        rw.replace(ctx, vec![result]);
        return Ok(());
    }
    let lowered = aggregate
        .deref(ctx)
        .downcast_ref::<StructType>()
        .map(|struct_ty| lower_struct(ctx, struct_ty))
        .transpose()?;
    let result = match lowered {
        Some(lowered) => match lowered.fields.get(field) {
            Some(FieldSlot::Index(index)) => gep(
                ctx,
                rw,
                base,
                lowered.llvm_type,
                vec![GepIndex::Constant(0), GepIndex::Constant(*index)],
            ),
            Some(FieldSlot::ZeroSized { offset }) => rw.byte_offset(ctx, base, *offset),
            None => return Err(OpError::Malformed(format!("no field {field}"))),
        },
        None => {
            let slice = slice_type(ctx);
            let index = u32::try_from(field)
                .ok()
                .filter(|&index| index < 2)
                .ok_or_else(|| OpError::Malformed(format!("a slice has no field {field}")))?;
            gep(
                ctx,
                rw,
                base,
                slice,
                vec![GepIndex::Constant(0), GepIndex::Constant(index)],
            )
        }
    };
    rw.replace(ctx, vec![result]);
    Ok(())
}

/// `mir.ptr_offset` -> a GEP over the element type by the count.
pub fn element_addr(_op: &dyn Op, ctx: &mut Context, rw: &mut Rewrite) -> Result<(), OpError> {
    let elem = pointee(ctx, rw.result_mir_type(ctx, 0))?;
    let elem = memory_type(ctx, elem)?;
    let (base, index) = (rw.operand(ctx, 0), rw.operand(ctx, 1));
    let result = gep(ctx, rw, base, elem, vec![GepIndex::Value(index)]);
    rw.replace(ctx, vec![result]);
    Ok(())
}

/// `mir.array_elem_addr` -> `getelementptr [N x T], base, 0, 0`.
pub fn array_elem_addr(
    op: &ArrayElemAddrOp,
    ctx: &mut Context,
    rw: &mut Rewrite,
) -> Result<(), OpError> {
    let base = op.base(ctx);
    let array = pointee(ctx, rw.mir_type(ctx, base))?;
    let array = value_type(ctx, array)?;
    let result = gep(
        ctx,
        rw,
        base,
        array,
        vec![GepIndex::Constant(0), GepIndex::Constant(0)],
    );
    rw.replace(ctx, vec![result]);
    Ok(())
}

/// `mir.make_slice p, n` -> `{ ptr, i64 }` built with two `insertvalue`s.
pub fn make_slice(op: &MakeSliceOp, ctx: &mut Context, rw: &mut Rewrite) -> Result<(), OpError> {
    let (ptr, len) = (op.ptr(ctx), op.len(ctx));
    let slice = slice_type(ctx);
    let undef = rw.undef(ctx, slice);
    let with_ptr = InsertValueOp::new(ctx, undef, ptr, vec![0]);
    let with_ptr = rw.value(ctx, with_ptr);
    let full = InsertValueOp::new(ctx, with_ptr, len, vec![1]);
    let full = rw.value(ctx, full);
    rw.replace(ctx, vec![full]);
    Ok(())
}

/// `mir.make_dyn p, v` -> `{ ptr, ptr }` built with two `insertvalue`s.
pub fn make_dyn(_op: &MakeDynOp, ctx: &mut Context, rw: &mut Rewrite) -> Result<(), OpError> {
    let (data, vtable) = (rw.operand(ctx, 0), rw.operand(ctx, 1));
    let pair = dyn_ptr_type(ctx);
    let undef = rw.undef(ctx, pair);
    let with_data = InsertValueOp::new(ctx, undef, data, vec![0]);
    let with_data = rw.value(ctx, with_data);
    let full = InsertValueOp::new(ctx, with_data, vtable, vec![1]);
    let full = rw.value(ctx, full);
    rw.replace(ctx, vec![full]);
    Ok(())
}

/// Which field of a slice or trait object value to read.
#[derive(Clone, Copy, Debug)]
pub enum FieldOf {
    Ptr,
    Len,
    DynData,
    DynVtable,
}

/// `mir.slice_ptr` / `mir.slice_len` -> `extractvalue` 0 / 1, and the same for the data and
/// vtable pointers of a trait object.
pub fn slice_field(
    _op: &dyn Op,
    ctx: &mut Context,
    rw: &mut Rewrite,
    field: FieldOf,
) -> Result<(), OpError> {
    let slice = rw.operand(ctx, 0);
    let index = match field {
        FieldOf::Ptr | FieldOf::DynData => 0,
        FieldOf::Len | FieldOf::DynVtable => 1,
    };
    let extract = ExtractValueOp::new(ctx, slice, vec![index])
        .map_err(|err| OpError::Malformed(err.to_string()))?;
    let result = rw.value(ctx, extract);
    rw.replace(ctx, vec![result]);
    Ok(())
}
