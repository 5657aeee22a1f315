//! `#[launch_bounds(MAX_THREADS)]` and `#[launch_bounds(MAX_THREADS, MIN_BLOCKS)]` on a
//! `#[kernel]`: CUDA's `__launch_bounds__`, which become PTX `.maxntid` and `.minnctapersm`.
//!
//! The bounds reach the compiler as a call to the marker `cuda_device::launch_bounds_marker`
//! at the start of the kernel, whose const generic arguments (`u32`, like CUDA's block sizes)
//! are the bounds: rustc evaluates them (they may name constants), and the codegen backend
//! reads them from the kernel's MIR.
//! Literal bounds are checked here, with errors on the literal; other expressions by a
//! constant assertion next to the marker, which rustc evaluates while type-checking.
//!
//! Both orders work: above `#[kernel]`, this macro sees the `#[kernel]` attribute still to
//! come; below it, it sees the function already renamed into the kernel namespace.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Attribute, Error, Expr, ExprLit, ItemFn, Lit, Result, Token};

/// The most threads a CUDA block can have.
const MAX_THREADS_PER_BLOCK: u64 = 1024;

/// The two bounds as written.
struct Bounds {
    max_threads: Expr,
    min_blocks: Option<Expr>,
}

/// `#[launch_bounds(...)]` written above `#[kernel]`.
pub fn expand(attr: TokenStream, item: TokenStream) -> Result<TokenStream> {
    let bounds = parse_bounds(attr)?;
    let mut func: ItemFn = syn::parse2(item.clone()).map_err(|_| {
        Error::new(
            item.span(),
            "#[launch_bounds] applies to a #[kernel] function",
        )
    })?;
    if let Some(other) = func.attrs.iter().find(|a| is_named(a, "launch_bounds")) {
        return Err(Error::new(
            other.span(),
            "a kernel has one #[launch_bounds]; remove this one",
        ));
    }
    let renamed_kernel =
        reserved_oxide_symbols::kernel_base_name(&func.sig.ident.to_string()).is_some();
    if !renamed_kernel && !func.attrs.iter().any(|a| is_named(a, "kernel")) {
        return Err(Error::new(
            func.sig.ident.span(),
            "#[launch_bounds] applies to a #[kernel] function: add #[kernel] below it (launch \
             bounds describe how a kernel is launched; helpers take no launch)",
        ));
    }
    insert_marker(&mut func, &bounds);
    Ok(quote!(#func))
}

/// Whether `attr`'s path ends in `name` (`launch_bounds`, `cuda_device::launch_bounds`).
pub(crate) fn is_named(attr: &Attribute, name: &str) -> bool {
    attr.path()
        .segments
        .last()
        .is_some_and(|segment| segment.ident == name)
}

fn parse_bounds(attr: TokenStream) -> Result<Bounds> {
    let span = attr.span();
    let args = Punctuated::<Expr, Token![,]>::parse_terminated
        .parse2(attr)
        .map_err(|e| {
            Error::new(
                e.span(),
                "#[launch_bounds] takes the maximum threads per block and optionally the \
                 minimum blocks per multiprocessor: `#[launch_bounds(256)]`, \
                 `#[launch_bounds(256, 2)]`",
            )
        })?;
    let mut args = args.into_iter();
    let (Some(max_threads), min_blocks, None) = (args.next(), args.next(), args.next()) else {
        return Err(Error::new(
            span,
            "#[launch_bounds] takes one or two values: the maximum threads per block, then \
             optionally the minimum blocks per multiprocessor (`#[launch_bounds(256, 2)]`)",
        ));
    };
    if let Some(value) = literal(&max_threads)?
        && !(1..=MAX_THREADS_PER_BLOCK).contains(&value)
    {
        return Err(Error::new(
            max_threads.span(),
            format!("a block has 1 to {MAX_THREADS_PER_BLOCK} threads, so {value} cannot bound it"),
        ));
    }
    if let Some(min) = &min_blocks
        && literal(min)? == Some(0)
    {
        return Err(Error::new(
            min.span(),
            "the minimum blocks per multiprocessor is at least 1; leave it out to ask for none",
        ));
    }
    Ok(Bounds {
        max_threads,
        min_blocks,
    })
}

/// The value of an integer literal (`256`, `256u32`); `None` for other expressions.
pub(crate) fn literal(expr: &Expr) -> Result<Option<u64>> {
    match expr {
        Expr::Lit(ExprLit {
            lit: Lit::Int(int), ..
        }) => int
            .base10_parse::<u64>()
            .map(Some)
            .map_err(|_| Error::new(int.span(), "launch bounds are small positive integers")),
        Expr::Paren(inner) => literal(&inner.expr),
        Expr::Group(inner) => literal(&inner.expr),
        _ => Ok(None),
    }
}

/// Puts the marker call first in the body, after a constant check of the bounds (which
/// matters for named constants: literals were checked above, with better errors).
fn insert_marker(func: &mut ItemFn, bounds: &Bounds) {
    let max = &bounds.max_threads;
    let (min, given_min) = match &bounds.min_blocks {
        Some(min) => (quote!(#min), quote!(::core::option::Option::Some(#min))),
        None => (quote!(0), quote!(::core::option::Option::None)),
    };
    let span = bounds.min_blocks.as_ref().map_or(max.span(), |min| {
        max.span().join(min.span()).unwrap_or(max.span())
    });
    let check: syn::Stmt = syn::parse2(quote_spanned! {span=>
        const _: () = ::cuda_device::check_launch_bounds(#max, #given_min);
    })
    .expect("a const item is a statement");
    let marker: syn::Stmt = syn::parse_quote! {
        ::cuda_device::launch_bounds_marker::<{ #max }, { #min }>();
    };
    func.block.stmts.insert(0, marker);
    func.block.stmts.insert(0, check);
}

#[cfg(test)]
mod tests {
    use quote::quote;

    use super::*;

    #[test]
    fn the_marker_goes_first() {
        let out = expand(
            quote!(256, 2),
            quote!(
                #[kernel]
                pub fn k() {
                    body();
                }
            ),
        )
        .unwrap()
        .to_string();
        let marker = out.find("launch_bounds_marker").unwrap();
        assert!(marker < out.find("body ()").unwrap(), "{out}");
        assert!(
            out.contains("launch_bounds_marker :: < { 256 } , { 2 } >"),
            "{out}"
        );
        assert!(out.contains("# [kernel]"), "{out}");
    }

    #[test]
    fn below_kernel_the_function_is_already_renamed() {
        let name = reserved_oxide_symbols::reserved_name(
            reserved_oxide_symbols::ReservedKind::Kernel,
            "0badf00d",
            "k",
        );
        let ident = syn::Ident::new(&name, proc_macro2::Span::call_site());
        let out = expand(quote!(BLOCK), quote!(#[inline] pub fn #ident() {}))
            .unwrap()
            .to_string();
        assert!(out.contains("# [inline]"), "{out}");
        assert!(
            out.contains("launch_bounds_marker :: < { BLOCK } , { 0 } >"),
            "{out}"
        );
        // A named constant is checked by rustc.
        assert!(
            out.contains(
                "const _ : () = :: cuda_device :: check_launch_bounds (BLOCK , :: core :: \
                 option :: Option :: None) ;"
            ),
            "{out}"
        );
    }

    #[test]
    fn misuse_is_explained() {
        let err =
            |attr: TokenStream, item: TokenStream| expand(attr, item).unwrap_err().to_string();
        let kernel = quote!(
            #[kernel]
            fn k() {}
        );
        assert!(err(quote!(0), kernel.clone()).contains("1 to 1024 threads, so 0"));
        assert!(err(quote!(2048), kernel.clone()).contains("so 2048 cannot"));
        assert!(err(quote!(256, 0), kernel.clone()).contains("at least 1"));
        assert!(err(quote!(), kernel.clone()).contains("one or two values"));
        assert!(err(quote!(1, 2, 3), kernel.clone()).contains("one or two values"));
        assert!(
            err(
                quote!(256),
                quote!(
                    fn helper() {}
                )
            )
            .contains("add #[kernel]")
        );
        assert!(
            err(
                quote!(256),
                quote!(
                    struct S;
                )
            )
            .contains("applies to a #[kernel]")
        );
        assert!(
            err(
                quote!(256),
                quote!(
                    #[launch_bounds(128)]
                    #[kernel]
                    fn k() {}
                )
            )
            .contains("one #[launch_bounds]")
        );
    }
}
