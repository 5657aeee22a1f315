//! What the device code is lowered for: the GPU, or the CPU device (`docs/cpu.md`).
//!
//! The CPU flavour is the same module with every GPU operation of the intrinsic table (and
//! the trap) a call of a runtime function named [CPU_RUNTIME_PREFIX] and the table row's name,
//! atomics as plain LLVM atomics, and no inline PTX; the exporter turns those calls into calls
//! through slots the CPU runtime fills when it loads the module.

pub use nvptx_attrs::CPU_RUNTIME_PREFIX;

/// The machine the lowered module is for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Flavour {
    /// PTX for an NVIDIA GPU: `llvm.nvvm.*` intrinsics, inline PTX, address spaces.
    #[default]
    Gpu,
    /// The host's instruction set, run by the CPU device's runtime.
    Cpu,
}

impl Flavour {
    /// The name of the runtime function that stands for the GPU operation `name` on the CPU.
    pub fn runtime_function(name: &str) -> String {
        format!("{CPU_RUNTIME_PREFIX}{name}")
    }
}
