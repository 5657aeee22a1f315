//! Installing NVIDIA's libdevice when the kernels need it.
//!
//! The backend links libdevice (`libdevice.10.bc`) into device code whose math calls it
//! (`f32::sin`, `f64::powf`, ...). When none is installed, it tells `cargo oxide` so (see
//! [crate::user_build::build]) with the pip requirement that provides it, PyPI's
//! `nvidia-cuda-nvcc` (the package that `scripts/ptxas.sh` installs for `ptxas`), and `cargo
//! oxide` installs it into Python's site-packages, where the backend looks, and builds again.
//! Builds whose kernels need no libdevice never install anything.

use std::process::Command;

use crate::error::OxideError;

/// Installs `requirement` (`nvidia-cuda-nvcc==<version>`) with `python3 -m pip`.
pub fn install(requirement: &str) -> Result<(), OxideError> {
    eprintln!(
        "cargo oxide: the kernels' math needs NVIDIA's libdevice; installing it \
         (python3 -m pip install {requirement})"
    );
    let failed = |detail: String| OxideError::LibdeviceInstall {
        requirement: requirement.to_owned(),
        detail,
    };
    let status = Command::new("python3")
        .args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            requirement,
        ])
        .status()
        .map_err(|e| failed(format!("could not run python3: {e}")))?;
    if status.success() {
        Ok(())
    } else {
        Err(failed(format!("pip {status}")))
    }
}
