//! What the kernels' CPU flavour calls through its slots: one function per row of the GPU
//! intrinsic table the CPU device implements (named after the row), the trap, and the
//! functions device code declares (`vprintf`, `malloc`, `free`).

use std::ffi::c_void;

use crate::launch::{self, Stop, current};

/// The address of the runtime function that fills the slot `name`, if there is one.
pub(crate) fn function(name: &str) -> Option<usize> {
    named(name.strip_prefix("__oxide_cpu_").unwrap_or(name))
}

/// Declares each runtime function once, with the name of its slot.
macro_rules! runtime_functions {
    ($( $name:ident ( $($arg:ident : $ty:ty),* ) $(-> $ret:ty)? $body:block )*) => {
        $(
            extern "C" fn $name($($arg: $ty),*) $(-> $ret)? $body
        )*
        /// The runtime function named `name` (without the runtime prefix).
        fn named(name: &str) -> Option<usize> {
            match name {
                $( stringify!($name) => Some($name as *const () as usize), )*
                _ => None,
            }
        }
    };
}

/// A component of a special register of the running thread (0 outside a kernel).
fn register(read: impl Fn(&launch::ThreadState) -> u32) -> u32 {
    current().map_or(0, read)
}

runtime_functions! {
    read_ptx_sreg_tid_x() -> u32 { register(|t| t.tid[0]) }
    read_ptx_sreg_tid_y() -> u32 { register(|t| t.tid[1]) }
    read_ptx_sreg_tid_z() -> u32 { register(|t| t.tid[2]) }
    read_ptx_sreg_ctaid_x() -> u32 { register(|t| t.ctaid[0]) }
    read_ptx_sreg_ctaid_y() -> u32 { register(|t| t.ctaid[1]) }
    read_ptx_sreg_ctaid_z() -> u32 { register(|t| t.ctaid[2]) }
    read_ptx_sreg_ntid_x() -> u32 { register(|t| t.ntid[0]) }
    read_ptx_sreg_ntid_y() -> u32 { register(|t| t.ntid[1]) }
    read_ptx_sreg_ntid_z() -> u32 { register(|t| t.ntid[2]) }
    read_ptx_sreg_nctaid_x() -> u32 { register(|t| t.nctaid[0]) }
    read_ptx_sreg_nctaid_y() -> u32 { register(|t| t.nctaid[1]) }
    read_ptx_sreg_nctaid_z() -> u32 { register(|t| t.nctaid[2]) }
    read_ptx_sreg_laneid() -> u32 { register(|t| linear_tid(t) % 32) }
    read_ptx_sreg_warpid() -> u32 { register(|t| linear_tid(t) / 32) }
    read_ptx_sreg_nwarpid() -> u32 { 64 }
    read_ptx_sreg_smid() -> u32 { 0 }
    read_ptx_sreg_nsmid() -> u32 { 1 }
    read_ptx_sreg_clock() -> u32 { nanoseconds() as u32 }
    read_ptx_sreg_clock64() -> u64 { nanoseconds() }
    read_ptx_sreg_globaltimer() -> u64 { nanoseconds() }
    nanosleep(_nanoseconds: u32) {}
    barrier0() { barrier(false); }
    barrier0_popc(vote: i32) -> i32 { barrier(vote != 0) as i32 }
    barrier0_and(vote: i32) -> i32 { (barrier(vote != 0) == block_size()) as i32 }
    barrier0_or(vote: i32) -> i32 { (barrier(vote != 0) > 0) as i32 }
    trap() { stop_thread(); }
    malloc(bytes: usize) -> *mut c_void { device_malloc(bytes) }
    free(ptr: *mut c_void) { device_free(ptr) }
}

/// `threadIdx` as one number, x fastest.
fn linear_tid(t: &launch::ThreadState) -> u32 {
    t.tid[0] + t.ntid[0] * (t.tid[1] + t.ntid[1] * t.tid[2])
}

/// Threads in the running block.
fn block_size() -> u32 {
    register(|t| t.ntid[0] * t.ntid[1] * t.ntid[2])
}

/// Nanoseconds since the process's first clock read.
fn nanoseconds() -> u64 {
    static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    START
        .get_or_init(std::time::Instant::now)
        .elapsed()
        .as_nanos() as u64
}

/// Waits at the block's barrier with `vote`; the number of threads that voted true.
fn barrier(vote: bool) -> u32 {
    let Some(state) = current() else { return 0 };
    state.barrier_vote.set(vote);
    launch::stop(Stop::Barrier);
    state.barrier_count.get()
}

/// Stops the running thread for good: the launch fails, as a `trap` makes it on a GPU.
fn stop_thread() {
    launch::stop(Stop::Trap);
    // A thread stopped is never resumed; outside a kernel there is nothing to stop.
    std::process::abort();
}

/// Where a kernel calls a function the CPU device does not provide: says which, and traps.
pub(crate) extern "C" fn missing(name: *const u8, len: u64) {
    // SAFETY: the image passes the bytes of the slot's name.
    let name = unsafe { std::slice::from_raw_parts(name, len as usize) };
    let name = String::from_utf8_lossy(name);
    let name = name.strip_prefix("__oxide_cpu_").unwrap_or(&name);
    eprintln!(
        "cuda-oxide CPU device: the kernel called `{name}`, which the CPU device does not \
         provide (see docs/cpu.md for what it runs); the launch fails"
    );
    stop_thread();
}

/// The device heap: `malloc` of the host (device memory is host memory here).
fn device_malloc(bytes: usize) -> *mut c_void {
    // SAFETY: plain C allocation.
    unsafe { libc_malloc(bytes) }
}

fn device_free(ptr: *mut c_void) {
    // SAFETY: a pointer from `device_malloc` (or null), as the device heap's contract says.
    unsafe { libc_free(ptr) }
}

unsafe extern "C" {
    #[link_name = "malloc"]
    fn libc_malloc(bytes: usize) -> *mut c_void;
    #[link_name = "free"]
    fn libc_free(ptr: *mut c_void);
}
