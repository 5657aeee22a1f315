//! Attribute macros that mark functions for the GPU.
//!
//! Both macros rename the function into a namespace reserved by `reserved-oxide-symbols`; that
//! name is how the codegen backend recognises device code. Nothing else is communicated: the
//! function body is left exactly as written.
//!
//! - `#[kernel]` makes a GPU entry point. The function is exported under its reserved name
//!   (`#[no_mangle]`), which makes it a codegen root even in an optimised library crate, and
//!   its user-written name becomes the name of the PTX entry.
//! - `#[device]` marks a helper meant to be called from device code of other crates. Helpers in
//!   the kernel's own crate do not need it. The original name stays usable through an alias.
//! - `#[launch_bounds(MAX_THREADS, MIN_BLOCKS)]` on a kernel becomes PTX `.maxntid` and
//!   `.minnctapersm`, through a marker call the backend reads.
//! - `#[cluster_dims(X, Y, Z)]` on a kernel becomes PTX `.explicitcluster` and
//!   `.reqnctapercluster`, `#[block_dims(X, Y, Z)]` PTX `.reqntid`, the same way.
//! - `gpu_printf!` prints from device code through CUDA's `vprintf`, with Rust format strings
//!   translated to C ones at compile time.
//! - `#[cuda_module]` (used through `cuda_host::cuda_module`) reads the kernels of a module and
//!   generates the host side: `load` for the embedded PTX and a typed launcher per kernel.

mod cuda_module;
mod device;
mod host_memory;
mod kernel;
mod launch_bounds;
mod launch_shape;
mod printf;
mod signature;

use proc_macro::TokenStream;

/// Marks a function as a GPU kernel (a `.entry` in the generated PTX).
///
/// A kernel is a free function that returns `()`; it is neither `async`, `const`, `extern`
/// nor variadic, and no parameter owns host memory (`Vec`, `String`, `Box`, ..., or `&str`):
/// the GPU reads device buffers, passed as slices. It may be private, and generic over types
/// and constants (each instantiation launched is its own entry, see `cuda_module`); see
/// `cuda_device` for the API it can use.
#[proc_macro_attribute]
pub fn kernel(attr: TokenStream, item: TokenStream) -> TokenStream {
    kernel::expand(attr.into(), item.into())
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

/// CUDA's `__launch_bounds__` for a `#[kernel]`: `#[launch_bounds(256)]` promises that the
/// kernel is never launched with more than 256 threads per block, `#[launch_bounds(256, 2)]`
/// also asks that two blocks fit on one multiprocessor. They become PTX `.maxntid` and
/// `.minnctapersm`, which let the compiler budget registers; a launch with larger blocks is
/// refused by the launcher with an error.
///
/// ```ignore
/// #[kernel]
/// #[launch_bounds(256)]
/// pub fn scale(x: &mut [f32]) { /* ... */ }
/// ```
///
/// The values are integer literals or constant expressions (`#[launch_bounds(BLOCK)]`).
#[proc_macro_attribute]
pub fn launch_bounds(attr: TokenStream, item: TokenStream) -> TokenStream {
    launch_bounds::expand(attr.into(), item.into())
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

/// CUDA's `__cluster_dims__` for a `#[kernel]` (sm_90 and newer): every launch groups the
/// kernel's blocks into thread-block clusters of `X × Y × Z` blocks, which run at the same time
/// on one GPU processing cluster and share their shared memory (`cuda_device::cluster`). The
/// grid must be a multiple of the cluster shape. It becomes PTX `.explicitcluster` and
/// `.reqnctapercluster X, Y, Z`, so an ordinary launch is a cluster launch.
///
/// ```ignore
/// #[kernel]
/// #[cluster_dims(2, 1, 1)]
/// pub fn pairs(x: &mut [f32]) { /* ... */ }
/// ```
///
/// One to three sides (missing ones are 1), integer literals or constant expressions; at most
/// 8 blocks in all.
#[proc_macro_attribute]
pub fn cluster_dims(attr: TokenStream, item: TokenStream) -> TokenStream {
    launch_shape::expand(&launch_shape::CLUSTER, attr.into(), item.into())
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

/// The exact block shape of every launch of a `#[kernel]`: `X × Y × Z` threads (PTX `.reqntid X,
/// Y, Z`, OpenCL's `reqd_work_group_size`). The compiler then knows that `threadIdx_x() < X`
/// (and so on), which proves bounds checks on thread-indexed shared-memory tiles away, and that
/// a block has `X·Y·Z` threads. A launch with another block shape is refused: by the launcher
/// with an error naming the kernel, and by the driver.
///
/// ```ignore
/// #[kernel]
/// #[block_dims(32, 8)]
/// pub fn transpose(input: &[f32], out: &mut [f32]) { /* ... */ }
/// ```
///
/// One to three sides (missing ones are 1), integer literals or constant expressions; at most
/// 1,024 threads in all, and `Z` at most 64.
#[proc_macro_attribute]
pub fn block_dims(attr: TokenStream, item: TokenStream) -> TokenStream {
    launch_shape::expand(&launch_shape::BLOCK, attr.into(), item.into())
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

/// Prints from device code, like `print!`, through CUDA's `vprintf`: the host sees the text at
/// its next synchronisation with the GPU.
///
/// ```ignore
/// gpu_printf!("thread {} of block {}: x = {:.3}\n", t, b, x);
/// ```
///
/// The format string is Rust's: `{}`, `{:?}`, `{:x}`, `{:X}`, `{:#x}`, `{:o}`, `{:e}`, `{:E}`,
/// `{:p}`, widths (`{:8}`, `{:<8}`, `{:>8}`, `{:08}`), `{:+}`, precisions for floats and
/// strings (`{:.3}`), positions (`{0}`), captured variables (`{x}`), `{{` and `}}`. Arguments
/// are integers, `f32`/`f64`, `bool`, raw pointers (`{:p}`) and string literals. `{}` of a
/// float prints C's `%g` (six significant digits); give a precision for fixed decimals. Each
/// call prints atomically: lines of different threads do not mix. Misuse (a bad format
/// string, a missing or unused argument, `{:x}` of a float, a non-literal `&str`) is a
/// compile error.
#[proc_macro]
pub fn gpu_printf(input: TokenStream) -> TokenStream {
    printf::expand(input.into())
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

/// Marks a function as device code that other crates' kernels may call.
///
/// The function keeps its name for callers (through an alias) and can be generic.
#[proc_macro_attribute]
pub fn device(attr: TokenStream, item: TokenStream) -> TokenStream {
    device::expand(attr.into(), item.into())
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

/// Generates the host side of the `#[kernel]`s in a module: `load(&ctx)` returns a `Module`
/// with one type-checked launch method per kernel. Use it as `cuda_host::cuda_module`; the
/// generated code refers to the `cuda_host` crate.
///
/// ```ignore
/// #[cuda_module]
/// mod kernels {
///     use cuda_device::{kernel, DisjointSlice};
///     #[kernel]
///     pub fn vecadd(a: &[f32], b: &[f32], mut c: DisjointSlice<f32>) { /* ... */ }
/// }
/// // kernels::load(&ctx)?.vecadd(&stream, cfg, &a, &b, &mut c)?;
/// ```
#[proc_macro_attribute]
pub fn cuda_module(attr: TokenStream, item: TokenStream) -> TokenStream {
    cuda_module::expand(attr.into(), item.into())
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}
