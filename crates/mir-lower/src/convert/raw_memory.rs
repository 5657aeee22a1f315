//! Bulk copies and fills as LLVM's `memcpy` / `memmove` / `memset` intrinsics (the byte count is
//! the element count times the element's size), and volatile loads and stores.

use dialect_mir::ops::{
    CopyNonOverlappingOp, CopyOp, VolatileLoadOp, VolatileStoreOp, WriteBytesOp,
};
use pliron::{context::Context, r#type::Typed, value::Value};
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
    let value = memory::emit_load(ctx, rw, op.ptr(ctx), ty, op.align(ctx), true)?;
    rw.replace(ctx, vec![value]);
    Ok(())
}

/// `mir.volatile_store` -> a volatile `llvm.store` with the op's alignment.
pub fn volatile_store(
    op: &VolatileStoreOp,
    ctx: &mut Context,
    rw: &mut Rewrite,
) -> Result<(), OpError> {
    memory::emit_store(ctx, rw, op.value(ctx), op.ptr(ctx), op.align(ctx), true)?;
    rw.erase(ctx);
    Ok(())
}
