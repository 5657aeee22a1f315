//! Operands: reading places, runtime-check flags, and constants (see [super::constant]).

use dialect_mir::ops::{ConstantOp, LoadOp};
use pliron::builtin::types::IntegerType;
use pliron::r#type::TypedHandle;
use pliron::value::Value;
use rustc_public::mir::{Operand, Place, RuntimeChecks};
use rustc_public::ty::Ty;

use super::body::FnTranslator;
use super::error::{TResult, unsupported};

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

    /// The dialect-mir integer type of a Rust integer (or `char`) type.
    pub(crate) fn int_type(&mut self, ty: Ty) -> TResult<TypedHandle<IntegerType>> {
        let handle = self.types.translate(self.ctx, ty)?;
        match TypedHandle::<IntegerType>::from_handle(handle, self.ctx) {
            Ok(int) => Ok(int),
            Err(_) => unsupported!("`{ty}` used where an integer was expected"),
        }
    }
}
