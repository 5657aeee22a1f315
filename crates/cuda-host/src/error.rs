//! Everything that can go wrong on the host side, each message saying what to do about it.

use cudarc::driver::sys;

use crate::failure::DriverFailure;
use crate::graph::error::GraphError;
use crate::version::{CudaVersion, PtxIsa};

/// A failure of the host runtime. Nothing in this crate panics on a missing driver, a missing
/// GPU, bad PTX or a failing kernel: each of those is one of these variants.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// `libcuda.so` could not be loaded.
    #[error(
        "the CUDA driver library (libcuda.so.1) could not be loaded: this machine has no NVIDIA \
         driver, or it is not on the loader's path. Install the NVIDIA driver, or add the \
         directory holding libcuda.so.1 to LD_LIBRARY_PATH. Without a GPU, the CPU device runs \
         the same kernels: set CUDA_OXIDE_DEVICE=cpu (`cargo oxide run --cpu`)"
    )]
    NoDriver,

    /// The CPU device (`CUDA_OXIDE_DEVICE=cpu`) could not take the driver's place.
    #[error("the CPU device (CUDA_OXIDE_DEVICE=cpu) could not start: {0}")]
    CpuDevice(String),

    /// The CPU device cannot load a crate's kernels.
    #[error("the CPU device cannot load the kernels of crate `{crate_name}`: {reason}")]
    CpuImage {
        /// The crate whose module was loaded.
        crate_name: &'static str,
        /// Why.
        reason: String,
    },

    /// The driver is older than the API version cuda-host is built against.
    #[error(
        "the installed CUDA driver supports CUDA {found}, but cuda-oxide needs CUDA {required} \
         or newer: update the NVIDIA driver"
    )]
    DriverTooOld {
        /// What the driver supports.
        found: CudaVersion,
        /// What cuda-host needs.
        required: CudaVersion,
    },

    /// The requested device ordinal does not exist.
    #[error(
        "there is no CUDA device {ordinal}: the driver sees {count} device(s){hint}",
        hint = if *count == 0 {
            "; check `nvidia-smi`, and that CUDA_VISIBLE_DEVICES does not hide every GPU"
        } else {
            "; use an ordinal below that count"
        }
    )]
    NoDevice {
        /// The ordinal that was asked for.
        ordinal: usize,
        /// How many devices the driver reports.
        count: usize,
    },

    /// A tensor map (`cuda_host::tma::tiled`) asked for a shape the copy engine cannot
    /// describe.
    #[error("cannot build this TMA tensor map: {0}")]
    TensorMap(String),

    /// A driver call failed for a reason not covered by a more specific variant.
    #[error("the CUDA driver call `{call}` failed: {source}")]
    Driver {
        /// What cuda-host was doing.
        call: &'static str,
        /// The driver's error.
        #[source]
        source: DriverFailure,
    },

    /// The binary's embedded PTX is not the NUL-terminated text the backend writes.
    #[error(
        "the PTX embedded for crate `{crate_name}` is damaged ({reason}); rebuild it with \
         `cargo oxide build`"
    )]
    BadEmbeddedPtx {
        /// The crate whose PTX it is.
        crate_name: &'static str,
        /// What is wrong with it.
        reason: &'static str,
    },

    /// The driver rejected the PTX module.
    #[error(
        "the CUDA driver could not load the PTX of crate `{crate_name}`: {source}{log}\n\
         hint: {hint}",
        log = if log.is_empty() { String::new() } else { format!("\njit log:\n{log}") },
        hint = module_load_hint(source)
    )]
    ModuleLoad {
        /// The crate whose PTX it is.
        crate_name: &'static str,
        /// The driver's error.
        #[source]
        source: DriverFailure,
        /// The driver's JIT error (and info) log.
        log: String,
    },

    /// The driver refused the PTX because it is for a GPU architecture this GPU does not run.
    #[error(
        "the PTX of crate `{crate_name}` is compiled for {ptx_arch}, which GPU {ordinal} \
         ({gpu_name}, {gpu_arch}) cannot run ({source}); rebuild it for this GPU: `cargo oxide \
         run` compiles for the local GPU, `cargo oxide build --arch {gpu_arch}` for this one"
    )]
    PtxArchUnsupported {
        /// The crate whose PTX it is.
        crate_name: &'static str,
        /// The architecture in the PTX's `.target`.
        ptx_arch: String,
        /// The device's ordinal.
        ordinal: usize,
        /// The device's name.
        gpu_name: String,
        /// The device's architecture (`sm_90`).
        gpu_arch: String,
        /// The driver's error.
        #[source]
        source: DriverFailure,
    },

    /// The driver refused the PTX because its PTX ISA version is newer than the driver reads.
    #[error(
        "the PTX of crate `{crate_name}` is PTX ISA {isa}, {needs}but this driver supports CUDA \
         {driver}{reads} ({source}); update the NVIDIA driver, or build for an older GPU \
         architecture (`cargo oxide build --arch sm_XX`), for which LLVM writes an older PTX ISA",
        needs = needs.map_or(String::new(), |v| format!("which needs a driver for CUDA {v} or newer, ")),
        reads = newest.map_or(String::new(), |v| format!(" (PTX ISA up to {v})"))
    )]
    PtxIsaUnsupported {
        /// The crate whose PTX it is.
        crate_name: &'static str,
        /// The PTX's `.version`.
        isa: PtxIsa,
        /// The CUDA version the driver supports.
        driver: CudaVersion,
        /// The first CUDA version that reads `isa`, when known.
        needs: Option<CudaVersion>,
        /// The newest PTX ISA the driver reads, when known.
        newest: Option<PtxIsa>,
        /// The driver's error.
        #[source]
        source: DriverFailure,
    },

    /// The PTX has no `.entry` of this name.
    #[error(
        "the PTX of crate `{crate_name}` has no kernel `{kernel}`: the binary and its PTX \
         disagree. Rebuild with `cargo oxide build`"
    )]
    MissingKernel {
        /// The crate whose PTX it is.
        crate_name: &'static str,
        /// The kernel that was looked up.
        kernel: &'static str,
    },

    /// The PTX has no entry for this instantiation of a generic kernel.
    #[error(
        "no module of this program has the instantiation `{instantiation}` of crate \
         `{crate_name}`'s generic kernel (entry `{entry}`): the crate that launches it \
         compiles it, with `cargo oxide build`; a binary and PTX that disagree need a rebuild, \
         and outside Linux, where modules leave no records, launch it from crate \
         `{crate_name}` itself (a non-generic wrapper function there will do)"
    )]
    MissingInstantiation {
        /// The crate whose PTX it is.
        crate_name: &'static str,
        /// The kernel and its generic arguments (`axpy::<f32>`).
        instantiation: String,
        /// The entry that was looked up.
        entry: &'static str,
    },

    /// The driver refused to start a kernel.
    #[error(
        "launching kernel `{kernel}` failed: {source}\nhint: {hint}",
        hint = launch_hint(source)
    )]
    Launch {
        /// The kernel being launched.
        kernel: &'static str,
        /// The driver's error.
        #[source]
        source: DriverFailure,
    },

    /// A launch configuration the kernel cannot run with, refused before the driver sees it.
    #[error("cannot launch kernel `{kernel}` with {config}: {problem}")]
    BadLaunchConfig {
        /// The kernel being launched.
        kernel: &'static str,
        /// The grid and block dimensions asked for.
        config: String,
        /// What is wrong, and what to do.
        problem: String,
    },

    /// A launch asks for more dynamic shared memory than the device gives one block.
    #[error(
        "launching kernel `{kernel}` with {requested} bytes of dynamic shared memory: the device \
         gives a block at most {device_max} bytes of shared memory, of which the kernel's own \
         `SharedArray`s take {static_bytes}, leaving {available}. Lower \
         `LaunchConfig::shared_mem_bytes`, or the size of the kernel's shared arrays"
    )]
    SharedMemoryTooLarge {
        /// The kernel being launched.
        kernel: &'static str,
        /// `LaunchConfig::shared_mem_bytes`.
        requested: u32,
        /// What is left for dynamic shared memory.
        available: u32,
        /// The kernel's static shared memory.
        static_bytes: u32,
        /// The device's shared memory per block, with the opt-in above 48 KiB.
        device_max: u32,
    },

    /// A kernel panicked: `panic!`, a failed `assert!`, `unwrap` on `None`, an index out of
    /// bounds, an overflow... The first thread that panicked recorded its message, location
    /// and coordinates (see [`crate::DevicePanic`]) before the kernel trapped.
    #[error(
        "{culprit} {panic}\nThe CUDA context cannot be used after a panic: create a new \
         process to continue",
        culprit = fault_culprit(kernel, in_flight),
    )]
    KernelPanic {
        /// The kernel that panicked when that is certain; otherwise the last one launched of
        /// those in flight (the record says which module's kernel panicked, not which kernel).
        kernel: &'static str,
        /// As for [`Error::KernelFault`]: the kernels in flight when it is not certain.
        in_flight: Vec<&'static str>,
        /// What the device recorded (boxed: it keeps `Error` small).
        panic: Box<crate::panic::DevicePanic>,
        /// The driver's error.
        #[source]
        source: DriverFailure,
    },

    /// A kernel stopped with a fault: a trap (a failed check in device code: index out of bounds,
    /// division by zero, and any panic in a build without messages; a call of a function that
    /// exists only for the host), an illegal address or instruction.
    ///
    /// The driver reports a fault to the next call on the context without saying which kernel
    /// caused it. When one kernel launched through cuda-host was in flight it is that one;
    /// when several were, `in_flight` lists them all and any of them may be the one.
    #[error(
        "{culprit} faulted on the {device}: {source}\nhint: a failed check in device code (an index \
         out of bounds, a division by zero; in a build without messages, any panic) stops the \
         kernel with a trap, or with an illegal address at the access the check guards, which \
         the driver reports like this; check the indices the kernel computes against the \
         lengths of its buffers. A build with check messages (the default without `--release`, \
         or CUDA_OXIDE_PANIC_MESSAGES=1 when building) reports the check's message, \
         file:line:column, block and thread instead of this fault. A call of a function that \
         exists only for the host (one the build warned about) traps too.{narrow} The CUDA \
         context cannot be used after a fault: create a new process to continue",
        culprit = fault_culprit(kernel, in_flight),
        device = if cuda_cpu::installed() { "CPU device" } else { "GPU" },
        narrow = if in_flight.is_empty() {
            ""
        } else {
            " To find which kernel it is, synchronise after each launch, or run with \
             CUDA_LAUNCH_BLOCKING=1."
        }
    )]
    KernelFault {
        /// The kernel that faulted when that is certain; otherwise the last one launched of
        /// those in flight.
        kernel: &'static str,
        /// Empty when `kernel` is certainly the one; otherwise every kernel launched through
        /// cuda-host that no successful synchronisation had covered, oldest first.
        in_flight: Vec<&'static str>,
        /// The driver's error.
        #[source]
        source: DriverFailure,
    },

    /// Recording, updating or replaying a CUDA graph failed.
    #[error(transparent)]
    Graph(#[from] GraphError),

    /// A [`crate::KernelParam`] pushed a different number or size of PTX parameters than its
    /// [`kernel_abi::ParamKind`] says.
    #[error(
        "argument {index} of kernel `{kernel}` was packed as {pushed:?} but its kind {kind:?} \
         needs {expected:?}: the `KernelParam` implementation of its type is wrong"
    )]
    ArgumentPacking {
        /// The kernel being launched.
        kernel: &'static str,
        /// The argument's position.
        index: usize,
        /// The declared kind.
        kind: kernel_abi::ParamKind,
        /// The slot sizes the kind needs.
        expected: Vec<u32>,
        /// The slot sizes that were pushed.
        pushed: Vec<u32>,
    },
}

fn module_load_hint(error: &DriverFailure) -> &'static str {
    use sys::CUresult::*;
    match error.0 {
        CUDA_ERROR_UNSUPPORTED_PTX_VERSION => {
            "the PTX is newer than this driver understands: update the driver, or build for an \
             older architecture with `cargo oxide build --arch sm_XX`"
        }
        CUDA_ERROR_INVALID_PTX | CUDA_ERROR_INVALID_IMAGE => {
            "the driver's JIT compiler rejected the PTX (see its log above); if the log names \
             an architecture, rebuild with `--arch` set to this GPU's (`cargo oxide build \
             --arch sm_XX`), otherwise report the log as a cuda-oxide bug"
        }
        CUDA_ERROR_NO_BINARY_FOR_GPU => {
            "the PTX targets a newer GPU than this one: rebuild with `--arch` set to this \
             GPU's compute capability"
        }
        _ => "see the driver's message above",
    }
}

/// Who faulted, as far as is known: one kernel, or the kernels in flight.
fn fault_culprit(kernel: &str, in_flight: &[&str]) -> String {
    if in_flight.is_empty() {
        return format!("kernel `{kernel}`");
    }
    let names: Vec<String> = in_flight.iter().map(|k| format!("`{k}`")).collect();
    format!(
        "a kernel launched through cuda-host and not yet seen to finish ({}; `{kernel}` was \
         launched last)",
        names.join(", ")
    )
}

fn launch_hint(error: &DriverFailure) -> &'static str {
    use sys::CUresult::*;
    match error.0 {
        CUDA_ERROR_INVALID_VALUE => {
            "check the LaunchConfig: at most 1024 threads per block, a grid of at least one \
             block in every dimension, and the shared memory size"
        }
        CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES => {
            "the kernel needs more registers or shared memory than a block of this size can \
             get: launch fewer threads per block"
        }
        CUDA_ERROR_INVALID_CONTEXT | CUDA_ERROR_CONTEXT_IS_DESTROYED => {
            "launch on a stream of the context the module was loaded on"
        }
        _ => "see the driver's message above",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn too_much_shared_memory_says_how_much_there_is() {
        let error = Error::SharedMemoryTooLarge {
            kernel: "block_sum",
            requested: 300_000,
            available: 228_352,
            static_bytes: 1024,
            device_max: 232_448,
        };
        let text = error.to_string();
        for expected in [
            "kernel `block_sum` with 300000 bytes of dynamic shared memory",
            "at most 232448 bytes",
            "take 1024, leaving 228352",
            "Lower `LaunchConfig::shared_mem_bytes`",
        ] {
            assert!(text.contains(expected), "{expected}: {text}");
        }
    }

    #[test]
    fn messages_say_what_to_do() {
        let fault = Error::KernelFault {
            kernel: "vecadd",
            in_flight: Vec::new(),
            source: DriverFailure(sys::CUresult::CUDA_ERROR_LAUNCH_FAILED),
        };
        let text = fault.to_string();
        assert!(
            text.starts_with("kernel `vecadd` faulted on the GPU"),
            "{text}"
        );
        assert!(text.contains("out of bounds"), "{text}");
        assert!(text.contains("CUDA_OXIDE_PANIC_MESSAGES=1"), "{text}");
        assert!(text.contains("exists only for the host"), "{text}");

        let load = Error::ModuleLoad {
            crate_name: "app",
            source: DriverFailure(sys::CUresult::CUDA_ERROR_INVALID_PTX),
            log: "ptxas application ptx input, line 9; error".into(),
        };
        let text = load.to_string();
        assert!(
            text.contains("jit log:\nptxas application ptx input"),
            "{text}"
        );
        assert!(text.contains("--arch"), "{text}");

        let arch = Error::PtxArchUnsupported {
            crate_name: "app",
            ptx_arch: "sm_100".into(),
            ordinal: 0,
            gpu_name: "NVIDIA H100 80GB HBM3".into(),
            gpu_arch: "sm_90".into(),
            source: DriverFailure(sys::CUresult::CUDA_ERROR_NO_BINARY_FOR_GPU),
        };
        let text = arch.to_string();
        assert!(
            text.starts_with(
                "the PTX of crate `app` is compiled for sm_100, which GPU 0 (NVIDIA H100 80GB \
                 HBM3, sm_90) cannot run"
            ),
            "{text}"
        );
        assert!(text.contains("`cargo oxide build --arch sm_90`"), "{text}");

        let isa = |major, minor| PtxIsa { major, minor };
        let old_driver = Error::PtxIsaUnsupported {
            crate_name: "app",
            isa: isa(9, 0),
            driver: CudaVersion(12080),
            needs: Some(CudaVersion(13000)),
            newest: Some(isa(8, 7)),
            source: DriverFailure(sys::CUresult::CUDA_ERROR_UNSUPPORTED_PTX_VERSION),
        };
        let text = old_driver.to_string();
        assert!(
            text.starts_with(
                "the PTX of crate `app` is PTX ISA 9.0, which needs a driver for CUDA 13.0 or \
                 newer, but this driver supports CUDA 12.8 (PTX ISA up to 8.7)"
            ),
            "{text}"
        );
        assert!(text.contains("update the NVIDIA driver"), "{text}");

        let none = Error::NoDevice {
            ordinal: 0,
            count: 0,
        };
        assert!(none.to_string().contains("nvidia-smi"));
        assert!(Error::NoDriver.to_string().contains("LD_LIBRARY_PATH"));
        // Printable with or without a driver (cudarc's own error would need one).
        assert!(format!("{load:?}").contains("CUDA_ERROR_INVALID_PTX"));
    }
}
