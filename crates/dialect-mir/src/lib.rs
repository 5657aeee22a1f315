//! The `mir` dialect (see docs/device-ir.md).
