//! The `nvvm` dialect (see docs/device-ir.md).
