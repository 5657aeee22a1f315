//! Operands: reading places, and constants.
//!
//! Scalar constants become `mir.constant`. Any other constant (a tuple, an array, an enum
//! value such as `None`) is rebuilt in a fresh slot byte by byte from rustc's evaluated
//! allocation, which keeps rustc's exact layout without interpreting it; LLVM folds it back.

use dialect_mir::ops::{
    AllocaOp, ConstantOp, IndexAddrOp, IntToPtrOp, LoadOp, PtrCastOp, StoreOp, UndefOp,
};
use dialect_mir::types::{PtrType, usize_type};
use pliron::builtin::types::{IntegerType, Signedness};
use pliron::r#type::TypedHandle;
use pliron::value::Value;
use rustc_public::mir::{Operand, Place, RuntimeChecks};
use rustc_public::ty::{Allocation, ConstantKind, FloatTy, MirConst, RigidTy, Ty, TyKind};

use super::body::FnTranslator;
use super::error::{TResult, unsupported};
use super::types::is_zero_sized;

impl FnTranslator<'_> {
    /// The value of an operand, `None` when it is zero-sized.
    pub(crate) fn translate_operand(&mut self, operand: &Operand) -> TResult<Option<Value>> {
        match operand {
            Operand::Copy(place) | Operand::Move(place) => self.read_place(place),
            Operand::Constant(constant) => self.translate_constant(&constant.const_),
            Operand::RuntimeChecks(check) => {
                let enabled = match check {
                    RuntimeChecks::OverflowChecks => self.overflow_checks,
                    // `core`'s precondition checks would only trap; device code skips them,
                    // like a release build of `core`.
                    RuntimeChecks::UbChecks | RuntimeChecks::ContractChecks => false,
                };
                Ok(Some(
                    self.emit(|ctx| ConstantOp::new_bool(ctx, enabled))
                        .result(self.ctx),
                ))
            }
        }
    }

    /// The Rust type of an operand.
    pub(crate) fn operand_ty(&self, operand: &Operand) -> TResult<Ty> {
        operand
            .ty(self.body.locals())
            .or_else(|e| unsupported!("an operand whose type is unknown ({e:?})"))
    }

    /// Loads the value of a place, `None` when it is zero-sized.
    pub(crate) fn read_place(&mut self, place: &Place) -> TResult<Option<Value>> {
        let place = self.translate_place(place)?;
        match place.thin()? {
            Some(ptr) => Ok(Some(
                self.emit(|ctx| LoadOp::new(ctx, ptr)).result(self.ctx),
            )),
            None => Ok(None),
        }
    }

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
            unsupported!(
                "a constant of type `{ty}` that holds a pointer (a reference to a `static`, a \
                 string literal or a promoted constant)"
            );
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
            _ => self.materialize_bytes(ty, alloc)?,
        };
        Ok(Some(value))
    }

    /// A value of type `ty` built by storing the bytes of `alloc` into a fresh slot.
    fn materialize_bytes(&mut self, ty: Ty, alloc: &Allocation) -> TResult<Value> {
        let mir_ty = self.types.translate(self.ctx, ty)?;
        if alloc.bytes.iter().all(Option::is_none) {
            return Ok(self.emit(|ctx| UndefOp::new(ctx, mir_ty)).result(self.ctx));
        }
        let slot = self.emit(|ctx| AllocaOp::new(ctx, mir_ty)).result(self.ctx);
        let byte_ty = IntegerType::get(self.ctx, 8, Signedness::Unsigned);
        let byte_ptr_ty = PtrType::get_generic(self.ctx, byte_ty.into()).into();
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
                .emit(|ctx| IndexAddrOp::new(ctx, bytes, index))
                .result(self.ctx);
            let value = self
                .emit(|ctx| ConstantOp::new_int(ctx, byte_ty, u128::from(*byte)))
                .result(self.ctx);
            self.emit(|ctx| StoreOp::new(ctx, value, addr));
        }
        Ok(self.emit(|ctx| LoadOp::new(ctx, slot)).result(self.ctx))
    }

    /// The dialect-mir integer type of a Rust integer (or `char`) type.
    pub(crate) fn int_type(&mut self, ty: Ty) -> TResult<TypedHandle<IntegerType>> {
        let handle = self.types.translate(self.ctx, ty)?;
        match TypedHandle::<IntegerType>::from_handle(handle, self.ctx) {
            Ok(int) => Ok(int),
            Err(_) => unsupported!("`{ty}` used where an integer was expected"),
        }
    }
}

/// The bytes of a scalar allocation as a little-endian integer (uninitialised bytes read as 0).
fn read_bits(alloc: &Allocation) -> u128 {
    alloc.bytes.iter().rev().fold(0u128, |acc, byte| {
        (acc << 8) | u128::from(byte.unwrap_or(0))
    })
}
