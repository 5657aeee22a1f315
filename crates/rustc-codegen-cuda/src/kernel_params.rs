//! What a kernel's by-value parameters may hold, checked on each instantiation.
//!
//! A kernel's struct, tuple, closure and generic parameters are copied byte for byte into the
//! GPU's parameter space. `#[cuda_module]`'s launcher requires them to be `Copy + Send +
//! 'static`, which refuses what owns host memory (`Vec`, `Box`, `String`) and what borrows
//! from the host's stack. What the type system still accepts is a `'static` reference (`&str`
//! of a literal, a `&'static` to a host static or a leaked box) or a host function pointer:
//! a host address that the GPU cannot read. Only the monomorphised types show it (a closure's
//! captures, a generic argument), so the backend checks every kernel instance here and names
//! the capture or the field that holds such a value.

use rustc_hir::def_id::DefId;
use rustc_middle::ty::{self, Instance, Ty, TyCtxt, TypingEnv};
use rustc_span::Span;

/// A value inside a parameter that cannot reach the GPU.
struct HostValue<'tcx> {
    /// Where it is: `f`, `f.scale`, `f.table.0`.
    path: String,
    /// Its type.
    ty: Ty<'tcx>,
    /// Why the GPU cannot use it.
    why: &'static str,
    /// The closure that captures it, when a capture is the culprit.
    closure: Option<DefId>,
}

/// Reports every by-value parameter of a kernel instance in `kernels` that holds a host
/// address, and stops the build if there was one.
pub fn check_kernel_parameters<'tcx>(tcx: TyCtxt<'tcx>, kernels: &[Instance<'tcx>]) {
    let mut failed = false;
    for &kernel in kernels {
        let def_id = kernel.def_id();
        let signature = tcx
            .fn_sig(def_id)
            .instantiate(tcx, kernel.args)
            .skip_normalization();
        let signature = tcx.instantiate_bound_regions_with_erased(signature);
        // What a parameter is (a device buffer, a grid constant, a value) is decided by its
        // type as written: `value: T` instantiated with a `&[f32]` is a value holding a host
        // address, not a device buffer.
        let declared = tcx.fn_sig(def_id).skip_binder().skip_binder();
        let names = tcx.fn_arg_idents(def_id);
        for (index, (&param, written)) in signature
            .inputs()
            .iter()
            .zip(declared.inputs().iter())
            .enumerate()
        {
            let param = normalized(tcx, param);
            let name = names
                .get(index)
                .copied()
                .flatten()
                .map_or_else(|| format!("#{}", index + 1), |ident| ident.to_string());
            let passed_by_value = match (written.kind(), param.kind()) {
                // Device buffers, `&[T]` and `&mut [T]`.
                (ty::Ref(_, written, _), _) if matches!(written.kind(), ty::Slice(_)) => continue,
                // A grid constant: its value is copied.
                (ty::Ref(..), ty::Ref(_, pointee, _)) => *pointee,
                _ => param,
            };
            if let Some(host) = host_value(tcx, passed_by_value, name.clone(), None, 0) {
                report(tcx, kernel, &name, &host);
                failed = true;
            }
        }
    }
    if failed {
        tcx.dcx().abort_if_errors();
    }
}

/// `ty` with its projections resolved (`<Square as Shape>::Params` is `f32`).
fn normalized<'tcx>(tcx: TyCtxt<'tcx>, ty: Ty<'tcx>) -> Ty<'tcx> {
    tcx.normalize_erasing_regions(
        TypingEnv::fully_monomorphized(),
        ty::Unnormalized::new_wip(ty),
    )
}

/// The first part of `ty` (reached through `path`) that is a host address, if any.
fn host_value<'tcx>(
    tcx: TyCtxt<'tcx>,
    ty: Ty<'tcx>,
    path: String,
    closure: Option<DefId>,
    depth: usize,
) -> Option<HostValue<'tcx>> {
    // Types nest only as deep as they are written; this bounds a pathological one.
    if depth > 64 {
        return None;
    }
    let found = |why| {
        Some(HostValue {
            path: path.clone(),
            ty,
            why,
            closure,
        })
    };
    match ty.kind() {
        ty::Ref(..) => {
            found("a reference holds a host address: the GPU cannot read the memory it points to")
        }
        ty::FnPtr(..) => found(
            "a function pointer is the address of host code; pass the function itself (a `fn` \
             item) or a closure, which are compiled for the GPU",
        ),
        ty::Adt(def, _) if def.is_box() => {
            found("a `Box` owns host memory, which the GPU cannot read")
        }
        _ if ty.needs_drop(tcx, TypingEnv::fully_monomorphized()) => {
            found("it owns host resources (it has a destructor), which the GPU cannot use")
        }
        ty::Adt(def, args) => def.all_fields().find_map(|field| {
            let field_ty = normalized(tcx, field.ty(tcx, args).skip_normalization());
            host_value(
                tcx,
                field_ty,
                format!("{path}.{}", field.name),
                closure,
                depth + 1,
            )
        }),
        ty::Tuple(elements) => elements.iter().enumerate().find_map(|(i, element)| {
            host_value(tcx, element, format!("{path}.{i}"), closure, depth + 1)
        }),
        ty::Array(element, _) => {
            host_value(tcx, *element, format!("{path}[_]"), closure, depth + 1)
        }
        ty::Closure(def_id, args) => {
            let captures = def_id
                .as_local()
                .map(|local| tcx.closure_captures(local))
                .unwrap_or_default();
            args.as_closure()
                .upvar_tys()
                .iter()
                .enumerate()
                .find_map(|(i, capture)| {
                    let name = captures
                        .get(i)
                        .map_or_else(|| format!("capture #{}", i + 1), |c| c.to_string(tcx));
                    host_value(tcx, capture, name, Some(*def_id), depth + 1)
                })
        }
        _ => None,
    }
}

/// The error for `host`, found in parameter `param` of `kernel`: at the closure that captures
/// it, or at the kernel.
fn report<'tcx>(tcx: TyCtxt<'tcx>, kernel: Instance<'tcx>, param: &str, host: &HostValue<'tcx>) {
    let kernel_name = reserved_oxide_symbols::strip_all_reserved(
        &tcx.def_path_str_with_args(kernel.def_id(), kernel.args),
    );
    let (span, message): (Span, String) = match host.closure {
        Some(closure) => (
            tcx.def_span(closure),
            format!(
                "cuda-oxide: this closure, passed to kernel `{kernel_name}` as `{param}`, \
                 captures `{}` of type `{}`, which cannot go to the GPU",
                host.path, host.ty
            ),
        ),
        None if host.path == param => (
            tcx.def_span(kernel.def_id()),
            format!(
                "cuda-oxide: kernel `{kernel_name}` takes `{param}` of type `{}` by value, which \
                 cannot go to the GPU",
                host.ty
            ),
        ),
        None => (
            tcx.def_span(kernel.def_id()),
            format!(
                "cuda-oxide: kernel `{kernel_name}` takes `{param}` by value, and its `{}` is of \
                 type `{}`, which cannot go to the GPU",
                host.path, host.ty
            ),
        ),
    };
    tcx.dcx()
        .struct_span_err(span, message)
        .with_note(host.why)
        .with_note(
            "a kernel's by-value parameters (closures' captures included) are copied to the GPU \
             byte for byte when it is launched",
        )
        .with_help(
            "capture or pass plain values (numbers, `Copy` structs of them); give the kernel \
             device memory as a `&[T]` parameter",
        )
        .emit();
}
