//! NVIDIA's tools and libraries that the pipeline uses: `ptxas` and libdevice
//! (`libdevice.10.bc`, the bitcode library behind CUDA C++'s math functions), from a CUDA
//! installation or PyPI's `nvidia-cuda-nvcc` wheel.
//!
//! `ptxas` is looked for at `$PTXAS`, then on `PATH`, in `/usr/local/cuda/bin`, and in the
//! wheel.
//!
//! libdevice is looked for, in order, at:
//! 1. `$CUDA_OXIDE_LIBDEVICE` (the file, or a folder holding it; used as is, with no fallback);
//! 2. `nvidia/<package>/nvvm/libdevice/` in Python's site-packages: PyPI's `nvidia-cuda-nvcc`
//!    ([PIP_REQUIREMENT], the package that also provides `ptxas`) puts it there;
//! 3. `nvvm/libdevice/` of a CUDA installation: `$CUDA_HOME`, `$CUDA_PATH`, `/usr/local/cuda`.

use std::{env, fs, path::PathBuf, process::Command};

use crate::error::ToolError;
use crate::process::exe;

/// The library's file name.
pub const LIBDEVICE_FILE: &str = "libdevice.10.bc";

/// The pip requirement that installs libdevice (pinned, as for `ptxas` in `scripts/ptxas.sh`).
pub const PIP_REQUIREMENT: &str = "nvidia-cuda-nvcc==13.5.37";

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
fn in_nvidia_wheels(relative: &[&str]) -> Vec<PathBuf> {
    in_nvidia_packages(&python_site_packages(), relative)
}

/// Python's site-packages folders (the system's and the user's), as `python3` reports them.
fn python_site_packages() -> Vec<PathBuf> {
    let Ok(out) = Command::new("python3")
        .args([
            "-c",
            "import site; print('\\n'.join(site.getsitepackages() + [site.getusersitepackages()]))",
        ])
        .output()
    else {
        return Vec::new();
    };
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(PathBuf::from)
        .collect()
}

/// `<site>/nvidia/<package>/<relative>` for every site of `sites` and every package folder of
/// NVIDIA's wheels there, sorted by name.
fn in_nvidia_packages(sites: &[PathBuf], relative: &[&str]) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for site in sites {
        let mut packages: Vec<PathBuf> = fs::read_dir(site.join("nvidia"))
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

/// Where libdevice is (see the module docs for the order).
pub fn find_libdevice() -> Result<PathBuf, ToolError> {
    if let Some(configured) = env::var_os("CUDA_OXIDE_LIBDEVICE").filter(|v| !v.is_empty()) {
        let configured = PathBuf::from(configured);
        let file = if configured.is_dir() {
            configured.join(LIBDEVICE_FILE)
        } else {
            configured
        };
        return if file.is_file() {
            Ok(file)
        } else {
            Err(ToolError::LibdeviceMissing(file))
        };
    }
    let candidates = candidates();
    candidates
        .iter()
        .find(|path| path.is_file())
        .cloned()
        .ok_or(ToolError::LibdeviceNotFound {
            searched: candidates,
            pip_requirement: PIP_REQUIREMENT,
        })
}

/// The places searched after `$CUDA_OXIDE_LIBDEVICE`, in order.
fn candidates() -> Vec<PathBuf> {
    let mut candidates = in_nvidia_wheels(&["nvvm", "libdevice", LIBDEVICE_FILE]);
    let cuda_roots = ["CUDA_HOME", "CUDA_PATH"]
        .iter()
        .filter_map(env::var_os)
        .map(PathBuf::from)
        .chain([PathBuf::from("/usr/local/cuda")]);
    for root in cuda_roots {
        candidates.push(root.join("nvvm").join("libdevice").join(LIBDEVICE_FILE));
    }
    candidates
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    #[test]
    fn nvidia_packages_are_searched_in_order() {
        let site = env::temp_dir().join(format!("oxide-wheels-{}", std::process::id()));
        for package in ["cu13", "cuda_nvcc"] {
            fs::create_dir_all(site.join("nvidia").join(package).join("bin")).unwrap();
        }
        fs::write(site.join("nvidia/cuda_nvcc/bin/ptxas"), "").unwrap();
        let found = in_nvidia_packages(std::slice::from_ref(&site), &["bin", "ptxas"]);
        assert_eq!(
            found,
            vec![
                site.join("nvidia/cu13/bin/ptxas"),
                site.join("nvidia/cuda_nvcc/bin/ptxas")
            ]
        );
        fs::remove_dir_all(&site).unwrap();
    }

    #[test]
    fn the_pinned_wheel_is_the_one_the_test_script_installs() {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../scripts/ptxas.sh");
        let text = fs::read_to_string(&script).unwrap();
        assert!(
            text.contains(&format!("\"{PIP_REQUIREMENT}\"")),
            "{} pins another nvidia-cuda-nvcc than {PIP_REQUIREMENT}",
            script.display()
        );
    }

    #[test]
    fn every_candidate_is_a_libdevice_file() {
        for path in candidates() {
            assert!(path.ends_with(Path::new("nvvm/libdevice").join(LIBDEVICE_FILE)));
        }
    }
}
