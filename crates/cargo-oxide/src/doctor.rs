//! `cargo oxide doctor`: what building and running kernels needs, found or not, and what to do
//! about each missing piece.
//!
//! The tools are found by the backend's own finders (`gpu_toolchain::find_llvm_tools`,
//! `find_ptxas`, `find_libdevice`), which the scripts reach through `cargo oxide doctor
//! --which TOOL`; nothing is installed or built here.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

use crate::cache;
use crate::cli::Tool;
use crate::source_tree;
use crate::toolchain::{Missing, Toolchain};

/// The oldest CUDA version a driver must support for `cuda-host` (its `REQUIRED_DRIVER`; a
/// test compares the two).
pub const REQUIRED_CUDA: (u32, u32) = (12, 8);

/// How a finding bears on the user.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// Found and usable.
    Ok,
    /// Building kernels needs it and it is not there.
    Missing,
    /// Running kernels needs it (building does not).
    NoRun,
    /// Optional, or set up automatically on first use.
    Note,
}

/// One line of the report.
#[derive(Debug, Clone)]
pub struct Finding {
    pub what: &'static str,
    pub state: State,
    pub detail: String,
    /// What to do about it, when it is not `Ok`.
    pub todo: Option<String>,
}

impl Finding {
    fn ok(what: &'static str, detail: impl Into<String>) -> Self {
        Finding {
            what,
            state: State::Ok,
            detail: detail.into(),
            todo: None,
        }
    }

    fn not_ok(
        what: &'static str,
        state: State,
        detail: impl Into<String>,
        todo: impl Into<String>,
    ) -> Self {
        Finding {
            what,
            state,
            detail: detail.into(),
            todo: Some(todo.into()),
        }
    }
}

/// `cargo oxide doctor --which TOOL`: the path of `tool` as the backend finds it on stdout, or
/// why it is missing on stderr (and a failure).
pub fn which(tool: Tool) -> ExitCode {
    let sysroot = pinned_rustc(&Toolchain::pinned().channel).map(|rustc| rustc.sysroot);
    let llvm = |pick: fn(gpu_toolchain::LlvmTools) -> Option<PathBuf>| {
        gpu_toolchain::find_llvm_tools(sysroot.as_deref())
            .map_err(|e| e.to_string())
            .and_then(|tools| pick(tools).ok_or_else(|| "not found beside llc".to_owned()))
    };
    let found = match tool {
        Tool::Llc => llvm(|tools| Some(tools.llc)),
        Tool::Opt => llvm(|tools| tools.opt),
        Tool::LlvmLink => llvm(|tools| tools.llvm_link),
        Tool::Ptxas => gpu_toolchain::find_ptxas().ok_or_else(|| "not found".to_owned()),
        Tool::Libdevice => gpu_toolchain::find_libdevice().map_err(|e| e.to_string()),
    };
    match found {
        Ok(path) => {
            println!("{}", path.display());
            ExitCode::SUCCESS
        }
        Err(why) => {
            eprintln!("cargo oxide doctor: {tool:?}: {why}");
            ExitCode::FAILURE
        }
    }
}

/// Runs every check, prints the report and returns failure when something that building
/// needs is missing.
pub fn doctor() -> ExitCode {
    let findings = findings();
    for finding in &findings {
        let state = match finding.state {
            State::Ok => "ok",
            State::Missing => "MISSING",
            State::NoRun => "warning",
            State::Note => "note",
        };
        println!("{state:<8} {:<19} {}", finding.what, finding.detail);
        if let Some(todo) = &finding.todo {
            println!("{:<8} {:<19} -> {todo}", "", "");
        }
    }
    if findings.iter().any(|f| f.state == State::Missing) {
        println!("\nSomething that building kernels needs is missing (see MISSING above).");
        ExitCode::FAILURE
    } else if findings.iter().any(|f| f.state == State::NoRun) {
        println!("\nBuilding works here; running kernels needs an NVIDIA GPU and its driver.");
        ExitCode::SUCCESS
    } else {
        println!("\nEverything cuda-oxide needs is here.");
        ExitCode::SUCCESS
    }
}

/// Every check, in the order a build meets them.
pub fn findings() -> Vec<Finding> {
    let mut findings = Vec::new();
    let root = match source_tree::repo_root() {
        Ok(root) => {
            findings.push(Finding::ok(
                "cuda-oxide sources",
                root.display().to_string(),
            ));
            Some(root)
        }
        Err(error) => {
            findings.push(Finding::not_ok(
                "cuda-oxide sources",
                State::Missing,
                "not found",
                error.to_string(),
            ));
            None
        }
    };
    let (finding, rustc) = check_toolchain(Toolchain::pinned());
    findings.push(finding);
    findings.push(check_backend(root.as_deref()));
    findings.push(check_mir_sysroot());
    match &rustc {
        Some(rustc) => findings.extend(check_llvm_tools(&rustc.sysroot)),
        None => findings.push(Finding::not_ok(
            "llc, opt",
            State::Note,
            "not checked: they come with the toolchain's llvm-tools component",
            "install the toolchain first",
        )),
    }
    findings.push(check_ptxas());
    findings.push(check_libdevice());
    findings.extend(check_driver_and_gpus());
    findings
}

/// What `rustc -vV` of the pinned toolchain says.
struct Rustc {
    version: String,
    host: String,
    sysroot: PathBuf,
}

fn check_toolchain(toolchain: &Toolchain) -> (Finding, Option<Rustc>) {
    let what = "Rust toolchain";
    let missing = match toolchain.missing() {
        Ok(Missing::Toolchain) => {
            let finding = Finding::not_ok(
                what,
                State::Missing,
                format!("{} is not installed", toolchain.channel),
                format!(
                    "`cargo oxide build` installs it on first use (about 300 MB), or run `{}`",
                    toolchain.install_command()
                ),
            );
            return (finding, None);
        }
        Ok(missing) => missing,
        Err(error) => {
            let finding = Finding::not_ok(
                what,
                State::Missing,
                format!("{} could not be checked", toolchain.channel),
                error.to_string(),
            );
            return (finding, None);
        }
    };
    let rustc = pinned_rustc(&toolchain.channel);
    let finding = match (missing, &rustc) {
        (Missing::Components(components), _) => Finding::not_ok(
            what,
            State::Missing,
            format!(
                "{} lacks the component(s) {}",
                toolchain.channel,
                components.join(", ")
            ),
            format!(
                "`cargo oxide build` adds them, or run `rustup component add --toolchain {} {}`",
                toolchain.channel,
                components.join(" ")
            ),
        ),
        (_, Some(rustc)) => Finding::ok(
            what,
            format!(
                "{}: {} on {}, with {}",
                toolchain.channel,
                rustc.version,
                rustc.host,
                toolchain.components.join(", ")
            ),
        ),
        (_, None) => Finding::not_ok(
            what,
            State::Missing,
            format!("the rustc of {} does not run", toolchain.channel),
            format!(
                "reinstall it: `rustup toolchain uninstall {}`, then `cargo oxide build`",
                toolchain.channel
            ),
        ),
    };
    (finding, rustc)
}

fn pinned_rustc(channel: &str) -> Option<Rustc> {
    let run = |args: &[&str]| {
        let output = Command::new("rustc")
            .env("RUSTUP_TOOLCHAIN", channel)
            .args(args)
            .stdin(Stdio::null())
            .output()
            .ok()
            .filter(|o| o.status.success())?;
        Some(String::from_utf8_lossy(&output.stdout).into_owned())
    };
    let verbose = run(&["-vV"])?;
    let sysroot = run(&["--print", "sysroot"])?;
    Some(Rustc {
        version: verbose.lines().next().unwrap_or("").trim().to_owned(),
        host: verbose
            .lines()
            .find_map(|l| l.strip_prefix("host: "))
            .unwrap_or("")
            .trim()
            .to_owned(),
        sysroot: PathBuf::from(sysroot.trim()),
    })
}

fn check_backend(root: Option<&Path>) -> Finding {
    let what = "codegen backend";
    if let Some(path) = std::env::var_os("CUDA_OXIDE_BACKEND") {
        let path = PathBuf::from(path);
        return if path.is_file() {
            Finding::ok(what, format!("{} (CUDA_OXIDE_BACKEND)", path.display()))
        } else {
            Finding::not_ok(
                what,
                State::Missing,
                format!(
                    "CUDA_OXIDE_BACKEND names {}, which does not exist",
                    path.display()
                ),
                "unset it to let cargo oxide build the backend, or point it at a built one",
            )
        };
    }
    let Some(root) = root else {
        return Finding::not_ok(
            what,
            State::Missing,
            "cannot be built without the sources",
            "see cuda-oxide sources above",
        );
    };
    let dylib = cache::backend_target_dir(root).map(|dir| {
        dir.join("debug").join(format!(
            "{}rustc_codegen_cuda{}",
            std::env::consts::DLL_PREFIX,
            std::env::consts::DLL_SUFFIX
        ))
    });
    match dylib {
        Ok(dylib) if dylib.is_file() => Finding::ok(what, dylib.display().to_string()),
        Ok(dylib) => Finding::not_ok(
            what,
            State::Note,
            format!("not built yet (will be {})", dylib.display()),
            "the first `cargo oxide build` builds it (about a minute on 2 cores)",
        ),
        Err(error) => Finding::not_ok(
            what,
            State::Missing,
            "no place to build it",
            error.to_string(),
        ),
    }
}

/// The standard library with MIR that user builds compile against (`crate::sysroot`).
fn check_mir_sysroot() -> Finding {
    let what = "std with MIR";
    if !crate::sysroot::enabled() {
        return Finding::not_ok(
            what,
            State::Note,
            "off (CUDA_OXIDE_MIR_SYSROOT=0): builds use the toolchain's own",
            "device code cannot call `core`'s non-generic functions; unset it to build it",
        );
    }
    match crate::sysroot::dir() {
        Ok(dir) if dir.join("built-by").is_file() => Finding::ok(what, dir.display().to_string()),
        Ok(dir) => Finding::not_ok(
            what,
            State::Note,
            format!("not built yet (will be {})", dir.display()),
            "the first `cargo oxide build` builds it from the toolchain's rust-src (about a \
             minute on 2 cores)",
        ),
        Err(error) => Finding::not_ok(
            what,
            State::Missing,
            "no place to build it",
            error.to_string(),
        ),
    }
}

/// `llc`, `opt` and `llvm-link` as the backend finds them (`gpu_toolchain::find_llvm_tools`):
/// `CUDA_OXIDE_LLC`, the toolchain's `llvm-tools`, then `llc-22`, `llc-21`, `llc` on PATH, with
/// `opt` and `llvm-link` of the same LLVM beside it.
fn check_llvm_tools(sysroot: &Path) -> Vec<Finding> {
    match gpu_toolchain::find_llvm_tools(Some(sysroot)) {
        Ok(tools) => {
            let version = tools.version.to_string();
            let mut findings = vec![Finding::ok(
                "llc",
                format!("{} (LLVM {version}, with NVPTX)", tools.llc.display()),
            )];
            for (tool, path) in [("opt", tools.opt), ("llvm-link", tools.llvm_link)] {
                findings.push(match path {
                    Some(path) => Finding::ok(tool, path.display().to_string()),
                    None => Finding::not_ok(
                        tool,
                        State::Note,
                        format!("none of LLVM {version} beside {}", tools.llc.display()),
                        sibling_todo(tool),
                    ),
                });
            }
            findings
        }
        Err(error) => vec![Finding::not_ok(
            "llc",
            State::Missing,
            error.to_string(),
            "install the toolchain's llvm-tools component (`cargo oxide build` does), or set \
             CUDA_OXIDE_LLC to an llc of LLVM 21 or newer built with the NVPTX target",
        )],
    }
}

fn sibling_todo(tool: &str) -> &'static str {
    if tool == "opt" {
        "without opt beside llc the device code is not optimised before llc: install the \
         toolchain's llvm-tools component"
    } else {
        "kernels whose math needs libdevice cannot be linked without it: install the \
         toolchain's llvm-tools component"
    }
}

/// `ptxas` as the backend and the scripts find it (`gpu_toolchain::find_ptxas`): `PTXAS`, PATH,
/// `/usr/local/cuda/bin`, then PyPI's NVIDIA packages.
fn check_ptxas() -> Finding {
    let found = gpu_toolchain::find_ptxas();
    match found {
        Some(ptxas) => {
            let release = Command::new(&ptxas)
                .arg("--version")
                .output()
                .ok()
                .and_then(|o| {
                    let text = String::from_utf8_lossy(&o.stdout).into_owned();
                    text.lines()
                        .find_map(|l| l.split("release ").nth(1).map(str::to_owned))
                })
                .map(|r| format!(" (CUDA {})", r.split(',').next().unwrap_or(&r)))
                .unwrap_or_default();
            Finding::ok("ptxas", format!("{}{release}", ptxas.display()))
        }
        None => Finding::not_ok(
            "ptxas",
            State::Note,
            "not found (only the tests use it, to check the PTX)",
            "`bash scripts/test.sh` installs it (python3 -m pip install nvidia-cuda-nvcc)",
        ),
    }
}

/// libdevice as the backend finds it (`gpu_toolchain::find_libdevice`): `CUDA_OXIDE_LIBDEVICE`,
/// PyPI's NVIDIA packages, then `nvvm/libdevice` of `$CUDA_HOME`, `$CUDA_PATH` and
/// `/usr/local/cuda`.
fn check_libdevice() -> Finding {
    match gpu_toolchain::find_libdevice() {
        Ok(path) => Finding::ok("libdevice", path.display().to_string()),
        Err(gpu_toolchain::ToolError::LibdeviceMissing(file)) => Finding::not_ok(
            "libdevice",
            State::Missing,
            format!(
                "CUDA_OXIDE_LIBDEVICE names {}, which does not exist",
                file.display()
            ),
            "point it at libdevice.10.bc (or its folder), or unset it",
        ),
        Err(_) => Finding::not_ok(
            "libdevice",
            State::Note,
            "not found (only kernels calling transcendental math such as f32::sin need it)",
            "`cargo oxide build` installs it with pip (nvidia-cuda-nvcc) when a kernel needs it",
        ),
    }
}

/// The NVIDIA driver and GPUs, as `nvidia-smi` reports them.
fn check_driver_and_gpus() -> Vec<Finding> {
    let query = Command::new("nvidia-smi")
        .args([
            "--query-gpu=index,name,compute_cap,driver_version",
            "--format=csv,noheader",
        ])
        .stdin(Stdio::null())
        .output();
    let output = match query {
        Ok(output) if output.status.success() => {
            String::from_utf8_lossy(&output.stdout).into_owned()
        }
        Ok(output) => {
            let text = String::from_utf8_lossy(&output.stdout).into_owned()
                + &String::from_utf8_lossy(&output.stderr);
            return vec![Finding::not_ok(
                "NVIDIA driver",
                State::NoRun,
                format!("nvidia-smi failed: {}", text.trim()),
                "building works without it; to run kernels, fix the driver installation \
                 (nvidia-smi must list the GPU)",
            )];
        }
        Err(_) => {
            return vec![
                Finding::not_ok(
                    "NVIDIA driver",
                    State::NoRun,
                    "not found (no nvidia-smi on PATH)",
                    format!(
                        "building works without it; to run kernels, install the NVIDIA driver \
                         (one that supports CUDA {}.{} or newer)",
                        REQUIRED_CUDA.0, REQUIRED_CUDA.1
                    ),
                ),
                Finding::not_ok(
                    "GPU",
                    State::NoRun,
                    "none seen",
                    "programs built here run on a machine with an NVIDIA GPU (binaries embed their PTX)",
                ),
            ];
        }
    };
    let gpus: Vec<Vec<String>> = output
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.split(',').map(|f| f.trim().to_owned()).collect())
        .collect();
    let driver_version = gpus
        .first()
        .and_then(|g| g.get(3))
        .cloned()
        .unwrap_or_default();
    let cuda = driver_cuda_version();
    let mut findings = Vec::new();
    let cuda_text = cuda.map_or(String::new(), |(major, minor)| {
        format!(", CUDA {major}.{minor}")
    });
    if cuda.is_some_and(|v| v < REQUIRED_CUDA) {
        findings.push(Finding::not_ok(
            "NVIDIA driver",
            State::NoRun,
            format!("{driver_version}{cuda_text}"),
            format!(
                "cuda-host needs a driver that supports CUDA {}.{} or newer: update the driver",
                REQUIRED_CUDA.0, REQUIRED_CUDA.1
            ),
        ));
    } else {
        findings.push(Finding::ok(
            "NVIDIA driver",
            format!("{driver_version}{cuda_text}"),
        ));
    }
    if gpus.is_empty() {
        findings.push(Finding::not_ok(
            "GPU",
            State::NoRun,
            "the driver lists none",
            "check `nvidia-smi` and that CUDA_VISIBLE_DEVICES does not hide every GPU",
        ));
    }
    for gpu in gpus {
        let field = |i: usize| gpu.get(i).map_or("?", String::as_str);
        let arch = field(2).replace('.', "");
        findings.push(Finding::ok(
            "GPU",
            format!(
                "{}: {}, sm_{arch} (`cargo oxide run` compiles for it)",
                field(0),
                field(1)
            ),
        ));
    }
    findings
}

/// The CUDA version the driver supports, from `nvidia-smi`'s banner (`CUDA Version: 13.0`).
fn driver_cuda_version() -> Option<(u32, u32)> {
    let output = Command::new("nvidia-smi")
        .stdin(Stdio::null())
        .output()
        .ok()?;
    parse_cuda_version(&String::from_utf8_lossy(&output.stdout))
}

fn parse_cuda_version(banner: &str) -> Option<(u32, u32)> {
    let rest = banner.split("CUDA Version:").nth(1)?.trim_start();
    let number: String = rest
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    let (major, minor) = number.split_once('.')?;
    Some((major.parse().ok()?, minor.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_are_those_of_the_crates_that_impose_them() {
        let required = cuda_host::REQUIRED_DRIVER;
        assert_eq!(
            (required.0 / 1000, (required.0 % 1000) / 10),
            (
                i32::try_from(REQUIRED_CUDA.0).unwrap(),
                i32::try_from(REQUIRED_CUDA.1).unwrap()
            )
        );
    }

    #[test]
    fn cuda_version_from_the_nvidia_smi_banner() {
        let banner =
            "| NVIDIA-SMI 580.65.06   Driver Version: 580.65.06   CUDA Version: 13.0     |";
        assert_eq!(parse_cuda_version(banner), Some((13, 0)));
        assert_eq!(parse_cuda_version("CUDA Version: 12.8 |"), Some((12, 8)));
        assert_eq!(parse_cuda_version("no banner"), None);
    }
}
