//! Which functions take the location of their caller (`#[track_caller]`), and its type. The
//! signature of such a function and every call of it ask here; [super::caller_location]
//! supplies the value.

use rustc_public::mir::mono::Instance;
use rustc_public::rustc_internal::{internal, stable};
use rustc_public::ty::Ty;

/// Whether `instance` takes the location of its caller as a last, hidden parameter. For a
/// compiler intrinsic, whether its fallback body (called as an item) does.
pub(crate) fn requires_caller_location(instance: &Instance) -> bool {
    rustc_middle::ty::tls::with(|tcx| match internal(tcx, *instance).def {
        rustc_middle::ty::InstanceKind::Intrinsic(def_id) => {
            rustc_middle::ty::InstanceKind::Item(def_id).requires_caller_location(tcx)
        }
        def => def.requires_caller_location(tcx),
    })
}

/// The type of that parameter: `&'static Location<'static>`.
pub(crate) fn caller_location_ty() -> Ty {
    rustc_middle::ty::tls::with(|tcx| stable(tcx.caller_location_ty()))
}
