//! Finding (and building when needed) the codegen backend dylib.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::cache;
use crate::error::OxideError;
use crate::source_tree;
use crate::sysroot;
use crate::toolchain;

/// The backend dylib: `CUDA_OXIDE_BACKEND` if set, otherwise the one built from the sources
/// (built, or brought up to date, with cargo first). Either way the pinned toolchain is
/// installed first when it is missing, and the standard library with MIR built when it is
/// (`crate::sysroot`): every build with the backend needs them.
pub fn backend_dylib(release: bool) -> Result<PathBuf, OxideError> {
    toolchain::Toolchain::pinned().ensure_installed()?;
    if sysroot::enabled() {
        sysroot::ensure()?;
    }
    if let Some(path) = std::env::var_os("CUDA_OXIDE_BACKEND") {
        let path = PathBuf::from(path);
        return if path.is_file() {
            Ok(path)
        } else {
            Err(OxideError::BackendMissing(path))
        };
    }
    let root = source_tree::repo_root()?;
    let target_dir = cache::backend_target_dir(&root)?;
    let profile = if release { "release" } else { "debug" };
    let dylib = target_dir.join(profile).join(format!(
        "{}rustc_codegen_cuda{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    ));
    // The first build takes minutes: let cargo show its progress. Later ones only check that
    // the backend is up to date, quietly (errors still show).
    let first_build = !dylib.is_file();
    if first_build {
        eprintln!(
            "cargo oxide: building the cuda-oxide codegen backend into {} (once per cuda-oxide \
             version; a minute or a few)",
            target_dir.display()
        );
    }
    let mut cargo = Command::new("cargo");
    cargo
        .current_dir(&root)
        .env("RUSTUP_TOOLCHAIN", toolchain::pinned_channel())
        .env("CARGO_TARGET_DIR", &target_dir)
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .args(["build", "--package", "rustc-codegen-cuda"]);
    if !first_build {
        cargo.arg("--quiet");
    }
    if release {
        cargo.arg("--release");
    }
    let status = cargo.status().map_err(|source| OxideError::Spawn {
        command: "cargo build --package rustc-codegen-cuda".into(),
        source,
    })?;
    if !status.success() {
        return Err(OxideError::BackendBuild);
    }
    if !dylib.is_file() {
        return Err(OxideError::BackendMissing(dylib));
    }
    stamped_copy(&dylib, &target_dir.join("oxide-backend"))
}

/// A copy of the backend whose file name changes whenever the backend does. Cargo does not
/// look at the dylib that `-Zcodegen-backend` names, only at the flag: a new path in the flag
/// makes it rebuild everything compiled by an older backend.
fn stamped_copy(dylib: &Path, dir: &Path) -> Result<PathBuf, OxideError> {
    let io = |source| OxideError::Io {
        path: dylib.to_owned(),
        source,
    };
    let meta = std::fs::metadata(dylib).map_err(io)?;
    let modified = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos());
    let stamp =
        cache::fnv1a(&[meta.len().to_le_bytes().as_slice(), &modified.to_le_bytes()].concat());
    let file_name = dylib
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("backend.so");
    let (stem, ext) = file_name.rsplit_once('.').unwrap_or((file_name, "so"));
    let stamped = dir.join(format!("{stem}-{stamp:016x}.{ext}"));
    if stamped.is_file() {
        return Ok(stamped);
    }
    std::fs::create_dir_all(dir).map_err(io)?;
    for old in std::fs::read_dir(dir).map_err(io)?.flatten() {
        if old
            .file_name()
            .to_string_lossy()
            .starts_with(&format!("{stem}-"))
        {
            let _ = std::fs::remove_file(old.path());
        }
    }
    // Copied under a name of this process, then renamed: another cargo oxide (tests run several
    // at once) must never find, and hand rustc, a half-written library at the stamped path.
    let partial = dir.join(format!(".{stem}.{}.partial", std::process::id()));
    std::fs::copy(dylib, &partial).map_err(io)?;
    std::fs::rename(&partial, &stamped).map_err(io)?;
    Ok(stamped)
}
