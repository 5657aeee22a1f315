//! The text of attributes that functions, globals and ops share: linkage, LLVM function
//! attributes, and the strings and types held in attributes.

use pliron::{
    builtin::attributes::{StringAttr, TypeAttr},
    context::Context,
    r#type::TypeHandle,
};
use pliron_llvm::{
    attributes::LinkageAttr,
    llvm_attrs::{LlvmAttrValue, LlvmAttributesAttr},
};

use crate::{error::ExportError, naming::escape, types::TypeWriter};

/// The linkage keyword followed by a space, or nothing for external linkage.
pub(crate) fn linkage_text(op: &str, linkage: &LinkageAttr) -> Result<String, ExportError> {
    let text = match linkage {
        LinkageAttr::ExternalLinkage => "",
        LinkageAttr::AvailableExternallyLinkage => "available_externally ",
        LinkageAttr::LinkOnceAnyLinkage => "linkonce ",
        LinkageAttr::LinkOnceODRLinkage => "linkonce_odr ",
        LinkageAttr::WeakAnyLinkage => "weak ",
        LinkageAttr::WeakODRLinkage => "weak_odr ",
        LinkageAttr::AppendingLinkage => "appending ",
        LinkageAttr::InternalLinkage => "internal ",
        LinkageAttr::PrivateLinkage => "private ",
        LinkageAttr::ExternalWeakLinkage => "extern_weak ",
        LinkageAttr::CommonLinkage => "common ",
        other => {
            return Err(ExportError::UnsupportedAttr {
                op: op.to_string(),
                attr: format!("linkage {other:?}"),
                reason: "no LLVM IR spelling".into(),
            });
        }
    };
    Ok(text.to_string())
}

/// LLVM function attributes, each preceded by a space (` nounwind "key"="value"`).
pub(crate) fn attrs_text(
    ctx: &Context,
    types: &mut TypeWriter,
    attrs: &LlvmAttributesAttr,
) -> Result<String, ExportError> {
    let mut out = String::new();
    for (name, value) in attrs.iter() {
        out.push(' ');
        match value {
            LlvmAttrValue::Unit => out.push_str(name),
            LlvmAttrValue::Int(i) => out.push_str(&format!("{name}({i})")),
            LlvmAttrValue::Type(ty) => out.push_str(&format!("{name}({})", types.write(ctx, *ty)?)),
            LlvmAttrValue::Str(s) => {
                out.push_str(&format!("\"{}\"=\"{}\"", escape(name), escape(s)))
            }
        }
    }
    Ok(out)
}

/// The string of a [`StringAttr`].
pub(crate) fn string_of(attr: &StringAttr) -> String {
    String::from(attr.clone())
}

/// The type held by a [`TypeAttr`].
pub(crate) fn type_of(attr: &TypeAttr) -> TypeHandle {
    TypeHandle::from(attr.clone())
}
