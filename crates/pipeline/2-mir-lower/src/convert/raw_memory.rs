//! Bulk copies and fills as LLVM's `memcpy` / `memmove` / `memset` intrinsics (the byte count is
//! the element count times the element's size), and volatile loads and stores.
//!
//! A volatile access through a generic pointer goes through an address that LLVM cannot trace
//! (an inline `mov`): NVPTX drops `volatile` from accesses it proves to be to local memory
//! (PTX has no volatile local access before ISA 9.1, which drivers of CUDA 13.0 cannot load),
//! and ptxas would then be free to merge or remove them. A generic `ld.volatile` /
//! `st.volatile` stays one whatever memory it reaches. Pointers typed with their address space
//! (shared memory, statics in global memory) keep it and need no detour.

use dialect_mir::ops::{
    CopyNonOverlappingOp, CopyOp, VolatileLoadOp, VolatileStoreOp, WriteBytesOp,
};
use dialect_mir::types::PtrType;
use dialect_nvvm::Memory;
use pliron::{
    context::Context,
    operation::Operation,
    r#type::Typed,
    value::{DefiningEntity, Value},
};
use pliron_llvm::{ops::MulOp, types::PointerType, types::VoidType};

use super::{Rewrite, aggregate::pointee, memory};
use crate::{error::OpError, types::layout};

/// The kinds of bulk operation, one per `mir` op.
#[derive(Clone, Copy, Debug)]
pub enum Bulk {
    /// `mir.copy_nonoverlapping`: `llvm.memcpy`.
    CopyNonOverlapping,
    /// `mir.copy`: `llvm.memmove`.
    Copy,
    /// `mir.write_bytes`: `llvm.memset`.
    WriteBytes,
}

/// The operands and volatility of a bulk op.
pub trait BulkOp {
    /// Whether the access is volatile.
    fn volatile(&self, ctx: &Context) -> bool;
}

macro_rules! bulk_ops {
    ($($op:ty),*) => {$(
        impl BulkOp for $op {
            fn volatile(&self, ctx: &Context) -> bool {
                self.is_volatile(ctx)
            }
        }
    )*};
}
bulk_ops!(CopyNonOverlappingOp, CopyOp, WriteBytesOp);

/// The `.pN` suffix of a pointer value's address space in an intrinsic name.
fn ptr_suffix(ctx: &Context, ptr: Value) -> Result<String, OpError> {
    ptr.get_type(ctx)
        .deref(ctx)
        .downcast_ref::<PointerType>()
        .map(|p| format!("p{}", p.address_space()))
        .ok_or_else(|| OpError::Malformed("a bulk memory operand is not a pointer".into()))
}

/// `mir.copy_nonoverlapping` / `mir.copy` / `mir.write_bytes` -> `llvm.memcpy` / `llvm.memmove`
/// / `llvm.memset` of `count * size_of::<T>()` bytes.
pub fn bulk<O: BulkOp>(
    op: &O,
    ctx: &mut Context,
    rw: &mut Rewrite,
    kind: Bulk,
) -> Result<(), OpError> {
    let elem = pointee(ctx, rw.operand_mir_type(ctx, 0))?;
    let size = layout(ctx, elem)?.size;
    let (dst, second, count) = (rw.operand(ctx, 0), rw.operand(ctx, 1), rw.operand(ctx, 2));
    let size = rw.const_int(ctx, 64, u128::from(size));
    let bytes = rw.int_binary::<MulOp>(ctx, count, size);
    let volatile = rw.const_int(ctx, 1, u128::from(op.volatile(ctx)));
    let dst_suffix = ptr_suffix(ctx, dst)?;
    let name = match kind {
        Bulk::CopyNonOverlapping | Bulk::Copy => {
            let base = if matches!(kind, Bulk::Copy) {
                "memmove"
            } else {
                "memcpy"
            };
            format!("llvm.{base}.{dst_suffix}.{}.i64", ptr_suffix(ctx, second)?)
        }
        Bulk::WriteBytes => format!("llvm.memset.{dst_suffix}.i64"),
    };
    let void = VoidType::get(ctx).into();
    rw.intrinsic(ctx, &name, void, vec![dst, second, bytes, volatile], false);
    rw.erase(ctx);
    Ok(())
}

/// `mir.volatile_load` -> a volatile `llvm.load` with the op's alignment.
pub fn volatile_load(
    op: &VolatileLoadOp,
    ctx: &mut Context,
    rw: &mut Rewrite,
) -> Result<(), OpError> {
    let ty = rw.result_mir_type(ctx, 0);
    let ptr = untraceable_if_generic(ctx, rw, op.ptr(ctx));
    let value = memory::emit_load(ctx, rw, ptr, ty, op.align(ctx), true)?;
    rw.replace(ctx, vec![value]);
    Ok(())
}

/// `mir.volatile_store` -> a volatile `llvm.store` with the op's alignment.
pub fn volatile_store(
    op: &VolatileStoreOp,
    ctx: &mut Context,
    rw: &mut Rewrite,
) -> Result<(), OpError> {
    let ptr = untraceable_if_generic(ctx, rw, op.ptr(ctx));
    memory::emit_store(ctx, rw, op.value(ctx), ptr, op.align(ctx), true)?;
    rw.erase(ctx);
    Ok(())
}

/// `ptr` itself when it is typed with its address space or is the address of (a part of) a
/// static or shared variable, else the same generic address through an inline `mov` that LLVM
/// cannot see through (see the module docs).
fn untraceable_if_generic(ctx: &mut Context, rw: &mut Rewrite, ptr: Value) -> Value {
    let generic = rw
        .mir_type(ctx, ptr)
        .deref(ctx)
        .downcast_ref::<PtrType>()
        .is_some_and(|p| p.address_space() == 0);
    if !generic || rw.for_cpu() || addresses_a_global(ctx, ptr) {
        return ptr;
    }
    let ptr_ty = PointerType::get(ctx, 0).into();
    super::intrinsics::inline_ptx(
        ctx,
        rw,
        ptr_ty,
        vec![ptr],
        "mov.b64 $0, $1;",
        "=l,l",
        Memory::None,
        false,
    )
}

/// Whether `ptr` is computed from the address of a global (a static, or shared memory) by
/// offsets and casts, in `mir` ops or in the LLVM ops they have become.
fn addresses_a_global(ctx: &Context, mut ptr: Value) -> bool {
    const THROUGH: &[&str] = &[
        "mir.ptr_cast",
        "mir.field_addr",
        "mir.array_elem_addr",
        "mir.ptr_offset",
        "mir.variant_field_addr",
        "llvm.getelementptr",
        "llvm.addrspacecast",
        "llvm.bitcast",
    ];
    const GLOBAL: &[&str] = &["mir.global_addr", "llvm.addressof"];
    loop {
        let DefiningEntity::Op(op) = ptr.defining_entity() else {
            return false;
        };
        let name = Operation::get_opid(op, ctx).to_string();
        if GLOBAL.contains(&name.as_str()) {
            return true;
        }
        if !THROUGH.contains(&name.as_str()) || op.deref(ctx).get_num_operands() == 0 {
            return false;
        }
        ptr = op.deref(ctx).get_operand(0);
    }
}
