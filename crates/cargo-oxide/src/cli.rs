//! The command line.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// Build Rust crates whose `#[kernel]` functions run on NVIDIA GPUs.
#[derive(Debug, Parser)]
#[command(name = "cargo oxide", version, about)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Build a crate with the cuda-oxide backend: host code as usual, kernels to PTX.
    Build(BuildTarget),
    /// Build a crate, then run its binary (kernels compiled for the local GPU).
    Run(RunTarget),
    /// Show what each stage makes of a crate's kernels: dialect-mir before and after mem2reg,
    /// LLVM IR and PTX, written into a folder.
    Pipeline(PipelineOptions),
    /// Build every example and gather the binaries, their PTX and a runner script in one
    /// folder that can be carried to a machine with a GPU (the benchmark suite included).
    Bundle(BundleOptions),
    /// Build the benchmark suite (`examples/bench`, release) into the GPU bundle folder, with
    /// `bench.sh` to run it there; `--run` also runs it here.
    Bench(BenchOptions),
    /// Create a crate with a kernel and a host program that checks it, for `cargo oxide run`.
    New(NewOptions),
    /// Differential testing: generate random programs (a seed range), build them with the
    /// backend, classify each (ok, unsupported, internal error, llc or ptxas failure, or a
    /// defect of the generator), record their CPU outputs, and bundle them for the GPU, whose
    /// runner compares every kernel's outputs with the CPU's bit for bit (docs/fuzzing.md).
    Fuzz(FuzzCommand),
    /// Check what building and running kernels needs: the toolchain and its components, the
    /// LLVM tools, ptxas, libdevice, the NVIDIA driver and GPU; say what to do about each
    /// missing piece.
    Doctor(DoctorOptions),
}

/// `cargo oxide doctor`: every check, or where one tool is.
#[derive(Debug, Clone, Args)]
pub struct DoctorOptions {
    /// Print the path of this tool as the backend finds it, and nothing else; fail when it is
    /// missing (for scripts)
    #[arg(long, value_name = "TOOL", value_enum)]
    pub which: Option<Tool>,
}

/// A tool `cargo oxide doctor --which` finds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Tool {
    /// LLVM's `llc` with the NVPTX target.
    Llc,
    /// LLVM's `opt` beside it.
    Opt,
    /// LLVM's `llvm-link` beside it.
    LlvmLink,
    /// NVIDIA's PTX assembler.
    Ptxas,
    /// NVIDIA's `libdevice.10.bc`.
    Libdevice,
}

/// `cargo oxide run`: what to build, and the program's arguments.
#[derive(Debug, Clone, Args)]
pub struct RunTarget {
    #[command(flatten)]
    pub build: BuildTarget,

    /// Run the kernels on the CPU device, with the CUDA execution model (the same as
    /// `CUDA_OXIDE_DEVICE=cpu` in the program's environment; no GPU needed, see docs/cpu.md).
    /// `--race` implies it.
    #[arg(long)]
    pub cpu: bool,

    /// Arguments for the program.
    #[arg(last = true)]
    pub args: Vec<std::ffi::OsString>,
}

/// `cargo oxide pipeline`.
#[derive(Debug, Clone, Args)]
pub struct PipelineOptions {
    #[command(flatten)]
    pub build: BuildTarget,

    /// Where to write `<crate>.mir`, `<crate>.mem2reg.mir`, `<crate>.ll`, `<crate>.ptx` (and
    /// `<crate>.rustc.mir`, rustc's own MIR of every collected function).
    #[arg(long, value_name = "DIR", default_value = "target/oxide-pipeline")]
    pub out: PathBuf,
}

/// `cargo oxide bundle`.
#[derive(Debug, Clone, Args)]
pub struct BundleOptions {
    /// The folder to fill (emptied first).
    #[arg(long, value_name = "DIR", default_value = "target/gpu-bundle")]
    pub out: PathBuf,

    /// Build with the release profile.
    #[arg(long)]
    pub release: bool,

    /// The GPU architecture to compile kernels for, or several (`sm_80,sm_86,sm_90`: a cubin
    /// each, and the newest's PTX).
    #[arg(long, value_name = "sm_XX[,sm_YY...]", value_parser = parse_arch)]
    pub arch: Option<String>,

    /// Source information in the kernels' PTX (see `cargo oxide build --help`).
    #[arg(long, value_name = "LEVEL", value_enum)]
    pub device_debug: Option<DeviceDebug>,

    /// Device panics, failed bounds and overflow checks included, record their message,
    /// `file:line:column`, block and thread for the host's `Error::KernelPanic` (`on`, the
    /// default without `--release`), or all are bare traps (`off`); the same as
    /// `CUDA_OXIDE_PANIC_MESSAGES=1`/`0`. `--panic-messages` alone means `on`. Unset with
    /// `--release`: explicit panics (`panic!`, `assert!`, `unwrap`, `expect`) record theirs,
    /// failed checks are bare traps (no cost on the kernel's hot path).
    #[arg(long, value_name = "on|off", num_args = 0..=1, default_missing_value = "on",
          value_parser = clap::builder::BoolishValueParser::new())]
    pub panic_messages: Option<bool>,

    /// A bundle for the CPU device (docs/cpu.md): its `run.sh` runs every example there
    /// (`CUDA_OXIDE_DEVICE=cpu` unless the environment says otherwise), skipping those that
    /// say they cannot run there, and the benchmark suite (which compares with CUDA C++ on a
    /// GPU) is left out.
    #[arg(long)]
    pub cpu: bool,

    /// A bundle for the race detector: kernels built for it (`--race` of `cargo oxide
    /// build`), run on the CPU device; an example with a race report fails. Implies `--cpu`.
    #[arg(long)]
    pub race: bool,
}

/// `cargo oxide bench`.
#[derive(Debug, Clone, Args)]
pub struct BenchOptions {
    /// The bundle folder to put `bench` and `bench.sh` in (other files there are kept).
    #[arg(long, value_name = "DIR", default_value = "target/gpu-bundle")]
    pub out: PathBuf,

    /// Benchmarks to add to the default ones (cargo features of `examples/bench`, e.g.
    /// `reduce,scan`; `all` for every one).
    #[arg(long, value_name = "FEATURES", value_delimiter = ',')]
    pub features: Vec<String>,

    /// The GPU architecture to compile kernels for, or several (`sm_80,sm_86,sm_90`: a cubin
    /// each, and the newest's PTX).
    #[arg(long, value_name = "sm_XX[,sm_YY...]", value_parser = parse_arch)]
    pub arch: Option<String>,

    /// Then run the suite here with these arguments (see `bench --help`), e.g.
    /// `cargo oxide bench --run -- --list`.
    #[arg(long)]
    pub run: bool,

    /// Arguments for the benchmark binary (with `--run`).
    #[arg(last = true)]
    pub args: Vec<std::ffi::OsString>,
}

/// `cargo oxide fuzz`: a campaign, or one of the subcommands.
#[derive(Debug, Clone, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct FuzzCommand {
    #[command(subcommand)]
    pub action: Option<FuzzAction>,

    #[command(flatten)]
    pub campaign: FuzzOptions,
}

#[derive(Debug, Clone, Subcommand)]
pub enum FuzzAction {
    /// Shrink the program of a seed while its class (and, with --message, the text of its
    /// error) stays the same; prints the reduced program.
    Reduce(ReduceOptions),
    /// Print the program of a seed.
    Show {
        /// The seed.
        seed: u64,
    },
}

/// A fuzzing campaign.
#[derive(Debug, Clone, Args)]
pub struct FuzzOptions {
    /// The seeds, `A..B` (B excluded), or one seed (default: 0..100, none with --programs).
    #[arg(long, value_name = "A..B", value_parser = parse_seeds)]
    pub seeds: Option<std::ops::Range<u64>>,

    /// Also build the programs of this folder as one more batch (repeatable): each `<seed>.rs`
    /// a module with `pub fn run(x: u64) -> u64` (e.g. reduced reproducers), or a program as
    /// Rustlantis wrote it, which is adapted as `--rustlantis` adapts the generated ones.
    #[arg(long, value_name = "DIR")]
    pub programs: Vec<PathBuf>,

    /// How many programs share one crate (one build).
    #[arg(long, value_name = "N", default_value_t = 50)]
    pub batch: usize,

    /// Build with the release profile: no overflow checks, and rustc's MIR optimisations
    /// (inlining among them) before the device code is translated.
    #[arg(long)]
    pub release: bool,

    /// Batches built at once (each in its own target directory).
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub jobs: usize,

    /// Take the programs of the seeds from Rustlantis (the MIR fuzzer) instead of oxide-fuzz:
    /// the path of its `generate` binary (`scripts/rustlantis.sh` builds it and passes it).
    #[arg(long, value_name = "GENERATE")]
    pub rustlantis: Option<PathBuf>,

    /// Rustlantis's generation parameters (its `config.toml`) instead of the harness's own
    /// (`oxide_fuzz::rustlantis::CONFIG`, the values of Rustlantis's example), e.g. larger
    /// functions for measuring compile time.
    #[arg(long, value_name = "FILE", requires = "rustlantis")]
    pub rustlantis_config: Option<PathBuf>,

    /// Adapt the Rustlantis programs for locating a difference: thread i returns the hash
    /// after the program's i-th dump (`oxide_fuzz::rustlantis::adapt_traced`), so the first
    /// thread that differs names the first dump that differs.
    #[arg(long, requires = "rustlantis")]
    pub rustlantis_trace: bool,

    /// Record how long each batch's build took, stage by stage (the backend's
    /// `CUDA_OXIDE_VERBOSE` timings), and the size of its programs, in `timings.tsv` in the
    /// work folder.
    #[arg(long)]
    pub timings: bool,

    /// Also run every program's device code here on the CPU device (`CUDA_OXIDE_DEVICE=cpu`,
    /// docs/cpu.md) and compare its outputs with the CPU's bit for bit, as the GPU bundle does.
    #[arg(long)]
    pub cpu: bool,

    /// Put each batch's PTX into the bundle compressed (`xz`) and no cubin: `run.sh` unpacks
    /// the PTX and assembles the cubins with the GPU machine's ptxas. For campaigns of
    /// thousands of programs, whose PTX and cubins would not travel otherwise.
    #[arg(long)]
    pub compact: bool,

    /// How much of the Rust source the PTX carries; `full` also turns optimisation off (opt
    /// and llc at -O0), so the GPU executes every operation of the programs.
    #[arg(long, value_name = "LEVEL", value_enum)]
    pub device_debug: Option<DeviceDebug>,

    /// The folder to fill for the GPU (emptied first): the runner, each batch's PTX and CPU
    /// outputs, `run.sh`. Relative to the repository root.
    #[arg(long, value_name = "DIR", default_value = "target/gpu-bundle/fuzz")]
    pub bundle: PathBuf,

    /// Where the batch crates, their target directories, the build log and `report.tsv` go.
    /// Relative to the repository root.
    #[arg(long, value_name = "DIR", default_value = "target/fuzz")]
    pub work: PathBuf,
}

/// `cargo oxide fuzz reduce`.
#[derive(Debug, Clone, Args)]
pub struct ReduceOptions {
    /// The seed of the program to reduce.
    pub seed: u64,

    /// The class to keep (default: the program's own): unsupported, internal-error,
    /// llc-failure, ptxas-failure, rustc-rejected, cpu-panic.
    #[arg(long)]
    pub class: Option<String>,

    /// Build with the release profile.
    #[arg(long)]
    pub release: bool,

    /// Keep only candidates whose error message contains this text.
    #[arg(long)]
    pub message: Option<String>,

    /// Work folder (relative to the repository root).
    #[arg(long, value_name = "DIR", default_value = "target/fuzz")]
    pub work: PathBuf,
}

/// `cargo oxide new`.
#[derive(Debug, Clone, Args)]
pub struct NewOptions {
    /// The directory to create (it must not exist, or be empty).
    pub path: PathBuf,

    /// The package name (default: the directory's name).
    #[arg(long)]
    pub name: Option<String>,
}

/// Which crate to build, and how.
#[derive(Debug, Clone, Args)]
pub struct BuildTarget {
    /// An example of this repository (`examples/<NAME>`).
    #[arg(conflicts_with = "manifest_path")]
    pub example: Option<String>,

    /// The `Cargo.toml` of the crate to build (default: the crate of the current directory).
    #[arg(long, value_name = "PATH")]
    pub manifest_path: Option<PathBuf>,

    /// Build with the release profile.
    #[arg(long)]
    pub release: bool,

    /// The GPU architecture to compile kernels for (overrides `CUDA_OXIDE_TARGET`), or
    /// several (`sm_80,sm_86,sm_90`: a cubin each, and the newest's PTX).
    #[arg(long, value_name = "sm_XX[,sm_YY...]", value_parser = parse_arch)]
    pub arch: Option<String>,

    /// `arch` is [RELEASE_ARCHITECTURES], chosen by `cargo oxide build --release` rather than
    /// the user: architectures the kernels need more than are left out, not refused.
    #[arg(skip)]
    pub default_arch: bool,

    /// Cargo features of the crate to enable (comma-separated or repeated).
    #[arg(long, value_name = "FEATURES", value_delimiter = ',')]
    pub features: Vec<String>,

    /// Print what the backend collects and how long each stage takes
    /// (the same as `CUDA_OXIDE_VERBOSE=1`).
    #[arg(long, short)]
    pub verbose: bool,

    /// Contract float `a * b + c` into fused multiply-adds in all device code, like nvcc's
    /// default `--fmad=true` (the same as `CUDA_OXIDE_FMAD=1`). Without it, Rust's semantics:
    /// each operation rounds; `#[kernel(fmad)]` asks for it in one kernel.
    #[arg(long)]
    pub fmad: bool,
    /// Device panics, failed bounds and overflow checks included, record their message,
    /// `file:line:column`, block and thread for the host's `Error::KernelPanic` (`on`, the
    /// default for the dev profile), or all are bare traps (`off`); the same as
    /// `CUDA_OXIDE_PANIC_MESSAGES=1`/`0`. `--panic-messages` alone means `on`. Unset with
    /// `--release`: explicit panics (`panic!`, `assert!`, `unwrap`, `expect`) record theirs,
    /// failed checks are bare traps (no cost on the kernel's hot path).
    #[arg(long, value_name = "on|off", num_args = 0..=1, default_missing_value = "on",
          value_parser = clap::builder::BoolishValueParser::new())]
    pub panic_messages: Option<bool>,
    /// Source information in the kernels' PTX: `lines` (the default: Rust file:line for
    /// compute-sanitizer, cuda-gdb and Nsight Compute, like nvcc's -lineinfo), `full`
    /// (unoptimised, for stepping through a kernel, like nvcc's -G) or `none`
    /// (overrides `CUDA_OXIDE_DEVICE_DEBUG`).
    #[arg(long, value_name = "LEVEL", value_enum)]
    pub device_debug: Option<DeviceDebug>,
    /// Build the kernels' CPU flavour for the race detector (`CUDA_OXIDE_RACE=1`): on the CPU
    /// device every access of memory is checked, and data races, barriers some threads never
    /// reach, warp masks naming exited lanes and reads of unwritten shared memory are
    /// reported with their source lines (docs/cpu.md). `cargo oxide run --race` also runs
    /// the program on the CPU device.
    #[arg(long)]
    pub race: bool,
}

/// `--device-debug`: how much of the Rust source the PTX carries (see docs/debugging.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum DeviceDebug {
    /// No `.loc` lines.
    None,
    /// `.file`/`.loc` lines; optimisation unchanged.
    Lines,
    /// Full debug information, optimisation off.
    Full,
}

impl DeviceDebug {
    /// The value of `CUDA_OXIDE_DEVICE_DEBUG` that asks the backend for this level.
    pub fn env_value(self) -> &'static str {
        match self {
            DeviceDebug::None => "none",
            DeviceDebug::Lines => "lines",
            DeviceDebug::Full => "full",
        }
    }
}

/// What `cargo oxide build --release` builds for when neither `--arch` nor
/// `CUDA_OXIDE_TARGET` says: the A100 and the RTX 30 series (sm_80, sm_86), the L4 and the
/// RTX 40 series (sm_89), the H100 and H200 (sm_90); a cubin each, and sm_90's PTX for newer
/// GPUs. An architecture that lacks what the kernels use is left out with a warning.
pub const RELEASE_ARCHITECTURES: &str = "sm_80,sm_86,sm_89,sm_90";

/// Accepts `sm_XX` and `sm_XXa` (e.g. `sm_90`, `sm_90a`, `sm_100a`), or a comma-separated list
/// of them.
pub fn parse_arch(value: &str) -> Result<String, String> {
    for arch in value.split(',') {
        let digits = arch
            .strip_prefix("sm_")
            .map(|rest| rest.strip_suffix('a').unwrap_or(rest));
        match digits {
            Some(d) if (2..=3).contains(&d.len()) && d.bytes().all(|b| b.is_ascii_digit()) => {}
            _ => {
                return Err(format!(
                    "`{arch}` is not a GPU architecture; write it as `sm_` and the compute \
                     capability, e.g. `sm_90` for an H100, or a list: `sm_80,sm_86,sm_90`"
                ));
            }
        }
    }
    Ok(value.to_owned())
}

/// Parses `A..B` (B excluded) or a single seed.
pub fn parse_seeds(text: &str) -> Result<std::ops::Range<u64>, String> {
    let bad = || format!("`{text}` is not a seed range; write it as `A..B`, e.g. `0..2000`");
    match text.split_once("..") {
        Some((a, b)) => {
            let (a, b): (u64, u64) = (a.parse().map_err(|_| bad())?, b.parse().map_err(|_| bad())?);
            if a < b { Ok(a..b) } else { Err(bad()) }
        }
        None => {
            let a: u64 = text.parse().map_err(|_| bad())?;
            Ok(a..a + 1)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_ranges() {
        assert_eq!(parse_seeds("0..2000"), Ok(0..2000));
        assert_eq!(parse_seeds("7"), Ok(7..8));
        assert!(parse_seeds("5..5").is_err());
        assert!(parse_seeds("a..b").is_err());
    }

    #[test]
    fn arch_accepts_sm_names() {
        for ok in [
            "sm_70",
            "sm_90",
            "sm_90a",
            "sm_100a",
            "sm_120",
            "sm_80,sm_86,sm_90a",
        ] {
            assert_eq!(parse_arch(ok).as_deref(), Ok(ok));
        }
        for bad in [
            "90",
            "sm90",
            "sm_",
            "sm_9",
            "sm_9000",
            "compute_90",
            "sm_90b",
            "sm_80,",
            "sm_80,90",
        ] {
            assert!(parse_arch(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn device_debug_levels() {
        let level = |args: &[&str]| match Cli::try_parse_from(args).map(|cli| cli.command) {
            Ok(Command::Build(target)) => Ok(target.device_debug),
            Ok(Command::Run(run)) => Ok(run.build.device_debug),
            Ok(Command::Bundle(bundle)) => Ok(bundle.device_debug),
            Ok(other) => panic!("{other:?}"),
            Err(error) => Err(error.to_string()),
        };
        assert_eq!(level(&["cargo-oxide", "build", "vecadd"]), Ok(None));
        assert_eq!(
            level(&["cargo-oxide", "build", "--device-debug", "full"]),
            Ok(Some(DeviceDebug::Full))
        );
        assert_eq!(
            level(&["cargo-oxide", "run", "--device-debug=none", "vecadd"]),
            Ok(Some(DeviceDebug::None))
        );
        assert_eq!(
            level(&["cargo-oxide", "bundle", "--device-debug", "lines"]),
            Ok(Some(DeviceDebug::Lines))
        );
        assert_eq!(DeviceDebug::Full.env_value(), "full");
        let error = level(&["cargo-oxide", "build", "--device-debug", "debug"]).unwrap_err();
        assert!(error.contains("none") && error.contains("full"), "{error}");
    }

    #[test]
    fn example_and_manifest_path_conflict() {
        let parsed =
            Cli::try_parse_from(["cargo-oxide", "build", "vecadd", "--manifest-path", "x"]);
        assert!(parsed.is_err());
    }

    #[test]
    fn features_and_bench_arguments() {
        let parsed = Cli::try_parse_from([
            "cargo-oxide",
            "bench",
            "--features",
            "reduce,scan",
            "--features",
            "sgemm",
            "--run",
            "--",
            "--quick",
        ])
        .unwrap();
        let Command::Bench(options) = parsed.command else {
            panic!("not the bench command");
        };
        assert_eq!(options.features, ["reduce", "scan", "sgemm"]);
        assert!(options.run);
        assert_eq!(options.args, ["--quick"]);
        let parsed = Cli::try_parse_from(["cargo-oxide", "build", "bench", "--features", "all"]);
        let Command::Build(target) = parsed.unwrap().command else {
            panic!("not the build command");
        };
        assert_eq!(target.features, ["all"]);
        assert!(!target.fmad);
        let parsed = Cli::try_parse_from(["cargo-oxide", "build", "vecadd", "--fmad"]);
        let Command::Build(target) = parsed.unwrap().command else {
            panic!("not the build command");
        };
        assert!(target.fmad);
        assert_eq!(target.panic_messages, None);
        let cargo = crate::user_build::cargo_with_backend(
            &target,
            std::path::Path::new("/backend.so"),
            std::path::Path::new("/target"),
        );
        assert!(
            cargo
                .get_envs()
                .any(|(k, v)| k == "CUDA_OXIDE_FMAD" && v == Some("1".as_ref())),
            "--fmad reaches the backend as CUDA_OXIDE_FMAD=1"
        );
        assert!(
            !cargo
                .get_envs()
                .any(|(k, _)| k == "CUDA_OXIDE_PANIC_MESSAGES"),
            "without --panic-messages the profile decides"
        );
        for (args, value) in [
            (&["--panic-messages"][..], "1"),
            (&["--panic-messages=off"][..], "0"),
            (&["--panic-messages", "on"][..], "1"),
        ] {
            let parsed = Cli::try_parse_from(
                ["cargo-oxide", "build", "vecadd"]
                    .into_iter()
                    .chain(args.iter().copied()),
            );
            let Command::Build(target) = parsed.unwrap().command else {
                panic!("not the build command");
            };
            let cargo = crate::user_build::cargo_with_backend(
                &target,
                std::path::Path::new("/backend.so"),
                std::path::Path::new("/target"),
            );
            assert!(
                cargo
                    .get_envs()
                    .any(|(k, v)| k == "CUDA_OXIDE_PANIC_MESSAGES" && v == Some(value.as_ref())),
                "{args:?} reaches the backend as CUDA_OXIDE_PANIC_MESSAGES={value}"
            );
        }
    }

    #[test]
    fn fuzz_campaign_and_subcommands() {
        let parsed =
            Cli::try_parse_from(["cargo-oxide", "fuzz", "--seeds", "0..2000", "--jobs", "2"]);
        let Command::Fuzz(fuzz) = parsed.unwrap().command else {
            panic!("not the fuzz command");
        };
        assert!(fuzz.action.is_none());
        assert_eq!(fuzz.campaign.seeds, Some(0..2000));
        assert_eq!(fuzz.campaign.jobs, 2);
        let parsed = Cli::try_parse_from(["cargo-oxide", "fuzz", "reduce", "17"]);
        let Command::Fuzz(fuzz) = parsed.unwrap().command else {
            panic!("not the fuzz command");
        };
        assert!(matches!(
            fuzz.action,
            Some(FuzzAction::Reduce(ReduceOptions { seed: 17, .. }))
        ));
        assert!(Cli::try_parse_from(["cargo-oxide", "fuzz", "--seeds", "9..3"]).is_err());
    }

    #[test]
    fn cli_is_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
