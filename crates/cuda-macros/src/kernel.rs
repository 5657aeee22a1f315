//! `#[kernel]`: validation and renaming of a GPU entry point.

use proc_macro2::TokenStream;
use quote::quote;
use reserved_oxide_symbols::ReservedKind;
use syn::spanned::Spanned;
use syn::{Error, FnArg, ItemFn, Result, ReturnType, Type};

use crate::host_memory::check_no_host_memory;
use crate::signature::{
    check_qualifiers, has_type_or_const_generics, no_arguments, parse_fn, reserved_ident,
    sets_symbol_name,
};

pub fn expand(attr: TokenStream, item: TokenStream) -> Result<TokenStream> {
    no_arguments("kernel", attr)?;
    let mut func = parse_fn("kernel", item)?;
    check_signature(&func)?;
    for attr in &func.attrs {
        if sets_symbol_name(attr) {
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

/// What a GPU entry point's signature must be. `#[cuda_module]` checks it too: it sees the
/// kernels before `#[kernel]` expands, and a launcher of a wrong signature would bury this
/// error under others.
pub fn check_signature(func: &ItemFn) -> Result<()> {
    check_qualifiers("kernel", func)?;
    if let Some(span) = has_type_or_const_generics(func) {
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
    for input in &func.sig.inputs {
        if let FnArg::Typed(typed) = input {
            check_no_host_memory(&typed.ty)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use quote::quote;

    use super::expand;

    #[test]
    fn renames_and_exports_the_kernel() {
        let out = expand(
            quote!(),
            quote!(
                pub fn vecadd(a: &[f32]) {
                    let _ = a;
                }
            ),
        )
        .unwrap()
        .to_string();
        assert!(out.contains("no_mangle"), "{out}");
        let name = out
            .split_whitespace()
            .find(|w| w.starts_with("cuda_oxide_kernel_"))
            .expect("reserved name in expansion");
        assert_eq!(
            reserved_oxide_symbols::kernel_base_name(name),
            Some("vecadd")
        );
    }

    #[test]
    fn keeps_other_attributes_and_body() {
        let out = expand(
            quote!(),
            quote!(
                #[inline(never)]
                pub fn k(x: u32) {
                    let y = x + 1;
                    let _ = y;
                }
            ),
        )
        .unwrap()
        .to_string();
        assert!(out.contains("inline (never)"), "{out}");
        assert!(out.contains("let y = x + 1"), "{out}");
    }
}
