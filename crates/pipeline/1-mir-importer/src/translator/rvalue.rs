//! Right-hand sides of assignments.
//!
//! Scalar results are computed as values and stored into the destination; aggregates are
//! built in place, field by field, at the destination's address.

use dialect_mir::ops::*;
use dialect_mir::types::usize_type;
use pliron::op::Op;
use pliron::value::Value;
use rustc_public::mir::mono::Instance;
use rustc_public::mir::{
    AggregateKind, BinOp, CastKind, Operand, Place, PointerCoercion, Rvalue, UnOp,
};
use rustc_public::ty::{ClosureKind, RigidTy, Ty, TyKind};
use rustc_public_bridge::IndexedVal;

use super::body::FnTranslator;
use super::error::{TResult, unsupported};
use super::global::Target;
use super::place::{Address, PlaceRef};
use super::types::is_zero_sized;
use super::types::pointee_is_unsized_slice;

impl FnTranslator<'_> {
    pub(crate) fn translate_assign(&mut self, place: &Place, rvalue: &Rvalue) -> TResult<()> {
        match rvalue {
            Rvalue::Aggregate(kind, operands) => {
                let dest = self.translate_place(place)?;
                self.build_aggregate(&dest, kind, operands)
            }
            Rvalue::CheckedBinaryOp(op, lhs, rhs) => {
                let a = self.operand_value(lhs)?;
                let b = self.operand_value(rhs)?;
                self.store_checked(place, *op, a, b)
            }
            Rvalue::Repeat(operand, count) => {
                let Ok(count) = count.eval_target_usize() else {
                    unsupported!("an array repeat expression of unknown length")
                };
                let dest = self.translate_place(place)?;
                self.build_repeat(&dest, operand, count)
            }
            _ => {
                let value = self.rvalue_value(rvalue)?;
                let dest = self.translate_place(place)?;
                if let (Some(value), Some(ptr)) = (value, dest.thin()?) {
                    self.emit(|ctx| StoreOp::new(ctx, value, ptr));
                }
                Ok(())
            }
        }
    }

    /// The value of a non-aggregate rvalue, `None` when it is zero-sized.
    fn rvalue_value(&mut self, rvalue: &Rvalue) -> TResult<Option<Value>> {
        Ok(match rvalue {
            Rvalue::Use(operand, _) => self.translate_operand(operand)?,
            Rvalue::CopyForDeref(place) => self.read_place(place)?,
            Rvalue::BinaryOp(op, lhs, rhs) => Some(self.binary(*op, lhs, rhs)?),
            Rvalue::UnaryOp(op, operand) => {
                let result_ty = match rvalue.ty(self.body.locals()) {
                    Ok(ty) => ty,
                    Err(e) => unsupported!("an operation whose result type is unknown ({e:?})"),
                };
                self.unary(*op, operand, result_ty)?
            }
            Rvalue::Cast(kind, operand, to) => self.cast(kind, operand, *to)?,
            Rvalue::Ref(_, _, place) | Rvalue::AddressOf(_, place) => self.address_of(place)?,
            Rvalue::Reborrow(_, _, place) => self.address_of(place)?,
            Rvalue::Discriminant(place) => {
                let place = self.translate_place(place)?;
                if let Some(value) = self.single_variant_discriminant(place.ty)? {
                    return Ok(Some(value));
                }
                let is_enum = matches!(
                    place.ty.kind(),
                    TyKind::RigidTy(RigidTy::Adt(def, _))
                        if matches!(def.kind(), rustc_public::ty::AdtKind::Enum)
                );
                if !is_enum {
                    unsupported!("the discriminant of `{}`, which is not an enum", place.ty)
                }
                match place.thin()? {
                    Some(ptr) => Some(
                        self.emit(|ctx| GetDiscriminantOp::new(ctx, ptr))
                            .result(self.ctx),
                    ),
                    None => unsupported!("the discriminant of the zero-sized `{}`", place.ty),
                }
            }
            Rvalue::Len(place) => {
                let place = self.translate_place(place)?;
                Some(self.length_of(&place)?)
            }
            Rvalue::ThreadLocalRef(_) => unsupported!(
                "thread-local statics (`#[thread_local]`): one copy per GPU thread would be \
                 module-scope `.local` memory, which PTX does not allow in the ABI mode LLVM \
                 emits; keep per-thread state in local variables, or index a buffer by the \
                 thread's index"
            ),
            Rvalue::Aggregate(..) | Rvalue::CheckedBinaryOp(..) | Rvalue::Repeat(..) => {
                unreachable!("handled by translate_assign")
            }
        })
    }

    /// The discriminant of an enum with a single inhabited variant (a constant: nothing is
    /// stored for it, and the enum may even be zero-sized), or of an uninhabited enum (any
    /// constant: no value exists), or `None` for other types.
    pub(crate) fn single_variant_discriminant(&mut self, ty: Ty) -> TResult<Option<Value>> {
        let TyKind::RigidTy(RigidTy::Adt(def, _)) = ty.kind() else {
            return Ok(None);
        };
        if !matches!(def.kind(), rustc_public::ty::AdtKind::Enum) {
            return Ok(None);
        }
        let value = match super::types::layout(ty)?.variants {
            rustc_public::abi::VariantsShape::Single { index } => {
                def.discriminant_for_variant(index).val
            }
            // No variant is inhabited: no value exists, the code reading one is unreachable.
            rustc_public::abi::VariantsShape::Empty => 0,
            rustc_public::abi::VariantsShape::Multiple { .. } => return Ok(None),
        };
        let Some(discr_ty) = ty.kind().discriminant_ty() else {
            return Ok(None);
        };
        let int_ty = self.int_type(discr_ty)?;
        Ok(Some(
            self.emit(|ctx| ConstantOp::new_int(ctx, int_ty, value))
                .result(self.ctx),
        ))
    }

    /// A pointer (or slice) to a place, as `&place` / `&raw place` produce it.
    fn address_of(&mut self, place: &Place) -> TResult<Option<Value>> {
        let place_ref = self.translate_place(place)?;
        Ok(Some(match place_ref.address {
            Some(Address::Thin(ptr) | Address::Slice(ptr) | Address::Dyn(ptr)) => ptr,
            None => self.dangling_pointer(place_ref.ty)?,
        }))
    }

    /// A well-aligned non-null pointer for a reference to a zero-sized place.
    fn dangling_pointer(&mut self, pointee: Ty) -> TResult<Value> {
        let align = super::types::layout(pointee)?.abi_align.max(1);
        let usize_ty = usize_type(self.ctx);
        let address = self
            .emit(|ctx| ConstantOp::new_int(ctx, usize_ty, u128::from(align)))
            .result(self.ctx);
        let pointee_ty = self.types.translate(self.ctx, pointee)?;
        let ptr_ty = dialect_mir::types::PtrType::get_generic(self.ctx, pointee_ty).into();
        Ok(self
            .emit(|ctx| IntToPtrOp::new(ctx, address, ptr_ty))
            .result(self.ctx))
    }

    fn operand_value(&mut self, operand: &Operand) -> TResult<Value> {
        match self.translate_operand(operand)? {
            Some(value) => Ok(value),
            None => unsupported!("a zero-sized value used in arithmetic"),
        }
    }

    fn binary(&mut self, op: BinOp, lhs: &Operand, rhs: &Operand) -> TResult<Value> {
        let lhs_ty = self.operand_ty(lhs)?;
        let a = self.operand_value(lhs)?;
        let b = self.operand_value(rhs)?;
        if pointee_is_unsized_slice(lhs_ty) {
            return self.wide_pointer_comparison(op, a, b);
        }
        let result = match op {
            BinOp::Cmp => {
                let cmp = self.emit(|ctx| CmpOp::new(ctx, a, b)).result(self.ctx);
                let ordering = op.ty(lhs_ty, self.operand_ty(rhs)?);
                return self.ordering_from_cmp(cmp, ordering);
            }
            BinOp::Shl | BinOp::ShlUnchecked | BinOp::Shr | BinOp::ShrUnchecked => {
                let masked = matches!(op, BinOp::Shl | BinOp::Shr);
                let amount = self.shift_amount(lhs_ty, b, masked)?;
                super::arith::binary_op(self.ctx, op, a, amount)?
            }
            _ => super::arith::binary_op(self.ctx, op, a, b)?,
        };
        self.inserter_append_operation(result);
        Ok(result.deref(self.ctx).get_result(0))
    }

    /// A comparison of two slice pointers (`*const [T]`), which compares the data pointers
    /// and then the lengths, as Rust does for wide raw pointers.
    fn wide_pointer_comparison(&mut self, op: BinOp, a: Value, b: Value) -> TResult<Value> {
        let parts = |this: &mut Self, v: Value| {
            let ptr = this.emit(|ctx| SlicePtrOp::new(ctx, v)).result(this.ctx);
            let len = this.emit(|ctx| SliceLenOp::new(ctx, v)).result(this.ctx);
            (ptr, len)
        };
        let (a_ptr, a_len) = parts(self, a);
        let (b_ptr, b_len) = parts(self, b);
        let compare = |this: &mut Self, op: BinOp, x: Value, y: Value| -> TResult<Value> {
            let built = super::arith::binary_op(this.ctx, op, x, y)?;
            this.inserter_append_operation(built);
            Ok(built.deref(this.ctx).get_result(0))
        };
        match op {
            BinOp::Eq | BinOp::Ne => {
                let ptrs = compare(self, op, a_ptr, b_ptr)?;
                let lens = compare(self, op, a_len, b_len)?;
                if op == BinOp::Eq {
                    Ok(self
                        .emit(|ctx| BitAndOp::new(ctx, ptrs, lens))
                        .result(self.ctx))
                } else {
                    Ok(self
                        .emit(|ctx| BitOrOp::new(ctx, ptrs, lens))
                        .result(self.ctx))
                }
            }
            BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => {
                // Lexicographic: the pointers decide unless they are equal.
                let strict = match op {
                    BinOp::Lt | BinOp::Le => BinOp::Lt,
                    _ => BinOp::Gt,
                };
                let by_ptr = compare(self, strict, a_ptr, b_ptr)?;
                let same_ptr = compare(self, BinOp::Eq, a_ptr, b_ptr)?;
                let by_len = compare(self, op, a_len, b_len)?;
                let tie = self
                    .emit(|ctx| BitAndOp::new(ctx, same_ptr, by_len))
                    .result(self.ctx);
                Ok(self
                    .emit(|ctx| BitOrOp::new(ctx, by_ptr, tie))
                    .result(self.ctx))
            }
            other => unsupported!("`{other:?}` on slice pointers"),
        }
    }

    /// A shift amount converted to the shifted type; for MIR's plain `Shl`/`Shr` it is taken
    /// modulo the bit width, as Rust specifies (the overflow check, if any, came before).
    fn shift_amount(&mut self, shifted: Ty, amount: Value, masked: bool) -> TResult<Value> {
        let int_ty = self.int_type(shifted)?;
        let amount = self
            .emit(|ctx| IntCastOp::new(ctx, amount, int_ty.into()))
            .result(self.ctx);
        if !masked {
            return Ok(amount);
        }
        let bits = int_ty.deref(self.ctx).width();
        let mask = self
            .emit(|ctx| ConstantOp::new_int(ctx, int_ty, u128::from(bits - 1)))
            .result(self.ctx);
        Ok(self
            .emit(|ctx| BitAndOp::new(ctx, amount, mask))
            .result(self.ctx))
    }

    /// Stores `a op b` into the `(T, bool)` at `destination`: the wrapped result and whether
    /// it overflowed (MIR's checked operations and the `*_with_overflow` intrinsics).
    pub(crate) fn store_checked(
        &mut self,
        destination: &Place,
        op: BinOp,
        a: Value,
        b: Value,
    ) -> TResult<()> {
        let (value, overflow) = self.checked_values(op, a, b)?;
        let Some(ptr) = self.translate_place(destination)?.thin()? else {
            return Ok(());
        };
        for (field, part) in [(0, value), (1, overflow)] {
            let addr = self
                .emit(|ctx| FieldAddrOp::new(ctx, ptr, field))
                .result(self.ctx);
            self.emit(|ctx| StoreOp::new(ctx, part, addr));
        }
        Ok(())
    }

    /// The wrapped result and the overflow flag of `a op b`.
    fn checked_values(&mut self, op: BinOp, a: Value, b: Value) -> TResult<(Value, Value)> {
        let op = match op {
            BinOp::Add => CheckedAddOp::new(self.ctx, a, b).get_operation(),
            BinOp::Sub => CheckedSubOp::new(self.ctx, a, b).get_operation(),
            BinOp::Mul => CheckedMulOp::new(self.ctx, a, b).get_operation(),
            other => unsupported!("checked `{other:?}`"),
        };
        self.inserter_append_operation(op);
        let op = op.deref(self.ctx);
        Ok((op.get_result(0), op.get_result(1)))
    }

    /// `op operand`, whose result has type `result_ty`.
    fn unary(&mut self, op: UnOp, operand: &Operand, result_ty: Ty) -> TResult<Option<Value>> {
        let ty = self.operand_ty(operand)?;
        let Some(value) = self.translate_operand(operand)? else {
            return Ok(None);
        };
        Ok(match op {
            UnOp::Not => Some(self.emit(|ctx| NotOp::new(ctx, value)).result(self.ctx)),
            UnOp::Neg => Some(self.emit(|ctx| NegOp::new(ctx, value)).result(self.ctx)),
            UnOp::PtrMetadata => match pointer_kind(ty) {
                PointerKind::Slice => Some(
                    self.emit(|ctx| SliceLenOp::new(ctx, value))
                        .result(self.ctx),
                ),
                PointerKind::Dyn => {
                    // `DynMetadata<dyn Trait>`: the vtable pointer, in a struct of its own.
                    let byte_ptr = self.byte_pointer_type();
                    let vtable = self
                        .emit(|ctx| DynVtableOp::new(ctx, value, byte_ptr))
                        .result(self.ctx);
                    let metadata = self.types.translate(self.ctx, result_ty)?;
                    Some(self.transmute(vtable, metadata)?)
                }
                // The metadata of a thin pointer is `()`.
                PointerKind::Thin => None,
            },
        })
    }

    fn cast(&mut self, kind: &CastKind, operand: &Operand, to: Ty) -> TResult<Option<Value>> {
        let from = self.operand_ty(operand)?;
        if let CastKind::PointerCoercion(
            PointerCoercion::ReifyFnPointer(_) | PointerCoercion::ClosureFnPointer(_),
        ) = kind
        {
            let to_mir = self.types.translate(self.ctx, to)?;
            return self.function_pointer(from, to_mir).map(Some);
        }
        let Some(value) = self.translate_operand(operand)? else {
            if is_zero_sized(to)? {
                return Ok(None);
            }
            unsupported!("casting the zero-sized `{from}` to `{to}`")
        };
        let to_mir = self.types.translate(self.ctx, to)?;
        let ctx = &mut *self.ctx;
        let op = match kind {
            CastKind::IntToInt => IntCastOp::new(ctx, value, to_mir).get_operation(),
            CastKind::IntToFloat => IntToFloatOp::new(ctx, value, to_mir).get_operation(),
            CastKind::FloatToInt => FloatToIntOp::new(ctx, value, to_mir).get_operation(),
            CastKind::FloatToFloat => FloatCastOp::new(ctx, value, to_mir).get_operation(),
            CastKind::PointerExposeAddress => PtrToIntOp::new(ctx, value, to_mir).get_operation(),
            CastKind::PointerWithExposedProvenance => {
                IntToPtrOp::new(ctx, value, to_mir).get_operation()
            }
            CastKind::Subtype => return Ok(Some(value)),
            CastKind::Transmute => return self.transmute(value, to_mir).map(Some),
            CastKind::PtrToPtr | CastKind::PointerCoercion(PointerCoercion::MutToConstPointer) => {
                return self.pointer_cast(value, from, to, to_mir).map(Some);
            }
            CastKind::PointerCoercion(PointerCoercion::ArrayToPointer) => {
                let first = self
                    .emit(|ctx| ArrayElemAddrOp::new(ctx, value))
                    .result(self.ctx);
                return self.pointer_cast(first, from, to, to_mir).map(Some);
            }
            CastKind::PointerCoercion(PointerCoercion::Unsize) => {
                return self.unsize(value, from, to, to_mir).map(Some);
            }
            CastKind::PointerCoercion(PointerCoercion::UnsafeFnPointer) | CastKind::FnPtrToPtr => {
                PtrCastOp::new(ctx, value, to_mir).get_operation()
            }
            CastKind::PointerCoercion(
                PointerCoercion::ReifyFnPointer(_) | PointerCoercion::ClosureFnPointer(_),
            ) => unreachable!("handled above"),
        };
        self.inserter_append_operation(op);
        Ok(Some(op.deref(self.ctx).get_result(0)))
    }

    /// Reinterprets the bits of `value` as `to`: a no-op between equal dialect types, a
    /// `mir.bitcast` between scalars, and through memory otherwise (the sizes are equal, rustc
    /// checked).
    pub(crate) fn transmute(
        &mut self,
        value: Value,
        to: pliron::r#type::TypeHandle,
    ) -> TResult<Value> {
        use pliron::r#type::Typed;
        let from = value.get_type(self.ctx);
        if from == to {
            return Ok(value);
        }
        let scalar = |ctx: &pliron::context::Context, ty| {
            dialect_mir::types::is_int_or_bool(ctx, ty)
                || dialect_mir::types::is_float(ctx, ty)
                || dialect_mir::types::is_ptr(ctx, ty)
        };
        let is_bool = dialect_mir::types::is_bool;
        if (is_bool(self.ctx, from) || is_bool(self.ctx, to))
            && dialect_mir::types::is_int_or_bool(self.ctx, from)
            && dialect_mir::types::is_int_or_bool(self.ctx, to)
        {
            // A `bool` is one byte in memory but an `i1` value: to and from `u8`/`i8` it is
            // an integer conversion (a valid `bool` byte is 0 or 1).
            return Ok(self
                .emit(|ctx| IntCastOp::new(ctx, value, to))
                .result(self.ctx));
        }
        if scalar(self.ctx, from) && scalar(self.ctx, to) {
            return Ok(self
                .emit(|ctx| BitcastOp::new(ctx, value, to))
                .result(self.ctx));
        }
        // Through memory: a slot of whichever type needs the larger alignment, so that both
        // the store of `from` and the load of `to` are aligned (`[u8; 16]` to `u128` must not
        // load 16 bytes from a slot aligned to 1: unoptimised PTX faults on it).
        let align = |ctx: &pliron::context::Context, ty| {
            dialect_mir::types::layout_of(ctx, ty).map_or(1, |layout| layout.align)
        };
        let slot_ty = if align(self.ctx, to) > align(self.ctx, from) {
            to
        } else {
            from
        };
        let slot = self
            .emit(|ctx| AllocaOp::new(ctx, slot_ty))
            .result(self.ctx);
        let pointer_to = |this: &mut Self, ty| {
            if ty == slot_ty {
                return slot;
            }
            let ptr = dialect_mir::types::PtrType::get_generic(this.ctx, ty).into();
            this.emit(|ctx| PtrCastOp::new(ctx, slot, ptr))
                .result(this.ctx)
        };
        let store_to = pointer_to(self, from);
        self.emit(|ctx| StoreOp::new(ctx, value, store_to));
        let load_from = pointer_to(self, to);
        Ok(self
            .emit(|ctx| LoadOp::new(ctx, load_from))
            .result(self.ctx))
    }

    /// A pointer-to-pointer cast; between slices, trait objects and thin pointers it takes or
    /// keeps the data pointer (and keeps the length or vtable between two of a kind).
    fn pointer_cast(
        &mut self,
        value: Value,
        from: Ty,
        to: Ty,
        to_mir: pliron::r#type::TypeHandle,
    ) -> TResult<Value> {
        Ok(match (pointer_kind(from), pointer_kind(to)) {
            (PointerKind::Thin, PointerKind::Thin) => self
                .emit(|ctx| PtrCastOp::new(ctx, value, to_mir))
                .result(self.ctx),
            (PointerKind::Slice, PointerKind::Thin) => {
                let data = self
                    .emit(|ctx| SlicePtrOp::new(ctx, value))
                    .result(self.ctx);
                self.emit(|ctx| PtrCastOp::new(ctx, data, to_mir))
                    .result(self.ctx)
            }
            (PointerKind::Dyn, PointerKind::Thin) => self
                .emit(|ctx| DynDataOp::new(ctx, value, to_mir))
                .result(self.ctx),
            (PointerKind::Slice, PointerKind::Slice) => {
                let data = self
                    .emit(|ctx| SlicePtrOp::new(ctx, value))
                    .result(self.ctx);
                let len = self
                    .emit(|ctx| SliceLenOp::new(ctx, value))
                    .result(self.ctx);
                self.make_slice(data, len, to_mir)?
            }
            (PointerKind::Dyn, PointerKind::Dyn) => self.retype_dyn(value, to_mir)?,
            _ => unsupported!("casting the pointer `{from}` to `{to}`"),
        })
    }

    /// An unsizing coercion of a reference or raw pointer: `&[T; N]` to `&[T]`, `&S<[T; N]>`
    /// to `&S<[T]>` for a struct ending in an array (the length joins the pointer), `&S` to
    /// `&dyn Trait`, `&(dyn Trait + Send)` to `&dyn Trait`.
    fn unsize(
        &mut self,
        value: Value,
        from: Ty,
        to: Ty,
        to_mir: pliron::r#type::TypeHandle,
    ) -> TResult<Value> {
        // `Box` derefs as a builtin but is a struct around its pointer.
        let is_box = matches!(from.kind(), TyKind::RigidTy(RigidTy::Adt(def, _)) if def.is_box());
        let (false, Some(source), Some(target)) = (
            is_box,
            from.kind().builtin_deref(true).map(|t| t.ty),
            to.kind().builtin_deref(true).map(|t| t.ty),
        ) else {
            return self.unsize_through_struct(value, from, to, to_mir);
        };
        if pointee_is_unsized_slice(to)
            && let Some(len) = array_tail_len(source)
        {
            let len = self.usize_constant(u128::from(len));
            return self.make_slice(value, len, to_mir);
        }
        match (source.kind(), target.kind()) {
            (TyKind::RigidTy(RigidTy::Dynamic(..)), TyKind::RigidTy(RigidTy::Dynamic(..))) => {
                let same_principal = match (
                    source.kind().trait_principal(),
                    target.kind().trait_principal(),
                ) {
                    (Some(a), Some(b)) => a.value.def_id == b.value.def_id,
                    (a, b) => a.is_none() && b.is_none(),
                };
                if same_principal {
                    self.retype_dyn(value, to_mir)
                } else {
                    self.upcast_dyn(value, source, target, to_mir)
                }
            }
            (_, TyKind::RigidTy(RigidTy::Dynamic(..))) => {
                self.unsize_to_dyn(value, source, target, to_mir)
            }
            _ => unsupported!("the unsizing coercion from `{from}` to `{to}`"),
        }
    }

    /// An unsizing coercion of a struct that wraps a pointer (`CoerceUnsized`: `NonNull<[T;
    /// N]>` to `NonNull<[T]>`, a user's smart pointer): the struct rebuilt field by field, the
    /// one field whose type changes unsized in turn (as rustc's `coerce_unsized_into` does).
    fn unsize_through_struct(
        &mut self,
        value: Value,
        from: Ty,
        to: Ty,
        to_mir: pliron::r#type::TypeHandle,
    ) -> TResult<Value> {
        if let (
            TyKind::RigidTy(RigidTy::Pat(inner_from, _)),
            TyKind::RigidTy(RigidTy::Pat(inner_to, _)),
        ) = (from.kind(), to.kind())
        {
            // A pattern type (`NonNull`'s `*const T is !null`) is its base type at run time.
            return self.unsize(value, inner_from, inner_to, to_mir);
        }
        let (
            TyKind::RigidTy(RigidTy::Adt(def, from_args)),
            TyKind::RigidTy(RigidTy::Adt(to_def, to_args)),
        ) = (from.kind(), to.kind())
        else {
            unsupported!("the unsizing coercion from `{from}` to `{to}`")
        };
        let variants = def.variants();
        if def != to_def || def.kind() != rustc_public::ty::AdtKind::Struct || variants.len() != 1 {
            unsupported!("the unsizing coercion from `{from}` to `{to}` (not one struct)")
        }
        let from_mir = self.types.translate(self.ctx, from)?;
        let source = self
            .emit(|ctx| AllocaOp::new(ctx, from_mir))
            .result(self.ctx);
        self.emit(|ctx| StoreOp::new(ctx, value, source));
        let target = self.emit(|ctx| AllocaOp::new(ctx, to_mir)).result(self.ctx);
        for (index, field) in variants[0].fields().iter().enumerate() {
            let (field_from, field_to) =
                (field.ty_with_args(&from_args), field.ty_with_args(&to_args));
            if is_zero_sized(field_to)? {
                continue;
            }
            let index = index as u32;
            let from_addr = self
                .emit(|ctx| FieldAddrOp::new(ctx, source, index))
                .result(self.ctx);
            let mut field_value = self
                .emit(|ctx| LoadOp::new(ctx, from_addr))
                .result(self.ctx);
            if field_from != field_to {
                let field_mir = self.types.translate(self.ctx, field_to)?;
                field_value = self.unsize(field_value, field_from, field_to, field_mir)?;
            }
            let to_addr = self
                .emit(|ctx| FieldAddrOp::new(ctx, target, index))
                .result(self.ctx);
            self.emit(|ctx| StoreOp::new(ctx, field_value, to_addr));
        }
        Ok(self.emit(|ctx| LoadOp::new(ctx, target)).result(self.ctx))
    }

    /// The address of the function a function item or a non-capturing closure of type `from`
    /// becomes as a function pointer, of type `ptr_ty`.
    fn function_pointer(&mut self, from: Ty, ptr_ty: pliron::r#type::TypeHandle) -> TResult<Value> {
        let instance = match from.kind() {
            TyKind::RigidTy(RigidTy::FnDef(def, args)) => Instance::resolve_for_fn_ptr(def, &args),
            TyKind::RigidTy(RigidTy::Closure(def, args)) => {
                Instance::resolve_closure(def, &args, ClosureKind::FnOnce)
            }
            _ => unsupported!("a function pointer made from a value of type `{from}`"),
        };
        let instance = match instance {
            Ok(instance) => instance,
            Err(e) => unsupported!("a function pointer to `{from}` ({e})"),
        };
        // A formatting method's address may be its descriptor (see `fmt_descriptor`).
        Ok(match self.globals.function_address(self.ctx, &instance)? {
            Target::Global(name) => self
                .emit(|ctx| GlobalAddrOp::new(ctx, name, ptr_ty))
                .result(self.ctx),
            Target::Function(name) => self
                .emit(|ctx| FuncAddrOp::new(ctx, name, ptr_ty))
                .result(self.ctx),
            Target::Address => unsupported!("the address of `{}` as a number", instance.name()),
        })
    }

    /// A slice of type `slice_ty` from a data pointer (cast to the slice's element pointer
    /// type) and a length.
    fn make_slice(
        &mut self,
        data: Value,
        len: Value,
        slice_ty: pliron::r#type::TypeHandle,
    ) -> TResult<Value> {
        let elem_ptr_ty = self.slice_data_pointer_type(slice_ty)?;
        let data = self
            .emit(|ctx| PtrCastOp::new(ctx, data, elem_ptr_ty))
            .result(self.ctx);
        Ok(self
            .emit(|ctx| MakeSliceOp::new(ctx, data, len, slice_ty))
            .result(self.ctx))
    }

    /// The type of the data pointer of a slice type.
    fn slice_data_pointer_type(
        &mut self,
        slice_ty: pliron::r#type::TypeHandle,
    ) -> TResult<pliron::r#type::TypeHandle> {
        match dialect_mir::ops::slice_elem(self.ctx, slice_ty) {
            Some(elem) => Ok(dialect_mir::types::PtrType::get_generic(self.ctx, elem).into()),
            None => unsupported!("a slice cast to a non-slice type"),
        }
    }

    /// Builds an aggregate at `dest`, field by field.
    fn build_aggregate(
        &mut self,
        dest: &PlaceRef,
        kind: &AggregateKind,
        operands: &[Operand],
    ) -> TResult<()> {
        if let AggregateKind::RawPtr(pointee, _) = kind {
            let value = self.raw_pointer_from_parts(dest.ty, *pointee, operands)?;
            if let Some(ptr) = dest.thin()? {
                self.emit(|ctx| StoreOp::new(ctx, value, ptr));
            }
            return Ok(());
        }
        let Some(base) = dest.thin()? else {
            // A zero-sized aggregate: its operands are zero-sized too, nothing to store.
            return Ok(());
        };
        match kind {
            AggregateKind::Tuple | AggregateKind::Closure(..) => {
                self.store_fields(base, None, operands)
            }
            AggregateKind::Adt(def, variant, _, _, active_field) => {
                if let Some(field) = active_field {
                    // A union: the one operand is the active field, at the union's address.
                    let [operand] = operands else {
                        unsupported!("a union value built from {} operands", operands.len())
                    };
                    let Some(value) = self.translate_operand(operand)? else {
                        return Ok(());
                    };
                    let addr = self
                        .emit(|ctx| FieldAddrOp::new(ctx, base, *field as u32))
                        .result(self.ctx);
                    self.emit(|ctx| StoreOp::new(ctx, value, addr));
                    return Ok(());
                }
                if super::types::is_disjoint_slice(*def) {
                    return self.store_fields(base, None, operands);
                }
                match def.kind() {
                    rustc_public::ty::AdtKind::Enum => {
                        let variant = variant.to_index() as u32;
                        self.store_fields(base, Some(variant), operands)?;
                        self.emit(|ctx| SetDiscriminantOp::new(ctx, base, variant));
                        Ok(())
                    }
                    _ => self.store_fields(base, None, operands),
                }
            }
            AggregateKind::Array(_) => {
                let first = self
                    .emit(|ctx| ArrayElemAddrOp::new(ctx, base))
                    .result(self.ctx);
                let usize_ty = usize_type(self.ctx);
                for (i, operand) in operands.iter().enumerate() {
                    let Some(value) = self.translate_operand(operand)? else {
                        continue;
                    };
                    let index = self
                        .emit(|ctx| ConstantOp::new_int(ctx, usize_ty, i as u128))
                        .result(self.ctx);
                    let addr = self
                        .emit(|ctx| PtrOffsetOp::new(ctx, first, index))
                        .result(self.ctx);
                    self.emit(|ctx| StoreOp::new(ctx, value, addr));
                }
                Ok(())
            }
            AggregateKind::Coroutine(..) | AggregateKind::CoroutineClosure(..) => {
                unsupported!("coroutines and async code")
            }
            AggregateKind::RawPtr(..) => unreachable!("handled above"),
        }
    }

    /// Stores each non-zero-sized operand into its field (of `variant`, for an enum).
    fn store_fields(
        &mut self,
        base: Value,
        variant: Option<u32>,
        operands: &[Operand],
    ) -> TResult<()> {
        for (i, operand) in operands.iter().enumerate() {
            let Some(value) = self.translate_operand(operand)? else {
                continue;
            };
            let addr = match variant {
                Some(v) => self
                    .emit(|ctx| VariantFieldAddrOp::new(ctx, base, v, i as u32))
                    .result(self.ctx),
                None => self
                    .emit(|ctx| FieldAddrOp::new(ctx, base, i as u32))
                    .result(self.ctx),
            };
            self.emit(|ctx| StoreOp::new(ctx, value, addr));
        }
        Ok(())
    }

    /// A raw pointer from its data pointer and metadata (`ptr::from_raw_parts`).
    pub(crate) fn raw_pointer_from_parts(
        &mut self,
        ptr_ty: Ty,
        pointee: Ty,
        operands: &[Operand],
    ) -> TResult<Value> {
        let to_mir = self.types.translate(self.ctx, ptr_ty)?;
        let data = match operands
            .first()
            .map(|o| self.translate_operand(o))
            .transpose()?
            .flatten()
        {
            Some(data) => data,
            None => unsupported!("a raw pointer built from a zero-sized value"),
        };
        match super::types::slice_tail(pointee) {
            Some(_) => {
                let len = match operands
                    .get(1)
                    .map(|o| self.translate_operand(o))
                    .transpose()?
                    .flatten()
                {
                    Some(len) => len,
                    None => unsupported!("a slice pointer without a length"),
                };
                self.make_slice(data, len, to_mir)
            }
            None => Ok(self
                .emit(|ctx| PtrCastOp::new(ctx, data, to_mir))
                .result(self.ctx)),
        }
    }

    /// `[value; count]` at `dest`: one store per element for short arrays, a loop over the
    /// elements for longer ones.
    fn build_repeat(&mut self, dest: &PlaceRef, operand: &Operand, count: u64) -> TResult<()> {
        const MAX_UNROLLED: u64 = 16;
        let Some(base) = dest.thin()? else {
            return Ok(());
        };
        let Some(value) = self.translate_operand(operand)? else {
            return Ok(());
        };
        let first = self
            .emit(|ctx| ArrayElemAddrOp::new(ctx, base))
            .result(self.ctx);
        if count > MAX_UNROLLED {
            self.fill_loop(first, value, count);
            return Ok(());
        }
        for i in 0..count {
            let index = self.usize_constant(u128::from(i));
            let addr = self
                .emit(|ctx| PtrOffsetOp::new(ctx, first, index))
                .result(self.ctx);
            self.emit(|ctx| StoreOp::new(ctx, value, addr));
        }
        Ok(())
    }

    /// Stores `value` into `count` consecutive elements from `first`, in a loop whose counter
    /// lives in a slot (mem2reg promotes it); translation goes on after the loop.
    fn fill_loop(&mut self, first: Value, value: Value, count: u64) {
        use pliron::irbuild::inserter::IRInserter;
        let usize_ty = usize_type(self.ctx);
        let counter = self
            .emit(|ctx| AllocaOp::new(ctx, usize_ty.into()))
            .result(self.ctx);
        let zero = self.usize_constant(0);
        self.emit(|ctx| StoreOp::new(ctx, zero, counter));
        let end = self.usize_constant(u128::from(count));
        let (head, body, done) = (
            self.new_block("fill_head"),
            self.new_block("fill_body"),
            self.new_block("fill_done"),
        );
        self.emit(|ctx| GotoOp::new(ctx, head));

        self.inserter = IRInserter::new_at_block_end(head);
        let i = self.emit(|ctx| LoadOp::new(ctx, counter)).result(self.ctx);
        let more = self.emit(|ctx| LtOp::new(ctx, i, end)).result(self.ctx);
        self.emit(|ctx| CondBrOp::new(ctx, more, body, done));

        self.inserter = IRInserter::new_at_block_end(body);
        let addr = self
            .emit(|ctx| PtrOffsetOp::new(ctx, first, i))
            .result(self.ctx);
        self.emit(|ctx| StoreOp::new(ctx, value, addr));
        let one = self.usize_constant(1);
        let next = self.emit(|ctx| AddOp::new(ctx, i, one)).result(self.ctx);
        self.emit(|ctx| StoreOp::new(ctx, next, counter));
        self.emit(|ctx| GotoOp::new(ctx, head));

        self.inserter = IRInserter::new_at_block_end(done);
    }
}

/// What a pointer value is made of.
enum PointerKind {
    /// An address.
    Thin,
    /// An address and a length (`&[T]`, `&str`).
    Slice,
    /// An address and a vtable (`&dyn Trait`).
    Dyn,
}

fn pointer_kind(ty: Ty) -> PointerKind {
    if pointee_is_unsized_slice(ty) {
        return PointerKind::Slice;
    }
    match ty.kind().builtin_deref(true).map(|t| t.ty.kind()) {
        Some(TyKind::RigidTy(RigidTy::Dynamic(..))) => PointerKind::Dyn,
        _ => PointerKind::Thin,
    }
}

/// The length of the array that a sized type ends in (`[T; N]` itself, or the last field of a
/// struct ending in one), which unsizing turns into the slice tail's length.
fn array_tail_len(ty: Ty) -> Option<u64> {
    match ty.kind() {
        TyKind::RigidTy(RigidTy::Array(_, len)) => len.eval_target_usize().ok(),
        TyKind::RigidTy(RigidTy::Adt(def, args))
            if def.kind() == rustc_public::ty::AdtKind::Struct =>
        {
            let last = def.variants().first()?.fields().last()?.ty_with_args(&args);
            array_tail_len(last)
        }
        _ => None,
    }
}
