//! `nvvm` ops as calls of `llvm.nvvm.*` intrinsics. Barriers and warp shuffles are marked
//! `convergent`: every thread of the block / warp must reach them together, so no
//! optimisation may make them depend on more control flow than they already do.

use pliron::{context::Context, op::Op};
use pliron_llvm::types::VoidType;

use super::Rewrite;
use crate::{error::OpError, types::int_type};

/// The special registers read by `nvvm.read_ptx_sreg_*`.
#[derive(Clone, Copy, Debug)]
pub enum Sreg {
    TidX,
    TidY,
    TidZ,
    CtaidX,
    CtaidY,
    CtaidZ,
    NtidX,
    NtidY,
    NtidZ,
    NctaidX,
    NctaidY,
    NctaidZ,
    LaneId,
}

impl Sreg {
    /// The register's name in `llvm.nvvm.read.ptx.sreg.<name>`.
    fn name(self) -> &'static str {
        match self {
            Sreg::TidX => "tid.x",
            Sreg::TidY => "tid.y",
            Sreg::TidZ => "tid.z",
            Sreg::CtaidX => "ctaid.x",
            Sreg::CtaidY => "ctaid.y",
            Sreg::CtaidZ => "ctaid.z",
            Sreg::NtidX => "ntid.x",
            Sreg::NtidY => "ntid.y",
            Sreg::NtidZ => "ntid.z",
            Sreg::NctaidX => "nctaid.x",
            Sreg::NctaidY => "nctaid.y",
            Sreg::NctaidZ => "nctaid.z",
            Sreg::LaneId => "laneid",
        }
    }
}

/// `nvvm.read_ptx_sreg_*` -> `call i32 @llvm.nvvm.read.ptx.sreg.*()`.
pub fn sreg(_op: &dyn Op, ctx: &mut Context, rw: &mut Rewrite, reg: Sreg) -> Result<(), OpError> {
    let i32_ty = int_type(ctx, 32);
    let name = format!("llvm.nvvm.read.ptx.sreg.{}", reg.name());
    let value = rw.intrinsic(ctx, &name, i32_ty, vec![], false);
    rw.replace(ctx, vec![value]);
    Ok(())
}

/// `nvvm.barrier0` -> `call void @llvm.nvvm.barrier0() convergent` (LLVM 22 upgrades it to
/// `llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)`; LLVM 21 knows only this name).
pub fn barrier0(_op: &dyn Op, ctx: &mut Context, rw: &mut Rewrite) -> Result<(), OpError> {
    let void = VoidType::get(ctx).into();
    rw.intrinsic(ctx, "llvm.nvvm.barrier0", void, vec![], true);
    rw.erase(ctx);
    Ok(())
}

/// The warp shuffle modes.
#[derive(Clone, Copy, Debug)]
pub enum Shuffle {
    Idx,
    Bfly,
    Down,
    Up,
}

/// `nvvm.shfl_sync_*_i32` -> `llvm.nvvm.shfl.sync.*.i32(i32 -1, value, lane, clamp)`, the
/// full-warp mask, and the clamp of a 32-lane shuffle: 31 (`0x1f`), or 0 for `up`.
pub fn shuffle(
    _op: &dyn Op,
    ctx: &mut Context,
    rw: &mut Rewrite,
    mode: Shuffle,
) -> Result<(), OpError> {
    let (name, clamp) = match mode {
        Shuffle::Idx => ("idx", 31),
        Shuffle::Bfly => ("bfly", 31),
        Shuffle::Down => ("down", 31),
        Shuffle::Up => ("up", 0),
    };
    let (value, lane) = (rw.operand(ctx, 0), rw.operand(ctx, 1));
    let mask = rw.const_int(ctx, 32, u128::from(u32::MAX));
    let clamp = rw.const_int(ctx, 32, clamp);
    let i32_ty = int_type(ctx, 32);
    let result = rw.intrinsic(
        ctx,
        &format!("llvm.nvvm.shfl.sync.{name}.i32"),
        i32_ty,
        vec![mask, value, lane, clamp],
        true,
    );
    rw.replace(ctx, vec![result]);
    Ok(())
}
