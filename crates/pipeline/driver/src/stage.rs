//! The stages of the device pipeline, in the order they run, and what each took.

use std::fmt;
use std::time::{Duration, Instant};

/// One stage of the pipeline. The variants are listed in the order [crate::run_pipeline]
/// runs them; a stage that has nothing to do in a build (libdevice when no math calls it,
/// check hoisting at `-O0`, `ptxas` when no cubin is asked for) is skipped and not timed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Stage {
    /// Stable MIR of the collected functions to dialect-mir (`mir-importer`).
    Translate,
    /// The whole module's dialect-mir verified (`dialect_mir::passes::verify`).
    Verify,
    /// `mir.alloca` slots promoted to SSA values (`dialect_mir::passes::mem2reg`).
    Mem2Reg,
    /// dialect-mir to pliron's LLVM dialect, then verified (`mir-lower`).
    Lower,
    /// The LLVM dialect written as LLVM IR text (`llvm-export`).
    Export,
    /// NVIDIA's libdevice linked in, when the math calls it (`llvm_to_ptx::libdevice`).
    LinkLibdevice,
    /// `opt -O3` (`llvm_to_ptx::llvm_codegen`).
    Opt,
    /// Bounds checks hoisted out of loops and runs of checks merged (`llvm_to_ptx::hoist_checks`), then
    /// `opt` again on what changed.
    CheckHoisting,
    /// `llc`: LLVM IR to PTX (`llvm_to_ptx::llvm_codegen`).
    Llc,
    /// The labels `llc` adds for line info and nothing uses, removed
    /// (`ptx_tools::debug_labels`), so that line info does not change the machine code.
    DebugLabels,
    /// Failed checks that guard a global access made to fault at it
    /// (`ptx_tools::faulting_checks`).
    FaultingChecks,
    /// Block-size reads of kernels with `.reqntid` made constants
    /// (`ptx_tools::declared_block_dims`).
    DeclaredBlockDims,
    /// Loop latches that branch back on their condition instead of jumping back after a
    /// conditional exit (`ptx_tools::back_edges`).
    BackEdges,
    /// 16-bit negations and absolute values computed in 32 bits, which the CUDA 13.0 JIT
    /// gets wrong at -32768 (`ptx_tools::wide_negation`).
    WideNegation,
    /// The PTX assembled into a cubin (`ptxas`).
    Ptxas,
    /// The CPU device's flavour of the same functions: translated and lowered again for the
    /// host (`mir_lower::Flavour::Cpu`), exported with its image table
    /// (`llvm_export::cpu_image`), `opt` and `llc` to an object (`llvm_to_ptx::cpu_object`).
    CpuFlavour,
}

impl Stage {
    /// Every stage, in pipeline order.
    pub const ALL: [Stage; 16] = [
        Stage::Translate,
        Stage::Verify,
        Stage::Mem2Reg,
        Stage::Lower,
        Stage::Export,
        Stage::LinkLibdevice,
        Stage::Opt,
        Stage::CheckHoisting,
        Stage::Llc,
        Stage::DebugLabels,
        Stage::FaultingChecks,
        Stage::DeclaredBlockDims,
        Stage::BackEdges,
        Stage::WideNegation,
        Stage::Ptxas,
        Stage::CpuFlavour,
    ];

    /// The stage's name in timings (`CUDA_OXIDE_VERBOSE`) and docs.
    pub fn name(self) -> &'static str {
        match self {
            Stage::Translate => "translate",
            Stage::Verify => "verify",
            Stage::Mem2Reg => "mem2reg",
            Stage::Lower => "lower",
            Stage::Export => "export",
            Stage::LinkLibdevice => "link",
            Stage::Opt => "opt",
            Stage::CheckHoisting => "check-hoisting",
            Stage::Llc => "llc",
            Stage::DebugLabels => "debug-labels",
            Stage::FaultingChecks => "faulting-checks",
            Stage::DeclaredBlockDims => "block-dims",
            Stage::BackEdges => "back-edges",
            Stage::WideNegation => "wide-negation",
            Stage::Ptxas => "ptxas",
            Stage::CpuFlavour => "cpu",
        }
    }
}

impl fmt::Display for Stage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

/// How long each stage that ran took, in order.
#[derive(Clone, Debug, Default)]
pub struct Timings(pub Vec<(Stage, Duration)>);

impl Timings {
    /// Runs `work` as `stage`, noting its time.
    pub(crate) fn time<T>(&mut self, stage: Stage, work: impl FnOnce() -> T) -> T {
        let started = Instant::now();
        let result = work();
        self.0.push((stage, started.elapsed()));
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_stage_is_listed_once_with_its_own_name() {
        let names: std::collections::HashSet<_> = Stage::ALL.iter().map(|s| s.name()).collect();
        assert_eq!(names.len(), Stage::ALL.len());
    }
}
