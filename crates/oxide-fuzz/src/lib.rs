//! Random, well-defined Rust programs for differential testing of cuda-oxide.
//!
//! [`generate`] makes, deterministically from a seed, a [`Program`]: a function
//! `run(x: u64) -> u64` built from typed expression trees over every integer width, `bool`,
//! `f32` and `f64`, with tuples, structs with reordered fields, enums with payloads,
//! `Option`/`Result` (and `?`), arrays and slices, bounded loops, `match` with ranges and guards,
//! generic functions, closures and iterator chains. Every operation is defined for every input
//! (wrapping, checked or saturating arithmetic, shifts by amounts masked to the width, no
//! division by a possible zero, no index out of bounds), so the CPU and the GPU must compute the
//! same bits. Floating-point values are observed through [`SUPPORT`]'s `Bits` trait, which
//! maps every NaN to one value (the sign and payload of a NaN are not specified by Rust).
//!
//! The reducer's edits ([`Program::edits`], [`Program::apply`]) replace one subexpression by a
//! literal of its type or by one of its own operands of the same type, and keep the program
//! well-typed; `cargo oxide fuzz reduce` applies them while a failure persists.

mod expr;
mod generate;
mod program;
mod rng;
pub mod rustlantis;
mod ty;

pub use expr::{Expr, Kind};
pub use generate::generate;
pub use program::{Edit, Let, Program, SUPPORT, mentions};
pub use rng::{Rng, splitmix64};
pub use ty::Ty;

/// How many threads run each program (each on its own input).
pub const THREADS: usize = 256;

/// The input of thread `thread` of the program of `seed`: a few fixed edge values, then
/// pseudo-random bits. The GPU runner and the CPU side both compute it with this function.
pub fn input(seed: u64, thread: usize) -> u64 {
    const EDGES: [u64; 8] = [
        0,
        u64::MAX,
        1,
        0x8000_0000_0000_0000,
        0x7fff_ffff_ffff_ffff,
        0x0000_0000_ffff_ffff,
        0x3ff0_0000_0000_0000,
        0x7fc0_0000_7f80_0000,
    ];
    match EDGES.get(thread) {
        Some(&edge) => edge,
        None => splitmix64(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ thread as u64),
    }
}
