//! What Rust's reference rules promise about a kernel parameter's memory
//! ([ParamAccess]): a `&[T]` of data without interior mutability is never written while the
//! kernel runs, a `&mut [T]` or `DisjointSlice<T>` is reached through that parameter only.
//! `mir-lower` turns these facts into LLVM's `noalias` and `readonly` (loads through a read-only
//! parameter become `ld.global.nc`).

use dialect_mir::ops::ParamAccess;
use rustc_public::mir::Mutability;
use rustc_public::ty::{RigidTy, Ty, TyKind};

/// The access promised by a kernel parameter of type `ty`.
pub(crate) fn param_access(ty: Ty) -> ParamAccess {
    match ty.kind() {
        TyKind::RigidTy(RigidTy::Ref(_, pointee, mutability)) => {
            let TyKind::RigidTy(RigidTy::Slice(elem)) = pointee.kind() else {
                return ParamAccess::Plain;
            };
            match mutability {
                Mutability::Mut => ParamAccess::Exclusive,
                Mutability::Not if is_freeze(elem) => ParamAccess::Shared,
                // `&[AtomicU32]`, `&[Cell<T>]`: shared, but written through.
                Mutability::Not => ParamAccess::Plain,
            }
        }
        TyKind::RigidTy(RigidTy::Adt(def, _)) if super::types::is_disjoint_slice(def) => {
            ParamAccess::Exclusive
        }
        _ => ParamAccess::Plain,
    }
}

/// Whether `ty` has no interior mutability (no `UnsafeCell` inside it), rustc's `Freeze`.
pub(crate) fn is_freeze(ty: Ty) -> bool {
    rustc_middle::ty::tls::with(|tcx| {
        let internal = rustc_public::rustc_internal::internal(tcx, ty);
        internal.is_freeze(tcx, rustc_middle::ty::TypingEnv::fully_monomorphized())
    })
}
