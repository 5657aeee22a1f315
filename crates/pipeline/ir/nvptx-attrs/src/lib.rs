//! The contract between lowering (`mir-lower`) and the LLVM IR exporter (`llvm-export`): the
//! attributes of pliron-llvm ops that pliron-llvm does not model and that the exporter turns
//! into LLVM IR. Lowering writes them, the exporter reads them, and neither stage calls the
//! other.
//!
//! - [`kernel`]: the `ptx_kernel` mark, launch bounds, block and cluster sizes, grid-constant
//!   parameters of an `llvm.func`;
//! - [`param_attrs`]: the parameter attributes (`noalias`, `align(N)`, ...) of an `llvm.func`;
//! - [`CPU_RUNTIME_PREFIX`]: the names of the CPU runtime's functions;
//! - [`LIBDEVICE_PREFIX`]: the names of libdevice's functions, which lowering declares and the
//!   exporter leaves declared (linked in after export);
//! - [`ATTR_KEY_DEBUG_VARIABLE`] and [`debug_variable`]: the named Rust variable an
//!   `llvm.alloca` holds (the importer describes it, the exporter writes its debug record).

pub mod debug_variable;
pub mod kernel;
pub mod param_attrs;

pub use kernel::{
    ATTR_KEY_PTX_KERNEL, grid_constant_attrs, is_kernel, mark_kernel, max_threads, set_block_dims,
    set_cluster_dims, set_grid_constant, set_launch_bounds,
};
pub use param_attrs::{ATTR_KEY_LLVM_PARAM_ATTRS, param_attrs, set_param_attrs};

/// The prefix of the runtime functions the CPU flavour of the device code calls in place of GPU
/// operations (`__oxide_cpu_read_ptx_sreg_tid_x`, ...): lowering calls them with
/// `llvm.call_intrinsic`, the exporter calls them through slots the CPU runtime fills.
pub const CPU_RUNTIME_PREFIX: &str = "__oxide_cpu_";

/// The prefix of libdevice's functions (`__nv_sinf`): lowering declares the ones the math
/// needs; they are linked in after export, in both flavours, so the CPU flavour's export keeps
/// them as declarations rather than slots.
pub const LIBDEVICE_PREFIX: &str = "__nv_";

/// The key of the attribute of an `llvm.alloca` that holds a named Rust variable (its encoding
/// is [`debug_variable::DebugVariable`]'s); with full device debug information the
/// exporter gives the slot a `#dbg_declare` record.
pub const ATTR_KEY_DEBUG_VARIABLE: &str = "llvm_export_debug_variable";
