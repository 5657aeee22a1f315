//! Passes over the device IR that every build runs: verification in linear time (of any
//! dialect: the pipeline verifies the lowered LLVM dialect with it too) and promotion of the
//! `mir.alloca` slots to SSA values ([mem2reg], through the promotion interfaces the memory
//! ops implement).

pub mod mem2reg;
pub mod verify;
