//! Textual LLVM IR and PTX (see docs/device-ir.md).
