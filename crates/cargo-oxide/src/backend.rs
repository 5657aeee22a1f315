//! Finding (and building when needed) the codegen backend dylib.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::cache;
use crate::error::OxideError;
use crate::toolchain;

/// The root of the cuda-oxide sources: `CUDA_OXIDE_SRC` when set, otherwise the checkout this
/// cargo-oxide was built from (an installed cargo-oxide keeps using the checkout it was
/// installed from: the backend and the crates kernels depend on are built from it).
pub fn repo_root() -> Result<PathBuf, OxideError> {
    let root = match std::env::var_os("CUDA_OXIDE_SRC") {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."),
    };
    let root = root.canonicalize().unwrap_or(root);
    if root.join("crates/rustc-codegen-cuda/Cargo.toml").is_file() {
        Ok(root)
    } else {
        Err(OxideError::RepoNotFound(root))
    }
}

/// The toolchain the backend is built for: the backend links against one exact rustc, so user
/// crates must be compiled by that same rustc, whatever the user's default toolchain is.
pub fn pinned_toolchain() -> &'static str {
    &toolchain::Toolchain::pinned().channel
}

/// The backend dylib: `CUDA_OXIDE_BACKEND` if set, otherwise the one built from the sources
/// (built, or brought up to date, with cargo first). Either way the pinned toolchain is
/// installed first when it is missing, and the standard library with MIR built when it is
/// (`crate::sysroot`): every build with the backend needs them.
pub fn backend_dylib(release: bool) -> Result<PathBuf, OxideError> {
    toolchain::Toolchain::pinned().ensure_installed()?;
    if crate::sysroot::enabled() {
        crate::sysroot::ensure()?;
    }
    if let Some(path) = std::env::var_os("CUDA_OXIDE_BACKEND") {
        let path = PathBuf::from(path);
        return if path.is_file() {
            Ok(path)
        } else {
            Err(OxideError::BackendMissing(path))
        };
    }
    let root = repo_root()?;
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
        .env("RUSTUP_TOOLCHAIN", pinned_toolchain())
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
    let stamp = fnv1a(&[meta.len().to_le_bytes().as_slice(), &modified.to_le_bytes()].concat());
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

/// FNV-1a, a small stable hash for file names.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}
