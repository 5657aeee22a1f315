//! The importer's one entry: the collected functions, translated into one `builtin.module` of
//! dialect-mir.

use pliron::builtin::op_interfaces::SingleBlockRegionInterface;
use pliron::builtin::ops::ModuleOp;
use pliron::context::Context;
use pliron::identifier::Identifier;
use rustc_public::mir::mono::Instance;

use crate::translator;
use crate::translator::body::FunctionContext;
use crate::translator::{GlobalRegistry, TranslationError, TypeTranslator};

/// A device function found by the codegen backend's collector.
#[derive(Clone, Debug)]
pub struct CollectedFunction {
    /// The monomorphised function.
    pub instance: Instance,
    /// Whether it is a GPU entry point (a `#[kernel]`).
    pub is_kernel: bool,
    /// Its symbol, as [`crate::naming::export_name`] gives it.
    pub export_name: String,
    /// Whether it exists only for the CPU (a foreign function, or one that needs CPU features
    /// beyond the host target's): its body is a trap, and a foreign one is not emitted at all
    /// (calls to it trap where they are).
    pub host_only: bool,
}

/// What translation needs to know besides the functions.
#[derive(Clone, Debug)]
pub struct ImportOptions {
    /// The crate being compiled (names the module).
    pub crate_name: String,
    /// The GPU architecture the module is for.
    pub target: dialect_nvvm::Target,
    /// Whether the crate is compiled with overflow checks (what `cfg!(overflow_checks)` means
    /// inside `core` code the kernels call).
    pub overflow_checks: bool,
    /// Give the ops their source locations (line info).
    pub locations: bool,
    /// Also describe variables (the full debug tier).
    pub variables: bool,
    /// Contract float multiplications and additions into fused multiply-adds in every
    /// function; without it only kernels marked `#[kernel(fmad)]` are.
    pub fmad: bool,
    /// Compile panic paths so that a panic records its message, location and thread.
    pub panic_messages: bool,
    /// Whether a failed check (bounds, overflow, division) records its message too.
    pub check_messages: bool,
    /// Whether device code formats for real (it builds a `core::fmt::Formatter`): formatting
    /// methods are then compiled functions, whose descriptors a panic message finds in a table,
    /// rather than descriptors ([translator::fmt_descriptor]).
    pub device_formats: bool,
}

/// Why translation stopped; each names the function concerned.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// rustc has no MIR for a collected function.
    #[error(
        "no MIR is available for `{function}`; it cannot be compiled for the GPU (is it an \
         `extern` function, or was its crate built without `-Zalways-encode-mir`?)"
    )]
    NoBody {
        /// The function.
        function: String,
    },
    /// A construct the translator does not support.
    #[error("cannot compile `{function}` for the GPU: {source}")]
    Translation {
        /// The function being translated.
        function: String,
        /// Its position in the functions given to [import_module].
        index: usize,
        /// What went wrong, and where.
        #[source]
        source: TranslationError,
    },
}

/// Translates every function into one `builtin.module`. With `rustc_mir`, rustc's own MIR of
/// each function translated is appended to it (up to the failing one when one fails: it helps
/// to see why).
pub fn import_module(
    ctx: &mut Context,
    functions: &[CollectedFunction],
    options: &ImportOptions,
    mut rustc_mir: Option<&mut String>,
) -> Result<ModuleOp, ImportError> {
    let name = Identifier::try_from(sanitize(&options.crate_name))
        .unwrap_or_else(|_| Identifier::try_from("device_module").expect("a valid identifier"));
    let module = ModuleOp::new(ctx, name);
    let module_block = module.get_body(ctx, 0);
    let mut types = TypeTranslator::default();
    let mut globals = GlobalRegistry::new(module_block, options.target);
    globals.set_formatting(options.panic_messages, options.device_formats);
    for (index, function) in functions.iter().enumerate() {
        if function.host_only && function.instance.is_foreign_item() {
            continue;
        }
        let Some(body) = function.instance.body() else {
            return Err(ImportError::NoBody {
                function: function.instance.name(),
            });
        };
        if let Some(rustc_mir) = rustc_mir.as_deref_mut() {
            let mut text = Vec::new();
            let _ = function.instance.emit_mir(&mut text);
            rustc_mir.push_str(&String::from_utf8_lossy(&text));
            rustc_mir.push('\n');
        }
        let fcx = FunctionContext {
            types: &mut types,
            globals: &mut globals,
            overflow_checks: options.overflow_checks,
            target: options.target,
            locations: options.locations,
            variables: options.variables,
            fmad: options.fmad,
            panic_messages: options.panic_messages,
            check_messages: options.check_messages,
        };
        if let Err(source) = translator::translate_function(ctx, module_block, function, &body, fcx)
        {
            return Err(ImportError::Translation {
                function: reserved_oxide_symbols::strip_all_reserved(&function.instance.name()),
                index,
                source,
            });
        }
    }
    globals.finish(ctx);
    Ok(module)
}

/// A module name from a crate name.
fn sanitize(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}
