//! `cargo oxide pipeline`: every stage's text for a crate's kernels.

use std::path::PathBuf;

use crate::cli::PipelineOptions;
use crate::error::OxideError;
use crate::user_build;

/// The stages' files, in pipeline order, by extension (`linked.ll`, the module with libdevice
/// linked in, exists only when the kernels' math calls it).
pub const STAGES: &[&str] = &["rustc.mir", "mir", "mem2reg.mir", "ll", "linked.ll", "ptx"];

/// Rebuilds the crate with every dump on and copies the stage files into `options.out`.
/// Returns the files written.
pub fn pipeline(options: &PipelineOptions) -> Result<Vec<PathBuf>, OxideError> {
    let manifest = user_build::resolve_manifest(&options.build)?;
    let crate_name = user_build::package_name(&manifest)?.replace('-', "_");
    // The dumps are written when the crate is compiled: make sure it is.
    user_build::clean_package(&options.build, &manifest)?;
    for var in [
        "CUDA_OXIDE_DUMP_MIR",
        "CUDA_OXIDE_DUMP_LLVM",
        "CUDA_OXIDE_SHOW_RUSTC_MIR",
    ] {
        // SAFETY: cargo-oxide is single-threaded; the variables reach the child cargo.
        unsafe { std::env::set_var(var, "1") };
    }
    let built = user_build::build(&options.build)?;
    let deps = built.artifact_dir.join("deps");
    let out = if options.out.is_absolute() {
        options.out.clone()
    } else {
        std::env::current_dir()
            .map_err(|source| OxideError::Io {
                path: options.out.clone(),
                source,
            })?
            .join(&options.out)
    };
    std::fs::create_dir_all(&out).map_err(|source| OxideError::Io {
        path: out.clone(),
        source,
    })?;
    let mut written = Vec::new();
    for stage in STAGES {
        let Some(source) = newest(&deps, &crate_name, stage) else {
            continue;
        };
        let target = out.join(format!("{crate_name}.{stage}"));
        std::fs::copy(&source, &target).map_err(|source| OxideError::Io {
            path: target.clone(),
            source,
        })?;
        written.push(target);
    }
    if written.is_empty() {
        return Err(OxideError::NoDeviceCode(manifest));
    }
    Ok(written)
}

/// The newest `<crate>-<hash>.<stage>` in `deps`.
fn newest(deps: &std::path::Path, crate_name: &str, stage: &str) -> Option<PathBuf> {
    let prefix = format!("{crate_name}-");
    let suffix = format!(".{stage}");
    std::fs::read_dir(deps)
        .ok()?
        .flatten()
        .filter(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            name.starts_with(&prefix)
                && name.ends_with(&suffix)
                && !name[prefix.len()..name.len() - suffix.len()].contains('.')
        })
        .max_by_key(|entry| entry.metadata().and_then(|m| m.modified()).ok())
        .map(|entry| entry.path())
}
