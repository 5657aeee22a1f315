//! Constants: rustc's evaluated allocations as dialect-mir values.
//!
//! Scalar constants become `mir.constant`. A pointer with provenance (`&CONST`, a string
//! literal, `&STATIC`, a function pointer in a table) becomes the address of the device global
//! or function it points to (see [super::global]), plus its offset; a `&[T]` / `&str` constant
//! is that address and its length, a `&dyn Trait` constant its data and vtable addresses.
//! Any other constant holding pointers, and any large one, is read from a read-only global
//! holding its own bytes, which LLVM folds where it can. A small pointer-free aggregate (a
//! tuple, an enum value such as `None`) is rebuilt in a fresh slot byte by byte, which keeps
//! rustc's exact layout without interpreting it; LLVM folds it back.

use dialect_mir::ops::{
    AllocaOp, ConstantOp, FuncAddrOp, GlobalAddrOp, IntToPtrOp, LoadOp, MakeDynOp, MakeSliceOp,
    PtrCastOp, PtrOffsetOp, StoreOp, UndefOp,
};
use dialect_mir::types::{DynPtrType, PtrType, SliceType, usize_type};
use pliron::builtin::types::{IntegerType, Signedness};
use pliron::r#type::TypeHandle;
use pliron::value::Value;
use rustc_public::mir::alloc::AllocId;
use rustc_public::ty::{Allocation, ConstantKind, FloatTy, MirConst, RigidTy, Ty, TyKind};

use super::body::FnTranslator;
use super::error::{TResult, unsupported};
use super::global::Target;
use super::types::is_zero_sized;

/// Pointer-free aggregates up to this size are rebuilt byte by byte; larger ones are read from
/// a global.
const MAX_BYTEWISE: usize = 16;

impl FnTranslator<'_> {
    /// The value of a constant, `None` when it is zero-sized.
    pub(crate) fn translate_constant(&mut self, constant: &MirConst) -> TResult<Option<Value>> {
        let ty = constant.ty();
        if is_zero_sized(ty)? {
            return Ok(None);
        }
        let ConstantKind::Allocated(alloc) = constant.kind() else {
            unsupported!("the constant `{constant:?}` of type `{ty}` (not evaluated by rustc)")
        };
        if !alloc.provenance.ptrs.is_empty() {
            return self.constant_with_pointers(ty, alloc).map(Some);
        }
        let value = match ty.kind() {
            TyKind::RigidTy(RigidTy::Bool) => {
                let bit = read_bits(alloc) != 0;
                self.emit(|ctx| ConstantOp::new_bool(ctx, bit))
                    .result(self.ctx)
            }
            TyKind::RigidTy(RigidTy::Int(_) | RigidTy::Uint(_) | RigidTy::Char) => {
                let int_ty = self.int_type(ty)?;
                self.emit(|ctx| ConstantOp::new_int(ctx, int_ty, read_bits(alloc)))
                    .result(self.ctx)
            }
            TyKind::RigidTy(RigidTy::Float(FloatTy::F16)) => {
                let bits = read_bits(alloc) as u16;
                self.emit(|ctx| ConstantOp::new_f16(ctx, bits))
                    .result(self.ctx)
            }
            TyKind::RigidTy(RigidTy::Float(FloatTy::F32)) => {
                let value = f32::from_bits(read_bits(alloc) as u32);
                self.emit(|ctx| ConstantOp::new_f32(ctx, value))
                    .result(self.ctx)
            }
            TyKind::RigidTy(RigidTy::Float(FloatTy::F64)) => {
                let value = f64::from_bits(read_bits(alloc) as u64);
                self.emit(|ctx| ConstantOp::new_f64(ctx, value))
                    .result(self.ctx)
            }
            TyKind::RigidTy(RigidTy::RawPtr(..) | RigidTy::Ref(..)) if alloc.bytes.len() == 8 => {
                // A pointer without provenance: an address given as an integer (e.g. a
                // dangling, well-aligned `NonNull`).
                let usize_ty = usize_type(self.ctx);
                let address = self
                    .emit(|ctx| ConstantOp::new_int(ctx, usize_ty, read_bits(alloc)))
                    .result(self.ctx);
                let ptr_ty = self.types.translate(self.ctx, ty)?;
                self.emit(|ctx| IntToPtrOp::new(ctx, address, ptr_ty))
                    .result(self.ctx)
            }
            _ if alloc.bytes.len() > MAX_BYTEWISE => self.read_from_global(ty, alloc)?,
            _ => self.materialize_bytes(ty, alloc)?,
        };
        Ok(Some(value))
    }

    /// A constant whose bytes hold pointers.
    fn constant_with_pointers(&mut self, ty: Ty, alloc: &Allocation) -> TResult<Value> {
        let mir_ty = self.types.translate(self.ctx, ty)?;
        let pointer_at = |offset: usize| {
            alloc
                .provenance
                .ptrs
                .iter()
                .find(|(at, _)| *at == offset)
                .map(|(_, prov)| prov.0)
        };
        let ptrs = alloc.provenance.ptrs.len();
        let (is_slice, is_dyn) = {
            let ty_ref = mir_ty.deref(self.ctx);
            (ty_ref.is::<SliceType>(), ty_ref.is::<DynPtrType>())
        };
        let thin = matches!(
            ty.kind(),
            TyKind::RigidTy(RigidTy::RawPtr(..) | RigidTy::Ref(..) | RigidTy::FnPtr(..))
        ) && alloc.bytes.len() == 8;
        match (pointer_at(0), ptrs) {
            (Some(target), 1) if thin => self.pointer_into(target, read_u64(alloc, 0), mir_ty),
            (Some(target), 1) if is_slice => {
                let elem = dialect_mir::ops::slice_elem(self.ctx, mir_ty)
                    .expect("a slice type has an element type");
                let data_ty = PtrType::get_generic(self.ctx, elem).into();
                let data = self.pointer_into(target, read_u64(alloc, 0), data_ty)?;
                let usize_ty = usize_type(self.ctx);
                let len = u128::from(read_u64(alloc, 8));
                let len = self
                    .emit(|ctx| ConstantOp::new_int(ctx, usize_ty, len))
                    .result(self.ctx);
                Ok(self
                    .emit(|ctx| MakeSliceOp::new(ctx, data, len, mir_ty))
                    .result(self.ctx))
            }
            (Some(data), 2) if is_dyn && pointer_at(8).is_some() => {
                let byte_ptr = self.byte_pointer_type();
                let vtable = pointer_at(8).expect("checked above");
                let data = self.pointer_into(data, read_u64(alloc, 0), byte_ptr)?;
                let vtable = self.pointer_into(vtable, read_u64(alloc, 8), byte_ptr)?;
                Ok(self
                    .emit(|ctx| MakeDynOp::new(ctx, data, vtable, mir_ty))
                    .result(self.ctx))
            }
            _ => self.read_from_global(ty, alloc),
        }
    }

    /// The address `addend` bytes into what `alloc_id` is, as a value of pointer type `ptr_ty`.
    pub(crate) fn pointer_into(
        &mut self,
        alloc_id: AllocId,
        addend: u64,
        ptr_ty: TypeHandle,
    ) -> TResult<Value> {
        match self.globals.target(self.ctx, alloc_id)? {
            Target::Function(name) if addend == 0 => Ok(self
                .emit(|ctx| FuncAddrOp::new(ctx, name, ptr_ty))
                .result(self.ctx)),
            Target::Function(name) => {
                unsupported!("a pointer {addend} bytes into the function `{name}`")
            }
            Target::Address => {
                let usize_ty = usize_type(self.ctx);
                let address = self
                    .emit(|ctx| ConstantOp::new_int(ctx, usize_ty, u128::from(addend)))
                    .result(self.ctx);
                Ok(self
                    .emit(|ctx| IntToPtrOp::new(ctx, address, ptr_ty))
                    .result(self.ctx))
            }
            Target::Global(name) if addend == 0 => Ok(self
                .emit(|ctx| GlobalAddrOp::new(ctx, name, ptr_ty))
                .result(self.ctx)),
            Target::Global(name) => {
                let byte_ptr = self.byte_pointer_type();
                let base = self
                    .emit(|ctx| GlobalAddrOp::new(ctx, name, byte_ptr))
                    .result(self.ctx);
                let usize_ty = usize_type(self.ctx);
                let offset = self
                    .emit(|ctx| ConstantOp::new_int(ctx, usize_ty, u128::from(addend)))
                    .result(self.ctx);
                let moved = self
                    .emit(|ctx| PtrOffsetOp::new(ctx, base, offset))
                    .result(self.ctx);
                Ok(self
                    .emit(|ctx| PtrCastOp::new(ctx, moved, ptr_ty))
                    .result(self.ctx))
            }
        }
    }

    /// A value of type `ty` loaded from a read-only global holding the bytes of `alloc`.
    fn read_from_global(&mut self, ty: Ty, alloc: &Allocation) -> TResult<Value> {
        let mir_ty = self.types.translate(self.ctx, ty)?;
        let name = self.globals.constant(self.ctx, alloc)?;
        let ptr_ty = PtrType::get_generic(self.ctx, mir_ty).into();
        let address = self
            .emit(|ctx| GlobalAddrOp::new(ctx, name, ptr_ty))
            .result(self.ctx);
        Ok(self.emit(|ctx| LoadOp::new(ctx, address)).result(self.ctx))
    }

    /// A value of type `ty` built by storing the bytes of `alloc` into a fresh slot.
    fn materialize_bytes(&mut self, ty: Ty, alloc: &Allocation) -> TResult<Value> {
        let mir_ty = self.types.translate(self.ctx, ty)?;
        if alloc.bytes.iter().all(Option::is_none) {
            return Ok(self.emit(|ctx| UndefOp::new(ctx, mir_ty)).result(self.ctx));
        }
        let slot = self.emit(|ctx| AllocaOp::new(ctx, mir_ty)).result(self.ctx);
        let byte_ty = IntegerType::get(self.ctx, 8, Signedness::Unsigned);
        let byte_ptr_ty = self.byte_pointer_type();
        let bytes = self
            .emit(|ctx| PtrCastOp::new(ctx, slot, byte_ptr_ty))
            .result(self.ctx);
        let usize_ty = usize_type(self.ctx);
        for (offset, byte) in alloc.bytes.iter().enumerate() {
            let Some(byte) = byte else { continue };
            let index = self
                .emit(|ctx| ConstantOp::new_int(ctx, usize_ty, offset as u128))
                .result(self.ctx);
            let addr = self
                .emit(|ctx| PtrOffsetOp::new(ctx, bytes, index))
                .result(self.ctx);
            let value = self
                .emit(|ctx| ConstantOp::new_int(ctx, byte_ty, u128::from(*byte)))
                .result(self.ctx);
            self.emit(|ctx| StoreOp::new(ctx, value, addr));
        }
        Ok(self.emit(|ctx| LoadOp::new(ctx, slot)).result(self.ctx))
    }

    /// `mir.ptr<u8>`, the type of untyped addresses.
    pub(crate) fn byte_pointer_type(&mut self) -> TypeHandle {
        let byte_ty = IntegerType::get(self.ctx, 8, Signedness::Unsigned);
        PtrType::get_generic(self.ctx, byte_ty.into()).into()
    }
}

/// The bytes of a scalar allocation as a little-endian integer (uninitialised bytes read as 0).
fn read_bits(alloc: &Allocation) -> u128 {
    alloc.bytes.iter().rev().fold(0u128, |acc, byte| {
        (acc << 8) | u128::from(byte.unwrap_or(0))
    })
}

/// The pointer-sized little-endian value at `offset` of `alloc` (for a pointer with provenance,
/// its offset into the allocation it points to).
fn read_u64(alloc: &Allocation, offset: usize) -> u64 {
    alloc.bytes[offset..offset + 8]
        .iter()
        .rev()
        .fold(0u64, |acc, byte| (acc << 8) | u64::from(byte.unwrap_or(0)))
}
