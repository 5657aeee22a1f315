//! Lowering to the LLVM dialect (see docs/device-ir.md).
