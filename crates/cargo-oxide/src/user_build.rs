//! Building a user crate with the backend.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::backend;
use crate::cli::BuildTarget;
use crate::error::OxideError;
use crate::libdevice;
use crate::source_tree;
use crate::toolchain;

/// The rustc flags the device path needs, besides the backend itself.
///
/// - `-Zalways-encode-mir`: dependencies keep the MIR of every function, so kernels can call
///   into any crate of the tree, not only generic or `#[inline]` functions.
/// - `-Zmir-enable-passes=-JumpThreading`: that pass duplicates code across branches, which is
///   wrong for a block barrier (`syncthreads` must stay one call reached by all threads).
pub const DEVICE_RUSTFLAGS: &[&str] =
    &["-Zalways-encode-mir", "-Zmir-enable-passes=-JumpThreading"];

/// What a successful build produced.
#[derive(Debug)]
pub struct Built {
    /// The directory of the profile's artifacts (binaries, `.ptx`).
    pub artifact_dir: PathBuf,
    /// The `.ptx` of each crate with kernels, copied next to the binaries.
    pub ptx: Vec<PathBuf>,
    /// The package's manifest.
    pub manifest: PathBuf,
    /// The backend dylib the build used.
    pub backend: PathBuf,
    /// The target directory of the build.
    pub target_dir: PathBuf,
}

/// The manifest a build target names.
pub fn resolve_manifest(target: &BuildTarget) -> Result<PathBuf, OxideError> {
    match (&target.example, &target.manifest_path) {
        (Some(name), _) => {
            let examples = source_tree::repo_root()?.join("examples");
            let manifest = examples.join(name).join("Cargo.toml");
            if manifest.is_file() {
                Ok(manifest)
            } else {
                Err(OxideError::UnknownExample {
                    name: name.clone(),
                    manifest,
                    available: list_examples(&examples).join(", "),
                })
            }
        }
        (None, Some(path)) => {
            let path = if path.is_dir() {
                path.join("Cargo.toml")
            } else {
                path.clone()
            };
            if path.is_file() {
                Ok(path)
            } else {
                Err(OxideError::ManifestMissing(path))
            }
        }
        (None, None) => {
            let cwd = std::env::current_dir().map_err(|source| OxideError::Io {
                path: ".".into(),
                source,
            })?;
            cwd.ancestors()
                .map(|dir| dir.join("Cargo.toml"))
                .find(|manifest| manifest.is_file())
                .ok_or(OxideError::NoTarget(cwd))
        }
    }
}

fn list_examples(dir: &Path) -> Vec<String> {
    subdirs_holding(dir, "Cargo.toml")
}

/// The names of the folders of `dir` that hold the file `relative`, sorted.
pub fn subdirs_holding(dir: &Path, relative: &str) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.path().join(relative).is_file())
        .filter_map(|e| e.file_name().into_string().ok())
        .collect();
    names.sort();
    names
}

/// Builds the target crate with the backend. When the kernels need NVIDIA's libdevice and none
/// is installed, installs it (see [crate::libdevice]) and builds again.
pub fn build(target: &BuildTarget) -> Result<Built, OxideError> {
    let manifest = resolve_manifest(target)?;
    let backend = backend::backend_dylib(false)?;
    let target_dir = oxide_target_dir(&manifest)?;

    let missing_libdevice = target_dir.join("libdevice-missing");
    let mut built = cargo_build(target, &backend, &target_dir, &manifest, &missing_libdevice)?;
    if !built && let Ok(requirement) = std::fs::read_to_string(&missing_libdevice) {
        libdevice::install(requirement.trim())?;
        built = cargo_build(target, &backend, &target_dir, &manifest, &missing_libdevice)?;
    }
    if !built {
        return Err(OxideError::UserBuild(manifest));
    }
    let profile = if target.release { "release" } else { "debug" };
    let artifact_dir = target_dir.join(profile);
    let ptx = publish_ptx(&artifact_dir)?;
    Ok(Built {
        artifact_dir,
        ptx,
        manifest,
        backend,
        target_dir,
    })
}

/// The PTX of the crate that was built: the artifact folder holds the PTX of every crate built
/// into it (the examples share one), so only the package's own is named, or all of them when
/// its kernels live in other crates of the tree.
pub fn own_ptx(built: &Built) -> Vec<&Path> {
    let own = package_name(&built.manifest)
        .ok()
        .map(|name| format!("{}.ptx", name.replace('-', "_")));
    let mine: Vec<&Path> = built
        .ptx
        .iter()
        .map(PathBuf::as_path)
        .filter(|path| {
            own.as_deref()
                .is_some_and(|own| path.file_name().is_some_and(|f| f == own))
        })
        .collect();
    if mine.is_empty() {
        built.ptx.iter().map(PathBuf::as_path).collect()
    } else {
        mine
    }
}

/// One `cargo build` of `manifest` with the backend; whether it succeeded. The backend creates
/// `missing_libdevice` when the kernels need libdevice and none is found.
fn cargo_build(
    target: &BuildTarget,
    backend: &Path,
    target_dir: &Path,
    manifest: &Path,
    missing_libdevice: &Path,
) -> Result<bool, OxideError> {
    let _ = std::fs::remove_file(missing_libdevice);
    let mut cargo = cargo_with_backend(target, backend, target_dir);
    cargo
        .env("CUDA_OXIDE_REPORT_MISSING_LIBDEVICE", missing_libdevice)
        .arg("build")
        .arg("--manifest-path")
        .arg(manifest);
    if target.release {
        cargo.arg("--release");
    }
    if !target.features.is_empty() {
        cargo.arg("--features").arg(target.features.join(","));
    }
    let status = cargo.status().map_err(|source| OxideError::Spawn {
        command: "cargo build".into(),
        source,
    })?;
    Ok(status.success())
}

/// The `[package] name` of a manifest.
pub fn package_name(manifest: &Path) -> Result<String, OxideError> {
    let text = std::fs::read_to_string(manifest).map_err(|source| OxideError::Io {
        path: manifest.to_owned(),
        source,
    })?;
    let mut in_package = false;
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            in_package = line == "[package]";
        } else if in_package
            && let Some(value) = line.strip_prefix("name").map(str::trim)
            && let Some(value) = value.strip_prefix('=')
        {
            return Ok(value.trim().trim_matches('"').to_owned());
        }
    }
    Err(OxideError::NoPackage(manifest.to_owned()))
}

/// Removes the package's own build outputs from the oxide target directory, so that the next
/// build compiles it again (its dependencies stay built).
pub fn clean_package(target: &BuildTarget, manifest: &Path) -> Result<(), OxideError> {
    let name = package_name(manifest)?;
    let backend = backend::backend_dylib(false)?;
    let target_dir = oxide_target_dir(manifest)?;
    let mut cargo = cargo_with_backend(target, &backend, &target_dir);
    cargo
        .args(["clean", "--quiet", "--package", &name, "--manifest-path"])
        .arg(manifest);
    if target.release {
        cargo.arg("--release");
    }
    let status = cargo.status().map_err(|source| OxideError::Spawn {
        command: "cargo clean".into(),
        source,
    })?;
    if status.success() {
        Ok(())
    } else {
        Err(OxideError::UserBuild(manifest.to_owned()))
    }
}

/// A `cargo` command (without subcommand) that compiles with the backend: the pinned
/// toolchain, the backend's rustc flags, the oxide target directory, and the configuration
/// the target asks for.
pub fn cargo_with_backend(target: &BuildTarget, backend: &Path, target_dir: &Path) -> Command {
    let mut rustflags = vec![format!("-Zcodegen-backend={}", backend.display())];
    rustflags.extend(DEVICE_RUSTFLAGS.iter().map(|f| f.to_string()));
    // The standard library with MIR (`crate::sysroot`), which `backend_dylib` has built.
    if crate::sysroot::enabled()
        && let Ok(sysroot) = crate::sysroot::dir()
    {
        rustflags.push(format!("--sysroot={}", sysroot.display()));
    }
    if let Ok(user) = std::env::var("RUSTFLAGS") {
        rustflags.extend(user.split_whitespace().map(str::to_owned));
    }
    let mut cargo = Command::new("cargo");
    cargo
        .env("RUSTUP_TOOLCHAIN", toolchain::pinned_channel())
        .env("CARGO_TARGET_DIR", target_dir)
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env("RUSTFLAGS", rustflags.join(" "));
    if let Some(arch) = &target.arch {
        cargo.env("CUDA_OXIDE_TARGET", arch);
    }
    if target.default_arch {
        cargo.env("CUDA_OXIDE_DEFAULT_TARGETS", "1");
    }
    if target.verbose {
        cargo.env("CUDA_OXIDE_VERBOSE", "1");
    }
    if let Some(level) = target.device_debug {
        cargo.env("CUDA_OXIDE_DEVICE_DEBUG", level.env_value());
    }
    if target.fmad {
        cargo.env("CUDA_OXIDE_FMAD", "1");
    }
    if let Some(on) = target.panic_messages {
        cargo.env("CUDA_OXIDE_PANIC_MESSAGES", if on { "1" } else { "0" });
    }
    if target.race {
        cargo.env("CUDA_OXIDE_RACE", "1");
    }
    // The CPU device's runtime emulates a GPU: optimised even in a dev build, where its
    // per-access work under the race detector was mostly opt-level 0's overhead (hashing,
    // bounds and alignment checks not inlined). Command-line configuration overrides the
    // manifest's profile for these two packages only.
    for package in ["cuda-cpu", "miniz_oxide"] {
        cargo
            .arg("--config")
            .arg(format!("profile.dev.package.{package}.opt-level=2"));
    }
    cargo
}

/// Copies each crate's newest `.ptx` to `<artifact_dir>/<crate>.ptx`, beside the binaries.
///
/// The backend writes a crate's PTX where rustc puts the crate's other outputs,
/// `<artifact_dir>/deps/<crate>-<hash>.ptx`; cargo leaves several hashes of one crate there
/// after builds with different settings, and the newest is the one the build just used.
pub fn publish_ptx(artifact_dir: &Path) -> Result<Vec<PathBuf>, OxideError> {
    let deps = artifact_dir.join("deps");
    let Ok(entries) = std::fs::read_dir(&deps) else {
        return Ok(Vec::new());
    };
    let mut newest: std::collections::BTreeMap<String, (std::time::SystemTime, PathBuf)> =
        std::collections::BTreeMap::new();
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().is_none_or(|e| e != "ptx") {
            continue;
        }
        let Some(crate_name) = path
            .file_stem()
            .and_then(|stem| stem.to_str())
            .and_then(crate_of_output)
        else {
            continue;
        };
        let modified = entry
            .metadata()
            .and_then(|m| m.modified())
            .unwrap_or(std::time::SystemTime::UNIX_EPOCH);
        let slot = newest
            .entry(crate_name.to_owned())
            .or_insert((modified, path.clone()));
        if modified > slot.0 {
            *slot = (modified, path);
        }
    }
    let copy = |from: &Path, to: PathBuf| {
        std::fs::copy(from, &to)
            .map(|_| to.clone())
            .map_err(|source| OxideError::CopyPtx {
                from: from.to_owned(),
                to,
                source,
            })
    };
    newest
        .into_iter()
        .map(|(crate_name, (_, from))| {
            // A build for several architectures leaves the older ones' PTX beside the newest's
            // (`<crate>-<hash>.sm_80.ptx`): copied as `<crate>.sm_80.ptx`, after those of an
            // earlier build are removed.
            for (arch, _) in older_architectures(artifact_dir, &crate_name) {
                let _ = std::fs::remove_file(artifact_dir.join(format!("{crate_name}.{arch}.ptx")));
            }
            for (arch, older) in older_architectures(&deps, &file_stem(&from)) {
                copy(
                    &older,
                    artifact_dir.join(format!("{crate_name}.{arch}.ptx")),
                )?;
            }
            copy(&from, artifact_dir.join(format!("{crate_name}.ptx")))
        })
        .collect()
}

/// The PTX files `<stem>.sm_XX.ptx` in `dir`, with their architectures.
pub fn older_architectures(dir: &Path, stem: &str) -> Vec<(String, PathBuf)> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut found: Vec<(String, PathBuf)> = entries
        .flatten()
        .filter_map(|entry| {
            let name = entry.file_name().into_string().ok()?;
            let arch = name
                .strip_prefix(stem)?
                .strip_prefix('.')?
                .strip_suffix(".ptx")?;
            arch.starts_with("sm_")
                .then(|| (arch.to_owned(), entry.path()))
        })
        .collect();
    found.sort();
    found
}

fn file_stem(path: &Path) -> String {
    path.file_stem()
        .and_then(|stem| stem.to_str())
        .unwrap_or_default()
        .to_owned()
}

/// `app` from `app-0123456789abcdef`, cargo's name for a crate's outputs in `deps/`.
fn crate_of_output(stem: &str) -> Option<&str> {
    let (name, hash) = stem.rsplit_once('-')?;
    let is_hash = hash.len() == 16 && hash.bytes().all(|b| b.is_ascii_hexdigit());
    (is_hash && !name.is_empty()).then_some(name)
}

/// Builds with the backend go to `<the workspace's target dir>/oxide`: the backend's rustc flags
/// differ from a plain build's, and sharing one directory would make each rebuild the other.
fn oxide_target_dir(manifest: &Path) -> Result<PathBuf, OxideError> {
    if let Some(dir) = std::env::var_os("CUDA_OXIDE_TARGET_DIR") {
        return Ok(PathBuf::from(dir));
    }
    let output = Command::new("cargo")
        .env("RUSTUP_TOOLCHAIN", toolchain::pinned_channel())
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--manifest-path",
        ])
        .arg(manifest)
        .output()
        .map_err(|source| OxideError::Spawn {
            command: "cargo metadata".into(),
            source,
        })?;
    if !output.status.success() {
        eprint!("{}", String::from_utf8_lossy(&output.stderr));
        return Err(OxideError::Metadata(manifest.to_owned()));
    }
    let json = String::from_utf8_lossy(&output.stdout);
    let dir = json_string_field(&json, "target_directory")
        .ok_or_else(|| OxideError::Metadata(manifest.to_owned()))?;
    Ok(PathBuf::from(dir).join("oxide"))
}

/// The value of the first `"key":"value"` in `json` (enough for cargo metadata's flat fields;
/// handles the escapes cargo emits in paths).
fn json_string_field(json: &str, key: &str) -> Option<String> {
    let start = json.find(&format!("\"{key}\":\""))? + key.len() + 4;
    let mut value = String::new();
    let mut chars = json[start..].chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => return Some(value),
            '\\' => match chars.next()? {
                'n' => value.push('\n'),
                't' => value.push('\t'),
                other => value.push(other),
            },
            c => value.push(c),
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_names_give_their_crate() {
        assert_eq!(crate_of_output("vecadd-0123456789abcdef"), Some("vecadd"));
        assert_eq!(crate_of_output("my_app-fedcba9876543210"), Some("my_app"));
        assert_eq!(crate_of_output("vecadd"), None);
        assert_eq!(crate_of_output("vecadd-123"), None);
        assert_eq!(crate_of_output("-0123456789abcdef"), None);
    }

    #[test]
    fn the_build_names_its_own_ptx_among_the_shared_folders() {
        let dir = std::env::temp_dir().join(format!("cargo-oxide-own-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let manifest = dir.join("Cargo.toml");
        std::fs::write(
            &manifest,
            "[package]\nname = \"my-app\"\nversion = \"0.1.0\"\n",
        )
        .unwrap();
        let built = |ptx: &[&str]| Built {
            artifact_dir: dir.clone(),
            ptx: ptx.iter().map(|p| dir.join(p)).collect(),
            manifest: manifest.clone(),
            backend: dir.join("backend.so"),
            target_dir: dir.clone(),
        };
        let shared = built(&["atomics.ptx", "my_app.ptx", "vecadd.ptx"]);
        assert_eq!(own_ptx(&shared), vec![dir.join("my_app.ptx").as_path()]);
        // Kernels only in a dependency: every PTX is named.
        let elsewhere = built(&["kernels_lib.ptx"]);
        assert_eq!(
            own_ptx(&elsewhere),
            vec![dir.join("kernels_lib.ptx").as_path()]
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn newest_ptx_of_each_crate_is_copied_beside_the_binaries() {
        let dir = std::env::temp_dir().join(format!("cargo-oxide-ptx-{}", std::process::id()));
        let deps = dir.join("deps");
        std::fs::create_dir_all(&deps).unwrap();
        let old = deps.join("app-0000000000000001.ptx");
        std::fs::write(&old, "old").unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(deps.join("app-0000000000000002.ptx"), "new").unwrap();
        std::fs::write(deps.join("dep_lib-00000000000000aa.ptx"), "dep").unwrap();
        std::fs::write(deps.join("app-0000000000000003.d"), "not ptx").unwrap();
        // The older architectures of a build for several, and a stale one of an earlier build.
        std::fs::write(deps.join("app-0000000000000002.sm_80.ptx"), "eighty").unwrap();
        std::fs::write(deps.join("app-0000000000000001.sm_75.ptx"), "stale").unwrap();
        std::fs::write(dir.join("app.sm_75.ptx"), "stale").unwrap();

        let copied = publish_ptx(&dir).unwrap();
        assert_eq!(copied, vec![dir.join("app.ptx"), dir.join("dep_lib.ptx")]);
        assert_eq!(
            std::fs::read_to_string(dir.join("app.sm_80.ptx")).unwrap(),
            "eighty"
        );
        assert!(!dir.join("app.sm_75.ptx").exists());
        assert_eq!(std::fs::read_to_string(dir.join("app.ptx")).unwrap(), "new");
        assert_eq!(
            std::fs::read_to_string(dir.join("dep_lib.ptx")).unwrap(),
            "dep"
        );
        assert!(publish_ptx(&dir.join("missing")).unwrap().is_empty());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn reads_target_directory_from_metadata() {
        let json = r#"{"packages":[],"target_directory":"/w/a \"b\"/target","version":1}"#;
        assert_eq!(
            json_string_field(json, "target_directory").as_deref(),
            Some("/w/a \"b\"/target")
        );
        assert_eq!(json_string_field(json, "missing"), None);
    }
}
