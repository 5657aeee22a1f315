//! Places (`_3.1`, `(*_2)[_5]`, `((_1 as Some).0)`) as address computations.
//!
//! A place starts at its local's slot; each projection moves the address: a field is
//! `mir.field_addr` (or `mir.variant_field_addr` after a downcast), a deref loads the pointer
//! stored at the current address, an index is `mir.index_addr`. Behind a reference to a slice
//! the "address" is the slice value itself (pointer and length), which indexing then uses;
//! behind a reference to a trait object it is the `mir.dyn_ptr` value.

use dialect_mir::ops::{
    ArrayElemAddrOp, ConstantOp, FieldAddrOp, IndexAddrOp, LoadOp, SliceLenOp, SlicePtrOp, SubOp,
    VariantFieldAddrOp,
};
use dialect_mir::types::usize_type;
use pliron::value::Value;
use rustc_public::mir::{Place, ProjectionElem};
use rustc_public::ty::{RigidTy, Ty, TyKind};
use rustc_public_bridge::IndexedVal;

use super::body::FnTranslator;
use super::error::{TResult, unsupported};
use super::types::is_zero_sized;

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
            ProjectionElem::Subslice { .. } => {
                unsupported!("subslice patterns (`[first, rest @ ..]`)")
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
            TyKind::RigidTy(RigidTy::Slice(_) | RigidTy::Str) => Some(Address::Slice(pointer)),
            TyKind::RigidTy(RigidTy::Dynamic(..)) => Some(Address::Dyn(pointer)),
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
        if is_zero_sized(field_ty)? {
            return Ok(result(None));
        }
        let Some(base_ptr) = base.thin()? else {
            unsupported!("a field of the zero-sized place of type `{}`", base.ty)
        };
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
            None => unsupported!("indexing the zero-sized place of type `{}`", base.ty),
        };
        let elem_ptr = self
            .emit(|ctx| IndexAddrOp::new(ctx, first, index))
            .result(self.ctx);
        Ok(result(Some(Address::Thin(elem_ptr))))
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
