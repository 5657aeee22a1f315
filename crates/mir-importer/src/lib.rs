//! The device pipeline's front half and its stage manager.
//!
//! [`run_pipeline`] takes the functions the codegen backend collected, as `rustc_public`
//! instances, and turns them into one PTX module. [`naming`] decides the symbol every device
//! function gets, for definitions and call sites alike; [`intrinsics`] lists the `cuda_device`
//! functions that become GPU instructions instead of calls.

#![feature(rustc_private)]

extern crate rustc_public;

pub mod intrinsics;
pub mod naming;
mod pipeline;

pub use pipeline::{
    CollectedFunction, PipelineConfig, PipelineError, PipelineOutput, run_pipeline,
};
