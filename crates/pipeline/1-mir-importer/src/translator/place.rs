//! Places (`_3.1`, `(*_2)[_5]`, `((_1 as Some).0)`) as address computations.
//!
//! A place starts at its local's slot; each projection moves the address: a field is
//! `mir.field_addr` (or `mir.variant_field_addr` after a downcast), a deref loads the pointer
//! stored at the current address, an index is `mir.ptr_offset` from element 0. Behind a
//! reference to a slice the "address" is the slice value itself (pointer and length), which
//! indexing then uses; behind a reference to a trait object it is the `mir.dyn_ptr` value.

use dialect_mir::ops::{
    ArrayElemAddrOp, ConstantOp, FieldAddrOp, IntToPtrOp, LoadOp, MakeSliceOp, PtrCastOp,
    PtrOffsetOp, SliceLenOp, SlicePtrOp, SubOp, VariantFieldAddrOp,
};
use dialect_mir::types::{PtrType, SliceType, usize_type};
use pliron::value::Value;
use rustc_public::mir::{Place, ProjectionElem};
use rustc_public::ty::{RigidTy, Ty, TyKind};
use rustc_public_bridge::IndexedVal;

use super::body::FnTranslator;
use super::error::{TResult, unsupported};
use super::types::{is_zero_sized, slice_tail};

/// Where a place is.
#[derive(Copy, Clone, Debug)]
pub enum Address {
    /// A `mir.ptr` to the place.
    Thin(Value),
    /// The place is an unsized slice; this is the slice value (data pointer and length).
    Slice(Value),
    /// The place is a trait object; this is the `mir.dyn_ptr` value (data and vtable pointers).
    Dyn(Value),
}

/// A translated place: its address (none for zero-sized places) and its Rust type.
#[derive(Copy, Clone, Debug)]
pub struct PlaceRef {
    /// The address, `None` when the place is zero-sized.
    pub address: Option<Address>,
    /// The Rust type of the place.
    pub ty: Ty,
    /// The variant selected by a `Downcast` projection, for the next field projection.
    variant: Option<usize>,
}

impl PlaceRef {
    /// The thin pointer to the place, or an error for unsized places.
    pub fn thin(&self) -> TResult<Option<Value>> {
        match self.address {
            None => Ok(None),
            Some(Address::Thin(ptr)) => Ok(Some(ptr)),
            Some(Address::Slice(_) | Address::Dyn(_)) => {
                unsupported!("using the unsized place of type `{}` as a value", self.ty)
            }
        }
    }
}

impl FnTranslator<'_> {
    /// The address and type of `place`.
    pub(crate) fn translate_place(&mut self, place: &Place) -> TResult<PlaceRef> {
        if self.unused[place.local] {
            unsupported!(
                "internal error: the local _{} was found unused",
                place.local
            )
        }
        let mut current = PlaceRef {
            address: self.slots[place.local].map(Address::Thin),
            ty: self.local_ty(place.local),
            variant: None,
        };
        for elem in &place.projection {
            current = self.project(current, elem)?;
        }
        Ok(current)
    }

    fn project(&mut self, base: PlaceRef, elem: &ProjectionElem) -> TResult<PlaceRef> {
        match elem {
            ProjectionElem::Deref => self.deref(base),
            ProjectionElem::Field(index, field_ty) => self.field(base, *index, *field_ty),
            ProjectionElem::Index(local) => {
                let index_place = Place::from(*local);
                let index = self
                    .read_place(&index_place)?
                    .expect("an index is a usize, never zero-sized");
                self.index(base, index)
            }
            ProjectionElem::ConstantIndex {
                offset, from_end, ..
            } => {
                let usize_ty = usize_type(self.ctx);
                let offset_value = self
                    .emit(|ctx| ConstantOp::new_int(ctx, usize_ty, u128::from(*offset)))
                    .result(self.ctx);
                let index = if *from_end {
                    let len = self.length_of(&base)?;
                    self.emit(|ctx| SubOp::new(ctx, len, offset_value))
                        .result(self.ctx)
                } else {
                    offset_value
                };
                self.index(base, index)
            }
            ProjectionElem::Subslice { from, to, from_end } => {
                self.subslice(base, elem, *from, *to, *from_end)
            }
            ProjectionElem::Downcast(variant) => Ok(PlaceRef {
                variant: Some(variant.to_index()),
                ..base
            }),
            ProjectionElem::OpaqueCast(ty) => Ok(PlaceRef { ty: *ty, ..base }),
        }
    }

    fn deref(&mut self, base: PlaceRef) -> TResult<PlaceRef> {
        let pointee = match base.ty.kind() {
            TyKind::RigidTy(RigidTy::Ref(_, pointee, _) | RigidTy::RawPtr(pointee, _)) => pointee,
            _ => unsupported!("dereferencing a value of type `{}`", base.ty),
        };
        let Some(pointer_slot) = base.thin()? else {
            unsupported!("dereferencing a zero-sized pointer of type `{}`", base.ty)
        };
        let pointer = self
            .emit(|ctx| LoadOp::new(ctx, pointer_slot))
            .result(self.ctx);
        let address = match pointee.kind() {
            TyKind::RigidTy(RigidTy::Dynamic(..)) => Some(Address::Dyn(pointer)),
            _ if slice_tail(pointee).is_some() => Some(Address::Slice(pointer)),
            _ if is_zero_sized(pointee)? => None,
            _ => Some(Address::Thin(pointer)),
        };
        Ok(PlaceRef {
            address,
            ty: pointee,
            variant: None,
        })
    }

    fn field(&mut self, base: PlaceRef, index: usize, field_ty: Ty) -> TResult<PlaceRef> {
        let result = |address| PlaceRef {
            address,
            ty: field_ty,
            variant: None,
        };
        if let Some(Address::Slice(wide)) = base.address {
            return self.unsized_struct_field(wide, base.ty, index, field_ty);
        }
        if is_zero_sized(field_ty)? {
            return Ok(result(None));
        }
        let Some(base_ptr) = base.thin()? else {
            unsupported!("a field of the zero-sized place of type `{}`", base.ty)
        };
        if !self.has_field(base_ptr, base.variant, index) {
            return Err(super::error::TranslationError::internal(format!(
                "field {index} of `{}` (variant {:?}) is missing from its dialect-mir type",
                base.ty, base.variant
            )));
        }
        let field_ptr = match base.variant {
            Some(variant) => self
                .emit(|ctx| VariantFieldAddrOp::new(ctx, base_ptr, variant as u32, index as u32))
                .result(self.ctx),
            None => self
                .emit(|ctx| FieldAddrOp::new(ctx, base_ptr, index as u32))
                .result(self.ctx),
        };
        Ok(result(Some(Address::Thin(field_ptr))))
    }

    /// Whether the aggregate `ptr` points to has field `index` (of `variant`, for an enum):
    /// what `mir.field_addr` and `mir.variant_field_addr` need.
    fn has_field(&self, ptr: Value, variant: Option<usize>, index: usize) -> bool {
        use pliron::r#type::Typed;
        let Some(pointee) = ptr
            .get_type(self.ctx)
            .deref(self.ctx)
            .downcast_ref::<PtrType>()
            .map(|p| p.pointee())
        else {
            return false;
        };
        match variant {
            Some(variant) => pointee
                .deref(self.ctx)
                .downcast_ref::<dialect_mir::types::EnumType>()
                .and_then(|e| e.variant(variant).map(|v| index < v.fields.len()))
                .unwrap_or(false),
            None => dialect_mir::ops::field_type(self.ctx, pointee, index).is_some(),
        }
    }

    fn index(&mut self, base: PlaceRef, index: Value) -> TResult<PlaceRef> {
        let elem_ty = match base.ty.kind() {
            TyKind::RigidTy(RigidTy::Array(elem, _) | RigidTy::Slice(elem)) => elem,
            TyKind::RigidTy(RigidTy::Str) => Ty::unsigned_ty(rustc_public::ty::UintTy::U8),
            _ => unsupported!("indexing a value of type `{}`", base.ty),
        };
        let result = |address| PlaceRef {
            address,
            ty: elem_ty,
            variant: None,
        };
        if is_zero_sized(elem_ty)? {
            return Ok(result(None));
        }
        let first = match base.address {
            Some(Address::Thin(array_ptr)) => self
                .emit(|ctx| ArrayElemAddrOp::new(ctx, array_ptr))
                .result(self.ctx),
            Some(Address::Slice(slice)) => self
                .emit(|ctx| SlicePtrOp::new(ctx, slice))
                .result(self.ctx),
            Some(Address::Dyn(_)) => unsupported!("indexing the trait object `{}`", base.ty),
            None => {
                // A zero-length array of sized elements: every index fails the bounds check
                // before it, so this access is never made, but must still compile (a CRC
                // table `[[u32; 256]; N]` for `N = 0`). Its address is dangling and aligned, as
                // rustc gives zero-sized places.
                let elem = self.types.translate(self.ctx, elem_ty)?;
                let align = u128::from(super::types::layout(elem_ty)?.abi_align);
                let usize_ty = usize_type(self.ctx);
                let address = self
                    .emit(|ctx| ConstantOp::new_int(ctx, usize_ty, align))
                    .result(self.ctx);
                let elem_ptr = PtrType::get_generic(self.ctx, elem).into();
                self.emit(|ctx| IntToPtrOp::new(ctx, address, elem_ptr))
                    .result(self.ctx)
            }
        };
        let elem_ptr = self
            .emit(|ctx| PtrOffsetOp::new(ctx, first, index))
            .result(self.ctx);
        Ok(result(Some(Address::Thin(elem_ptr))))
    }

    /// Field `index` of a struct ending in a slice, whose place is the `mir.slice` `wide`
    /// (data pointer = the struct's address, length = the tail's): a thin address at the
    /// field's offset, or, for the unsized last field, a slice starting there.
    fn unsized_struct_field(
        &mut self,
        wide: Value,
        struct_ty: Ty,
        index: usize,
        field_ty: Ty,
    ) -> TResult<PlaceRef> {
        let offsets = match super::types::layout(struct_ty)?.fields {
            rustc_public::abi::FieldsShape::Arbitrary { offsets } => offsets,
            _ => unsupported!("a field of `{struct_ty}`, which has no field offsets"),
        };
        let Some(offset) = offsets.get(index).map(|o| o.bytes() as u128) else {
            unsupported!("field {index} of `{struct_ty}`")
        };
        let byte = pliron::builtin::types::IntegerType::get(
            self.ctx,
            8,
            pliron::builtin::types::Signedness::Unsigned,
        );
        let byte_ptr = PtrType::get_generic(self.ctx, byte.into()).into();
        let data = self.emit(|ctx| SlicePtrOp::new(ctx, wide)).result(self.ctx);
        let bytes = self
            .emit(|ctx| PtrCastOp::new(ctx, data, byte_ptr))
            .result(self.ctx);
        let offset = self
            .emit(|ctx| ConstantOp::new_int(ctx, usize_type(ctx), offset))
            .result(self.ctx);
        let at = self
            .emit(|ctx| PtrOffsetOp::new(ctx, bytes, offset))
            .result(self.ctx);
        let result = |address| PlaceRef {
            address,
            ty: field_ty,
            variant: None,
        };
        if let Some(tail) = slice_tail(field_ty) {
            let elem = self
                .types
                .translate(self.ctx, super::types::slice_elem(tail))?;
            let elem_ptr = PtrType::get_generic(self.ctx, elem).into();
            let start = self
                .emit(|ctx| PtrCastOp::new(ctx, at, elem_ptr))
                .result(self.ctx);
            let len = self.emit(|ctx| SliceLenOp::new(ctx, wide)).result(self.ctx);
            let slice_ty = SliceType::get(self.ctx, elem).into();
            let slice = self
                .emit(|ctx| MakeSliceOp::new(ctx, start, len, slice_ty))
                .result(self.ctx);
            return Ok(result(Some(Address::Slice(slice))));
        }
        if is_zero_sized(field_ty)? {
            return Ok(result(None));
        }
        let field = self.types.translate(self.ctx, field_ty)?;
        let field_ptr = PtrType::get_generic(self.ctx, field).into();
        let addr = self
            .emit(|ctx| PtrCastOp::new(ctx, at, field_ptr))
            .result(self.ctx);
        Ok(result(Some(Address::Thin(addr))))
    }

    /// `base[from..to]` of an array (an array place of `to - from` elements) or
    /// `base[from..len - to]` of a slice (`from_end`; a slice place): the rest of a slice
    /// pattern, `[first, rest @ ..]`.
    fn subslice(
        &mut self,
        base: PlaceRef,
        elem: &ProjectionElem,
        from: u64,
        to: u64,
        from_end: bool,
    ) -> TResult<PlaceRef> {
        let ty = match elem.ty(base.ty) {
            Ok(ty) => ty,
            Err(e) => unsupported!("the subslice of `{}` ({e:?})", base.ty),
        };
        let result = |address| PlaceRef {
            address,
            ty,
            variant: None,
        };
        if is_zero_sized(ty)? && !matches!(base.address, Some(Address::Slice(_))) {
            return Ok(result(None));
        }
        let from_value = self
            .emit(|ctx| ConstantOp::new_int(ctx, usize_type(ctx), u128::from(from)))
            .result(self.ctx);
        let (first, len) = match base.address {
            Some(Address::Thin(array_ptr)) => (
                self.emit(|ctx| ArrayElemAddrOp::new(ctx, array_ptr))
                    .result(self.ctx),
                None,
            ),
            Some(Address::Slice(slice)) => (
                self.emit(|ctx| SlicePtrOp::new(ctx, slice))
                    .result(self.ctx),
                Some(
                    self.emit(|ctx| SliceLenOp::new(ctx, slice))
                        .result(self.ctx),
                ),
            ),
            Some(Address::Dyn(_)) => unsupported!("a subslice of the trait object `{}`", base.ty),
            None => unsupported!("a subslice of the zero-sized place of type `{}`", base.ty),
        };
        let start = self
            .emit(|ctx| PtrOffsetOp::new(ctx, first, from_value))
            .result(self.ctx);
        match (len, from_end) {
            (Some(len), true) => {
                let trimmed = self
                    .emit(|ctx| ConstantOp::new_int(ctx, usize_type(ctx), u128::from(from + to)))
                    .result(self.ctx);
                let rest = self
                    .emit(|ctx| SubOp::new(ctx, len, trimmed))
                    .result(self.ctx);
                let slice_ty = self.slice_type_of(start)?;
                let slice = self
                    .emit(|ctx| MakeSliceOp::new(ctx, start, rest, slice_ty))
                    .result(self.ctx);
                Ok(result(Some(Address::Slice(slice))))
            }
            (None, _) => {
                let array_ty = self.types.translate(self.ctx, ty)?;
                let ptr_ty = PtrType::get_generic(self.ctx, array_ty).into();
                let array_ptr = self
                    .emit(|ctx| PtrCastOp::new(ctx, start, ptr_ty))
                    .result(self.ctx);
                Ok(result(Some(Address::Thin(array_ptr))))
            }
            (Some(_), false) => unsupported!("a subslice of a slice counted from its start"),
        }
    }

    /// The `mir.slice` type whose data pointer has the type of `data`.
    fn slice_type_of(&mut self, data: Value) -> TResult<pliron::r#type::TypeHandle> {
        use pliron::r#type::Typed;
        let ptr_ty = data.get_type(self.ctx);
        let Some(elem) = ptr_ty
            .deref(self.ctx)
            .downcast_ref::<PtrType>()
            .map(|p| p.pointee())
        else {
            unsupported!("a slice whose data is not a pointer")
        };
        Ok(SliceType::get(self.ctx, elem).into())
    }

    /// The number of elements of an array or slice place.
    pub(crate) fn length_of(&mut self, place: &PlaceRef) -> TResult<Value> {
        match (place.ty.kind(), place.address) {
            (TyKind::RigidTy(RigidTy::Array(_, len)), _) => {
                let Ok(len) = len.eval_target_usize() else {
                    unsupported!("an array of unknown length (`{}`)", place.ty)
                };
                let usize_ty = usize_type(self.ctx);
                Ok(self
                    .emit(|ctx| ConstantOp::new_int(ctx, usize_ty, u128::from(len)))
                    .result(self.ctx))
            }
            (_, Some(Address::Slice(slice))) => Ok(self
                .emit(|ctx| SliceLenOp::new(ctx, slice))
                .result(self.ctx)),
            _ => unsupported!("the length of a value of type `{}`", place.ty),
        }
    }
}
