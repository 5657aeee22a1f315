//! `#[cuda_module]`: a typed host launcher for every `#[kernel]` of a module.
//!
//! The attribute sees the module before the `#[kernel]`s inside it expand, so it reads each
//! kernel's signature as written. It leaves the module's items untouched and adds:
//!
//! - `pub fn load(ctx: &cuda_host::CudaContext) -> Result<Module, cuda_host::Error>`: loads the
//!   module the codegen backend embedded for this crate (its cubin on a GPU of the build's
//!   architecture, else its PTX) and looks up each kernel;
//! - `pub fn load_untyped(ctx)`: the same module as a `cuda_host::PtxModule`, its kernels
//!   found by name;
//! - `pub fn embedded()`: that PTX text and cubin;
//! - `pub fn load_ptx(ctx, ptx: &CStr) -> Result<Module, cuda_host::Error>`: the same from a
//!   PTX text given at run time (the crate's kernels compiled with other options);
//! - `pub struct Module`, with one launch method per kernel, named like the kernel, taking
//!   `(&self, stream, cfg, ...)` and then one host argument per kernel parameter. A generic
//!   kernel's launcher has the kernel's generic parameters; it takes the address of the
//!   instantiation it launches (which makes it a codegen root the backend compiles as its own
//!   entry) and finds that entry by name on its first launch (`cuda_host`'s `GenericKernels`).
//!
//! A kernel under `#[cfg(...)]`, or made one by `#[cfg_attr(..., kernel)]`, has its launcher
//! (and any error about its parameters) under the same condition.
//!
//! Host argument types follow the kernel's parameter types: `&[T]` becomes
//! `&impl DeviceSliceArg<T>` (a `CudaSlice<T>` or a view of one), `&mut [T]` and
//! `DisjointSlice<T>` become `&mut impl DeviceSliceMutArg<T>` (a `CudaSlice<T>` or a mutable
//! view), `&[A]` of atomic cells (`AtomicU32`, `DeviceAtomicU32`, ...) a mutable buffer of
//! `u32`, everything
//! else is taken by value (scalars as they are, structs, tuples and closures through
//! `cuda_host::ByValue`). A `&T` of a sized `T` is a grid constant: the launcher takes `&T` and
//! copies the value into the kernel's parameter space (`cuda_host::GridConstant`). A kernel with a raw-pointer parameter gets an `unsafe` launcher.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use reserved_oxide_symbols::{crate_tag, ptx_len_symbol, ptx_symbol};
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{
    Attribute, Error, FnArg, GenericArgument, GenericParam, Generics, Ident, Item, ItemFn, ItemMod,
    Pat, PathArguments, Result, Token, Type, Visibility, WherePredicate,
};

use crate::signature::{crate_name, no_arguments};

/// How one kernel parameter crosses from the host.
enum Shape {
    /// `&[T]`: the host passes `&CudaSlice<T>` or a view.
    Slice(Type),
    /// `&mut [T]` or `DisjointSlice<T>`: the host passes `&mut CudaSlice<T>` or a mutable view.
    SliceMut(Type),
    /// `&[A]` of atomic cells (`AtomicU32`, `DeviceAtomicU32`, ...): the kernel writes through
    /// them, so the host passes a mutable buffer of `A::Plain`.
    AtomicSlice(Type),
    /// A primitive scalar or a raw pointer: passed as it is.
    Direct(Type),
    /// Anything else: passed by value with rustc's layout.
    Value(Type),
    /// `&T` of a sized `T`: a grid constant; the host passes `&T`, whose value is copied into
    /// the kernel's parameter space.
    GridConstant(Type),
}

/// Whether a reference's pointee is unsized as written (`str`, `dyn Trait`).
fn is_unsized(elem: &Type) -> bool {
    match elem {
        Type::TraitObject(_) => true,
        Type::Path(path) => path.qself.is_none() && path.path.is_ident("str"),
        Type::Paren(inner) => is_unsized(&inner.elem),
        Type::Group(inner) => is_unsized(&inner.elem),
        _ => false,
    }
}

struct Param {
    name: Ident,
    shape: Shape,
}

struct KernelSig {
    name: Ident,
    /// The kernel's generic parameters, when it has type or const parameters, and the
    /// reserved name `#[kernel]` gives it: its launcher takes the same parameters and names
    /// the instantiation it launches; each is its own entry.
    generics: Option<(Generics, Ident)>,
    vis: Visibility,
    params: Vec<Param>,
    has_raw_pointer: bool,
    /// The kernel is an `unsafe fn`: its launcher inherits its safety contract.
    is_unsafe: bool,
    /// `#[cfg]`s of the kernel: its field, lookup and launcher exist when it does.
    cfgs: Vec<Attribute>,
    /// `///` docs of the kernel, repeated on its launcher.
    docs: Vec<Attribute>,
    /// The kernel's `#[block_dims(x, y, z)]` when its sides are integer literals: the launcher
    /// refuses other block shapes with an error saying so.
    block_dims: Option<[u32; 3]>,
}

/// Names the generated launch methods use for their own parameters and locals.
const RESERVED_PARAM_NAMES: [&str; 3] = ["stream", "cfg", "self"];

pub fn expand(attr: TokenStream, item: TokenStream) -> Result<TokenStream> {
    no_arguments("cuda_module", attr)?;
    let mut module: ItemMod = syn::parse2(item.clone()).map_err(|_| {
        Error::new(
            item.span(),
            "#[cuda_module] applies to a module: `mod kernels { ... }`",
        )
    })?;
    let module_span = module.ident.span();
    let Some((_, items)) = &mut module.content else {
        return Err(Error::new(
            module.span(),
            "#[cuda_module] needs the module's items inline (`mod kernels { ... }`), not in \
             another file",
        ));
    };
    for item in items.iter() {
        // Kernels are renamed by `#[kernel]`, so a kernel called `load` clashes with nothing.
        if let Item::Fn(func) = item
            && is_kernel(func)
        {
            continue;
        }
        if let Some(ident) = item_ident(item)
            && (ident == "load" || ident == "Module")
        {
            return Err(Error::new(
                ident.span(),
                format!(
                    "#[cuda_module] generates `load` and `Module` in this module; rename this \
                     `{ident}`"
                ),
            ));
        }
    }
    if !items
        .iter()
        .any(|item| matches!(item, Item::Fn(func) if is_kernel(func)))
    {
        return Err(Error::new(
            module_span,
            "#[cuda_module] found no #[kernel] function directly in this module; it launches \
             the kernels written in the module itself",
        ));
    }
    let mut kernels = Vec::new();
    let mut gated_errors = Vec::new();
    for item in items.iter() {
        let Item::Fn(func) = item else { continue };
        if !is_kernel(func) {
            continue;
        }
        let cfgs = kernel_cfgs(func);
        // A kernel that exists only under a `cfg` is refused only where it exists: the error
        // is compiled under the same `cfg`. (What `#[kernel]` checks itself, it reports itself
        // when it expands, which it does only where the kernel exists.)
        match (kernel_sig(func, cfgs.clone()), cfgs.is_empty()) {
            (Ok(kernel), _) => kernels.push(kernel),
            (Err(Refused::Signature(error) | Refused::Parameter(error)), true) => {
                return Err(error);
            }
            (Err(Refused::Signature(_)), false) => {}
            (Err(Refused::Parameter(error)), false) => {
                let error = error.to_compile_error();
                gated_errors.push(syn::parse_quote!(#(#cfgs)* #error));
            }
        }
    }
    items.extend(gated_errors);
    items.extend(generate(&kernels)?);
    Ok(quote!(#module))
}

/// Why a kernel gets no launcher.
enum Refused {
    /// Its signature is not a kernel's (what `#[kernel]` itself refuses).
    Signature(Error),
    /// A parameter that the host cannot pass.
    Parameter(Error),
}

fn item_ident(item: &Item) -> Option<&Ident> {
    match item {
        Item::Fn(f) => Some(&f.sig.ident),
        Item::Struct(s) => Some(&s.ident),
        Item::Enum(e) => Some(&e.ident),
        Item::Union(u) => Some(&u.ident),
        Item::Type(t) => Some(&t.ident),
        Item::Trait(t) => Some(&t.ident),
        Item::Const(c) => Some(&c.ident),
        Item::Static(s) => Some(&s.ident),
        Item::Mod(m) => Some(&m.ident),
        _ => None,
    }
}

/// `#[kernel]`, `#[cuda_device::kernel]`, `#[cuda_macros::kernel]`, also as one of the
/// attributes of a `#[cfg_attr(predicate, ...)]`.
fn is_kernel(func: &ItemFn) -> bool {
    func.attrs
        .iter()
        .any(|attr| is_kernel_path(attr.path()) || kernel_cfg_attr(attr).is_some())
}

fn is_kernel_path(path: &syn::Path) -> bool {
    path.segments
        .last()
        .is_some_and(|segment| segment.ident == "kernel")
}

/// The predicate of `#[cfg_attr(predicate, ..., kernel, ...)]`.
fn kernel_cfg_attr(attr: &Attribute) -> Option<syn::Meta> {
    if !attr.path().is_ident("cfg_attr") {
        return None;
    }
    let metas = attr
        .parse_args_with(Punctuated::<syn::Meta, Token![,]>::parse_terminated)
        .ok()?;
    let mut metas = metas.into_iter();
    let predicate = metas.next()?;
    metas
        .any(|meta| is_kernel_path(meta.path()))
        .then_some(predicate)
}

/// The conditions under which a kernel exists: its `#[cfg]`s, and the predicate of the
/// `#[cfg_attr]` that makes it a kernel, as a `#[cfg]`. Its launcher exists under the same.
fn kernel_cfgs(func: &ItemFn) -> Vec<Attribute> {
    func.attrs
        .iter()
        .filter_map(|attr| {
            if attr.path().is_ident("cfg") {
                Some(attr.clone())
            } else {
                let predicate = kernel_cfg_attr(attr)?;
                Some(syn::parse_quote!(#[cfg(#predicate)]))
            }
        })
        .collect()
}

fn kernel_sig(func: &ItemFn, cfgs: Vec<Attribute>) -> std::result::Result<KernelSig, Refused> {
    crate::kernel::check_signature(func).map_err(Refused::Signature)?;
    let mut params = Vec::new();
    for (index, input) in func.sig.inputs.iter().enumerate() {
        let FnArg::Typed(typed) = input else {
            // `#[kernel]` reports methods itself.
            continue;
        };
        let name = match &*typed.pat {
            Pat::Ident(p) if !RESERVED_PARAM_NAMES.contains(&p.ident.to_string().as_str()) => {
                Ident::new(&p.ident.to_string(), p.ident.span())
            }
            Pat::Ident(p) => format_ident!("{}_arg", p.ident),
            _ => format_ident!("arg{index}"),
        };
        params.push(Param {
            name,
            shape: shape(&typed.ty).map_err(Refused::Parameter)?,
        });
    }
    let has_raw_pointer = params
        .iter()
        .any(|p| matches!(&p.shape, Shape::Direct(Type::Ptr(_))));
    let generics = crate::signature::has_type_or_const_generics(func).map(|_| {
        let reserved =
            crate::signature::reserved_ident(reserved_oxide_symbols::ReservedKind::Kernel, func);
        (func.sig.generics.clone(), reserved)
    });
    Ok(KernelSig {
        name: func.sig.ident.clone(),
        generics,
        vis: func.vis.clone(),
        params,
        has_raw_pointer,
        is_unsafe: func.sig.unsafety.is_some(),
        cfgs,
        docs: attrs_named(func, "doc"),
        block_dims: literal_block_dims(func),
    })
}

/// The sides of `func`'s `#[block_dims(...)]`, when each is an integer literal (missing sides
/// are 1). Sides that name constants are checked by the driver only.
fn literal_block_dims(func: &ItemFn) -> Option<[u32; 3]> {
    let shape = &crate::launch_shape::BLOCK;
    let attr = func
        .attrs
        .iter()
        .find(|attr| crate::launch_bounds::is_named(attr, shape.attr))?;
    let tokens = attr.meta.require_list().ok()?.tokens.clone();
    let sides = crate::launch_shape::parse_dims(shape, tokens).ok()?;
    let mut dims = [0u32; 3];
    for (dim, side) in dims.iter_mut().zip(&sides) {
        *dim = u32::try_from(crate::launch_bounds::literal(side).ok()??).ok()?;
    }
    Some(dims)
}

fn attrs_named(func: &ItemFn, name: &str) -> Vec<Attribute> {
    func.attrs
        .iter()
        .filter(|attr| attr.path().is_ident(name))
        .cloned()
        .collect()
}

const SCALARS: [&str; 16] = [
    "u8", "u16", "u32", "u64", "u128", "usize", "i8", "i16", "i32", "i64", "i128", "isize", "f32",
    "f64", "bool", "char",
];

fn shape(ty: &Type) -> Result<Shape> {
    match ty {
        Type::Paren(inner) => shape(&inner.elem),
        Type::Group(inner) => shape(&inner.elem),
        Type::Reference(reference) => match &*reference.elem {
            Type::Slice(slice) if reference.mutability.is_some() => {
                Ok(Shape::SliceMut((*slice.elem).clone()))
            }
            Type::Slice(slice) if is_atomic(&slice.elem) => {
                Ok(Shape::AtomicSlice((*slice.elem).clone()))
            }
            Type::Slice(slice) => Ok(Shape::Slice((*slice.elem).clone())),
            elem if reference.mutability.is_none() && !is_unsized(elem) => {
                Ok(Shape::GridConstant(elem.clone()))
            }
            elem if reference.mutability.is_none() => Err(Error::new(
                ty.span(),
                format!(
                    "a kernel parameter `&{}` cannot be launched: the host passes device \
                     buffers (`&[T]`) and grid constants (`&T` of a sized `T`)",
                    quote!(#elem)
                ),
            )),
            _ => Err(Error::new(
                ty.span(),
                "a kernel parameter that is a mutable reference must be a slice (`&mut [T]`) \
                 for #[cuda_module] to launch it: the host passes device buffers. Take a \
                 one-element slice, or the value itself",
            )),
        },
        Type::Ptr(_) => Ok(Shape::Direct(ty.clone())),
        Type::ImplTrait(_) => Err(Error::new(
            ty.span(),
            "a kernel parameter cannot be `impl Trait`: a kernel needs one concrete signature",
        )),
        Type::Path(path) if path.qself.is_none() => {
            let last = path.path.segments.last();
            if let Some(segment) = last.filter(|s| s.ident == "DisjointSlice") {
                return match &segment.arguments {
                    PathArguments::AngleBracketed(args) if args.args.len() == 1 => {
                        match &args.args[0] {
                            GenericArgument::Type(elem) => Ok(Shape::SliceMut(elem.clone())),
                            _ => Err(disjoint_slice_error(ty)),
                        }
                    }
                    _ => Err(disjoint_slice_error(ty)),
                };
            }
            let is_scalar = path.path.segments.len() == 1
                && last.is_some_and(|s| {
                    s.arguments.is_empty() && SCALARS.contains(&s.ident.to_string().as_str())
                });
            Ok(if is_scalar {
                Shape::Direct(ty.clone())
            } else {
                Shape::Value(ty.clone())
            })
        }
        _ => Ok(Shape::Value(ty.clone())),
    }
}

/// Whether `ty` names an atomic cell type, by the last segment of its path: the integer and
/// `bool` atomics of `core::sync::atomic`, and `cuda_device::atomic`'s scoped ones. The launcher
/// then asks for `cuda_host::AtomicElement`, which checks the guess.
fn is_atomic(ty: &Type) -> bool {
    const CORE: [&str; 11] = [
        "AtomicBool",
        "AtomicU8",
        "AtomicI8",
        "AtomicU16",
        "AtomicI16",
        "AtomicU32",
        "AtomicI32",
        "AtomicU64",
        "AtomicI64",
        "AtomicUsize",
        "AtomicIsize",
    ];
    const SCOPES: [&str; 3] = ["DeviceAtomic", "BlockAtomic", "SystemAtomic"];
    const VALUES: [&str; 6] = ["U32", "I32", "U64", "I64", "F32", "F64"];
    let Type::Path(path) = ty else {
        return false;
    };
    let Some(last) = path.path.segments.last() else {
        return false;
    };
    let name = last.ident.to_string();
    CORE.contains(&name.as_str())
        || name == "ScopedAtomic"
        || SCOPES.iter().any(|scope| {
            name.strip_prefix(scope)
                .is_some_and(|value| VALUES.contains(&value))
        })
}

fn disjoint_slice_error(ty: &Type) -> Error {
    Error::new(
        ty.span(),
        "write `DisjointSlice<T>` with its element type for #[cuda_module] to launch it",
    )
}

fn generate(kernels: &[KernelSig]) -> Result<Vec<Item>> {
    let crate_name = crate_name();
    let tag = crate_tag(&crate_name);
    let ptx_symbol = ptx_symbol(&tag);
    let ptx_len_symbol = ptx_len_symbol(&tag);
    let cubin_symbol = reserved_oxide_symbols::cubin_symbol(&tag);
    let cubin_len_symbol = reserved_oxide_symbols::cubin_len_symbol(&tag);
    let cpu_image_symbol = reserved_oxide_symbols::cpu_image_symbol(&tag);
    let host = quote!(::cuda_host);

    // Concrete kernels are looked up when the module loads; generic ones per instantiation,
    // on its first launch (`GenericKernels`).
    let concrete: Vec<&KernelSig> = kernels.iter().filter(|k| k.generics.is_none()).collect();
    let names: Vec<&Ident> = concrete.iter().map(|k| &k.name).collect();
    let name_strings: Vec<String> = names.iter().map(|n| n.to_string()).collect();
    let cfgs: Vec<&[Attribute]> = concrete.iter().map(|k| k.cfgs.as_slice()).collect();
    let launchers = kernels.iter().map(|kernel| launcher(kernel, &host));

    let tokens = quote! {
        /// The kernels of this module, loaded on one context by [`load`].
        #[derive(Clone, Debug)]
        #[allow(dead_code)]
        pub struct Module {
            #( #(#cfgs)* #names: #host::Kernel, )*
            __generic_kernels: #host::__private::GenericKernels,
            __loaded_from: #host::ModuleImage,
        }

        /// The PTX and the cubin (for the build's `sm_XX`; empty when the build had no
        /// `ptxas`) that `cargo oxide` embedded in this binary for this crate.
        ///
        /// A binary built without the cuda-oxide backend has no embedded PTX: linking it fails
        /// with an undefined `cuda_oxide_ptx_... (the kernels of this crate were not compiled:
        /// build it with `cargo oxide build` ...)`.
        #[allow(dead_code)]
        pub fn embedded() -> ::core::result::Result<
            (&'static ::core::ffi::CStr, &'static [u8]),
            #host::Error,
        > {
            unsafe extern "C" {
                #[link_name = #ptx_symbol]
                static CUDA_OXIDE_PTX: u8;
                #[link_name = #ptx_len_symbol]
                static CUDA_OXIDE_PTX_LEN: u64;
                #[link_name = #cubin_symbol]
                static CUDA_OXIDE_CUBIN: u8;
                #[link_name = #cubin_len_symbol]
                static CUDA_OXIDE_CUBIN_LEN: u64;
            }
            // SAFETY: the codegen backend defines these symbols for this crate, in read-only
            // data: `CUDA_OXIDE_PTX_LEN` bytes of PTX text followed by a NUL, and
            // `CUDA_OXIDE_CUBIN_LEN` bytes of cubin.
            let ptx = unsafe {
                #host::__private::embedded_ptx(
                    #crate_name,
                    &raw const CUDA_OXIDE_PTX,
                    CUDA_OXIDE_PTX_LEN,
                )
            }?;
            // SAFETY: as above.
            let cubin = unsafe {
                #host::__private::embedded_cubin(&raw const CUDA_OXIDE_CUBIN, CUDA_OXIDE_CUBIN_LEN)
            };
            ::core::result::Result::Ok((ptx, cubin))
        }

        /// Loads the module that `cargo oxide` embedded in this binary on `ctx`: the cubin
        /// when the GPU is of the architecture it was built for (nothing to compile), else the
        /// PTX (the driver compiles it); on the CPU device (`CUDA_OXIDE_DEVICE=cpu`), the
        /// kernels' CPU flavour linked into the binary. Then looks up the kernels of this module.
        #[allow(dead_code)]
        pub fn load(
            ctx: &#host::CudaContext,
        ) -> ::core::result::Result<Module, #host::Error> {
            from_module(&load_untyped(ctx)?)
        }

        /// Loads the embedded module as [`load`] does, without looking up its kernels: for
        /// finding kernels by name (`PtxModule::kernel`).
        #[allow(dead_code)]
        pub fn load_untyped(
            ctx: &#host::CudaContext,
        ) -> ::core::result::Result<#host::PtxModule, #host::Error> {
            unsafe extern "C" {
                #[link_name = #cpu_image_symbol]
                static CUDA_OXIDE_CPU_IMAGE: u8;
            }
            let (ptx, cubin) = embedded()?;
            #host::PtxModule::load_embedded_or_cpu(
                ctx,
                #crate_name,
                ptx,
                cubin,
                (&raw const CUDA_OXIDE_CPU_IMAGE).cast(),
            )
        }

        /// Loads `ptx` instead of the embedded module (the embedded PTX without its cubin, or
        /// the same crate's kernels compiled another way) on `ctx`, and looks up the kernels of
        /// this module in it.
        #[allow(dead_code)]
        pub fn load_ptx(
            ctx: &#host::CudaContext,
            ptx: &::core::ffi::CStr,
        ) -> ::core::result::Result<Module, #host::Error> {
            let module = #host::PtxModule::load(ctx, #crate_name, ptx)?;
            from_module(&module)
        }

        fn from_module(
            module: &#host::PtxModule,
        ) -> ::core::result::Result<Module, #host::Error> {
            ::core::result::Result::Ok(Module {
                #( #(#cfgs)* #names: module.kernel(#name_strings)?, )*
                __generic_kernels: #host::__private::GenericKernels::new(module),
                __loaded_from: module.image(),
            })
        }

        impl Module {
            /// Whether the module was loaded from the embedded cubin or from PTX.
            #[allow(dead_code)]
            pub fn loaded_from(&self) -> #host::ModuleImage {
                self.__loaded_from
            }

            #( #launchers )*
        }
    };
    let file: syn::File = syn::parse2(tokens)?;
    Ok(file.items)
}

fn launcher(kernel: &KernelSig, host: &TokenStream) -> TokenStream {
    let name = &kernel.name;
    let vis = match &kernel.vis {
        Visibility::Inherited => quote!(pub(super)),
        vis => quote!(#vis),
    };
    let mut params = Vec::new();
    let mut pushes = Vec::new();
    for param in &kernel.params {
        let arg = &param.name;
        // The parameter as an expression, spanned at the macro call, so that diagnostics point
        // at the type rather than suggest changing the kernel's parameter pattern.
        let value = Ident::new(&arg.to_string(), Span::call_site());
        let (ty, method, push, span) = match &param.shape {
            Shape::Slice(elem) => (
                quote!(&impl #host::DeviceSliceArg<#elem>),
                "slice",
                quote!(#value),
                elem.span(),
            ),
            Shape::SliceMut(elem) => (
                quote!(&mut impl #host::DeviceSliceMutArg<#elem>),
                "slice_mut",
                quote!(#value),
                elem.span(),
            ),
            Shape::AtomicSlice(elem) => (
                quote!(&mut impl #host::DeviceSliceMutArg<<#elem as #host::AtomicElement>::Plain>),
                "slice_mut",
                quote!(#value),
                elem.span(),
            ),
            Shape::Direct(ty) => (quote!(#ty), "arg", quote!(#value), ty.span()),
            Shape::Value(ty) => (
                quote!(#ty),
                "arg",
                quote!(#host::ByValue(#value)),
                ty.span(),
            ),
            Shape::GridConstant(ty) => (
                quote!(&#ty),
                "arg",
                quote!(#host::GridConstant(#value)),
                ty.span(),
            ),
        };
        params.push(quote!(#arg: #ty));
        // Spanned at the kernel's parameter type, so that an argument type that cannot be
        // passed is reported there.
        let method = Ident::new(method, span);
        pushes.push(quote_spanned!(span=> __cuda_oxide_args.#method(#push);));
    }
    let summary =
        format!(" Launches the kernel `{name}` on `stream` with `cfg`; returns once it is queued.");
    let (unsafety, safety_doc) = if kernel.is_unsafe {
        (
            quote!(unsafe),
            quote! {
                ///
                /// # Safety
                /// The kernel is an `unsafe fn`: uphold its safety contract for this launch.
            },
        )
    } else if kernel.has_raw_pointer {
        (
            quote!(unsafe),
            quote! {
                ///
                /// # Safety
                /// The kernel takes raw pointers: each must point to device memory that the
                /// kernel may access as it does, for as long as it runs.
            },
        )
    } else {
        (quote!(), quote!())
    };
    let args = Ident::new("__cuda_oxide_args", Span::call_site());
    let block_check = kernel.block_dims.map(|[x, y, z]| {
        let kernel_name = name.to_string();
        quote!(#host::__private::require_block_dims(#kernel_name, &cfg, (#x, #y, #z))?;)
    });
    let cfgs = &kernel.cfgs;
    let docs = &kernel.docs;
    let separator = (!docs.is_empty()).then(|| quote!(#[doc = ""]));
    let (generics, where_clause, kernel_lookup) = match &kernel.generics {
        None => (quote!(), quote!(), quote!(&self.#name)),
        Some((generics, reserved)) => generic_launch(kernel, generics, reserved, host),
    };
    quote! {
        #(#cfgs)*
        #[doc = #summary]
        #separator
        #(#docs)*
        #safety_doc
        #[allow(clippy::too_many_arguments, dead_code)]
        #vis #unsafety fn #name #generics (
            &self,
            stream: &#host::CudaStream,
            cfg: #host::LaunchConfig,
            #( #params, )*
        ) -> ::core::result::Result<(), #host::Error> #where_clause {
            #block_check
            let __cuda_oxide_kernel = #kernel_lookup;
            // The stream, or the graph being recorded on it: chosen once, here, and followed
            // by the packing of the arguments and by the launch alike.
            let mut #args =
                #host::KernelArgs::for_target(#host::__private::LaunchTarget::of(stream));
            #( #pushes )*
            // SAFETY: the arguments were packed from the kernel's own parameter types, in
            // order, so they are what the PTX entry expects.
            unsafe { __cuda_oxide_kernel.launch(stream, cfg, #args) }
        }
    }
}

/// The launcher of a generic kernel: its generic parameters (the kernel's), its where clause
/// (the kernel's, plus what passing each parameter needs: type parameters are `'static`, since
/// an instantiation is named by its type id, and by-value parameters are `DeviceValue`s), and
/// the lookup of the instantiation's entry.
fn generic_launch(
    kernel: &KernelSig,
    generics: &Generics,
    reserved: &Ident,
    host: &TokenStream,
) -> (TokenStream, TokenStream, TokenStream) {
    let name = &kernel.name;
    let mut where_clause = generics
        .where_clause
        .clone()
        .unwrap_or_else(|| syn::WhereClause {
            where_token: Default::default(),
            predicates: Default::default(),
        });
    let mut arguments = Vec::new();
    for param in &generics.params {
        match param {
            GenericParam::Type(t) => {
                let ident = &t.ident;
                arguments.push(quote!(#ident));
                where_clause
                    .predicates
                    .push(syn::parse_quote!(#ident: 'static));
            }
            GenericParam::Const(c) => {
                let ident = &c.ident;
                arguments.push(quote!(#ident));
            }
            GenericParam::Lifetime(_) => {}
        }
    }
    for param in &kernel.params {
        if let Shape::Value(ty) | Shape::GridConstant(ty) = &param.shape {
            let predicate: WherePredicate = syn::parse_quote!(#ty: #host::DeviceValue);
            where_clause.predicates.push(predicate);
        }
    }
    let holes = kernel.params.iter().map(|_| quote!(_));
    let base_name = name.to_string();
    let (impl_generics, _, _) = generics.split_for_impl();
    let lookup = quote! {&{
        let instance = #reserved::<#(#arguments),*>;
        // The instantiation's address makes it a codegen root of this crate, which the
        // backend then compiles as its own entry.
        ::core::hint::black_box(instance as fn(#(#holes),*));
        self.__generic_kernels.get(instance, #base_name)?
    }};
    (quote!(#impl_generics), quote!(#where_clause), lookup)
}

#[cfg(test)]
mod tests {
    use quote::quote;

    use super::expand;

    fn expansion(item: proc_macro2::TokenStream) -> String {
        expand(quote!(), item).unwrap().to_string()
    }

    #[test]
    fn literal_block_shapes_are_checked_by_the_launcher() {
        let dims = |attr: proc_macro2::TokenStream| {
            let func: syn::ItemFn = syn::parse2(quote!(#attr #[kernel] fn k() {})).unwrap();
            super::literal_block_dims(&func)
        };
        assert_eq!(dims(quote!(#[block_dims(32, 8)])), Some([32, 8, 1]));
        assert_eq!(
            dims(quote!(#[cuda_device::block_dims(4, 4, 4)])),
            Some([4, 4, 4])
        );
        // Named constants are left to the driver; no attribute, no check.
        assert_eq!(dims(quote!(#[block_dims(ROWS, 8)])), None);
        assert_eq!(dims(quote!()), None);
        let launcher = expansion(quote!(
            mod kernels {
                #[kernel]
                #[block_dims(32, 8)]
                pub fn tiled(a: &[f32]) {}
            }
        ));
        assert!(
            launcher.contains("require_block_dims (\"tiled\" , & cfg , (32u32 , 8u32 , 1u32))"),
            "{launcher}"
        );
    }

    #[test]
    fn generates_load_and_typed_launchers() {
        let out = expansion(quote!(
            mod kernels {
                use cuda_device::{DisjointSlice, kernel};
                #[kernel]
                pub fn vecadd(a: &[f32], b: &[f32], mut c: DisjointSlice<f32>) {}
                #[kernel]
                pub fn scale(data: &mut [u32], factor: u32, p: Params) {}
                pub fn helper() {}
            }
        ));
        assert!(
            out.contains("# [kernel] pub fn vecadd"),
            "module kept: {out}"
        );
        assert!(out.contains("pub fn load"), "{out}");
        assert!(out.contains("pub struct Module"), "{out}");
        assert!(
            out.contains(
                "pub fn vecadd (& self , stream : & :: cuda_host :: CudaStream , cfg : :: \
                 cuda_host :: LaunchConfig , a : & impl :: cuda_host :: DeviceSliceArg < f32 > , \
                 b : & impl :: cuda_host :: DeviceSliceArg < f32 > , c : & mut impl :: \
                 cuda_host :: DeviceSliceMutArg < f32 > ,)"
            ),
            "{out}"
        );
        assert!(
            out.contains(
                "data : & mut impl :: cuda_host :: DeviceSliceMutArg < u32 > , factor : u32 , p \
                 : Params ,"
            ),
            "{out}"
        );
        assert!(
            out.contains("__cuda_oxide_args . arg (:: cuda_host :: ByValue (p))"),
            "{out}"
        );
        assert!(out.contains("module . kernel (\"scale\")"), "{out}");
        assert!(!out.contains("fn helper (& self"), "{out}");
        assert!(!out.contains("unsafe fn"), "{out}");
    }

    #[test]
    fn refers_to_the_crate_ptx_symbols() {
        let out = expansion(quote!(
            mod k {
                #[cuda_device::kernel]
                fn one(x: u32) {}
            }
        ));
        let tag = reserved_oxide_symbols::crate_tag(&crate::signature::crate_name());
        assert!(
            out.contains(&format!("\"{}\"", reserved_oxide_symbols::ptx_symbol(&tag))),
            "{out}"
        );
        assert!(
            out.contains(&format!(
                "\"{}\"",
                reserved_oxide_symbols::ptx_len_symbol(&tag)
            )),
            "{out}"
        );
        // A private kernel's launcher is still callable from the parent module.
        assert!(out.contains("pub (super) fn one"), "{out}");
    }

    #[test]
    fn slices_of_atomics_take_mutable_buffers_of_the_plain_type() {
        let out = expansion(quote!(
            mod k {
                #[kernel]
                pub fn count(
                    x: &[u32],
                    bins: &[DeviceAtomicU32],
                    flags: &[core::sync::atomic::AtomicBool],
                    mine: &[MyAtomicU32],
                ) {
                }
            }
        ));
        assert!(
            out.contains("x : & impl :: cuda_host :: DeviceSliceArg < u32 >"),
            "{out}"
        );
        assert!(
            out.contains(
                "bins : & mut impl :: cuda_host :: DeviceSliceMutArg < < DeviceAtomicU32 as :: cuda_host :: \
                 AtomicElement > :: Plain >"
            ),
            "{out}"
        );
        assert!(
            out.contains(
                "flags : & mut impl :: cuda_host :: DeviceSliceMutArg < < core :: sync :: atomic :: \
                 AtomicBool as :: cuda_host :: AtomicElement > :: Plain >"
            ),
            "{out}"
        );
        // Only the atomic types it knows: anything else is an ordinary buffer.
        assert!(
            out.contains("mine : & impl :: cuda_host :: DeviceSliceArg < MyAtomicU32 >"),
            "{out}"
        );
    }

    #[test]
    fn raw_pointers_make_the_launcher_unsafe() {
        let out = expansion(quote!(
            mod k {
                #[kernel]
                pub fn raw(p: *mut f32, n: usize) {}
            }
        ));
        assert!(out.contains("pub unsafe fn raw"), "{out}");
        assert!(out.contains("p : * mut f32"), "{out}");
    }

    #[test]
    fn unsafe_kernels_cfgs_and_docs_carry_over() {
        let out = expansion(quote!(
            mod k {
                /// Adds one.
                #[kernel]
                #[cfg(feature = "extra")]
                pub unsafe fn extra(x: u32) {}
            }
        ));
        assert!(out.contains("pub unsafe fn extra"), "{out}");
        assert!(out.contains("# [doc = r\" Adds one.\"]"), "{out}");
        assert_eq!(
            out.matches("# [cfg (feature = \"extra\")]").count(),
            4,
            "{out}"
        );
    }

    #[test]
    fn clashing_parameter_names_are_renamed() {
        let out = expansion(quote!(
            mod k {
                #[kernel]
                pub fn odd(stream: u32, cfg: f32, (a, b): (u8, u8)) {}
            }
        ));
        assert!(
            out.contains("stream_arg : u32 , cfg_arg : f32 , arg2 : (u8 , u8) ,"),
            "{out}"
        );
    }

    #[test]
    fn shared_references_are_grid_constants() {
        let out = expansion(quote!(
            mod k {
                #[kernel]
                pub fn copy(map: &TensorMap, out: &mut [u32]) {}
            }
        ));
        assert!(out.contains("map : & TensorMap"), "{out}");
        assert!(out.contains("GridConstant (map)"), "{out}");
    }

    fn error(item: proc_macro2::TokenStream) -> String {
        expand(quote!(), item).unwrap_err().to_string()
    }

    #[test]
    fn misuse_is_explained() {
        assert!(
            error(quote!(
                mod k;
            ))
            .contains("inline")
        );
        assert!(
            error(quote!(
                fn f() {}
            ))
            .contains("applies to a module")
        );
        assert!(
            error(quote!(
                mod k {
                    fn f() {}
                }
            ))
            .contains("found no #[kernel]")
        );
        assert!(
            error(quote!(
                mod k {
                    #[kernel]
                    fn f(x: &mut u32) {}
                }
            ))
            .contains("must be a slice")
        );
        assert!(
            error(quote!(
                mod k {
                    #[kernel]
                    fn f(x: &dyn Tr) {}
                }
            ))
            .contains("cannot be launched")
        );
        assert!(
            error(quote!(
                mod k {
                    #[kernel]
                    fn f(x: u32) {}
                    fn load() {}
                }
            ))
            .contains("rename this `load`")
        );
        let kernel_called_load = quote!(
            mod k {
                #[kernel]
                fn load(x: u32) {}
            }
        );
        assert!(expand(quote!(), kernel_called_load).is_ok());
        assert!(
            expand(
                quote!(x),
                quote!(
                    mod k {}
                )
            )
            .unwrap_err()
            .to_string()
            .contains("takes no arguments")
        );
    }

    #[test]
    fn a_generic_kernel_gets_a_generic_launcher_that_finds_its_instantiation() {
        let out = expansion(quote!(
            mod kernels {
                #[kernel]
                pub fn axpy<T: Copy, const N: usize>(a: T, x: &[T], y: DisjointSlice<T>) {}
                #[kernel]
                pub fn plain(x: &[f32]) {}
            }
        ));
        // The launcher has the kernel's parameters, and what passing them needs.
        assert!(
            out.contains("pub fn axpy < T : Copy , const N : usize > (& self"),
            "{out}"
        );
        assert!(out.contains("T : 'static"), "{out}");
        assert!(out.contains("T : :: cuda_host :: DeviceValue"), "{out}");
        // Its instantiation is a codegen root, found by its function item.
        let reserved = reserved_oxide_symbols::reserved_name(
            reserved_oxide_symbols::ReservedKind::Kernel,
            &reserved_oxide_symbols::crate_tag(&crate::signature::crate_name()),
            "axpy",
        );
        assert!(out.contains(&format!("{reserved} :: < T , N >")), "{out}");
        assert!(
            out.contains("black_box (instance as fn (_ , _ , _))"),
            "{out}"
        );
        assert!(
            out.contains("__generic_kernels . get (instance , \"axpy\")"),
            "{out}"
        );
        // Only the concrete kernel is looked up when the module loads.
        assert!(out.contains("plain : module . kernel (\"plain\")"), "{out}");
        assert!(!out.contains("axpy : module . kernel"), "{out}");
    }

    #[test]
    fn cfg_and_cfg_attr_gate_kernels_and_their_errors() {
        let out = expansion(quote!(
            mod kernels {
                #[cfg_attr(feature = "x", kernel)]
                pub fn sometimes(x: &[f32]) {}
                #[cfg(feature = "y")]
                #[kernel]
                pub fn refused(counter: &mut u32) {}
                #[kernel]
                pub fn always(x: &[f32]) {}
            }
        ));
        assert!(
            out.contains("# [cfg (feature = \"x\")] sometimes : module . kernel"),
            "{out}"
        );
        assert!(
            out.contains("# [cfg (feature = \"y\")] :: core :: compile_error !"),
            "{out}"
        );
        assert!(!out.contains("fn refused (& self"), "{out}");
        // Without a `cfg`, the same kernel is refused outright.
        let err = expand(
            quote!(),
            quote!(
                mod kernels {
                    #[kernel]
                    pub fn refused(counter: &mut u32) {}
                }
            ),
        )
        .unwrap_err();
        assert!(err.to_string().contains("must be a slice"), "{err}");
    }
}
