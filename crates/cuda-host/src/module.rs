//! Loading PTX into a context and launching its kernels.

use std::ffi::{CStr, CString, c_void};
use std::sync::Arc;

use cudarc::driver::{self as cu, CudaStream, DriverError, LaunchConfig, result, sys};

use crate::driver::CudaContext;
use crate::error::Error;
use crate::failure::{DriverFailure, is_fault};
use crate::fault::{classify, fault};
use crate::inflight;
use crate::param::KernelArgs;
use crate::ptx_compat::{self, Mismatch};

/// Bytes the driver may write into each JIT log.
const JIT_LOG_BYTES: usize = 16 * 1024;

/// The driver's JIT options that keep the source information a PTX module carries: with
/// `.loc` lines (cuda-oxide's default, `--device-debug=lines`) the SASS keeps the line table,
/// like `ptxas -lineinfo`, so compute-sanitizer, cuda-gdb and Nsight Compute show Rust
/// `file:line`; a `.target ..., debug` module (`--device-debug=full`) is compiled with full
/// debug information and without optimisation, like `ptxas -g`. Each option takes the value 1.
pub(crate) fn debug_jit_options(ptx: &str) -> Vec<sys::CUjit_option> {
    let directives = |name: &str| {
        ptx.lines().map(str::trim_start).any(|line| {
            line.strip_prefix(name)
                .is_some_and(|rest| rest.starts_with([' ', '\t']))
        })
    };
    let debug_target = ptx.lines().any(|line| {
        line.trim_start()
            .strip_prefix(".target")
            .is_some_and(|rest| rest.split(',').skip(1).any(|t| t.trim() == "debug"))
    });
    let mut options = Vec::new();
    if directives(".loc") {
        options.push(sys::CUjit_option::CU_JIT_GENERATE_LINE_INFO);
    }
    if debug_target {
        options.push(sys::CUjit_option::CU_JIT_GENERATE_DEBUG_INFO);
    }
    options
}

/// The dynamic shared memory every kernel may use: a launch that asks for more first raises
/// the kernel's limit (`CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES`), up to what the
/// device allows a block.
pub const DEFAULT_DYNAMIC_SHARED_BYTES: u32 = 48 * 1024;

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
    /// The module's panic record, when its kernels can panic.
    panic: Option<Arc<crate::panic::PanicBuffer>>,
    image: ModuleImage,
}

/// What a [`PtxModule`] was loaded from.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ModuleImage {
    /// The cubin `ptxas` made at build time for this GPU's architecture: nothing to compile.
    Cubin,
    /// The PTX, which the driver compiled for this GPU when loading it.
    Ptx,
    /// The kernels' CPU flavour, run by the CPU device (`CUDA_OXIDE_DEVICE=cpu`).
    Cpu,
}

// SAFETY: driver handles may be used from any thread once their context is bound there, and
// every use binds it first.
unsafe impl Send for ModuleHandle {}
// SAFETY: as above; the handle is never mutated after loading.
unsafe impl Sync for ModuleHandle {}

impl Drop for ModuleHandle {
    fn drop(&mut self) {
        if let Some(buffer) = &self.panic {
            crate::panic::detach(buffer);
        }
        if self.ctx.bind_to_thread().is_ok() {
            // SAFETY: the module was loaded on this context and no kernel handle outlives it.
            // An error here (a context broken by a fault) leaves nothing else to clean up.
            let _ = unsafe { result::module::unload(self.module) };
        }
    }
}

impl PtxModule {
    /// Loads a crate's embedded module: a cubin that this GPU runs, so the driver compiles
    /// nothing, else — or if the driver refuses the cubin — `ptx`, which the driver compiles
    /// (newer GPUs run it). `cubin` is the one built for the architecture `ptx` targets (taken
    /// on a GPU of exactly that compute capability), a set of one per architecture of the
    /// build (`cargo oxide build --arch sm_80,sm_86,sm_90`; the exact one, else the newest
    /// of the GPU's major version), or empty. With `CUDA_OXIDE_IMAGE=ptx` in the environment,
    /// the PTX is loaded whatever the cubins; with `CUDA_OXIDE_VERBOSE` set, a line on
    /// standard error says which image was loaded.
    pub fn load_embedded(
        ctx: &CudaContext,
        crate_name: &'static str,
        ptx: &CStr,
        cubin: &[u8],
    ) -> Result<Self, Error> {
        let gpu = crate::driver::compute_capability(ctx.cudarc().ordinal()).ok();
        let chosen = match (std::env::var(IMAGE_VARIABLE).as_deref(), gpu) {
            (Ok("ptx"), _) | (_, None) => None,
            (_, Some(gpu)) => cubin_for(gpu, ptx, cubin),
        };
        if let Some((arch, image)) = chosen
            && let Some(module) = Self::load_cubin(ctx, crate_name, image)
        {
            say_which(crate_name, &format!("its {arch} cubin"));
            return Ok(module);
        }
        say_which(crate_name, "its PTX, compiled by the driver");
        Self::load(ctx, crate_name, ptx)
    }

    /// [`PtxModule::load_embedded`], or on the CPU device (`CUDA_OXIDE_DEVICE=cpu`) the
    /// crate's CPU image: the address of the image table the backend linked into the binary.
    pub fn load_embedded_or_cpu(
        ctx: &CudaContext,
        crate_name: &'static str,
        ptx: &CStr,
        cubin: &[u8],
        cpu_image: *const c_void,
    ) -> Result<Self, Error> {
        if cuda_cpu::installed() {
            return Self::load_cpu(ctx, crate_name, cpu_image);
        }
        Self::load_embedded(ctx, crate_name, ptx, cubin)
    }

    /// Loads the CPU image table at `table` on the CPU device.
    fn load_cpu(
        ctx: &CudaContext,
        crate_name: &'static str,
        table: *const c_void,
    ) -> Result<Self, Error> {
        cuda_cpu::image::check(table).map_err(|reason| Error::CpuImage { crate_name, reason })?;
        let ctx = Arc::clone(ctx.cudarc());
        ctx.bind_to_thread()
            .map_err(|e| classify(e, "binding the context to this thread"))?;
        let mut module = std::ptr::null_mut();
        // SAFETY: an image table the check accepted, linked into the binary for good.
        unsafe { sys::cuModuleLoadData(&mut module, table) }
            .result()
            .map_err(|e| classify(e, "cuModuleLoadData (the CPU image)"))?;
        Self::loaded(ctx, module, crate_name, ModuleImage::Cpu)
    }

    /// The module the driver just loaded as `module`, with its panic record attached; if
    /// attaching fails, the module is unloaded again.
    fn loaded(
        ctx: Arc<cu::CudaContext>,
        module: sys::CUmodule,
        crate_name: &'static str,
        image: ModuleImage,
    ) -> Result<Self, Error> {
        let panic = crate::panic::attach(ctx.cu_ctx() as usize, module).map_err(|e| {
            // SAFETY: the module was just loaded and nothing refers to it yet.
            let _ = unsafe { result::module::unload(module) };
            classify(e, "allocating the module's panic record")
        })?;
        Ok(PtxModule {
            handle: Arc::new(ModuleHandle {
                ctx,
                module,
                crate_name,
                panic,
                image,
            }),
        })
    }

    /// Loads `cubin` on `ctx`; `None` if the driver refuses it (the caller falls back to PTX).
    fn load_cubin(ctx: &CudaContext, crate_name: &'static str, cubin: &[u8]) -> Option<Self> {
        let ctx = Arc::clone(ctx.cudarc());
        ctx.bind_to_thread().ok()?;
        let mut module = std::ptr::null_mut();
        // SAFETY: `cubin` is a whole ELF image that stays alive during the call (the driver
        // copies what it keeps).
        let loaded = unsafe {
            sys::cuModuleLoadDataEx(
                &mut module,
                cubin.as_ptr().cast(),
                0,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            )
        }
        .result();
        loaded.ok()?;
        // A failure here is reported by the PTX path, which meets it again.
        Self::loaded(ctx, module, crate_name, ModuleImage::Cubin).ok()
    }

    /// What this module was loaded from.
    pub fn image(&self) -> ModuleImage {
        self.handle.image
    }

    /// The context the module was loaded on.
    pub(crate) fn context(&self) -> CudaContext {
        CudaContext::from_cudarc(Arc::clone(&self.handle.ctx))
    }

    /// The crate whose kernels these are.
    pub(crate) fn crate_name(&self) -> &'static str {
        self.handle.crate_name
    }

    /// Loads `ptx` (the text of a PTX module) on `ctx`. The driver compiles it for the device;
    /// when it refuses, the error carries the driver's JIT log. `crate_name` names the module
    /// in messages.
    pub fn load(ctx: &CudaContext, crate_name: &'static str, ptx: &CStr) -> Result<Self, Error> {
        if cuda_cpu::installed() {
            return Err(Error::CpuImage {
                crate_name,
                reason: "the CPU device runs the kernels compiled into the binary, not PTX".into(),
            });
        }
        let ctx = Arc::clone(ctx.cudarc());
        ctx.bind_to_thread()
            .map_err(|e| classify(e, "binding the context to this thread"))?;
        let mut error_log = vec![0u8; JIT_LOG_BYTES];
        let mut info_log = vec![0u8; JIT_LOG_BYTES];
        let mut options = vec![
            sys::CUjit_option::CU_JIT_ERROR_LOG_BUFFER,
            sys::CUjit_option::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
            sys::CUjit_option::CU_JIT_INFO_LOG_BUFFER,
            sys::CUjit_option::CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
        ];
        // The driver takes sizes and flags as pointer-sized integers in the `void*` value slots.
        let mut values: Vec<*mut c_void> = vec![
            error_log.as_mut_ptr().cast(),
            std::ptr::without_provenance_mut(JIT_LOG_BYTES),
            info_log.as_mut_ptr().cast(),
            std::ptr::without_provenance_mut(JIT_LOG_BYTES),
        ];
        for option in debug_jit_options(&String::from_utf8_lossy(ptx.to_bytes())) {
            options.push(option);
            values.push(std::ptr::without_provenance_mut(1));
        }
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
            Ok(()) => Self::loaded(ctx, module, crate_name, ModuleImage::Ptx),
            Err(e) if is_fault(&e.into()) => Err(fault(e.into(), Some(ctx.cu_ctx() as usize))),
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
            Ok(function) => {
                // SAFETY: the function was just looked up in the loaded module.
                let max_threads = unsafe {
                    result::function::get_function_attribute(
                        function,
                        sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
                    )
                }
                .map_err(|e| classify(e, "cuFuncGetAttribute(MAX_THREADS_PER_BLOCK)"))?;
                Ok(Kernel {
                    module: Arc::clone(&self.handle),
                    function,
                    entry: name,
                    label: name,
                    max_threads_per_block: u32::try_from(max_threads).unwrap_or(0),
                })
            }
            Err(DriverError(sys::CUresult::CUDA_ERROR_NOT_FOUND)) => Err(missing()),
            Err(e) => Err(classify(e, "cuModuleGetFunction")),
        }
    }
}

/// The variable that makes `load` take the embedded PTX even where a cubin would do
/// (`CUDA_OXIDE_IMAGE=ptx`): to check what the driver's JIT makes of it.
pub const IMAGE_VARIABLE: &str = "CUDA_OXIDE_IMAGE";

/// The cubin among the embedded ones that a GPU of compute capability `gpu` runs, with its
/// architecture: of a set, the exact one, else the newest of the GPU's major version; a lone
/// cubin (built for the architecture `ptx` targets) only on exactly that compute capability.
fn cubin_for<'a>(gpu: (u32, u32), ptx: &CStr, cubin: &'a [u8]) -> Option<(String, &'a [u8])> {
    if let Some(set) = reserved_oxide_symbols::cubin_set::decode(cubin) {
        return set
            .into_iter()
            .filter_map(|(arch, image)| Some((ptx_compat::PtxArch::parse(arch)?, image)))
            .filter(|(arch, _)| arch.cubin_runs_on(gpu))
            .max_by_key(|(arch, _)| (arch.capability == gpu, arch.capability, arch.suffix))
            .map(|(arch, image)| (arch.to_string(), image));
    }
    let header = ptx_compat::PtxHeader::parse(&ptx.to_string_lossy())?;
    (!cubin.is_empty() && gpu == header.target.capability)
        .then(|| (header.target.to_string(), cubin))
}

/// The `CUDA_OXIDE_VERBOSE` line saying what a crate's module was loaded from.
fn say_which(crate_name: &str, image: &str) {
    if std::env::var_os("CUDA_OXIDE_VERBOSE").is_some_and(|v| !v.is_empty() && v != "0") {
        eprintln!("cuda-oxide: crate `{crate_name}`: loaded {image}");
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
    /// Its PTX `.entry`.
    entry: &'static str,
    /// What errors call it: the entry, or for an instantiation of a generic kernel, the
    /// instantiation as Rust writes it (`fold::<WrappingSum>`).
    label: &'static str,
    /// The most threads a block of this kernel may have: its `#[launch_bounds]`, or what its
    /// register use allows on this device.
    max_threads_per_block: u32,
}

// SAFETY: see `ModuleHandle`; a function handle lives as long as its module, which `module`
// keeps loaded.
unsafe impl Send for Kernel {}
// SAFETY: as above.
unsafe impl Sync for Kernel {}

impl Kernel {
    /// The kernel's name (its PTX `.entry`).
    pub fn name(&self) -> &'static str {
        self.entry
    }

    /// The same kernel, called `name` in errors (an instantiation of a generic kernel).
    pub(crate) fn called(self, label: &'static str) -> Kernel {
        Kernel { label, ..self }
    }

    /// The most threads per block this kernel can be launched with on its device: its
    /// `#[launch_bounds]` if it has one, else the hardware's limit reduced by its register use.
    pub fn max_threads_per_block(&self) -> u32 {
        self.max_threads_per_block
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
                kernel: self.label,
                index,
                kind,
                expected,
                pushed,
            });
        }
        check_config(self.label, &cfg, self.max_threads_per_block)?;
        if stream.context().cu_ctx() != self.module.ctx.cu_ctx() {
            return Err(Error::Launch {
                kernel: self.label,
                source: DriverFailure(sys::CUresult::CUDA_ERROR_INVALID_CONTEXT),
            });
        }
        stream
            .context()
            .bind_to_thread()
            .map_err(|e| classify(e, "binding the context to this thread"))?;
        self.allow_dynamic_shared(cfg.shared_mem_bytes)?;
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
        if let Err(e) = launched {
            let source = DriverFailure::from(e);
            return Err(if is_fault(&source) && inflight::launches_block() {
                // Synchronous launches report their own kernel's fault (or panic).
                match crate::panic::recorded(Some(self.module.ctx.cu_ctx() as usize)) {
                    Some(panic) => Error::KernelPanic {
                        kernel: self.label,
                        in_flight: Vec::new(),
                        panic: Box::new(panic),
                        source,
                    },
                    None => Error::KernelFault {
                        kernel: self.label,
                        in_flight: Vec::new(),
                        source,
                    },
                }
            } else if is_fault(&source) {
                // A sticky fault of a kernel launched earlier: this one was not queued.
                fault(source, Some(inflight::context_of(stream)))
            } else {
                args.target().refused(self.label, source)
            });
        }
        args.target().queued(stream, self.label);
        // Records each buffer's use after the launch (cudarc's ordering of later copies and frees).
        drop(args);
        Ok(())
    }
}

/// Refuses, with a message that says why, a launch the driver would refuse with a bare
/// `CUDA_ERROR_INVALID_VALUE`: an empty grid or block, or a block larger than the kernel allows.
fn check_config(kernel: &'static str, cfg: &LaunchConfig, max_threads: u32) -> Result<(), Error> {
    let bad = |problem: String| Error::BadLaunchConfig {
        kernel,
        config: format!("grid {:?} and block {:?}", cfg.grid_dim, cfg.block_dim),
        problem,
    };
    let (bx, by, bz) = cfg.block_dim;
    let (gx, gy, gz) = cfg.grid_dim;
    if [gx, gy, gz, bx, by, bz].contains(&0) {
        return Err(bad(
            "every grid and block dimension must be at least 1 (a 1-D launch is `(n, 1, 1)`)"
                .into(),
        ));
    }
    let threads = u64::from(bx) * u64::from(by) * u64::from(bz);
    if max_threads > 0 && threads > u64::from(max_threads) {
        return Err(bad(format!(
            "a block of {threads} threads is more than the {max_threads} this kernel allows \
             (its #[launch_bounds], or the registers it needs); launch smaller blocks"
        )));
    }
    Ok(())
}

impl Kernel {
    /// Lets the kernel use `bytes` of dynamic shared memory: above
    /// [`DEFAULT_DYNAMIC_SHARED_BYTES`], raises its limit, or says why the device cannot.
    /// Expects the kernel's context to be bound.
    fn allow_dynamic_shared(&self, bytes: u32) -> Result<(), Error> {
        if bytes <= DEFAULT_DYNAMIC_SHARED_BYTES {
            return Ok(());
        }
        let device_max = self
            .module
            .ctx
            .attribute(
                sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
            )
            .map_err(|e| classify(e, "cuDeviceGetAttribute"))?;
        // SAFETY: the function belongs to the module this kernel keeps loaded.
        let static_bytes = unsafe {
            result::function::get_function_attribute(
                self.function,
                sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES,
            )
        }
        .map_err(|e| classify(e, "cuFuncGetAttribute"))?;
        let device_max = u32::try_from(device_max).unwrap_or(0);
        let static_bytes = u32::try_from(static_bytes).unwrap_or(0);
        let available = device_max.saturating_sub(static_bytes);
        if bytes > available {
            return Err(Error::SharedMemoryTooLarge {
                kernel: self.label,
                requested: bytes,
                available,
                static_bytes,
                device_max,
            });
        }
        // SAFETY: as above; the value was checked against the device's limit.
        unsafe {
            result::function::set_function_attribute(
                self.function,
                sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                bytes as i32,
            )
        }
        .map_err(|e| classify(e, "cuFuncSetAttribute"))
    }
}

/// Waits for everything queued on `stream`. A kernel that faulted is reported as
/// [`Error::KernelFault`], naming it when it is the only kernel launched through cuda-host that
/// had not been seen to finish, and listing those kernels when there were several.
pub fn synchronize(stream: &CudaStream) -> Result<(), Error> {
    let point = inflight::point(stream);
    stream.synchronize().map_err(|e| {
        let source = DriverFailure::from(e);
        if is_fault(&source) {
            fault(source, Some(inflight::context_of(stream)))
        } else {
            Error::Driver {
                call: "cuStreamSynchronize",
                source,
            }
        }
    })?;
    inflight::finished(point);
    Ok(())
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
    #[test]
    fn jit_keeps_the_source_information_the_ptx_has() {
        use super::{debug_jit_options, sys::CUjit_option::*};
        let plain = ".version 7.8\n.target sm_90\n.visible .entry k()\n{\n\tret;\n}\n";
        assert!(debug_jit_options(plain).is_empty());
        let lines = ".target sm_90\n{\n\t.loc\t1 13 0\n\tret;\n}\n\t.file\t1 \"a.rs\"\n";
        assert_eq!(debug_jit_options(lines), vec![CU_JIT_GENERATE_LINE_INFO]);
        let full = ".target sm_90, debug\n{\n\t.loc\t1 13 0\n}\n";
        assert_eq!(
            debug_jit_options(full),
            vec![CU_JIT_GENERATE_LINE_INFO, CU_JIT_GENERATE_DEBUG_INFO]
        );
        // A name that merely starts with `.loc` (a `.local` declaration) is no line directive.
        let local = ".target sm_90\n\t.local .align 8 .b8 depot[8];\n";
        assert!(debug_jit_options(local).is_empty());
    }

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
    fn launch_configs_are_checked_against_the_kernel() {
        let cfg = |grid, block| LaunchConfig {
            grid_dim: grid,
            block_dim: block,
            shared_mem_bytes: 0,
        };
        assert!(check_config("k", &cfg((4, 1, 1), (256, 1, 1)), 256).is_ok());
        assert!(check_config("k", &cfg((4, 2, 3), (16, 16, 4)), 1024).is_ok());
        let big = check_config("k", &cfg((4, 1, 1), (32, 16, 1)), 256).unwrap_err();
        let text = big.to_string();
        assert!(text.contains("512 threads"), "{text}");
        assert!(text.contains("the 256 this kernel allows"), "{text}");
        let empty = check_config("k", &cfg((0, 1, 1), (32, 1, 1)), 1024).unwrap_err();
        assert!(empty.to_string().contains("at least 1"), "{empty}");
    }

    #[test]
    fn the_cubin_a_gpu_runs_is_chosen() {
        use reserved_oxide_symbols::cubin_set;
        let ptx = c".version 8.0\n.target sm_90\n.address_size 64\n";
        let set = cubin_set::encode(&[
            ("sm_80", b"eighty"),
            ("sm_86", b"eighty-six"),
            ("sm_89", b"eighty-nine"),
            ("sm_90", b"ninety"),
            ("sm_90a", b"ninety-a"),
        ]);
        let chosen = |gpu| cubin_for(gpu, ptx, &set).map(|(arch, image)| (arch, image.to_vec()));
        // The exact one; of two, the `a` one, made for this very GPU.
        assert_eq!(
            chosen((8, 6)),
            Some(("sm_86".into(), b"eighty-six".to_vec()))
        );
        assert_eq!(
            chosen((9, 0)),
            Some(("sm_90a".into(), b"ninety-a".to_vec()))
        );
        // Else the newest of the same major version that the GPU runs.
        assert_eq!(
            chosen((8, 7)),
            Some(("sm_86".into(), b"eighty-six".to_vec()))
        );
        // None for another major version: the PTX then.
        assert_eq!(chosen((12, 0)), None);
        assert_eq!(chosen((7, 5)), None);
        // A lone cubin: only on the PTX's own architecture.
        assert_eq!(
            cubin_for((9, 0), ptx, b"lone").map(|(a, _)| a),
            Some("sm_90".into())
        );
        assert_eq!(cubin_for((10, 0), ptx, b"lone"), None);
        assert_eq!(cubin_for((9, 0), ptx, b""), None);
    }
}
