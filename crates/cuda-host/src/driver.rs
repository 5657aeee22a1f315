//! Finding the driver and a device without ever panicking.
//!
//! cudarc loads `libcuda.so` lazily and panics when the library or one of its entry points is
//! missing. Every path of this crate that touches the driver goes through [`init`] first, which
//! checks that the library loads and that the driver is new enough for the entry points the
//! bindings name, so that those panics cannot happen.

use std::ops::Deref;
use std::sync::{Arc, OnceLock};

use cudarc::driver::{self as cu, DriverError, result, sys};

use crate::error::Error;
use crate::failure::DriverFailure;
use crate::library::library_present;
use crate::version::CudaVersion;

/// The oldest driver cuda-host runs on: the bindings are cudarc's `cuda-12080` ones, whose entry
/// points every driver from CUDA 12.8 on exports (580, which supports CUDA 13.0, included).
pub const REQUIRED_DRIVER: CudaVersion = CudaVersion(12080);

/// Why [`init`] failed; kept in a `OnceLock`, so it must be `Clone`.
#[derive(Clone, Copy, Debug)]
enum InitFailure {
    NoDriver,
    TooOld(i32),
    NoDevice,
    Driver(&'static str, sys::CUresult),
}

impl From<InitFailure> for Error {
    fn from(failure: InitFailure) -> Self {
        match failure {
            InitFailure::NoDriver => Error::NoDriver,
            InitFailure::TooOld(found) => Error::DriverTooOld {
                found: CudaVersion(found),
                required: REQUIRED_DRIVER,
            },
            InitFailure::NoDevice => Error::NoDevice {
                ordinal: 0,
                count: 0,
            },
            InitFailure::Driver(call, code) => Error::Driver {
                call,
                source: DriverFailure(code),
            },
        }
    }
}

/// Loads and initialises the driver, once per process.
pub fn init() -> Result<(), Error> {
    if cuda_cpu::requested() {
        cuda_cpu::install().map_err(|e| Error::CpuDevice(e.to_string()))?;
    }
    static STATE: OnceLock<Result<(), InitFailure>> = OnceLock::new();
    let state = STATE.get_or_init(|| {
        if !library_present() {
            return Err(InitFailure::NoDriver);
        }
        let mut version = 0;
        // SAFETY: `cuDriverGetVersion` exists in every driver and only writes `version`.
        unsafe { sys::cuDriverGetVersion(&mut version) }
            .result()
            .map_err(|e| InitFailure::Driver("cuDriverGetVersion", e.0))?;
        if version < REQUIRED_DRIVER.0 {
            return Err(InitFailure::TooOld(version));
        }
        match result::init() {
            Ok(()) => Ok(()),
            Err(DriverError(sys::CUresult::CUDA_ERROR_NO_DEVICE)) => Err(InitFailure::NoDevice),
            Err(e) => Err(InitFailure::Driver("cuInit", e.0)),
        }
    });
    state.map_err(Error::from)
}

/// The CUDA version the driver supports (`cuDriverGetVersion`).
pub fn driver_version() -> Result<CudaVersion, Error> {
    init()?;
    let mut version = 0;
    // SAFETY: `cuDriverGetVersion` exists in every driver and only writes `version`.
    unsafe { sys::cuDriverGetVersion(&mut version) }
        .result()
        .map_err(|e| Error::Driver {
            call: "cuDriverGetVersion",
            source: e.into(),
        })?;
    Ok(CudaVersion(version))
}

/// The number of CUDA devices the driver sees.
pub fn device_count() -> Result<usize, Error> {
    init()?;
    let count = result::device::get_count().map_err(|e| Error::Driver {
        call: "cuDeviceGetCount",
        source: e.into(),
    })?;
    Ok(usize::try_from(count).unwrap_or(0))
}

fn device(ordinal: usize) -> Result<sys::CUdevice, Error> {
    let count = device_count()?;
    let index = i32::try_from(ordinal)
        .ok()
        .filter(|_| ordinal < count)
        .ok_or(Error::NoDevice { ordinal, count })?;
    result::device::get(index).map_err(|e| Error::Driver {
        call: "cuDeviceGet",
        source: e.into(),
    })
}

/// The compute capability of device `ordinal` as `(major, minor)`.
pub fn compute_capability(ordinal: usize) -> Result<(u32, u32), Error> {
    let dev = device(ordinal)?;
    let attribute = |attr, call| {
        // SAFETY: `dev` is a valid device handle and the attribute exists in every driver.
        unsafe { result::device::get_attribute(dev, attr) }
            .map(|v| u32::try_from(v).unwrap_or(0))
            .map_err(|e| Error::Driver {
                call,
                source: e.into(),
            })
    };
    use sys::CUdevice_attribute::*;
    Ok((
        attribute(
            CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
            "cuDeviceGetAttribute(COMPUTE_CAPABILITY_MAJOR)",
        )?,
        attribute(
            CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
            "cuDeviceGetAttribute(COMPUTE_CAPABILITY_MINOR)",
        )?,
    ))
}

/// The GPU architecture to compile for when kernels will run on device `ordinal`: `sm_90` for
/// an H100. This is what `cargo oxide run` uses when neither `--arch` nor `CUDA_OXIDE_TARGET`
/// chooses one; it fails (it does not guess) when there is no driver or no such device.
pub fn device_target(ordinal: usize) -> Result<String, Error> {
    compute_capability(ordinal).map(|(major, minor)| sm_name(major, minor))
}

fn sm_name(major: u32, minor: u32) -> String {
    format!("sm_{major}{minor}")
}

/// A CUDA context on one device: cudarc's context, created only after the driver and the
/// device were found, so that a machine without either gets an [`Error`] instead of a panic.
///
/// It dereferences to cudarc's `Arc<CudaContext>`, so all of cudarc's API is there:
/// `ctx.default_stream()`, `ctx.new_stream()`, `ctx.synchronize()`, ...
#[derive(Clone, Debug)]
pub struct CudaContext(Arc<cu::CudaContext>);

impl CudaContext {
    /// Creates (or joins) the primary context of device `ordinal`.
    pub fn new(ordinal: usize) -> Result<Self, Error> {
        device(ordinal)?;
        cu::CudaContext::new(ordinal)
            .map(Self)
            .map_err(|e| Error::Driver {
                call: "creating the device's primary context",
                source: e.into(),
            })
    }

    /// The GPU architecture of this context's device (`sm_90`, ...).
    pub fn target(&self) -> Result<String, Error> {
        device_target(self.0.ordinal())
    }

    /// Sets the size of the device heap, the memory that device code allocates from (`Box`,
    /// `Vec`, ... in a kernel: CUDA's device `malloc`), to `bytes` (`cuCtxSetLimit` of
    /// `CU_LIMIT_MALLOC_HEAP_SIZE`). The default is 8 MiB. It must be called before the first
    /// launch of a kernel that allocates: the driver fixes the heap then, and refuses a later
    /// change with an error.
    pub fn set_heap_size(&self, bytes: usize) -> Result<(), Error> {
        self.0
            .set_limit(sys::CUlimit::CU_LIMIT_MALLOC_HEAP_SIZE, bytes)
            .map_err(|e| Error::Driver {
                call: "setting the device heap size (before the first kernel that allocates)",
                source: e.into(),
            })
    }

    /// Sets the stack each GPU thread gets to `bytes` (`cuCtxSetLimit` of
    /// `CU_LIMIT_STACK_SIZE`). The default, 1 KiB, covers kernels whose stack the compiler can
    /// bound; one whose stack `ptxas` cannot bound (recursion, calls through `dyn` such as
    /// `core::fmt`'s, as crates' formatting code makes) may need more, or it faults.
    pub fn set_stack_size(&self, bytes: usize) -> Result<(), Error> {
        self.0
            .set_limit(sys::CUlimit::CU_LIMIT_STACK_SIZE, bytes)
            .map_err(|e| Error::Driver {
                call: "setting the stack size of GPU threads",
                source: e.into(),
            })
    }

    /// The size of the device heap in bytes (`cuCtxGetLimit` of `CU_LIMIT_MALLOC_HEAP_SIZE`).
    pub fn heap_size(&self) -> Result<usize, Error> {
        self.0
            .get_limit(sys::CUlimit::CU_LIMIT_MALLOC_HEAP_SIZE)
            .map_err(|e| Error::Driver {
                call: "reading the device heap size",
                source: e.into(),
            })
    }

    /// cudarc's context.
    pub fn cudarc(&self) -> &Arc<cu::CudaContext> {
        &self.0
    }

    /// The context cudarc's `ctx` is (one a module was loaded on).
    pub(crate) fn from_cudarc(ctx: Arc<cu::CudaContext>) -> Self {
        CudaContext(ctx)
    }
}

impl Deref for CudaContext {
    type Target = Arc<cu::CudaContext>;

    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

/// For contexts made with cudarc directly (cudarc then found the driver already).
impl From<Arc<cu::CudaContext>> for CudaContext {
    fn from(ctx: Arc<cu::CudaContext>) -> Self {
        Self(ctx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn architecture_names() {
        assert_eq!(sm_name(9, 0), "sm_90");
        assert_eq!(sm_name(8, 6), "sm_86");
        assert_eq!(sm_name(12, 0), "sm_120");
    }

    /// On a machine without the driver (CI, the development machines) every entry point
    /// returns `NoDriver`; on a GPU machine they succeed. Neither panics.
    #[test]
    fn no_driver_is_an_error_not_a_panic() {
        let present = library_present();
        let target = device_target(0);
        let context = CudaContext::new(0);
        if present {
            return;
        }
        assert!(matches!(target, Err(Error::NoDriver)), "{target:?}");
        assert!(matches!(context, Err(Error::NoDriver)), "{context:?}");
        assert!(matches!(device_count(), Err(Error::NoDriver)));
    }
}
