//! Compiling CUDA C++ to PTX at run time with NVRTC, loaded with `dlopen` like the driver.
//!
//! The benchmark suite compiles its CUDA C++ counterparts with this on the GPU machine, so a
//! binary built on a machine without CUDA still runs them. Nothing here panics when the
//! library is missing or a program does not compile: each case is an [`NvrtcError`] that
//! says what to do. (cudarc's own NVRTC bindings panic when `libnvrtc` is not found, and do
//! not look for the CUDA 13 library name.)

use std::ffi::{CStr, CString, c_char, c_int};
use std::path::{Path, PathBuf};

/// `nvrtcResult`: 0 is success.
type NvrtcResult = c_int;
/// `nvrtcProgram`: an opaque handle.
type Program = *mut std::ffi::c_void;

type VersionFn = unsafe extern "C" fn(*mut c_int, *mut c_int) -> NvrtcResult;
type ErrorStringFn = unsafe extern "C" fn(NvrtcResult) -> *const c_char;
type CreateFn = unsafe extern "C" fn(
    *mut Program,
    *const c_char,
    *const c_char,
    c_int,
    *const *const c_char,
    *const *const c_char,
) -> NvrtcResult;
type CompileFn = unsafe extern "C" fn(Program, c_int, *const *const c_char) -> NvrtcResult;
type SizeFn = unsafe extern "C" fn(Program, *mut usize) -> NvrtcResult;
type TextFn = unsafe extern "C" fn(Program, *mut c_char) -> NvrtcResult;
type DestroyFn = unsafe extern "C" fn(*mut Program) -> NvrtcResult;

/// Environment variable naming the NVRTC library to load (a path or a file name).
pub const NVRTC_LIBRARY_ENV: &str = "CUDA_OXIDE_NVRTC";

/// What can go wrong while loading NVRTC or compiling with it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum NvrtcError {
    /// No NVRTC library could be loaded.
    #[error(
        "NVRTC (libnvrtc, part of the CUDA toolkit) could not be loaded; tried: {tried}. Install \
         the CUDA toolkit, add the directory holding libnvrtc.so to LD_LIBRARY_PATH, or name \
         the library in {NVRTC_LIBRARY_ENV}"
    )]
    NotFound {
        /// Every name and path tried, comma-separated.
        tried: String,
    },

    /// The library loaded but lacks an entry point.
    #[error("{library} does not export `{symbol}`: it is not a usable NVRTC library")]
    MissingSymbol {
        /// The library that was loaded.
        library: String,
        /// The missing function.
        symbol: &'static str,
    },

    /// The source or an option holds a NUL byte.
    #[error("the {what} of program `{program}` holds a NUL byte")]
    Nul {
        /// The program's name.
        program: String,
        /// What holds it (source, name, an option).
        what: &'static str,
    },

    /// An NVRTC call other than the compilation itself failed.
    #[error("the NVRTC call `{call}` failed for program `{program}`: {message} (code {code})")]
    Call {
        /// The program's name.
        program: String,
        /// The NVRTC function.
        call: &'static str,
        /// `nvrtcResult`.
        code: i32,
        /// NVRTC's description of `code`.
        message: String,
    },

    /// The program does not compile.
    #[error(
        "NVRTC could not compile `{program}` with options {options:?}: {message}\n\
         compiler log:\n{log}"
    )]
    Compile {
        /// The program's name.
        program: String,
        /// The options it was compiled with.
        options: Vec<String>,
        /// NVRTC's description of the failure.
        message: String,
        /// The compiler's log (errors with line numbers).
        log: String,
    },
}

/// A loaded NVRTC library.
pub struct Nvrtc {
    /// The name or path it was loaded from.
    library: String,
    version: (i32, i32),
    error_string: ErrorStringFn,
    create: CreateFn,
    compile: CompileFn,
    ptx_size: SizeFn,
    ptx: TextFn,
    log_size: SizeFn,
    log: TextFn,
    destroy: DestroyFn,
    /// Keeps the functions above valid; declared last so they are unusable before it unloads.
    _lib: libloading::Library,
}

impl std::fmt::Debug for Nvrtc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Nvrtc")
            .field("library", &self.library)
            .field("version", &self.version)
            .finish_non_exhaustive()
    }
}

/// PTX produced by [`Nvrtc::compile_ptx`].
#[derive(Debug, Clone)]
pub struct CompiledPtx {
    /// The PTX text, NUL-terminated as the driver wants it.
    pub ptx: CString,
    /// The compiler's log (warnings), empty when it had nothing to say.
    pub log: String,
}

impl Nvrtc {
    /// Loads NVRTC: the library named by `CUDA_OXIDE_NVRTC` if set, otherwise the CUDA 13, 12
    /// and 11 library names on the loader's path, then the same names in the `lib64` folder of
    /// `$CUDA_HOME`, `$CUDA_PATH` and `/usr/local/cuda`.
    pub fn load() -> Result<Self, NvrtcError> {
        let (names, dirs) = search_path();
        let candidates = names.iter().map(PathBuf::from).chain(
            dirs.iter()
                .flat_map(|dir| names.iter().map(move |name| dir.join(name))),
        );
        for candidate in candidates {
            // SAFETY: loading NVRTC runs only its (and the C++ runtime's) initialisers.
            if let Ok(lib) = unsafe { libloading::Library::new(&candidate) } {
                return Self::from_library(lib, candidate.display().to_string());
            }
        }
        let dirs: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
        Err(NvrtcError::NotFound {
            tried: format!(
                "{} on the loader's path{}",
                names.join(", "),
                if dirs.is_empty() {
                    String::new()
                } else {
                    format!(" and in {}", dirs.join(", "))
                }
            ),
        })
    }

    fn from_library(lib: libloading::Library, library: String) -> Result<Self, NvrtcError> {
        fn symbol<T: Copy>(
            lib: &libloading::Library,
            library: &str,
            name: &'static str,
        ) -> Result<T, NvrtcError> {
            // SAFETY: each caller names the C signature NVRTC documents for `name`.
            unsafe { lib.get::<T>(name.as_bytes()) }
                .map(|s| *s)
                .map_err(|_| NvrtcError::MissingSymbol {
                    library: library.to_owned(),
                    symbol: name,
                })
        }
        let version: VersionFn = symbol(&lib, &library, "nvrtcVersion")?;
        let (mut major, mut minor) = (0, 0);
        // SAFETY: writes two ints.
        unsafe { version(&mut major, &mut minor) };
        Ok(Nvrtc {
            version: (major, minor),
            error_string: symbol(&lib, &library, "nvrtcGetErrorString")?,
            create: symbol(&lib, &library, "nvrtcCreateProgram")?,
            compile: symbol(&lib, &library, "nvrtcCompileProgram")?,
            ptx_size: symbol(&lib, &library, "nvrtcGetPTXSize")?,
            ptx: symbol(&lib, &library, "nvrtcGetPTX")?,
            log_size: symbol(&lib, &library, "nvrtcGetProgramLogSize")?,
            log: symbol(&lib, &library, "nvrtcGetProgramLog")?,
            destroy: symbol(&lib, &library, "nvrtcDestroyProgram")?,
            library,
            _lib: lib,
        })
    }

    /// NVRTC's version, `(major, minor)`.
    pub fn version(&self) -> (i32, i32) {
        self.version
    }

    /// The library it was loaded from.
    pub fn library(&self) -> &str {
        &self.library
    }

    /// Compiles the CUDA C++ `source` (named `program` in messages and in the compiler's log)
    /// to PTX with `options` (`--gpu-architecture=compute_90`, `--fmad=false`, ...).
    pub fn compile_ptx(
        &self,
        program: &str,
        source: &str,
        options: &[String],
    ) -> Result<CompiledPtx, NvrtcError> {
        let nul = |what| NvrtcError::Nul {
            program: program.to_owned(),
            what,
        };
        let c_source = CString::new(source).map_err(|_| nul("source"))?;
        let c_name = CString::new(program).map_err(|_| nul("name"))?;
        let c_options = options
            .iter()
            .map(|o| CString::new(o.as_str()))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|_| nul("options"))?;
        let option_ptrs: Vec<*const c_char> = c_options.iter().map(|o| o.as_ptr()).collect();

        let mut handle: Program = std::ptr::null_mut();
        // SAFETY: both strings are NUL-terminated and outlive the call; no headers.
        let created = unsafe {
            (self.create)(
                &mut handle,
                c_source.as_ptr(),
                c_name.as_ptr(),
                0,
                std::ptr::null(),
                std::ptr::null(),
            )
        };
        self.check(program, "nvrtcCreateProgram", created)?;
        let program_handle = ProgramHandle {
            handle,
            destroy: self.destroy,
        };
        // SAFETY: the program is live; the option array has `len` valid C strings.
        let compiled = unsafe {
            (self.compile)(
                program_handle.handle,
                option_ptrs.len() as c_int,
                option_ptrs.as_ptr(),
            )
        };
        let log = self.text(
            program,
            &program_handle,
            (self.log_size, "nvrtcGetProgramLogSize"),
            (self.log, "nvrtcGetProgramLog"),
        )?;
        if compiled != 0 {
            return Err(NvrtcError::Compile {
                program: program.to_owned(),
                options: options.to_vec(),
                message: self.describe(compiled),
                log,
            });
        }
        let ptx = self.text(
            program,
            &program_handle,
            (self.ptx_size, "nvrtcGetPTXSize"),
            (self.ptx, "nvrtcGetPTX"),
        )?;
        let ptx = CString::new(ptx).map_err(|_| nul("generated PTX"))?;
        Ok(CompiledPtx { ptx, log })
    }

    /// A text NVRTC hands out by size, then content (the log, the PTX), without its NUL.
    fn text(
        &self,
        program: &str,
        handle: &ProgramHandle,
        size: (SizeFn, &'static str),
        get: (TextFn, &'static str),
    ) -> Result<String, NvrtcError> {
        let mut len = 0usize;
        // SAFETY: the program is live; writes one size.
        let result = unsafe { (size.0)(handle.handle, &mut len) };
        self.check(program, size.1, result)?;
        let mut buffer = vec![0u8; len.max(1)];
        // SAFETY: the buffer holds the `len` bytes NVRTC said it would write.
        let result = unsafe { (get.0)(handle.handle, buffer.as_mut_ptr().cast()) };
        self.check(program, get.1, result)?;
        let end = buffer.iter().position(|&b| b == 0).unwrap_or(buffer.len());
        buffer.truncate(end);
        Ok(String::from_utf8_lossy(&buffer).trim_end().to_owned())
    }

    fn check(
        &self,
        program: &str,
        call: &'static str,
        code: NvrtcResult,
    ) -> Result<(), NvrtcError> {
        if code == 0 {
            Ok(())
        } else {
            Err(NvrtcError::Call {
                program: program.to_owned(),
                call,
                code,
                message: self.describe(code),
            })
        }
    }

    fn describe(&self, code: NvrtcResult) -> String {
        // SAFETY: returns a pointer to a static string (or null for unknown codes).
        let text = unsafe { (self.error_string)(code) };
        if text.is_null() {
            format!("unknown NVRTC error {code}")
        } else {
            // SAFETY: NVRTC's error strings are static and NUL-terminated.
            unsafe { CStr::from_ptr(text) }
                .to_string_lossy()
                .into_owned()
        }
    }
}

/// Destroys the program when dropped, whatever path the compilation took.
struct ProgramHandle {
    handle: Program,
    destroy: DestroyFn,
}

impl Drop for ProgramHandle {
    fn drop(&mut self) {
        // SAFETY: the handle came from nvrtcCreateProgram and is destroyed once. Nothing is
        // left to do if destroying fails.
        let _ = unsafe { (self.destroy)(&mut self.handle) };
    }
}

/// The file names [`Nvrtc::load`] tries, on the loader's path and then in each folder.
fn search_path() -> (Vec<String>, Vec<PathBuf>) {
    if let Some(named) = std::env::var_os(NVRTC_LIBRARY_ENV) {
        return (vec![named.to_string_lossy().into_owned()], Vec::new());
    }
    let roots = ["CUDA_HOME", "CUDA_PATH"]
        .into_iter()
        .filter_map(std::env::var_os)
        .map(PathBuf::from)
        .chain([PathBuf::from("/usr/local/cuda")]);
    let dirs = roots
        .flat_map(|root| {
            ["lib64", "lib", "targets/x86_64-linux/lib"].map(|dir| Path::new(&root).join(dir))
        })
        .collect();
    (library_names(), dirs)
}

/// NVRTC's file names, newest CUDA first.
fn library_names() -> Vec<String> {
    if cfg!(windows) {
        [
            "nvrtc64_130_0.dll",
            "nvrtc64_120_0.dll",
            "nvrtc64_112_0.dll",
        ]
        .map(String::from)
        .to_vec()
    } else {
        [
            "libnvrtc.so.13",
            "libnvrtc.so.12",
            "libnvrtc.so.11.2",
            "libnvrtc.so",
        ]
        .map(String::from)
        .to_vec()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_versions_first_then_toolkit_folders() {
        if std::env::var_os(NVRTC_LIBRARY_ENV).is_some() {
            return;
        }
        let (names, dirs) = search_path();
        if cfg!(unix) {
            assert_eq!(names[0], "libnvrtc.so.13");
            assert!(
                dirs.contains(&PathBuf::from("/usr/local/cuda/lib64")),
                "{dirs:?}"
            );
        }
    }

    /// On a machine without the CUDA toolkit, loading fails with the list of what was tried;
    /// where NVRTC is installed, a small program compiles and a broken one reports its log.
    #[test]
    fn missing_library_is_an_error_and_compilation_reports_the_log() {
        match Nvrtc::load() {
            Err(NvrtcError::NotFound { tried }) => {
                assert!(
                    tried.contains("libnvrtc") || tried.contains("nvrtc64"),
                    "{tried}"
                );
            }
            Err(other) => panic!("unexpected error: {other}"),
            Ok(nvrtc) => {
                let options = vec!["--gpu-architecture=compute_80".to_owned()];
                let ok = nvrtc
                    .compile_ptx(
                        "ok.cu",
                        "extern \"C\" __global__ void k(float* x) { x[0] = 1.0f; }",
                        &options,
                    )
                    .unwrap();
                assert!(ok.ptx.to_str().unwrap().contains(".entry k"));
                let bad = nvrtc
                    .compile_ptx("bad.cu", "__global__ void k( {", &options)
                    .unwrap_err();
                assert!(matches!(bad, NvrtcError::Compile { .. }), "{bad}");
            }
        }
    }
}
