//! `#[device]`: renaming of a device helper meant for use from other crates, and declarations
//! of device functions defined outside Rust (`#[device] unsafe extern "C" { ... }`).

use proc_macro2::TokenStream;
use quote::quote;
use reserved_oxide_symbols::ReservedKind;
use syn::spanned::Spanned;
use syn::{Error, FnArg, ForeignItem, ItemForeignMod, Pat, Result};

use crate::signature::{
    check_qualifiers, has_type_or_const_generics, no_arguments, parse_fn, reserved_ident,
    sets_symbol_name,
};

pub fn expand(attr: TokenStream, item: TokenStream) -> Result<TokenStream> {
    no_arguments("device", attr)?;
    if let Ok(block) = syn::parse2::<ItemForeignMod>(item.clone()) {
        return extern_block(block);
    }
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

/// `#[device] unsafe extern "C" { fn vprintf(format: *const u8, args: *const u8) -> i32; }`:
/// each function becomes an `unsafe fn` in the reserved `device_extern` namespace, which the
/// backend does not compile but calls by its plain name (`vprintf`), leaving the definition to
/// the GPU's linker (CUDA's system calls, libdevice, ...). On the host its body panics: the
/// function exists only on the GPU. The plain name stays usable through an alias.
fn extern_block(block: ItemForeignMod) -> Result<TokenStream> {
    if block
        .abi
        .name
        .as_ref()
        .is_some_and(|name| name.value() != "C")
    {
        return Err(Error::new(
            block.abi.span(),
            "#[device] extern blocks declare C functions: write `extern \"C\"`",
        ));
    }
    let mut out = TokenStream::new();
    for item in &block.items {
        let ForeignItem::Fn(decl) = item else {
            return Err(Error::new(
                item.span(),
                "#[device] extern blocks declare functions only",
            ));
        };
        if let Some(variadic) = &decl.sig.variadic {
            return Err(Error::new(
                variadic.span(),
                "#[device] extern functions cannot be variadic; CUDA's `printf` is \
                 `vprintf(format, args)` with the arguments packed in a buffer",
            ));
        }
        let user_ident = &decl.sig.ident;
        let reserved = syn::Ident::new(
            &reserved_oxide_symbols::reserved_name(
                ReservedKind::DeviceExtern,
                &reserved_oxide_symbols::crate_tag(&crate::signature::crate_name()),
                &user_ident.to_string(),
            ),
            user_ident.span(),
        );
        let mut sig = decl.sig.clone();
        sig.ident = reserved.clone();
        sig.unsafety = Some(Default::default());
        let mut names = Vec::new();
        for input in &mut sig.inputs {
            if let FnArg::Typed(typed) = input {
                match &*typed.pat {
                    Pat::Ident(p) => names.push(p.ident.clone()),
                    _ => {
                        return Err(Error::new(
                            typed.pat.span(),
                            "name each parameter of a #[device] extern function",
                        ));
                    }
                }
            }
        }
        let attrs = &decl.attrs;
        let vis = &decl.vis;
        let message = format!(
            "`{user_ident}` is a device function defined outside Rust: it can only be called \
             from device code (a #[kernel] and what it calls), not on the host"
        );
        out.extend(quote! {
            #(#attrs)*
            #[inline(never)]
            #[allow(non_snake_case)]
            #vis #sig {
                let _ = (#(#names,)*);
                ::core::panic!(#message)
            }
            #[allow(unused_imports)]
            #vis use self::#reserved as #user_ident;
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use quote::quote;

    use super::expand;

    fn expansion(item: proc_macro2::TokenStream) -> String {
        expand(quote!(), item).unwrap().to_string()
    }

    #[test]
    fn extern_blocks_declare_reserved_stubs() {
        let out = expansion(quote!(
            unsafe extern "C" {
                /// CUDA's printf.
                pub fn vprintf(format: *const u8, args: *const u8) -> i32;
            }
        ));
        let reserved = out
            .split_whitespace()
            .find(|w| w.starts_with("cuda_oxide_device_extern_"))
            .expect("reserved name in expansion");
        assert_eq!(
            reserved_oxide_symbols::device_extern_base_name(reserved),
            Some("vprintf")
        );
        assert!(
            out.contains(&format!("pub unsafe fn {reserved} (format : * const u8")),
            "{out}"
        );
        assert!(
            out.contains(&format!("pub use self :: {reserved} as vprintf")),
            "{out}"
        );
        assert!(out.contains("CUDA's printf"), "{out}");
        assert!(out.contains("panic !"), "{out}");

        let variadic = expand(
            quote!(),
            quote!(
                unsafe extern "C" {
                    fn printf(format: *const u8, ...) -> i32;
                }
            ),
        );
        assert!(variadic.unwrap_err().to_string().contains("vprintf"));
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
