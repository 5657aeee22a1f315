//! `#[device]`: renaming of a device helper meant for use from other crates.

use proc_macro2::TokenStream;
use quote::quote;
use reserved_oxide_symbols::ReservedKind;
use syn::{Error, Result};

use crate::signature::{
    check_qualifiers, has_type_or_const_generics, no_arguments, parse_fn, reserved_ident,
};

pub fn expand(attr: TokenStream, item: TokenStream) -> Result<TokenStream> {
    no_arguments("device", attr)?;
    let mut func = parse_fn("device", item)?;
    check_qualifiers("device", &func)?;
    for attr in &func.attrs {
        if attr.path().is_ident("no_mangle") || attr.path().is_ident("export_name") {
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
