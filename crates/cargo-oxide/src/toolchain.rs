//! The pinned toolchain: which one it is, whether it is installed with its components, and
//! installing it with rustup when it is not.
//!
//! The backend links against one exact rustc, so the backend and every crate it compiles are
//! built by the toolchain that `crates/rustc-codegen-cuda/rust-toolchain.toml` names, whatever
//! the user's default toolchain is. That file is not at the repository root: rustup's proxies
//! would then refuse to start `cargo oxide` itself on a machine without that nightly (rustup
//! does not install toolchains on demand).

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use crate::error::OxideError;
use crate::source_tree;

/// The toolchain file, relative to the root of the cuda-oxide sources.
pub const TOOLCHAIN_FILE: &str = "crates/rustc-codegen-cuda/rust-toolchain.toml";

/// The toolchain file this cargo-oxide was built with: used only when the sources are not
/// around (a backend given by `CUDA_OXIDE_BACKEND`).
const BUILT_WITH: &str = include_str!("../../rustc-codegen-cuda/rust-toolchain.toml");

/// A `rust-toolchain.toml`'s `[toolchain]` table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Toolchain {
    /// `nightly-2026-05-20`.
    pub channel: String,
    /// `rustc-dev`, `llvm-tools`, ...
    pub components: Vec<String>,
    /// rustup's installation profile (`minimal`).
    pub profile: Option<String>,
}

/// What is missing of a toolchain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Missing {
    /// Nothing: the toolchain and all its components are installed.
    Nothing,
    /// The toolchain itself.
    Toolchain,
    /// These components of an installed toolchain.
    Components(Vec<String>),
}

/// The channel of the pinned toolchain (`nightly-YYYY-MM-DD`), as `RUSTUP_TOOLCHAIN` names it:
/// the backend links against one exact rustc, so user crates must be compiled by that same
/// rustc, whatever the user's default toolchain is.
pub fn pinned_channel() -> &'static str {
    &Toolchain::pinned().channel
}

impl Toolchain {
    /// The toolchain the cuda-oxide sources pin, read once. Without sources (a backend given
    /// by `CUDA_OXIDE_BACKEND`), or when their file does not parse, the one this cargo-oxide
    /// was built with.
    pub fn pinned() -> &'static Toolchain {
        static PINNED: OnceLock<Toolchain> = OnceLock::new();
        PINNED.get_or_init(|| {
            source_tree::repo_root()
                .ok()
                .and_then(|root| Self::read(&root.join(TOOLCHAIN_FILE)).ok())
                .or_else(|| Self::parse(BUILT_WITH))
                .expect("the toolchain file cargo-oxide was built with parses (a unit test checks)")
        })
    }

    /// Reads a `rust-toolchain.toml`.
    pub fn read(path: &Path) -> Result<Toolchain, OxideError> {
        let text = std::fs::read_to_string(path).map_err(|source| OxideError::Io {
            path: path.to_owned(),
            source,
        })?;
        Self::parse(&text).ok_or_else(|| OxideError::ToolchainFile {
            path: path.to_owned(),
        })
    }

    /// The `channel`, `components` and `profile` of the `[toolchain]` table (the subset of
    /// TOML these files use: one `key = value` per line, strings and arrays of strings).
    pub fn parse(text: &str) -> Option<Toolchain> {
        let mut channel = None;
        let mut components = Vec::new();
        let mut profile = None;
        let mut in_table = false;
        for line in text.lines() {
            let line = line.split('#').next().unwrap_or("").trim();
            if line.starts_with('[') {
                in_table = line == "[toolchain]";
                continue;
            }
            let Some((key, value)) = line.split_once('=') else {
                continue;
            };
            if !in_table {
                continue;
            }
            let value = value.trim();
            match key.trim() {
                "channel" => channel = Some(unquote(value)?),
                "profile" => profile = Some(unquote(value)?),
                "components" => {
                    let items = value.strip_prefix('[')?.strip_suffix(']')?;
                    components = items
                        .split(',')
                        .map(str::trim)
                        .filter(|item| !item.is_empty())
                        .map(unquote)
                        .collect::<Option<_>>()?;
                }
                _ => {}
            }
        }
        Some(Toolchain {
            channel: channel?,
            components,
            profile,
        })
    }

    /// What is missing, asked of rustup (`rustup component list --installed`).
    pub fn missing(&self) -> Result<Missing, OxideError> {
        let output = rustup()
            .args(["component", "list", "--installed", "--toolchain"])
            .arg(&self.channel)
            .stdin(Stdio::null())
            .output()
            .map_err(|source| rustup_spawn_error(source, self))?;
        if !output.status.success() {
            return Ok(Missing::Toolchain);
        }
        let installed = String::from_utf8_lossy(&output.stdout);
        let missing = missing_components(&self.components, &installed);
        Ok(if missing.is_empty() {
            Missing::Nothing
        } else {
            Missing::Components(missing)
        })
    }

    /// Installs the toolchain, or its missing components, with rustup (whose progress bars
    /// show); does nothing when everything is there.
    pub fn ensure_installed(&self) -> Result<(), OxideError> {
        let mut rustup = rustup();
        match self.missing()? {
            Missing::Nothing => return Ok(()),
            Missing::Toolchain => {
                eprintln!(
                    "cargo oxide: installing the Rust toolchain cuda-oxide builds with, {} \
                     (with {}); this happens once",
                    self.channel,
                    self.components.join(", ")
                );
                rustup
                    .args(["toolchain", "install", "--no-self-update"])
                    .arg(&self.channel);
                if let Some(profile) = &self.profile {
                    rustup.args(["--profile", profile]);
                }
                if !self.components.is_empty() {
                    rustup.arg("--component").arg(self.components.join(","));
                }
            }
            Missing::Components(components) => {
                eprintln!(
                    "cargo oxide: adding {} to the toolchain {}",
                    components.join(", "),
                    self.channel
                );
                rustup
                    .args(["component", "add", "--toolchain"])
                    .arg(&self.channel)
                    .args(&components);
            }
        }
        let status = rustup
            .status()
            .map_err(|source| rustup_spawn_error(source, self))?;
        match self.missing()? {
            Missing::Nothing if status.success() => Ok(()),
            _ => Err(OxideError::ToolchainInstall {
                toolchain: self.channel.clone(),
                command: self.install_command(),
            }),
        }
    }

    /// The command that installs this toolchain by hand.
    pub fn install_command(&self) -> String {
        let mut command = format!("rustup toolchain install {}", self.channel);
        if let Some(profile) = &self.profile {
            command.push_str(&format!(" --profile {profile}"));
        }
        if !self.components.is_empty() {
            command.push_str(&format!(" --component {}", self.components.join(",")));
        }
        command
    }
}

fn rustup() -> Command {
    Command::new("rustup")
}

fn rustup_spawn_error(source: std::io::Error, toolchain: &Toolchain) -> OxideError {
    if source.kind() == std::io::ErrorKind::NotFound {
        OxideError::NoRustup {
            toolchain: toolchain.channel.clone(),
        }
    } else {
        OxideError::Spawn {
            command: "rustup".into(),
            source,
        }
    }
}

/// Which of `wanted` are not in rustup's list of installed components. rustup names
/// target-specific components with the host triple appended (`rustc-dev-x86_64-unknown-linux-gnu`)
/// and the others plainly (`rust-src`); the triple is the one of `cargo-<triple>`, which every
/// profile installs.
fn missing_components(wanted: &[String], installed: &str) -> Vec<String> {
    let lines: Vec<&str> = installed.lines().map(str::trim).collect();
    let triple = lines.iter().find_map(|line| line.strip_prefix("cargo-"));
    wanted
        .iter()
        .filter(|component| {
            !lines.iter().any(|line| {
                *line == component.as_str()
                    || triple.is_some_and(|t| *line == format!("{component}-{t}"))
            })
        })
        .cloned()
        .collect()
}

fn unquote(value: &str) -> Option<String> {
    let value = value.trim();
    value
        .strip_prefix('"')
        .and_then(|v| v.strip_suffix('"'))
        .map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pinned_toolchain_is_a_dated_nightly_with_the_backend_components() {
        let pinned = Toolchain::parse(BUILT_WITH).expect("the toolchain file parses");
        assert!(pinned.channel.starts_with("nightly-20"), "{pinned:?}");
        for needed in ["rustc-dev", "llvm-tools", "rust-src"] {
            assert!(pinned.components.iter().any(|c| c == needed), "{pinned:?}");
        }
    }

    #[test]
    fn parses_the_toolchain_table_only() {
        let text = "# a comment\n[other]\nchannel = \"no\"\n\n[toolchain]\n\
                    channel = \"nightly-2026-05-20\" # pinned\n\
                    components = [ \"rustc-dev\", \"rust-src\" ]\nprofile = \"minimal\"\n";
        assert_eq!(
            Toolchain::parse(text),
            Some(Toolchain {
                channel: "nightly-2026-05-20".into(),
                components: vec!["rustc-dev".into(), "rust-src".into()],
                profile: Some("minimal".into()),
            })
        );
        assert_eq!(
            Toolchain::parse("[toolchain]\nprofile = \"minimal\"\n"),
            None
        );
        assert_eq!(
            Toolchain::parse("[toolchain]\ncomponents = \"x\"\nchannel = \"n\""),
            None
        );
    }

    #[test]
    fn components_are_matched_with_and_without_the_host_triple() {
        let installed = "cargo-x86_64-unknown-linux-gnu\nclippy-x86_64-unknown-linux-gnu\n\
                         rust-src\nrust-std-x86_64-unknown-linux-gnu\nrustc-x86_64-unknown-linux-gnu\n\
                         rustc-dev-x86_64-unknown-linux-gnu\n";
        let wanted: Vec<String> = ["rustc-dev", "llvm-tools", "rust-src", "clippy", "rustfmt"]
            .map(String::from)
            .into();
        assert_eq!(
            missing_components(&wanted, installed),
            vec!["llvm-tools".to_string(), "rustfmt".to_string()]
        );
    }

    #[test]
    fn the_manual_install_command_names_every_component() {
        let toolchain = Toolchain {
            channel: "nightly-2026-05-20".into(),
            components: vec!["rustc-dev".into(), "llvm-tools".into()],
            profile: Some("minimal".into()),
        };
        assert_eq!(
            toolchain.install_command(),
            "rustup toolchain install nightly-2026-05-20 --profile minimal --component \
             rustc-dev,llvm-tools"
        );
    }
}
