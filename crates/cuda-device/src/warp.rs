//! Operations within a warp (32 threads that execute together).
//!
//! The shuffles exchange a 32-bit value between the lanes of a full warp (mask `0xffffffff`);
//! every lane of the warp must take part. Wider or narrower types go through [`WarpValue`].

use crate::intrinsic::host_call;

/// Lanes per warp on every NVIDIA GPU so far.
pub const WARP_SIZE: u32 = 32;

/// This thread's lane within its warp, `0..32` (PTX `%laneid`). Intrinsic.
#[inline(never)]
pub fn lane_id() -> u32 {
    host_call("cuda_device::warp::lane_id")
}

/// Reads `value` from lane `src_lane` (PTX `shfl.sync.idx.b32`). Intrinsic.
#[inline(never)]
pub fn shuffle_b32(value: u32, src_lane: u32) -> u32 {
    let _ = (value, src_lane);
    host_call("cuda_device::warp::shuffle_b32")
}

/// Reads `value` from lane `lane_id ^ lane_mask` (PTX `shfl.sync.bfly.b32`). Intrinsic.
#[inline(never)]
pub fn shuffle_xor_b32(value: u32, lane_mask: u32) -> u32 {
    let _ = (value, lane_mask);
    host_call("cuda_device::warp::shuffle_xor_b32")
}

/// Reads `value` from lane `lane_id + delta`, or keeps its own past the warp's end
/// (PTX `shfl.sync.down.b32`). Intrinsic.
#[inline(never)]
pub fn shuffle_down_b32(value: u32, delta: u32) -> u32 {
    let _ = (value, delta);
    host_call("cuda_device::warp::shuffle_down_b32")
}

/// Reads `value` from lane `lane_id - delta`, or keeps its own before lane 0
/// (PTX `shfl.sync.up.b32`). Intrinsic.
#[inline(never)]
pub fn shuffle_up_b32(value: u32, delta: u32) -> u32 {
    let _ = (value, delta);
    host_call("cuda_device::warp::shuffle_up_b32")
}

/// A value that can travel through a warp shuffle as 32-bit words.
pub trait WarpValue: Copy {
    /// Moves `self` through a shuffle that carries one 32-bit word.
    fn shuffle_with(self, shuffle: impl Fn(u32) -> u32) -> Self;
}

macro_rules! warp_value_32 {
    ($($t:ty => |$v:ident| $to:expr, |$b:ident| $from:expr;)*) => {$(
        impl WarpValue for $t {
            #[inline]
            fn shuffle_with(self, shuffle: impl Fn(u32) -> u32) -> Self {
                let $v = self;
                let $b = shuffle($to);
                $from
            }
        }
    )*};
}

warp_value_32! {
    u32 => |v| v, |b| b;
    i32 => |v| v as u32, |b| b as i32;
    f32 => |v| v.to_bits(), |b| f32::from_bits(b);
}

macro_rules! warp_value_64 {
    ($($t:ty => |$v:ident| $to:expr, |$b:ident| $from:expr;)*) => {$(
        impl WarpValue for $t {
            #[inline]
            fn shuffle_with(self, shuffle: impl Fn(u32) -> u32) -> Self {
                let $v = self;
                let bits: u64 = $to;
                let lo = shuffle(bits as u32) as u64;
                let hi = shuffle((bits >> 32) as u32) as u64;
                let $b = lo | (hi << 32);
                $from
            }
        }
    )*};
}

warp_value_64! {
    u64 => |v| v, |b| b;
    i64 => |v| v as u64, |b| b as i64;
    f64 => |v| v.to_bits(), |b| f64::from_bits(b);
}

/// Reads `value` from lane `src_lane`.
#[inline]
pub fn shuffle<T: WarpValue>(value: T, src_lane: u32) -> T {
    value.shuffle_with(|w| shuffle_b32(w, src_lane))
}

/// Reads `value` from lane `lane_id ^ lane_mask` (a butterfly exchange, as in reductions).
#[inline]
pub fn shuffle_xor<T: WarpValue>(value: T, lane_mask: u32) -> T {
    value.shuffle_with(|w| shuffle_xor_b32(w, lane_mask))
}

/// Reads `value` from lane `lane_id + delta` (lanes past the end keep their own value).
#[inline]
pub fn shuffle_down<T: WarpValue>(value: T, delta: u32) -> T {
    value.shuffle_with(|w| shuffle_down_b32(w, delta))
}

/// Reads `value` from lane `lane_id - delta` (lanes before 0 keep their own value).
#[inline]
pub fn shuffle_up<T: WarpValue>(value: T, delta: u32) -> T {
    value.shuffle_with(|w| shuffle_up_b32(w, delta))
}
