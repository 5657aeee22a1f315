//! Calls: device functions, GPU intrinsics, `core` intrinsics, C math functions, the host
//! CPU's LLVM intrinsics that `core::arch` declares, panics and drops; calls through function pointers and through the vtables of trait objects
//! (`mir.call_indirect`).
//!
//! Calling convention between device functions: every non-zero-sized argument is passed by
//! value, in order; for a callee with the `rust-call` ABI (closures called through `Fn*`)
//! the trailing argument tuple is passed field by field, and a callee whose body has a
//! `spread_arg` rebuilds that tuple (see `body.rs`), exactly as rustc's own backends do.

use dialect_mir::ops::*;
use pliron::builtin::types::FunctionType;
use pliron::identifier::Identifier;
use pliron::r#type::Typed;
use pliron::value::Value;
use rustc_public::CrateDef;
use rustc_public::mir::mono::{Instance, InstanceKind};
use rustc_public::mir::{Operand, Place};
use rustc_public::ty::{Abi, RigidTy, Ty, TyKind};

use super::body::FnTranslator;
use super::error::{TResult, unsupported};
use super::place::Address;
use crate::intrinsics;

impl FnTranslator<'_> {
    pub(crate) fn translate_call(
        &mut self,
        func: &Operand,
        args: &[Operand],
        destination: &Place,
        target: Option<usize>,
    ) -> TResult<()> {
        let callee_ty = self.operand_ty(func)?;
        if let TyKind::RigidTy(RigidTy::FnPtr(sig)) = callee_ty.kind() {
            let Some(pointer) = self.translate_operand(func)? else {
                unsupported!("a call through a zero-sized function pointer")
            };
            let values = self.call_arguments(sig.skip_binder().abi, args)?;
            return self.call_through(pointer, values, destination, target);
        }
        let Some((def, generic_args)) = callee_ty.kind().fn_def().map(|(d, a)| (d, a.clone()))
        else {
            unsupported!("a call of a value of type `{callee_ty}`")
        };
        let instance = match Instance::resolve(def, &generic_args) {
            Ok(instance) => instance,
            Err(e) => unsupported!(
                "a call to `{}` that could not be resolved ({e:?})",
                def.name()
            ),
        };
        // Only the ABI of the signature is read: its types are not normalised (they may hold
        // projections such as `<T as Add>::Output`); the body's own types are.
        let abi = callee_ty
            .kind()
            .fn_sig()
            .map(|s| s.skip_binder().abi)
            .expect("a function item has a signature");

        match instance.kind {
            InstanceKind::Virtual { idx } => {
                let mut values = self.call_arguments(abi, args)?;
                let receiver = args.first().map(|a| self.operand_ty(a)).transpose()?;
                let is_object = receiver
                    .and_then(|ty| ty.kind().builtin_deref(true))
                    .is_some_and(|pointee| pointee.ty.kind().is_trait());
                if !is_object || values.is_empty() {
                    unsupported!(
                        "a call of `{}` through a trait object that is not behind a reference",
                        def.name()
                    )
                }
                // The method receives the data pointer as `self`; the vtable holds it at `idx`.
                let object = values[0];
                let byte_ptr = self.byte_pointer_type();
                values[0] = self
                    .emit(|ctx| DynDataOp::new(ctx, object, byte_ptr))
                    .result(self.ctx);
                let method_ty = super::types::fn_pointer_type(self.ctx);
                let method = self.vtable_entry(object, idx, method_ty)?;
                return self.call_through(method, values, destination, target);
            }
            InstanceKind::Intrinsic => {
                let name = instance.intrinsic_name().unwrap_or_default();
                return self.translate_core_intrinsic(&name, &instance, args, destination, target);
            }
            InstanceKind::Item | InstanceKind::Shim => {}
        }

        let path = def.name();
        if let Some(intrinsic) = intrinsics::lookup(&path) {
            let result = self.translate_gpu_intrinsic(intrinsic, args)?;
            self.store_result(destination, result)?;
            return self.continue_to(target);
        }
        if let Some(function) = super::math::c_math_function(&path) {
            return self.translate_c_math(function, &path, args, destination, target);
        }
        if instance.is_foreign_item() {
            let symbol = instance.mangled_name();
            if symbol.starts_with("llvm.") {
                let result = self.translate_llvm_intrinsic(&symbol, &path, args, destination)?;
                self.store_result(destination, result)?;
                return self.continue_to(target);
            }
        }
        if let Some(stub) = intrinsics::atomic_stub(&path) {
            self.translate_atomic_stub(stub, &instance, args, destination)?;
            return self.continue_to(target);
        }
        if def.krate().name == "core" && crate::ub_checks::is_ub_check(&path) {
            // UB checks are off on the device: gates say `false`, checks are not called.
            if crate::ub_checks::is_gate(&path) {
                let no = self
                    .emit(|ctx| ConstantOp::new_bool(ctx, false))
                    .result(self.ctx);
                self.store_result(destination, Some(no))?;
            }
            return self.continue_to(target);
        }
        let diverges_in_core = target.is_none()
            && if self.panic_messages {
                (def.krate().name == "core"
                    && !instance.has_body()
                    && crate::naming::shim_of(&instance).is_none())
                    || matches!(def.krate().name.as_str(), "alloc" | "std")
            } else {
                matches!(def.krate().name.as_str(), "core" | "alloc" | "std")
            };
        if diverges_in_core {
            // Without panic messages, a panic (or `unwrap` failure, bounds check,
            // `handle_alloc_error`...) traps the kernel and its arguments (messages, locations)
            // are never evaluated. With them, only a diverging function of `core` without MIR
            // and without a device version, of `alloc` (`handle_alloc_error`,
            // `capacity_overflow`), or `std`'s panic entry points (the collector lets no other
            // function of `std` through), traps without a message (`core`'s panic entry points
            // all have device versions, see `translator::panic`).
            self.emit(TrapOp::new);
            return Ok(());
        }

        let mut values = self.call_arguments(abi, args)?;
        if super::track_caller::requires_caller_location(&instance) {
            values.push(self.caller_location()?);
        }
        let name = crate::naming::export_name(&instance, false);
        let result_ty =
            super::body::non_zst_type(self.ctx, self.types, self.place_type(destination)?)?;
        if reserved_oxide_symbols::device_extern_base_name(&path).is_some() {
            self.declare_external(&name, &values, result_ty)?;
        } else if instance.is_foreign_item() && crate::naming::shim_of(&instance).is_none() {
            // Host machine code only (the collector's host-only functions): a kernel that
            // calls it traps.
            self.define_host_only(&name, &values, result_ty)?;
        }
        let result = self.emit_call(&name, values, result_ty)?;
        self.store_result(destination, result)?;
        self.continue_to(target)
    }

    /// The values passed for `args` to a callee of ABI `abi`: the non-zero-sized arguments, the
    /// trailing tuple of a `rust-call` spread into its fields.
    fn call_arguments(&mut self, abi: Abi, args: &[Operand]) -> TResult<Vec<Value>> {
        match (abi == Abi::RustCall, args.split_last()) {
            (true, Some((tuple, leading))) => {
                let mut values = self.argument_values(leading)?;
                self.untuple_into(tuple, &mut values)?;
                Ok(values)
            }
            _ => self.argument_values(args),
        }
    }

    /// `mir.call_indirect` of the function at `pointer` with `values`, its result stored into
    /// `destination`; then on to `target`.
    fn call_through(
        &mut self,
        pointer: Value,
        values: Vec<Value>,
        destination: &Place,
        target: Option<usize>,
    ) -> TResult<()> {
        let result_ty =
            super::body::non_zst_type(self.ctx, self.types, self.place_type(destination)?)?;
        let arg_types = values.iter().map(|v| v.get_type(self.ctx)).collect();
        let fn_ty = FunctionType::get(self.ctx, arg_types, result_ty.into_iter().collect());
        let call = self.emit(|ctx| CallIndirectOp::new(ctx, pointer, fn_ty, values));
        let result = call.result(self.ctx);
        self.store_result(destination, result)?;
        self.continue_to(target)
    }

    /// The non-zero-sized argument values, in order.
    pub(crate) fn argument_values(&mut self, args: &[Operand]) -> TResult<Vec<Value>> {
        let mut values = Vec::with_capacity(args.len());
        for arg in args {
            if let Some(value) = self.translate_operand(arg)? {
                values.push(value);
            }
        }
        Ok(values)
    }

    /// Appends the non-zero-sized fields of the tuple operand `tuple` to `values`.
    fn untuple_into(&mut self, tuple: &Operand, values: &mut Vec<Value>) -> TResult<()> {
        let ty = self.operand_ty(tuple)?;
        let TyKind::RigidTy(RigidTy::Tuple(fields)) = ty.kind() else {
            unsupported!("a `rust-call` whose last argument is not a tuple (`{ty}`)")
        };
        let Some(value) = self.translate_operand(tuple)? else {
            return Ok(());
        };
        let tuple_mir = self.types.translate(self.ctx, ty)?;
        let slot = self
            .emit(|ctx| AllocaOp::new(ctx, tuple_mir))
            .result(self.ctx);
        self.emit(|ctx| StoreOp::new(ctx, value, slot));
        for (i, field) in fields.iter().enumerate() {
            if super::types::is_zero_sized(*field)? {
                continue;
            }
            let addr = self
                .emit(|ctx| FieldAddrOp::new(ctx, slot, i as u32))
                .result(self.ctx);
            values.push(self.emit(|ctx| LoadOp::new(ctx, addr)).result(self.ctx));
        }
        Ok(())
    }

    /// `mir.call @name(values)` returning `result_ty`.
    pub(crate) fn emit_call(
        &mut self,
        name: &str,
        values: Vec<Value>,
        result_ty: Option<pliron::r#type::TypeHandle>,
    ) -> TResult<Option<Value>> {
        let Ok(callee) = Identifier::try_from(name) else {
            unsupported!("a call to `{name}` (not a valid symbol name)")
        };
        let arg_types = values.iter().map(|v| v.get_type(self.ctx)).collect();
        let fn_ty = FunctionType::get(self.ctx, arg_types, result_ty.into_iter().collect());
        let call = self.emit(|ctx| CallOp::new(ctx, callee, fn_ty, values));
        Ok(call.result(self.ctx))
    }

    /// Stores a call's result into its destination.
    pub(crate) fn store_result(
        &mut self,
        destination: &Place,
        result: Option<Value>,
    ) -> TResult<()> {
        let Some(result) = result else { return Ok(()) };
        let place = self.translate_place(destination)?;
        if let Some(ptr) = place.thin()? {
            self.emit(|ctx| StoreOp::new(ctx, result, ptr));
        }
        Ok(())
    }

    /// After a call: branch to `target`, or mark the end unreachable for a diverging call.
    pub(crate) fn continue_to(&mut self, target: Option<usize>) -> TResult<()> {
        match target {
            Some(target) => self.goto(target),
            None => {
                self.emit(UnreachableOp::new);
                Ok(())
            }
        }
    }

    /// Calls the drop glue of `place`'s type, if it has any.
    pub(crate) fn translate_drop(&mut self, place: &Place) -> TResult<()> {
        let place_ref = self.translate_place(place)?;
        let glue = Instance::resolve_drop_in_place(place_ref.ty);
        if glue.is_empty_shim() {
            return Ok(());
        }
        let pointer = match place_ref.address {
            Some(Address::Thin(ptr)) => ptr,
            Some(Address::Slice(slice)) => slice,
            Some(Address::Dyn(object)) => return self.drop_dyn(object),
            None => return Ok(()),
        };
        let name = crate::naming::export_name(&glue, false);
        self.emit_call(&name, vec![pointer], None)?;
        Ok(())
    }

    /// Drops the value behind the trait object `object` in place (`Box<dyn Trait>`'s drop):
    /// the drop glue in entry 0 of its vtable, unless that entry is null (rustc's vtable for a
    /// type without drop glue), as rustc's own backends do.
    fn drop_dyn(&mut self, object: Value) -> TResult<()> {
        let fn_ptr = super::types::fn_pointer_type(self.ctx);
        let glue = self.vtable_entry(object, 0, fn_ptr)?;
        let usize_ty = dialect_mir::types::usize_type(self.ctx);
        let address = self
            .emit(|ctx| PtrToIntOp::new(ctx, glue, usize_ty.into()))
            .result(self.ctx);
        let zero = self.usize_constant(0);
        let has_glue = self
            .emit(|ctx| NeOp::new(ctx, address, zero))
            .result(self.ctx);
        let call = self.new_block("drop_dyn");
        let next = self.new_block("dropped");
        self.emit(|ctx| CondBrOp::new(ctx, has_glue, call, next));
        self.inserter = pliron::irbuild::inserter::IRInserter::new_at_block_end(call);
        let byte_ptr = self.byte_pointer_type();
        let data = self
            .emit(|ctx| DynDataOp::new(ctx, object, byte_ptr))
            .result(self.ctx);
        let glue_ty = FunctionType::get(self.ctx, vec![byte_ptr], vec![]);
        self.emit(|ctx| CallIndirectOp::new(ctx, glue, glue_ty, vec![data]));
        self.emit(|ctx| GotoOp::new(ctx, next));
        self.inserter = pliron::irbuild::inserter::IRInserter::new_at_block_end(next);
        Ok(())
    }

    /// The Rust type of a place.
    pub(crate) fn place_type(&self, place: &Place) -> TResult<Ty> {
        place
            .ty(self.body.locals())
            .or_else(|e| unsupported!("a place whose type is unknown ({e:?})"))
    }
}
