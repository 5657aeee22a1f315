//! Stack slots, loads and stores, with rustc's alignment. A `bool` is an `i8` in memory: it
//! is truncated after a load and zero-extended before a store.

use dialect_mir::{
    ops::{AllocaOp, LoadOp, StoreOp},
    types::is_bool,
};
use pliron::{
    builtin::attributes::StringAttr, context::Context, identifier::Identifier, op::Op,
    r#type::TypeHandle, value::Value,
};
use pliron_llvm::{
    op_interfaces::{CastOpInterface, CastOpWithNNegInterface, VolatilityOpInterface},
    ops::{
        AllocaOp as LlvmAllocaOp, LoadOp as LlvmLoadOp, StoreOp as LlvmStoreOp, TruncOp, ZExtOp,
    },
};

use super::{Rewrite, set_align};
use crate::{
    error::OpError,
    types::{int_type, layout, memory_type},
};

/// `mir.alloca T` -> `llvm.alloca` of T's memory type in the entry block, aligned as rustc
/// aligns T. A slot that holds a named variable keeps its description for the debug
/// metadata ([nvptx_attrs::ATTR_KEY_DEBUG_VARIABLE]).
pub fn alloca(op: &AllocaOp, ctx: &mut Context, rw: &mut Rewrite) -> Result<(), OpError> {
    let ty = op.allocated_type(ctx);
    let elem = memory_type(ctx, ty)?;
    let align = layout(ctx, ty)?.align;
    let variable = op.debug_variable(ctx);
    let slot = rw.in_entry(ctx, |rw, ctx| {
        let one = rw.const_int(ctx, 64, 1);
        let alloca = LlvmAllocaOp::new(ctx, elem, one, 0);
        set_align(ctx, &alloca, align);
        if let Some(variable) = variable {
            let key = Identifier::try_from(nvptx_attrs::ATTR_KEY_DEBUG_VARIABLE)
                .expect("a valid attribute key");
            alloca
                .get_operation()
                .deref_mut(ctx)
                .attributes
                .set(key, StringAttr::new(variable));
        }
        rw.value(ctx, alloca)
    });
    rw.replace(ctx, vec![slot]);
    Ok(())
}

/// `mir.load` -> `llvm.load` (+ `trunc` to `i1` for a `bool`).
pub fn load(op: &LoadOp, ctx: &mut Context, rw: &mut Rewrite) -> Result<(), OpError> {
    let ty = rw.result_mir_type(ctx, 0);
    let align = layout(ctx, ty)?.align;
    let value = emit_load(ctx, rw, op.ptr(ctx), ty, align, false)?;
    rw.replace(ctx, vec![value]);
    Ok(())
}

/// `mir.store` -> `llvm.store` (after a `zext` to `i8` for a `bool`).
pub fn store(op: &StoreOp, ctx: &mut Context, rw: &mut Rewrite) -> Result<(), OpError> {
    let value = op.value(ctx);
    let ty = rw.mir_type(ctx, value);
    let align = layout(ctx, ty)?.align;
    emit_store(ctx, rw, value, op.ptr(ctx), align, false)?;
    rw.erase(ctx);
    Ok(())
}

/// A load of a value of `mir` type `ty` from `ptr`, assuming `align`.
pub(crate) fn emit_load(
    ctx: &mut Context,
    rw: &mut Rewrite,
    ptr: Value,
    ty: TypeHandle,
    align: u64,
    volatile: bool,
) -> Result<Value, OpError> {
    let load = LlvmLoadOp::new(ctx, ptr, memory_type(ctx, ty)?);
    set_align(ctx, &load, align);
    if volatile {
        load.set_volatile(ctx, true);
    }
    let mut value = rw.value(ctx, load);
    if is_bool(ctx, ty) {
        let i1 = int_type(ctx, 1);
        let trunc = TruncOp::new(ctx, value, i1);
        value = rw.value(ctx, trunc);
    }
    Ok(value)
}

/// A store of `value` (of `mir` type `ty`) at `ptr`, assuming `align`.
pub(crate) fn emit_store(
    ctx: &mut Context,
    rw: &mut Rewrite,
    mut value: Value,
    ptr: Value,
    align: u64,
    volatile: bool,
) -> Result<(), OpError> {
    let ty = rw.mir_type(ctx, value);
    if is_bool(ctx, ty) {
        let i8_ty = int_type(ctx, 8);
        let zext = ZExtOp::new_with_nneg(ctx, value, i8_ty, false);
        value = rw.value(ctx, zext);
    }
    let store = LlvmStoreOp::new(ctx, value, ptr);
    set_align(ctx, &store, align);
    if volatile {
        store.set_volatile(ctx, true);
    }
    rw.insert(ctx, store);
    Ok(())
}
