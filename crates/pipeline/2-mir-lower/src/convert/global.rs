//! Addresses of globals and functions.

use dialect_mir::ops::{FuncAddrOp, GlobalAddrOp};
use pliron::context::Context;
use pliron_llvm::{
    op_interfaces::CastOpInterface,
    ops::{AddrSpaceCastOp, AddressOfOp},
    types::PointerType,
};

use super::Rewrite;
use crate::error::OpError;

/// `mir.global_addr @g` -> `llvm.addressof @g` in the global's address space, then an
/// `addrspacecast` to a generic pointer when that space is not the generic one (LLVM's
/// address space inference turns accesses through it back into `ld.shared` & co.).
pub fn global_addr(op: &GlobalAddrOp, ctx: &mut Context, rw: &mut Rewrite) -> Result<(), OpError> {
    let name = op.global(ctx);
    let space = rw.global_space(&name)?;
    let address = AddressOfOp::new(ctx, name, space);
    let mut result = rw.value(ctx, address);
    if space != 0 {
        let generic = PointerType::get(ctx, 0).into();
        let cast = AddrSpaceCastOp::new(ctx, result, generic);
        result = rw.value(ctx, cast);
    }
    rw.replace(ctx, vec![result]);
    Ok(())
}

/// `mir.func_addr @f` -> `llvm.addressof @f`.
pub fn func_addr(op: &FuncAddrOp, ctx: &mut Context, rw: &mut Rewrite) -> Result<(), OpError> {
    let address = AddressOfOp::new(ctx, op.func(ctx), 0);
    let result = rw.value(ctx, address);
    rw.replace(ctx, vec![result]);
    Ok(())
}
