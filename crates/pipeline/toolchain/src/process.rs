//! Running a tool, and the private temporary folders its inputs and outputs live in.

use std::{
    env, fs,
    path::{Path, PathBuf},
    process::Command,
    sync::atomic::{AtomicU64, Ordering},
    time::{SystemTime, UNIX_EPOCH},
};

use crate::error::ToolError;

/// Run `tool` with `args`; a non-zero exit is a [`ToolError::ToolFailed`] carrying its stderr,
/// death by a signal a [`ToolError::ToolCrashed`].
pub fn run(tool: &Path, args: &[&std::ffi::OsStr]) -> Result<(), ToolError> {
    let output = Command::new(tool)
        .args(args)
        .output()
        .map_err(|source| ToolError::Spawn {
            path: tool.to_path_buf(),
            source,
        })?;
    if output.status.success() {
        return Ok(());
    }
    #[cfg(unix)]
    if std::os::unix::process::ExitStatusExt::signal(&output.status).is_some() {
        return Err(ToolError::ToolCrashed {
            tool: tool.to_path_buf(),
            status: output.status.to_string(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        });
    }
    Err(ToolError::ToolFailed {
        tool: tool.to_path_buf(),
        status: output.status.to_string(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    })
}

/// A private temporary directory, removed on drop.
pub struct TempDir {
    /// The directory.
    pub path: PathBuf,
}

impl TempDir {
    /// A new empty directory under the system's temporary folder.
    pub fn new() -> Result<TempDir, ToolError> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let path = env::temp_dir().join(format!(
            "cuda-oxide-ptx-{}-{nanos}-{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        fs::create_dir_all(&path).map_err(|source| ToolError::Io {
            context: format!("creating {}", path.display()),
            source,
        })?;
        Ok(TempDir { path })
    }

    /// Writes `text` into the file `name` of the directory and returns its path.
    pub fn file(&self, name: &str, text: &str) -> Result<PathBuf, ToolError> {
        let path = self.path.join(name);
        fs::write(&path, text).map_err(|source| ToolError::Io {
            context: format!("writing {}", path.display()),
            source,
        })?;
        Ok(path)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.path);
    }
}

/// `name` with the platform's executable suffix.
pub(crate) fn exe(name: &str) -> String {
    format!("{name}{}", env::consts::EXE_SUFFIX)
}
