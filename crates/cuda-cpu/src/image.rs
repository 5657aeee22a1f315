//! The CPU flavour of a crate's kernels, as the codegen backend linked it into the binary: its
//! image table (`llvm_export::cpu_image` writes it; the layout is documented there), read
//! into a [Module] when the program loads the crate's module.

use std::ffi::c_void;

use crate::runtime;

/// The table layout this runtime reads (the exporter's).
pub use kernel_abi::CPU_IMAGE_VERSION as IMAGE_VERSION;

/// A kernel's entry: takes the launch's parameter array (`void **`).
pub(crate) type Entry = unsafe extern "C" fn(*const *const c_void);

/// The image table.
#[repr(C)]
pub struct ImageTable {
    version: u64,
    kernel_count: u64,
    kernels: *const KernelEntry,
    slot_count: u64,
    slots: *const SlotEntry,
    global_count: u64,
    globals: *const GlobalEntry,
    missing: *mut usize,
    shared_count: u64,
    shared: SharedFn,
    race: u64,
    registers: RegistersFn,
}

/// The image's function that returns the address of the calling OS thread's special
/// registers: `tid`, `ntid`, `ctaid`, `nctaid` (x, y, z each), as `u32`s.
pub(crate) type RegistersFn = unsafe extern "C" fn() -> *mut u32;

/// The image's function that writes `{ address, size }` of each shared variable of the OS
/// thread calling it.
pub(crate) type SharedFn = unsafe extern "C" fn(*mut SharedRange);

/// Where one shared variable of a worker is.
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub(crate) struct SharedRange {
    pub(crate) address: usize,
    pub(crate) size: u64,
}

/// What the race detector needs of a module built for it.
#[derive(Clone, Copy)]
pub(crate) struct RaceImage {
    pub(crate) shared: SharedFn,
    pub(crate) shared_count: usize,
}

impl RaceImage {
    /// Where the calling worker's shared memory is: `(address, size)` per variable.
    pub(crate) fn shared_ranges(&self) -> Vec<(usize, usize)> {
        let mut ranges = vec![SharedRange::default(); self.shared_count];
        // SAFETY: the image's function writes `shared_count` entries.
        unsafe { (self.shared)(ranges.as_mut_ptr()) };
        ranges
            .iter()
            .map(|r| (r.address, r.size as usize))
            .collect()
    }
}

#[repr(C)]
struct KernelEntry {
    name: *const u8,
    name_len: u64,
    entry: Entry,
    params: u64,
    param_sizes: *const u64,
    max_threads: u64,
    may_wait: u64,
}

#[repr(C)]
struct SlotEntry {
    name: *const u8,
    name_len: u64,
    slot: *mut usize,
}

#[repr(C)]
struct GlobalEntry {
    name: *const u8,
    name_len: u64,
    address: *mut u8,
    size: u64,
}

/// A kernel of a loaded module (what a `CUfunction` points at).
pub(crate) struct Kernel {
    pub(crate) name: String,
    pub(crate) entry: Entry,
    /// The size in bytes of each parameter (what a launch's parameter array points at).
    pub(crate) param_sizes: Vec<usize>,
    /// The most threads a block may have (the kernel's launch bound or declared shape).
    pub(crate) max_threads: u32,
    /// Whether its threads may wait for each other (barriers, warp operations): each then
    /// runs as a fiber of its own; otherwise a block's threads run one after another.
    pub(crate) may_wait: bool,
    /// Set when the module was built for the race detector.
    pub(crate) race: Option<RaceImage>,
    /// Where the kernels read their special registers.
    pub(crate) registers: RegistersFn,
}

/// A global variable of a loaded module.
pub(crate) struct Global {
    pub(crate) name: String,
    pub(crate) address: *mut u8,
    pub(crate) size: usize,
}

/// A loaded module (what a `CUmodule` points at).
pub(crate) struct Module {
    /// Never changed once loaded: a `CUfunction` points at its element.
    pub(crate) kernels: Vec<Kernel>,
    pub(crate) globals: Vec<Global>,
}

/// Why an image table cannot be loaded, for the host's error message.
pub fn check(table: *const c_void) -> Result<(), String> {
    if table.is_null() {
        return Err("the binary has no CPU image for it".into());
    }
    // SAFETY: the caller passes the address of an image table symbol, whose first field is
    // its version in every layout.
    let version = unsafe { *(table as *const u64) };
    match version {
        IMAGE_VERSION => Ok(()),
        0 => Err(
            "the build made no CPU flavour of its kernels (CUDA_OXIDE_CPU=0, or compiling \
                  them for the CPU failed: see the build's warnings)"
                .into(),
        ),
        other => Err(format!(
            "its CPU image has layout version {other}, this runtime reads version {IMAGE_VERSION}: \
             rebuild the program with this cuda-oxide"
        )),
    }
}

/// Reads `table` and fills its slots with the runtime's functions.
///
/// # Safety
/// `table` must be an image table the backend wrote ([check] accepted it), alive for good.
pub(crate) unsafe fn load(table: *const c_void) -> Module {
    // SAFETY: the caller guarantees the table and everything it points at.
    unsafe {
        let table = &*(table as *const ImageTable);
        *table.missing = runtime::missing as *const () as usize;
        for slot in std::slice::from_raw_parts(table.slots, table.slot_count as usize) {
            let name = text(slot.name, slot.name_len);
            if let Some(function) = runtime::function(&name) {
                *slot.slot = function;
            }
        }
        let kernels = std::slice::from_raw_parts(table.kernels, table.kernel_count as usize)
            .iter()
            .map(|kernel| Kernel {
                name: text(kernel.name, kernel.name_len),
                entry: kernel.entry,
                param_sizes: std::slice::from_raw_parts(kernel.param_sizes, kernel.params as usize)
                    .iter()
                    .map(|&size| size as usize)
                    .collect(),
                max_threads: kernel.max_threads.min(1024) as u32,
                may_wait: kernel.may_wait != 0,
                registers: table.registers,
                race: (table.race != 0).then_some(RaceImage {
                    shared: table.shared,
                    shared_count: table.shared_count as usize,
                }),
            })
            .collect();
        let globals = std::slice::from_raw_parts(table.globals, table.global_count as usize)
            .iter()
            .map(|global| Global {
                name: text(global.name, global.name_len),
                address: global.address,
                size: global.size as usize,
            })
            .collect();
        Module { kernels, globals }
    }
}

/// The UTF-8 text of `len` bytes at `ptr`.
///
/// # Safety
/// `ptr` must point at `len` readable bytes.
unsafe fn text(ptr: *const u8, len: u64) -> String {
    // SAFETY: as the caller guarantees.
    String::from_utf8_lossy(unsafe { std::slice::from_raw_parts(ptr, len as usize) }).into_owned()
}
