//! Constant-like ops as LLVM constants, and global initializers given as regions, folded into
//! one LLVM constant.
//!
//! LLVM IR has no instructions at module level: an initializer is a constant, possibly a
//! constant expression. A pliron `llvm.global` may instead compute its initial value in a
//! region; this module evaluates such a region op by op into constant text. Besides the
//! constant-like ops written inline in functions, it folds the ops a relocated initializer
//! needs: `llvm.addrspacecast` and `llvm.gep` with constant indices (constant expressions),
//! and `llvm.insert_value` (building a constant aggregate element by element).

use std::collections::HashMap;

use pliron::{
    context::{Context, Ptr},
    identifier::Identifier,
    linked_list::ContainsLinkedList,
    op::Op,
    operation::Operation,
    r#type::{TypeHandle, Typed},
    value::Value,
};
use pliron_llvm::{
    attributes::{GepIndexAttr, GepNoWrapFlags},
    ops::{
        AddrSpaceCastOp, AddressOfOp, ConstantOp, GetElementPtrOp, GlobalOp, InsertValueOp,
        PoisonOp, ReturnOp, UndefOp, ZeroOp,
    },
    types::{ArrayType, StructLayout, StructType},
};

use crate::{
    attrs::type_of,
    constants::{ConstWriter, zero_text},
    error::ExportError,
    module_state::ModuleState,
    naming::global_ref,
};

const OP: &str = "llvm.global";

/// The constant text of a constant-like op's result, `None` for other ops.
pub(crate) fn inline_constant(
    ctx: &Context,
    state: &mut ModuleState,
    op: Ptr<Operation>,
) -> Result<Option<String>, ExportError> {
    let op_obj = Operation::get_op_dyn(op, ctx);
    let op_dyn: &dyn Op = op_obj.as_ref();
    let opid = op_dyn.get_opid().to_string();
    if op_dyn.is::<UndefOp>() {
        return Ok(Some("undef".into()));
    }
    if op_dyn.is::<PoisonOp>() {
        return Ok(Some("poison".into()));
    }
    if op_dyn.is::<ZeroOp>() {
        let ty = op.deref(ctx).get_type(0);
        return Ok(Some(zero_text(ctx, ty)));
    }
    if let Some(addr) = op_dyn.downcast_ref::<AddressOfOp>() {
        let Some(name) = addr
            .get_attr_llvm_global_name(ctx)
            .map(|n| Identifier::from(n.clone()).to_string())
        else {
            return Err(ExportError::malformed(opid, "missing global name"));
        };
        return match state.symbols.get(&name) {
            Some(s) => Ok(Some(global_ref(&s.llvm_name))),
            None => Err(ExportError::UnknownSymbol {
                op: opid,
                symbol: name,
            }),
        };
    }
    if let Some(constant) = op_dyn.downcast_ref::<ConstantOp>() {
        let ty = op.deref(ctx).get_type(0);
        let Some(value) = constant.get_attr_llvm_constant_value(ctx) else {
            return Err(ExportError::malformed(opid, "missing value attribute"));
        };
        let mut writer = ConstWriter {
            ctx,
            types: &mut state.types,
            symbols: &state.symbols,
            op: &opid,
        };
        return writer.value(&**value, ty).map(Some);
    }
    Ok(None)
}

/// A folded value: constant text, or an aggregate under construction (its elements, each
/// `T value`).
#[derive(Clone)]
enum Folded {
    Text(String),
    Elements(Vec<String>),
}

/// The constant returned by `global`'s initializer region.
pub(crate) fn region_initializer(
    ctx: &Context,
    state: &mut ModuleState,
    global: &GlobalOp,
) -> Result<String, ExportError> {
    let block = global
        .get_initializer_block(ctx)
        .ok_or_else(|| ExportError::malformed(OP, "empty initializer region"))?;
    let mut folder = Folder {
        ctx,
        state,
        values: HashMap::new(),
    };
    for op in block.deref(ctx).iter(ctx).collect::<Vec<_>>() {
        if let Some(ret) = Operation::get_op::<ReturnOp>(op, ctx) {
            let value = ret
                .retval(ctx)
                .ok_or_else(|| ExportError::malformed(OP, "initializer region returns no value"))?;
            return folder.text(value);
        }
        let folded = folder.fold(op)?;
        folder.values.insert(op.deref(ctx).get_result(0), folded);
    }
    Err(ExportError::malformed(
        OP,
        "initializer region does not end with llvm.return",
    ))
}

struct Folder<'a> {
    ctx: &'a Context,
    state: &'a mut ModuleState,
    values: HashMap<Value, Folded>,
}

impl Folder<'_> {
    /// The folded result of `op`.
    fn fold(&mut self, op: Ptr<Operation>) -> Result<Folded, ExportError> {
        let ctx = self.ctx;
        if let Some(text) = inline_constant(ctx, self.state, op)? {
            return Ok(Folded::Text(text));
        }
        let obj = Operation::get_op_dyn(op, ctx);
        let op_dyn: &dyn Op = obj.as_ref();
        let operands: Vec<Value> = op.deref(ctx).operands().collect();
        let result_ty = op.deref(ctx).get_type(0);
        if op_dyn.is::<AddrSpaceCastOp>() {
            let source = self.typed(operands[0])?;
            let to = self.state.types.write(ctx, result_ty)?;
            return Ok(Folded::Text(format!("addrspacecast ({source} to {to})")));
        }
        if let Some(gep) = op_dyn.downcast_ref::<GetElementPtrOp>() {
            return self.gep(gep, &operands).map(Folded::Text);
        }
        if let Some(insert) = op_dyn.downcast_ref::<InsertValueOp>() {
            let indices = insert
                .get_attr_llvm_insert_value_indices(ctx)
                .map(|i| i.0.clone())
                .unwrap_or_default();
            let [index] = indices[..] else {
                return Err(ExportError::malformed(
                    OP,
                    "an initializer inserts at a nested index",
                ));
            };
            let mut elements = self.elements(operands[0])?;
            let slot = elements.get_mut(index as usize).ok_or_else(|| {
                ExportError::malformed(OP, format!("no element {index} to insert at"))
            })?;
            *slot = self.typed(operands[1])?;
            return Ok(Folded::Elements(elements));
        }
        Err(ExportError::UnsupportedOp {
            op: format!("{} (in a global initializer)", op_dyn.get_opid()),
        })
    }

    /// `getelementptr [flags] (elem, T base, indices)` with constant indices.
    fn gep(&mut self, gep: &GetElementPtrOp, operands: &[Value]) -> Result<String, ExportError> {
        let ctx = self.ctx;
        let (Some(indices), Some(elem)) = (
            gep.get_attr_llvm_gep_indices(ctx).map(|i| i.0.clone()),
            gep.get_attr_llvm_gep_src_elem_type(ctx)
                .map(|t| type_of(&t)),
        ) else {
            return Err(ExportError::malformed(
                OP,
                "a gep without indices or element type",
            ));
        };
        let inbounds = gep
            .get_attr_llvm_gep_no_wrap_flags(ctx)
            .is_some_and(|f| f.0.normalized().contains(GepNoWrapFlags::INBOUNDS));
        let mut parts = vec![self.state.types.write(ctx, elem)?, self.typed(operands[0])?];
        for index in indices {
            parts.push(match index {
                GepIndexAttr::Constant(c) => format!("i32 {c}"),
                GepIndexAttr::OperandIdx(i) if i > 0 && i < operands.len() => {
                    self.typed(operands[i])?
                }
                GepIndexAttr::OperandIdx(i) => {
                    return Err(ExportError::malformed(
                        OP,
                        format!("bad gep index operand {i}"),
                    ));
                }
            });
        }
        let flags = if inbounds { "inbounds " } else { "" };
        Ok(format!("getelementptr {flags}({})", parts.join(", ")))
    }

    /// `T value` for a folded scalar.
    fn typed(&mut self, value: Value) -> Result<String, ExportError> {
        let ty = value.get_type(self.ctx);
        let text = self.text(value)?;
        Ok(format!("{} {text}", self.state.types.write(self.ctx, ty)?))
    }

    /// The constant text of a folded value (an aggregate is closed with its brackets).
    fn text(&mut self, value: Value) -> Result<String, ExportError> {
        match self.values.get(&value).cloned() {
            Some(Folded::Text(text)) => Ok(text),
            Some(Folded::Elements(elements)) => {
                let ty = value.get_type(self.ctx);
                let (open, close) = brackets(self.ctx, ty)?;
                Ok(if elements.is_empty() {
                    format!("{open}{close}")
                } else {
                    format!("{open} {} {close}", elements.join(", "))
                })
            }
            None => Err(ExportError::malformed(
                OP,
                "an initializer uses a value defined outside it",
            )),
        }
    }

    /// The elements (`T value` each) of an aggregate value, an `undef` or zero one expanded.
    fn elements(&mut self, value: Value) -> Result<Vec<String>, ExportError> {
        let ctx = self.ctx;
        let text = match self.values.get(&value).cloned() {
            Some(Folded::Elements(elements)) => return Ok(elements),
            Some(Folded::Text(text)) => text,
            None => {
                return Err(ExportError::malformed(
                    OP,
                    "an initializer uses a value defined outside it",
                ));
            }
        };
        let ty = value.get_type(ctx);
        element_types(ctx, ty)?
            .into_iter()
            .map(|elem| {
                let elem_text = match text.as_str() {
                    "undef" | "poison" => text.clone(),
                    "zeroinitializer" => zero_text(ctx, elem),
                    _ => {
                        return Err(ExportError::malformed(
                            OP,
                            "an initializer inserts into a non-constant aggregate",
                        ));
                    }
                };
                Ok(format!(
                    "{} {elem_text}",
                    self.state.types.write(ctx, elem)?
                ))
            })
            .collect()
    }
}

/// The element types of an LLVM struct or array type.
fn element_types(ctx: &Context, ty: TypeHandle) -> Result<Vec<TypeHandle>, ExportError> {
    let t = ty.deref(ctx);
    if let Some(st) = t.downcast_ref::<StructType>().filter(|s| !s.is_opaque()) {
        return Ok(st.fields().collect());
    }
    if let Some(arr) = t.downcast_ref::<ArrayType>() {
        return Ok(vec![arr.elem_type(); arr.size() as usize]);
    }
    Err(ExportError::malformed(
        OP,
        "an initializer inserts into a non-aggregate",
    ))
}

/// The brackets of a constant of aggregate type `ty`.
fn brackets(ctx: &Context, ty: TypeHandle) -> Result<(&'static str, &'static str), ExportError> {
    let t = ty.deref(ctx);
    if let Some(st) = t.downcast_ref::<StructType>() {
        return Ok(if st.layout() == StructLayout::Packed {
            ("<{", "}>")
        } else {
            ("{", "}")
        });
    }
    if t.is::<ArrayType>() {
        return Ok(("[", "]"));
    }
    Err(ExportError::malformed(
        OP,
        "an aggregate initializer of a non-aggregate type",
    ))
}
