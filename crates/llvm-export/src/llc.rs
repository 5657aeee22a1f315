//! Finding `llc` (and `opt` beside it) and compiling LLVM IR to PTX with them.
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

/// The oldest LLVM major version whose `llc` accepts what this crate writes.
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

/// Options of [`compile_to_ptx`].
#[derive(Clone, Debug)]
pub struct PtxOptions {
    /// Optimisation level (0 to 3) for `opt` and `llc`.
    pub opt_level: u8,
    /// Run `opt -O<level>` before `llc` when `opt` was found.
    pub run_opt: bool,
    /// The tools to use; found with [`find_llvm_tools`] when `None`.
    pub tools: Option<LlvmTools>,
    /// Rust sysroot to search for `llvm-tools` (the caller's, e.g. from inside rustc).
    pub sysroot: Option<PathBuf>,
    /// The PTX ISA version to emit, times ten (`80` for 8.0), when the module needs a newer
    /// one than `llc` emits for the target by default; `None` keeps `llc`'s default.
    pub ptx_isa: Option<u32>,
    /// Hoist checks between two `opt` runs: version loops whose bounds checks a test before
    /// the loop can prove ([crate::loop_versioning]) and merge runs of checks
    /// ([crate::check_merging]).
    pub check_hoisting: bool,
}

impl Default for PtxOptions {
    fn default() -> Self {
        PtxOptions {
            opt_level: 3,
            run_opt: true,
            tools: None,
            sysroot: None,
            ptx_isa: None,
            check_hoisting: true,
        }
    }
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

/// What `opt` is told besides `-O<level> -mcpu=sm_XX` (the module's triple names the NVPTX
/// target):
///
/// - `-two-entry-phi-node-folding-threshold=8`: LLVM folds a two-sided `if` into `select`s only
///   when each side is at most 4 cheap instructions (a threshold tuned for CPUs, where a
///   predicted branch is almost free). On a GPU a branch that threads of a warp take
///   differently runs both sides one after the other, so speculating a few more instructions
///   is the better trade, as NVIDIA's compiler does: with 8, the Collatz step
///   `if n % 2 == 0 { n / 2 } else { 3 * n + 1 }` becomes a `selp` and the benchmark 15%
///   faster (docs/bench.md).
/// - `-unroll-runtime-epilog=false`: a loop unrolled by a factor its trip count need not be a
///   multiple of runs the leftover iterations before the unrolled loop instead of after it (the
///   iterations keep their order). The unrolled loop then counts down to zero, and no 64-bit
///   remainder count or offset stays live across it: ptxas keeps more of its loads in flight
///   (`iter_chain`, a zipped dot product per thread: 0.976 → 0.981 of CUDA C++ on the H100).
pub const OPT_NVPTX_TUNING: &[&str] = &[
    "-two-entry-phi-node-folding-threshold=8",
    "-unroll-runtime-epilog=false",
];

/// Compile the textual LLVM IR `ll_text` to PTX for `target` (`"sm_90"`): `opt -O3` when
/// available, then `llc -O3 -march=nvptx64 -mcpu=<target>` (with 128-bit float conversions
/// expanded). Returns the PTX text. A module with libdevice linked in (it calls
/// `__nvvm_reflect`) gets libdevice's IEEE settings ([crate::libdevice::REFLECT_FLAGS]).
pub fn compile_to_ptx(
    ll_text: &str,
    target: &str,
    options: &PtxOptions,
) -> Result<String, PtxError> {
    let valid_target = target
        .strip_prefix("sm_")
        .is_some_and(|s| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric()));
    if !valid_target {
        return Err(PtxError::InvalidTarget(target.to_string()));
    }
    let tools = match &options.tools {
        Some(tools) => tools.clone(),
        None => find_llvm_tools(options.sysroot.as_deref())?,
    };
    let level = format!("-O{}", options.opt_level.min(3));
    let cpu = format!("-mcpu={target}");
    let reflect: &[&str] = if ll_text.contains("@__nvvm_reflect(") {
        crate::libdevice::REFLECT_FLAGS
    } else {
        &[]
    };

    let dir = TempDir::new()?;
    let input = dir.path.join("module.ll");
    write(&input, ll_text)?;
    let mut llc_input = input.clone();
    if options.run_opt
        && let Some(opt) = &tools.opt
    {
        let optimised = dir.path.join("module.opt.ll");
        let mut args: Vec<&std::ffi::OsStr> = vec![level.as_ref(), cpu.as_ref()];
        args.extend(OPT_NVPTX_TUNING.iter().map(std::ffi::OsStr::new));
        args.extend(reflect.iter().map(std::ffi::OsStr::new));
        let run_opt = |from: &Path, to: &Path| {
            let mut args = args.clone();
            args.extend([
                "-S".as_ref(),
                from.as_os_str(),
                "-o".as_ref(),
                to.as_os_str(),
            ]);
            run(opt, &args)
        };
        run_opt(&input, &optimised)?;
        llc_input = optimised;
        if options.check_hoisting && options.opt_level > 0 {
            let text = read(&llc_input)?;
            let (versioned, loops) = crate::loop_versioning::version_checked_loops(&text);
            let (versioned, merged) = crate::check_merging::merge_check_runs(&versioned);
            if loops + merged > 0 {
                let versioned_path = dir.path.join("module.versioned.ll");
                write(&versioned_path, &versioned)?;
                let again = dir.path.join("module.opt2.ll");
                run_opt(&versioned_path, &again)?;
                llc_input = again;
            }
        }
    }
    let ptx = dir.path.join("module.ptx");
    let mut args: Vec<&std::ffi::OsStr> = vec![
        level.as_ref(),
        "-march=nvptx64".as_ref(),
        // Conversions between floats and integers wider than 64 bits (`i128 as f64`) have no
        // NVPTX instruction: this makes llc expand them into integer code.
        "-expand-fp-convert-bits=64".as_ref(),
        cpu.as_ref(),
    ];
    args.extend(reflect.iter().map(std::ffi::OsStr::new));
    let ptx_feature = options
        .ptx_isa
        .map(|version| format!("-mattr=+ptx{version}"));
    if let Some(feature) = &ptx_feature {
        args.push(feature.as_ref());
    }
    args.extend([llc_input.as_os_str(), "-o".as_ref(), ptx.as_os_str()]);
    run(&tools.llc, &args)?;
    read(&ptx)
}

fn read(path: &Path) -> Result<String, PtxError> {
    fs::read_to_string(path).map_err(|source| PtxError::Io {
        context: format!("reading {}", path.display()),
        source,
    })
}

fn write(path: &Path, text: &str) -> Result<(), PtxError> {
    fs::write(path, text).map_err(|source| PtxError::Io {
        context: format!("writing {}", path.display()),
        source,
    })
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
    let Ok(out) = Command::new("python3")
        .args([
            "-c",
            "import site; print('\\n'.join(site.getsitepackages() + [site.getusersitepackages()]))",
        ])
        .output()
    else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for site in String::from_utf8_lossy(&out.stdout).lines() {
        let nvidia = Path::new(site).join("nvidia");
        let mut packages: Vec<PathBuf> = fs::read_dir(&nvidia)
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
    let dir = TempDir::new()?;
    let input = dir.path.join("module.ptx");
    fs::write(&input, ptx).map_err(|source| PtxError::Io {
        context: format!("writing {}", input.display()),
        source,
    })?;
    let arch = format!("-arch={target}");
    let cubin = dir.path.join("module.cubin");
    run(
        ptxas,
        &[
            arch.as_ref(),
            input.as_os_str(),
            "-o".as_ref(),
            cubin.as_os_str(),
        ],
    )
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
    let dir = TempDir::new()?;
    let input = dir.path.join("module.ptx");
    fs::write(&input, ptx).map_err(|source| PtxError::Io {
        context: format!("writing {}", input.display()),
        source,
    })?;
    let cubin = dir.path.join("module.cubin");
    let mut args: Vec<std::ffi::OsString> = ptxas_options(ptx, target)
        .into_iter()
        .map(Into::into)
        .collect();
    args.extend([
        input.into_os_string(),
        "-o".into(),
        cubin.clone().into_os_string(),
    ]);
    let args: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_os_str()).collect();
    run(ptxas, &args)?;
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
pub(crate) fn run(tool: &Path, args: &[&std::ffi::OsStr]) -> Result<(), PtxError> {
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
pub(crate) struct TempDir {
    pub(crate) path: PathBuf,
}

impl TempDir {
    pub(crate) fn new() -> Result<TempDir, PtxError> {
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
