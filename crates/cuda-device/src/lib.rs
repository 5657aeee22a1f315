//! The device-side API of cuda-oxide.
//!
//! Code in a `#[kernel]` (and everything it calls) runs on the GPU. This crate gives it the
//! GPU's view of the world: which thread am I ([`thread`]), wait for my block ([`sync`]),
//! talk to my warp ([`warp`]), and write my own element of an output ([`DisjointSlice`]).
//!
//! Functions documented as *intrinsics* have no Rust body that does anything: the cuda-oxide
//! compiler replaces every call to them by the GPU instruction they name. Called from ordinary
//! host code they panic with a message saying so, rather than returning a made-up value.
//!
//! The crate is `no_std`: device code may use `core`, not `std`.

#![no_std]

#[doc(hidden)]
pub mod core_shims;
mod disjoint_slice;
mod intrinsic;
pub mod sync;
pub mod thread;
pub mod warp;

pub use cuda_macros::{device, kernel};
pub use disjoint_slice::DisjointSlice;
pub use thread::ThreadIndex;
