//! Finding the functions a crate's kernels need on the GPU.
//!
//! [`find_roots`] scans the crate's mono items for reserved names (`#[kernel]`, `#[device]`).
//! [`collect_device_functions`] then walks the MIR call graph breadth-first from those roots,
//! over `Call` and `Drop` terminators and every function whose address device code takes
//! (function pointers, vtables, pointers in constants and statics), applying the
//! [crate rules](crate::crate_rules). MIR of functions from other crates comes from their
//! metadata (`-Zalways-encode-mir`).

use std::collections::VecDeque;

use reserved_oxide_symbols::ReservedKind;
use rustc_data_structures::fx::FxHashSet;
use rustc_hir::def::DefKind;
use rustc_middle::mir::interpret::{AllocId, GlobalAlloc, Scalar};
use rustc_middle::mir::visit::Visitor as MirVisitor;
use rustc_middle::mir::{self, TerminatorKind};
use rustc_middle::mono::MonoItem;
use rustc_middle::ty::adjustment::PointerCoercion;
use rustc_middle::ty::print::{
    with_no_trimmed_paths, with_no_visible_paths, with_resolve_crate_name,
};
use rustc_middle::ty::{self, EarlyBinder, Instance, InstanceKind, TyCtxt, TypingEnv};
use rustc_span::Span;

use mir_importer::rules::{self, is_fmt_method};

use crate::crate_rules::{self, CalleeRule};

/// A function the device needs, with the reason it is needed.
#[derive(Copy, Clone, Debug)]
pub struct DeviceFunction<'tcx> {
    /// The monomorphised function.
    pub instance: Instance<'tcx>,
    /// Whether it is a GPU entry point.
    pub is_kernel: bool,
    /// The function (its index in the collected list) whose call first reached this one, and
    /// where that call is; `None` for a root.
    pub caller: Option<(usize, Span)>,
    /// Whether it exists only for the CPU ([CalleeRule::HostOnly]): not walked into, and a
    /// call to it traps.
    pub host_only: bool,
}

/// The device roots of the crate being compiled.
#[derive(Debug, Default)]
pub struct DeviceRoots<'tcx> {
    /// `#[kernel]` functions.
    pub kernels: Vec<Instance<'tcx>>,
    /// Non-generic `#[device]` functions defined in this crate.
    pub device_functions: Vec<Instance<'tcx>>,
}

impl DeviceRoots<'_> {
    /// Whether the crate has any device code at all.
    pub fn is_empty(&self) -> bool {
        self.kernels.is_empty() && self.device_functions.is_empty()
    }
}

/// Why a call from device code is refused.
#[derive(Debug)]
pub enum Forbidden {
    /// The callee's crate (named) may not be used on the GPU, for `reason`.
    Crate { name: String, reason: &'static str },
    /// The kernel's own crate calls a function that needs these CPU features, beyond the
    /// target's (dependencies may, behind CPU detection: see [CalleeRule::HostOnly]).
    CpuFeatures(String),
}

/// A call from device code that the crate rules forbid.
#[derive(Debug)]
pub struct ForbiddenCall<'tcx> {
    /// The forbidden function.
    pub callee: Instance<'tcx>,
    /// Why device code may not call it.
    pub why: Forbidden,
    /// Where the call is.
    pub span: Span,
    /// The chain of calls from a root to the forbidden function, root first, callee last.
    pub chain: Vec<Instance<'tcx>>,
    /// The index of the calling function in `collected`.
    pub caller: usize,
    /// The functions collected until then.
    pub collected: Vec<DeviceFunction<'tcx>>,
}

/// Scans the crate's mono items for reserved names. The result is sorted by symbol so that
/// output and generated code do not depend on hash order.
pub fn find_roots<'tcx>(tcx: TyCtxt<'tcx>) -> DeviceRoots<'tcx> {
    let partitions = tcx.collect_and_partition_mono_items(());
    let mut roots = DeviceRoots::default();
    for cgu in partitions.codegen_units {
        for item in cgu.items().keys() {
            let MonoItem::Fn(instance) = *item else {
                continue;
            };
            let InstanceKind::Item(def_id) = instance.def else {
                continue;
            };
            let Some(name) = tcx.opt_item_name(def_id) else {
                continue;
            };
            match reserved_oxide_symbols::kind_of(name.as_str()) {
                Some(ReservedKind::Kernel) => roots.kernels.push(instance),
                Some(ReservedKind::Device) => roots.device_functions.push(instance),
                Some(ReservedKind::DeviceExtern) | None => {}
            }
        }
    }
    let by_symbol = |i: &Instance<'tcx>| tcx.symbol_name(*i).name.to_owned();
    roots.kernels.sort_by_cached_key(by_symbol);
    roots.kernels.dedup();
    roots.device_functions.sort_by_cached_key(by_symbol);
    roots.device_functions.dedup();
    roots
}

/// Whether the crate defines a generic kernel (whose instantiations, if any, are roots).
pub fn defines_generic_kernels(tcx: TyCtxt<'_>) -> bool {
    tcx.hir_crate_items(()).definitions().any(|def_id| {
        tcx.def_kind(def_id) == DefKind::Fn
            && tcx.opt_item_name(def_id.to_def_id()).is_some_and(|name| {
                reserved_oxide_symbols::kind_of(name.as_str()) == Some(ReservedKind::Kernel)
            })
            && tcx.generics_of(def_id).requires_monomorphization(tcx)
    })
}

/// The PTX entry of an instantiation of a generic kernel (`None` for a concrete kernel): named
/// from its function item type as the host's launcher names it, with rustc's own `type_name`
/// and `TypeId` hash of that type (`reserved_oxide_symbols::generic_kernel_entry`).
pub fn generic_kernel_entry<'tcx>(tcx: TyCtxt<'tcx>, kernel: Instance<'tcx>) -> Option<String> {
    kernel.args.non_erasable_generics().next()?;
    let def_id = kernel.def_id();
    let item = tcx.item_name(def_id);
    let base_name = reserved_oxide_symbols::kernel_base_name(item.as_str())?;
    let item_type = ty::Ty::new_fn_def(tcx, def_id, kernel.args);
    let type_name = rustc_const_eval::util::type_name(tcx, item_type);
    // `TypeId`'s `Hash` writes the high 64 bits of this hash (`cuda_host`'s `entry_name`).
    let type_id = (tcx.type_id_hash(item_type).as_u128() >> 64) as u64;
    Some(reserved_oxide_symbols::generic_kernel_entry(
        base_name, &type_name, type_id,
    ))
}

/// The device code of a crate, as [collect_device_functions] finds it.
#[derive(Debug)]
pub struct DeviceCode<'tcx> {
    /// Every function to compile for the device, roots first, in breadth-first order.
    pub functions: Vec<DeviceFunction<'tcx>>,
    /// Whether device code formats for real: some function builds a `core::fmt::Formatter`
    /// (`core::fmt::write`, behind `write!` into a buffer), which calls formatting methods
    /// through their addresses. Those methods are then compiled, and a panic message finds
    /// their descriptors in a table (`mir_importer::translator::fmt_descriptor`); otherwise a
    /// formatting method's address is its descriptor and the method is not compiled.
    pub formats: bool,
}

/// Walks the call graph from `roots` and returns every function to compile for the device;
/// or the first call that breaks the crate rules.
pub fn collect_device_functions<'tcx>(
    tcx: TyCtxt<'tcx>,
    roots: &DeviceRoots<'tcx>,
    panic_messages: bool,
    check_messages: bool,
) -> Result<DeviceCode<'tcx>, Box<ForbiddenCall<'tcx>>> {
    let mut collected: Vec<DeviceFunction<'tcx>> = Vec::new();
    let mut seen: FxHashSet<Instance<'tcx>> = FxHashSet::default();
    let mut worklist = VecDeque::new();
    let mut formats = false;
    // Formatting methods whose addresses device code takes, kept until some function is found
    // to format for real (they are descriptors until then).
    let mut formatting_methods: Vec<(Instance<'tcx>, (usize, Span))> = Vec::new();
    let roots = roots
        .kernels
        .iter()
        .map(|&k| (k, true))
        .chain(roots.device_functions.iter().map(|&d| (d, false)));
    for (root, is_kernel) in roots {
        if seen.insert(root) {
            worklist.push_back(DeviceFunction {
                instance: root,
                is_kernel,
                caller: None,
                host_only: false,
            });
        }
    }

    while let Some(mut function) = worklist.pop_front() {
        // A dependency's function with a `thread_local!` is `std`'s thread-local storage:
        // host-only, like `std` itself (below).
        if !function.host_only
            && !function.instance.def_id().is_local()
            && has_mir(tcx, function.instance)
            && uses_thread_locals(tcx.instance_mir(function.instance.def))
        {
            function.host_only = true;
        }
        let index = collected.len();
        collected.push(function);
        let instance = function.instance;
        if function.host_only {
            // Its body is a panic saying what it is (`mir_importer`'s host-only bodies), with
            // panic messages; a foreign one's is a bare trap.
            if panic_messages
                && !tcx.is_foreign_item(instance.def_id())
                && let Some(def_id) = def_id_of_path(tcx, rules::HOST_ONLY_PANIC)
            {
                let panic = Instance::mono(tcx, def_id);
                let caller = (index, tcx.def_span(instance.def_id()));
                enqueue(&mut seen, &mut worklist, panic, caller, false);
            }
            continue;
        }
        if !has_mir(tcx, instance) {
            // No body to walk: the device pipeline reports the missing MIR for this function.
            continue;
        }
        let body = tcx.instance_mir(instance.def);
        let uses = callees(tcx, instance, body, panic_messages, check_messages);
        let mut pending: Vec<_> = uses
            .callees
            .into_iter()
            .map(|(callee, span, how)| (callee, index, span, how))
            .collect();
        if uses.builds_formatter && !formats {
            formats = true;
            pending.extend(
                formatting_methods
                    .drain(..)
                    .map(|(method, (caller, span))| (method, caller, span, Use::Address)),
            );
        }
        for (callee, caller, span, how) in pending {
            if seen.contains(&callee) {
                continue;
            }
            match (rule_for(tcx, callee), how) {
                (_, Use::FormattingMethod) if !formats => {
                    formatting_methods.push((callee, (caller, span)));
                }
                // A function whose address is taken must exist even where a call to it would
                // not be made (a panic traps instead, a UB check is off): its body is compiled
                // like any other. Intrinsic stubs have no address; the importer says so.
                (CalleeRule::Collect, _)
                | (CalleeRule::Panic | CalleeRule::UbCheck, Use::Address | Use::FormattingMethod) =>
                {
                    enqueue(&mut seen, &mut worklist, callee, (caller, span), false);
                }
                // The kernel's own code asks for a CPU feature the GPU does not claim: that is
                // an error at the call, not a trap (`core::arch`'s SSE4.1 and later, say).
                (CalleeRule::HostOnly, _)
                    if written_in_local_crate(tcx, span, false)
                        && !tcx.is_foreign_item(callee.def_id()) =>
                {
                    let why = Forbidden::CpuFeatures(missing_cpu_features(tcx, callee));
                    return Err(forbidden_call(collected, caller, callee, span, why));
                }
                (CalleeRule::HostOnly, _) => {
                    enqueue(&mut seen, &mut worklist, callee, (caller, span), true);
                }
                // With panic messages, a diverging function of `core` with MIR
                // (`panic_display::<T>`, `assert_failed::<T, U>`) is compiled: it leads to a
                // panic entry point, which has a device version. One without MIR and without a
                // device version traps (and every one does without panic messages).
                (CalleeRule::Panic, Use::Call)
                    if panic_messages
                        && tcx.crate_name(callee.def_id().krate).as_str() == "core"
                        && has_mir(tcx, callee) =>
                {
                    enqueue(&mut seen, &mut worklist, callee, (caller, span), false);
                }
                (
                    CalleeRule::IntrinsicStub
                    | CalleeRule::MathFunction
                    | CalleeRule::External
                    | CalleeRule::Panic
                    | CalleeRule::UbCheck,
                    _,
                ) => {}
                // `std` reached from a dependency: typically a path that run-time tests rule
                // out on the GPU (nalgebra's `matrixmultiply` calls for dynamically sized
                // matrices), so it is a host-only function, which the build names in a warning;
                // the kernel's own crate may not call `std` (below).
                (CalleeRule::Forbidden { .. }, _)
                    if !written_in_local_crate(tcx, span, true)
                        && tcx.crate_name(callee.def_id().krate).as_str() == "std" =>
                {
                    enqueue(&mut seen, &mut worklist, callee, (caller, span), true);
                }
                (CalleeRule::Forbidden { reason }, _) => {
                    let why = Forbidden::Crate {
                        name: tcx.crate_name(callee.def_id().krate).to_string(),
                        reason,
                    };
                    return Err(forbidden_call(collected, caller, callee, span, why));
                }
            }
        }
    }
    Ok(DeviceCode {
        functions: collected,
        formats,
    })
}

/// Queues `callee`, called from `caller` (its index in the collected list, and the call's
/// span), to be collected unless it was already seen.
fn enqueue<'tcx>(
    seen: &mut FxHashSet<Instance<'tcx>>,
    worklist: &mut VecDeque<DeviceFunction<'tcx>>,
    callee: Instance<'tcx>,
    caller: (usize, Span),
    host_only: bool,
) {
    if seen.insert(callee) {
        worklist.push_back(DeviceFunction {
            instance: callee,
            is_kernel: false,
            caller: Some(caller),
            host_only,
        });
    }
}

/// The refusal of the call of `callee` at `span` from `collected[caller]`, for `why`.
fn forbidden_call<'tcx>(
    collected: Vec<DeviceFunction<'tcx>>,
    caller: usize,
    callee: Instance<'tcx>,
    span: Span,
    why: Forbidden,
) -> Box<ForbiddenCall<'tcx>> {
    let mut chain = call_chain(&collected, caller);
    chain.push(callee);
    Box::new(ForbiddenCall {
        callee,
        why,
        span,
        chain,
        caller,
        collected,
    })
}

/// The functions from a root to `collected[index]`, root first.
pub fn call_chain<'tcx>(collected: &[DeviceFunction<'tcx>], index: usize) -> Vec<Instance<'tcx>> {
    let mut chain = vec![collected[index].instance];
    let mut cursor = index;
    while let Some((caller, _)) = collected[cursor].caller {
        chain.push(collected[caller].instance);
        cursor = caller;
    }
    chain.reverse();
    chain
}

/// Where the user's own code leads to `collected[index]`: the last call on the way from a root
/// that is made from a function of the crate being compiled (the deepest point of the chain
/// that the user wrote). `None` when `collected[index]` is itself in that crate, or nothing on
/// the way is.
pub fn user_call_site(collected: &[DeviceFunction<'_>], index: usize) -> Option<Span> {
    let is_local = |i: usize| collected[i].instance.def_id().is_local();
    let mut cursor = index;
    while !is_local(cursor) {
        let (caller, span) = collected[cursor].caller?;
        if is_local(caller) {
            return Some(span);
        }
        cursor = caller;
    }
    None
}

/// The fully qualified path of a function, crate name first (`app::helpers::square`).
pub fn fqdn(tcx: TyCtxt<'_>, def_id: rustc_hir::def_id::DefId) -> String {
    with_no_visible_paths!(with_no_trimmed_paths!(with_resolve_crate_name!(
        tcx.def_path_str(def_id)
    )))
}

/// The path of an instance with its generic arguments, crate name first, for messages; reserved
/// prefixes are removed so that users read the names they wrote.
pub fn instance_path<'tcx>(tcx: TyCtxt<'tcx>, instance: Instance<'tcx>) -> String {
    let path = with_no_visible_paths!(with_no_trimmed_paths!(with_resolve_crate_name!(
        tcx.def_path_str_with_args(instance.def_id(), instance.args)
    )));
    reserved_oxide_symbols::strip_all_reserved(&path)
}

fn rule_for<'tcx>(tcx: TyCtxt<'tcx>, callee: Instance<'tcx>) -> CalleeRule {
    match callee.def {
        // Compiler intrinsics become LLVM operations in the importer; a call through a vtable
        // calls what the vtable holds, collected where the vtable is built. Neither has a body.
        InstanceKind::Intrinsic(_) | InstanceKind::Virtual(..) => CalleeRule::IntrinsicStub,
        // An LLVM intrinsic that host code declares (`core::arch`'s `llvm.x86.sse.min.ps`): the
        // importer computes it at the call, or says why it cannot.
        InstanceKind::Item(def_id)
            if tcx.is_foreign_item(def_id) && tcx.symbol_name(callee).name.starts_with("llvm.") =>
        {
            CalleeRule::IntrinsicStub
        }
        _ => {
            let def_id = callee.def_id();
            let crate_name = tcx.crate_name(def_id.krate);
            let diverges = matches!(tcx.def_kind(def_id), DefKind::Fn | DefKind::AssocFn)
                && tcx
                    .fn_sig(def_id)
                    .skip_binder()
                    .output()
                    .skip_binder()
                    .is_never();
            // The crate rules first: a C math function of `std` is foreign but computed on
            // the GPU, a diverging one of `core` is a panic. Only a function they would compile
            // may be one that exists only for the host.
            match crate_rules::classify(crate_name.as_str(), &fqdn(tcx, def_id), diverges) {
                CalleeRule::Collect if is_host_only(tcx, callee) => CalleeRule::HostOnly,
                rule => rule,
            }
        }
    }
}

/// Whether `callee` exists only for the CPU: a foreign function (host machine code; not a
/// `#[device]` extern declaration, which the GPU provides), or a function that needs CPU
/// features the build's target does not have (`#[target_feature(enable = "avx2")]` on an
/// x86-64-v1 host). Crates reach both only behind run-time CPU detection, which answers "x86-64
/// baseline" on the GPU (`mir_importer::translator::x86::BASELINE_CPUID`): calling the second
/// kind on a CPU without the feature is undefined behaviour, and the first kind is host code.
fn is_host_only<'tcx>(tcx: TyCtxt<'tcx>, callee: Instance<'tcx>) -> bool {
    let InstanceKind::Item(def_id) = callee.def else {
        return false;
    };
    if tcx.is_foreign_item(def_id) {
        let name = tcx.item_name(def_id);
        return reserved_oxide_symbols::kind_of(name.as_str()) != Some(ReservedKind::DeviceExtern);
    }
    if !matches!(tcx.def_kind(def_id), DefKind::Fn | DefKind::AssocFn) {
        return false;
    }
    let enabled = &tcx.sess.target_features;
    tcx.codegen_fn_attrs(def_id)
        .target_features
        .iter()
        .any(|feature| !enabled.contains(&feature.name))
}

/// The CPU features `instance` needs beyond the build's target, comma-separated (empty for a
/// foreign function).
pub fn missing_cpu_features<'tcx>(tcx: TyCtxt<'tcx>, instance: Instance<'tcx>) -> String {
    let enabled = &tcx.sess.target_features;
    let missing: Vec<String> = tcx
        .codegen_fn_attrs(instance.def_id())
        .target_features
        .iter()
        .filter(|feature| {
            !enabled.contains(&feature.name)
                && feature.kind
                    != rustc_middle::middle::codegen_fn_attrs::TargetFeatureKind::Implied
        })
        .map(|feature| feature.name.to_string())
        .collect();
    missing.join(", ")
}

/// Whether the call at `span` is written in the crate being compiled, not in a dependency
/// whose function a release build inlined into it (the span is then still in the dependency's
/// source). A call that a macro of another crate wrote counts as the crate's own when
/// `macros_are_local` (`println!` writes `std::io::_print` where the user calls it), as that
/// crate's otherwise (`cpufeatures::new!` writes the `_xgetbv` behind its detection).
fn written_in_local_crate(tcx: TyCtxt<'_>, span: Span, macros_are_local: bool) -> bool {
    let span = if macros_are_local {
        span.source_callsite()
    } else {
        span
    };
    tcx.sess.source_map().lookup_source_file(span.lo()).cnum == rustc_hir::def_id::LOCAL_CRATE
}

/// Whether `body` reads the address of a `#[thread_local]` static (what `thread_local!`
/// expands to).
fn uses_thread_locals(body: &mir::Body<'_>) -> bool {
    body.basic_blocks.iter().any(|block| {
        block.statements.iter().any(|statement| {
            matches!(
                &statement.kind,
                mir::StatementKind::Assign(assign) if matches!(assign.1, mir::Rvalue::ThreadLocalRef(_))
            )
        })
    })
}

fn has_mir<'tcx>(tcx: TyCtxt<'tcx>, instance: Instance<'tcx>) -> bool {
    match instance.def {
        InstanceKind::Item(def_id) => {
            !tcx.is_foreign_item(def_id)
                && (tcx.is_mir_available(def_id)
                    || matches!(tcx.def_kind(def_id), DefKind::Ctor(..)))
        }
        InstanceKind::Intrinsic(_) | InstanceKind::Virtual(..) => false,
        _ => true,
    }
}

/// The blocks of `body` that device code can reach: unwind (cleanup) edges are never taken on
/// the GPU, where a panic traps (after recording its message when `panic_messages`), and a
/// branch on a runtime-checks flag only goes the way the device build decides (`ub_checks` and
/// `contract_checks` are off, as in a release `core`; `overflow_checks` follows the session).
/// Without panic messages, the blocks that can only panic are left out too (each becomes a
/// bare trap). The translator prunes the same way, so functions called only from dead checks
/// (`precondition_check`) are neither collected nor compiled.
fn device_reachable_blocks<'tcx>(
    tcx: TyCtxt<'tcx>,
    body: &mir::Body<'tcx>,
    panic_messages: bool,
) -> Vec<mir::BasicBlock> {
    let panic_bound = if panic_messages {
        rustc_index::bit_set::DenseBitSet::new_empty(body.basic_blocks.len())
    } else {
        panic_bound_blocks(tcx, body)
    };
    let mut seen = rustc_index::bit_set::DenseBitSet::new_empty(body.basic_blocks.len());
    let mut stack = vec![mir::START_BLOCK];
    let mut order = Vec::new();
    while let Some(block) = stack.pop() {
        if !seen.insert(block) {
            continue;
        }
        if panic_bound.contains(block) {
            continue;
        }
        order.push(block);
        let terminator = body.basic_blocks[block].terminator();
        if let TerminatorKind::SwitchInt {
            discr: mir::Operand::RuntimeChecks(check),
            targets,
        } = &terminator.kind
        {
            let enabled = match check {
                mir::RuntimeChecks::OverflowChecks => tcx.sess.overflow_checks(),
                mir::RuntimeChecks::UbChecks | mir::RuntimeChecks::ContractChecks => false,
            };
            stack.push(targets.target_for_value(u128::from(enabled)));
            continue;
        }
        let cleanup = match terminator.unwind() {
            Some(mir::UnwindAction::Cleanup(block)) => Some(*block),
            _ => None,
        };
        stack.extend(terminator.successors().filter(|s| Some(*s) != cleanup));
    }
    order
}

/// The blocks from which every path ends in a panic (a diverging call into `core`): the
/// translator turns each into one trap, so what they call (the panic message's formatting) is
/// never compiled and need not be collected.
fn panic_bound_blocks<'tcx>(
    tcx: TyCtxt<'tcx>,
    body: &mir::Body<'tcx>,
) -> rustc_index::bit_set::DenseBitSet<mir::BasicBlock> {
    let mut bound = rustc_index::bit_set::DenseBitSet::new_empty(body.basic_blocks.len());
    loop {
        let mut changed = false;
        for (block, data) in body.basic_blocks.iter_enumerated() {
            if bound.contains(block) {
                continue;
            }
            let terminator = data.terminator();
            let panics = match &terminator.kind {
                TerminatorKind::Call {
                    func, target: None, ..
                } => match *func.ty(body, tcx).kind() {
                    ty::FnDef(def_id, _) => {
                        matches!(tcx.crate_name(def_id.krate).as_str(), "core" | "alloc")
                    }
                    _ => false,
                },
                kind => {
                    let cleanup = match terminator.unwind() {
                        Some(mir::UnwindAction::Cleanup(b)) => Some(*b),
                        _ => None,
                    };
                    let mut successors =
                        kind.successors().filter(|s| Some(*s) != cleanup).peekable();
                    successors.peek().is_some() && successors.all(|s| bound.contains(s))
                }
            };
            if panics {
                bound.insert(block);
                changed = true;
            }
        }
        if !changed {
            return bound;
        }
    }
}

/// How device code reaches a function.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Use {
    /// A call, or the drop glue a `Drop` runs.
    Call,
    /// Its address is taken: a function pointer, a vtable entry, a pointer inside a constant.
    Address,
    /// The address of a formatting trait's `fmt` method is taken, with panic messages on: a
    /// descriptor unless device code formats for real ([DeviceCode::formats]).
    FormattingMethod,
}

/// What a body uses: see [callees].
struct BodyUses<'tcx> {
    /// The functions it calls, drops or takes the address of, with the span of the use.
    callees: Vec<(Instance<'tcx>, Span, Use)>,
    /// Whether it builds a `core::fmt::Formatter` (see [DeviceCode::formats]).
    builds_formatter: bool,
}

/// The functions `body` calls, drops or takes the address of, monomorphised for `instance`,
/// with the span of the use. Like rustc's own mono-item collector, it follows function items
/// reified to pointers, closures coerced to `fn`, unsizing coercions to `dyn Trait` (the
/// vtable's methods and drop glue) and every constant's allocation, recursively (functions,
/// vtables and the initialisers of the statics they point to).
fn callees<'tcx>(
    tcx: TyCtxt<'tcx>,
    instance: Instance<'tcx>,
    body: &'tcx mir::Body<'tcx>,
    panic_messages: bool,
    check_messages: bool,
) -> BodyUses<'tcx> {
    let mut uses = Uses {
        tcx,
        instance,
        body,
        panic_messages,
        check_messages: panic_messages && check_messages,
        out: Vec::new(),
        builds_formatter: false,
        seen_allocs: FxHashSet::default(),
    };
    for block in device_reachable_blocks(tcx, body, panic_messages) {
        uses.visit_basic_block_data(block, &body.basic_blocks[block]);
    }
    BodyUses {
        callees: uses.out,
        builds_formatter: uses.builds_formatter,
    }
}

/// The MIR visitor behind [callees].
struct Uses<'tcx> {
    tcx: TyCtxt<'tcx>,
    instance: Instance<'tcx>,
    body: &'tcx mir::Body<'tcx>,
    /// Whether panics record their message (formatting methods are then descriptors).
    panic_messages: bool,
    /// Whether failed checks (`Assert`) call their panic function rather than trap.
    check_messages: bool,
    out: Vec<(Instance<'tcx>, Span, Use)>,
    /// Whether the body builds a `core::fmt::Formatter`.
    builds_formatter: bool,
    seen_allocs: FxHashSet<AllocId>,
}

impl<'tcx> Uses<'tcx> {
    fn monomorphize<T>(&self, value: T) -> T
    where
        T: ty::TypeFoldable<TyCtxt<'tcx>>,
    {
        self.instance.instantiate_mir_and_normalize_erasing_regions(
            self.tcx,
            TypingEnv::fully_monomorphized(),
            EarlyBinder::bind(value),
        )
    }

    /// How taking the address of `callee` uses it: a formatting method's address is a
    /// descriptor with panic messages, unless device code formats for real
    /// (`mir_importer::translator::fmt_descriptor`).
    fn address_use(&self, callee: Instance<'tcx>) -> Use {
        if self.panic_messages && is_fmt_method(self.tcx, callee) {
            Use::FormattingMethod
        } else {
            Use::Address
        }
    }

    /// The functions an allocation points to, through other allocations, vtables and statics.
    fn walk_alloc(&mut self, alloc_id: AllocId, span: Span) {
        if !self.seen_allocs.insert(alloc_id) {
            return;
        }
        let tcx = self.tcx;
        match tcx.global_alloc(alloc_id) {
            GlobalAlloc::Static(def_id) => {
                if let Ok(alloc) = tcx.eval_static_initializer(def_id) {
                    let targets: Vec<AllocId> = alloc
                        .inner()
                        .provenance()
                        .ptrs()
                        .values()
                        .map(|prov| prov.alloc_id())
                        .collect();
                    for target in targets {
                        self.walk_alloc(target, span);
                    }
                }
            }
            GlobalAlloc::Memory(alloc) => {
                let targets: Vec<AllocId> = alloc
                    .inner()
                    .provenance()
                    .ptrs()
                    .values()
                    .map(|prov| prov.alloc_id())
                    .collect();
                for target in targets {
                    self.walk_alloc(target, span);
                }
            }
            GlobalAlloc::Function { instance } => {
                let how = self.address_use(instance);
                self.out.push((instance, span, how));
            }
            GlobalAlloc::VTable(ty, dyn_ty) => {
                let principal = dyn_ty
                    .principal()
                    .map(|principal| tcx.instantiate_bound_regions_with_erased(principal));
                self.walk_alloc(tcx.vtable_allocation((ty, principal)), span);
            }
            GlobalAlloc::TypeId { .. } => {}
        }
    }

    /// The vtable an unsizing coercion from `source` to `target` builds, if it builds one.
    fn unsize(&mut self, source: ty::Ty<'tcx>, target: ty::Ty<'tcx>, span: Span) {
        let tcx = self.tcx;
        let (source, target) = match (source.kind(), target.kind()) {
            (
                &ty::Ref(_, source, _) | &ty::RawPtr(source, _),
                &ty::Ref(_, target, _) | &ty::RawPtr(target, _),
            ) => tcx.struct_lockstep_tails_for_codegen(
                source,
                target,
                TypingEnv::fully_monomorphized(),
            ),
            // Unsizing through a struct (`NonNull<T>`, `Pin<&T>`) is refused by the importer.
            _ => return,
        };
        if let ty::Dynamic(predicates, ..) = *target.kind()
            && !source.is_trait()
        {
            let principal = predicates
                .principal()
                .map(|principal| tcx.instantiate_bound_regions_with_erased(principal));
            let vtable = tcx.vtable_allocation((source, principal));
            self.walk_alloc(vtable, span);
        }
    }
}

impl<'tcx> MirVisitor<'tcx> for Uses<'tcx> {
    fn visit_rvalue(&mut self, rvalue: &mir::Rvalue<'tcx>, location: mir::Location) {
        let span = self.body.source_info(location).span;
        let tcx = self.tcx;
        if let mir::Rvalue::Aggregate(kind, _) = rvalue
            && let mir::AggregateKind::Adt(def_id, ..) = **kind
            && tcx.is_diagnostic_item(rustc_span::sym::Formatter, def_id)
        {
            self.builds_formatter = true;
        }
        if let mir::Rvalue::Cast(mir::CastKind::PointerCoercion(coercion, _), operand, target) =
            rvalue
        {
            let source = self.monomorphize(operand.ty(self.body, tcx));
            match coercion {
                PointerCoercion::Unsize => {
                    let target = self.monomorphize(*target);
                    self.unsize(source, target, span);
                }
                PointerCoercion::ReifyFnPointer(_) => {
                    if let ty::FnDef(def_id, args) = *source.kind()
                        && let Some(callee) = Instance::resolve_for_fn_ptr(
                            tcx,
                            TypingEnv::fully_monomorphized(),
                            def_id,
                            args,
                        )
                    {
                        let how = self.address_use(callee);
                        self.out.push((callee, span, how));
                    }
                }
                PointerCoercion::ClosureFnPointer(_) => {
                    if let ty::Closure(def_id, args) = *source.kind() {
                        let callee =
                            Instance::resolve_closure(tcx, def_id, args, ty::ClosureKind::FnOnce);
                        self.out.push((callee, span, Use::Address));
                    }
                }
                _ => {}
            }
        }
        self.super_rvalue(rvalue, location);
    }

    fn visit_const_operand(
        &mut self,
        constant: &mir::ConstOperand<'tcx>,
        _location: mir::Location,
    ) {
        let const_ = self.monomorphize(constant.const_);
        let Ok(value) = const_.eval(self.tcx, TypingEnv::fully_monomorphized(), constant.span)
        else {
            // rustc reports constants that fail to evaluate itself.
            return;
        };
        match value {
            mir::ConstValue::Scalar(Scalar::Ptr(ptr, _)) => {
                self.walk_alloc(ptr.provenance.alloc_id(), constant.span)
            }
            mir::ConstValue::Indirect { alloc_id, .. }
            | mir::ConstValue::Slice { alloc_id, .. } => self.walk_alloc(alloc_id, constant.span),
            _ => {}
        }
    }

    fn visit_terminator(&mut self, terminator: &mir::Terminator<'tcx>, location: mir::Location) {
        let tcx = self.tcx;
        let span = terminator.source_info.span;
        let typing_env = TypingEnv::fully_monomorphized();
        match &terminator.kind {
            TerminatorKind::Call { func, .. } | TerminatorKind::TailCall { func, .. } => {
                let callee_ty = self.monomorphize(func.ty(self.body, tcx));
                if let ty::FnDef(def_id, args) = *callee_ty.kind()
                    && let Ok(Some(callee)) = Instance::try_resolve(tcx, typing_env, def_id, args)
                {
                    self.out.push((
                        with_device_version(tcx, with_fallback_body(tcx, callee)),
                        span,
                        Use::Call,
                    ));
                }
            }
            TerminatorKind::Assert { msg, .. } if self.check_messages => {
                // The panic function the importer calls when the check fails.
                let def_id = tcx.require_lang_item(rules::assert_panic_function(msg), span);
                let callee = Instance::mono(tcx, def_id);
                self.out
                    .push((with_device_version(tcx, callee), span, Use::Call));
            }
            TerminatorKind::Drop { place, .. } => {
                let ty = self.monomorphize(place.ty(self.body, tcx).ty);
                let glue = Instance::resolve_drop_glue(tcx, ty);
                let is_noop = matches!(glue.def, InstanceKind::DropGlue(_, None));
                if !is_noop {
                    self.out.push((glue, span, Use::Call));
                }
            }
            _ => {}
        }
        self.super_terminator(terminator, location);
    }
}

/// An intrinsic that device code implements with `core`'s fallback body (see
/// `mir_importer::translator::core_intrinsic`) becomes that body, an ordinary function to
/// collect; any other instance is returned as it is.
fn with_fallback_body<'tcx>(tcx: TyCtxt<'tcx>, instance: Instance<'tcx>) -> Instance<'tcx> {
    let InstanceKind::Intrinsic(def_id) = instance.def else {
        return instance;
    };
    let Some(intrinsic) = tcx.intrinsic(def_id) else {
        return instance;
    };
    if rules::intrinsic_decision(intrinsic.name.as_str())
        == Some(rules::IntrinsicDecision::Fallback)
        && !intrinsic.must_be_overridden
    {
        Instance::new_raw(def_id, instance.args)
    } else {
        instance
    }
}

/// A function with a device version in `cuda_device::shims` (`mir_importer::shims`: `core`
/// functions shipped without MIR, CPU-specific paths of crates) becomes that device version;
/// any other instance is returned as it is.
fn with_device_version<'tcx>(tcx: TyCtxt<'tcx>, instance: Instance<'tcx>) -> Instance<'tcx> {
    let InstanceKind::Item(def_id) = instance.def else {
        return instance;
    };
    rules::device_version(&fqdn(tcx, def_id))
        .and_then(|shim| def_id_of_path(tcx, shim))
        .map_or(instance, |shim| Instance::mono(tcx, shim))
}

/// The item at `path` (`krate::module::item`) in one of the crates of the build, if it is
/// there and public.
fn def_id_of_path(tcx: TyCtxt<'_>, path: &str) -> Option<rustc_hir::def_id::DefId> {
    let mut segments = path.split("::");
    let krate = segments.next()?;
    let crate_num = tcx
        .crates(())
        .iter()
        .copied()
        .find(|&c| tcx.crate_name(c).as_str() == krate)?;
    let mut current = crate_num.as_def_id();
    for segment in segments {
        current = tcx
            .module_children(current)
            .iter()
            .find(|child| child.ident.name.as_str() == segment)?
            .res
            .opt_def_id()?;
    }
    Some(current)
}
