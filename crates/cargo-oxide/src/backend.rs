//! Finding (and building when needed) the codegen backend dylib, and the pinned toolchain.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::error::OxideError;

/// The repository this cargo-oxide was built from.
pub fn repo_root() -> Result<PathBuf, OxideError> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
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
    const TOML: &str = include_str!("../../../rust-toolchain.toml");
    TOML.lines()
        .find_map(|line| {
            let value = line
                .trim()
                .strip_prefix("channel")?
                .trim()
                .strip_prefix('=')?;
            Some(value.trim().trim_matches('"'))
        })
        .expect("rust-toolchain.toml names a channel")
}

/// The backend dylib: `CUDA_OXIDE_BACKEND` if set, otherwise the repository's, built (or brought
/// up to date) with cargo first.
pub fn backend_dylib(release: bool) -> Result<PathBuf, OxideError> {
    if let Some(path) = std::env::var_os("CUDA_OXIDE_BACKEND") {
        let path = PathBuf::from(path);
        return if path.is_file() {
            Ok(path)
        } else {
            Err(OxideError::BackendMissing(path))
        };
    }
    let root = repo_root()?;
    let mut cargo = Command::new("cargo");
    cargo
        .current_dir(&root)
        .env("RUSTUP_TOOLCHAIN", pinned_toolchain())
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .args(["build", "--quiet", "--package", "rustc-codegen-cuda"]);
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
    let profile = if release { "release" } else { "debug" };
    let target_dir = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    let dylib = target_dir.join(profile).join(format!(
        "{}rustc_codegen_cuda{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    ));
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
    std::fs::copy(dylib, &stamped).map_err(io)?;
    Ok(stamped)
}

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn pinned_toolchain_is_a_dated_nightly() {
        let channel = super::pinned_toolchain();
        assert!(channel.starts_with("nightly-20"), "{channel}");
    }
}
