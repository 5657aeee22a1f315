//! What one GPU intrinsic is: the vocabulary of the declarations in [crate::table].
//!
//! An [Intrinsic] says everything the compiler needs about one GPU instruction: the Rust path of
//! its `cuda_device` stub (the importer's dispatch key), its operand and result types (the
//! verifier's contract for `nvvm.intrinsic`), what it becomes in LLVM IR ([Lowering]), whether
//! it is convergent, its [Memory] effects, and the oldest `sm_` and PTX ISA that have it.

use pliron::{
    builtin::types::{FP32Type, FP64Type, IntegerType, Signedness},
    context::Context,
    r#type::TypeHandle,
};

/// A type of an intrinsic's operands or result, as the Rust stub spells it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scalar {
    /// `bool`: `i1` as a value.
    Bool,
    /// `u32`.
    U32,
    /// `i32`.
    I32,
    /// `u64`.
    U64,
    /// `i64`.
    I64,
    /// `f32`.
    F32,
    /// `f64`.
    F64,
    /// `[f32; 32]`: the f32 accumulator fragment of a warpgroup's 64 × 64 tile (one per
    /// thread). In inline PTX it is 32 registers, written `{$a, ..., $b}` where the template
    /// says `$n`; a result of this type is an `"=f"` per element, and an operand whose
    /// constraint is `"0"` is tied element by element to the result.
    F32x32,
    /// `[f32; 64]`: the accumulator fragment of a 64 × 128 tile (see [Scalar::F32x32]).
    F32x64,
    /// `[f32; 128]`: the accumulator fragment of a 64 × 256 tile (see [Scalar::F32x32]).
    F32x128,
}

impl Scalar {
    /// The Rust name of the type.
    pub fn rust_name(self) -> &'static str {
        match self {
            Scalar::Bool => "bool",
            Scalar::U32 => "u32",
            Scalar::I32 => "i32",
            Scalar::U64 => "u64",
            Scalar::I64 => "i64",
            Scalar::F32 => "f32",
            Scalar::F64 => "f64",
            Scalar::F32x32 => "[f32; 32]",
            Scalar::F32x64 => "[f32; 64]",
            Scalar::F32x128 => "[f32; 128]",
        }
    }

    /// The number of elements of an array type (`Some(32)` for [Scalar::F32x32]), `None` for a
    /// scalar.
    pub fn array_len(self) -> Option<u64> {
        match self {
            Scalar::F32x32 => Some(32),
            Scalar::F32x64 => Some(64),
            Scalar::F32x128 => Some(128),
            _ => None,
        }
    }

    /// The dialect-mir type of a value of this type (pliron's builtin integer and float types,
    /// signed or unsigned as in Rust, `bool` the signless `i1`).
    pub fn mir_type(self, ctx: &Context) -> TypeHandle {
        let int = |ctx: &Context, width, signedness| -> TypeHandle {
            IntegerType::get(ctx, width, signedness).into()
        };
        match self {
            Scalar::Bool => int(ctx, 1, Signedness::Signless),
            Scalar::U32 => int(ctx, 32, Signedness::Unsigned),
            Scalar::I32 => int(ctx, 32, Signedness::Signed),
            Scalar::U64 => int(ctx, 64, Signedness::Unsigned),
            Scalar::I64 => int(ctx, 64, Signedness::Signed),
            Scalar::F32 => FP32Type::get(ctx).into(),
            Scalar::F64 => FP64Type::get(ctx).into(),
            Scalar::F32x32 | Scalar::F32x64 | Scalar::F32x128 => {
                let len = self.array_len().expect("an array scalar has a length");
                let elem = FP32Type::get(ctx).into();
                dialect_mir::types::ArrayType::get(ctx, elem, len).into()
            }
        }
    }

    /// Whether `ty` is the dialect-mir type of this scalar.
    pub fn is_type_of(self, ctx: &Context, ty: TypeHandle) -> bool {
        let ty = ty.deref(ctx);
        let int = |width: u32, signedness: Signedness| {
            ty.downcast_ref::<IntegerType>()
                .is_some_and(|int| int.width() == width && int.signedness() == signedness)
        };
        match self {
            Scalar::Bool => int(1, Signedness::Signless),
            Scalar::U32 => int(32, Signedness::Unsigned),
            Scalar::I32 => int(32, Signedness::Signed),
            Scalar::U64 => int(64, Signedness::Unsigned),
            Scalar::I64 => int(64, Signedness::Signed),
            Scalar::F32 => ty.is::<FP32Type>(),
            Scalar::F64 => ty.is::<FP64Type>(),
            Scalar::F32x32 | Scalar::F32x64 | Scalar::F32x128 => ty
                .downcast_ref::<dialect_mir::types::ArrayType>()
                .is_some_and(|array| {
                    Some(array.len()) == self.array_len()
                        && array.elem().deref(ctx).is::<FP32Type>()
                }),
        }
    }
}

/// What an intrinsic does to memory. Ops with no effect (and their results unused) may be
/// deleted by dead-code elimination; the others never are. Inline PTX gets the matching LLVM
/// call attributes (`memory(none)`, `memory(read)`, ...). Registers whose value changes by
/// itself (clocks, timers) are declared `ReadWrite` so that two reads are never merged.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Memory {
    /// Computes its result from its operands and the thread's identity only.
    None,
    /// Reads memory (or state that other threads change).
    Read,
    /// Writes memory.
    Write,
    /// Reads and writes memory, or orders other threads' accesses (barriers, fences, sleeps).
    ReadWrite,
}

/// An argument of an LLVM intrinsic call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Arg {
    /// Operand `n` of the `nvvm.intrinsic` op (the stub's argument `n`).
    Operand(usize),
    /// A 32-bit integer constant.
    I32(i32),
}

/// The full-warp member mask `0xffffffff` of the `.sync` warp instructions.
pub const FULL_MASK: Arg = Arg::I32(-1);

/// The scope of a memory fence.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FenceScope {
    /// The thread block (`.cta`; LLVM `syncscope("block")`).
    Block,
    /// The GPU (`.gpu`; LLVM `syncscope("device")`).
    Device,
    /// The whole system, host and peer GPUs included (`.sys`; LLVM's default scope).
    System,
}

/// What an intrinsic becomes in LLVM IR.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Lowering {
    /// A call of the LLVM intrinsic `name` (`llvm.nvvm.*`) with `args`; its return type is
    /// the intrinsic's result (or `void`).
    Llvm {
        /// The LLVM intrinsic.
        name: &'static str,
        /// Its arguments: the op's operands and fixed constants.
        args: &'static [Arg],
    },
    /// Inline PTX: `template` (`$0` the result if any, then the operands) with LLVM's
    /// constraint string (`"=r,r"`; `b` is a predicate, `l` a 64-bit register). A memory
    /// clobber is added when the intrinsic touches memory.
    Ptx {
        /// The PTX text.
        template: &'static str,
        /// The LLVM constraints of the result and the operands, in order.
        constraints: &'static str,
    },
    /// The LLVM instruction `fence seq_cst` at `scope` (PTX `fence.sc.<scope>`, `membar` on
    /// targets before sm_70).
    Fence(FenceScope),
}

/// A call of the LLVM intrinsic `name` with `args`.
pub const fn llvm(name: &'static str, args: &'static [Arg]) -> Lowering {
    Lowering::Llvm { name, args }
}

/// Inline PTX `template` with the LLVM `constraints`.
pub const fn ptx(template: &'static str, constraints: &'static str) -> Lowering {
    Lowering::Ptx {
        template,
        constraints,
    }
}

/// A sequentially consistent LLVM `fence` at `scope`.
pub const fn fence(scope: FenceScope) -> Lowering {
    Lowering::Fence(scope)
}

/// One GPU intrinsic: everything the importer, the `nvvm.intrinsic` op and the lowering need.
/// Declared once, in [crate::table].
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct Intrinsic {
    /// The name that `nvvm.intrinsic` prints (`shfl_sync_idx_i32`).
    pub name: &'static str,
    /// The fully qualified path of the `cuda_device` stub (`cuda_device::warp::shuffle_b32`).
    pub rust_path: &'static str,
    /// The operand types, in the stub's argument order.
    pub operands: &'static [Scalar],
    /// The result type; `None` for a stub returning `()` (or `!`).
    pub result: Option<Scalar>,
    /// What it becomes in LLVM IR.
    pub lowering: Lowering,
    /// Whether every thread of a warp or block must execute it together: the LLVM call is
    /// marked `convergent`, so optimisations never make it depend on more control flow.
    pub convergent: bool,
    /// Its memory effects.
    pub memory: Memory,
    /// The oldest GPU architecture that has it (`80` for sm_80).
    pub min_sm: u32,
    /// Whether it belongs to the architecture-specific feature set of `min_sm` (`sm_90a`'s
    /// `wgmma`, `setmaxnreg`): only a target of exactly that architecture with the `a` suffix
    /// has it, not a newer one and not plain `sm_90`.
    pub arch_specific: bool,
    /// The oldest PTX ISA version that has it (`70` for PTX ISA 7.0).
    pub min_ptx: u32,
    /// What it does, from the declaration's doc comment.
    pub doc: &'static str,
}

impl Intrinsic {
    /// Whether the op may be deleted when its result is unused.
    pub fn has_side_effects(&self) -> bool {
        self.memory != Memory::None
    }
}
