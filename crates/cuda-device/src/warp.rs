//! Operations within a warp (32 threads that execute together).
//!
//! Shuffles, votes, matches and reductions work over the full warp (member mask
//! `0xffffffff`): every lane of the warp must take part, as with CUDA C++'s `__*_sync`
//! functions called with that mask. Their `*_sync(mask, ...)` forms take a member mask, as
//! CUDA C++'s do: every lane named in `mask` must reach the same call with the same mask
//! (the lanes outside it may be elsewhere, on another branch), and a shuffle must read from a
//! lane of `mask`. The shuffles move 32-bit words; other types go through
//! [`WarpValue`]. Functions marked with an architecture need that `sm_` or newer: building for
//! an older one is an error at the call.

use crate::intrinsic::stubs;

/// Lanes per warp on every NVIDIA GPU so far.
pub const WARP_SIZE: u32 = 32;

stubs! { "warp";
    /// This thread's lane within its warp, `0..32` (PTX `%laneid`). Intrinsic.
    pub fn lane_id() -> u32;
    /// `1 << lane_id()` (PTX `%lanemask_eq`). Intrinsic.
    pub fn lanemask_eq() -> u32;
    /// The bits of the lanes below this one (PTX `%lanemask_lt`). Intrinsic.
    pub fn lanemask_lt() -> u32;
    /// The bits of this lane and the lanes below it (PTX `%lanemask_le`). Intrinsic.
    pub fn lanemask_le() -> u32;
    /// The bits of the lanes above this one (PTX `%lanemask_gt`). Intrinsic.
    pub fn lanemask_gt() -> u32;
    /// The bits of this lane and the lanes above it (PTX `%lanemask_ge`). Intrinsic.
    pub fn lanemask_ge() -> u32;
    /// The lanes of the warp that execute this call together, bit `i` for lane `i`
    /// (`__activemask()`, PTX `activemask.b32`). Unlike the functions below, it may be called
    /// by part of a warp. Intrinsic.
    pub fn active_mask() -> u32;
    /// Waits until every lane of the warp has reached this call, and orders their memory
    /// accesses among them (`__syncwarp()`, PTX `bar.warp.sync 0xffffffff`). Intrinsic.
    pub fn sync();
    /// Reads `value` from lane `src_lane` (PTX `shfl.sync.idx.b32`). Intrinsic.
    pub fn shuffle_b32(value: u32, src_lane: u32) -> u32;
    /// Reads `value` from lane `lane_id ^ lane_mask` (PTX `shfl.sync.bfly.b32`). Intrinsic.
    pub fn shuffle_xor_b32(value: u32, lane_mask: u32) -> u32;
    /// Reads `value` from lane `lane_id + delta`, or keeps its own past the warp's end
    /// (PTX `shfl.sync.down.b32`). Intrinsic.
    pub fn shuffle_down_b32(value: u32, delta: u32) -> u32;
    /// Reads `value` from lane `lane_id - delta`, or keeps its own before lane 0
    /// (PTX `shfl.sync.up.b32`). Intrinsic.
    pub fn shuffle_up_b32(value: u32, delta: u32) -> u32;
    /// Whether `pred` is `true` in every lane (`__all_sync(0xffffffff, pred)`). Intrinsic.
    pub fn all(pred: bool) -> bool;
    /// Whether `pred` is `true` in some lane (`__any_sync(0xffffffff, pred)`). Intrinsic.
    pub fn any(pred: bool) -> bool;
    /// Whether `pred` is the same in every lane (`__uni_sync(0xffffffff, pred)`). Intrinsic.
    pub fn uni(pred: bool) -> bool;
    /// The lanes whose `pred` is `true`, bit `i` for lane `i` (`__ballot_sync(0xffffffff,
    /// pred)`). Intrinsic.
    pub fn ballot(pred: bool) -> u32;
    /// The lanes whose `value` equals this lane's, bit `i` for lane `i`
    /// (`__match_any_sync(0xffffffff, value)`; sm_70). Intrinsic.
    pub fn match_any(value: u32) -> u32;
    /// [`match_any`] of a 64-bit value (sm_70). Intrinsic.
    pub fn match_any_u64(value: u64) -> u32;
    /// Whether every lane holds the same `value` (the predicate of
    /// `__match_all_sync(0xffffffff, value, &pred)`; sm_70). Intrinsic.
    pub fn match_all(value: u32) -> bool;
    /// [`match_all`] of a 64-bit value (sm_70). Intrinsic.
    pub fn match_all_u64(value: u64) -> bool;
    /// The sum of `value` over the warp, wrapping (`__reduce_add_sync(0xffffffff, value)`,
    /// PTX `redux.sync.add.u32`; sm_80). Intrinsic.
    pub fn reduce_add(value: u32) -> u32;
    /// The sum of a signed `value` over the warp, wrapping (`redux.sync.add.s32`; sm_80).
    /// Intrinsic.
    pub fn reduce_add_i32(value: i32) -> i32;
    /// The smallest `value` of the warp (`__reduce_min_sync`, `redux.sync.min.u32`; sm_80).
    /// Intrinsic.
    pub fn reduce_min(value: u32) -> u32;
    /// The largest `value` of the warp (`__reduce_max_sync`, `redux.sync.max.u32`; sm_80).
    /// Intrinsic.
    pub fn reduce_max(value: u32) -> u32;
    /// The smallest signed `value` of the warp (`redux.sync.min.s32`; sm_80). Intrinsic.
    pub fn reduce_min_i32(value: i32) -> i32;
    /// The largest signed `value` of the warp (`redux.sync.max.s32`; sm_80). Intrinsic.
    pub fn reduce_max_i32(value: i32) -> i32;
    /// The bitwise and of `value` over the warp (`__reduce_and_sync`; sm_80). Intrinsic.
    pub fn reduce_and(value: u32) -> u32;
    /// The bitwise or of `value` over the warp (`__reduce_or_sync`; sm_80). Intrinsic.
    pub fn reduce_or(value: u32) -> u32;
    /// The bitwise exclusive or of `value` over the warp (`__reduce_xor_sync`; sm_80).
    /// Intrinsic.
    pub fn reduce_xor(value: u32) -> u32;
    /// `true` in exactly one lane of the warp, the same in every lane (PTX `elect.sync`;
    /// sm_90). Intrinsic.
    pub fn elect_one() -> bool;
}

stubs! { "warp";
    /// Waits until every lane of `mask` has reached this call, and orders their memory
    /// accesses among them (`__syncwarp(mask)`, PTX `bar.warp.sync`). Intrinsic.
    pub fn sync_mask(mask: u32);
    /// Reads `value` from lane `src_lane` (`__shfl_sync(mask, value, src_lane)`). Intrinsic.
    pub fn shuffle_b32_sync(mask: u32, value: u32, src_lane: u32) -> u32;
    /// Reads `value` from lane `lane_id ^ lane_mask` (`__shfl_xor_sync(mask, ...)`). Intrinsic.
    pub fn shuffle_xor_b32_sync(mask: u32, value: u32, lane_mask: u32) -> u32;
    /// Reads `value` from lane `lane_id + delta` (`__shfl_down_sync(mask, ...)`). Intrinsic.
    pub fn shuffle_down_b32_sync(mask: u32, value: u32, delta: u32) -> u32;
    /// Reads `value` from lane `lane_id - delta` (`__shfl_up_sync(mask, ...)`). Intrinsic.
    pub fn shuffle_up_b32_sync(mask: u32, value: u32, delta: u32) -> u32;
    /// Whether `pred` is `true` in every lane of `mask` (`__all_sync(mask, pred)`). Intrinsic.
    pub fn all_sync(mask: u32, pred: bool) -> bool;
    /// Whether `pred` is `true` in some lane of `mask` (`__any_sync(mask, pred)`). Intrinsic.
    pub fn any_sync(mask: u32, pred: bool) -> bool;
    /// Whether `pred` is the same in every lane of `mask` (`__uni_sync(mask, pred)`).
    /// Intrinsic.
    pub fn uni_sync(mask: u32, pred: bool) -> bool;
    /// The lanes of `mask` whose `pred` is `true` (`__ballot_sync(mask, pred)`). Intrinsic.
    pub fn ballot_sync(mask: u32, pred: bool) -> u32;
    /// The lanes of `mask` whose `value` equals this lane's (`__match_any_sync(mask,
    /// value)`; sm_70). Intrinsic.
    pub fn match_any_sync(mask: u32, value: u32) -> u32;
    /// [`match_any_sync`] of a 64-bit value (sm_70). Intrinsic.
    pub fn match_any_u64_sync(mask: u32, value: u64) -> u32;
    /// Whether every lane of `mask` holds the same `value` (sm_70). Intrinsic.
    pub fn match_all_sync(mask: u32, value: u32) -> bool;
    /// [`match_all_sync`] of a 64-bit value (sm_70). Intrinsic.
    pub fn match_all_u64_sync(mask: u32, value: u64) -> bool;
    /// The wrapping sum of `value` over the lanes of `mask` (`__reduce_add_sync(mask,
    /// value)`; sm_80). Intrinsic.
    pub fn reduce_add_sync(mask: u32, value: u32) -> u32;
    /// The wrapping sum of a signed `value` over the lanes of `mask` (sm_80). Intrinsic.
    pub fn reduce_add_i32_sync(mask: u32, value: i32) -> i32;
    /// The smallest `value` of the lanes of `mask` (sm_80). Intrinsic.
    pub fn reduce_min_sync(mask: u32, value: u32) -> u32;
    /// The largest `value` of the lanes of `mask` (sm_80). Intrinsic.
    pub fn reduce_max_sync(mask: u32, value: u32) -> u32;
    /// The smallest signed `value` of the lanes of `mask` (sm_80). Intrinsic.
    pub fn reduce_min_i32_sync(mask: u32, value: i32) -> i32;
    /// The largest signed `value` of the lanes of `mask` (sm_80). Intrinsic.
    pub fn reduce_max_i32_sync(mask: u32, value: i32) -> i32;
    /// The bitwise and of `value` over the lanes of `mask` (sm_80). Intrinsic.
    pub fn reduce_and_sync(mask: u32, value: u32) -> u32;
    /// The bitwise or of `value` over the lanes of `mask` (sm_80). Intrinsic.
    pub fn reduce_or_sync(mask: u32, value: u32) -> u32;
    /// The bitwise exclusive or of `value` over the lanes of `mask` (sm_80). Intrinsic.
    pub fn reduce_xor_sync(mask: u32, value: u32) -> u32;
    /// `true` in exactly one lane of `mask`, the same one in each of them (PTX `elect.sync`;
    /// sm_90). Intrinsic.
    pub fn elect_one_sync(mask: u32) -> bool;
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

/// Reads `value` from lane `src_lane`; only the lanes of `mask` take part
/// (`__shfl_sync(mask, value, src_lane)`).
#[inline]
pub fn shuffle_sync<T: WarpValue>(mask: u32, value: T, src_lane: u32) -> T {
    value.shuffle_with(|w| shuffle_b32_sync(mask, w, src_lane))
}

/// Reads `value` from lane `lane_id ^ lane_mask`; only the lanes of `mask` take part.
#[inline]
pub fn shuffle_xor_sync<T: WarpValue>(mask: u32, value: T, lane_mask: u32) -> T {
    value.shuffle_with(|w| shuffle_xor_b32_sync(mask, w, lane_mask))
}

/// Reads `value` from lane `lane_id + delta`; only the lanes of `mask` take part.
#[inline]
pub fn shuffle_down_sync<T: WarpValue>(mask: u32, value: T, delta: u32) -> T {
    value.shuffle_with(|w| shuffle_down_b32_sync(mask, w, delta))
}

/// Reads `value` from lane `lane_id - delta`; only the lanes of `mask` take part.
#[inline]
pub fn shuffle_up_sync<T: WarpValue>(mask: u32, value: T, delta: u32) -> T {
    value.shuffle_with(|w| shuffle_up_b32_sync(mask, w, delta))
}
