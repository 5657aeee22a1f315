//! Every GPU intrinsic, one declaration each.
//!
//! A declaration reads
//!
//! ```text
//! /// What it does.
//! name: path::of::stub(OperandType, ...) -> ResultType
//!     = lowering, memory Effects, sm MIN_SM, ptx MIN_PTX[, convergent];
//! ```
//!
//! `path::of::stub` is the stub's path inside `cuda_device`; types are [Scalar]s; the lowering
//! is [llvm], [ptx] or [fence]; `Effects` is a [Memory] variant; `MIN_PTX` is the PTX ISA
//! version times ten (`63` for 6.3). Flags: `convergent` (every thread of the warp or block
//! executes it together), `arch_specific` (only the `a` target of exactly `MIN_SM`, e.g.
//! `sm_90a`, has it). Each declaration becomes a `static` of that name, listed
//! in [ALL]. Adding an intrinsic is adding one declaration here and its stub in `cuda_device`:
//! the importer's dispatch, the `nvvm.intrinsic` verifier, the lowering, the target checks and
//! the test that runs every intrinsic through `llc` and `ptxas` all read this table.

#![allow(non_upper_case_globals)]

use std::collections::HashMap;
use std::sync::OnceLock;

use crate::intrinsic::{
    Arg::{I32, Operand},
    FULL_MASK,
    FenceScope::{Block, Device, System},
    Intrinsic, Memory, Scalar, fence, llvm, ptx,
};

/// `true` when the flags of a declaration include `$wanted` (`convergent`, `arch_specific`);
/// an unknown flag is a compile error.
macro_rules! flag {
    ($wanted:ident;) => {
        false
    };
    (convergent; convergent $($rest:ident)*) => {
        true
    };
    (arch_specific; arch_specific $($rest:ident)*) => {
        true
    };
    ($wanted:ident; convergent $($rest:ident)*) => {
        flag!($wanted; $($rest)*)
    };
    ($wanted:ident; arch_specific $($rest:ident)*) => {
        flag!($wanted; $($rest)*)
    };
    ($wanted:ident; $other:ident $($rest:ident)*) => {
        compile_error!(concat!("unknown intrinsic flag `", stringify!($other), "`"))
    };
}

/// The `Option<Scalar>` of a declaration's result.
macro_rules! result {
    () => {
        None
    };
    ($result:ident) => {
        Some(Scalar::$result)
    };
}

/// The inline-PTX lowering of one `wgmma.mma_async` with both operands from shared-memory
/// descriptors: `$0` the accumulator array (tied to operand 1), `$2`/`$3` the descriptors of `A`
/// and `B`, `$4` nonzero to add `D`. `$shape_types` is the instruction's suffix after
/// `aligned.` (`"m64n64k8.f32.tf32.tf32"`). With `k_major`, the transpose operands of the
/// bf16/f16 forms are written as 0, 0 (both K-major); tf32 and fp8 have no transpose operands
/// (K-major is their only layout).
macro_rules! wgmma_mma {
    ($shape_types:literal) => {
        wgmma_mma!(@ $shape_types, "")
    };
    ($shape_types:literal, k_major) => {
        wgmma_mma!(@ $shape_types, ", 0, 0")
    };
    (@ $shape_types:literal, $transpose:literal) => {
        ptx(
            concat!(
                "{ .reg .pred %hp; setp.ne.b32 %hp, $4, 0; wgmma.mma_async.sync.aligned.",
                $shape_types,
                " $0, $2, $3, %hp, 1, 1",
                $transpose,
                "; }"
            ),
            "=f,0,l,l,r",
        )
    };
}

/// Declares intrinsics: see the module documentation for the syntax.
macro_rules! intrinsics {
    ($(
        $(#[doc = $doc:literal])+
        $name:ident: $($path:ident)::+ ($($operand:ident),*) $(-> $result:ident)?
            = $lowering:expr, memory $memory:ident, sm $sm:literal, ptx $ptx:literal
            $(, $flag:ident)*;
    )*) => {
        $(
            $(#[doc = $doc])+
            pub static $name: Intrinsic = Intrinsic {
                name: stringify!($name),
                rust_path: concat!("cuda_device" $(, "::", stringify!($path))+),
                operands: &[$(Scalar::$operand),*],
                result: result!($($result)?),
                lowering: $lowering,
                convergent: flag!(convergent; $($flag)*),
                memory: Memory::$memory,
                min_sm: $sm,
                arch_specific: flag!(arch_specific; $($flag)*),
                min_ptx: $ptx,
                doc: concat!($($doc, "\n"),+),
            };
        )*

        /// Every declared intrinsic, in declaration order.
        pub static ALL: &[&Intrinsic] = &[$(&$name),*];
    };
}

intrinsics! {
    // Launch coordinates.

    /// The thread's x index within its block: `%tid.x` (`threadIdx.x`).
    read_ptx_sreg_tid_x: thread::threadIdx_x() -> U32
        = llvm("llvm.nvvm.read.ptx.sreg.tid.x", &[]), memory None, sm 20, ptx 10;
    /// The thread's y index within its block: `%tid.y` (`threadIdx.y`).
    read_ptx_sreg_tid_y: thread::threadIdx_y() -> U32
        = llvm("llvm.nvvm.read.ptx.sreg.tid.y", &[]), memory None, sm 20, ptx 10;
    /// The thread's z index within its block: `%tid.z` (`threadIdx.z`).
    read_ptx_sreg_tid_z: thread::threadIdx_z() -> U32
        = llvm("llvm.nvvm.read.ptx.sreg.tid.z", &[]), memory None, sm 20, ptx 10;
    /// The block's x index within the grid: `%ctaid.x` (`blockIdx.x`).
    read_ptx_sreg_ctaid_x: thread::blockIdx_x() -> U32
        = llvm("llvm.nvvm.read.ptx.sreg.ctaid.x", &[]), memory None, sm 20, ptx 10;
    /// The block's y index within the grid: `%ctaid.y` (`blockIdx.y`).
    read_ptx_sreg_ctaid_y: thread::blockIdx_y() -> U32
        = llvm("llvm.nvvm.read.ptx.sreg.ctaid.y", &[]), memory None, sm 20, ptx 10;
    /// The block's z index within the grid: `%ctaid.z` (`blockIdx.z`).
    read_ptx_sreg_ctaid_z: thread::blockIdx_z() -> U32
        = llvm("llvm.nvvm.read.ptx.sreg.ctaid.z", &[]), memory None, sm 20, ptx 10;
    /// Threads per block along x: `%ntid.x` (`blockDim.x`).
    read_ptx_sreg_ntid_x: thread::blockDim_x() -> U32
        = llvm("llvm.nvvm.read.ptx.sreg.ntid.x", &[]), memory None, sm 20, ptx 10;
    /// Threads per block along y: `%ntid.y` (`blockDim.y`).
    read_ptx_sreg_ntid_y: thread::blockDim_y() -> U32
        = llvm("llvm.nvvm.read.ptx.sreg.ntid.y", &[]), memory None, sm 20, ptx 10;
    /// Threads per block along z: `%ntid.z` (`blockDim.z`).
    read_ptx_sreg_ntid_z: thread::blockDim_z() -> U32
        = llvm("llvm.nvvm.read.ptx.sreg.ntid.z", &[]), memory None, sm 20, ptx 10;
    /// Blocks per grid along x: `%nctaid.x` (`gridDim.x`).
    read_ptx_sreg_nctaid_x: thread::gridDim_x() -> U32
        = llvm("llvm.nvvm.read.ptx.sreg.nctaid.x", &[]), memory None, sm 20, ptx 10;
    /// Blocks per grid along y: `%nctaid.y` (`gridDim.y`).
    read_ptx_sreg_nctaid_y: thread::gridDim_y() -> U32
        = llvm("llvm.nvvm.read.ptx.sreg.nctaid.y", &[]), memory None, sm 20, ptx 10;
    /// Blocks per grid along z: `%nctaid.z` (`gridDim.z`).
    read_ptx_sreg_nctaid_z: thread::gridDim_z() -> U32
        = llvm("llvm.nvvm.read.ptx.sreg.nctaid.z", &[]), memory None, sm 20, ptx 10;

    // Where the thread runs.

    /// The SM the thread runs on: `%smid`, `0..nsmid()` (not necessarily contiguous).
    read_ptx_sreg_smid: thread::smid() -> U32
        = llvm("llvm.nvvm.read.ptx.sreg.smid", &[]), memory Read, sm 20, ptx 13;
    /// One more than the largest SM identifier: `%nsmid`.
    read_ptx_sreg_nsmid: thread::nsmid() -> U32
        = llvm("llvm.nvvm.read.ptx.sreg.nsmid", &[]), memory None, sm 20, ptx 20;
    /// The warp's slot on its SM: `%warpid` (may change when the warp is rescheduled).
    read_ptx_sreg_warpid: thread::warpid() -> U32
        = llvm("llvm.nvvm.read.ptx.sreg.warpid", &[]), memory Read, sm 20, ptx 13;
    /// One more than the largest warp slot of an SM: `%nwarpid`.
    read_ptx_sreg_nwarpid: thread::nwarpid() -> U32
        = llvm("llvm.nvvm.read.ptx.sreg.nwarpid", &[]), memory None, sm 20, ptx 20;
    /// The launch's grid identifier: `%gridid`, unique among the grids of a context.
    read_ptx_sreg_gridid: thread::gridid() -> U64
        = ptx("mov.u64 $0, %gridid;", "=l"), memory None, sm 20, ptx 30;

    // Warp: identity, masks, shuffles, votes, matches, reductions.

    /// The thread's lane within its warp, `0..32`: `%laneid`.
    read_ptx_sreg_laneid: warp::lane_id() -> U32
        = llvm("llvm.nvvm.read.ptx.sreg.laneid", &[]), memory None, sm 20, ptx 13;
    /// The bit of this lane: `1 << lane_id()` (`%lanemask_eq`).
    read_ptx_sreg_lanemask_eq: warp::lanemask_eq() -> U32
        = llvm("llvm.nvvm.read.ptx.sreg.lanemask.eq", &[]), memory None, sm 20, ptx 20;
    /// The bits of the lanes below this one (`%lanemask_lt`).
    read_ptx_sreg_lanemask_lt: warp::lanemask_lt() -> U32
        = llvm("llvm.nvvm.read.ptx.sreg.lanemask.lt", &[]), memory None, sm 20, ptx 20;
    /// The bits of this lane and the lanes below it (`%lanemask_le`).
    read_ptx_sreg_lanemask_le: warp::lanemask_le() -> U32
        = llvm("llvm.nvvm.read.ptx.sreg.lanemask.le", &[]), memory None, sm 20, ptx 20;
    /// The bits of the lanes above this one (`%lanemask_gt`).
    read_ptx_sreg_lanemask_gt: warp::lanemask_gt() -> U32
        = llvm("llvm.nvvm.read.ptx.sreg.lanemask.gt", &[]), memory None, sm 20, ptx 20;
    /// The bits of this lane and the lanes above it (`%lanemask_ge`).
    read_ptx_sreg_lanemask_ge: warp::lanemask_ge() -> U32
        = llvm("llvm.nvvm.read.ptx.sreg.lanemask.ge", &[]), memory None, sm 20, ptx 20;
    /// The lanes of the warp executing this call together (`__activemask()`,
    /// `activemask.b32`).
    activemask: warp::active_mask() -> U32
        = llvm("llvm.nvvm.activemask", &[]), memory Read, sm 30, ptx 62, convergent;
    /// Waits until every lane of the warp has reached it, and orders their memory accesses
    /// (`__syncwarp()`, `bar.warp.sync 0xffffffff`).
    bar_warp_sync: warp::sync()
        = llvm("llvm.nvvm.bar.warp.sync", &[FULL_MASK]), memory ReadWrite, sm 30, ptx 60,
        convergent;
    /// 32 bits from lane `src_lane` (`__shfl_sync(0xffffffff, value, src_lane)`,
    /// `shfl.sync.idx.b32`).
    shfl_sync_idx_i32: warp::shuffle_b32(U32, U32) -> U32
        = llvm("llvm.nvvm.shfl.sync.idx.i32", &[FULL_MASK, Operand(0), Operand(1), I32(31)]),
        memory None, sm 30, ptx 60, convergent;
    /// 32 bits from lane `lane_id ^ lane_mask` (`__shfl_xor_sync`, `shfl.sync.bfly.b32`).
    shfl_sync_bfly_i32: warp::shuffle_xor_b32(U32, U32) -> U32
        = llvm("llvm.nvvm.shfl.sync.bfly.i32", &[FULL_MASK, Operand(0), Operand(1), I32(31)]),
        memory None, sm 30, ptx 60, convergent;
    /// 32 bits from lane `lane_id + delta`, or the lane's own past the end
    /// (`__shfl_down_sync`, `shfl.sync.down.b32`).
    shfl_sync_down_i32: warp::shuffle_down_b32(U32, U32) -> U32
        = llvm("llvm.nvvm.shfl.sync.down.i32", &[FULL_MASK, Operand(0), Operand(1), I32(31)]),
        memory None, sm 30, ptx 60, convergent;
    /// 32 bits from lane `lane_id - delta`, or the lane's own before lane 0
    /// (`__shfl_up_sync`, `shfl.sync.up.b32`).
    shfl_sync_up_i32: warp::shuffle_up_b32(U32, U32) -> U32
        = llvm("llvm.nvvm.shfl.sync.up.i32", &[FULL_MASK, Operand(0), Operand(1), I32(0)]),
        memory None, sm 30, ptx 60, convergent;
    /// Whether `pred` holds in every lane (`__all_sync(0xffffffff, pred)`,
    /// `vote.sync.all.pred`).
    vote_all_sync: warp::all(Bool) -> Bool
        = llvm("llvm.nvvm.vote.all.sync", &[FULL_MASK, Operand(0)]),
        memory None, sm 30, ptx 60, convergent;
    /// Whether `pred` holds in some lane (`__any_sync`, `vote.sync.any.pred`).
    vote_any_sync: warp::any(Bool) -> Bool
        = llvm("llvm.nvvm.vote.any.sync", &[FULL_MASK, Operand(0)]),
        memory None, sm 30, ptx 60, convergent;
    /// Whether `pred` is the same in every lane (`__uni_sync`, `vote.sync.uni.pred`).
    vote_uni_sync: warp::uni(Bool) -> Bool
        = llvm("llvm.nvvm.vote.uni.sync", &[FULL_MASK, Operand(0)]),
        memory None, sm 30, ptx 60, convergent;
    /// The lanes where `pred` holds, bit `i` for lane `i` (`__ballot_sync`,
    /// `vote.sync.ballot.b32`).
    vote_ballot_sync: warp::ballot(Bool) -> U32
        = llvm("llvm.nvvm.vote.ballot.sync", &[FULL_MASK, Operand(0)]),
        memory None, sm 30, ptx 60, convergent;
    /// The lanes whose `value` equals this lane's (`__match_any_sync`,
    /// `match.any.sync.b32`).
    match_any_sync_i32: warp::match_any(U32) -> U32
        = llvm("llvm.nvvm.match.any.sync.i32", &[FULL_MASK, Operand(0)]),
        memory None, sm 70, ptx 60, convergent;
    /// The lanes whose 64-bit `value` equals this lane's (`match.any.sync.b64`).
    match_any_sync_i64: warp::match_any_u64(U64) -> U32
        = llvm("llvm.nvvm.match.any.sync.i64", &[FULL_MASK, Operand(0)]),
        memory None, sm 70, ptx 60, convergent;
    /// Whether every lane holds the same `value` (`__match_all_sync`'s predicate,
    /// `match.all.sync.b32`).
    match_all_sync_i32: warp::match_all(U32) -> Bool
        = ptx("match.all.sync.b32 _|$0, $1, -1;", "=b,r"),
        memory None, sm 70, ptx 60, convergent;
    /// Whether every lane holds the same 64-bit `value` (`match.all.sync.b64`).
    match_all_sync_i64: warp::match_all_u64(U64) -> Bool
        = ptx("match.all.sync.b64 _|$0, $1, -1;", "=b,l"),
        memory None, sm 70, ptx 60, convergent;
    /// The wrapping sum of `value` over the warp (`__reduce_add_sync`, `redux.sync.add.u32`).
    redux_sync_add: warp::reduce_add(U32) -> U32
        = llvm("llvm.nvvm.redux.sync.add", &[Operand(0), FULL_MASK]),
        memory None, sm 80, ptx 70, convergent;
    /// The wrapping sum of a signed `value` over the warp (`redux.sync.add.s32`).
    redux_sync_add_i32: warp::reduce_add_i32(I32) -> I32
        = llvm("llvm.nvvm.redux.sync.add", &[Operand(0), FULL_MASK]),
        memory None, sm 80, ptx 70, convergent;
    /// The smallest `value` of the warp (`__reduce_min_sync` on `unsigned`,
    /// `redux.sync.min.u32`).
    redux_sync_umin: warp::reduce_min(U32) -> U32
        = llvm("llvm.nvvm.redux.sync.umin", &[Operand(0), FULL_MASK]),
        memory None, sm 80, ptx 70, convergent;
    /// The largest `value` of the warp (`redux.sync.max.u32`).
    redux_sync_umax: warp::reduce_max(U32) -> U32
        = llvm("llvm.nvvm.redux.sync.umax", &[Operand(0), FULL_MASK]),
        memory None, sm 80, ptx 70, convergent;
    /// The smallest signed `value` of the warp (`redux.sync.min.s32`).
    redux_sync_min: warp::reduce_min_i32(I32) -> I32
        = llvm("llvm.nvvm.redux.sync.min", &[Operand(0), FULL_MASK]),
        memory None, sm 80, ptx 70, convergent;
    /// The largest signed `value` of the warp (`redux.sync.max.s32`).
    redux_sync_max: warp::reduce_max_i32(I32) -> I32
        = llvm("llvm.nvvm.redux.sync.max", &[Operand(0), FULL_MASK]),
        memory None, sm 80, ptx 70, convergent;
    /// The bitwise and of `value` over the warp (`redux.sync.and.b32`).
    redux_sync_and: warp::reduce_and(U32) -> U32
        = llvm("llvm.nvvm.redux.sync.and", &[Operand(0), FULL_MASK]),
        memory None, sm 80, ptx 70, convergent;
    /// The bitwise or of `value` over the warp (`redux.sync.or.b32`).
    redux_sync_or: warp::reduce_or(U32) -> U32
        = llvm("llvm.nvvm.redux.sync.or", &[Operand(0), FULL_MASK]),
        memory None, sm 80, ptx 70, convergent;
    /// The bitwise exclusive or of `value` over the warp (`redux.sync.xor.b32`).
    redux_sync_xor: warp::reduce_xor(U32) -> U32
        = llvm("llvm.nvvm.redux.sync.xor", &[Operand(0), FULL_MASK]),
        memory None, sm 80, ptx 70, convergent;
    /// `true` in exactly one lane of the warp, the same one in every lane
    /// (`elect.sync _|p, 0xffffffff`).
    elect_sync: warp::elect_one() -> Bool
        = ptx("elect.sync _|$0, -1;", "=b"), memory None, sm 90, ptx 80, convergent;

    // Warp operations over the lanes of a member mask (`__*_sync(mask, ...)`): every lane
    // named in the mask must execute the same call with the same mask.

    /// Waits until every lane of `mask` has reached it, and orders their memory accesses
    /// (`__syncwarp(mask)`, `bar.warp.sync mask`).
    bar_warp_sync_mask: warp::sync_mask(U32)
        = llvm("llvm.nvvm.bar.warp.sync", &[Operand(0)]), memory ReadWrite, sm 30, ptx 60,
        convergent;
    /// 32 bits from lane `src_lane` among the lanes of `mask` (`__shfl_sync(mask, value, src_lane)`).
    shfl_sync_idx_i32_mask: warp::shuffle_b32_sync(U32, U32, U32) -> U32
        = llvm("llvm.nvvm.shfl.sync.idx.i32", &[Operand(0), Operand(1), Operand(2), I32(31)]),
        memory None, sm 30, ptx 60, convergent;
    /// 32 bits from lane `lane_id ^ lane_mask` among the lanes of `mask` (`__shfl_xor_sync`).
    shfl_sync_bfly_i32_mask: warp::shuffle_xor_b32_sync(U32, U32, U32) -> U32
        = llvm("llvm.nvvm.shfl.sync.bfly.i32", &[Operand(0), Operand(1), Operand(2), I32(31)]),
        memory None, sm 30, ptx 60, convergent;
    /// 32 bits from lane `lane_id + delta` among the lanes of `mask` (`__shfl_down_sync`).
    shfl_sync_down_i32_mask: warp::shuffle_down_b32_sync(U32, U32, U32) -> U32
        = llvm("llvm.nvvm.shfl.sync.down.i32", &[Operand(0), Operand(1), Operand(2), I32(31)]),
        memory None, sm 30, ptx 60, convergent;
    /// 32 bits from lane `lane_id - delta` among the lanes of `mask` (`__shfl_up_sync`).
    shfl_sync_up_i32_mask: warp::shuffle_up_b32_sync(U32, U32, U32) -> U32
        = llvm("llvm.nvvm.shfl.sync.up.i32", &[Operand(0), Operand(1), Operand(2), I32(0)]),
        memory None, sm 30, ptx 60, convergent;
    /// Whether `pred` holds in every lane of `mask` (`__all_sync(mask, pred)`).
    vote_all_sync_mask: warp::all_sync(U32, Bool) -> Bool
        = llvm("llvm.nvvm.vote.all.sync", &[Operand(0), Operand(1)]),
        memory None, sm 30, ptx 60, convergent;
    /// Whether `pred` holds in some lane of `mask` (`__any_sync(mask, pred)`).
    vote_any_sync_mask: warp::any_sync(U32, Bool) -> Bool
        = llvm("llvm.nvvm.vote.any.sync", &[Operand(0), Operand(1)]),
        memory None, sm 30, ptx 60, convergent;
    /// Whether `pred` is the same in every lane of `mask` (`__uni_sync(mask, pred)`).
    vote_uni_sync_mask: warp::uni_sync(U32, Bool) -> Bool
        = llvm("llvm.nvvm.vote.uni.sync", &[Operand(0), Operand(1)]),
        memory None, sm 30, ptx 60, convergent;
    /// The lanes of `mask` where `pred` holds (`__ballot_sync(mask, pred)`).
    vote_ballot_sync_mask: warp::ballot_sync(U32, Bool) -> U32
        = llvm("llvm.nvvm.vote.ballot.sync", &[Operand(0), Operand(1)]),
        memory None, sm 30, ptx 60, convergent;
    /// The lanes of `mask` whose `value` equals this lane's (`__match_any_sync(mask, value)`).
    match_any_sync_i32_mask: warp::match_any_sync(U32, U32) -> U32
        = llvm("llvm.nvvm.match.any.sync.i32", &[Operand(0), Operand(1)]),
        memory None, sm 70, ptx 60, convergent;
    /// The lanes of `mask` whose 64-bit `value` equals this lane's.
    match_any_sync_i64_mask: warp::match_any_u64_sync(U32, U64) -> U32
        = llvm("llvm.nvvm.match.any.sync.i64", &[Operand(0), Operand(1)]),
        memory None, sm 70, ptx 60, convergent;
    /// Whether every lane of `mask` holds the same `value` (`__match_all_sync(mask, ...)`).
    match_all_sync_i32_mask: warp::match_all_sync(U32, U32) -> Bool
        = ptx("match.all.sync.b32 _|$0, $2, $1;", "=b,r,r"),
        memory None, sm 70, ptx 60, convergent;
    /// Whether every lane of `mask` holds the same 64-bit `value`.
    match_all_sync_i64_mask: warp::match_all_u64_sync(U32, U64) -> Bool
        = ptx("match.all.sync.b64 _|$0, $2, $1;", "=b,r,l"),
        memory None, sm 70, ptx 60, convergent;
    /// The wrapping sum of `value` over the lanes of `mask` (`__reduce_add_sync(mask, value)`).
    redux_sync_add_mask: warp::reduce_add_sync(U32, U32) -> U32
        = llvm("llvm.nvvm.redux.sync.add", &[Operand(1), Operand(0)]),
        memory None, sm 80, ptx 70, convergent;
    /// The wrapping sum of a signed `value` over the lanes of `mask`.
    redux_sync_add_i32_mask: warp::reduce_add_i32_sync(U32, I32) -> I32
        = llvm("llvm.nvvm.redux.sync.add", &[Operand(1), Operand(0)]),
        memory None, sm 80, ptx 70, convergent;
    /// The smallest `value` of the lanes of `mask` (`__reduce_min_sync(mask, value)`).
    redux_sync_umin_mask: warp::reduce_min_sync(U32, U32) -> U32
        = llvm("llvm.nvvm.redux.sync.umin", &[Operand(1), Operand(0)]),
        memory None, sm 80, ptx 70, convergent;
    /// The largest `value` of the lanes of `mask` (`__reduce_max_sync(mask, value)`).
    redux_sync_umax_mask: warp::reduce_max_sync(U32, U32) -> U32
        = llvm("llvm.nvvm.redux.sync.umax", &[Operand(1), Operand(0)]),
        memory None, sm 80, ptx 70, convergent;
    /// The smallest signed `value` of the lanes of `mask`.
    redux_sync_min_mask: warp::reduce_min_i32_sync(U32, I32) -> I32
        = llvm("llvm.nvvm.redux.sync.min", &[Operand(1), Operand(0)]),
        memory None, sm 80, ptx 70, convergent;
    /// The largest signed `value` of the lanes of `mask`.
    redux_sync_max_mask: warp::reduce_max_i32_sync(U32, I32) -> I32
        = llvm("llvm.nvvm.redux.sync.max", &[Operand(1), Operand(0)]),
        memory None, sm 80, ptx 70, convergent;
    /// The bitwise and of `value` over the lanes of `mask`.
    redux_sync_and_mask: warp::reduce_and_sync(U32, U32) -> U32
        = llvm("llvm.nvvm.redux.sync.and", &[Operand(1), Operand(0)]),
        memory None, sm 80, ptx 70, convergent;
    /// The bitwise or of `value` over the lanes of `mask`.
    redux_sync_or_mask: warp::reduce_or_sync(U32, U32) -> U32
        = llvm("llvm.nvvm.redux.sync.or", &[Operand(1), Operand(0)]),
        memory None, sm 80, ptx 70, convergent;
    /// The bitwise exclusive or of `value` over the lanes of `mask`.
    redux_sync_xor_mask: warp::reduce_xor_sync(U32, U32) -> U32
        = llvm("llvm.nvvm.redux.sync.xor", &[Operand(1), Operand(0)]),
        memory None, sm 80, ptx 70, convergent;
    /// `true` in exactly one lane of `mask`, the same one in each of them
    /// (`elect.sync _|p, mask`).
    elect_sync_mask: warp::elect_one_sync(U32) -> Bool
        = ptx("elect.sync _|$0, $1;", "=b,r"), memory None, sm 90, ptx 80, convergent;

    // Block barriers and memory fences.

    /// Waits until every thread of the block has reached it; their earlier memory accesses
    /// are then visible to the block (`__syncthreads()`, `bar.sync 0`).
    barrier0: sync::syncthreads()
        = llvm("llvm.nvvm.barrier0", &[]), memory ReadWrite, sm 20, ptx 10, convergent;
    /// `bar.sync 0`, then the number of threads of the block whose `pred` is non-zero
    /// (`bar.red.popc.u32`).
    barrier0_popc: sync::bar_red_popc(U32) -> U32
        = llvm("llvm.nvvm.barrier0.popc", &[Operand(0)]),
        memory ReadWrite, sm 20, ptx 20, convergent;
    /// `bar.sync 0`, then 1 if `pred` is non-zero in every thread of the block, else 0
    /// (`bar.red.and.pred`).
    barrier0_and: sync::bar_red_and(U32) -> U32
        = llvm("llvm.nvvm.barrier0.and", &[Operand(0)]),
        memory ReadWrite, sm 20, ptx 20, convergent;
    /// `bar.sync 0`, then 1 if `pred` is non-zero in some thread of the block, else 0
    /// (`bar.red.or.pred`).
    barrier0_or: sync::bar_red_or(U32) -> U32
        = llvm("llvm.nvvm.barrier0.or", &[Operand(0)]),
        memory ReadWrite, sm 20, ptx 20, convergent;
    /// Orders this thread's memory accesses for every thread of the GPU: those before it are
    /// seen before those after it (`__threadfence()`, `fence.sc.gpu`).
    fence_sc_gpu: sync::threadfence()
        = fence(Device), memory ReadWrite, sm 20, ptx 20;
    /// Orders this thread's memory accesses for the threads of its block
    /// (`__threadfence_block()`, `fence.sc.cta`).
    fence_sc_cta: sync::threadfence_block()
        = fence(Block), memory ReadWrite, sm 20, ptx 20;
    /// Orders this thread's memory accesses for every thread of the system, host and peer
    /// GPUs included (`__threadfence_system()`, `fence.sc.sys`).
    fence_sc_sys: sync::threadfence_system()
        = fence(System), memory ReadWrite, sm 20, ptx 20;

    // Shared memory.

    /// The shared-window address of a generic address into shared memory
    /// (`cvta.to.shared.u64`, truncated to 32 bits).
    cvta_to_shared_u32: shared::raw::cvta_to_shared(U64) -> U32
        = ptx("{ .reg .b64 %ha; cvta.to.shared.u64 %ha, $1; cvt.u32.u64 $0, %ha; }", "=r,l"),
        memory None, sm 20, ptx 20;

    // Asynchronous barriers (`mbarrier`), in shared memory. Addresses are generic (`u64`)
    // addresses of an 8-byte aligned shared-memory word; `cuda_device::mbarrier` wraps them in
    // a typed API.

    /// Initialises the barrier at `addr` for `count` arrivals per phase, phase 0
    /// (`mbarrier.init.b64`).
    mbarrier_init: mbarrier::raw::init(U64, U32)
        = ptx("mbarrier.init.b64 [$0], $1;", "l,r"), memory ReadWrite, sm 80, ptx 70;
    /// Invalidates the barrier at `addr`, so that its memory can be reused
    /// (`mbarrier.inval.b64`).
    mbarrier_inval: mbarrier::raw::inval(U64)
        = ptx("mbarrier.inval.b64 [$0];", "l"), memory ReadWrite, sm 80, ptx 70;
    /// Arrives at the barrier (release, CTA scope); returns the phase state token
    /// (`mbarrier.arrive.b64`).
    mbarrier_arrive: mbarrier::raw::arrive(U64) -> U64
        = ptx("mbarrier.arrive.b64 $0, [$1];", "=l,l"), memory ReadWrite, sm 80, ptx 70;
    /// Arrives (release at CTA scope, the default: a cluster-scope release costs a GPU-wide
    /// memory barrier) at the barrier that is, in block `rank` of the cluster, where `addr` (a
    /// generic address into this block's shared memory) is in this block
    /// (`mapa.shared::cluster` + `mbarrier.arrive.shared::cluster.b64`).
    mbarrier_arrive_cluster: mbarrier::raw::arrive_cluster(U64, U32)
        = ptx("{ .reg .b64 %ha; .reg .b32 %hl, %hr; cvta.to.shared.u64 %ha, $0; \
               cvt.u32.u64 %hl, %ha; mapa.shared::cluster.u32 %hr, %hl, $1; \
               mbarrier.arrive.shared::cluster.b64 _, [%hr]; }", "l,r"),
        memory ReadWrite, sm 90, ptx 80;
    /// Adds `tx_bytes` to the transaction count the current phase waits for, then arrives
    /// (`mbarrier.arrive.expect_tx.b64`).
    mbarrier_arrive_expect_tx: mbarrier::raw::arrive_expect_tx(U64, U32) -> U64
        = ptx("mbarrier.arrive.expect_tx.b64 $0, [$1], $2;", "=l,l,r"),
        memory ReadWrite, sm 90, ptx 80;
    /// Adds `tx_bytes` to the transaction count the current phase waits for, without arriving
    /// (`mbarrier.expect_tx.relaxed.cta.b64`).
    mbarrier_expect_tx: mbarrier::raw::expect_tx(U64, U32)
        = ptx("mbarrier.expect_tx.relaxed.cta.b64 [$0], $1;", "l,r"),
        memory ReadWrite, sm 90, ptx 80;
    /// Whether the phase of parity `parity` (0 or 1) has completed, waiting a while for it
    /// (acquire, CTA scope; `mbarrier.try_wait.parity.b64`).
    mbarrier_try_wait_parity: mbarrier::raw::try_wait_parity(U64, U32) -> Bool
        = ptx("mbarrier.try_wait.parity.b64 $0, [$1], $2;", "=b,l,r"),
        memory ReadWrite, sm 90, ptx 78;
    /// Whether the phase of parity `parity` has completed, without waiting
    /// (`mbarrier.test_wait.parity.b64`).
    mbarrier_test_wait_parity: mbarrier::raw::test_wait_parity(U64, U32) -> Bool
        = ptx("mbarrier.test_wait.parity.b64 $0, [$1], $2;", "=b,l,r"),
        memory ReadWrite, sm 80, ptx 71;
    /// Makes barrier initialisations of this thread visible to the cluster, and to the
    /// asynchronous proxy (`fence.mbarrier_init.release.cluster`).
    fence_mbarrier_init: mbarrier::raw::fence_init()
        = ptx("fence.mbarrier_init.release.cluster;", ""), memory ReadWrite, sm 90, ptx 80;
    /// Orders this thread's shared-memory accesses of the generic proxy (ordinary loads and
    /// stores) with those of the asynchronous proxy (TMA, `wgmma`)
    /// (`fence.proxy.async.shared::cta`).
    fence_proxy_async_shared_cta: sync::fence_proxy_async_shared()
        = ptx("fence.proxy.async.shared::cta;", ""), memory ReadWrite, sm 90, ptx 80;
    /// Orders this thread's accesses of the generic proxy with those of the asynchronous proxy,
    /// in every state space (`fence.proxy.async`).
    fence_proxy_async: sync::fence_proxy_async()
        = ptx("fence.proxy.async;", ""), memory ReadWrite, sm 90, ptx 80;

    // The tensor memory accelerator (TMA): bulk tensor copies between global and shared
    // memory described by a tensor map. Shared-memory and barrier addresses are generic;
    // the tensor map's is the generic address of a `.param` (grid constant) or global one.

    /// Copies the 2-D box at `(c0, c1)` of the tensor map at `tmap` to shared memory at `dst`;
    /// the bytes complete on the barrier at `bar`
    /// (`cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes`).
    tma_load_2d: tma::raw::load_2d(U64, U64, I32, I32, U64)
        = ptx("{ .reg .b64 %hd, %hb; cvta.to.shared.u64 %hd, $0; cvta.to.shared.u64 %hb, $4; \
               cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes \
               [%hd], [$1, {$2, $3}], [%hb]; }", "l,l,r,r,l"),
        memory ReadWrite, sm 90, ptx 80;
    /// Copies the 2-D box at `(c0, c1)` of the tensor map at `tmap` to shared memory at `dst`
    /// in every block of the cluster whose bit is set in `mask` (the low 16 bits), the bytes
    /// completing on the barrier at `bar`'s offset in each of them
    /// (`cp.async.bulk.tensor.2d...complete_tx::bytes.multicast::cluster`).
    tma_load_2d_multicast: tma::raw::load_2d_multicast(U64, U64, I32, I32, U64, U32)
        = ptx("{ .reg .b64 %hd, %hb; .reg .b16 %hm; cvta.to.shared.u64 %hd, $0; \
               cvta.to.shared.u64 %hb, $4; cvt.u16.u32 %hm, $5; \
               cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes\
               .multicast::cluster [%hd], [$1, {$2, $3}], [%hb], %hm; }", "l,l,r,r,l,r"),
        memory ReadWrite, sm 90, ptx 80;
    /// Copies the 3-D box at `(c0, c1, c2)` of the tensor map at `tmap` to shared memory at
    /// `dst`, completing on the barrier at `bar` (`cp.async.bulk.tensor.3d...`).
    tma_load_3d: tma::raw::load_3d(U64, U64, I32, I32, I32, U64)
        = ptx("{ .reg .b64 %hd, %hb; cvta.to.shared.u64 %hd, $0; cvta.to.shared.u64 %hb, $5; \
               cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes \
               [%hd], [$1, {$2, $3, $4}], [%hb]; }", "l,l,r,r,r,l"),
        memory ReadWrite, sm 90, ptx 80;
    /// Copies shared memory at `src` to the 2-D box at `(c0, c1)` of the tensor map at `tmap`,
    /// in this thread's current bulk group
    /// (`cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group`).
    tma_store_2d: tma::raw::store_2d(U64, I32, I32, U64)
        = ptx("{ .reg .b64 %hs; cvta.to.shared.u64 %hs, $3; \
               cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [$0, {$1, $2}], [%hs]; }",
              "l,r,r,l"),
        memory ReadWrite, sm 90, ptx 80;
    /// Copies shared memory at `src` to the 3-D box at `(c0, c1, c2)` of the tensor map at
    /// `tmap` (`cp.async.bulk.tensor.3d.global.shared::cta.tile.bulk_group`).
    tma_store_3d: tma::raw::store_3d(U64, I32, I32, I32, U64)
        = ptx("{ .reg .b64 %hs; cvta.to.shared.u64 %hs, $4; \
               cp.async.bulk.tensor.3d.global.shared::cta.tile.bulk_group [$0, {$1, $2, $3}], \
               [%hs]; }", "l,r,r,r,l"),
        memory ReadWrite, sm 90, ptx 80;
    /// Closes this thread's current group of bulk stores (`cp.async.bulk.commit_group`).
    bulk_commit_group: tma::raw::commit_group()
        = ptx("cp.async.bulk.commit_group;", ""), memory ReadWrite, sm 90, ptx 80;
    /// Waits until every bulk store group of this thread has finished reading its shared
    /// memory (`cp.async.bulk.wait_group.read 0`).
    bulk_wait_group_read_0: tma::raw::wait_group_read_0()
        = ptx("cp.async.bulk.wait_group.read 0;", ""), memory ReadWrite, sm 90, ptx 80;
    /// Waits until every bulk store group of this thread has completed, its writes visible
    /// (`cp.async.bulk.wait_group 0`).
    bulk_wait_group_0: tma::raw::wait_group_0()
        = ptx("cp.async.bulk.wait_group 0;", ""), memory ReadWrite, sm 90, ptx 80;
    /// Brings the tensor map at `tmap` into the cache (`prefetch.tensormap`).
    prefetch_tensormap: tma::raw::prefetch_tensormap(U64)
        = ptx("prefetch.tensormap [$0];", "l"), memory ReadWrite, sm 90, ptx 80;
    /// Makes the 128-byte tensor map at `tmap`, written through ordinary (generic-proxy)
    /// stores or copies, visible to the tensor-map proxy of this GPU
    /// (`fence.proxy.tensormap::generic.acquire.gpu`).
    fence_proxy_tensormap_acquire: tma::raw::fence_tensormap_acquire(U64)
        = ptx("fence.proxy.tensormap::generic.acquire.gpu [$0], 128;", "l"),
        memory ReadWrite, sm 90, ptx 83;

    // Warpgroup matrix multiply-accumulate (`wgmma`, sm_90a only). Every thread of the
    // warpgroup (4 consecutive warps starting at a warp index divisible by 4) executes these
    // together.

    /// Orders earlier register and shared-memory accesses before the next `wgmma.mma_async`
    /// (`wgmma.fence.sync.aligned`).
    wgmma_fence: wgmma::raw::fence()
        = ptx("wgmma.fence.sync.aligned;", ""), memory ReadWrite, sm 90, ptx 80,
        convergent, arch_specific;
    /// Closes the warpgroup's current group of `wgmma.mma_async`
    /// (`wgmma.commit_group.sync.aligned`).
    wgmma_commit_group: wgmma::raw::commit_group()
        = ptx("wgmma.commit_group.sync.aligned;", ""), memory ReadWrite, sm 90, ptx 80,
        convergent, arch_specific;
    /// Waits until no group of `wgmma.mma_async` is pending (`wgmma.wait_group.sync.aligned 0`).
    wgmma_wait_group_0: wgmma::raw::wait_group_0()
        = ptx("wgmma.wait_group.sync.aligned 0;", ""), memory ReadWrite, sm 90, ptx 80,
        convergent, arch_specific;
    /// Waits until at most one group of `wgmma.mma_async` is pending
    /// (`wgmma.wait_group.sync.aligned 1`).
    wgmma_wait_group_1: wgmma::raw::wait_group_1()
        = ptx("wgmma.wait_group.sync.aligned 1;", ""), memory ReadWrite, sm 90, ptx 80,
        convergent, arch_specific;
    /// Waits until at most two groups of `wgmma.mma_async` are pending
    /// (`wgmma.wait_group.sync.aligned 2`).
    wgmma_wait_group_2: wgmma::raw::wait_group_2()
        = ptx("wgmma.wait_group.sync.aligned 2;", ""), memory ReadWrite, sm 90, ptx 80,
        convergent, arch_specific;

    // `wgmma.mma_async`: `D = A·B + (scale_d != 0 ? D : 0)` on a 64 × N f32 tile `D` (N / 2
    // registers per thread: F32x32, F32x64, F32x128 for N = 64, 128, 256), `A` (64 × K) and
    // `B` (K × N) in shared memory, given by their matrix descriptors, both K-major (rows of
    // K elements: 32 bytes per instruction whatever the type). The lowering is
    // `wgmma_mma!(shape.types)` (tf32, fp8: no transpose operands exist) or
    // `wgmma_mma!(shape.types, k_major)` (bf16, f16: transpose operands 0, 0).
    /// 64 × 64 `D` += bf16 `A` (64 × 16) · `B` (16 × 64): `m64n64k16.f32.bf16.bf16`.
    wgmma_m64n64k16_f32_bf16: wgmma::raw::mma_m64n64k16_f32_bf16(F32x32, U64, U64, U32) -> F32x32
        = wgmma_mma!("m64n64k16.f32.bf16.bf16", k_major),
        memory ReadWrite, sm 90, ptx 80, convergent, arch_specific;
    /// 64 × 128 `D` += bf16 `A` (64 × 16) · `B` (16 × 128): `m64n128k16.f32.bf16.bf16`.
    wgmma_m64n128k16_f32_bf16: wgmma::raw::mma_m64n128k16_f32_bf16(F32x64, U64, U64, U32) -> F32x64
        = wgmma_mma!("m64n128k16.f32.bf16.bf16", k_major),
        memory ReadWrite, sm 90, ptx 80, convergent, arch_specific;
    /// 64 × 256 `D` += bf16 `A` (64 × 16) · `B` (16 × 256): `m64n256k16.f32.bf16.bf16`.
    wgmma_m64n256k16_f32_bf16: wgmma::raw::mma_m64n256k16_f32_bf16(F32x128, U64, U64, U32)
        -> F32x128
        = wgmma_mma!("m64n256k16.f32.bf16.bf16", k_major),
        memory ReadWrite, sm 90, ptx 80, convergent, arch_specific;
    /// 64 × 64 `D` += f16 `A` (64 × 16) · `B` (16 × 64): `m64n64k16.f32.f16.f16`.
    wgmma_m64n64k16_f32_f16: wgmma::raw::mma_m64n64k16_f32_f16(F32x32, U64, U64, U32) -> F32x32
        = wgmma_mma!("m64n64k16.f32.f16.f16", k_major),
        memory ReadWrite, sm 90, ptx 80, convergent, arch_specific;
    /// 64 × 128 `D` += f16 `A` (64 × 16) · `B` (16 × 128): `m64n128k16.f32.f16.f16`.
    wgmma_m64n128k16_f32_f16: wgmma::raw::mma_m64n128k16_f32_f16(F32x64, U64, U64, U32) -> F32x64
        = wgmma_mma!("m64n128k16.f32.f16.f16", k_major),
        memory ReadWrite, sm 90, ptx 80, convergent, arch_specific;
    /// 64 × 256 `D` += f16 `A` (64 × 16) · `B` (16 × 256): `m64n256k16.f32.f16.f16`.
    wgmma_m64n256k16_f32_f16: wgmma::raw::mma_m64n256k16_f32_f16(F32x128, U64, U64, U32) -> F32x128
        = wgmma_mma!("m64n256k16.f32.f16.f16", k_major),
        memory ReadWrite, sm 90, ptx 80, convergent, arch_specific;
    /// 64 × 64 `D` += tf32 `A` (64 × 8) · `B` (8 × 64): `m64n64k8.f32.tf32.tf32`.
    wgmma_m64n64k8_f32_tf32: wgmma::raw::mma_m64n64k8_f32_tf32(F32x32, U64, U64, U32) -> F32x32
        = wgmma_mma!("m64n64k8.f32.tf32.tf32"),
        memory ReadWrite, sm 90, ptx 80, convergent, arch_specific;
    /// 64 × 128 `D` += tf32 `A` (64 × 8) · `B` (8 × 128): `m64n128k8.f32.tf32.tf32`.
    wgmma_m64n128k8_f32_tf32: wgmma::raw::mma_m64n128k8_f32_tf32(F32x64, U64, U64, U32) -> F32x64
        = wgmma_mma!("m64n128k8.f32.tf32.tf32"),
        memory ReadWrite, sm 90, ptx 80, convergent, arch_specific;
    /// 64 × 256 `D` += tf32 `A` (64 × 8) · `B` (8 × 256): `m64n256k8.f32.tf32.tf32`.
    wgmma_m64n256k8_f32_tf32: wgmma::raw::mma_m64n256k8_f32_tf32(F32x128, U64, U64, U32) -> F32x128
        = wgmma_mma!("m64n256k8.f32.tf32.tf32"),
        memory ReadWrite, sm 90, ptx 80, convergent, arch_specific;
    /// 64 × 64 `D` += e4m3 `A` (64 × 32) · e4m3 `B` (32 × 64): `m64n64k32.f32.e4m3.e4m3`.
    wgmma_m64n64k32_f32_e4m3: wgmma::raw::mma_m64n64k32_f32_e4m3(F32x32, U64, U64, U32) -> F32x32
        = wgmma_mma!("m64n64k32.f32.e4m3.e4m3"),
        memory ReadWrite, sm 90, ptx 80, convergent, arch_specific;
    /// 64 × 128 `D` += e4m3 `A` (64 × 32) · e4m3 `B` (32 × 128): `m64n128k32.f32.e4m3.e4m3`.
    wgmma_m64n128k32_f32_e4m3: wgmma::raw::mma_m64n128k32_f32_e4m3(F32x64, U64, U64, U32) -> F32x64
        = wgmma_mma!("m64n128k32.f32.e4m3.e4m3"),
        memory ReadWrite, sm 90, ptx 80, convergent, arch_specific;
    /// 64 × 256 `D` += e4m3 `A` (64 × 32) · e4m3 `B` (32 × 256): `m64n256k32.f32.e4m3.e4m3`.
    wgmma_m64n256k32_f32_e4m3: wgmma::raw::mma_m64n256k32_f32_e4m3(F32x128, U64, U64, U32)
        -> F32x128
        = wgmma_mma!("m64n256k32.f32.e4m3.e4m3"),
        memory ReadWrite, sm 90, ptx 80, convergent, arch_specific;
    /// 64 × 64 `D` += e5m2 `A` (64 × 32) · e5m2 `B` (32 × 64): `m64n64k32.f32.e5m2.e5m2`.
    wgmma_m64n64k32_f32_e5m2: wgmma::raw::mma_m64n64k32_f32_e5m2(F32x32, U64, U64, U32) -> F32x32
        = wgmma_mma!("m64n64k32.f32.e5m2.e5m2"),
        memory ReadWrite, sm 90, ptx 80, convergent, arch_specific;
    /// 64 × 128 `D` += e5m2 `A` (64 × 32) · e5m2 `B` (32 × 128): `m64n128k32.f32.e5m2.e5m2`.
    wgmma_m64n128k32_f32_e5m2: wgmma::raw::mma_m64n128k32_f32_e5m2(F32x64, U64, U64, U32) -> F32x64
        = wgmma_mma!("m64n128k32.f32.e5m2.e5m2"),
        memory ReadWrite, sm 90, ptx 80, convergent, arch_specific;
    /// 64 × 256 `D` += e5m2 `A` (64 × 32) · e5m2 `B` (32 × 256): `m64n256k32.f32.e5m2.e5m2`.
    wgmma_m64n256k32_f32_e5m2: wgmma::raw::mma_m64n256k32_f32_e5m2(F32x128, U64, U64, U32)
        -> F32x128
        = wgmma_mma!("m64n256k32.f32.e5m2.e5m2"),
        memory ReadWrite, sm 90, ptx 80, convergent, arch_specific;
    /// 64 × 64 `D` += e4m3 `A` (64 × 32) · e5m2 `B` (32 × 64): `m64n64k32.f32.e4m3.e5m2`.
    wgmma_m64n64k32_f32_e4m3_e5m2: wgmma::raw::mma_m64n64k32_f32_e4m3_e5m2(F32x32, U64, U64, U32)
        -> F32x32
        = wgmma_mma!("m64n64k32.f32.e4m3.e5m2"),
        memory ReadWrite, sm 90, ptx 80, convergent, arch_specific;
    /// 64 × 128 `D` += e4m3 `A` (64 × 32) · e5m2 `B` (32 × 128): `m64n128k32.f32.e4m3.e5m2`.
    wgmma_m64n128k32_f32_e4m3_e5m2: wgmma::raw::mma_m64n128k32_f32_e4m3_e5m2(F32x64, U64, U64, U32)
        -> F32x64
        = wgmma_mma!("m64n128k32.f32.e4m3.e5m2"),
        memory ReadWrite, sm 90, ptx 80, convergent, arch_specific;
    /// 64 × 256 `D` += e4m3 `A` (64 × 32) · e5m2 `B` (32 × 256): `m64n256k32.f32.e4m3.e5m2`.
    wgmma_m64n256k32_f32_e4m3_e5m2: wgmma::raw::mma_m64n256k32_f32_e4m3_e5m2(F32x128, U64, U64, U32)
        -> F32x128
        = wgmma_mma!("m64n256k32.f32.e4m3.e5m2"),
        memory ReadWrite, sm 90, ptx 80, convergent, arch_specific;
    /// 64 × 64 `D` += e5m2 `A` (64 × 32) · e4m3 `B` (32 × 64): `m64n64k32.f32.e5m2.e4m3`.
    wgmma_m64n64k32_f32_e5m2_e4m3: wgmma::raw::mma_m64n64k32_f32_e5m2_e4m3(F32x32, U64, U64, U32)
        -> F32x32
        = wgmma_mma!("m64n64k32.f32.e5m2.e4m3"),
        memory ReadWrite, sm 90, ptx 80, convergent, arch_specific;
    /// 64 × 128 `D` += e5m2 `A` (64 × 32) · e4m3 `B` (32 × 128): `m64n128k32.f32.e5m2.e4m3`.
    wgmma_m64n128k32_f32_e5m2_e4m3: wgmma::raw::mma_m64n128k32_f32_e5m2_e4m3(F32x64, U64, U64, U32)
        -> F32x64
        = wgmma_mma!("m64n128k32.f32.e5m2.e4m3"),
        memory ReadWrite, sm 90, ptx 80, convergent, arch_specific;
    /// 64 × 256 `D` += e5m2 `A` (64 × 32) · e4m3 `B` (32 × 256): `m64n256k32.f32.e5m2.e4m3`.
    wgmma_m64n256k32_f32_e5m2_e4m3: wgmma::raw::mma_m64n256k32_f32_e5m2_e4m3(F32x128, U64, U64, U32)
        -> F32x128
        = wgmma_mma!("m64n256k32.f32.e5m2.e4m3"),
        memory ReadWrite, sm 90, ptx 80, convergent, arch_specific;

    // Thread-block clusters (sm_90). A launch without clusters is a cluster of one block.

    /// The block's rank within its cluster (`%cluster_ctarank`).
    read_ptx_sreg_cluster_ctarank: cluster::block_rank() -> U32
        = ptx("mov.u32 $0, %cluster_ctarank;", "=r"), memory None, sm 90, ptx 78;
    /// The number of blocks of the cluster (`%cluster_nctarank`).
    read_ptx_sreg_cluster_nctarank: cluster::num_blocks() -> U32
        = ptx("mov.u32 $0, %cluster_nctarank;", "=r"), memory None, sm 90, ptx 78;
    /// The cluster's x index within the grid (`%clusterid.x`).
    read_ptx_sreg_clusterid_x: cluster::clusterIdx_x() -> U32
        = ptx("mov.u32 $0, %clusterid.x;", "=r"), memory None, sm 90, ptx 78;
    /// The cluster's y index within the grid (`%clusterid.y`).
    read_ptx_sreg_clusterid_y: cluster::clusterIdx_y() -> U32
        = ptx("mov.u32 $0, %clusterid.y;", "=r"), memory None, sm 90, ptx 78;
    /// The cluster's z index within the grid (`%clusterid.z`).
    read_ptx_sreg_clusterid_z: cluster::clusterIdx_z() -> U32
        = ptx("mov.u32 $0, %clusterid.z;", "=r"), memory None, sm 90, ptx 78;
    /// Blocks per cluster along x (`%cluster_nctaid.x`).
    read_ptx_sreg_cluster_nctaid_x: cluster::clusterDim_x() -> U32
        = ptx("mov.u32 $0, %cluster_nctaid.x;", "=r"), memory None, sm 90, ptx 78;
    /// The block's x index within its cluster (`%cluster_ctaid.x`).
    read_ptx_sreg_cluster_ctaid_x: cluster::blockIdx_in_cluster_x() -> U32
        = ptx("mov.u32 $0, %cluster_ctaid.x;", "=r"), memory None, sm 90, ptx 78;
    /// Arrives at the cluster barrier (release) without waiting
    /// (`barrier.cluster.arrive.release.aligned`).
    barrier_cluster_arrive: cluster::raw::arrive()
        = ptx("barrier.cluster.arrive.release.aligned;", ""), memory ReadWrite, sm 90, ptx 80,
        convergent;
    /// Waits until every thread of the cluster has arrived (acquire)
    /// (`barrier.cluster.wait.acquire.aligned`).
    barrier_cluster_wait: cluster::raw::wait()
        = ptx("barrier.cluster.wait.acquire.aligned;", ""), memory ReadWrite, sm 90, ptx 80,
        convergent;
    /// The generic address of the variable at generic address `addr` in this block's shared
    /// memory, in the shared memory of block `rank` of the cluster (`mapa.u64`; distributed
    /// shared memory).
    mapa_u64: cluster::raw::map_shared(U64, U32) -> U64
        = ptx("mapa.u64 $0, $1, $2;", "=l,l,r"), memory None, sm 90, ptx 78;
    /// Orders this thread's memory accesses for the threads of its cluster
    /// (`fence.acq_rel.cluster`).
    fence_acq_rel_cluster: cluster::fence()
        = ptx("fence.acq_rel.cluster;", ""), memory ReadWrite, sm 90, ptx 78;

    // Register reallocation between warpgroups (sm_90a). The kernel needs a register cap at
    // entry (`#[launch_bounds(threads, 1)]`), and each warpgroup runs one of them together.

    /// Raises this warpgroup's registers per thread to 232 (`setmaxnreg.inc.sync.aligned.u32
    /// 232`).
    setmaxnreg_inc_232: warpgroup::raw::increase_registers_232()
        = ptx("setmaxnreg.inc.sync.aligned.u32 232;", ""), memory ReadWrite, sm 90, ptx 80,
        convergent, arch_specific;
    /// Raises this warpgroup's registers per thread to 240 (`setmaxnreg.inc.sync.aligned.u32
    /// 240`).
    setmaxnreg_inc_240: warpgroup::raw::increase_registers_240()
        = ptx("setmaxnreg.inc.sync.aligned.u32 240;", ""), memory ReadWrite, sm 90, ptx 80,
        convergent, arch_specific;
    /// Lowers this warpgroup's registers per thread to 40 (`setmaxnreg.dec.sync.aligned.u32
    /// 40`).
    setmaxnreg_dec_40: warpgroup::raw::decrease_registers_40()
        = ptx("setmaxnreg.dec.sync.aligned.u32 40;", ""), memory ReadWrite, sm 90, ptx 80,
        convergent, arch_specific;
    /// Lowers this warpgroup's registers per thread to 24 (`setmaxnreg.dec.sync.aligned.u32
    /// 24`).
    setmaxnreg_dec_24: warpgroup::raw::decrease_registers_24()
        = ptx("setmaxnreg.dec.sync.aligned.u32 24;", ""), memory ReadWrite, sm 90, ptx 80,
        convergent, arch_specific;

    // Time.

    /// The SM's 32-bit cycle counter (`clock()`, `%clock`).
    read_ptx_sreg_clock: time::clock() -> U32
        = llvm("llvm.nvvm.read.ptx.sreg.clock", &[]), memory ReadWrite, sm 20, ptx 10;
    /// The SM's 64-bit cycle counter (`clock64()`, `%clock64`).
    read_ptx_sreg_clock64: time::clock64() -> U64
        = llvm("llvm.nvvm.read.ptx.sreg.clock64", &[]), memory ReadWrite, sm 20, ptx 20;
    /// A global nanosecond timer (`%globaltimer`).
    read_ptx_sreg_globaltimer: time::globaltimer() -> U64
        = llvm("llvm.nvvm.read.ptx.sreg.globaltimer", &[]), memory ReadWrite, sm 30, ptx 31;
    /// Suspends the thread for about `ns` nanoseconds, at most one millisecond
    /// (`__nanosleep(ns)`, `nanosleep.u32`).
    nanosleep: time::nanosleep(U32)
        = llvm("llvm.nvvm.nanosleep", &[Operand(0)]), memory ReadWrite, sm 70, ptx 63;

    // Errors.

    /// Aborts the kernel: the launch fails (`__trap()`, `trap`).
    trap: trap()
        = llvm("llvm.trap", &[]), memory ReadWrite, sm 20, ptx 10;
}

/// The intrinsics by name and by stub path, built once from [ALL].
struct Index {
    by_name: HashMap<&'static str, &'static Intrinsic>,
    by_path: HashMap<&'static str, &'static Intrinsic>,
}

fn index() -> &'static Index {
    static INDEX: OnceLock<Index> = OnceLock::new();
    INDEX.get_or_init(|| Index {
        by_name: ALL.iter().map(|i| (i.name, *i)).collect(),
        by_path: ALL.iter().map(|i| (i.rust_path, *i)).collect(),
    })
}

/// The intrinsic printed as `name`.
pub fn by_name(name: &str) -> Option<&'static Intrinsic> {
    index().by_name.get(name).copied()
}

/// The intrinsic whose `cuda_device` stub has this fully qualified path.
pub fn by_rust_path(path: &str) -> Option<&'static Intrinsic> {
    index().by_path.get(path).copied()
}
