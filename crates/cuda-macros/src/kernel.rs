//! `#[kernel]`: validation and renaming of a GPU entry point.

use proc_macro2::TokenStream;
use quote::quote;
use reserved_oxide_symbols::ReservedKind;
use syn::spanned::Spanned;
use syn::{Error, Result, ReturnType, Type};

use crate::signature::{
    check_qualifiers, has_type_or_const_generics, no_arguments, parse_fn, reserved_ident,
};

pub fn expand(attr: TokenStream, item: TokenStream) -> Result<TokenStream> {
    no_arguments("kernel", attr)?;
    let mut func = parse_fn("kernel", item)?;
    check_qualifiers("kernel", &func)?;
    if let Some(span) = has_type_or_const_generics(&func) {
        return Err(Error::new(
            span,
            "a #[kernel] cannot be generic over types or constants: a GPU entry point needs one \
             concrete signature. Write a generic helper and call it from concrete kernels",
        ));
    }
    if let ReturnType::Type(_, ty) = &func.sig.output {
        let is_unit = matches!(&**ty, Type::Tuple(t) if t.elems.is_empty());
        if !is_unit {
            return Err(Error::new(
                ty.span(),
                "a #[kernel] cannot return a value: write results through a `DisjointSlice` or \
                 `&mut [T]` parameter instead",
            ));
        }
    }
    for attr in &func.attrs {
        if attr.path().is_ident("no_mangle") || attr.path().is_ident("export_name") {
            return Err(Error::new(
                attr.span(),
                "#[kernel] chooses the exported name itself; remove this attribute",
            ));
        }
    }
    func.sig.ident = reserved_ident(ReservedKind::Kernel, &func);
    Ok(quote! {
        #[unsafe(no_mangle)]
        #[allow(non_snake_case)]
        #func
    })
}
