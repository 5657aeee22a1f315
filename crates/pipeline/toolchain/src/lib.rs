//! The outside tools the device pipeline runs, found once for everyone: the backend, `cargo
//! oxide doctor` and the scripts (through `cargo oxide doctor --which`).
//!
//! - [`llvm`]: `llc`, and `opt` and `llvm-link` beside it (LLVM 21 or newer, with NVPTX);
//! - [`nvidia`]: `ptxas` and libdevice, from a CUDA installation or PyPI's wheel;
//! - [`process`]: running a tool, with its failure as a [`ToolError`], and temporary folders.
//!
//! No dependency on pliron or rustc: `cargo oxide doctor` links this crate.

mod error;
pub mod llvm;
pub mod nvidia;
pub mod process;

pub use error::ToolError;
pub use llvm::{LlvmTools, LlvmVersion, MIN_LLVM_MAJOR, find_llvm_tools, probe_llc};
pub use nvidia::{LIBDEVICE_FILE, PIP_REQUIREMENT, find_libdevice, find_ptxas};
pub use process::{TempDir, run};
