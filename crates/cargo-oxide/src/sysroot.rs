//! The standard library with the MIR of every function, which user builds compile against.
//!
//! Device code is compiled from MIR. The toolchain's prebuilt `core`, `alloc` and `std` carry
//! MIR only for generic and `#[inline]` functions, so a kernel that reaches any other function
//! of theirs (`core::str::from_utf8`, `Display for usize`, `std_detect`'s feature cache) could
//! not be compiled. cuda-oxide therefore builds the standard library once per toolchain from
//! the toolchain's own `rust-src`, with `-Zalways-encode-mir` (cargo's `-Zbuild-std`), and
//! passes it to every user build as `--sysroot`. Host code compiles against it as against the
//! toolchain's: it is the same source, built by the same rustc.
//!
//! `CUDA_OXIDE_MIR_SYSROOT=0` builds against the toolchain's own sysroot instead.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::cache;
use crate::error::OxideError;
use crate::source_tree;
use crate::toolchain;

/// The crates of the standard library that are built (and what they depend on).
const STD_CRATES: &str = "std,panic_unwind,panic_abort,proc_macro";

/// Whether user builds use the sysroot with MIR (`CUDA_OXIDE_MIR_SYSROOT` is not `0`).
pub fn enabled() -> bool {
    std::env::var("CUDA_OXIDE_MIR_SYSROOT").as_deref() != Ok("0")
}

/// Where the sysroot with MIR of the pinned toolchain is kept: beside the backend's build.
pub fn dir() -> Result<PathBuf, OxideError> {
    let root = source_tree::repo_root()?;
    Ok(cache::backend_target_dir(&root)?
        .join("oxide-sysroot")
        .join(toolchain::pinned_channel()))
}

/// The sysroot with MIR, built first if it is missing or was built by another rustc. Several
/// `cargo oxide` processes may ask at once: one builds, the others wait for it.
pub fn ensure() -> Result<PathBuf, OxideError> {
    let dir = dir()?;
    let rustc_version = rustc_version()?;
    let stamp = dir.join("built-by");
    let is_current = || std::fs::read_to_string(&stamp).is_ok_and(|s| s == rustc_version);
    if is_current() {
        return Ok(dir);
    }
    let io = |path: &Path| {
        let path = path.to_owned();
        move |source| OxideError::Io { path, source }
    };
    std::fs::create_dir_all(&dir).map_err(io(&dir))?;
    let lock_path = dir.join("lock");
    let lock = std::fs::File::create(&lock_path).map_err(io(&lock_path))?;
    lock.lock().map_err(io(&lock_path))?;
    if is_current() {
        return Ok(dir);
    }
    build(&dir, &rustc_version)?;
    Ok(dir)
}

/// The pinned rustc's `rustc -vV`: the sysroot must be rebuilt when it changes.
fn rustc_version() -> Result<String, OxideError> {
    let out = Command::new("rustc")
        .env("RUSTUP_TOOLCHAIN", toolchain::pinned_channel())
        .arg("-vV")
        .output()
        .map_err(|source| OxideError::Spawn {
            command: "rustc -vV".into(),
            source,
        })?;
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The host triple in `rustc -vV`'s output.
fn host_triple(rustc_version: &str) -> Option<&str> {
    rustc_version
        .lines()
        .find_map(|line| line.strip_prefix("host: "))
        .map(str::trim)
}

/// Builds the standard library with MIR into `dir/build`, lays it out as a sysroot in
/// `dir/lib/rustlib/<host>/lib` (its `bin`, the linker rustc ships and `llc`, is the
/// toolchain's), stamps it with `rustc_version`, and removes the build.
fn build(dir: &Path, rustc_version: &str) -> Result<(), OxideError> {
    let host = host_triple(rustc_version).ok_or(OxideError::SysrootBuild)?;
    let io = |path: &Path| {
        let path = path.to_owned();
        move |source| OxideError::Io { path, source }
    };
    eprintln!(
        "cargo oxide: building the standard library with the MIR of every function into {} \
         (once per toolchain; about a minute)",
        dir.display()
    );
    let seed = dir.join("seed");
    std::fs::create_dir_all(seed.join("src")).map_err(io(&seed))?;
    let manifest = seed.join("Cargo.toml");
    std::fs::write(
        &manifest,
        "[package]\nname = \"oxide_sysroot_seed\"\nversion = \"0.0.0\"\nedition = \"2024\"\n\n\
         [profile.release]\ndebug = \"line-tables-only\"\n\n[workspace]\n",
    )
    .map_err(io(&manifest))?;
    let main = seed.join("src/main.rs");
    std::fs::write(&main, "fn main() {}\n").map_err(io(&main))?;
    let build_dir = dir.join("build");
    let status = Command::new("cargo")
        .env("RUSTUP_TOOLCHAIN", toolchain::pinned_channel())
        .env("CARGO_TARGET_DIR", &build_dir)
        .env("RUSTFLAGS", "-Zalways-encode-mir")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .args(["build", "--release", "--quiet"])
        .arg(format!("-Zbuild-std={STD_CRATES}"))
        .args(["--target", host, "--manifest-path"])
        .arg(&manifest)
        .status()
        .map_err(|source| OxideError::Spawn {
            command: "cargo build -Zbuild-std".into(),
            source,
        })?;
    if !status.success() {
        return Err(OxideError::SysrootBuild);
    }
    let rustlib = dir.join("lib/rustlib").join(host);
    let lib = rustlib.join("lib");
    if lib.exists() {
        std::fs::remove_dir_all(&lib).map_err(io(&lib))?;
    }
    std::fs::create_dir_all(&lib).map_err(io(&lib))?;
    let deps = build_dir.join(host).join("release/deps");
    for entry in std::fs::read_dir(&deps).map_err(io(&deps))?.flatten() {
        let path = entry.path();
        if path.extension().is_some_and(|e| e == "rlib") {
            let to = lib.join(entry.file_name());
            std::fs::copy(&path, &to).map_err(io(&to))?;
        }
    }
    link_toolchain_bin(&rustlib, host)?;
    std::fs::remove_dir_all(&build_dir).map_err(io(&build_dir))?;
    let stamp = dir.join("built-by");
    std::fs::write(&stamp, rustc_version).map_err(io(&stamp))
}

/// `rustlib/bin` of the new sysroot is the toolchain's: rustc links with the `rust-lld` it
/// finds there, and the device pipeline runs the `llc` of `llvm-tools` from there.
fn link_toolchain_bin(rustlib: &Path, host: &str) -> Result<(), OxideError> {
    let out = Command::new("rustc")
        .env("RUSTUP_TOOLCHAIN", toolchain::pinned_channel())
        .args(["--print", "sysroot"])
        .output()
        .map_err(|source| OxideError::Spawn {
            command: "rustc --print sysroot".into(),
            source,
        })?;
    let toolchain = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    let bin = toolchain.join("lib/rustlib").join(host).join("bin");
    let link = rustlib.join("bin");
    let _ = std::fs::remove_file(&link);
    symlink_dir(&bin, &link).map_err(|source| OxideError::Io { path: link, source })
}

#[cfg(unix)]
fn symlink_dir(target: &Path, link: &Path) -> std::io::Result<()> {
    std::os::unix::fs::symlink(target, link)
}

#[cfg(windows)]
fn symlink_dir(target: &Path, link: &Path) -> std::io::Result<()> {
    std::os::windows::fs::symlink_dir(target, link)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_host_is_read_from_rustc_version() {
        let text = "rustc 1.97.0-nightly (e50aa6fba 2026-05-19)\nbinary: rustc\n\
                    host: x86_64-unknown-linux-gnu\nrelease: 1.97.0-nightly\n";
        assert_eq!(host_triple(text), Some("x86_64-unknown-linux-gnu"));
        assert_eq!(host_triple("rustc 1.0"), None);
    }
}
