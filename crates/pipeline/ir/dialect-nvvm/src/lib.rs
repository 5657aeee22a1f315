//! The `nvvm` dialect: NVIDIA GPU instructions that have no Rust equivalent (see
//! `docs/device-ir.md`).
//!
//! Every GPU intrinsic is declared once, in [table]: the path of its `cuda_device` stub, its
//! operand and result types, what it becomes in LLVM IR, whether it is convergent, its memory
//! effects, and the oldest `sm_`/PTX ISA that has it ([intrinsic] holds that vocabulary). One
//! op, [IntrinsicOp] (`nvvm.intrinsic`), executes any of them and is verified against the
//! declaration; the importer finds declarations by stub path ([by_rust_path]) and `mir-lower`
//! lowers the op from the declaration alone. [target] knows architectures and PTX ISA
//! versions.
//!
//! The op and its attribute register themselves in each new [Context] when this crate is
//! linked; [register] does it explicitly (and makes sure the crate is linked).

use pliron::{
    attribute::Attribute,
    context::Context,
    dialect::{Dialect, DialectName},
    op::Op,
};

pub mod intrinsic;
pub mod op;
pub mod table;
pub mod target;

pub use intrinsic::{Intrinsic, Lowering, Memory, Scalar};
pub use op::{IntrinsicAttr, IntrinsicOp, NvvmVerifyErr};
pub use table::{by_name, by_rust_path};
pub use target::{Target, TargetTooOld, required_ptx_isa};

/// The name of the dialect.
pub const DIALECT_NAME: &str = "nvvm";

/// Register the `nvvm` dialect, its op and attribute in `ctx` (idempotent).
pub fn register(ctx: &mut Context) {
    let name = DialectName::try_new(DIALECT_NAME).expect("a valid dialect name");
    Dialect::register(ctx, &name);
    IntrinsicAttr::register(ctx);
    IntrinsicOp::register(ctx);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_paths_are_unique_and_stubs_live_in_cuda_device() {
        for (i, intrinsic) in table::ALL.iter().enumerate() {
            assert!(
                intrinsic.rust_path.starts_with("cuda_device::"),
                "{}",
                intrinsic.rust_path
            );
            for other in &table::ALL[i + 1..] {
                assert_ne!(intrinsic.name, other.name, "name listed twice");
                assert_ne!(intrinsic.rust_path, other.rust_path, "stub listed twice");
            }
            assert_eq!(by_name(intrinsic.name), Some(*intrinsic));
            assert_eq!(by_rust_path(intrinsic.rust_path), Some(*intrinsic));
        }
    }

    #[test]
    fn declarations_are_consistent() {
        for intrinsic in table::ALL {
            let name = intrinsic.name;
            assert!(!intrinsic.doc.trim().is_empty(), "{name} has no doc");
            // Without a result, an op without side effects would be deleted as dead code.
            assert!(
                intrinsic.result.is_some() || intrinsic.has_side_effects(),
                "{name} neither returns a value nor has an effect"
            );
            assert!(intrinsic.min_sm >= 20 && intrinsic.min_ptx >= 10, "{name}");
            match intrinsic.lowering {
                Lowering::Llvm { name: llvm, args } => {
                    assert!(llvm.starts_with("llvm."), "{name}: {llvm}");
                    for arg in args {
                        if let intrinsic::Arg::Operand(n) = arg {
                            assert!(*n < intrinsic.operands.len(), "{name}: operand {n}");
                        }
                    }
                }
                Lowering::Ptx { constraints, .. } => {
                    let expected =
                        intrinsic.operands.len() + usize::from(intrinsic.result.is_some());
                    let declared = if constraints.is_empty() {
                        0
                    } else {
                        constraints.split(',').count()
                    };
                    assert_eq!(declared, expected, "{name}: {constraints}");
                }
                Lowering::Fence(_) => assert!(
                    intrinsic.operands.is_empty() && intrinsic.result.is_none(),
                    "{name}"
                ),
            }
        }
    }

    #[test]
    fn lookups_are_exact() {
        assert_eq!(
            by_rust_path("cuda_device::thread::blockDim_y").map(|i| i.name),
            Some("read_ptx_sreg_ntid_y")
        );
        assert!(by_rust_path("cuda_device::thread::index_1d").is_none());
        assert!(by_rust_path("other::thread::threadIdx_x").is_none());
        assert!(by_name("read_ptx_sreg_tid_w").is_none());
    }
}
