//! `nvvm.intrinsic` from its declaration alone: a call of the `llvm.nvvm.*` intrinsic with the
//! declared constant arguments, inline PTX, or an LLVM `fence`.
//!
//! Convergent intrinsics (barriers, shuffles, votes) are called with the `convergent`
//! attribute: every thread of the block or warp must reach them together, so no optimisation
//! may make them depend on more control flow than they already do. `llvm.*` intrinsics carry
//! their own memory attributes; inline PTX gets them from the declared [Memory].

use dialect_nvvm::{
    Intrinsic, IntrinsicOp, Lowering, Memory, Scalar,
    intrinsic::{Arg, FenceScope},
};
use pliron::{
    builtin::{attributes::StringAttr, types::FP32Type},
    context::Context,
    r#type::{TypeHandle, Typed},
    value::Value,
};
use pliron_llvm::{
    attributes::{AtomicOrderingAttr, SyncScopeAttr},
    llvm_attrs::{LlvmAttrValue, LlvmAttributesAttr},
    ops::{ExtractValueOp, FenceOp, InlineAsmOp, InsertValueOp},
    types::{StructLayout, StructType as LlvmStructType, VoidType},
};

use super::Rewrite;
use crate::{error::OpError, flavour::Flavour, types::value_type};

/// `nvvm.intrinsic` -> what its declaration's [Lowering] says.
pub fn intrinsic(op: &IntrinsicOp, ctx: &mut Context, rw: &mut Rewrite) -> Result<(), OpError> {
    let intrinsic = op.intrinsic(ctx);
    let result_ty = match op.result(ctx) {
        Some(result) => value_type(ctx, result.get_type(ctx))?,
        None => VoidType::get(ctx).into(),
    };
    let operands = rw.operands(ctx);
    if rw.for_cpu() {
        return on_cpu(op, ctx, rw, intrinsic, result_ty, operands);
    }
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
        } if has_arrays(intrinsic) => Some(inline_ptx_with_arrays(
            ctx,
            rw,
            intrinsic,
            result_ty,
            operands,
            template,
            constraints,
        )?),
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

/// `nvvm.intrinsic` on the CPU: a call of the runtime function named after the row, with the
/// row's operands; fences are the system's. A row with array operands or results (the `wgmma`
/// family) calls its runtime function without arguments and yields `undef`: the runtime has no
/// such function and stops the kernel with its name when it is reached.
fn on_cpu(
    op: &IntrinsicOp,
    ctx: &mut Context,
    rw: &mut Rewrite,
    intrinsic: &Intrinsic,
    result_ty: TypeHandle,
    operands: Vec<Value>,
) -> Result<(), OpError> {
    if let Lowering::Fence(_) = intrinsic.lowering {
        let fence = FenceOp::new(ctx, AtomicOrderingAttr::SeqCst, SyncScopeAttr::System);
        rw.insert(ctx, fence);
        rw.erase(ctx);
        return Ok(());
    }
    let name = Flavour::runtime_function(intrinsic.name);
    let value = if has_arrays(intrinsic) {
        let void = VoidType::get(ctx).into();
        rw.intrinsic(ctx, &name, void, vec![], intrinsic.convergent);
        op.result(ctx).map(|_| rw.undef(ctx, result_ty))
    } else {
        let value = rw.intrinsic(ctx, &name, result_ty, operands, intrinsic.convergent);
        op.result(ctx).map(|_| value)
    };
    match value {
        Some(value) => rw.replace(ctx, vec![value]),
        None => rw.erase(ctx),
    }
    Ok(())
}

/// Whether an intrinsic has an array operand or result (`[f32; 32]`, ...).
fn has_arrays(intrinsic: &Intrinsic) -> bool {
    intrinsic
        .result
        .iter()
        .chain(intrinsic.operands)
        .any(|scalar| scalar.array_len().is_some())
}

/// The template and constraints of an intrinsic with array operands or results, one register
/// per element: in the template, `$n` of an array becomes the braced list `{$a, ..., $b}` of its
/// elements' registers (other `$n` are renumbered); an array's constraint is repeated per
/// element, and a tie to an array (`"0"`) ties element `i` to element `i` of it.
fn expand_arrays(
    template: &str,
    constraints: &str,
    counts: &[usize],
) -> Result<(String, String), OpError> {
    let malformed = |what: String| OpError::Malformed(format!("inline PTX `{template}`: {what}"));
    let mut starts = Vec::with_capacity(counts.len());
    let mut next = 0;
    for count in counts {
        starts.push(next);
        next += count;
    }
    let declared: Vec<&str> = constraints.split(',').collect();
    if declared.len() != counts.len() {
        return Err(malformed(format!(
            "{} constraints for {} values",
            declared.len(),
            counts.len()
        )));
    }
    let mut expanded = Vec::with_capacity(next);
    for (slot, constraint) in declared.iter().enumerate() {
        let tie = constraint.parse::<usize>().ok();
        if let Some(tied) = tie
            && counts.get(tied) != Some(&counts[slot])
        {
            return Err(malformed(format!(
                "value {slot} is tied to value {tied} of another size"
            )));
        }
        for element in 0..counts[slot] {
            expanded.push(match tie {
                Some(tied) => (starts[tied] + element).to_string(),
                None => constraint.to_string(),
            });
        }
    }
    let mut text = String::with_capacity(template.len());
    let mut chars = template.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '$' || !chars.peek().is_some_and(char::is_ascii_digit) {
            text.push(c);
            continue;
        }
        let mut digits = String::new();
        while let Some(d) = chars.next_if(char::is_ascii_digit) {
            digits.push(d);
        }
        let slot: usize = digits
            .parse()
            .map_err(|_| malformed(format!("`${digits}`")))?;
        let (&start, &count) = starts
            .get(slot)
            .zip(counts.get(slot))
            .ok_or_else(|| malformed(format!("`${slot}` names no value")))?;
        if count == 1 {
            text.push_str(&format!("${start}"));
        } else {
            let registers: Vec<String> = (start..start + count).map(|r| format!("${r}")).collect();
            text.push_str(&format!("{{{}}}", registers.join(", ")));
        }
    }
    Ok((text, expanded.join(",")))
}

/// Inline PTX for an intrinsic with array operands or results ([expand_arrays]): array
/// operands are passed element by element (`extractvalue`), an array result comes back as a
/// struct of its elements and is rebuilt as the array (`insertvalue`).
#[allow(clippy::too_many_arguments)]
fn inline_ptx_with_arrays(
    ctx: &mut Context,
    rw: &mut Rewrite,
    intrinsic: &Intrinsic,
    result_ty: TypeHandle,
    operands: Vec<Value>,
    template: &str,
    constraints: &str,
) -> Result<Value, OpError> {
    let counts: Vec<usize> = intrinsic
        .result
        .iter()
        .chain(intrinsic.operands)
        .map(|scalar| scalar.array_len().map_or(1, |len| len as usize))
        .collect();
    let (template, constraints) = expand_arrays(template, constraints, &counts)?;
    let mut values = vec![];
    for (operand, scalar) in operands.into_iter().zip(intrinsic.operands) {
        match scalar.array_len() {
            Some(len) => {
                for element in 0..len as u32 {
                    let extract = ExtractValueOp::new(ctx, operand, vec![element])
                        .map_err(|err| OpError::Malformed(err.to_string()))?;
                    values.push(rw.value(ctx, extract));
                }
            }
            None => values.push(operand),
        }
    }
    let result_len = intrinsic.result.and_then(Scalar::array_len);
    let asm_ty = match result_len {
        Some(len) => {
            let elem = FP32Type::get(ctx).into();
            let fields = vec![elem; len as usize];
            LlvmStructType::get_unnamed(ctx, (fields, StructLayout::Unpacked)).into()
        }
        None => result_ty,
    };
    let asm = inline_ptx(
        ctx,
        rw,
        asm_ty,
        values,
        &template,
        &constraints,
        intrinsic.memory,
        intrinsic.convergent,
    );
    let Some(len) = result_len else {
        return Ok(asm);
    };
    let mut array = rw.undef(ctx, result_ty);
    for element in 0..len as u32 {
        let extract = ExtractValueOp::new(ctx, asm, vec![element])
            .map_err(|err| OpError::Malformed(err.to_string()))?;
        let value = rw.value(ctx, extract);
        let insert = InsertValueOp::new(ctx, array, value, vec![element]);
        array = rw.value(ctx, insert);
    }
    Ok(array)
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

#[cfg(test)]
mod tests {
    use super::expand_arrays;

    #[test]
    fn arrays_become_one_register_per_element() {
        let (template, constraints) =
            expand_arrays("op $0, $2, $3;", "=f,0,l,r", &[3, 3, 1, 1]).unwrap();
        assert_eq!(template, "op {$0, $1, $2}, $6, $7;");
        assert_eq!(constraints, "=f,=f,=f,0,1,2,l,r");
        let (template, constraints) = expand_arrays("x $0, $1;", "=r,r", &[1, 1]).unwrap();
        assert_eq!(
            (template.as_str(), constraints.as_str()),
            ("x $0, $1;", "=r,r")
        );
        assert!(expand_arrays("op $4;", "=f,0", &[2, 2]).is_err());
        assert!(expand_arrays("op $0;", "=f,0", &[2, 1]).is_err());
    }
}
