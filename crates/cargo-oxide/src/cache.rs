//! Where the backend is built and kept.
//!
//! Run inside the repository (the `.cargo/config.toml` alias), `cargo oxide` builds the
//! backend into the repository's `target/`, next to the developer's other builds. Installed
//! (`cargo install --path crates/cargo-oxide`), it keeps the backend in the user's cache
//! directory, one per cuda-oxide version and checkout, so that no user project holds or
//! rebuilds it.

use std::path::{Path, PathBuf};

use crate::error::OxideError;

/// The cargo target directory the backend is built in: `CARGO_TARGET_DIR` when set; the
/// repository's `target/` when this cargo-oxide was itself built there (the alias, the
/// tests); otherwise [cache_dir].
pub fn backend_target_dir(root: &Path) -> Result<PathBuf, OxideError> {
    if let Some(dir) = std::env::var_os("CARGO_TARGET_DIR") {
        return Ok(PathBuf::from(dir));
    }
    let repo_target = root.join("target");
    let exe = std::env::current_exe()
        .ok()
        .and_then(|e| e.canonicalize().ok());
    if exe.is_some_and(|exe| exe.starts_with(&repo_target)) {
        return Ok(repo_target);
    }
    Ok(cache_dir(root)?.join("target"))
}

/// This cuda-oxide's directory in the user's cache:
/// `<cache>/cuda-oxide/<version>-<checkout>`, where `<cache>` is `CUDA_OXIDE_CACHE`,
/// `$XDG_CACHE_HOME` or `~/.cache`, and `<checkout>` a hash of the sources' path (two
/// checkouts of one version do not overwrite each other's backend).
pub fn cache_dir(root: &Path) -> Result<PathBuf, OxideError> {
    let base = if let Some(dir) = std::env::var_os("CUDA_OXIDE_CACHE") {
        PathBuf::from(dir)
    } else if let Some(dir) = std::env::var_os("XDG_CACHE_HOME").filter(|d| !d.is_empty()) {
        PathBuf::from(dir).join("cuda-oxide")
    } else if let Some(home) = std::env::var_os("HOME").filter(|d| !d.is_empty()) {
        PathBuf::from(home).join(".cache/cuda-oxide")
    } else {
        return Err(OxideError::NoCacheDir);
    };
    Ok(base.join(version_key(root)))
}

/// `<cargo-oxide version>-<8 hex digits of the sources' path>`.
fn version_key(root: &Path) -> String {
    let hash = fnv1a(root.as_os_str().as_encoded_bytes());
    format!("{}-{:08x}", env!("CARGO_PKG_VERSION"), hash as u32)
}

/// FNV-1a, a small stable hash for file names.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_keys_tell_versions_and_checkouts_apart() {
        let a = version_key(Path::new("/home/u/cuda-oxide"));
        let b = version_key(Path::new("/home/u/other/cuda-oxide"));
        assert!(
            a.starts_with(concat!(env!("CARGO_PKG_VERSION"), "-")),
            "{a}"
        );
        assert_eq!(a.len(), env!("CARGO_PKG_VERSION").len() + 9, "{a}");
        assert_ne!(a, b);
        assert_eq!(a, version_key(Path::new("/home/u/cuda-oxide")));
    }
}
