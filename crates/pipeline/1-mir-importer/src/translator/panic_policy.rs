//! The panic decisions that need no translator: which panic function a failed `Assert` calls,
//! which functions of the panic recorder stay out of line, and when a function's failed checks
//! share their failure blocks. [super::panic] builds the failure edges from them.

use rustc_middle::ty;
use rustc_public::mir::TerminatorKind;
use rustc_public::mir::mono::Instance;
use rustc_public::rustc_internal::internal;

/// The panic function an `Assert` that fails with `msg` calls, as rustc's backends choose it.
pub fn assert_panic_function<O>(
    msg: &rustc_middle::mir::AssertKind<O>,
) -> rustc_hir::lang_items::LangItem {
    use rustc_hir::lang_items::LangItem;
    use rustc_middle::mir::AssertKind;
    match msg {
        AssertKind::BoundsCheck { .. } => LangItem::PanicBoundsCheck,
        AssertKind::MisalignedPointerDereference { .. } => {
            LangItem::PanicMisalignedPointerDereference
        }
        other => other.panic_function(),
    }
}

/// Whether `instance` is one of the panic recorder's `#[inline(never)]` functions
/// (`cuda_device::panic`), which stay out of line (LLVM `noinline`, PTX `.noinline`) so that
/// the recorder is one copy per module, outside every kernel's body. Other functions'
/// `#[inline(never)]` is left to LLVM, as it always was (the `#[kernel(fmad)]` marker must
/// still disappear).
pub(crate) fn is_recorder_inline_never(instance: &Instance) -> bool {
    if !crate::naming::canonical_path(instance).contains("cuda_device::panic::") {
        return false;
    }
    ty::tls::with(|tcx| {
        let internal = internal(tcx, *instance);
        let ty::InstanceKind::Item(def_id) = internal.def else {
            return false;
        };
        matches!(
            tcx.codegen_fn_attrs(def_id).inline,
            rustc_hir::attrs::InlineAttr::Never
        )
    })
}

/// The number of `Assert` terminators above which a function's failed checks share one
/// failure block per panic function.
pub const SHARED_FAILURE_BLOCKS_ABOVE: usize = 256;

/// Whether the failed checks of `body` share their failure blocks (more than
/// [SHARED_FAILURE_BLOCKS_ABOVE] `Assert` terminators).
pub(crate) fn shares_failure_blocks(body: &rustc_public::mir::Body) -> bool {
    let checks = body
        .blocks
        .iter()
        .filter(|b| matches!(b.terminator.kind, TerminatorKind::Assert { .. }))
        .count();
    checks > SHARED_FAILURE_BLOCKS_ABOVE
}
