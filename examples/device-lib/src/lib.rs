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
