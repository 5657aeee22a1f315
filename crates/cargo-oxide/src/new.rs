//! `cargo oxide new PATH`: a crate with a kernel, a host `main` that checks its results, and a
//! short README, ready for `cargo oxide run`.
//!
//! The crate depends on `cuda-device` and `cuda-host` by path, in the sources this cargo-oxide
//! uses ([crate::source_tree::repo_root]). It has no `rust-toolchain.toml`: `cargo oxide` picks
//! the toolchain itself, so the user's default (stable, say) stays in charge of everything else.

use std::path::{Path, PathBuf};

use crate::cli::NewOptions;
use crate::error::OxideError;
use crate::source_tree;

const CARGO_TOML: &str = include_str!("../templates/new/Cargo.toml.in");
const MAIN_RS: &str = include_str!("../templates/new/main.rs");
const README: &str = include_str!("../templates/new/README.md.in");
const GITIGNORE: &str = "/target\n";

/// Writes the crate; returns its directory.
pub fn new(options: &NewOptions) -> Result<PathBuf, OxideError> {
    let dir = &options.path;
    let name = match &options.name {
        Some(name) => name.clone(),
        None => dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
    };
    check_crate_name(&name)?;
    if dir.exists() && std::fs::read_dir(dir).map_or(true, |mut d| d.next().is_some()) {
        return Err(OxideError::NewTargetExists(dir.clone()));
    }
    let sources = source_tree::repo_root()?;
    let sources = sources
        .to_str()
        .ok_or_else(|| OxideError::NonUtf8Path(sources.clone()))?;
    let fill = |template: &str| {
        template
            .replace("{name}", &name)
            .replace("{sources}", sources)
    };
    let mut manifest = fill(CARGO_TOML);
    if let Some(outer) = enclosing_workspace(dir) {
        manifest.push_str(&format!(
            "\n# A workspace of its own: it sits inside `{}`, whose workspace would otherwise \
             claim it.\n[workspace]\n",
            outer.display()
        ));
    }
    write(&dir.join("Cargo.toml"), &manifest)?;
    write(&dir.join("src/main.rs"), MAIN_RS)?;
    write(&dir.join("README.md"), &fill(README))?;
    write(&dir.join(".gitignore"), GITIGNORE)?;
    Ok(dir.clone())
}

/// The manifest of a workspace that a crate in `dir` would fall into (cargo looks for one in
/// every folder above a package).
fn enclosing_workspace(dir: &Path) -> Option<PathBuf> {
    let absolute = std::path::absolute(dir).ok()?;
    absolute
        .ancestors()
        .skip(1)
        .map(|ancestor| ancestor.join("Cargo.toml"))
        .find(|manifest| {
            std::fs::read_to_string(manifest)
                .is_ok_and(|text| text.lines().any(|line| line.trim() == "[workspace]"))
        })
}

fn write(path: &Path, text: &str) -> Result<(), OxideError> {
    let io = |source| OxideError::Io {
        path: path.to_owned(),
        source,
    };
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(io)?;
    }
    std::fs::write(path, text).map_err(io)
}

/// Cargo's rule for package names: ASCII letters, digits, `_` and `-`, not starting with a
/// digit; and not the name of a crate the new one depends on.
fn check_crate_name(name: &str) -> Result<(), OxideError> {
    let valid = name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        && name.chars().next().is_some_and(|c| !c.is_ascii_digit())
        && ![
            "cuda-device",
            "cuda-host",
            "cuda_device",
            "cuda_host",
            "test",
            "core",
            "std",
        ]
        .contains(&name);
    if valid {
        Ok(())
    } else {
        Err(OxideError::BadCrateName(name.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crate_names_follow_cargo() {
        for ok in ["saxpy", "my-app", "gpu_2", "A"] {
            assert!(check_crate_name(ok).is_ok(), "{ok}");
        }
        for bad in ["", "2fast", "my app", "café", "cuda-host", "std", "a/b"] {
            assert!(check_crate_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn templates_have_their_placeholders() {
        assert!(CARGO_TOML.contains("name = \"{name}\""));
        assert!(CARGO_TOML.contains("{sources}/crates/cuda-host"));
        assert!(CARGO_TOML.contains("{sources}/crates/cuda-device"));
        assert!(README.starts_with("# {name}\n"));
        assert!(MAIN_RS.contains("#[kernel]") && MAIN_RS.contains("#[cuda_module]"));
    }

    #[test]
    fn a_crate_inside_a_workspace_gets_its_own() {
        let root = std::env::temp_dir().join(format!("oxide-new-ws-{}", std::process::id()));
        std::fs::create_dir_all(&root).unwrap();
        std::fs::write(root.join("Cargo.toml"), "[workspace]\nmembers = []\n").unwrap();
        let options = NewOptions {
            path: root.join("tools/inner"),
            name: None,
        };
        new(&options).unwrap();
        let manifest = std::fs::read_to_string(root.join("tools/inner/Cargo.toml")).unwrap();
        assert!(manifest.trim_end().ends_with("[workspace]"), "{manifest}");
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn writes_a_crate_and_refuses_to_overwrite() {
        let dir = std::env::temp_dir().join(format!("oxide-new-{}/hello-gpu", std::process::id()));
        let options = NewOptions {
            path: dir.clone(),
            name: None,
        };
        assert_eq!(new(&options).unwrap(), dir);
        let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
        assert!(manifest.contains("name = \"hello-gpu\""), "{manifest}");
        assert!(!manifest.contains("[workspace]"), "{manifest}");
        let sources = source_tree::repo_root().unwrap();
        assert!(
            manifest.contains(&format!("{}/crates/cuda-host", sources.display())),
            "{manifest}"
        );
        assert!(
            !manifest.contains("{name}") && !manifest.contains("{sources}"),
            "{manifest}"
        );
        assert_eq!(
            std::fs::read_to_string(dir.join("src/main.rs")).unwrap(),
            MAIN_RS
        );
        assert!(!dir.join("rust-toolchain.toml").exists());
        assert!(matches!(new(&options), Err(OxideError::NewTargetExists(_))));
        std::fs::remove_dir_all(dir.parent().unwrap()).unwrap();
    }
}
