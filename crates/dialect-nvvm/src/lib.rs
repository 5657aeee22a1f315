//! The `nvvm` dialect: NVIDIA GPU operations that have no Rust equivalent (see
//! `docs/device-ir.md`). Each op becomes a call to an `llvm.nvvm.*` intrinsic (or
//! `llvm.trap`) in `mir-lower`.
//!
//! * special registers: `nvvm.read_ptx_sreg_{tid,ctaid,ntid,nctaid}_{x,y,z}` and
//!   `nvvm.read_ptx_sreg_laneid`, no operand, a `ui32` result;
//! * `nvvm.barrier0`: `bar.sync 0`, all threads of the block wait;
//! * `nvvm.shfl_sync_{idx,bfly,down,up}_i32`: a warp shuffle of a 32-bit `value` with a lane
//!   or offset operand, a `ui32` result (the lowering supplies the full-warp mask and clamp);
//! * `nvvm.trap`: aborts the kernel, a block terminator.
//!
//! Every op registers itself in each new [Context] when this crate is linked; [register] does
//! it explicitly (and makes sure the crate is linked).

use pliron::{
    builtin::{
        op_interfaces::{
            IsTerminatorInterface, NOpdsInterface, NResultsInterface, OneResultInterface,
        },
        types::{IntegerType, Signedness},
    },
    common_traits::Verify,
    context::Context,
    context::Ptr,
    derive::pliron_op,
    dialect::{Dialect, DialectName},
    op::Op,
    operation::Operation,
    printable::Printable,
    result::Result,
    r#type::{TypeHandle, Typed},
    value::Value,
    verify_err,
};
use thiserror::Error;

/// The name of the dialect.
pub const DIALECT_NAME: &str = "nvvm";

/// The `ui32` type of the special registers and shuffle results.
pub fn ui32_type(ctx: &Context) -> TypeHandle {
    IntegerType::get(ctx, 32, Signedness::Unsigned).into()
}

/// A verification failure of an `nvvm` op.
#[derive(Debug, Error)]
#[error("{op}: {what} must be {expected}, but has type {found}")]
pub struct NvvmVerifyErr {
    pub op: String,
    pub what: String,
    pub expected: String,
    pub found: String,
}

/// Fail unless `ty` is a 32-bit integer; `unsigned_only` also requires `ui32`.
fn expect_i32(
    op: &dyn Op,
    ctx: &Context,
    what: &str,
    ty: TypeHandle,
    unsigned_only: bool,
) -> Result<()> {
    let ok = ty
        .deref(ctx)
        .downcast_ref::<IntegerType>()
        .is_some_and(|int_ty| int_ty.width() == 32 && (!unsigned_only || int_ty.is_unsigned()));
    if ok {
        return Ok(());
    }
    verify_err!(
        op.loc(ctx),
        NvvmVerifyErr {
            op: op.get_opid().to_string(),
            what: what.to_string(),
            expected: if unsigned_only {
                "ui32"
            } else {
                "a 32-bit integer"
            }
            .to_string(),
            found: ty.disp(ctx).to_string(),
        }
    )
}

/// Declare a special-register read: no operand, a `ui32` result.
macro_rules! sreg_op {
    ($name:ident, $opid:literal, $register:literal) => {
        #[doc = concat!("Reads the PTX special register `", $register, "` (`llvm.nvvm.read.ptx.sreg.*`).")]
        ///
        #[doc = concat!("Printed as `r = ", $opid, " : ui32`.")]
        #[pliron_op(
            name = $opid,
            format = "`: ` type($0)",
            interfaces = [NOpdsInterface<0>, OneResultInterface]
        )]
        pub struct $name;

        impl $name {
            /// Read the register.
            pub fn new(ctx: &mut Context) -> Self {
                let ty = ui32_type(ctx);
                let op = Operation::new(
                    ctx,
                    Self::get_concrete_op_info(),
                    vec![ty],
                    vec![],
                    vec![],
                    0,
                );
                Self { op }
            }

            /// The register value.
            pub fn result(&self, ctx: &Context) -> Value {
                self.get_result(ctx)
            }
        }

        impl Verify for $name {
            fn verify(&self, ctx: &Context) -> Result<()> {
                expect_i32(self, ctx, "result", self.result_type(ctx), true)
            }
        }

        #[pliron::derive::op_interface_impl]
        impl pliron::opts::dce::SideEffects for $name {
            fn has_side_effects(&self, _ctx: &Context) -> bool {
                false
            }
        }
    };
}

sreg_op!(ReadPtxSregTidXOp, "nvvm.read_ptx_sreg_tid_x", "%tid.x");
sreg_op!(ReadPtxSregTidYOp, "nvvm.read_ptx_sreg_tid_y", "%tid.y");
sreg_op!(ReadPtxSregTidZOp, "nvvm.read_ptx_sreg_tid_z", "%tid.z");
sreg_op!(
    ReadPtxSregCtaidXOp,
    "nvvm.read_ptx_sreg_ctaid_x",
    "%ctaid.x"
);
sreg_op!(
    ReadPtxSregCtaidYOp,
    "nvvm.read_ptx_sreg_ctaid_y",
    "%ctaid.y"
);
sreg_op!(
    ReadPtxSregCtaidZOp,
    "nvvm.read_ptx_sreg_ctaid_z",
    "%ctaid.z"
);
sreg_op!(ReadPtxSregNtidXOp, "nvvm.read_ptx_sreg_ntid_x", "%ntid.x");
sreg_op!(ReadPtxSregNtidYOp, "nvvm.read_ptx_sreg_ntid_y", "%ntid.y");
sreg_op!(ReadPtxSregNtidZOp, "nvvm.read_ptx_sreg_ntid_z", "%ntid.z");
sreg_op!(
    ReadPtxSregNctaidXOp,
    "nvvm.read_ptx_sreg_nctaid_x",
    "%nctaid.x"
);
sreg_op!(
    ReadPtxSregNctaidYOp,
    "nvvm.read_ptx_sreg_nctaid_y",
    "%nctaid.y"
);
sreg_op!(
    ReadPtxSregNctaidZOp,
    "nvvm.read_ptx_sreg_nctaid_z",
    "%nctaid.z"
);
sreg_op!(ReadPtxSregLaneIdOp, "nvvm.read_ptx_sreg_laneid", "%laneid");

/// Block-wide barrier `bar.sync 0` (`llvm.nvvm.barrier0`): every thread of the block waits
/// until all have reached it.
///
/// Printed as `nvvm.barrier0`.
#[pliron_op(
    name = "nvvm.barrier0",
    format = "",
    interfaces = [NOpdsInterface<0>, NResultsInterface<0>],
    verifier = "succ"
)]
pub struct Barrier0Op;

impl Barrier0Op {
    /// A barrier.
    pub fn new(ctx: &mut Context) -> Self {
        let op = Operation::new(ctx, Self::get_concrete_op_info(), vec![], vec![], vec![], 0);
        Self { op }
    }
}

/// Declare a warp shuffle: a 32-bit value and a lane / offset operand, a `ui32` result.
macro_rules! shfl_op {
    ($name:ident, $opid:literal, $mode:literal, $operand:literal) => {
        #[doc = concat!("Warp shuffle `shfl.sync.", $mode, ".b32` (`llvm.nvvm.shfl.sync.", $mode, ".i32`): reads `value` from the lane given by ", $operand, ". All 32 lanes take part; the lowering supplies the mask `0xffffffff` and the clamp.")]
        ///
        #[doc = concat!("Printed as `r = ", $opid, " value, lane : ui32`.")]
        ///
        /// | operand / result | type |
        /// |---------|------|
        /// | `value` | a 32-bit integer |
        /// | `lane` | a 32-bit integer |
        /// | `res` | `ui32` |
        #[pliron_op(
            name = $opid,
            format = "$0 `, ` $1 ` : ` type($0)",
            interfaces = [NOpdsInterface<2>, OneResultInterface]
        )]
        pub struct $name;

        impl $name {
            /// Shuffle `value` with the lane selector `lane`.
            pub fn new(ctx: &mut Context, value: Value, lane: Value) -> Self {
                let ty = ui32_type(ctx);
                let op = Operation::new(
                    ctx,
                    Self::get_concrete_op_info(),
                    vec![ty],
                    vec![value, lane],
                    vec![],
                    0,
                );
                Self { op }
            }

            /// The shuffled value.
            pub fn value(&self, ctx: &Context) -> Value {
                self.get_operation().deref(ctx).get_operand(0)
            }

            /// The lane selector (source lane, xor mask or offset).
            pub fn lane(&self, ctx: &Context) -> Value {
                self.get_operation().deref(ctx).get_operand(1)
            }

            /// The value read from the other lane.
            pub fn result(&self, ctx: &Context) -> Value {
                self.get_result(ctx)
            }
        }

        impl Verify for $name {
            fn verify(&self, ctx: &Context) -> Result<()> {
                expect_i32(self, ctx, "operand 0 (value)", self.value(ctx).get_type(ctx), false)?;
                expect_i32(self, ctx, "operand 1 (lane)", self.lane(ctx).get_type(ctx), false)?;
                expect_i32(self, ctx, "result", self.result_type(ctx), true)
            }
        }
    };
}

shfl_op!(ShflSyncIdxI32Op, "nvvm.shfl_sync_idx_i32", "idx", "`lane`");
shfl_op!(
    ShflSyncBflyI32Op,
    "nvvm.shfl_sync_bfly_i32",
    "bfly",
    "`lane_id ^ lane`"
);
shfl_op!(
    ShflSyncDownI32Op,
    "nvvm.shfl_sync_down_i32",
    "down",
    "`lane_id + lane`"
);
shfl_op!(
    ShflSyncUpI32Op,
    "nvvm.shfl_sync_up_i32",
    "up",
    "`lane_id - lane`"
);

/// Aborts the kernel (`llvm.trap`); a block terminator, nothing runs after it.
///
/// Printed as `nvvm.trap`.
#[pliron_op(
    name = "nvvm.trap",
    format = "",
    interfaces = [IsTerminatorInterface, NOpdsInterface<0>, NResultsInterface<0>],
    verifier = "succ"
)]
pub struct TrapOp;

impl TrapOp {
    /// A trap.
    pub fn new(ctx: &mut Context) -> Self {
        let op = Operation::new(ctx, Self::get_concrete_op_info(), vec![], vec![], vec![], 0);
        Self { op }
    }
}

/// A launch-coordinate special register, for [new_sreg_read].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SpecialRegister {
    /// `%tid`: the thread index within the block.
    Tid,
    /// `%ctaid`: the block index within the grid.
    Ctaid,
    /// `%ntid`: the block size.
    Ntid,
    /// `%nctaid`: the grid size.
    Nctaid,
}

/// A launch axis, for [new_sreg_read].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Axis {
    X,
    Y,
    Z,
}

/// A new (unlinked) read of `register` along `axis`; its result 0 is the `ui32` value.
pub fn new_sreg_read(ctx: &mut Context, register: SpecialRegister, axis: Axis) -> Ptr<Operation> {
    use {Axis::*, SpecialRegister::*};
    match (register, axis) {
        (Tid, X) => ReadPtxSregTidXOp::new(ctx).get_operation(),
        (Tid, Y) => ReadPtxSregTidYOp::new(ctx).get_operation(),
        (Tid, Z) => ReadPtxSregTidZOp::new(ctx).get_operation(),
        (Ctaid, X) => ReadPtxSregCtaidXOp::new(ctx).get_operation(),
        (Ctaid, Y) => ReadPtxSregCtaidYOp::new(ctx).get_operation(),
        (Ctaid, Z) => ReadPtxSregCtaidZOp::new(ctx).get_operation(),
        (Ntid, X) => ReadPtxSregNtidXOp::new(ctx).get_operation(),
        (Ntid, Y) => ReadPtxSregNtidYOp::new(ctx).get_operation(),
        (Ntid, Z) => ReadPtxSregNtidZOp::new(ctx).get_operation(),
        (Nctaid, X) => ReadPtxSregNctaidXOp::new(ctx).get_operation(),
        (Nctaid, Y) => ReadPtxSregNctaidYOp::new(ctx).get_operation(),
        (Nctaid, Z) => ReadPtxSregNctaidZOp::new(ctx).get_operation(),
    }
}

/// Which lane a warp shuffle reads from, for [new_shuffle].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ShuffleMode {
    /// From lane `lane` (`nvvm.shfl_sync_idx_i32`).
    Idx,
    /// From lane `lane_id ^ lane` (`nvvm.shfl_sync_bfly_i32`).
    Bfly,
    /// From lane `lane_id + lane` (`nvvm.shfl_sync_down_i32`).
    Down,
    /// From lane `lane_id - lane` (`nvvm.shfl_sync_up_i32`).
    Up,
}

/// A new (unlinked) warp shuffle of `value` in `mode`; its result 0 is the `ui32` value.
pub fn new_shuffle(
    ctx: &mut Context,
    mode: ShuffleMode,
    value: Value,
    lane: Value,
) -> Ptr<Operation> {
    match mode {
        ShuffleMode::Idx => ShflSyncIdxI32Op::new(ctx, value, lane).get_operation(),
        ShuffleMode::Bfly => ShflSyncBflyI32Op::new(ctx, value, lane).get_operation(),
        ShuffleMode::Down => ShflSyncDownI32Op::new(ctx, value, lane).get_operation(),
        ShuffleMode::Up => ShflSyncUpI32Op::new(ctx, value, lane).get_operation(),
    }
}

/// Register the `nvvm` dialect and its ops in `ctx` (idempotent).
pub fn register(ctx: &mut Context) {
    let name = DialectName::try_new(DIALECT_NAME).expect("a valid dialect name");
    Dialect::register(ctx, &name);
    macro_rules! register_ops {
        ($($op:ident),* $(,)?) => {
            $($op::register(ctx);)*
        };
    }
    register_ops!(
        ReadPtxSregTidXOp,
        ReadPtxSregTidYOp,
        ReadPtxSregTidZOp,
        ReadPtxSregCtaidXOp,
        ReadPtxSregCtaidYOp,
        ReadPtxSregCtaidZOp,
        ReadPtxSregNtidXOp,
        ReadPtxSregNtidYOp,
        ReadPtxSregNtidZOp,
        ReadPtxSregNctaidXOp,
        ReadPtxSregNctaidYOp,
        ReadPtxSregNctaidZOp,
        ReadPtxSregLaneIdOp,
        Barrier0Op,
        ShflSyncIdxI32Op,
        ShflSyncBflyI32Op,
        ShflSyncDownI32Op,
        ShflSyncUpI32Op,
        TrapOp,
    );
}
