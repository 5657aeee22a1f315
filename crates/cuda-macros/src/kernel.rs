//! `#[kernel]`: validation and renaming of a GPU entry point.

use proc_macro2::TokenStream;
use quote::quote;
use reserved_oxide_symbols::ReservedKind;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Error, FnArg, Ident, ItemFn, Result, ReturnType, Token, Type};

use crate::host_memory::check_no_host_memory;
use crate::signature::{
    check_qualifiers, has_type_or_const_generics, parse_fn, reserved_ident, sets_symbol_name,
};

pub fn expand(attr: TokenStream, item: TokenStream) -> Result<TokenStream> {
    let fmad = parse_options(attr)?;
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
    if fmad {
        // The backend reads this call (see `cuda_device::fmad_marker`).
        let marker: syn::Stmt = syn::parse_quote! { ::cuda_device::fmad_marker(); };
        func.block.stmts.insert(0, marker);
    }
    // A concrete kernel is exported, which keeps it a codegen root at any optimisation level.
    // A generic one cannot be: each instantiation becomes a root where the host's launcher
    // takes its address (`#[cuda_module]`).
    let export = has_type_or_const_generics(&func)
        .is_none()
        .then(|| quote!(#[unsafe(no_mangle)]));
    Ok(quote! {
        #export
        #[allow(non_snake_case)]
        #func
    })
}

/// The options of `#[kernel(...)]`: nothing, or `fmad`, which lets the compiler contract a
/// multiplication and an addition of floats in the kernel's body into one fused
/// multiply-add (like nvcc's default `--fmad=true`; Rust's own semantics, and the default,
/// never fuse). Returns whether `fmad` was given.
fn parse_options(attr: TokenStream) -> Result<bool> {
    if attr.is_empty() {
        return Ok(false);
    }
    let refuse = |span, what: String| {
        Error::new(
            span,
            format!(
                "#[kernel] takes no {what}; its one option is `fmad` (`#[kernel(fmad)]`: \
                 contract `a * b + c` of floats into fused multiply-adds)"
            ),
        )
    };
    let span = attr.span();
    let options =
        syn::parse::Parser::parse2(Punctuated::<Ident, Token![,]>::parse_terminated, attr)
            .map_err(|_| refuse(span, "arguments like these".into()))?;
    let mut fmad = false;
    for option in options {
        if option == "fmad" && !fmad {
            fmad = true;
        } else {
            return Err(refuse(
                option.span(),
                format!("option `{option}` (or twice)"),
            ));
        }
    }
    Ok(fmad)
}

/// What a GPU entry point's signature must be. `#[cuda_module]` checks it too: it sees the
/// kernels before `#[kernel]` expands, and a launcher of a wrong signature would bury this
/// error under others.
pub fn check_signature(func: &ItemFn) -> Result<()> {
    check_qualifiers("kernel", func)?;
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
    fn fmad_puts_the_marker_first_and_other_options_are_refused() {
        let out = expand(
            quote!(fmad),
            quote!(
                pub fn k(x: f32) {
                    body(x)
                }
            ),
        )
        .unwrap()
        .to_string();
        let marker = out.find("fmad_marker ()").expect("the marker call");
        assert!(marker < out.find("body (x)").unwrap(), "{out}");
        let plain = expand(
            quote!(),
            quote!(
                pub fn k(x: f32) {
                    body(x)
                }
            ),
        )
        .unwrap()
        .to_string();
        assert!(!plain.contains("fmad_marker"), "{plain}");
        let err = expand(
            quote!(fast),
            quote!(
                pub fn k() {}
            ),
        )
        .unwrap_err();
        assert!(err.to_string().contains("no option `fast`"), "{err}");
        let err = expand(
            quote!(threads = 256),
            quote!(
                pub fn k() {}
            ),
        )
        .unwrap_err();
        assert!(
            err.to_string().contains("its one option is `fmad`"),
            "{err}"
        );
        assert!(
            expand(
                quote!(fmad, fmad),
                quote!(
                    pub fn k() {}
                )
            )
            .is_err()
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
