//! The device pipeline's driver: the stages from the functions the codegen backend collected
//! to PTX and a cubin, listed once ([`Stage::ALL`]) and run in that order by
//! [`run_pipeline`], with the build's configuration ([`PipelineConfig`]), each stage's time
//! and the files the build leaves ([`output`]).
//!
//! | stage | crate | from → to |
//! |---|---|---|
//! | translate | `mir-importer` | Stable MIR → dialect-mir |
//! | verify, mem2reg | `dialect-mir` (`passes`) | dialect-mir → dialect-mir |
//! | lower | `mir-lower` | dialect-mir → LLVM dialect |
//! | export | `llvm-export` | LLVM dialect → LLVM IR text |
//! | link | `llvm-to-ptx` (`libdevice`) | + NVIDIA's libdevice, when the math calls it |
//! | opt | `llvm-to-ptx` (`llvm_codegen`) | LLVM IR → LLVM IR |
//! | check-hoisting | `llvm-to-ptx` (`hoist_checks`) | LLVM IR → LLVM IR (then `opt` again) |
//! | llc | `llvm-to-ptx` (`llvm_codegen`) | LLVM IR → PTX |
//! | debug-labels, faulting-checks, block-dims, back-edges, wide-negation | `ptx-tools` | PTX → PTX |
//! | ptxas | `ptx-tools` (`ptxas`) | PTX → cubin |
//! | cpu | all of the above up to export, then `llvm-to-ptx` (`cpu_object`) | Stable MIR → host object |
//!
//! The stage crates sit in `crates/pipeline/` numbered in this order, beside the IR they share
//! (`ir/`) and the finder of the outside tools (`toolchain/`, `gpu-toolchain`). Each stage's
//! crate does one thing and knows nothing of the stages after it; only this crate knows them
//! all.

#![feature(rustc_private)]

// Links the compiler's crates (which `mir-importer` uses) from rustc's own dylib.
extern crate rustc_driver;

mod config;
mod error;
pub mod output;
mod pipeline;
mod stage;

pub use config::{CpuTarget, PipelineConfig};
pub use error::PipelineError;
pub use llvm_export::DeviceDebug;
pub use mir_importer::{CollectedFunction, ImportError};
pub use output::{CpuObject, Cubin, PipelineOutput};
pub use pipeline::run_pipeline;
pub use stage::{Stage, Timings};
