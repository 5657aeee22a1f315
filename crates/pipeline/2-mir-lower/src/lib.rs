//! Lowering of `dialect-mir` and `dialect-nvvm` to pliron's LLVM dialect (see
//! `docs/device-ir.md`), and the kernel entry ABI.
//!
//! * [lower_mir_to_llvm]: the whole-module lowering;
//! * [globals]: `mir.global`s as `llvm.global`s, pointers inside them included;
//! * [flavour]: GPU code, or the CPU flavour whose GPU operations call a runtime;
//! * [abi]: the kernel entry parameters, from [kernel_abi::slots];
//! * [types]: `mir` types as LLVM types, with rustc's layouts;
//! * [convert]: the per-op conversions, an op interface implemented for every `mir` and `nvvm`
//!   op, grouped by family;
//! * [error]: [LoweringError], naming the function and op that failed.

pub mod abi;
pub mod convert;
pub mod error;
pub mod flavour;
pub mod globals;
pub mod lowering;
pub mod types;

pub use abi::kernel_param_kind;
pub use error::{LoweringError, OpError};
pub use flavour::{CPU_RUNTIME_PREFIX, Flavour};
pub use lowering::{lower_mir_to_llvm, lower_mir_to_llvm_for};
