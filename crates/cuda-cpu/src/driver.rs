//! The CUDA driver API on the CPU: the entry points the shim's table points at.
//!
//! One device (ordinal 0) with one context. Device pointers are host addresses. Streams run
//! what is queued at once, in order; events record the time they are reached. A launch runs
//! the grid ([crate::launch]); a thread that traps makes the launch fail, and, as on a GPU,
//! the context then answers every later call with that failure.

use std::ffi::{CStr, c_char, c_int, c_uint, c_void};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Instant;

use cudarc::driver::sys::{
    CUcontext, CUdevice, CUdevice_attribute, CUdeviceptr, CUevent, CUfunction,
    CUfunction_attribute, CUhostFn, CUjit_option, CUlimit, CUmodule, CUresult, CUstream,
    CUstreamCallback,
};

use crate::graph::{self, Graph, Work};
use crate::image::{self, Module};
use crate::launch::{self, Grid, Outcome};
use crate::memory;
use crate::shim::ENTRY_POINTS;

/// The failure a trap left in the context (0: none), returned by every later call.
static STICKY: AtomicU32 = AtomicU32::new(0);

/// The version the CPU device reports (CUDA 13.0, like the GPU machines' driver).
const DRIVER_VERSION: c_int = 13000;

/// Where the shim sends an entry point the CPU device does not implement (`index` in
/// `driver_entry_points.txt`): names it once and answers `CUDA_ERROR_NOT_SUPPORTED`.
pub(crate) extern "C" fn unimplemented(index: c_uint) -> CUresult {
    let name = ENTRY_POINTS.lines().nth(index as usize).unwrap_or("?");
    eprintln!("cuda-oxide CPU device: `{name}` is not supported on the CPU device");
    CUresult::CUDA_ERROR_NOT_SUPPORTED
}

/// Declares the implemented entry points (each answering the sticky failure first, unless
/// marked `always`) and the table of them.
macro_rules! entry_points {
    ($( $(#[$always:ident])? fn $name:ident ( $($arg:ident : $ty:ty),* ) $body:block )*) => {
        $(
            #[allow(non_snake_case, clippy::missing_safety_doc)]
            unsafe extern "C" fn $name($($arg: $ty),*) -> CUresult {
                entry_points!(@sticky $($always)?);
                #[allow(unused_unsafe)]
                unsafe { $body }
            }
        )*
        /// The address of the implementation of entry point `name`, if the CPU device has one.
        pub(crate) fn implementation(name: &str) -> Option<usize> {
            match name {
                $( stringify!($name) => Some($name as *const () as usize), )*
                _ => None,
            }
        }
    };
    (@sticky always) => {};
    (@sticky) => {
        if let Some(failure) = sticky_failure() {
            return failure;
        }
    };
}

/// The failure a trap left in the context, if any.
fn sticky_failure() -> Option<CUresult> {
    match STICKY.load(Ordering::Acquire) {
        0 => None,
        // SAFETY: only ever set to the value of a `CUresult`.
        sticky => Some(unsafe { std::mem::transmute::<u32, CUresult>(sticky) }),
    }
}

const OK: CUresult = CUresult::CUDA_SUCCESS;

/// Writes `value` through `out`, or answers `CUDA_ERROR_INVALID_VALUE` for a null `out`.
unsafe fn put<T>(out: *mut T, value: T) -> CUresult {
    if out.is_null() {
        return CUresult::CUDA_ERROR_INVALID_VALUE;
    }
    // SAFETY: non-null, and the driver API's contract makes it writable.
    unsafe { out.write(value) };
    OK
}

/// The one context's handle (any non-null address works).
fn context() -> CUcontext {
    static CONTEXT: u8 = 0;
    (&raw const CONTEXT) as CUcontext
}

/// A fresh handle for a stream (streams hold nothing: their work runs when queued).
fn new_handle() -> *mut c_void {
    Box::into_raw(Box::new(0u64)).cast()
}

/// An event: the instant it was last reached.
struct Event {
    reached: std::sync::Mutex<Option<Instant>>,
}

fn attribute(attrib: CUdevice_attribute) -> c_int {
    use CUdevice_attribute::*;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as c_int;
    match attrib {
        CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK => 1024,
        CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X | CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y => 1024,
        CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z => 64,
        CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X => i32::MAX,
        CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y | CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z => 65535,
        CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK => 48 * 1024,
        CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN => {
            kernel_abi::CPU_DYNAMIC_SHARED_BYTES as c_int
        }
        CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR => 228 * 1024,
        CU_DEVICE_ATTRIBUTE_WARP_SIZE => 32,
        CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT => cores,
        CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR => 9,
        CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR => 0,
        CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR => 2048,
        CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK => 65536,
        CU_DEVICE_ATTRIBUTE_CLOCK_RATE => 1_000_000,
        CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING
        | CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY
        | CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS => 1,
        _ => 0,
    }
}

entry_points! {
    #[always]
    fn cuInit(_flags: c_uint) { OK }
    #[always]
    fn cuDriverGetVersion(version: *mut c_int) { put(version, DRIVER_VERSION) }
    fn cuDeviceGetCount(count: *mut c_int) { put(count, 1) }
    fn cuDeviceGet(device: *mut CUdevice, ordinal: c_int) {
        if ordinal != 0 {
            return CUresult::CUDA_ERROR_INVALID_DEVICE;
        }
        put(device, 0)
    }
    fn cuDeviceGetAttribute(value: *mut c_int, attrib: CUdevice_attribute, _dev: CUdevice) {
        put(value, attribute(attrib))
    }
    fn cuDeviceGetName(name: *mut c_char, len: c_int, _dev: CUdevice) {
        let text = b"cuda-oxide CPU device\0";
        if name.is_null() || len <= 0 {
            return CUresult::CUDA_ERROR_INVALID_VALUE;
        }
        let n = text.len().min(len as usize);
        std::ptr::copy_nonoverlapping(text.as_ptr().cast(), name, n);
        *name.add(n - 1) = 0;
        OK
    }
    fn cuDeviceTotalMem_v2(bytes: *mut usize, _dev: CUdevice) { put(bytes, 16 << 30) }
    fn cuMemGetInfo_v2(free: *mut usize, total: *mut usize) {
        let _ = put(free, 16 << 30);
        put(total, 16 << 30)
    }
    fn cuDevicePrimaryCtxRetain(ctx: *mut CUcontext, _dev: CUdevice) { put(ctx, context()) }
    #[always]
    fn cuDevicePrimaryCtxRelease_v2(_dev: CUdevice) { OK }
    fn cuCtxSetCurrent(_ctx: CUcontext) { OK }
    fn cuCtxGetCurrent(ctx: *mut CUcontext) { put(ctx, context()) }
    fn cuCtxPushCurrent_v2(_ctx: CUcontext) { OK }
    fn cuCtxPopCurrent_v2(ctx: *mut CUcontext) {
        if !ctx.is_null() {
            *ctx = context();
        }
        OK
    }
    fn cuCtxGetDevice(device: *mut CUdevice) { put(device, 0) }
    fn cuCtxSynchronize() { OK }
    fn cuCtxSetLimit(limit: CUlimit, value: usize) {
        memory::set_limit(limit as u32, value);
        OK
    }
    fn cuCtxGetLimit(value: *mut usize, limit: CUlimit) { put(value, memory::limit(limit as u32)) }
    fn cuStreamCreate(stream: *mut CUstream, _flags: c_uint) { put(stream, new_handle().cast()) }
    fn cuStreamCreateWithPriority(stream: *mut CUstream, _flags: c_uint, _priority: c_int) {
        put(stream, new_handle().cast())
    }
    #[always]
    fn cuStreamDestroy_v2(_stream: CUstream) { OK }
    fn cuStreamSynchronize(_stream: CUstream) { OK }
    fn cuStreamQuery(_stream: CUstream) { OK }
    fn cuStreamWaitEvent(_stream: CUstream, _event: CUevent, _flags: c_uint) { OK }
    fn cuStreamIsCapturing(stream: CUstream, status: *mut cudarc::driver::sys::CUstreamCaptureStatus) {
        use cudarc::driver::sys::CUstreamCaptureStatus::*;
        put(status, if graph::is_capturing(stream as usize) {
            CU_STREAM_CAPTURE_STATUS_ACTIVE
        } else {
            CU_STREAM_CAPTURE_STATUS_NONE
        })
    }
    fn cuStreamGetCtx(_stream: CUstream, ctx: *mut CUcontext) { put(ctx, context()) }
    #[always]
    fn cuStreamAddCallback(stream: CUstream, callback: CUstreamCallback, data: *mut c_void, _flags: c_uint) {
        let status = sticky_failure().unwrap_or(OK);
        if let Some(callback) = callback {
            callback(stream, status, data);
        }
        OK
    }
    fn cuLaunchHostFunc(stream: CUstream, function: CUhostFn, data: *mut c_void) {
        match function {
            Some(function) => queue(stream, Work::Host { function, data: data as usize }),
            None => CUresult::CUDA_ERROR_INVALID_VALUE,
        }
    }
    fn cuStreamBeginCapture_v2(stream: CUstream, _mode: cudarc::driver::sys::CUstreamCaptureMode) {
        if stream.is_null() {
            // The legacy default stream cannot be captured, as on a GPU.
            return CUresult::CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
        }
        if graph::begin(stream as usize) { OK } else { CUresult::CUDA_ERROR_ILLEGAL_STATE }
    }
    #[always]
    fn cuStreamEndCapture(stream: CUstream, out: *mut cudarc::driver::sys::CUgraph) {
        match graph::end(stream as usize) {
            Some(recorded) => put(out, Box::into_raw(Box::new(recorded)).cast()),
            None => CUresult::CUDA_ERROR_ILLEGAL_STATE,
        }
    }
    fn cuGraphInstantiateWithFlags(out: *mut cudarc::driver::sys::CUgraphExec, recorded: cudarc::driver::sys::CUgraph, _flags: u64) {
        let Some(recorded) = (recorded as *const Graph).as_ref() else {
            return CUresult::CUDA_ERROR_INVALID_HANDLE;
        };
        put(out, Box::into_raw(Box::new(recorded.clone())).cast())
    }
    fn cuGraphExecUpdate_v2(exec: cudarc::driver::sys::CUgraphExec, recorded: cudarc::driver::sys::CUgraph, info: *mut c_void) {
        let (Some(exec), Some(recorded)) = ((exec as *mut Graph).as_mut(), (recorded as *const Graph).as_ref()) else {
            return CUresult::CUDA_ERROR_INVALID_HANDLE;
        };
        let same = exec.same_shape(recorded);
        if !info.is_null() {
            // `{ result, error node, error-from node }`: success (0) or a changed topology
            // (`CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED`, 2), no nodes.
            std::ptr::write_bytes(info.cast::<u8>(), 0, std::mem::size_of::<cudarc::driver::sys::CUgraphExecUpdateResultInfo>());
            info.cast::<u32>().write(if same { 0 } else { 2 });
        }
        if !same {
            return CUresult::CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
        }
        *exec = recorded.clone();
        OK
    }
    fn cuGraphUpload(_exec: cudarc::driver::sys::CUgraphExec, _stream: CUstream) { OK }
    fn cuGraphLaunch(exec: cudarc::driver::sys::CUgraphExec, stream: CUstream) {
        let Some(exec) = (exec as *const Graph).as_ref() else {
            return CUresult::CUDA_ERROR_INVALID_HANDLE;
        };
        for work in exec.work.clone() {
            let status = queue(stream, work);
            if status != OK {
                return status;
            }
        }
        OK
    }
    #[always]
    fn cuGraphDestroy(recorded: cudarc::driver::sys::CUgraph) {
        if !recorded.is_null() {
            drop(Box::from_raw(recorded as *mut Graph));
        }
        OK
    }
    #[always]
    fn cuGraphExecDestroy(exec: cudarc::driver::sys::CUgraphExec) {
        if !exec.is_null() {
            drop(Box::from_raw(exec as *mut Graph));
        }
        OK
    }
    fn cuEventCreate(event: *mut CUevent, _flags: c_uint) {
        let handle = Box::into_raw(Box::new(Event { reached: std::sync::Mutex::new(None) }));
        put(event, handle.cast())
    }
    fn cuEventRecord(event: CUevent, _stream: CUstream) {
        let Some(event) = (event as *const Event).as_ref() else {
            return CUresult::CUDA_ERROR_INVALID_HANDLE;
        };
        *event.reached.lock().unwrap_or_else(|e| e.into_inner()) = Some(Instant::now());
        OK
    }
    fn cuEventRecordWithFlags(event: CUevent, stream: CUstream, _flags: c_uint) {
        cuEventRecord(event, stream)
    }
    fn cuEventSynchronize(_event: CUevent) { OK }
    fn cuEventQuery(_event: CUevent) { OK }
    fn cuEventElapsedTime(ms: *mut f32, start: CUevent, end: CUevent) { elapsed(ms, start, end) }
    fn cuEventElapsedTime_v2(ms: *mut f32, start: CUevent, end: CUevent) { elapsed(ms, start, end) }
    #[always]
    fn cuEventDestroy_v2(event: CUevent) {
        if !event.is_null() {
            drop(Box::from_raw(event as *mut Event));
        }
        OK
    }
    fn cuMemAlloc_v2(ptr: *mut CUdeviceptr, bytes: usize) { allocate(ptr, bytes) }
    fn cuMemAllocAsync(ptr: *mut CUdeviceptr, bytes: usize, _stream: CUstream) { allocate(ptr, bytes) }
    #[always]
    fn cuMemFree_v2(ptr: CUdeviceptr) { release(ptr) }
    #[always]
    fn cuMemFreeAsync(ptr: CUdeviceptr, _stream: CUstream) { release(ptr) }
    fn cuMemHostAlloc(ptr: *mut *mut c_void, bytes: usize, _flags: c_uint) {
        match memory::allocate(bytes) {
            Some(address) => put(ptr, address as *mut c_void),
            None => CUresult::CUDA_ERROR_OUT_OF_MEMORY,
        }
    }
    fn cuMemAllocHost_v2(ptr: *mut *mut c_void, bytes: usize) {
        cuMemHostAlloc(ptr, bytes, 0)
    }
    #[always]
    fn cuMemFreeHost(ptr: *mut c_void) { release(ptr as CUdeviceptr) }
    fn cuMemHostGetDevicePointer_v2(device: *mut CUdeviceptr, host: *mut c_void, _flags: c_uint) {
        put(device, host as CUdeviceptr)
    }
    fn cuMemHostRegister_v2(_ptr: *mut c_void, _bytes: usize, _flags: c_uint) { OK }
    #[always]
    fn cuMemHostUnregister(_ptr: *mut c_void) { OK }
    fn cuMemcpyHtoD_v2(dst: CUdeviceptr, src: *const c_void, bytes: usize) { copy(dst as _, src, bytes) }
    fn cuMemcpyDtoH_v2(dst: *mut c_void, src: CUdeviceptr, bytes: usize) { copy(dst, src as _, bytes) }
    fn cuMemcpyDtoD_v2(dst: CUdeviceptr, src: CUdeviceptr, bytes: usize) { copy(dst as _, src as _, bytes) }
    fn cuMemcpyHtoDAsync_v2(dst: CUdeviceptr, src: *const c_void, bytes: usize, s: CUstream) {
        queue(s, Work::Copy { dst: dst as usize, src: src as usize, bytes })
    }
    fn cuMemcpyDtoHAsync_v2(dst: *mut c_void, src: CUdeviceptr, bytes: usize, s: CUstream) {
        queue(s, Work::Copy { dst: dst as usize, src: src as usize, bytes })
    }
    fn cuMemcpyDtoDAsync_v2(dst: CUdeviceptr, src: CUdeviceptr, bytes: usize, s: CUstream) {
        queue(s, Work::Copy { dst: dst as usize, src: src as usize, bytes })
    }
    fn cuMemsetD8_v2(dst: CUdeviceptr, value: u8, count: usize) {
        std::ptr::write_bytes(dst as *mut u8, value, count);
        OK
    }
    fn cuMemsetD8Async(dst: CUdeviceptr, value: u8, count: usize, s: CUstream) {
        queue(s, Work::Fill8 { dst: dst as usize, value, count })
    }
    fn cuMemsetD32_v2(dst: CUdeviceptr, value: u32, count: usize) {
        std::slice::from_raw_parts_mut(dst as *mut u32, count).fill(value);
        OK
    }
    fn cuMemsetD32Async(dst: CUdeviceptr, value: u32, count: usize, s: CUstream) {
        queue(s, Work::Fill32 { dst: dst as usize, value, count })
    }
    fn cuModuleLoadData(module: *mut CUmodule, image: *const c_void) { load_module(module, image) }
    fn cuModuleLoadDataEx(module: *mut CUmodule, image: *const c_void, _n: c_uint, _o: *mut CUjit_option, _v: *mut *mut c_void) {
        load_module(module, image)
    }
    #[always]
    fn cuModuleUnload(_module: CUmodule) { OK }
    fn cuModuleGetFunction(function: *mut CUfunction, module: CUmodule, name: *const c_char) {
        let Some(module) = (module as *const Module).as_ref() else {
            return CUresult::CUDA_ERROR_INVALID_HANDLE;
        };
        let name = CStr::from_ptr(name).to_string_lossy();
        match module.kernels.iter().find(|k| k.name == name) {
            Some(kernel) => put(function, (kernel as *const image::Kernel) as CUfunction),
            None => CUresult::CUDA_ERROR_NOT_FOUND,
        }
    }
    fn cuModuleGetGlobal_v2(ptr: *mut CUdeviceptr, bytes: *mut usize, module: CUmodule, name: *const c_char) {
        let Some(module) = (module as *const Module).as_ref() else {
            return CUresult::CUDA_ERROR_INVALID_HANDLE;
        };
        let name = CStr::from_ptr(name).to_string_lossy();
        match module.globals.iter().find(|g| g.name == name) {
            Some(global) => {
                if !ptr.is_null() {
                    *ptr = global.address as CUdeviceptr;
                }
                if !bytes.is_null() {
                    *bytes = global.size;
                }
                OK
            }
            None => CUresult::CUDA_ERROR_NOT_FOUND,
        }
    }
    fn cuFuncGetAttribute(value: *mut c_int, attrib: CUfunction_attribute, function: CUfunction) {
        use CUfunction_attribute::*;
        let Some(kernel) = (function as *const image::Kernel).as_ref() else {
            return CUresult::CUDA_ERROR_INVALID_HANDLE;
        };
        put(value, match attrib {
            CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK => kernel.max_threads as c_int,
            CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES => {
                kernel_abi::CPU_DYNAMIC_SHARED_BYTES as c_int
            },
            CU_FUNC_ATTRIBUTE_PTX_VERSION | CU_FUNC_ATTRIBUTE_BINARY_VERSION => 90,
            _ => 0,
        })
    }
    fn cuFuncSetAttribute(_function: CUfunction, _attrib: CUfunction_attribute, _value: c_int) { OK }
    fn cuFuncSetCacheConfig(_function: CUfunction, _config: cudarc::driver::sys::CUfunc_cache) { OK }
    fn cuLaunchKernel(
        function: CUfunction,
        gx: c_uint, gy: c_uint, gz: c_uint,
        bx: c_uint, by: c_uint, bz: c_uint,
        shared: c_uint, stream: CUstream,
        params: *mut *mut c_void, _extra: *mut *mut c_void
    ) {
        let Some(kernel) = (function as *const image::Kernel).as_ref() else {
            return CUresult::CUDA_ERROR_INVALID_HANDLE;
        };
        let threads = u64::from(bx) * u64::from(by) * u64::from(bz);
        if threads == 0 || threads > u64::from(kernel.max_threads) || gx == 0 || gy == 0 || gz == 0 {
            return CUresult::CUDA_ERROR_INVALID_VALUE;
        }
        if u64::from(shared) > kernel_abi::CPU_DYNAMIC_SHARED_BYTES {
            return CUresult::CUDA_ERROR_INVALID_VALUE;
        }
        if params.is_null() && !kernel.param_sizes.is_empty() {
            return CUresult::CUDA_ERROR_INVALID_VALUE;
        }
        // The parameters' bytes, copied now: the caller may reuse its array once this returns.
        let params = kernel
            .param_sizes
            .iter()
            .enumerate()
            .map(|(i, &size)| std::slice::from_raw_parts(*params.add(i) as *const u8, size).to_vec())
            .collect();
        queue(stream, Work::Launch {
            kernel,
            grid: [gx, gy, gz],
            block: [bx, by, bz],
            params,
        })
    }
    #[always]
    fn cuGetErrorString(error: CUresult, text: *mut *const c_char) {
        put(text, error_text(error).1.as_ptr())
    }
    #[always]
    fn cuGetErrorName(error: CUresult, text: *mut *const c_char) {
        put(text, error_text(error).0.as_ptr())
    }
}

/// The driver's name and description of the errors the CPU device answers.
fn error_text(error: CUresult) -> (&'static CStr, &'static CStr) {
    match error {
        CUresult::CUDA_SUCCESS => (c"CUDA_SUCCESS", c"no error"),
        CUresult::CUDA_ERROR_LAUNCH_FAILED => {
            (c"CUDA_ERROR_LAUNCH_FAILED", c"unspecified launch failure")
        }
        CUresult::CUDA_ERROR_NOT_SUPPORTED => (
            c"CUDA_ERROR_NOT_SUPPORTED",
            c"operation not supported on the CPU device",
        ),
        CUresult::CUDA_ERROR_OUT_OF_MEMORY => (c"CUDA_ERROR_OUT_OF_MEMORY", c"out of memory"),
        CUresult::CUDA_ERROR_INVALID_VALUE => (c"CUDA_ERROR_INVALID_VALUE", c"invalid argument"),
        CUresult::CUDA_ERROR_INVALID_IMAGE => (
            c"CUDA_ERROR_INVALID_IMAGE",
            c"device kernel image is invalid",
        ),
        CUresult::CUDA_ERROR_NOT_FOUND => (c"CUDA_ERROR_NOT_FOUND", c"named symbol not found"),
        _ => (c"CUDA_ERROR_UNKNOWN", c"CUDA error on the CPU device"),
    }
}

/// Runs `work` now, or records it when `stream` captures.
fn queue(stream: CUstream, work: Work) -> CUresult {
    let mut pending = Some(work);
    if graph::record(stream as usize, || pending.take().expect("recorded once")) {
        return OK;
    }
    match pending {
        // SAFETY: the work's addresses are the program's, as the driver API's contract says.
        Some(work) => unsafe { run(work) },
        None => OK,
    }
}

/// Runs one piece of work.
unsafe fn run(work: Work) -> CUresult {
    match work {
        // SAFETY: the caller's buffers (the driver API's contract).
        Work::Copy { dst, src, bytes } => unsafe { copy(dst as _, src as _, bytes) },
        Work::Fill8 { dst, value, count } => {
            // SAFETY: as above.
            unsafe { std::ptr::write_bytes(dst as *mut u8, value, count) };
            OK
        }
        Work::Fill32 { dst, value, count } => {
            // SAFETY: as above.
            unsafe { std::slice::from_raw_parts_mut(dst as *mut u32, count).fill(value) };
            OK
        }
        Work::Host { function, data } => {
            // SAFETY: the program's callback with its data.
            unsafe { function(data as *mut c_void) };
            OK
        }
        Work::Launch {
            kernel,
            grid,
            block,
            params,
        } => {
            // SAFETY: a kernel of a module loaded for good.
            let kernel = unsafe { &*kernel };
            let pointers: Vec<*const c_void> = params.iter().map(|p| p.as_ptr().cast()).collect();
            let grid = Grid {
                entry: kernel.entry,
                params: pointers.as_ptr(),
                grid,
                block,
                thread_fibers: kernel.may_wait,
                race: kernel.race,
                registers: kernel.registers,
                name: &kernel.name,
            };
            if launch::run(&grid) == Outcome::Trapped {
                STICKY.store(CUresult::CUDA_ERROR_LAUNCH_FAILED as u32, Ordering::Release);
            }
            OK
        }
    }
}

unsafe fn elapsed(ms: *mut f32, start: CUevent, end: CUevent) -> CUresult {
    // SAFETY: event handles made by `cuEventCreate`.
    let (Some(start), Some(end)) = (unsafe { (start as *const Event).as_ref() }, unsafe {
        (end as *const Event).as_ref()
    }) else {
        return CUresult::CUDA_ERROR_INVALID_HANDLE;
    };
    let start = *start.reached.lock().unwrap_or_else(|e| e.into_inner());
    let end = *end.reached.lock().unwrap_or_else(|e| e.into_inner());
    match (start, end) {
        // SAFETY: as the driver API's contract makes `ms` writable.
        (Some(start), Some(end)) => unsafe {
            put(
                ms,
                end.saturating_duration_since(start).as_secs_f32() * 1000.0,
            )
        },
        _ => CUresult::CUDA_ERROR_NOT_READY,
    }
}

unsafe fn allocate(ptr: *mut CUdeviceptr, bytes: usize) -> CUresult {
    match memory::allocate(bytes) {
        // SAFETY: as the driver API's contract makes `ptr` writable.
        Some(address) => unsafe { put(ptr, address) },
        None => CUresult::CUDA_ERROR_OUT_OF_MEMORY,
    }
}

fn release(ptr: CUdeviceptr) -> CUresult {
    if ptr == 0 || memory::free(ptr) {
        OK
    } else {
        CUresult::CUDA_ERROR_INVALID_VALUE
    }
}

unsafe fn copy(dst: *mut c_void, src: *const c_void, bytes: usize) -> CUresult {
    if bytes == 0 {
        return OK;
    }
    if dst.is_null() || src.is_null() {
        return CUresult::CUDA_ERROR_INVALID_VALUE;
    }
    // SAFETY: both ranges are the caller's buffers (the driver API's contract); `copy` allows
    // overlap, as device-to-device copies within one buffer may.
    unsafe { std::ptr::copy(src.cast::<u8>(), dst.cast::<u8>(), bytes) };
    OK
}

unsafe fn load_module(module: *mut CUmodule, table: *const c_void) -> CUresult {
    if image::check(table).is_err() {
        return CUresult::CUDA_ERROR_INVALID_IMAGE;
    }
    // SAFETY: an image table the check accepted; modules live for the whole process.
    let loaded = Box::new(unsafe { image::load(table) });
    // SAFETY: as the driver API's contract makes `module` writable.
    unsafe { put(module, Box::into_raw(loaded).cast()) }
}
