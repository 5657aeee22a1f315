//! Files put into a folder for the GPU machine: a built binary with its PTX, and scripts made
//! executable.

use std::path::Path;
use std::process::Command;

use crate::error::OxideError;

/// Copies the binary `name` and its `.ptx` (and `.sm_XX.ptx`) from `artifact_dir` into the
/// bundle folder `dir`.
pub fn place(artifact_dir: &Path, name: &str, dir: &Path) -> Result<(), OxideError> {
    let io = |path: &Path| {
        let path = path.to_owned();
        move |source| OxideError::Io { path, source }
    };
    let binary = artifact_dir.join(name);
    let copy = dir.join(name);
    std::fs::copy(&binary, &copy).map_err(io(&binary))?;
    // Debug info makes the binaries too big to carry; the GPU run does not need it.
    let _ = Command::new("strip")
        .arg("--strip-debug")
        .arg(&copy)
        .status();
    let ptx = artifact_dir.join(format!("{name}.ptx"));
    if ptx.is_file() {
        std::fs::copy(&ptx, dir.join(format!("{name}.ptx"))).map_err(io(&ptx))?;
    }
    // The older architectures' PTX of a build for several, which the tests assemble too.
    for (arch, older) in crate::user_build::older_architectures(artifact_dir, name) {
        std::fs::copy(&older, dir.join(format!("{name}.{arch}.ptx"))).map_err(io(&older))?;
    }
    Ok(())
}

/// Makes `path` (a script) executable; elsewhere than on Unix there is nothing to do.
#[cfg(unix)]
pub fn set_executable(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
}

/// Makes `path` (a script) executable; elsewhere than on Unix there is nothing to do.
#[cfg(not(unix))]
pub fn set_executable(_path: &Path) -> std::io::Result<()> {
    Ok(())
}
