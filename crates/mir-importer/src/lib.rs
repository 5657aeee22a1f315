//! The device pipeline's front half and its stage manager.
//!
//! [`run_pipeline`] takes the functions the codegen backend collected, as `rustc_public`
//! instances, and turns them into one PTX module: [`translator`] (Stable MIR to dialect-mir),
//! verification, `pliron::opts::mem2reg`, lowering (`mir-lower`), export to LLVM IR and `llc`
//! (`llvm-export`). [`naming`] decides the symbol of every device function, for definitions
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

pub mod intrinsics;
pub mod mem2reg;
pub mod naming;
mod pipeline;
pub mod rules;
pub mod shims;
pub mod translator;
pub mod ub_checks;
pub mod verify;

pub use llvm_export::DeviceDebug;
pub use pipeline::{
    CollectedFunction, Cubin, PipelineConfig, PipelineError, PipelineOutput, run_pipeline,
};
