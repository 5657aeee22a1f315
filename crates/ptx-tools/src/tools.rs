//! Finding and running the tools that make and check PTX: `llc` (and `opt` and `llvm-link`
//! beside it), and NVIDIA's `ptxas`. The backend, `cargo oxide doctor` and the scripts (through
//! `cargo oxide doctor --which`) all find them here.
//!
//! `llc` is looked for, in order, at:
//! 1. `$CUDA_OXIDE_LLC` (used as is: if it is unusable, that is an error, with no fallback);
//! 2. the Rust toolchain's `llvm-tools` component, `<sysroot>/lib/rustlib/<host>/bin/llc`, where
//!    the sysroot is the one passed in, else `$CUDA_OXIDE_SYSROOT`, else `rustc --print sysroot`
//!    (`$RUSTC` if set);
//! 3. `llc-22`, `llc-21`, `llc` on `PATH`.
//!
//! Candidates older than LLVM 21 or without the NVPTX target are skipped (and listed in the
//! error when nothing fits). `opt` and `llvm-link` are taken from `llc`'s directory when they
//! have the same LLVM major version.

use std::{
    env, fmt, fs,
    path::{Path, PathBuf},
    process::Command,
    sync::atomic::{AtomicU64, Ordering},
    time::{SystemTime, UNIX_EPOCH},
};

use crate::error::PtxError;

/// The oldest LLVM major version whose `llc` accepts what `llvm-export` writes.
pub const MIN_LLVM_MAJOR: u32 = 21;

/// An LLVM release number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct LlvmVersion {
    pub major: u32,
    pub minor: u32,
    pub patch: u32,
}

impl fmt::Display for LlvmVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

impl LlvmVersion {
    /// The version in `--version` output of an LLVM tool (`... LLVM version 22.1.4-rust-...`).
    pub fn parse(version_output: &str) -> Option<LlvmVersion> {
        let rest = version_output.split("LLVM version ").nth(1)?;
        let number: String = rest
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == '.')
            .collect();
        let mut parts = number.split('.').map(|p| p.parse::<u32>().ok());
        let major = parts.next()??;
        let minor = parts.next().flatten().unwrap_or(0);
        let patch = parts.next().flatten().unwrap_or(0);
        Some(LlvmVersion {
            major,
            minor,
            patch,
        })
    }
}

/// A usable `llc`, and `opt` and `llvm-link` if ones of the same version sit beside it.
#[derive(Clone, Debug)]
pub struct LlvmTools {
    pub llc: PathBuf,
    pub opt: Option<PathBuf>,
    /// Links libdevice into modules that call it (see [crate::libdevice]).
    pub llvm_link: Option<PathBuf>,
    pub version: LlvmVersion,
}

/// Run `path --version` and check that it is an LLVM 21+ `llc` (or `opt`) with NVPTX.
pub fn probe_llc(path: &Path) -> Result<LlvmVersion, PtxError> {
    let output = Command::new(path)
        .arg("--version")
        .output()
        .map_err(|source| PtxError::Spawn {
            path: path.to_path_buf(),
            source,
        })?;
    let text = String::from_utf8_lossy(&output.stdout).into_owned()
        + &String::from_utf8_lossy(&output.stderr);
    let version = LlvmVersion::parse(&text).ok_or_else(|| PtxError::UnknownVersion {
        path: path.to_path_buf(),
    })?;
    if version.major < MIN_LLVM_MAJOR {
        return Err(PtxError::TooOld {
            path: path.to_path_buf(),
            version: version.to_string(),
        });
    }
    if !text.contains("nvptx64") {
        return Err(PtxError::NoNvptxTarget {
            path: path.to_path_buf(),
            version: version.to_string(),
        });
    }
    Ok(version)
}

/// Find `llc` (and `opt`) in the order given in the module docs.
pub fn find_llvm_tools(sysroot: Option<&Path>) -> Result<LlvmTools, PtxError> {
    if let Some(llc) = env::var_os("CUDA_OXIDE_LLC") {
        let llc = PathBuf::from(llc);
        let version = probe_llc(&llc)?;
        return Ok(with_opt(llc, version));
    }
    let mut tried = Vec::new();
    let mut seen = Vec::new();
    for candidate in toolchain_llc(sysroot).into_iter().chain(path_llcs()) {
        let canonical = fs::canonicalize(&candidate).unwrap_or_else(|_| candidate.clone());
        if seen.contains(&canonical) {
            continue;
        }
        seen.push(canonical);
        match probe_llc(&candidate) {
            Ok(version) => return Ok(with_opt(candidate, version)),
            Err(e) => tried.push(e.to_string()),
        }
    }
    Err(PtxError::LlcNotFound { tried })
}

/// `llc` of the Rust toolchain's `llvm-tools` component, if present.
fn toolchain_llc(sysroot: Option<&Path>) -> Option<PathBuf> {
    let sysroot = match sysroot {
        Some(s) => s.to_path_buf(),
        None => match env::var_os("CUDA_OXIDE_SYSROOT") {
            Some(s) => PathBuf::from(s),
            None => rustc_sysroot()?,
        },
    };
    let rustlib = sysroot.join("lib").join("rustlib");
    let mut hosts: Vec<PathBuf> = fs::read_dir(&rustlib)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("bin").join(exe("llc")).is_file())
        .collect();
    hosts.sort();
    let is_this_host = |p: &PathBuf| {
        let name = p.file_name().unwrap_or_default().to_string_lossy();
        name.starts_with(env::consts::ARCH) && name.contains(env::consts::OS)
    };
    let host = hosts.iter().find(|p| is_this_host(p)).or(hosts.first())?;
    Some(host.join("bin").join(exe("llc")))
}

/// `rustc --print sysroot`, with `$RUSTC` when set.
fn rustc_sysroot() -> Option<PathBuf> {
    let rustc = env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let output = Command::new(rustc)
        .args(["--print", "sysroot"])
        .output()
        .ok()?;
    if !output.status.success() {
        return None;
    }
    let path = String::from_utf8(output.stdout).ok()?;
    let path = path.trim();
    (!path.is_empty()).then(|| PathBuf::from(path))
}

/// `llc-22`, `llc-21` and `llc` found on `PATH`, in that order.
fn path_llcs() -> Vec<PathBuf> {
    let dirs: Vec<PathBuf> = env::var_os("PATH")
        .map(|p| env::split_paths(&p).collect())
        .unwrap_or_default();
    ["llc-22", "llc-21", "llc"]
        .iter()
        .flat_map(|name| dirs.iter().map(move |d| d.join(exe(name))))
        .filter(|p| p.is_file())
        .collect()
}

/// `opt` and `llvm-link` beside `llc` (`llc-22` pairs with `opt-22`), each kept only with the
/// same major version.
fn with_opt(llc: PathBuf, version: LlvmVersion) -> LlvmTools {
    let sibling = |tool: &str| {
        let name = llc.file_name()?.to_string_lossy().replacen("llc", tool, 1);
        let path = llc.with_file_name(name);
        let output = Command::new(&path).arg("--version").output().ok()?;
        let text = String::from_utf8_lossy(&output.stdout);
        (LlvmVersion::parse(&text)?.major == version.major).then_some(path)
    };
    LlvmTools {
        opt: sibling("opt"),
        llvm_link: sibling("llvm-link"),
        llc,
        version,
    }
}

fn exe(name: &str) -> String {
    format!("{name}{}", env::consts::EXE_SUFFIX)
}

/// `ptxas`, NVIDIA's PTX assembler, if one is installed: `$PTXAS`, then `PATH`,
/// `/usr/local/cuda/bin`, and the `nvidia-cuda-nvcc` wheel in a Python site-packages folder.
/// Not needed to compile; tests use it to check the PTX they produce.
pub fn find_ptxas() -> Option<PathBuf> {
    if let Some(path) = env::var_os("PTXAS") {
        return Some(PathBuf::from(path));
    }
    let mut candidates: Vec<PathBuf> = env::var_os("PATH")
        .map(|path| {
            env::split_paths(&path)
                .map(|dir| dir.join(exe("ptxas")))
                .collect()
        })
        .unwrap_or_default();
    candidates.push("/usr/local/cuda/bin/ptxas".into());
    candidates.extend(in_nvidia_wheels(&["bin", "ptxas"]));
    candidates.into_iter().find(|path| path.is_file())
}

/// `<site-packages>/nvidia/<package>/<relative>` for every Python site-packages folder (the
/// system's and the user's, as `python3` reports them) and every package folder of NVIDIA's
/// wheels there (`cu13` for CUDA 13, `cuda_nvcc` for CUDA 12), in order, whether or not the
/// file exists.
pub(crate) fn in_nvidia_wheels(relative: &[&str]) -> Vec<PathBuf> {
    in_nvidia_packages(&python_site_packages(), relative)
}

/// Python's site-packages folders (the system's and the user's), as `python3` reports them.
fn python_site_packages() -> Vec<PathBuf> {
    let Ok(out) = Command::new("python3")
        .args([
            "-c",
            "import site; print('\\n'.join(site.getsitepackages() + [site.getusersitepackages()]))",
        ])
        .output()
    else {
        return Vec::new();
    };
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(PathBuf::from)
        .collect()
}

/// `<site>/nvidia/<package>/<relative>` for every site of `sites` and every package folder of
/// NVIDIA's wheels there, sorted by name.
fn in_nvidia_packages(sites: &[PathBuf], relative: &[&str]) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for site in sites {
        let mut packages: Vec<PathBuf> = fs::read_dir(site.join("nvidia"))
            .into_iter()
            .flatten()
            .flatten()
            .map(|entry| entry.path())
            .collect();
        packages.sort();
        for package in packages {
            found.push(relative.iter().fold(package, |path, part| path.join(part)));
        }
    }
    found
}

/// Assembles `ptx` for `target` (`sm_90`) with `ptxas`; a rejection is a
/// [`PtxError::ToolFailed`] carrying ptxas's diagnostics.
pub fn assemble_with_ptxas(ptxas: &Path, ptx: &str, target: &str) -> Result<(), PtxError> {
    run_ptxas(ptxas, ptx, &[format!("-arch={target}")]).map(drop)
}

/// Runs `ptxas` with `options` on `ptx` (written to a temporary folder); the folder and the
/// path of the cubin in it.
fn run_ptxas(ptxas: &Path, ptx: &str, options: &[String]) -> Result<(TempDir, PathBuf), PtxError> {
    let dir = TempDir::new()?;
    let input = dir.file("module.ptx", ptx)?;
    let cubin = dir.path.join("module.cubin");
    let mut args: Vec<&std::ffi::OsStr> = options.iter().map(std::ffi::OsStr::new).collect();
    args.extend([input.as_os_str(), "-o".as_ref(), cubin.as_os_str()]);
    run(ptxas, &args)?;
    Ok((dir, cubin))
}

/// Whether `ptx` was generated with full debug information (`.target sm_XX, debug`): ptxas
/// must then compile it with `-g` (it refuses `-g` with optimisation: "Optimized debugging not
/// supported").
pub fn is_debug_ptx(ptx: &str) -> bool {
    ptx.lines()
        .map(str::trim)
        .find(|l| l.starts_with(".target"))
        .is_some_and(|l| l.split(',').skip(1).any(|part| part.trim() == "debug"))
}

/// Assembles `ptx` for `target` (`sm_90`) with `ptxas` and returns the cubin (an ELF image the
/// driver loads without compiling anything), or ptxas's diagnostics as a
/// [`PtxError::ToolFailed`]. PTX with full debug information ([is_debug_ptx]) is assembled
/// with `-g` (unoptimised, with its DWARF), other PTX with `-O3`.
pub fn assemble_cubin(ptxas: &Path, ptx: &str, target: &str) -> Result<Vec<u8>, PtxError> {
    let (_dir, cubin) = run_ptxas(ptxas, ptx, &ptxas_options(ptx, target))?;
    fs::read(&cubin).map_err(|source| PtxError::Io {
        context: format!("reading {}", cubin.display()),
        source,
    })
}

/// The options [assemble_cubin] gives ptxas for `ptx` (before the input and `-o`): the
/// architecture, and `-g` for PTX with full debug information, `-O3` otherwise.
pub fn ptxas_options(ptx: &str, target: &str) -> Vec<String> {
    vec![
        format!("-arch={target}"),
        if is_debug_ptx(ptx) { "-g" } else { "-O3" }.to_owned(),
    ]
}

/// Run `tool` with `args`; a non-zero exit is a [`PtxError::ToolFailed`] carrying its stderr,
/// death by a signal a [`PtxError::ToolCrashed`].
pub fn run(tool: &Path, args: &[&std::ffi::OsStr]) -> Result<(), PtxError> {
    let output = Command::new(tool)
        .args(args)
        .output()
        .map_err(|source| PtxError::Spawn {
            path: tool.to_path_buf(),
            source,
        })?;
    if output.status.success() {
        return Ok(());
    }
    #[cfg(unix)]
    if std::os::unix::process::ExitStatusExt::signal(&output.status).is_some() {
        return Err(PtxError::ToolCrashed {
            tool: tool.to_path_buf(),
            status: output.status.to_string(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        });
    }
    Err(PtxError::ToolFailed {
        tool: tool.to_path_buf(),
        status: output.status.to_string(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    })
}

/// A private temporary directory, removed on drop.
pub struct TempDir {
    /// The directory.
    pub path: PathBuf,
}

impl TempDir {
    /// A new empty directory under the system's temporary folder.
    pub fn new() -> Result<TempDir, PtxError> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let path = env::temp_dir().join(format!(
            "cuda-oxide-ptx-{}-{nanos}-{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        fs::create_dir_all(&path).map_err(|source| PtxError::Io {
            context: format!("creating {}", path.display()),
            source,
        })?;
        Ok(TempDir { path })
    }

    /// Writes `text` into the file `name` of the directory and returns its path.
    pub fn file(&self, name: &str, text: &str) -> Result<PathBuf, PtxError> {
        let path = self.path.join(name);
        fs::write(&path, text).map_err(|source| PtxError::Io {
            context: format!("writing {}", path.display()),
            source,
        })?;
        Ok(path)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nvidia_packages_are_searched_in_order() {
        let site = env::temp_dir().join(format!("oxide-wheels-{}", std::process::id()));
        for package in ["cu13", "cuda_nvcc"] {
            fs::create_dir_all(site.join("nvidia").join(package).join("bin")).unwrap();
        }
        fs::write(site.join("nvidia/cuda_nvcc/bin/ptxas"), "").unwrap();
        let found = in_nvidia_packages(std::slice::from_ref(&site), &["bin", "ptxas"]);
        assert_eq!(
            found,
            vec![
                site.join("nvidia/cu13/bin/ptxas"),
                site.join("nvidia/cuda_nvcc/bin/ptxas")
            ]
        );
        fs::remove_dir_all(&site).unwrap();
    }

    #[test]
    fn debug_ptx_is_recognised_by_its_target() {
        assert!(is_debug_ptx(".version 7.8\n.target sm_90, debug\n"));
        assert!(!is_debug_ptx(".version 7.8\n.target sm_90\n// debug\n"));
        assert!(!is_debug_ptx(".target sm_90a\n.section .debug_loc {}\n"));
    }

    #[test]
    fn version_parsing() {
        let rust = "LLVM (http://llvm.org/):\n  LLVM version 22.1.4-rust-1.97.0-nightly\n";
        assert_eq!(
            LlvmVersion::parse(rust),
            Some(LlvmVersion {
                major: 22,
                minor: 1,
                patch: 4
            })
        );
        let debian = "Debian LLVM version 14.0.6\n  Optimized build.";
        assert_eq!(LlvmVersion::parse(debian).map(|v| v.major), Some(14));
        assert_eq!(LlvmVersion::parse("no version here"), None);
    }
}
