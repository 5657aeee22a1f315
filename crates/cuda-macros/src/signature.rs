//! Checks shared by `#[kernel]` and `#[device]`, and the reserved-name helper.

use proc_macro2::{Span, TokenStream};
use reserved_oxide_symbols::{ReservedKind, crate_tag, reserved_name};
use syn::parse::Parse;
use syn::spanned::Spanned;
use syn::{Error, GenericParam, ItemFn, Result};

/// Parses the annotated item as a free function, with an error that says what was expected.
pub fn parse_fn(macro_name: &str, item: TokenStream) -> Result<ItemFn> {
    syn::parse2::<ItemFn>(item.clone()).map_err(|_| {
        Error::new(
            item.span(),
            format!(
                "#[{macro_name}] applies to free functions (`fn name(...) {{ ... }}`), \
                 not to this item"
            ),
        )
    })
}

/// Rejects attribute arguments: neither macro takes any yet.
pub fn no_arguments(macro_name: &str, attr: TokenStream) -> Result<()> {
    if attr.is_empty() {
        Ok(())
    } else {
        Err(Error::new(
            attr.span(),
            format!("#[{macro_name}] takes no arguments"),
        ))
    }
}

/// Rejects the qualifiers that device code cannot have.
pub fn check_qualifiers(macro_name: &str, func: &ItemFn) -> Result<()> {
    let sig = &func.sig;
    if let Some(token) = &sig.asyncness {
        return Err(Error::new(
            token.span(),
            format!("#[{macro_name}] functions cannot be `async`: the GPU has no executor"),
        ));
    }
    if let Some(token) = &sig.constness {
        return Err(Error::new(
            token.span(),
            format!("#[{macro_name}] functions cannot be `const`"),
        ));
    }
    if let Some(abi) = &sig.abi {
        return Err(Error::new(
            abi.span(),
            format!(
                "#[{macro_name}] functions use the Rust ABI; remove the `extern` qualifier \
                 (cuda-oxide chooses the GPU calling convention itself)"
            ),
        ));
    }
    if let Some(variadic) = &sig.variadic {
        return Err(Error::new(
            variadic.span(),
            format!("#[{macro_name}] functions cannot be variadic"),
        ));
    }
    if let Some(receiver) = sig.receiver() {
        return Err(Error::new(
            receiver.span(),
            format!("#[{macro_name}] applies to free functions, not methods"),
        ));
    }
    Ok(())
}

/// Whether the function has type or const generic parameters (lifetimes do not count: they do
/// not change the generated code).
pub fn has_type_or_const_generics(func: &ItemFn) -> Option<Span> {
    func.sig.generics.params.iter().find_map(|p| match p {
        GenericParam::Type(t) => Some(t.span()),
        GenericParam::Const(c) => Some(c.span()),
        GenericParam::Lifetime(_) => None,
    })
}

/// The reserved name of `func` in `kind`'s namespace, tagged with the crate being compiled.
pub fn reserved_ident(kind: ReservedKind, func: &ItemFn) -> syn::Ident {
    let name = reserved_name(kind, &crate_tag(&crate_name()), &func.sig.ident.to_string());
    syn::Ident::new(&name, func.sig.ident.span())
}

/// The crate being compiled, whose tag the reserved names carry.
///
/// Proc macros run inside rustc, which cargo starts with CARGO_CRATE_NAME set. Outside cargo
/// the tag falls back to a fixed value: names stay reserved, only less unique.
pub fn crate_name() -> String {
    std::env::var("CARGO_CRATE_NAME").unwrap_or_default()
}

/// Whether `attr` sets the symbol name (`no_mangle`, `export_name`, also inside `unsafe(...)`),
/// which would fight the reserved name the macros choose.
pub fn sets_symbol_name(attr: &syn::Attribute) -> bool {
    let names_symbol =
        |path: &syn::Path| path.is_ident("no_mangle") || path.is_ident("export_name");
    if names_symbol(attr.path()) {
        return true;
    }
    attr.path().is_ident("unsafe")
        && attr
            .parse_args_with(syn::Meta::parse)
            .is_ok_and(|inner| names_symbol(inner.path()))
}
