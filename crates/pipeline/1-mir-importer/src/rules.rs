//! What the importer tells the collector (`rustc_codegen_cuda::collector` and its crate rules)
//! about the functions device code reaches: which ones it translates itself rather than
//! compiling their bodies, which it replaces, and which panic functions it calls. The collector
//! asks here, never the translator's modules, so the two agree without knowing each other's
//! internals.

use rustc_middle::ty::{Instance, TyCtxt};

use crate::translator;

/// What device code does with an intrinsic of `core` (see [translator::core_intrinsic]).
pub use translator::core_intrinsic::Decision as IntrinsicDecision;

/// The device function a host-only function's body calls with its message, which the
/// collector collects beside each host-only function.
pub const HOST_ONLY_PANIC: &str = translator::body::HOST_ONLY_PANIC;

/// Whether `instance` is a formatting trait's `fmt` method, whose address is a descriptor in
/// device code that panics with messages and does not format ([translator::fmt_descriptor]).
pub fn is_fmt_method<'tcx>(tcx: TyCtxt<'tcx>, instance: Instance<'tcx>) -> bool {
    translator::fmt_descriptor::is_fmt_method(tcx, instance)
}

/// The panic function an `Assert` that fails with `msg` calls, as rustc's backends choose it.
pub fn assert_panic_function<O>(
    msg: &rustc_middle::mir::AssertKind<O>,
) -> rustc_hir::lang_items::LangItem {
    translator::panic_policy::assert_panic_function(msg)
}

/// What device code does with the `core` intrinsic `name`, if the importer knows it.
pub fn intrinsic_decision(name: &str) -> Option<IntrinsicDecision> {
    translator::core_intrinsic::decision(name)
}

/// Whether the function at `path` is a C math function (`std::sys::cmath::tanf`) that the
/// importer computes with libdevice.
pub fn is_c_math_function(path: &str) -> bool {
    translator::math::c_math_function(path).is_some()
}

/// Whether the function at `path` is a GPU intrinsic stub of `cuda_device`.
pub fn is_intrinsic_stub(path: &str) -> bool {
    crate::intrinsics::is_intrinsic(path)
}

/// Whether the `core` function at `path` is a UB-check gate or a precondition check.
pub fn is_ub_check(path: &str) -> bool {
    crate::ub_checks::is_ub_check(path)
}

/// The path of the device version of the function at `path` (`cuda_device::shims`), if it
/// has one.
pub fn device_version(path: &str) -> Option<&'static str> {
    crate::shims::shim_for(path)
}
