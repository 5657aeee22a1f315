//! LLVM's tools: `llc`, and `opt` and `llvm-link` beside it, found and their versions checked.
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
};

use crate::error::ToolError;
use crate::process::exe;

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
pub fn probe_llc(path: &Path) -> Result<LlvmVersion, ToolError> {
    let output = Command::new(path)
        .arg("--version")
        .output()
        .map_err(|source| ToolError::Spawn {
            path: path.to_path_buf(),
            source,
        })?;
    let text = String::from_utf8_lossy(&output.stdout).into_owned()
        + &String::from_utf8_lossy(&output.stderr);
    let version = LlvmVersion::parse(&text).ok_or_else(|| ToolError::UnknownVersion {
        path: path.to_path_buf(),
    })?;
    if version.major < MIN_LLVM_MAJOR {
        return Err(ToolError::TooOld {
            path: path.to_path_buf(),
            version: version.to_string(),
        });
    }
    if !text.contains("nvptx64") {
        return Err(ToolError::NoNvptxTarget {
            path: path.to_path_buf(),
            version: version.to_string(),
        });
    }
    Ok(version)
}

/// Find `llc` (and `opt`) in the order given in the module docs.
pub fn find_llvm_tools(sysroot: Option<&Path>) -> Result<LlvmTools, ToolError> {
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
    Err(ToolError::LlcNotFound { tried })
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

#[cfg(test)]
mod tests {
    use super::*;

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
