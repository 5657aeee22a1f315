//! `#[cluster_dims(X, Y, Z)]` on a `#[kernel]`: CUDA's `__cluster_dims__`, the thread-block
//! cluster shape every launch of the kernel has (PTX `.explicitcluster` and
//! `.reqnctapercluster`, sm_90).
//!
//! Like `#[launch_bounds]`, the shape reaches the compiler as a call to a marker,
//! `cuda_device::cluster_dims_marker::<X, Y, Z>()`, at the start of the kernel; rustc evaluates
//! the sides (they may name constants) and the backend reads them from the kernel's MIR.
//! Literal sides are checked here; other expressions by a constant assertion next to the marker.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Error, Expr, ItemFn, Result, Token};

use crate::launch_bounds::{is_named, literal};

/// The most blocks of a portable cluster.
const MAX_BLOCKS_PER_CLUSTER: u64 = 8;

/// `#[cluster_dims(...)]` written above or below `#[kernel]`.
pub fn expand(attr: TokenStream, item: TokenStream) -> Result<TokenStream> {
    let dims = parse_dims(attr)?;
    let mut func: ItemFn = syn::parse2(item.clone()).map_err(|_| {
        Error::new(
            item.span(),
            "#[cluster_dims] applies to a #[kernel] function",
        )
    })?;
    if let Some(other) = func.attrs.iter().find(|a| is_named(a, "cluster_dims")) {
        return Err(Error::new(
            other.span(),
            "a kernel has one #[cluster_dims]; remove this one",
        ));
    }
    let renamed_kernel =
        reserved_oxide_symbols::kernel_base_name(&func.sig.ident.to_string()).is_some();
    if !renamed_kernel && !func.attrs.iter().any(|a| is_named(a, "kernel")) {
        return Err(Error::new(
            func.sig.ident.span(),
            "#[cluster_dims] applies to a #[kernel] function: add #[kernel] below it (a \
             cluster shape describes how a kernel is launched; helpers take no launch)",
        ));
    }
    let [x, y, z] = &dims;
    let span = x.span().join(z.span()).unwrap_or(x.span());
    let check: syn::Stmt = syn::parse2(quote_spanned! {span=>
        const _: () = ::cuda_device::check_cluster_dims(#x, #y, #z);
    })
    .expect("a const item is a statement");
    let marker: syn::Stmt = syn::parse_quote! {
        ::cuda_device::cluster_dims_marker::<{ #x }, { #y }, { #z }>();
    };
    func.block.stmts.insert(0, marker);
    func.block.stmts.insert(0, check);
    Ok(quote!(#func))
}

/// One to three sides (`x`, then `y` and `z`, 1 when left out), each a `u32` constant.
fn parse_dims(attr: TokenStream) -> Result<[Expr; 3]> {
    let span = attr.span();
    let usage = "#[cluster_dims] takes one to three sides, the blocks per cluster along x, y and \
                 z: `#[cluster_dims(2)]`, `#[cluster_dims(2, 1, 1)]`";
    let args = Punctuated::<Expr, Token![,]>::parse_terminated
        .parse2(attr)
        .map_err(|e| Error::new(e.span(), usage))?;
    if args.is_empty() || args.len() > 3 {
        return Err(Error::new(span, usage));
    }
    let mut dims: Vec<Expr> = args.into_iter().collect();
    while dims.len() < 3 {
        dims.push(syn::parse_quote!(1));
    }
    let mut blocks = 1u64;
    for side in &dims {
        match literal(side)? {
            Some(0) => {
                return Err(Error::new(
                    side.span(),
                    "a cluster side is at least 1 block",
                ));
            }
            Some(value) => blocks = blocks.saturating_mul(value),
            None => {}
        }
    }
    if blocks > MAX_BLOCKS_PER_CLUSTER {
        return Err(Error::new(
            span,
            format!("a cluster has at most {MAX_BLOCKS_PER_CLUSTER} blocks, not {blocks}"),
        ));
    }
    Ok(dims
        .try_into()
        .unwrap_or_else(|_| unreachable!("three sides")))
}

#[cfg(test)]
mod tests {
    use quote::quote;

    use super::*;

    #[test]
    fn the_marker_goes_first_with_missing_sides_one() {
        let out = expand(
            quote!(2),
            quote!(
                #[kernel]
                pub fn k() {
                    body();
                }
            ),
        )
        .unwrap()
        .to_string();
        let marker = out.find("cluster_dims_marker").unwrap();
        assert!(marker < out.find("body ()").unwrap(), "{out}");
        assert!(
            out.contains("cluster_dims_marker :: < { 2 } , { 1 } , { 1 } >"),
            "{out}"
        );
        assert!(out.contains("check_cluster_dims (2 , 1 , 1)"), "{out}");
    }

    #[test]
    fn misuse_is_explained() {
        let err =
            |attr: TokenStream, item: TokenStream| expand(attr, item).unwrap_err().to_string();
        let kernel = quote!(
            #[kernel]
            fn k() {}
        );
        assert!(err(quote!(0), kernel.clone()).contains("at least 1 block"));
        assert!(err(quote!(4, 4), kernel.clone()).contains("at most 8 blocks, not 16"));
        assert!(err(quote!(), kernel.clone()).contains("one to three sides"));
        assert!(err(quote!(1, 1, 1, 1), kernel.clone()).contains("one to three sides"));
        assert!(
            err(
                quote!(2),
                quote!(
                    fn helper() {}
                )
            )
            .contains("add #[kernel]")
        );
        assert!(
            err(
                quote!(2),
                quote!(
                    #[cluster_dims(2)]
                    #[kernel]
                    fn k() {}
                )
            )
            .contains("one #[cluster_dims]")
        );
    }
}
