//! Kernel attributes that fix a launch shape: `#[cluster_dims(X, Y, Z)]` (CUDA's
//! `__cluster_dims__`, the thread-block cluster every launch has: PTX `.explicitcluster` and
//! `.reqnctapercluster`, sm_90) and `#[block_dims(X, Y, Z)]` (the exact block every launch has:
//! PTX `.reqntid`, which also tells the compiler the range of each thread index). One
//! [Shape] describes each; the expansion is shared.
//!
//! Like `#[launch_bounds]`, the shape reaches the compiler as a call to a marker,
//! `cuda_device::cluster_dims_marker::<X, Y, Z>()` (`block_dims_marker`), at the start of the
//! kernel; rustc evaluates the sides (they may name constants) and the backend reads them from
//! the kernel's MIR. Literal sides are checked here; other expressions by a constant assertion
//! next to the marker.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Error, Expr, ItemFn, Result, Token};

use crate::launch_bounds::{is_named, literal};

/// One shape attribute: its name, what it counts, its limit, and the `cuda_device` items its
/// expansion calls.
pub struct Shape {
    /// The attribute's name (`cluster_dims`).
    pub attr: &'static str,
    /// What the shape is of (`cluster`).
    pub whole: &'static str,
    /// What it counts (`block`).
    pub unit: &'static str,
    /// The most units in all.
    pub max: u64,
    /// Examples of use, for the usage message.
    pub examples: &'static str,
    /// The marker the backend reads, in `cuda_device`.
    pub marker: &'static str,
    /// The constant check of named sides, in `cuda_device`.
    pub check: &'static str,
}

/// `#[cluster_dims]`: at most 8 blocks, a portable cluster.
pub const CLUSTER: Shape = Shape {
    attr: "cluster_dims",
    whole: "cluster",
    unit: "block",
    max: 8,
    examples: "`#[cluster_dims(2)]`, `#[cluster_dims(2, 1, 1)]`",
    marker: "cluster_dims_marker",
    check: "check_cluster_dims",
};

/// `#[block_dims]`: at most 1,024 threads, a block's limit.
pub const BLOCK: Shape = Shape {
    attr: "block_dims",
    whole: "block",
    unit: "thread",
    max: 1024,
    examples: "`#[block_dims(256)]`, `#[block_dims(32, 8, 1)]`",
    marker: "block_dims_marker",
    check: "check_block_dims",
};

/// `#[<shape>(...)]` written above or below `#[kernel]`.
pub fn expand(shape: &Shape, attr: TokenStream, item: TokenStream) -> Result<TokenStream> {
    let name = shape.attr;
    let dims = parse_dims(shape, attr)?;
    let mut func: ItemFn = syn::parse2(item.clone()).map_err(|_| {
        Error::new(
            item.span(),
            format!("#[{name}] applies to a #[kernel] function"),
        )
    })?;
    if let Some(other) = func.attrs.iter().find(|a| is_named(a, name)) {
        return Err(Error::new(
            other.span(),
            format!("a kernel has one #[{name}]; remove this one"),
        ));
    }
    let renamed_kernel =
        reserved_oxide_symbols::kernel_base_name(&func.sig.ident.to_string()).is_some();
    if !renamed_kernel && !func.attrs.iter().any(|a| is_named(a, "kernel")) {
        return Err(Error::new(
            func.sig.ident.span(),
            format!(
                "#[{name}] applies to a #[kernel] function: add #[kernel] below it (a {} shape \
                 describes how a kernel is launched; helpers take no launch)",
                shape.whole
            ),
        ));
    }
    let [x, y, z] = &dims;
    let span = x.span().join(z.span()).unwrap_or(x.span());
    let check_fn = syn::Ident::new(shape.check, span);
    let check: syn::Stmt = syn::parse2(quote_spanned! {span=>
        const _: () = ::cuda_device::#check_fn(#x, #y, #z);
    })
    .expect("a const item is a statement");
    let marker_fn = syn::Ident::new(shape.marker, proc_macro2::Span::call_site());
    let marker: syn::Stmt = syn::parse_quote! {
        ::cuda_device::#marker_fn::<{ #x }, { #y }, { #z }>();
    };
    func.block.stmts.insert(0, marker);
    func.block.stmts.insert(0, check);
    Ok(quote!(#func))
}

/// One to three sides (`x`, then `y` and `z`, 1 when left out), each a `u32` constant.
pub(crate) fn parse_dims(shape: &Shape, attr: TokenStream) -> Result<[Expr; 3]> {
    let span = attr.span();
    let Shape {
        attr: name,
        whole,
        unit,
        max,
        examples,
        ..
    } = shape;
    let usage = format!(
        "#[{name}] takes one to three sides, the {unit}s per {whole} along x, y and z: {examples}"
    );
    let args = Punctuated::<Expr, Token![,]>::parse_terminated
        .parse2(attr)
        .map_err(|e| Error::new(e.span(), &usage))?;
    if args.is_empty() || args.len() > 3 {
        return Err(Error::new(span, usage));
    }
    let mut dims: Vec<Expr> = args.into_iter().collect();
    while dims.len() < 3 {
        dims.push(syn::parse_quote!(1));
    }
    let mut units = 1u64;
    for side in &dims {
        match literal(side)? {
            Some(0) => {
                return Err(Error::new(
                    side.span(),
                    format!("a {whole} side is at least 1 {unit}"),
                ));
            }
            Some(value) => units = units.saturating_mul(value),
            None => {}
        }
    }
    if units > *max {
        return Err(Error::new(
            span,
            format!("a {whole} has at most {max} {unit}s, not {units}"),
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
            &CLUSTER,
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
        let err = |attr: TokenStream, item: TokenStream| {
            expand(&CLUSTER, attr, item).unwrap_err().to_string()
        };
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
