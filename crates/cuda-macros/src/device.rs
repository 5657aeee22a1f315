//! `#[device]`: renaming of a device helper meant for use from other crates.

use proc_macro2::TokenStream;
use quote::quote;
use reserved_oxide_symbols::ReservedKind;
use syn::{Error, Result};

use crate::signature::{
    check_qualifiers, has_type_or_const_generics, no_arguments, parse_fn, reserved_ident,
    sets_symbol_name,
};

pub fn expand(attr: TokenStream, item: TokenStream) -> Result<TokenStream> {
    no_arguments("device", attr)?;
    let mut func = parse_fn("device", item)?;
    check_qualifiers("device", &func)?;
    for attr in &func.attrs {
        if sets_symbol_name(attr) {
            return Err(Error::new_spanned(
                attr,
                "#[device] chooses the exported name itself; remove this attribute",
            ));
        }
    }
    let user_ident = func.sig.ident.clone();
    let vis = func.vis.clone();
    func.sig.ident = reserved_ident(ReservedKind::Device, &func);
    let reserved = &func.sig.ident;
    // A non-generic helper is exported, which keeps it (and its MIR) available to downstream
    // crates even when nothing in its own crate calls it. Generic helpers are instantiated by
    // their users and cannot be exported.
    let export = has_type_or_const_generics(&func)
        .is_none()
        .then(|| quote!(#[unsafe(no_mangle)]));
    Ok(quote! {
        #export
        #[allow(non_snake_case)]
        #func
        #[allow(unused_imports)]
        #vis use self::#reserved as #user_ident;
    })
}

#[cfg(test)]
mod tests {
    use quote::quote;

    use super::expand;

    fn expansion(item: proc_macro2::TokenStream) -> String {
        expand(quote!(), item).unwrap().to_string()
    }

    #[test]
    fn non_generic_helpers_are_exported_and_aliased() {
        let out = expansion(quote!(
            pub fn helper(x: f32) -> f32 {
                x
            }
        ));
        assert!(out.contains("no_mangle"), "{out}");
        let reserved = out
            .split_whitespace()
            .find(|w| w.starts_with("cuda_oxide_device_"))
            .expect("reserved name in expansion");
        assert_eq!(
            reserved_oxide_symbols::device_base_name(reserved),
            Some("helper")
        );
        assert!(
            out.contains(&format!("pub use self :: {reserved} as helper")),
            "{out}"
        );
    }

    #[test]
    fn generic_helpers_are_not_exported() {
        let out = expansion(quote!(
            fn pick<T: Copy>(a: T) -> T {
                a
            }
        ));
        assert!(!out.contains("no_mangle"), "{out}");
        assert!(out.contains("as pick"), "{out}");
    }
}
