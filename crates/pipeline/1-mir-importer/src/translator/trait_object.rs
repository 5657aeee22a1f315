//! Trait objects: unsizing a pointer to `&dyn Trait` (the data pointer and the address of the
//! vtable rustc lays out for the concrete type), upcasting `&dyn Sub` to `&dyn Super`, reading
//! vtable entries (methods for virtual calls, see [super::call]), and the size and alignment
//! of a trait object's value.
//!
//! A vtable is an ordinary device global (see [super::global]) built from rustc's vtable
//! allocation: pointer-sized entries, drop glue (or null) first, then size, alignment, and the
//! methods in rustc's order.

use dialect_mir::ops::{
    ConstantOp, DynDataOp, DynVtableOp, GlobalAddrOp, LoadOp, MakeDynOp, PtrCastOp, PtrOffsetOp,
};
use dialect_mir::types::{PtrType, usize_type};
use pliron::r#type::TypeHandle;
use pliron::value::Value;
use rustc_public::rustc_internal::internal;
use rustc_public::ty::Ty;

use super::body::FnTranslator;
use super::error::TResult;

/// The vtable entry holding the size of the concrete type.
const VTABLE_SIZE: usize = 1;
/// The vtable entry holding the alignment of the concrete type.
const VTABLE_ALIGN: usize = 2;

impl FnTranslator<'_> {
    /// `&S as &dyn Trait` (or a raw pointer): `value` (a thin pointer to `source`) with the
    /// vtable of `source` as the trait object type `target`.
    pub(crate) fn unsize_to_dyn(
        &mut self,
        value: Value,
        source: Ty,
        target: Ty,
        to_mir: TypeHandle,
    ) -> TResult<Value> {
        let vtable = self.globals.vtable(self.ctx, source, target)?;
        let byte_ptr = self.byte_pointer_type();
        let data = self
            .emit(|ctx| PtrCastOp::new(ctx, value, byte_ptr))
            .result(self.ctx);
        let vtable = self
            .emit(|ctx| GlobalAddrOp::new(ctx, vtable, byte_ptr))
            .result(self.ctx);
        Ok(self
            .emit(|ctx| MakeDynOp::new(ctx, data, vtable, to_mir))
            .result(self.ctx))
    }

    /// The same trait object seen as another trait object type (`dyn Trait + Send` to
    /// `dyn Trait`: the same vtable).
    pub(crate) fn retype_dyn(&mut self, object: Value, to_mir: TypeHandle) -> TResult<Value> {
        let byte_ptr = self.byte_pointer_type();
        let data = self
            .emit(|ctx| DynDataOp::new(ctx, object, byte_ptr))
            .result(self.ctx);
        let vtable = self
            .emit(|ctx| DynVtableOp::new(ctx, object, byte_ptr))
            .result(self.ctx);
        Ok(self
            .emit(|ctx| MakeDynOp::new(ctx, data, vtable, to_mir))
            .result(self.ctx))
    }

    /// Trait upcasting, `&dyn Sub` to `&dyn Super`: the same data pointer with the vtable of
    /// `Super` for the same concrete type. rustc lays that vtable out either as a prefix of
    /// `Sub`'s (the same address) or as its own, whose address `Sub`'s vtable holds in the
    /// entry that `supertrait_vtable_slot` names.
    pub(crate) fn upcast_dyn(
        &mut self,
        object: Value,
        source: Ty,
        target: Ty,
        to_mir: TypeHandle,
    ) -> TResult<Value> {
        let slot = rustc_middle::ty::tls::with(|tcx| {
            let (source, target) = (internal(tcx, source), internal(tcx, target));
            tcx.supertrait_vtable_slot((source, target))
        });
        let Some(slot) = slot else {
            return self.retype_dyn(object, to_mir);
        };
        let byte_ptr = self.byte_pointer_type();
        let data = self
            .emit(|ctx| DynDataOp::new(ctx, object, byte_ptr))
            .result(self.ctx);
        let vtable = self.vtable_entry(object, slot, byte_ptr)?;
        Ok(self
            .emit(|ctx| MakeDynOp::new(ctx, data, vtable, to_mir))
            .result(self.ctx))
    }

    /// Entry `index` of the vtable of `object`, read as a value of type `entry_ty`.
    pub(crate) fn vtable_entry(
        &mut self,
        object: Value,
        index: usize,
        entry_ty: TypeHandle,
    ) -> TResult<Value> {
        let entries_ty = PtrType::get_generic(self.ctx, entry_ty).into();
        let entries = self
            .emit(|ctx| DynVtableOp::new(ctx, object, entries_ty))
            .result(self.ctx);
        let usize_ty = usize_type(self.ctx);
        let index = self
            .emit(|ctx| ConstantOp::new_int(ctx, usize_ty, index as u128))
            .result(self.ctx);
        let entry = self
            .emit(|ctx| PtrOffsetOp::new(ctx, entries, index))
            .result(self.ctx);
        Ok(self.emit(|ctx| LoadOp::new(ctx, entry)).result(self.ctx))
    }

    /// `size_of_val` (when `size`) or `align_of_val` of the trait object `object`: read from
    /// its vtable.
    pub(crate) fn dyn_size_or_align(&mut self, object: Value, size: bool) -> TResult<Value> {
        let usize_ty = usize_type(self.ctx);
        let entry = if size { VTABLE_SIZE } else { VTABLE_ALIGN };
        self.vtable_entry(object, entry, usize_ty.into())
    }
}
