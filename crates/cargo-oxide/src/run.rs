//! `cargo oxide run`: build, then run the program.

use std::process::{Command, ExitCode};

use kernel_abi::CPU_DEVICE_VARIABLE as DEVICE_VARIABLE;

use crate::cli::RunTarget;
use crate::error::OxideError;
use crate::example_metadata::example_arch;
use crate::user_build;

/// Builds the target and runs it, returning its exit code. Its kernels are built for the
/// architecture given, else the one the crate's manifest names (`arch` in
/// `[package.metadata.cuda-oxide]`: `sm_90a` for `wgmma`), else the local GPU's.
pub fn run(target: &RunTarget) -> Result<ExitCode, OxideError> {
    let mut build = target.build.clone();
    if build.arch.is_none() && std::env::var_os("CUDA_OXIDE_TARGET").is_none() {
        build.arch = user_build::resolve_manifest(&build)
            .ok()
            .and_then(|manifest| example_arch(&manifest))
            .or_else(local_gpu_arch);
    }
    let built = user_build::build(&build)?;
    // The second `cargo run` finds everything built and only selects and starts the binary.
    let mut cargo = user_build::cargo_with_backend(&build, &built.backend, &built.target_dir);
    cargo
        .arg("run")
        .arg("--quiet")
        .arg("--manifest-path")
        .arg(&built.manifest);
    if build.release {
        cargo.arg("--release");
    }
    if !build.features.is_empty() {
        cargo.arg("--features").arg(build.features.join(","));
    }
    cargo.arg("--").args(&target.args);
    if target.cpu || build.race {
        cargo.env(DEVICE_VARIABLE, "cpu");
    }
    let status = cargo.status().map_err(|source| OxideError::Spawn {
        command: "cargo run".into(),
        source,
    })?;
    Ok(match status.code() {
        Some(0) => ExitCode::SUCCESS,
        Some(code) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
        None => ExitCode::FAILURE,
    })
}

/// The compute capability of the local GPU as `sm_XY`, from `nvidia-smi`; `None` when there
/// is no GPU (the backend's default applies; the program then reports the missing GPU).
fn local_gpu_arch() -> Option<String> {
    let output = Command::new("nvidia-smi")
        .args(["--query-gpu=compute_cap", "--format=csv,noheader", "--id=0"])
        .output()
        .ok()?;
    if !output.status.success() {
        return None;
    }
    arch_from_compute_cap(&String::from_utf8_lossy(&output.stdout))
}

/// `"9.0"` -> `sm_90`.
fn arch_from_compute_cap(text: &str) -> Option<String> {
    let (major, minor) = text.trim().split_once('.')?;
    let arch = format!("sm_{}{}", major.trim(), minor.trim());
    crate::cli::parse_arch(&arch).ok()
}

#[cfg(test)]
mod tests {
    use super::arch_from_compute_cap;

    #[test]
    fn compute_capability_becomes_an_arch() {
        assert_eq!(arch_from_compute_cap("9.0\n").as_deref(), Some("sm_90"));
        assert_eq!(arch_from_compute_cap(" 12.0 ").as_deref(), Some("sm_120"));
        assert_eq!(arch_from_compute_cap("[N/A]"), None);
        assert_eq!(arch_from_compute_cap(""), None);
    }
}
