//! Stable MIR to dialect-mir.
//!
//! One module per MIR concept, like rustc_codegen_cranelift: [body] sets up a function (its
//! signature, one slot per non-zero-sized local, one pliron block per reachable MIR block) and
//! walks it; [statement], [rvalue], [place], [operand], [constant] and [terminator] translate
//! what their names say; [global] gives every allocation device code refers to (constants,
//! statics, vtables, shared memory) its module-level global; [trait_object] builds and reads
//! `dyn` pointers and their vtables; [call] handles calls (direct, through function pointers
//! and through vtables), [caller_location] `#[track_caller]` and `Location::caller()` ([track_caller] says which functions take a location), [gpu_intrinsic] the `cuda_device` intrinsic stubs,
//! [core_intrinsic] `core`'s compiler intrinsics (a decision for each), [raw_memory] the memory
//! ones among them, [math] the math ones, [atomic] the atomic ones (and `cuda_device`'s
//! atomic stubs) and [simd] the portable SIMD ones; [x86] the LLVM x86 intrinsics that
//! `core::arch` declares, [inline_asm] the pure x86 `asm!` forms crates use for arithmetic; [fmt_descriptor] what stands for a formatting method's address
//! (panic messages are formatted by the host); [panic] the failure edge of `Assert` and
//! `#[track_caller]` locations ([panic_policy] what it decides without a translator). [types] maps Rust types to dialect-mir types with rustc's layout;
//! [validity] answers whether a type allows a value (for `mem::zeroed`'s check);
//! [launch_bounds] reads a kernel's `#[launch_bounds]`; [arith] makes the dialect-mir op of a
//! MIR binary operation, for every translator that needs one.
//!
//! The output is the "alloca form" of docs/device-ir.md: every local lives in a `mir.alloca`,
//! non-entry blocks take no arguments, and `pliron::opts::mem2reg` builds SSA afterwards.

pub mod arith;
pub mod atomic;
pub mod body;
pub mod call;
pub mod caller_location;
pub mod constant;
pub mod core_intrinsic;
pub mod error;
pub mod external;
pub mod fmt_descriptor;
pub mod global;
pub mod gpu_intrinsic;
pub mod inline_asm;
pub mod launch_bounds;
pub mod math;
pub mod operand;
pub mod panic;
pub mod panic_policy;
pub mod param_access;
pub mod place;
pub mod raw_memory;
pub mod rvalue;
pub mod simd;
pub mod statement;
pub mod terminator;
pub mod track_caller;
pub mod trait_object;
pub mod types;
pub mod validity;
pub mod var_debug_info;
pub mod x86;

pub use body::translate_function;
pub use error::TranslationError;
pub use global::GlobalRegistry;
pub use types::TypeTranslator;
