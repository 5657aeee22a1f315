//! Loading the driver shim and pointing its table at [crate::driver].
//!
//! The shim's SONAME is `libcuda.so`: once it is loaded, the dynamic loader answers a later
//! `dlopen("libcuda.so")` (cudarc's first choice) with it, whatever is installed.

use std::sync::atomic::{AtomicBool, Ordering};

use libloading::os::unix::{Library, RTLD_GLOBAL, RTLD_NOW};

use crate::driver;
use crate::error::CpuError;

/// The shim `build.rs` made (empty on hosts it cannot be made for).
static SHIM: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/libcuda_shim.so"));

/// The entry points of the shim's table, in its order.
pub(crate) static ENTRY_POINTS: &str = include_str!("../driver_entry_points.txt");

static LOADED: AtomicBool = AtomicBool::new(false);

/// Whether the shim is loaded and filled.
pub(crate) fn is_loaded() -> bool {
    LOADED.load(Ordering::Acquire)
}

/// `dlopen` flag: only find a library already loaded.
const RTLD_NOLOAD: i32 = 4;

/// Writes the shim to a private file, loads it globally and fills its table.
pub(crate) fn load() -> Result<(), CpuError> {
    if SHIM.is_empty() {
        return Err(CpuError::Unsupported);
    }
    // SAFETY: RTLD_NOLOAD only looks the name up among loaded libraries.
    if unsafe { Library::open(Some("libcuda.so"), RTLD_NOW | RTLD_NOLOAD) }.is_ok() {
        return Err(CpuError::DriverAlreadyLoaded);
    }
    let shim_error = |what: String| CpuError::Shim(what);
    let dir = std::env::temp_dir().join(format!("cuda-oxide-cpu-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| shim_error(format!("{}: {e}", dir.display())))?;
    let path = dir.join("libcuda.so");
    std::fs::write(&path, SHIM).map_err(|e| shim_error(format!("{}: {e}", path.display())))?;
    // SAFETY: the shim has no initialisers; its symbols are plain jumps and data.
    let library = unsafe { Library::open(Some(&path), RTLD_NOW | RTLD_GLOBAL) };
    let _ = std::fs::remove_file(&path);
    let _ = std::fs::remove_dir(&dir);
    let library = library.map_err(|e| shim_error(e.to_string()))?;
    // SAFETY: the symbols are the shim's table of code addresses and its handler slot.
    unsafe {
        let table: *mut usize = *library
            .get::<*mut usize>(b"__oxide_driver_table\0")
            .map_err(|e| shim_error(e.to_string()))?;
        let unimplemented: *mut usize = *library
            .get::<*mut usize>(b"__oxide_driver_unimplemented\0")
            .map_err(|e| shim_error(e.to_string()))?;
        *unimplemented = driver::unimplemented as *const () as usize;
        for (index, name) in ENTRY_POINTS.lines().map(str::trim).enumerate() {
            if let Some(function) = driver::implementation(name) {
                *table.add(index) = function;
            }
        }
    }
    // The process keeps the shim for good: cudarc holds on to it.
    std::mem::forget(library);
    LOADED.store(true, Ordering::Release);
    Ok(())
}
