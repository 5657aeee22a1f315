//! Loading PTX into a context and launching its kernels.

use std::ffi::{CStr, CString, c_void};
use std::sync::{Arc, Mutex};

use cudarc::driver::{self as cu, CudaStream, DriverError, LaunchConfig, result, sys};

use crate::driver::CudaContext;
use crate::error::{DriverFailure, Error, is_fault};
use crate::param::KernelArgs;
use crate::ptx_compat::{self, Mismatch};

/// Bytes the driver may write into each JIT log.
const JIT_LOG_BYTES: usize = 16 * 1024;

/// A PTX module loaded on a context. Dropping the last handle (the module and its
/// [`Kernel`]s share it) unloads it.
#[derive(Clone, Debug)]
pub struct PtxModule {
    handle: Arc<ModuleHandle>,
}

#[derive(Debug)]
struct ModuleHandle {
    ctx: Arc<cu::CudaContext>,
    module: sys::CUmodule,
    crate_name: &'static str,
}

// SAFETY: driver handles may be used from any thread once their context is bound there, and
// every use binds it first.
unsafe impl Send for ModuleHandle {}
// SAFETY: as above; the handle is never mutated after loading.
unsafe impl Sync for ModuleHandle {}

impl Drop for ModuleHandle {
    fn drop(&mut self) {
        if self.ctx.bind_to_thread().is_ok() {
            // SAFETY: the module was loaded on this context and no kernel handle outlives it.
            // An error here (a context broken by a fault) leaves nothing else to clean up.
            let _ = unsafe { result::module::unload(self.module) };
        }
    }
}

impl PtxModule {
    /// Loads `ptx` (the text of a PTX module) on `ctx`. The driver compiles it for the device;
    /// when it refuses, the error carries the driver's JIT log. `crate_name` names the module
    /// in messages.
    pub fn load(ctx: &CudaContext, crate_name: &'static str, ptx: &CStr) -> Result<Self, Error> {
        let ctx = Arc::clone(ctx.cudarc());
        ctx.bind_to_thread()
            .map_err(|e| classify(e, "binding the context to this thread"))?;
        let mut error_log = vec![0u8; JIT_LOG_BYTES];
        let mut info_log = vec![0u8; JIT_LOG_BYTES];
        let mut options = [
            sys::CUjit_option::CU_JIT_ERROR_LOG_BUFFER,
            sys::CUjit_option::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
            sys::CUjit_option::CU_JIT_INFO_LOG_BUFFER,
            sys::CUjit_option::CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
        ];
        // The driver takes sizes as pointer-sized integers in the `void*` value slots.
        let mut values: [*mut c_void; 4] = [
            error_log.as_mut_ptr().cast(),
            std::ptr::without_provenance_mut(JIT_LOG_BYTES),
            info_log.as_mut_ptr().cast(),
            std::ptr::without_provenance_mut(JIT_LOG_BYTES),
        ];
        let mut module = std::ptr::null_mut();
        // SAFETY: `ptx` is NUL-terminated; the option and value arrays have the same length and
        // the log buffers are as large as the sizes given.
        let loaded = unsafe {
            sys::cuModuleLoadDataEx(
                &mut module,
                ptx.as_ptr().cast(),
                options.len() as u32,
                options.as_mut_ptr(),
                values.as_mut_ptr(),
            )
        }
        .result();
        match loaded {
            Ok(()) => Ok(PtxModule {
                handle: Arc::new(ModuleHandle {
                    ctx,
                    module,
                    crate_name,
                }),
            }),
            Err(e) if is_fault(&e.into()) => Err(fault(e.into(), None)),
            Err(e) => Err(refusal(
                &ctx,
                crate_name,
                ptx,
                e.into(),
                jit_log(&error_log, &info_log),
            )),
        }
    }

    /// The kernel whose PTX `.entry` is `name` (the Rust function's name).
    pub fn kernel(&self, name: &'static str) -> Result<Kernel, Error> {
        let missing = || Error::MissingKernel {
            crate_name: self.handle.crate_name,
            kernel: name,
        };
        let c_name = CString::new(name).map_err(|_| missing())?;
        self.handle
            .ctx
            .bind_to_thread()
            .map_err(|e| classify(e, "binding the context to this thread"))?;
        // SAFETY: the module is loaded on the bound context.
        match unsafe { result::module::get_function(self.handle.module, c_name) } {
            Ok(function) => Ok(Kernel {
                module: Arc::clone(&self.handle),
                function,
                name,
            }),
            Err(DriverError(sys::CUresult::CUDA_ERROR_NOT_FOUND)) => Err(missing()),
            Err(e) => Err(classify(e, "cuModuleGetFunction")),
        }
    }
}

/// Why the driver refused `ptx`: an architecture or PTX ISA that this GPU or driver cannot
/// take, named on both sides when the PTX's header shows it, else the driver's error and log.
fn refusal(
    ctx: &cu::CudaContext,
    crate_name: &'static str,
    ptx: &CStr,
    source: DriverFailure,
    log: String,
) -> Error {
    let ordinal = ctx.ordinal();
    let gpu = crate::driver::compute_capability(ordinal).ok();
    let driver = crate::driver::driver_version().ok();
    let text = ptx.to_string_lossy();
    match ptx_compat::mismatch(&text, gpu, driver) {
        Some(Mismatch::Arch { ptx, gpu }) => Error::PtxArchUnsupported {
            crate_name,
            ptx_arch: ptx.to_string(),
            ordinal,
            gpu_name: ctx.name().unwrap_or_else(|_| "name unknown".into()),
            gpu_arch: format!("sm_{}{}", gpu.0, gpu.1),
            source,
        },
        Some(Mismatch::Isa { ptx, driver, needs }) => Error::PtxIsaUnsupported {
            crate_name,
            isa: ptx,
            driver,
            needs,
            newest: ptx_compat::newest_isa_for(driver),
            source,
        },
        None => Error::ModuleLoad {
            crate_name,
            source,
            log,
        },
    }
}

/// One kernel of a loaded [`PtxModule`].
#[derive(Clone, Debug)]
pub struct Kernel {
    module: Arc<ModuleHandle>,
    function: sys::CUfunction,
    name: &'static str,
}

// SAFETY: see `ModuleHandle`; a function handle lives as long as its module, which `module`
// keeps loaded.
unsafe impl Send for Kernel {}
// SAFETY: as above.
unsafe impl Sync for Kernel {}

impl Kernel {
    /// The kernel's name (its PTX `.entry`).
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Queues the kernel on `stream` with `args`. Returns when the launch is queued, not when
    /// the kernel has finished: a fault shows up at the next synchronisation (see
    /// [`crate::synchronize`]).
    ///
    /// # Safety
    /// `args` must match the kernel's parameters, in order and in type: the kernel reads them
    /// as what its signature says. The launchers `#[cuda_module]` generates guarantee this
    /// from the kernel's own signature; call this directly only for PTX of another origin.
    pub unsafe fn launch(
        &self,
        stream: &CudaStream,
        cfg: LaunchConfig,
        mut args: KernelArgs<'_>,
    ) -> Result<(), Error> {
        if let Err((index, kind, expected, pushed)) = args.check() {
            return Err(Error::ArgumentPacking {
                kernel: self.name,
                index,
                kind,
                expected,
                pushed,
            });
        }
        if stream.context().cu_ctx() != self.module.ctx.cu_ctx() {
            return Err(Error::Launch {
                kernel: self.name,
                source: DriverFailure(sys::CUresult::CUDA_ERROR_INVALID_CONTEXT),
            });
        }
        stream
            .context()
            .bind_to_thread()
            .map_err(|e| classify(e, "binding the context to this thread"))?;
        let earlier = record_launch(self.name);
        let mut pointers = args.pointers();
        // SAFETY: the function belongs to the bound context, `pointers` has one entry per PTX
        // parameter (checked above), each pointing to storage `args` keeps alive until after
        // the call; the caller vouches for the types.
        let launched = unsafe {
            result::launch_kernel(
                self.function,
                cfg.grid_dim,
                cfg.block_dim,
                cfg.shared_mem_bytes,
                stream.cu_stream(),
                &mut pointers,
            )
        };
        drop(args);
        launched.map_err(|e| {
            let source = DriverFailure::from(e);
            if is_fault(&source) {
                // A sticky fault of an earlier kernel, unless launches are synchronous, in which
                // case it is this kernel's own.
                let blocking = std::env::var("CUDA_LAUNCH_BLOCKING").is_ok_and(|v| v == "1");
                let culprit = if blocking { None } else { earlier };
                fault(source, Some(culprit.unwrap_or(self.name)))
            } else {
                Error::Launch {
                    kernel: self.name,
                    source,
                }
            }
        })
    }
}

/// The kernel most recently launched through cuda-host in this process: the one a fault seen
/// later is attributed to.
static LAST_LAUNCH: Mutex<Option<&'static str>> = Mutex::new(None);

/// Records `name` as the last launch and returns the one before it.
fn record_launch(name: &'static str) -> Option<&'static str> {
    let mut last = LAST_LAUNCH
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    last.replace(name)
}

fn last_launch() -> Option<&'static str> {
    *LAST_LAUNCH
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A fault, attributed to `kernel` or else to the last launched kernel.
fn fault(source: DriverFailure, kernel: Option<&'static str>) -> Error {
    Error::KernelFault {
        kernel: kernel
            .or_else(last_launch)
            .unwrap_or("(none launched through cuda-host)"),
        source,
    }
}

/// A driver error seen during `call`: a fault when it is one, a plain driver error otherwise.
fn classify(error: DriverError, call: &'static str) -> Error {
    let source = DriverFailure::from(error);
    if is_fault(&source) {
        fault(source, None)
    } else {
        Error::Driver { call, source }
    }
}

/// Waits for everything queued on `stream`. A kernel that faulted is reported as
/// [`Error::KernelFault`], named after the last kernel launched through cuda-host.
pub fn synchronize(stream: &CudaStream) -> Result<(), Error> {
    stream
        .synchronize()
        .map_err(|e| classify(e, "cuStreamSynchronize"))
}

/// Lets `?` turn cudarc's errors (from copies, allocations, synchronisation) into [`Error`]s,
/// with faults attributed to the last launched kernel.
impl From<DriverError> for Error {
    fn from(source: DriverError) -> Self {
        classify(source, "a cudarc driver call")
    }
}

/// The driver's error log, then its info log, without the unused ends of the buffers.
fn jit_log(error_log: &[u8], info_log: &[u8]) -> String {
    let text = |buf: &[u8]| {
        let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
        String::from_utf8_lossy(&buf[..end]).trim().to_owned()
    };
    [text(error_log), text(info_log)]
        .into_iter()
        .filter(|part| !part.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jit_log_keeps_the_written_text() {
        let mut error = vec![0u8; 64];
        error[..11].copy_from_slice(b"line 3: bad");
        let info = b"ptxas info    : 0 bytes gmem\0garbage".to_vec();
        assert_eq!(
            jit_log(&error, &info),
            "line 3: bad\nptxas info    : 0 bytes gmem"
        );
        assert_eq!(jit_log(&[0; 8], &[0; 8]), "");
    }

    #[test]
    fn faults_name_the_last_launched_kernel() {
        record_launch("first");
        assert_eq!(record_launch("second"), Some("first"));
        let error = Error::from(DriverError(sys::CUresult::CUDA_ERROR_LAUNCH_FAILED));
        assert!(
            matches!(
                error,
                Error::KernelFault {
                    kernel: "second",
                    ..
                }
            ),
            "{error:?}"
        );
        let other = Error::from(DriverError(sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY));
        assert!(matches!(other, Error::Driver { .. }), "{other:?}");
    }
}
