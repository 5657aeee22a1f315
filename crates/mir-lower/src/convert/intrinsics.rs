//! `nvvm.intrinsic` from its declaration alone: a call of the `llvm.nvvm.*` intrinsic with the
//! declared constant arguments, inline PTX, or an LLVM `fence`.
//!
//! Convergent intrinsics (barriers, shuffles, votes) are called with the `convergent`
//! attribute: every thread of the block or warp must reach them together, so no optimisation
//! may make them depend on more control flow than they already do. `llvm.*` intrinsics carry
//! their own memory attributes; inline PTX gets them from the declared [Memory].

use dialect_nvvm::{
    IntrinsicOp, Lowering, Memory,
    intrinsic::{Arg, FenceScope},
};
use pliron::{
    builtin::attributes::StringAttr,
    context::Context,
    r#type::{TypeHandle, Typed},
    value::Value,
};
use pliron_llvm::{
    attributes::{AtomicOrderingAttr, SyncScopeAttr},
    llvm_attrs::{LlvmAttrValue, LlvmAttributesAttr},
    ops::{FenceOp, InlineAsmOp},
    types::VoidType,
};

use super::Rewrite;
use crate::{error::OpError, types::value_type};

/// `nvvm.intrinsic` -> what its declaration's [Lowering] says.
pub fn intrinsic(op: &IntrinsicOp, ctx: &mut Context, rw: &mut Rewrite) -> Result<(), OpError> {
    let intrinsic = op.intrinsic(ctx);
    let result_ty = match op.result(ctx) {
        Some(result) => value_type(ctx, result.get_type(ctx))?,
        None => VoidType::get(ctx).into(),
    };
    let operands = rw.operands(ctx);
    let value = match intrinsic.lowering {
        Lowering::Llvm { name, args } => {
            let args = args
                .iter()
                .map(|arg| match *arg {
                    Arg::Operand(n) => operands[n],
                    Arg::I32(value) => rw.const_int(ctx, 32, u128::from(value as u32)),
                })
                .collect();
            Some(rw.intrinsic(ctx, name, result_ty, args, intrinsic.convergent))
        }
        Lowering::Ptx {
            template,
            constraints,
        } => Some(inline_ptx(
            ctx,
            rw,
            result_ty,
            operands,
            template,
            constraints,
            intrinsic.memory,
            intrinsic.convergent,
        )),
        Lowering::Fence(scope) => {
            let scope = match scope {
                FenceScope::Block => named_scope("block"),
                FenceScope::Device => named_scope("device"),
                FenceScope::System => SyncScopeAttr::System,
            };
            let fence = FenceOp::new(ctx, AtomicOrderingAttr::SeqCst, scope);
            rw.insert(ctx, fence);
            None
        }
    };
    match (op.result(ctx), value) {
        (Some(_), Some(value)) => rw.replace(ctx, vec![value]),
        (None, _) => rw.erase(ctx),
        (Some(_), None) => {
            return Err(OpError::Malformed(format!(
                "{} has a result but lowers to an instruction without one",
                intrinsic.name
            )));
        }
    }
    Ok(())
}

/// The LLVM sync scope `name` (`"block"`, `"device"`).
pub(crate) fn named_scope(name: &str) -> SyncScopeAttr {
    SyncScopeAttr::NamedScope(StringAttr::new(name.into()))
}

/// A call of inline PTX `template`; `constraints` gets a memory clobber when `memory` is not
/// [Memory::None], and the call the matching `memory(...)` attribute.
#[allow(clippy::too_many_arguments)]
pub(crate) fn inline_ptx(
    ctx: &mut Context,
    rw: &mut Rewrite,
    result_ty: TypeHandle,
    operands: Vec<Value>,
    template: &str,
    constraints: &str,
    memory: Memory,
    convergent: bool,
) -> Value {
    let constraints = match memory {
        Memory::None => constraints.to_string(),
        _ if constraints.is_empty() => "~{memory}".to_string(),
        _ => format!("{constraints},~{{memory}}"),
    };
    let asm = InlineAsmOp::new(
        ctx,
        result_ty,
        operands,
        template,
        &constraints,
        memory != Memory::None,
    );
    let mut attrs = LlvmAttributesAttr::new();
    if convergent {
        attrs.set("convergent", LlvmAttrValue::Unit);
    }
    let effects = match memory {
        Memory::None => Some("memory(none)"),
        Memory::Read => Some("memory(read)"),
        Memory::Write => Some("memory(write)"),
        Memory::ReadWrite => None,
    };
    if let Some(effects) = effects {
        attrs.set(effects, LlvmAttrValue::Unit);
    }
    attrs.set("nounwind", LlvmAttrValue::Unit);
    asm.set_attr_llvm_inline_asm_attrs(ctx, attrs);
    rw.value(ctx, asm)
}
