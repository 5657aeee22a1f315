//! Calls of `core`'s compiler intrinsics (`wrapping_add`, `add_with_overflow`, `transmute`,
//! `sqrtf32`, ...): each becomes dialect-mir operations.

use dialect_mir::ops::*;
use pliron::context::Ptr;
use pliron::op::Op;
use pliron::operation::Operation;
use pliron::r#type::Typed;
use pliron::value::Value;
use rustc_public::mir::mono::Instance;
use rustc_public::mir::{BinOp, Operand, Place};
use rustc_public::ty::{GenericArgKind, Ty};

use super::body::FnTranslator;
use super::error::{TResult, unsupported};
use super::types::layout;

impl FnTranslator<'_> {
    /// A compiler intrinsic of `core` (`wrapping_add`, `add_with_overflow`, `black_box`, ...).
    pub(crate) fn translate_core_intrinsic(
        &mut self,
        name: &str,
        instance: &Instance,
        args: &[Operand],
        destination: &Place,
        target: Option<usize>,
    ) -> TResult<()> {
        let values = self.argument_values(args)?;
        let binary = |this: &mut Self,
                      build: fn(&mut pliron::context::Context, Value, Value) -> Ptr<Operation>|
         -> TResult<Option<Value>> {
            let [a, b] = values[..] else {
                unsupported!("the intrinsic `{name}` with {} arguments", values.len())
            };
            let op = build(this.ctx, a, b);
            this.inserter_append_operation(op);
            Ok(Some(op.deref(this.ctx).get_result(0)))
        };
        let result: Option<Value> = match name {
            "unchecked_add" | "wrapping_add" => {
                binary(self, |c, a, b| AddOp::new(c, a, b).get_operation())?
            }
            "unchecked_sub" | "wrapping_sub" => {
                binary(self, |c, a, b| SubOp::new(c, a, b).get_operation())?
            }
            "unchecked_mul" | "wrapping_mul" => {
                binary(self, |c, a, b| MulOp::new(c, a, b).get_operation())?
            }
            "unchecked_div" | "exact_div" => {
                binary(self, |c, a, b| DivOp::new(c, a, b).get_operation())?
            }
            "unchecked_rem" => binary(self, |c, a, b| RemOp::new(c, a, b).get_operation())?,
            "disjoint_bitor" => binary(self, |c, a, b| BitOrOp::new(c, a, b).get_operation())?,
            "three_way_compare" => binary(self, |c, a, b| CmpOp::new(c, a, b).get_operation())?,
            "arith_offset" | "offset" => {
                binary(self, |c, a, b| PtrOffsetOp::new(c, a, b).get_operation())?
            }
            "unchecked_shl" | "unchecked_shr" => {
                let [a, b] = values[..] else {
                    unsupported!("the intrinsic `{name}` with {} arguments", values.len())
                };
                let ty = a.get_type(self.ctx);
                let amount = self.emit(|ctx| IntCastOp::new(ctx, b, ty)).result(self.ctx);
                if name == "unchecked_shl" {
                    Some(self.emit(|ctx| ShlOp::new(ctx, a, amount)).result(self.ctx))
                } else {
                    Some(self.emit(|ctx| ShrOp::new(ctx, a, amount)).result(self.ctx))
                }
            }
            "rotate_left" | "rotate_right" => Some(self.rotate(name == "rotate_left", &values)?),
            "add_with_overflow" | "sub_with_overflow" | "mul_with_overflow" => {
                let [a, b] = values[..] else {
                    unsupported!("the intrinsic `{name}` with {} arguments", values.len())
                };
                let op = match name {
                    "add_with_overflow" => BinOp::Add,
                    "sub_with_overflow" => BinOp::Sub,
                    _ => BinOp::Mul,
                };
                self.store_checked(destination, op, a, b)?;
                None
            }
            "black_box" | "likely" | "unlikely" => values.first().copied(),
            "assume" | "cold_path" | "forget" => None,
            "ub_checks" | "contract_checks" | "is_val_statically_known" => Some(
                self.emit(|ctx| ConstantOp::new_bool(ctx, false))
                    .result(self.ctx),
            ),
            "overflow_checks" => {
                let enabled = self.overflow_checks;
                Some(
                    self.emit(|ctx| ConstantOp::new_bool(ctx, enabled))
                        .result(self.ctx),
                )
            }
            "size_of" | "align_of" | "min_align_of" | "pref_align_of" => {
                let ty = first_type_arg(instance)?;
                let shape = layout(ty)?;
                let value = if name == "size_of" {
                    shape.size.bytes() as u128
                } else {
                    u128::from(shape.abi_align)
                };
                let usize_ty = dialect_mir::types::usize_type(self.ctx);
                Some(
                    self.emit(|ctx| ConstantOp::new_int(ctx, usize_ty, value))
                        .result(self.ctx),
                )
            }
            "size_of_val" | "align_of_val" => {
                Some(self.size_or_align_of_val(name == "size_of_val", instance, &values)?)
            }
            "transmute" | "transmute_unchecked" => {
                let [value] = values[..] else {
                    unsupported!("`transmute` of a zero-sized value")
                };
                let to = self.place_type(destination)?;
                let to_mir = self.types.translate(self.ctx, to)?;
                Some(self.transmute(value, to_mir)?)
            }
            "float_to_int_unchecked" => {
                let [value] = values[..] else {
                    unsupported!("the intrinsic `{name}` with {} arguments", values.len())
                };
                let to = self.place_type(destination)?;
                let to_mir = self.types.translate(self.ctx, to)?;
                Some(
                    self.emit(|ctx| FloatToIntOp::new(ctx, value, to_mir))
                        .result(self.ctx),
                )
            }
            "read_via_copy" => {
                let [ptr] = values[..] else {
                    unsupported!("the intrinsic `{name}` with {} arguments", values.len())
                };
                Some(self.emit(|ctx| LoadOp::new(ctx, ptr)).result(self.ctx))
            }
            "write_via_move" => {
                if let [ptr, value] = values[..] {
                    self.emit(|ctx| StoreOp::new(ctx, value, ptr));
                }
                None
            }
            "discriminant_value" => {
                let [ptr] = values[..] else {
                    unsupported!("the intrinsic `{name}` with {} arguments", values.len())
                };
                let discr = self
                    .emit(|ctx| GetDiscriminantOp::new(ctx, ptr))
                    .result(self.ctx);
                let to = self.place_type(destination)?;
                let to_mir = self.types.translate(self.ctx, to)?;
                Some(
                    self.emit(|ctx| IntCastOp::new(ctx, discr, to_mir))
                        .result(self.ctx),
                )
            }
            atomic if atomic.starts_with("atomic_") => {
                self.translate_core_atomic(atomic, instance, &values, destination)?
            }
            "abort" => {
                self.emit(TrapOp::new);
                return Ok(());
            }
            "unreachable" => {
                self.emit(UnreachableOp::new);
                return Ok(());
            }
            other => match super::math::math_function(other) {
                Some(function) => Some(self.math(function, name, values, destination)?),
                None => unsupported!("the compiler intrinsic `{other}`"),
            },
        };
        self.store_result(destination, result)?;
        self.continue_to(target)
    }

    /// `x.rotate_left(n)` as `(x << (n & m)) | (x >> ((0 - n) & m))`, `m` = bits - 1, which
    /// LLVM recognises as a rotate.
    fn rotate(&mut self, left: bool, values: &[Value]) -> TResult<Value> {
        let [x, n] = values[..] else {
            unsupported!("a rotate with {} arguments", values.len())
        };
        let ty = x.get_type(self.ctx);
        let Ok(int_ty) =
            pliron::r#type::TypedHandle::<pliron::builtin::types::IntegerType>::from_handle(
                ty, self.ctx,
            )
        else {
            unsupported!("rotating a non-integer")
        };
        let width = int_ty.deref(self.ctx).width();
        let unsigned = pliron::builtin::types::IntegerType::get(
            self.ctx,
            width,
            pliron::builtin::types::Signedness::Unsigned,
        );
        let xu = self
            .emit(|ctx| IntCastOp::new(ctx, x, unsigned.into()))
            .result(self.ctx);
        let n = self
            .emit(|ctx| IntCastOp::new(ctx, n, unsigned.into()))
            .result(self.ctx);
        let mask = self
            .emit(|ctx| ConstantOp::new_int(ctx, unsigned, u128::from(width - 1)))
            .result(self.ctx);
        let zero = self
            .emit(|ctx| ConstantOp::new_int(ctx, unsigned, 0))
            .result(self.ctx);
        let forward = self
            .emit(|ctx| BitAndOp::new(ctx, n, mask))
            .result(self.ctx);
        let negated = self.emit(|ctx| SubOp::new(ctx, zero, n)).result(self.ctx);
        let backward = self
            .emit(|ctx| BitAndOp::new(ctx, negated, mask))
            .result(self.ctx);
        let (to_high, to_low) = if left {
            (forward, backward)
        } else {
            (backward, forward)
        };
        let high = self
            .emit(|ctx| ShlOp::new(ctx, xu, to_high))
            .result(self.ctx);
        let low = self
            .emit(|ctx| ShrOp::new(ctx, xu, to_low))
            .result(self.ctx);
        let rotated = self
            .emit(|ctx| BitOrOp::new(ctx, high, low))
            .result(self.ctx);
        Ok(self
            .emit(|ctx| IntCastOp::new(ctx, rotated, ty))
            .result(self.ctx))
    }
}

pub(crate) fn is_signed(ctx: &pliron::context::Context, ty: pliron::r#type::TypeHandle) -> bool {
    ty.deref(ctx)
        .downcast_ref::<pliron::builtin::types::IntegerType>()
        .is_some_and(|int| int.is_signed())
}

fn first_type_arg(instance: &Instance) -> TResult<Ty> {
    match instance.args().0.first() {
        Some(GenericArgKind::Type(ty)) => Ok(*ty),
        _ => unsupported!("an intrinsic without its type argument"),
    }
}
