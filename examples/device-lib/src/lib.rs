//! Device helpers in a crate of their own: kernels in other crates call them.

#![no_std]

use cuda_device::device;

/// `a * x + y`, a `#[device]` helper for other crates.
#[device]
pub fn axpy(a: f32, x: f32, y: f32) -> f32 {
    a * x + y
}

/// The larger of two values: a generic helper, instantiated by its users.
pub fn larger<T: PartialOrd + Copy>(a: T, b: T) -> T {
    if a > b { a } else { b }
}

/// A point with a weight, passed around by value.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Weighted {
    pub weight: u8,
    pub x: f32,
    pub y: f32,
}

impl Weighted {
    /// The weighted squared distance from the origin.
    pub fn weighted_norm2(self) -> f32 {
        (self.x * self.x + self.y * self.y) * self.weight as f32
    }
}

/// Values combined associatively from an identity: a trait of this crate, with its impls here,
/// that kernels of other crates are generic over (`examples/generics`).
pub trait Monoid {
    /// What is combined.
    type Value: Copy;
    /// `combine(IDENTITY, v) == v`.
    const IDENTITY: Self::Value;
    /// The associative operation.
    fn combine(a: Self::Value, b: Self::Value) -> Self::Value;
}

/// `u64` addition, wrapping.
pub struct WrappingSum;

impl Monoid for WrappingSum {
    type Value = u64;
    const IDENTITY: u64 = 0;
    fn combine(a: u64, b: u64) -> u64 {
        a.wrapping_add(b)
    }
}

/// The largest `f32`.
pub struct Largest;

impl Monoid for Largest {
    type Value = f32;
    const IDENTITY: f32 = f32::NEG_INFINITY;
    fn combine(a: f32, b: f32) -> f32 {
        larger(a, b)
    }
}
