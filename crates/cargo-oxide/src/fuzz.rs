//! `cargo oxide fuzz`: differential testing with random programs (see docs/fuzzing.md).
//!
//! Programs come from `oxide-fuzz`, many to a crate (a batch): each is a module `prog_<seed>`
//! with its kernel `k_<seed>`. A batch that fails to build is split until every program is
//! classified: those the messages name are taken out at once, the others by halving. The
//! programs that build go through `ptxas`, run on the CPU (their outputs are recorded), and
//! into the GPU bundle, whose runner launches every kernel and compares bit for bit.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use oxide_fuzz::Program;

/// A program to build: its seed and the text of its module (generated, reduced, or a
/// regression reproducer from a file).
#[derive(Debug, Clone)]
pub struct Unit {
    pub seed: u64,
    pub text: String,
}

impl Unit {
    fn of(program: &Program) -> Unit {
        Unit {
            seed: program.seed,
            text: program.render(),
        }
    }

    /// The programs of a folder: every `<seed>.rs`, in seed order (Rustlantis's output
    /// adapted).
    fn from_dir(dir: &Path) -> Result<Vec<Unit>, OxideError> {
        let entries = std::fs::read_dir(dir).map_err(|source| OxideError::Io {
            path: dir.to_owned(),
            source,
        })?;
        let mut units = Vec::new();
        for entry in entries.flatten() {
            let path = entry.path();
            let Some(seed) = path
                .file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| n.strip_suffix(".rs"))
                .and_then(|n| n.parse().ok())
            else {
                continue;
            };
            let mut text = std::fs::read_to_string(&path).map_err(|source| OxideError::Io {
                path: path.clone(),
                source,
            })?;
            if oxide_fuzz::rustlantis::is_generated(&text) {
                text = oxide_fuzz::rustlantis::adapt(seed, &text).map_err(|e| OxideError::Io {
                    path: path.clone(),
                    source: std::io::Error::other(e),
                })?;
            }
            units.push(Unit { seed, text });
        }
        units.sort_by_key(|u| u.seed);
        Ok(units)
    }
}

use crate::backend;
use crate::bundle_files;
use crate::cli::{BuildTarget, DeviceDebug, FuzzOptions, ReduceOptions};
use crate::error::OxideError;
use crate::source_tree;
use crate::user_build;

const RUNNER: &str = include_str!("../templates/fuzz/runner.rs");

/// What became of a program.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Class {
    /// Built, passed ptxas and ran on the CPU: goes to the GPU.
    Ok,
    /// A clear build error naming an unsupported construct.
    Unsupported,
    /// A crash or internal error of the compiler.
    Internal,
    /// `llc` (or `opt`) failed.
    Llc,
    /// `ptxas` refused the PTX.
    Ptxas,
    /// rustc's front end refused the program: a defect of the generator.
    Rejected,
    /// The program panicked on the CPU: a defect of the generator.
    CpuPanic,
    /// The generator (Rustlantis) failed or wrote something the harness cannot adapt.
    GeneratorFailed,
    /// `--cpu`: the kernel ran on the CPU device and its outputs differ from the CPU's.
    CpuDeviceMismatch,
    /// `--cpu`: the kernel did not load or stopped on the CPU device.
    CpuDeviceFault,
}

impl Class {
    pub const ALL: [Class; 10] = [
        Class::Ok,
        Class::Unsupported,
        Class::Internal,
        Class::Llc,
        Class::Ptxas,
        Class::Rejected,
        Class::CpuPanic,
        Class::GeneratorFailed,
        Class::CpuDeviceMismatch,
        Class::CpuDeviceFault,
    ];

    fn name(self) -> &'static str {
        match self {
            Class::Ok => "ok",
            Class::Unsupported => "unsupported",
            Class::Internal => "internal-error",
            Class::Llc => "llc-failure",
            Class::Ptxas => "ptxas-failure",
            Class::Rejected => "rustc-rejected",
            Class::CpuPanic => "cpu-panic",
            Class::CpuDeviceMismatch => "cpu-device-mismatch",
            Class::CpuDeviceFault => "cpu-device-fault",
            Class::GeneratorFailed => "generator-failed",
        }
    }

    fn parse(name: &str) -> Option<Class> {
        Class::ALL.into_iter().find(|c| c.name() == name)
    }
}

impl fmt::Display for Class {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Where the programs of the seeds come from.
enum Generator {
    OxideFuzz,
    Rustlantis(Rustlantis),
}

/// Rustlantis's `generate`, run in a folder holding the configuration it reads.
struct Rustlantis {
    generate: PathBuf,
    dir: PathBuf,
    /// Adapt for locating differences (`oxide_fuzz::rustlantis::adapt_traced`).
    traced: bool,
}

impl Rustlantis {
    fn new(
        generate: &Path,
        config: Option<&Path>,
        traced: bool,
        work: &Path,
    ) -> Result<Self, OxideError> {
        let dir = work.join("rustlantis");
        let config = match config {
            Some(path) => std::fs::read_to_string(path).map_err(|source| OxideError::Io {
                path: path.to_owned(),
                source,
            })?,
            None => oxide_fuzz::rustlantis::CONFIG.to_owned(),
        };
        write(&dir.join("config.toml"), &config)?;
        let generate = std::path::absolute(generate).map_err(|source| OxideError::Io {
            path: generate.to_owned(),
            source,
        })?;
        Ok(Rustlantis {
            generate,
            dir,
            traced,
        })
    }

    /// The adapted program of `seed`, or why there is none.
    fn unit(&self, seed: u64) -> Result<Unit, String> {
        let out = Command::new(&self.generate)
            .arg(seed.to_string())
            .current_dir(&self.dir)
            .output()
            .map_err(|e| format!("could not run {}: {e}", self.generate.display()))?;
        if !out.status.success() {
            return Err(format!(
                "{} {seed} failed ({}): {}",
                self.generate.display(),
                out.status,
                first_lines(&String::from_utf8_lossy(&out.stderr), 2)
            ));
        }
        let text = String::from_utf8_lossy(&out.stdout);
        let text = if self.traced {
            oxide_fuzz::rustlantis::adapt_traced(seed, &text)
        } else {
            oxide_fuzz::rustlantis::adapt(seed, &text)
        }
        .map_err(|e| e.to_string())?;
        Ok(Unit { seed, text })
    }
}

/// Where batches are built.
struct Workspace {
    /// Batch crates live here.
    dir: PathBuf,
    /// The cargo target directory the batches share (their dependencies build once).
    target_dir: PathBuf,
    backend: PathBuf,
    ptxas: Option<PathBuf>,
    /// Every build's outcome is appended here.
    log: PathBuf,
    /// Build with the release profile (no overflow checks, rustc's MIR optimisations).
    release: bool,
    /// `--device-debug`: `full` compiles the device code unoptimised.
    device_debug: Option<DeviceDebug>,
    /// `--timings`: where each build's stage times go.
    timings: Option<PathBuf>,
    /// `--cpu`: build the CPU flavour and run every kernel on the CPU device.
    cpu_device: bool,
}

/// A batch that built: its artifacts, and the programs in it.
struct Built {
    ptx: PathBuf,
    /// The cubin ptxas made of `ptx` (as the backend embeds one beside the PTX), when a ptxas
    /// was found.
    cubin: Option<PathBuf>,
    binary: PathBuf,
}

/// Why a build (or ptxas) failed.
struct Failure {
    class: Class,
    message: String,
    /// The seeds the messages name.
    named: Vec<u64>,
}

impl Workspace {
    fn new(
        dir: &Path,
        target_dir: PathBuf,
        release: bool,
        device_debug: Option<DeviceDebug>,
        timings: bool,
        cpu_device: bool,
    ) -> Result<Self, OxideError> {
        std::fs::create_dir_all(dir).map_err(|source| OxideError::Io {
            path: dir.to_owned(),
            source,
        })?;
        Ok(Workspace {
            dir: dir.to_owned(),
            target_dir,
            backend: backend::backend_dylib(false)?,
            ptxas: find_ptxas(),
            log: dir.join("builds.log"),
            release,
            device_debug,
            timings: timings.then(|| dir.join("timings.tsv")),
            cpu_device,
        })
    }

    /// Writes the crate `name` holding `programs`.
    fn write_crate(&self, name: &str, programs: &[Unit]) -> Result<PathBuf, OxideError> {
        let root = source_tree::repo_root()?;
        let dir = self.dir.join(name);
        let _ = std::fs::remove_dir_all(dir.join("src"));
        write(&dir.join("src/fz.rs"), oxide_fuzz::SUPPORT)?;
        write(&dir.join("src/runner.rs"), RUNNER)?;
        let path = |krate: &str| {
            format!(
                "{:?}",
                root.join("crates").join(krate).display().to_string()
            )
        };
        write(
            &dir.join("Cargo.toml"),
            &format!(
                "[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2024\"\npublish = false\n\n\
                 [dependencies]\ncuda-device = {{ path = {} }}\ncuda-host = {{ path = {} }}\noxide-fuzz = {{ path = {} }}\n\n\
                 [profile.dev]\ndebug = false\nincremental = false\nstrip = true\n\n\
                 [profile.release]\nincremental = false\nstrip = true\n\n[workspace]\n",
                path("cuda-device"),
                path("cuda-host"),
                path("oxide-fuzz"),
            ),
        )?;
        let lock = root.join("examples/Cargo.lock");
        if !dir.join("Cargo.lock").exists() && lock.is_file() {
            let _ = std::fs::copy(&lock, dir.join("Cargo.lock"));
        }
        // Rustlantis programs are custom MIR (`core::intrinsics::mir`): `mir!` expands itself
        // once per basic block, so the crate's recursion limit must exceed the largest count.
        let blocks = programs
            .iter()
            .map(|p| custom_mir_blocks(&p.text))
            .max()
            .unwrap_or(0);
        let recursion_limit = (2 * blocks).next_power_of_two().max(1024);
        let mut main = format!(
            "//! A batch of generated programs (`cargo oxide fuzz`).\n\
             #![allow(warnings)]\n#![feature(custom_mir, core_intrinsics)]\n\
             #![recursion_limit = \"{recursion_limit}\"]\n\nmod fz;\nmod runner;\n",
        );
        let mut kernels = String::new();
        let mut table = String::new();
        for p in programs {
            let module = format!("prog_{}", p.seed);
            write(&dir.join(format!("src/{module}.rs")), &p.text)?;
            main.push_str(&format!("mod {module};\n"));
            kernels.push_str(&format!(
                "    #[kernel]\n    pub fn {}(input: &[u64], mut out: DisjointSlice<u64>) {{\n        \
                 let i = thread::index_1d();\n        if let Some(o) = out.get_mut(i) {{\n            \
                 *o = crate::{module}::run(input[i.get()]);\n        }}\n    }}\n\n",
                format_args!("k_{}", p.seed)
            ));
            table.push_str(&format!("    ({}, {module}::run),\n", p.seed));
        }
        main.push_str(&format!(
            "\n#[cuda_host::cuda_module]\nmod kernels {{\n    use cuda_device::{{DisjointSlice, kernel, thread}};\n\n{kernels}}}\n\n\
             const PROGRAMS: &[runner::Program] = &[\n{table}];\n\n\
             fn main() -> std::process::ExitCode {{\n    runner::main(PROGRAMS, kernels::load_untyped)\n}}\n"
        ));
        write(&dir.join("src/main.rs"), &main)?;
        Ok(dir.join("Cargo.toml"))
    }

    /// Builds the crate `name` with `programs`, and checks its PTX with ptxas.
    fn build(&self, name: &str, programs: &[Unit]) -> Result<Result<Built, Failure>, OxideError> {
        let manifest = self.write_crate(name, programs)?;
        let target = BuildTarget {
            example: None,
            manifest_path: Some(manifest.clone()),
            release: self.release,
            arch: Some("sm_90".to_owned()),
            default_arch: false,
            features: Vec::new(),
            verbose: false,
            device_debug: self.device_debug,
            race: false,
            // Rust's float semantics: the CPU side rounds every operation.
            fmad: false,
            // The profile's default: messages with debug assertions.
            panic_messages: None,
        };
        let started = std::time::Instant::now();
        let mut cargo = user_build::cargo_with_backend(&target, &self.backend, &self.target_dir);
        if self.timings.is_some() {
            cargo.env("CUDA_OXIDE_VERBOSE", "1");
        }
        // The runner loads the bundle's images, not the one embedded in the binary, and the
        // harness assembles the cubin itself (below): the backend need not.
        cargo.env("CUDA_OXIDE_NO_CUBIN", "1");
        // The kernels' CPU flavour only when they are to run on the CPU device.
        cargo.env("CUDA_OXIDE_CPU", if self.cpu_device { "1" } else { "0" });
        cargo
            .env("CARGO_NET_OFFLINE", "true")
            .env("CARGO_INCREMENTAL", "0")
            .args(["build", "--color", "never", "--manifest-path"])
            .arg(&manifest);
        if self.release {
            cargo.arg("--release");
        }
        let output = cargo.output().map_err(|source| OxideError::Spawn {
            command: "cargo build".into(),
            source,
        })?;
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        self.note(&format!(
            "== build {name} ({} programs, {:.1} s): {}\n{}",
            programs.len(),
            started.elapsed().as_secs_f64(),
            if output.status.success() {
                "ok"
            } else {
                "failed"
            },
            if output.status.success() { "" } else { &stderr }
        ));
        if !output.status.success() {
            return Ok(Err(classify_build(&stderr, programs)));
        }
        if let Some(path) = &self.timings {
            record_timings(path, name, programs, started.elapsed(), &stderr)?;
        }
        let artifacts = self
            .target_dir
            .join(if self.release { "release" } else { "debug" });
        let ptx = user_build::publish_ptx(&artifacts)?
            .into_iter()
            .find(|p| p.file_stem().is_some_and(|s| s == name))
            .ok_or_else(|| OxideError::NoDeviceCode(manifest.clone()))?;
        let mut cubin = None;
        if let Some(ptxas) = &self.ptxas {
            let cubin_path = ptx.with_extension("cubin");
            // As the backend assembles the cubin it embeds: `-g` for PTX with full debug
            // information, and a crash (death by a signal) tried once more.
            let debug = std::fs::read_to_string(&ptx).is_ok_and(|text| {
                text.lines()
                    .find(|l| l.trim_start().starts_with(".target"))
                    .is_some_and(|l| l.split(',').skip(1).any(|p| p.trim() == "debug"))
            });
            let assemble = || {
                Command::new(ptxas)
                    .args(["-arch=sm_90", if debug { "-g" } else { "-O3" }, "-o"])
                    .arg(&cubin_path)
                    .arg(&ptx)
                    .output()
                    .map_err(|source| OxideError::Spawn {
                        command: ptxas.display().to_string(),
                        source,
                    })
            };
            let mut out = assemble()?;
            if crashed(&out.status) {
                self.note(&format!(
                    "== ptxas {name}: crashed ({}), retried",
                    out.status
                ));
                out = assemble()?;
            }
            if crashed(&out.status) {
                // A crash says nothing about the PTX (ptxas rejects invalid PTX with a
                // message): the batch goes on without this cubin, and the bundle's run.sh
                // assembles one with the GPU machine's ptxas (or the driver compiles the PTX).
                let text = format!(
                    "ptxas crashed twice ({}) on {}: no cubin from this machine",
                    out.status,
                    ptx.display()
                );
                eprintln!("cargo oxide fuzz: batch {name}: {text}");
                self.note(&format!("== ptxas {name}: {text}"));
                let _ = std::fs::remove_file(&cubin_path);
                return Ok(Ok(Built {
                    ptx,
                    cubin: None,
                    binary: artifacts.join(name),
                }));
            }
            if !out.status.success() {
                let text = String::from_utf8_lossy(&out.stderr).into_owned();
                self.note(&format!("== ptxas {name}: failed\n{text}"));
                return Ok(Err(Failure {
                    class: Class::Ptxas,
                    message: first_lines(&text, 3),
                    named: Vec::new(),
                }));
            }
            cubin = Some(cubin_path);
        }
        Ok(Ok(Built {
            ptx,
            cubin,
            binary: artifacts.join(name),
        }))
    }

    fn note(&self, text: &str) {
        use std::io::Write;
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log)
        {
            let _ = writeln!(f, "{text}");
        }
    }

    /// Classifies `programs` (built as the crate `name`): records each failing one in
    /// `results` and returns the artifacts of the build of all the others.
    fn settle(
        &self,
        name: &str,
        programs: Vec<Unit>,
        results: &mut BTreeMap<u64, (Class, String)>,
    ) -> Result<Option<(Built, Vec<Unit>)>, OxideError> {
        if programs.is_empty() {
            return Ok(None);
        }
        let failure = match self.build(name, &programs)? {
            Ok(built) => return Ok(Some((built, programs))),
            Err(failure) => failure,
        };
        let named: Vec<u64> = failure
            .named
            .iter()
            .copied()
            .filter(|s| programs.iter().any(|p| p.seed == *s))
            .collect();
        if !named.is_empty() {
            for &seed in &named {
                results.insert(seed, (failure.class, failure.message.clone()));
            }
            let rest = programs
                .into_iter()
                .filter(|p| !named.contains(&p.seed))
                .collect();
            return self.settle(name, rest, results);
        }
        if programs.len() == 1 {
            results.insert(programs[0].seed, (failure.class, failure.message));
            return Ok(None);
        }
        let mut left = programs;
        let right = left.split_off(left.len() / 2);
        let mut survivors = Vec::new();
        for half in [left, right] {
            if let Some((_, kept)) = self.settle(name, half, results)? {
                survivors.extend(kept);
            }
        }
        self.settle(name, survivors, results)
    }
}

/// Appends a line to the timings file `path`: the batch, its programs' seeds, MIR statements
/// (of Rustlantis programs, else 0) and those of its largest function, the build's wall time,
/// and the backend's stage times (milliseconds) from its verbose messages.
fn record_timings(
    path: &Path,
    name: &str,
    programs: &[Unit],
    wall: std::time::Duration,
    stderr: &str,
) -> Result<(), OxideError> {
    use std::io::Write;
    let mut stages: Vec<(String, f64)> = Vec::new();
    for line in stderr.lines() {
        let Some(rest) = line.trim().strip_prefix("cuda-oxide:   stage ") else {
            continue;
        };
        let mut words = rest.split_whitespace();
        let (Some(stage), Some(value), Some(unit)) = (words.next(), words.next(), words.next())
        else {
            continue;
        };
        let Ok(value) = value.parse::<f64>() else {
            continue;
        };
        let ms = match unit {
            "s" => value * 1000.0,
            "µs" | "us" => value / 1000.0,
            _ => value,
        };
        match stages.iter_mut().find(|(s, _)| s == stage) {
            Some((_, total)) => *total += ms,
            None => stages.push((stage.to_owned(), ms)),
        }
    }
    let sizes: Vec<(usize, usize)> = programs
        .iter()
        .map(|p| oxide_fuzz::rustlantis::statement_counts(&p.text))
        .collect();
    let seeds: Vec<String> = programs.iter().map(|p| p.seed.to_string()).collect();
    let new = !path.exists();
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|source| OxideError::Io {
            path: path.to_owned(),
            source,
        })?;
    let mut line = String::new();
    if new {
        line.push_str("batch\tseeds\tstatements\tlargest_fn\twall_s\tstages_ms\n");
    }
    let stages: Vec<String> = stages
        .iter()
        .map(|(stage, ms)| format!("{stage}={ms:.0}"))
        .collect();
    line.push_str(&format!(
        "{name}\t{}\t{}\t{}\t{:.1}\t{}\n",
        seeds.join(","),
        sizes.iter().map(|s| s.0).sum::<usize>(),
        sizes.iter().map(|s| s.1).max().unwrap_or(0),
        wall.as_secs_f64(),
        stages.join(" ")
    ));
    file.write_all(line.as_bytes())
        .map_err(|source| OxideError::Io {
            path: path.to_owned(),
            source,
        })
}

/// The class, message and named programs of a failed build's messages.
fn classify_build(stderr: &str, programs: &[Unit]) -> Failure {
    let errors: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("error") && !l.starts_with("error: could not compile"))
        .collect();
    let all = errors.join("\n");
    let class = if errors.iter().any(|l| l.starts_with("error[E")) {
        Class::Rejected
    } else if stderr.contains("internal error")
        || stderr.contains("panicked")
        || stderr.contains("does not verify")
        || stderr.contains("lowering the device code to LLVM failed")
        || stderr.contains("exporting the device code as LLVM IR failed")
        || stderr.contains("mem2reg failed")
        || errors.is_empty()
    {
        Class::Internal
    } else if stderr.contains("generating PTX failed") {
        Class::Llc
    } else {
        Class::Unsupported
    };
    let named = programs
        .iter()
        .map(|p| p.seed)
        .filter(|seed| {
            let module = format!("prog_{seed}");
            let kernel = format!("k_{seed}");
            oxide_fuzz_mentions(stderr, &module) || oxide_fuzz_mentions(stderr, &kernel)
        })
        .collect();
    let message = if all.is_empty() {
        first_lines(stderr, 3)
    } else {
        first_lines(&all, 2)
    };
    Failure {
        class,
        message,
        named,
    }
}

/// Whether a tool was killed by a signal.
fn crashed(status: &std::process::ExitStatus) -> bool {
    #[cfg(unix)]
    {
        std::os::unix::process::ExitStatusExt::signal(status).is_some()
    }
    #[cfg(not(unix))]
    {
        let _ = status;
        false
    }
}

fn oxide_fuzz_mentions(text: &str, name: &str) -> bool {
    oxide_fuzz::mentions(text, name)
}

/// The basic blocks of the `mir!` bodies in a custom-MIR program (`bbN = {` at a line's start).
fn custom_mir_blocks(text: &str) -> usize {
    text.lines()
        .filter(|line| {
            let line = line.trim_start();
            line.strip_prefix("bb").is_some_and(|rest| {
                let digits =
                    rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
                digits > 0 && rest[digits..].trim_start().starts_with("= {")
            })
        })
        .count()
}

fn first_lines(text: &str, n: usize) -> String {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .take(n)
        .collect::<Vec<_>>()
        .join(" | ")
}

fn write_bytes(path: &Path, bytes: &[u8]) -> Result<(), OxideError> {
    std::fs::write(path, bytes).map_err(|source| OxideError::Io {
        path: path.to_owned(),
        source,
    })
}

fn write(path: &Path, text: &str) -> Result<(), OxideError> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|source| OxideError::Io {
            path: parent.to_owned(),
            source,
        })?;
    }
    // Unchanged files keep their time stamps, so cargo does not rebuild for nothing.
    if std::fs::read_to_string(path).is_ok_and(|old| old == text) {
        return Ok(());
    }
    std::fs::write(path, text).map_err(|source| OxideError::Io {
        path: path.to_owned(),
        source,
    })
}

/// `ptxas`: `PTXAS`, PATH, `/usr/local/cuda/bin`, or Python's NVIDIA packages.
pub fn find_ptxas() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("PTXAS") {
        return Some(PathBuf::from(p));
    }
    let on_path = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join("ptxas"))
            .find(|p| p.is_file())
    });
    on_path
        .or_else(|| Some(PathBuf::from("/usr/local/cuda/bin/ptxas")).filter(|p| p.is_file()))
        .or_else(|| {
            let out = Command::new("python3")
                .args([
                    "-c",
                    "import glob,site;print(next(iter(sorted(glob.glob(site.getsitepackages()[0]+'/nvidia/*/bin/ptxas'))),''))",
                ])
                .output()
                .ok()?;
            let path = String::from_utf8_lossy(&out.stdout).trim().to_owned();
            (!path.is_empty()).then(|| PathBuf::from(path))
        })
}

/// The outcome of a campaign.
pub struct Campaign {
    pub results: BTreeMap<u64, (Class, String)>,
    pub bundle: PathBuf,
}

/// Runs a campaign: generates, builds, classifies, records the CPU outputs, fills the bundle.
pub fn fuzz(options: &FuzzOptions) -> Result<ExitCode, OxideError> {
    let campaign = campaign(options)?;
    let mut counts: BTreeMap<Class, usize> = BTreeMap::new();
    for (class, _) in campaign.results.values() {
        *counts.entry(*class).or_default() += 1;
    }
    let mut failing = false;
    println!("cargo oxide fuzz: {} programs", campaign.results.len());
    for class in Class::ALL {
        let n = counts.get(&class).copied().unwrap_or(0);
        println!("  {:<20} {n}", class.name());
        if class != Class::Ok && class != Class::Unsupported && n > 0 {
            failing = true;
        }
    }
    for (seed, (class, message)) in &campaign.results {
        if *class != Class::Ok {
            println!("  {class} {seed}: {message}");
        }
    }
    println!(
        "cargo oxide fuzz: GPU bundle in {}; run {}/run.sh on a machine with a GPU",
        campaign.bundle.display(),
        campaign.bundle.display()
    );
    Ok(if failing {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

fn campaign(options: &FuzzOptions) -> Result<Campaign, OxideError> {
    let work = source_tree::resolve_dir(&options.work)?;
    let bundle_dir = source_tree::resolve_dir(&options.bundle)?;
    let _ = std::fs::remove_dir_all(&bundle_dir);
    std::fs::create_dir_all(&bundle_dir).map_err(|source| OxideError::Io {
        path: bundle_dir.clone(),
        source,
    })?;
    let seeds: Vec<u64> = options
        .seeds
        .clone()
        .unwrap_or(if !options.programs.is_empty() {
            0..0
        } else {
            0..100
        })
        .collect();
    let mut batches: Vec<(String, Vec<u64>, Option<Vec<Unit>>)> = seeds
        .chunks(options.batch.max(1))
        .map(|chunk| (format!("b{}", chunk[0]), chunk.to_vec(), None))
        .collect();
    for dir in &options.programs {
        let dir = source_tree::resolve_dir(dir)?;
        let units = Unit::from_dir(&dir)?;
        if !units.is_empty() {
            let seeds = units.iter().map(|u| u.seed).collect();
            // `reg-<folder>`: batches of several folders can share a bundle.
            let folder: String = dir
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or("programs")
                .chars()
                .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
                .collect();
            batches.push((format!("reg_{folder}"), seeds, Some(units)));
        }
    }
    // Results, kernels and expect records go by seed: each must be one program's.
    let mut owner: BTreeMap<u64, &str> = BTreeMap::new();
    for (name, seeds, _) in &batches {
        for &seed in seeds {
            if let Some(first) = owner.insert(seed, name) {
                return Err(OxideError::FuzzSeedTwice {
                    seed,
                    first: first.to_owned(),
                    second: name.clone(),
                });
            }
        }
    }
    let jobs = options.jobs.clamp(1, batches.len().max(1));
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results = std::sync::Mutex::new(BTreeMap::new());
    let runner = std::sync::Mutex::new(None::<PathBuf>);
    let release = options.release;
    let generator = match &options.rustlantis {
        Some(generate) => Generator::Rustlantis(Rustlantis::new(
            generate,
            options.rustlantis_config.as_deref(),
            options.rustlantis_trace,
            &work,
        )?),
        None => Generator::OxideFuzz,
    };
    let first_error = std::sync::Mutex::new(None::<OxideError>);
    std::thread::scope(|scope| {
        for job in 0..jobs {
            let (next, results, runner, first_error) = (&next, &results, &runner, &first_error);
            let generator = &generator;
            let (work, bundle_dir, batches) = (&work, &bundle_dir, &batches);
            scope.spawn(move || {
                let run = || -> Result<(), OxideError> {
                    let ws = Workspace::new(
                        work,
                        work.join(format!("target-{job}")),
                        release,
                        options.device_debug,
                        options.timings,
                        options.cpu,
                    )?;
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                        let Some(batch) = batches.get(i) else {
                            return Ok(());
                        };
                        let mut local = BTreeMap::new();
                        let (name, seeds, units) = batch;
                        let units = match (units, &generator) {
                            (Some(units), _) => units.clone(),
                            (None, Generator::OxideFuzz) => seeds
                                .iter()
                                .map(|&s| Unit::of(&oxide_fuzz::generate(s)))
                                .collect(),
                            (None, Generator::Rustlantis(rustlantis)) => {
                                let mut units = Vec::new();
                                for &seed in seeds {
                                    match rustlantis.unit(seed) {
                                        Ok(unit) => units.push(unit),
                                        Err(message) => {
                                            local.insert(seed, (Class::GeneratorFailed, message));
                                        }
                                    }
                                }
                                units
                            }
                        };
                        if units.is_empty() {
                            results.lock().unwrap().extend(local);
                            continue;
                        }
                        let binary =
                            run_batch(&ws, name, units, bundle_dir, options.compact, &mut local)?;
                        results.lock().unwrap().extend(local);
                        let mut runner = runner.lock().unwrap();
                        if runner.is_none()
                            && let Some(binary) = binary
                        {
                            let to = bundle_dir.join("fuzz-runner");
                            std::fs::copy(&binary, &to).map_err(|source| OxideError::Io {
                                path: to.clone(),
                                source,
                            })?;
                            *runner = Some(to);
                        }
                    }
                };
                if let Err(e) = run() {
                    first_error.lock().unwrap().get_or_insert(e);
                }
            });
        }
    });
    if let Some(e) = first_error.into_inner().unwrap() {
        return Err(e);
    }
    let script = bundle_dir.join("run.sh");
    write(&script, RUN_SH)?;
    bundle_files::set_executable(&script).map_err(|source| OxideError::Io {
        path: script.clone(),
        source,
    })?;
    let results = results.into_inner().unwrap();
    let mut report = String::new();
    for (seed, (class, message)) in &results {
        report.push_str(&format!("{seed}\t{class}\t{message}\n"));
    }
    write(&work.join("report.tsv"), &report)?;
    Ok(Campaign {
        results,
        bundle: bundle_dir,
    })
}

const RUN_SH: &str = r#"#!/usr/bin/env bash
# Runs every generated program of this bundle on the local GPU and compares with the CPU's
# outputs (made by `cargo oxide fuzz`), one process per batch (a kernel fault spoils only its
# own batch's context), twice: from the cubin the build's ptxas made (what a program built by
# cargo oxide loads on a GPU of its architecture) and from the PTX (compiled by the driver's
# JIT, what an other architecture gets). When some differ, the failing batches run again from
# cubins that this machine's ptxas makes at -O0 and at -O3, to tell a ptxas miscompile from ours.
cd "$(dirname "${BASH_SOURCE[0]}")"
shopt -s nullglob
ptxas="${PTXAS:-ptxas}"
# A compact bundle (`--compact`) carries each batch's PTX compressed and no cubin: unpack the
# PTX, and assemble the cubins here, as the build would have (`-g` for PTX with full debug
# information, `-O3` otherwise). `ptxas -g` crashes now and then on large debug PTX (with
# address-space randomisation; the same input passes the next time): up to four tries.
for z in *.ptx.xz; do
    [ -e "${z%.xz}" ] || xz -dkc "$z" > "${z%.xz}" 2>/dev/null \
        || python3 -c 'import lzma,sys; sys.stdout.buffer.write(lzma.open(sys.argv[1]).read())' "$z" > "${z%.xz}"
done
if command -v "$ptxas" >/dev/null; then
    for p in *.ptx; do
        case "$p" in *.O0.ptx|*.O3.ptx) continue ;; esac
        [ -e "${p%.ptx}.cubin" ] || echo "$p"
    done | xargs -r -P "$(nproc)" -I{} sh -c '
        p={}; if grep -q "^\.target .*debug" "$p"; then o=-g; else o=-O3; fi
        for try in 1 2 3; do "$0" -arch=sm_90 $o "$p" -o "${p%.ptx}.cubin" 2>/dev/null && exit 0; done
        "$0" -arch=sm_90 $o "$p" -o "${p%.ptx}.cubin" || echo "PTXAS-FAILED $p"' "$ptxas"
fi
status=0
failing=()
run_image() {
    local suffix=$1 ok=0 mismatch=0 fault=0 seeds=() f out line o m x
    for f in b*.expect reg*.expect; do
        [ -e "${f%.expect}$suffix" ] || continue
        out=$(FUZZ_IMAGE_SUFFIX="$suffix" ./fuzz-runner gpu "$f" 2>&1)
        code=$?
        line=$(echo "$out" | grep -E '^[0-9]+ ok, [0-9]+ mismatch, [0-9]+ fault$' | tail -1)
        if [ -z "$line" ]; then
            # The runner died before its tally (the driver's JIT of large debug PTX has
            # crashed the process now and then: NVIDIA's compiler, not the program). Once more.
            echo "RUNNER-RETRIED $f ($suffix): exit status $code, $(echo "$out" | tail -c 300)"
            out=$(FUZZ_IMAGE_SUFFIX="$suffix" ./fuzz-runner gpu "$f" 2>&1)
            code=$?
            line=$(echo "$out" | grep -E '^[0-9]+ ok, [0-9]+ mismatch, [0-9]+ fault$' | tail -1)
        fi
        echo "$out" | grep -v -e '^failing seeds: ' -e ' ok, .* mismatch, .* fault$'
        if [ -z "$line" ]; then
            echo "RUNNER-ERROR $f ($suffix): exit status $code"
            failing+=("$f"); fault=$((fault + 1)); continue
        fi
        read -r o _ m _ x _ <<<"$line"
        ok=$((ok + o)); mismatch=$((mismatch + m)); fault=$((fault + x))
        seeds+=($(echo "$out" | sed -n 's/^failing seeds: \[\(.*\)\]$/\1/p' | tr -d ,))
        if [ $((m + x)) -gt 0 ]; then failing+=("$f"); fi
    done
    echo "from the $suffix images: $ok ok, $mismatch mismatch, $fault fault"
    echo "failing seeds ($suffix): [${seeds[*]}]"
    if [ $((mismatch + fault)) -gt 0 ]; then status=1; fi
}
# FUZZ_IMAGES=.cubin skips the driver's JIT (for campaigns of thousands of programs).
for suffix in ${FUZZ_IMAGES:-.cubin .ptx}; do
    run_image "$suffix"
done
if [ ${#failing[@]} -gt 0 ] && command -v "$ptxas" >/dev/null; then
    for f in $(printf '%s\n' "${failing[@]}" | sort -u); do
        stem="${f%.expect}"
        levels="O0 O3"
        # Debug PTX cannot be optimised ("Optimized debugging not supported").
        if grep -q '^\.target .*debug' "$stem.ptx"; then levels=O0; fi
        for level in $levels; do
            "$ptxas" -arch=sm_90 -$level "$stem.ptx" -o "$stem.$level.cubin"
        done
        for level in $levels; do
            echo "== $f from this machine's ptxas -$level"
            FUZZ_IMAGE_SUFFIX=".$level.cubin" ./fuzz-runner gpu "$f"
        done
    done
fi
exit $status
"#;

/// Builds and classifies one batch; puts its PTX (compressed and without a cubin when
/// `compact`) and CPU outputs into the bundle. Returns the batch's binary when it built.
fn run_batch(
    ws: &Workspace,
    name: &str,
    programs: Vec<Unit>,
    bundle_dir: &Path,
    compact: bool,
    results: &mut BTreeMap<u64, (Class, String)>,
) -> Result<Option<PathBuf>, OxideError> {
    eprintln!(
        "cargo oxide fuzz: batch {name}: {} programs, seeds {}..={}",
        programs.len(),
        programs[0].seed,
        programs[programs.len() - 1].seed
    );
    let Some((built, kept)) = ws.settle(name, programs, results)? else {
        return Ok(None);
    };
    let expect = bundle_dir.join(format!("{name}.expect"));
    let out = Command::new(&built.binary)
        .arg("cpu")
        .arg(&expect)
        .output()
        .map_err(|source| OxideError::Spawn {
            command: built.binary.display().to_string(),
            source,
        })?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    for p in &kept {
        let prefix = format!("cpu-panic {}: ", p.seed);
        match stdout.lines().find_map(|l| l.strip_prefix(&prefix)) {
            Some(message) => results.insert(p.seed, (Class::CpuPanic, message.to_owned())),
            None => results.insert(p.seed, (Class::Ok, String::new())),
        };
    }
    if !out.status.success() {
        return Err(OxideError::FuzzCpu {
            binary: built.binary,
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        });
    }
    if ws.cpu_device {
        run_on_cpu_device(&built.binary, &expect, &kept, results)?;
    }
    if compact {
        let xz_to = bundle_dir.join(format!("{name}.ptx.xz"));
        let out = Command::new("xz")
            .args(["-9", "-T1", "-c"])
            .arg(&built.ptx)
            .output()
            .map_err(|source| OxideError::Spawn {
                command: "xz".into(),
                source,
            })?;
        if !out.status.success() {
            return Err(OxideError::Spawn {
                command: format!("xz -9 {}", built.ptx.display()),
                source: std::io::Error::other(String::from_utf8_lossy(&out.stderr).into_owned()),
            });
        }
        write_bytes(&xz_to, &out.stdout)?;
        return Ok(Some(built.binary));
    }
    let ptx_to = bundle_dir.join(format!("{name}.ptx"));
    std::fs::copy(&built.ptx, &ptx_to).map_err(|source| OxideError::CopyPtx {
        from: built.ptx.clone(),
        to: ptx_to,
        source,
    })?;
    if let Some(cubin) = &built.cubin {
        let cubin_to = bundle_dir.join(format!("{name}.cubin"));
        std::fs::copy(cubin, &cubin_to).map_err(|source| OxideError::CopyPtx {
            from: cubin.clone(),
            to: cubin_to,
            source,
        })?;
    }
    Ok(Some(built.binary))
}

/// `--cpu`: runs the batch's kernels on the CPU device (the runner's `gpu` mode under
/// `CUDA_OXIDE_DEVICE=cpu`, which loads the binary's own CPU image) against `expect`, and
/// classifies the programs that differ or stop.
fn run_on_cpu_device(
    binary: &Path,
    expect: &Path,
    kept: &[Unit],
    results: &mut BTreeMap<u64, (Class, String)>,
) -> Result<(), OxideError> {
    let out = Command::new(binary)
        .env(kernel_abi::CPU_DEVICE_VARIABLE, "cpu")
        .arg("gpu")
        .arg(expect)
        .output()
        .map_err(|source| OxideError::Spawn {
            command: format!("CUDA_OXIDE_DEVICE=cpu {} gpu", binary.display()),
            source,
        })?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let tallied = stdout.lines().any(|l| l.ends_with(" fault"));
    for p in kept {
        if results
            .get(&p.seed)
            .is_some_and(|(class, _)| *class != Class::Ok)
        {
            continue;
        }
        let mismatch = format!("MISMATCH seed {}:", p.seed);
        let fault = format!("FAULT seed {}:", p.seed);
        let verdict = stdout.lines().find_map(|line| {
            if line.starts_with(&mismatch) {
                Some((Class::CpuDeviceMismatch, line.to_owned()))
            } else if line.starts_with(&fault) || line.starts_with("LOAD-ERROR") {
                Some((Class::CpuDeviceFault, line.to_owned()))
            } else {
                None
            }
        });
        match verdict {
            Some(verdict) => {
                results.insert(p.seed, verdict);
            }
            // The runner died before its tally: every program it may not have run stops.
            None if !tallied => {
                let stderr = String::from_utf8_lossy(&out.stderr);
                results.insert(
                    p.seed,
                    (
                        Class::CpuDeviceFault,
                        format!(
                            "the runner stopped ({}): {}",
                            out.status,
                            first_lines(&stderr, 3)
                        ),
                    ),
                );
            }
            None => {}
        }
    }
    Ok(())
}

/// `cargo oxide fuzz reduce`: shrinks the program of a seed while its class stays the same.
pub fn reduce(options: &ReduceOptions) -> Result<ExitCode, OxideError> {
    let work = source_tree::resolve_dir(&options.work)?;
    let ws = Workspace::new(
        &work,
        work.join("target-reduce"),
        options.release,
        None,
        false,
        false,
    )?;
    let name = "reduce";
    let program = oxide_fuzz::generate(options.seed);
    let class_of = |p: &Program| -> Result<(Class, String), OxideError> {
        let mut results = BTreeMap::new();
        let built = ws.settle(name, vec![Unit::of(p)], &mut results)?;
        if let Some((built, _)) = built {
            let file = ws.dir.join("reduce.expect");
            let out = Command::new(&built.binary)
                .arg("cpu")
                .arg(&file)
                .output()
                .map_err(|source| OxideError::Spawn {
                    command: built.binary.display().to_string(),
                    source,
                })?;
            let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
            if let Some(line) = stdout.lines().find(|l| l.starts_with("cpu-panic")) {
                return Ok((Class::CpuPanic, line.to_owned()));
            }
            return Ok((Class::Ok, String::new()));
        }
        Ok(results
            .remove(&p.seed)
            .unwrap_or((Class::Internal, String::new())))
    };
    let (class, message) = class_of(&program)?;
    let want = match &options.class {
        Some(name) => Class::parse(name).ok_or_else(|| OxideError::FuzzClass(name.clone()))?,
        None => class,
    };
    eprintln!(
        "cargo oxide fuzz reduce: seed {} is {class} ({} nodes): {message}",
        options.seed,
        program.size()
    );
    if class != want || want == Class::Ok {
        return Err(OxideError::FuzzNothingToReduce {
            seed: options.seed,
            class: class.to_string(),
        });
    }
    let needle = options.message.clone();
    let keeps = |c: Class, m: &str| c == want && needle.as_deref().is_none_or(|n| m.contains(n));
    let program = program.shrink(|candidate| {
        let (c, m) = class_of(candidate)?;
        let kept = keeps(c, &m);
        if kept {
            eprintln!("cargo oxide fuzz reduce: {} nodes", candidate.size());
        }
        Ok::<_, OxideError>(kept)
    })?;
    let text = program.render();
    let out = work.join(format!("reduced_{}.rs", options.seed));
    write(&out, &text)?;
    println!("{text}");
    eprintln!(
        "cargo oxide fuzz reduce: seed {} reduced to {} nodes ({want}); written to {}",
        options.seed,
        program.size(),
        out.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// `cargo oxide fuzz show`: prints the program of a seed.
pub fn show(seed: u64) -> ExitCode {
    print!("{}", oxide_fuzz::generate(seed).render());
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn custom_mir_blocks_are_counted() {
        let text = "mir! {\nlet _1: u8;\n{\nGoto(bb1)\n}\nbb1 = {\nGoto(bb12)\n}\n  bb12 = {\nReturn()\n}\n}\nlet bbx = {};";
        assert_eq!(custom_mir_blocks(text), 2);
    }

    #[test]
    fn build_messages_are_classified() {
        let programs = vec![
            Unit::of(&oxide_fuzz::generate(3)),
            Unit::of(&oxide_fuzz::generate(4)),
        ];
        let rustc =
            "error[E0308]: mismatched types\n --> src/prog_4.rs:9:5\nerror: could not compile `b3`";
        let f = classify_build(rustc, &programs);
        assert_eq!((f.class, f.named.clone()), (Class::Rejected, vec![4]));
        let unsupported = "error: device code of crate `b3`: cannot compile `b3::prog_3::run` for the GPU: a constant holding a pointer\n --> src/prog_3.rs:20:9";
        let f = classify_build(unsupported, &programs);
        assert_eq!((f.class, f.named.clone()), (Class::Unsupported, vec![3]));
        let internal =
            "error: internal error in cuda-oxide while compiling the device code of crate `b3`: x";
        let f = classify_build(internal, &programs);
        assert_eq!((f.class, f.named.clone()), (Class::Internal, vec![]));
        let llc = "error: device code of crate `b3`: generating PTX failed: llc failed";
        assert_eq!(classify_build(llc, &programs).class, Class::Llc);
        assert_eq!(classify_build("Killed", &programs).class, Class::Internal);
    }
}
