//! The cuda-oxide sources this cargo-oxide builds from, and paths given relative to them.

use std::path::{Path, PathBuf};

use crate::error::OxideError;

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

/// `dir`, relative to the repository root unless absolute.
pub fn resolve_dir(dir: &Path) -> Result<PathBuf, OxideError> {
    Ok(if dir.is_absolute() {
        dir.to_owned()
    } else {
        repo_root()?.join(dir)
    })
}
