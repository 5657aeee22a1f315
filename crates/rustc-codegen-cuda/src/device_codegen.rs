//! The device path of `codegen_crate`: find device code, collect it, and run the pipeline.
//!
//! Errors are reported through rustc's diagnostics, so a device-code problem is an ordinary
//! build error (with a source location where there is one), never a panic inside rustc.

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use device_pipeline::{CollectedFunction, ImportError, PipelineConfig, PipelineError};
use rustc_middle::ty::{Instance, TyCtxt};
use rustc_public::rustc_internal;
use rustc_span::def_id::LOCAL_CRATE;

use crate::collector::{self, DeviceFunction, Forbidden, ForbiddenCall};
use crate::config::CudaCodegenConfig;
use crate::crate_rules::ALLOWED_CRATES_HELP;

/// Runs the device path for the crate being compiled, if it holds device code, and returns
/// the PTX generated for its kernels (to be embedded in the host artifacts).
///
/// A crate without `#[kernel]` or `#[device]` functions costs one scan of its mono items.
/// A crate with `#[device]` functions but no kernel has its device code checked against the
/// crate rules; PTX is generated only where there are kernels to launch.
///
/// Returns the PTX and the cubin `ptxas` made of it for the build's architecture (empty, with a
/// warning, when no `ptxas` was found: the host then loads the PTX, which the driver compiles).
pub fn codegen_device_code<'tcx>(
    tcx: TyCtxt<'tcx>,
    config: &CudaCodegenConfig,
) -> Option<(String, Vec<u8>, Option<Vec<u8>>)> {
    let started = Instant::now();
    let roots = collector::find_roots(tcx);
    // A crate whose generic kernels it never instantiates still embeds a module (without
    // entries), so that its `#[cuda_module]`'s `load` links and works.
    let generic_kernels_only = roots.kernels.is_empty() && collector::defines_generic_kernels(tcx);
    if roots.is_empty() && !generic_kernels_only {
        return None;
    }
    crate::kernel_params::check_kernel_parameters(tcx, &roots.kernels);
    let panic_messages = config.panic_messages();
    let check_messages = config.check_messages(tcx.sess.opts.debug_assertions);
    let device_code =
        match collector::collect_device_functions(tcx, &roots, panic_messages, check_messages) {
            Ok(device_code) => device_code,
            Err(forbidden) => report_forbidden_call(tcx, &forbidden),
        };
    let collect_time = started.elapsed();
    let collected = device_code.functions;

    let crate_name = tcx.crate_name(LOCAL_CRATE).to_string();
    warn_of_foreign_functions(tcx, &crate_name, &collected);
    let result = rustc_internal::run(tcx, || {
        let functions = to_stable(tcx, &collected);
        if config.verbose {
            eprint!(
                "{}",
                describe_collection(tcx, &crate_name, &collected, &functions, collect_time)
            );
        }
        if let Some(clash) = first_duplicate_export_name(&functions) {
            return Err(DeviceError::Message(clash));
        }
        if roots.kernels.is_empty() && !generic_kernels_only {
            return Ok(None);
        }
        let device_debug = config.device_debug().map_err(DeviceError::Message)?;
        let pipeline_config = PipelineConfig {
            crate_name: crate_name.clone(),
            target: config.target().to_owned(),
            default_targets: config.default_targets,
            ptx_path: Some(tcx.output_filenames(()).with_extension("ptx")),
            ptx_dir: config.ptx_dir.clone(),
            dump_mir: config.dump_mir,
            dump_llvm: config.dump_llvm,
            show_rustc_mir: config.show_rustc_mir,
            overflow_checks: tcx.sess.overflow_checks(),
            fmad: config.fmad,
            cubin: !config.no_cubin,
            panic_messages,
            check_messages,
            device_formats: device_code.formats,
            faulting_checks: config.faulting_checks(),
            check_hoisting: config.check_hoisting(),
            cpu: config.cpu_flavour().then(|| device_pipeline::CpuTarget {
                triple: tcx.sess.target.llvm_target.to_string(),
                data_layout: tcx.sess.target.data_layout.to_string(),
                table_symbol: reserved_oxide_symbols::cpu_image_symbol(
                    &reserved_oxide_symbols::crate_tag(&crate_name),
                ),
                race: config.race,
            }),
            sysroot: Some(tcx.sess.opts.sysroot.path().to_path_buf()),
            device_debug,
            // rustc's working directory, which cargo makes the workspace root: the spans'
            // relative paths are relative to it.
            comp_dir: None,
        };
        let output =
            catch_internal_error(|| device_pipeline::run_pipeline(&functions, &pipeline_config))
                .map_err(|bug| {
                    DeviceError::Message(format!(
                        "internal error in cuda-oxide while compiling the device code of crate \
                         `{crate_name}`: {bug}. This is a bug in cuda-oxide; please report it with \
                         the kernel that triggers it"
                    ))
                })?
                .map_err(|e| {
                    if let Some(requirement) = e.missing_libdevice() {
                        report_missing_libdevice(requirement);
                    }
                    let message = format!("device code of crate `{crate_name}`: {e}");
                    match e {
                        PipelineError::Import(ImportError::Translation {
                            index, source, ..
                        }) => DeviceError::Translation {
                            index,
                            message,
                            span: source.span.map(|span| rustc_internal::internal(tcx, span)),
                        },
                        _ => DeviceError::Message(message),
                    }
                })?;
        if config.verbose {
            for (stage, time) in &output.timings.0 {
                eprintln!("cuda-oxide:   stage {stage:<15} {}", format_duration(*time));
            }
            if let Some(path) = &output.ptx_path {
                eprintln!("cuda-oxide:   wrote {}", path.display());
            }
        }
        if let Some((_, why)) = output.left_out.first() {
            let left_out: Vec<&str> = output.left_out.iter().map(|(a, _)| a.as_str()).collect();
            tcx.dcx().warn(format!(
                "cuda-oxide builds the kernels of crate `{crate_name}` without {} of the release \
                 default architectures ({}): {why}; `--arch` chooses the architectures",
                left_out.join(", "),
                config.target()
            ));
        }
        let cubin = match output.cubin {
            device_pipeline::Cubin::Built(image) => image,
            device_pipeline::Cubin::NotAsked => Vec::new(),
            device_pipeline::Cubin::Unavailable(why) => {
                tcx.dcx().warn(format!(
                    "cuda-oxide embeds only the PTX of crate `{crate_name}`, no cubin for {}: \
                     {why}. The driver will compile the PTX when the module is loaded",
                    config.target()
                ));
                Vec::new()
            }
        };
        let cpu_object = match output.cpu_object {
            device_pipeline::CpuObject::Built(object) => Some(object),
            device_pipeline::CpuObject::NotAsked => None,
            device_pipeline::CpuObject::Failed(why) => {
                tcx.dcx().warn(format!(
                    "cuda-oxide could not compile the kernels of crate `{crate_name}` for the CPU \
                     device: {why}. The GPU code is unaffected; under CUDA_OXIDE_DEVICE=cpu this \
                     crate's module does not load"
                ));
                None
            }
        };
        Ok(Some((output.ptx, cubin, cpu_object)))
    });
    if config.show_rustc_mir {
        // Printing rustc's MIR asks rustc for "trimmed" paths, which it only allows when the
        // session reports something; saying where the text went is that report.
        let path = tcx.output_filenames(()).with_extension("rustc.mir");
        tcx.dcx().note(format!(
            "cuda-oxide: rustc's MIR of the device functions is in {}",
            path.display()
        ));
    }
    match result {
        Ok(Ok(ptx)) => ptx,
        Ok(Err(DeviceError::Message(message))) => tcx.dcx().fatal(message),
        Ok(Err(DeviceError::Translation {
            index,
            message,
            span,
        })) => report_translation_error(tcx, &collected, index, &message, span),
        Err(e) => tcx
            .dcx()
            .fatal(format!("cuda-oxide could not start rustc_public: {e:?}")),
    }
}

/// Tells `cargo oxide`, when it asked through `CUDA_OXIDE_REPORT_MISSING_LIBDEVICE` (a file
/// path), that the kernels need libdevice and none is installed: the file, holding the pip
/// requirement that installs it, makes `cargo oxide` install it and build again.
fn report_missing_libdevice(pip_requirement: &str) {
    if let Some(path) = std::env::var_os("CUDA_OXIDE_REPORT_MISSING_LIBDEVICE") {
        let _ = std::fs::write(path, pip_requirement);
    }
}

/// Why the device path stopped.
enum DeviceError {
    /// A message without a place in the user's code.
    Message(String),
    /// A construct of the collected function `index` that cannot be translated, at `span`.
    Translation {
        index: usize,
        message: String,
        span: Option<rustc_span::Span>,
    },
}

/// Stops the build at the user's line that leads to an untranslatable construct: the construct
/// itself when it is in the crate being compiled, otherwise the user's call that reaches the
/// function holding it (in `core` or a dependency), with the chain of calls from the kernel.
fn report_translation_error<'tcx>(
    tcx: TyCtxt<'tcx>,
    collected: &[DeviceFunction<'tcx>],
    index: usize,
    message: &str,
    span: Option<rustc_span::Span>,
) -> ! {
    let in_user_code = collected[index].instance.def_id().is_local();
    let primary = if in_user_code {
        span
    } else {
        collector::user_call_site(collected, index).or(span)
    };
    let chain = describe_chain(tcx, &collector::call_chain(collected, index));
    let mut diagnostic = match primary {
        Some(primary) => tcx.dcx().struct_span_fatal(primary, message.to_owned()),
        None => tcx.dcx().struct_fatal(message.to_owned()),
    };
    if !in_user_code {
        diagnostic = diagnostic.with_note(format!(
            "the construct is in `{}` (crate `{}`); device code reached it through:\n    {chain}",
            collector::instance_path(tcx, collected[index].instance),
            tcx.crate_name(collected[index].instance.def_id().krate)
        ));
    }
    diagnostic.emit()
}

/// A chain of calls, one `path` (crate) per line.
fn describe_chain<'tcx>(tcx: TyCtxt<'tcx>, chain: &[Instance<'tcx>]) -> String {
    chain
        .iter()
        .map(|i| {
            format!(
                "`{}` ({})",
                collector::instance_path(tcx, *i),
                tcx.crate_name(i.def_id().krate)
            )
        })
        .collect::<Vec<_>>()
        .join("\n    -> ")
}

/// Runs `f`, turning a panic inside it into an error message (where and what), so that a bug in
/// the device pipeline is reported as a build error rather than a rustc crash. rustc's own
/// panic hook is set aside meanwhile, so that it does not print a compiler-crash report.
fn catch_internal_error<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    use std::sync::{Arc, Mutex};
    let message = Arc::new(Mutex::new(String::new()));
    let previous_hook = std::panic::take_hook();
    let sink = Arc::clone(&message);
    std::panic::set_hook(Box::new(move |info| {
        let text = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic".to_owned());
        let place = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        if let Ok(mut slot) = sink.lock() {
            *slot = format!("{text}{place}");
        }
    }));
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    std::panic::set_hook(previous_hook);
    result.map_err(|_| {
        message
            .lock()
            .map(|m| m.clone())
            .unwrap_or_else(|_| "a panic".to_owned())
    })
}

/// Device code whose dependencies can reach functions that exist only for the host (foreign
/// functions, host machine code such as the C and assembly implementations BLAKE3 picks for
/// AVX-512 CPUs; `std` and `thread_local!`, such as the `matrixmultiply` calls nalgebra makes
/// for dynamically sized matrices) builds, and a kernel that calls one traps: crates call them
/// behind tests that rule them out on the GPU (CPU detection answers "x86-64 baseline"). The
/// build names them, since a call that is not behind such a test would trap. (Functions that
/// need CPU features beyond the target are not named: calling them without detection is
/// undefined behaviour on such a CPU already.)
fn warn_of_foreign_functions<'tcx>(
    tcx: TyCtxt<'tcx>,
    crate_name: &str,
    collected: &[DeviceFunction<'tcx>],
) {
    let host_only: Vec<String> = collected
        .iter()
        .filter(|f| f.host_only && collector::missing_cpu_features(tcx, f.instance).is_empty())
        .map(|f| format!("`{}`", collector::instance_path(tcx, f.instance)))
        .collect();
    if !host_only.is_empty() {
        tcx.dcx().warn(format!(
            "device code of crate `{crate_name}` can reach {} function(s) that exist only for \
             the host (foreign functions, `std`, `thread_local!`): {}. A kernel that calls one traps. Crates call \
             such functions behind tests that rule them out on the GPU, such as CPU feature \
             detection, which answers \"x86-64 baseline\" there (docs/crates.md)",
            host_only.len(),
            host_only.join(", ")
        ));
    }
}

/// Converts the collected functions to `rustc_public` instances and names them. Must run inside
/// `rustc_internal::run`.
fn to_stable<'tcx>(
    tcx: TyCtxt<'tcx>,
    collected: &[DeviceFunction<'tcx>],
) -> Vec<CollectedFunction> {
    collected
        .iter()
        .map(|f| {
            let instance = rustc_internal::stable(f.instance);
            let generic_entry = f
                .is_kernel
                .then(|| collector::generic_kernel_entry(tcx, f.instance))
                .flatten();
            CollectedFunction {
                export_name: generic_entry
                    .unwrap_or_else(|| mir_importer::naming::export_name(&instance, f.is_kernel)),
                instance,
                is_kernel: f.is_kernel,
                host_only: f.host_only,
            }
        })
        .collect()
}

/// Two device functions may not share a symbol (two kernels called `scale` in different
/// modules would both become the PTX entry `scale`).
fn first_duplicate_export_name(functions: &[CollectedFunction]) -> Option<String> {
    functions.iter().enumerate().find_map(|(i, f)| {
        functions[..i]
            .iter()
            .find(|g| g.export_name == f.export_name)
            .map(|g| {
                format!(
                    "cuda-oxide: `{}` and `{}` would both be exported as `{}`; rename one of them",
                    g.instance.name(),
                    f.instance.name(),
                    f.export_name
                )
            })
    })
}

/// The `CUDA_OXIDE_VERBOSE` listing: every collected function with its crate and export name.
fn describe_collection<'tcx>(
    tcx: TyCtxt<'tcx>,
    crate_name: &str,
    collected: &[DeviceFunction<'tcx>],
    functions: &[CollectedFunction],
    collect_time: Duration,
) -> String {
    let kernels = collected.iter().filter(|f| f.is_kernel).count();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "cuda-oxide: crate `{crate_name}`: {kernels} kernel(s), {} device function(s)",
        collected.len() - kernels
    );
    for (internal, function) in collected.iter().zip(functions) {
        let role = if function.is_kernel {
            "kernel"
        } else {
            "device"
        };
        let from = tcx.crate_name(internal.instance.def_id().krate);
        let path = collector::instance_path(tcx, internal.instance);
        let _ = writeln!(
            out,
            "cuda-oxide:   {role:<6} {:<40} from `{from}`: {path}",
            function.export_name
        );
    }
    let _ = writeln!(
        out,
        "cuda-oxide:   stage {:<10} {}",
        "collect",
        format_duration(collect_time)
    );
    out
}

fn format_duration(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1000.0)
}

/// Stops the build with the forbidden call, at the user's line that leads to it (the call
/// itself when the user wrote it), and how the kernel reached it.
fn report_forbidden_call<'tcx>(tcx: TyCtxt<'tcx>, call: &ForbiddenCall<'tcx>) -> ! {
    let callee = collector::instance_path(tcx, call.callee);
    let caller_is_local = call.collected[call.caller].instance.def_id().is_local();
    let primary = if caller_is_local {
        call.span
    } else {
        collector::user_call_site(&call.collected, call.caller).unwrap_or(call.span)
    };
    let (message, why, help) = match &call.why {
        Forbidden::Crate { name, reason } => (
            format!("cuda-oxide: forbidden crate in device code: `{callee}` is in crate `{name}`"),
            format!("{reason}, so it cannot run on the GPU"),
            ALLOWED_CRATES_HELP.to_owned(),
        ),
        Forbidden::CpuFeatures(features) => (
            format!(
                "cuda-oxide: device code calls `{callee}`, which needs the CPU feature(s) \
                 {features}"
            ),
            "the GPU runs the x86-64 baseline (SSE, SSE2) of `core::arch`, and CPU detection \
             in device code answers that nothing beyond it is available"
                .to_owned(),
            "use the baseline's intrinsics or portable code (`core::simd`, plain arithmetic); \
             crates that dispatch on CPU detection may keep such paths, which device code never \
             takes"
                .to_owned(),
        ),
    };
    let mut diagnostic = tcx
        .dcx()
        .struct_span_fatal(primary, message)
        .with_note(why)
        .with_note(format!(
            "device code reached it through:\n    {}",
            describe_chain(tcx, &call.chain)
        ));
    if !caller_is_local {
        diagnostic = diagnostic.with_span_note(call.span, "the forbidden call is here");
    }
    diagnostic.with_help(help).emit()
}
