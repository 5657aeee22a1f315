//! The device pipeline's first stage: Stable MIR to dialect-mir.
//!
//! [`import_module`] takes the functions the codegen backend collected, as `rustc_public`
//! instances, and translates them ([`translator`], one file per MIR concept) into one
//! `builtin.module` of dialect-mir; the stages after it are `device-pipeline`'s to run.
//! [`rules`] answers the collector's questions about functions (which are intrinsics, which
//! are replaced or checked), so that it need not read the translator. [`naming`] decides the symbol of every device function, for definitions
//! and call sites alike; [`intrinsics`] lists the `cuda_device` functions that become GPU
//! instructions instead of calls, [`shims`] the functions replaced by device versions
//! (functions `core` ships without MIR, CPU-specific paths of crates).

#![feature(rustc_private)]

// Links the compiler's crates (which `rustc_public` uses) from rustc's own dylib.
extern crate rustc_driver;
extern crate rustc_hir;
extern crate rustc_middle;
extern crate rustc_public;
extern crate rustc_public_bridge;
extern crate rustc_span;

mod import;
pub mod intrinsics;
pub mod naming;
pub mod rules;
pub mod shims;
pub mod translator;
pub mod ub_checks;

pub use import::{CollectedFunction, ImportError, ImportOptions, import_module};
