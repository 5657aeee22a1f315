//! The benchmark binary's `main`: the command line, the dry run (no GPU needed), and the run
//! on the GPU that fills the [`Report`].

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use cuda_host::timing::{EventTimer, median};
use cuda_host::{CudaContext, CudaStream};
use example_support::Rng;

use crate::compare::{Ctx, Failure, Options};
use crate::cuda::{Contender, CudaBuild, CudaCompiler, defines_kernel};
use crate::report::{Report, Row, Status};
use crate::{Bench, Outcome};

/// Where results go when `--out` is not given.
pub const OUT_ENV: &str = "CUDA_OXIDE_BENCH_OUT";

const USAGE: &str = "\
usage: bench [--list] [--out DIR] [--only NAME,...] [--rounds N] [--warmup N] [--quick]
             [--arch compute_XX]

Runs each benchmark's Rust kernel (compiled by cuda-oxide) and its CUDA C++ counterpart
(compiled here by NVRTC, with its default flags and with --fmad=false) on the same inputs,
cross-checks their results, times them with CUDA events (median of the rounds) and prints
one table.

  --list, --dry-run  list the benchmarks and compile the CUDA C++ sources with NVRTC if it
                     is installed; needs no GPU
  --out DIR          write bench.json, bench.csv and the CUDA C++ PTX into DIR
                     (default: $CUDA_OXIDE_BENCH_OUT, else nothing is written)
  --only A,B         run only these benchmarks
  --rounds N         timed rounds per contender (default 21)
  --warmup N         untimed launches per contender first (default 3)
  --quick            sizes divided by 16 and 5 rounds: a smoke run
  --arch compute_XX  what NVRTC compiles for (default: the GPU's compute capability)

Environment: CUDA_OXIDE_NVRTC names the NVRTC library; CUDA_CACHE_DISABLE=1 makes the module
load times full JIT compilations.
Exit status: 0 all checks passed, 1 a check or benchmark failed, 2 no GPU or bad usage.";

/// The parsed command line.
#[derive(Debug, Default)]
struct Cli {
    list: bool,
    out: Option<PathBuf>,
    only: Vec<String>,
    arch: Option<String>,
    options: Options,
}

fn parse(args: &[String]) -> Result<Option<Cli>, String> {
    let mut cli = Cli::default();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let mut value = |name: &str| {
            args.next()
                .cloned()
                .ok_or_else(|| format!("{name} needs a value"))
        };
        let number = |name: &str, text: String| {
            text.parse::<u32>()
                .map_err(|_| format!("{name} takes a number, not `{text}`"))
        };
        match arg.as_str() {
            "-h" | "--help" => return Ok(None),
            "--list" | "--dry-run" => cli.list = true,
            "--quick" => {
                cli.options.quick = true;
                cli.options.rounds = 5;
            }
            "--out" => cli.out = Some(PathBuf::from(value("--out")?)),
            "--only" => {
                cli.only = value("--only")?
                    .split(',')
                    .filter(|s| !s.is_empty())
                    .map(str::to_owned)
                    .collect();
            }
            "--rounds" => cli.options.rounds = number("--rounds", value("--rounds")?)?.max(1),
            "--warmup" => cli.options.warmup = number("--warmup", value("--warmup")?)?,
            "--arch" => {
                let arch = value("--arch")?;
                if !arch.starts_with("compute_") {
                    return Err(format!(
                        "--arch takes `compute_XX` (e.g. compute_90), not `{arch}`"
                    ));
                }
                cli.arch = Some(arch);
            }
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    if cli.out.is_none() {
        cli.out = std::env::var_os(OUT_ENV).map(PathBuf::from);
    }
    Ok(Some(cli))
}

/// How the suite loads the module of Rust kernels.
pub struct Loaders<L, J> {
    /// Loads the module the benchmarks use, and says what it was loaded from (`cubin`,
    /// `PTX`).
    pub load: L,
    /// Loads (and unloads) the same kernels from their PTX alone, so that the report also
    /// gives the load time with the driver's JIT compilation.
    pub load_ptx: J,
}

/// Runs the suite as the command line says, with the module of Rust kernels from `loaders`.
pub fn main<M, L, J>(suite: Vec<Bench<M>>, loaders: Loaders<L, J>) -> ExitCode
where
    L: FnOnce(&CudaContext) -> Result<(M, &'static str), cuda_host::Error>,
    J: FnOnce(&CudaContext) -> Result<(), cuda_host::Error>,
{
    let args: Vec<String> = std::env::args().skip(1).collect();
    let cli = match parse(&args) {
        Ok(Some(cli)) => cli,
        Ok(None) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(message) => {
            eprintln!("bench: {message}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    if let Some(unknown) = cli
        .only
        .iter()
        .find(|name| !suite.iter().any(|b| b.name == name.as_str()))
    {
        let names: Vec<&str> = suite.iter().map(|b| b.name).collect();
        eprintln!(
            "bench: no benchmark `{unknown}`; the suite has {}",
            names.join(", ")
        );
        return ExitCode::from(2);
    }
    if cli.list {
        return dry_run(&suite, &cli);
    }
    match run(&suite, &cli, loaders) {
        Ok(report) => {
            println!("\n{}", report.table());
            if let Some(dir) = &cli.out {
                match write_report(dir, &report) {
                    Ok(()) => println!("results in {}", dir.display()),
                    Err(error) => {
                        eprintln!("bench: writing results into {}: {error}", dir.display());
                        return ExitCode::FAILURE;
                    }
                }
            }
            if report.passed() {
                println!("bench: all checks passed");
                ExitCode::SUCCESS
            } else {
                println!("bench: FAILED (see the check column and the messages above)");
                ExitCode::FAILURE
            }
        }
        Err(Stop::NoGpu(error)) => {
            eprintln!(
                "bench: no GPU to run on: {error}\nbench: `bench --list` lists the benchmarks \
                 (and compiles the CUDA C++ sources when NVRTC is installed) without one"
            );
            ExitCode::from(2)
        }
        Err(Stop::Setup(error)) => {
            eprintln!("bench: {error}");
            ExitCode::FAILURE
        }
    }
}

/// Lists the suite; checks that each `.cu` defines its kernel and, where NVRTC is installed,
/// that it compiles (both builds). Needs no GPU.
fn dry_run<M>(suite: &[Bench<M>], cli: &Cli) -> ExitCode {
    let arch = cli.arch.clone().unwrap_or_else(|| "compute_90".to_owned());
    let compiler = CudaCompiler::new(arch);
    match &compiler {
        Ok(compiler) => println!(
            "CUDA C++ sources compiled with {} for {}",
            compiler.describe(),
            compiler.arch()
        ),
        Err(error) => println!("CUDA C++ sources not compiled: {error}"),
    }
    let mut ok = true;
    for bench in suite {
        let state = if bench.run.is_some() {
            "enabled".to_owned()
        } else if bench.needs.is_empty() {
            format!("disabled (feature `{}`)", bench.name)
        } else {
            format!("disabled (feature `{}`; needs {})", bench.name, bench.needs)
        };
        println!("{:<16} {:<60} {state}", bench.name, bench.about);
        if !defines_kernel(bench.cuda_source, bench.name) {
            println!(
                "    FAIL cuda/{}.cu does not define `extern \"C\" __global__ void {}(...)`",
                bench.name, bench.name
            );
            ok = false;
        }
        if let Ok(compiler) = &compiler {
            for fmad in [true, false] {
                let started = Instant::now();
                match compiler.compile(bench.name, bench.cuda_source, fmad) {
                    Ok(ptx) => {
                        println!(
                            "    ok   NVRTC --fmad={fmad} ({:.0} ms)",
                            started.elapsed().as_secs_f64() * 1e3
                        );
                        if let Some(dir) = &cli.out {
                            let contender = if fmad {
                                Contender::Cuda
                            } else {
                                Contender::CudaNoFma
                            };
                            let text = ptx.ptx.to_string_lossy();
                            if let Err(e) = write_ptx(dir, bench.name, contender, &text) {
                                println!("    FAIL writing its PTX: {e}");
                                ok = false;
                            }
                        }
                    }
                    Err(error) => {
                        println!("    FAIL {error}");
                        ok = false;
                    }
                }
            }
        }
    }
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// Why the suite could not run at all.
enum Stop {
    NoGpu(cuda_host::Error),
    Setup(String),
}

fn run<M, L, J>(suite: &[Bench<M>], cli: &Cli, loaders: Loaders<L, J>) -> Result<Report, Stop>
where
    L: FnOnce(&CudaContext) -> Result<(M, &'static str), cuda_host::Error>,
    J: FnOnce(&CudaContext) -> Result<(), cuda_host::Error>,
{
    let ctx = CudaContext::new(0).map_err(Stop::NoGpu)?;
    let stream = ctx.default_stream();
    let setup = |what: &str| {
        let what = what.to_owned();
        move |e: cuda_host::Error| Stop::Setup(format!("{what}: {e}"))
    };
    let (major, minor) = cuda_host::compute_capability(ctx.ordinal()).map_err(setup("device"))?;
    let name = ctx
        .name()
        .unwrap_or_else(|_| "an unnamed CUDA device".to_owned());
    let mut report = Report {
        device: format!("{name}, sm_{major}{minor}, {}", driver_version()),
        jit_cache_disabled: std::env::var("CUDA_CACHE_DISABLE").is_ok_and(|v| v == "1"),
        ours_kernels: suite.iter().filter(|b| b.run.is_some()).count(),
        settings: format!(
            "{} rounds, {} warm-up launches, launches repeated to >= {} ms per round{}",
            cli.options.rounds,
            cli.options.warmup,
            cli.options.round_ms,
            if cli.options.quick {
                ", quick sizes"
            } else {
                ""
            }
        ),
        ..Report::default()
    };
    println!("device: {}", report.device);

    let started = Instant::now();
    (loaders.load_ptx)(&ctx).map_err(setup("loading the cuda-oxide PTX"))?;
    report.ours_ptx_load_ms = started.elapsed().as_secs_f64() * 1e3;
    let started = Instant::now();
    let (ours, image) = (loaders.load)(&ctx).map_err(setup("loading the cuda-oxide module"))?;
    report.ours_load_ms = started.elapsed().as_secs_f64() * 1e3;
    report.ours_image = image.to_owned();
    println!(
        "cuda-oxide module: {} kernels loaded from its {image} in {:.1} ms (from its PTX: \
         {:.1} ms)",
        report.ours_kernels, report.ours_load_ms, report.ours_ptx_load_ms
    );

    let arch = cli
        .arch
        .clone()
        .unwrap_or_else(|| format!("compute_{major}{minor}"));
    let compiler = match CudaCompiler::new(arch.clone()) {
        Ok(compiler) => {
            report.nvrtc = compiler.describe();
            Some(compiler)
        }
        Err(error) => {
            report.nvrtc = format!("not available ({error})");
            println!("bench: CUDA C++ counterparts will not run: {error}");
            None
        }
    };
    report.cuda_arch = arch;

    let timer = EventTimer::new(&ctx).map_err(setup("creating timing events"))?;
    match copy_bandwidth(&stream, &timer, &cli.options) {
        Ok(gb_s) => {
            println!("device-to-device copy: {gb_s:.1} GB/s");
            report.copy_gb_s = Some(gb_s);
        }
        Err(error) => println!("bench: copy bandwidth not measured: {error}"),
    }

    let mut fatal: Option<String> = None;
    for bench in suite {
        let row = if !cli.only.is_empty() && !cli.only.iter().any(|n| n == bench.name) {
            Row::not_run(
                bench.name,
                bench.about,
                Status::Skipped("not selected by --only".into()),
            )
        } else if let Some(why) = &fatal {
            Row::not_run(bench.name, bench.about, Status::Skipped(why.clone()))
        } else if let Some(run) = bench.run {
            let row = run_one(
                bench,
                run,
                &ctx,
                &stream,
                &ours,
                compiler.as_ref(),
                &timer,
                cli,
            );
            if let Status::Failed(why) = &row.status
                && why.starts_with(FATAL_PREFIX)
            {
                fatal = Some(format!(
                    "an earlier kernel fault ({}) ended the run",
                    bench.name
                ));
            }
            row
        } else {
            Row::not_run(bench.name, bench.about, Status::Disabled)
        };
        report.rows.push(row);
    }
    Ok(report)
}

/// How a failure that leaves the context unusable starts its message.
const FATAL_PREFIX: &str = "fatal: ";

#[allow(clippy::too_many_arguments)]
fn run_one<M>(
    bench: &Bench<M>,
    run: crate::RunFn<M>,
    ctx: &CudaContext,
    stream: &std::sync::Arc<CudaStream>,
    ours: &M,
    compiler: Option<&CudaCompiler>,
    timer: &EventTimer,
    cli: &Cli,
) -> Row {
    let build = compiler
        .map(|c| CudaBuild::new(c, ctx, bench.name, bench.cuda_source))
        .unwrap_or_default();
    for error in &build.errors {
        println!("{}: CUDA C++ build left out: {error}", bench.name);
    }
    if let Some(dir) = &cli.out {
        for (contender, ptx) in &build.ptx {
            if let Err(e) = write_ptx(dir, bench.name, *contender, ptx) {
                println!("{}: could not write its CUDA C++ PTX: {e}", bench.name);
            }
        }
    }
    let mut harness = Ctx {
        stream,
        ours,
        cuda: build.fns.clone(),
        rng: Rng::new(seed(bench.name)),
        options: &cli.options,
        timer,
    };
    let status = match run(&mut harness) {
        Ok(outcome) => {
            println!("{}", progress(bench.name, &outcome));
            Status::Ran(outcome)
        }
        Err(failure) => {
            let fatal = if failure.is_fatal() { FATAL_PREFIX } else { "" };
            println!("{}: FAILED: {failure}", bench.name);
            Status::Failed(format!("{fatal}{failure}"))
        }
    };
    Row {
        name: bench.name,
        about: bench.about,
        hint: bench.hint,
        status,
        cuda_compile_ms: build.compile_ms,
        cuda_load_ms: build.load_ms,
        cuda_errors: build.errors,
    }
}

/// One line per benchmark as it finishes, with each check.
fn progress(name: &str, outcome: &Outcome) -> String {
    let times: Vec<String> = outcome
        .times
        .iter()
        .map(|(c, ms)| format!("{} {ms:.4} ms", c.label()))
        .collect();
    let mut line = format!("{name} ({}): {}", outcome.size, times.join(", "));
    for check in &outcome.checks {
        let verdict = if check.passed { "ok  " } else { "FAIL" };
        line.push_str(&format!(
            "\n    {verdict} vs {} ({}): {}",
            check.against, check.tolerance, check.detail
        ));
    }
    line
}

/// Device-to-device copy bandwidth, bytes read plus written per second, in GB/s: the
/// ceiling a streaming kernel is measured against.
fn copy_bandwidth(
    stream: &std::sync::Arc<CudaStream>,
    timer: &EventTimer,
    options: &Options,
) -> Result<f64, Failure> {
    let elements: usize = if options.quick { 1 << 24 } else { 1 << 26 };
    let src = stream
        .alloc_zeros::<u32>(elements)
        .map_err(cuda_host::Error::from)?;
    let mut dst = stream
        .alloc_zeros::<u32>(elements)
        .map_err(cuda_host::Error::from)?;
    let mut copy = || {
        stream
            .memcpy_dtod(&src, &mut dst)
            .map_err(cuda_host::Error::from)
    };
    for _ in 0..options.warmup.max(1) {
        copy()?;
    }
    let mut samples = Vec::new();
    for _ in 0..options.rounds.max(1) {
        samples.push(timer.time(stream, 5, &mut copy)?);
    }
    let ms = median(&samples).unwrap_or(f64::NAN);
    Ok(2.0 * (elements * 4) as f64 / (ms * 1e6))
}

/// The driver's CUDA version, for the report.
fn driver_version() -> String {
    let mut version = 0;
    // SAFETY: the driver was initialised by `CudaContext::new`; the call writes one int.
    let result = unsafe { cuda_host::cudarc::driver::sys::cuDriverGetVersion(&mut version) };
    if result == cuda_host::cudarc::driver::sys::CUresult::CUDA_SUCCESS {
        format!("driver CUDA {}", cuda_host::CudaVersion(version))
    } else {
        "driver version unknown".to_owned()
    }
}

/// A fixed seed per benchmark, so every run sees the same inputs.
fn seed(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

fn write_ptx(dir: &Path, name: &str, contender: Contender, ptx: &str) -> std::io::Result<()> {
    let dir = dir.join("cuda-ptx");
    std::fs::create_dir_all(&dir)?;
    let file = match contender {
        Contender::CudaNoFma => format!("{name}.nofma.ptx"),
        _ => format!("{name}.ptx"),
    };
    std::fs::write(dir.join(file), ptx)
}

fn write_report(dir: &Path, report: &Report) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    std::fs::write(dir.join("bench.json"), report.json())?;
    std::fs::write(dir.join("bench.csv"), report.csv())?;
    std::fs::write(dir.join("bench.txt"), report.table())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn command_line() {
        let cli = parse(&args(&[
            "--quick",
            "--only",
            "vecadd,saxpy",
            "--out",
            "/tmp/x",
        ]))
        .unwrap()
        .unwrap();
        assert!(cli.options.quick);
        assert_eq!(cli.options.rounds, 5);
        assert_eq!(cli.only, ["vecadd", "saxpy"]);
        assert_eq!(cli.out.as_deref(), Some(Path::new("/tmp/x")));
        let cli = parse(&args(&["--list", "--rounds", "9", "--arch", "compute_80"]))
            .unwrap()
            .unwrap();
        assert!(cli.list);
        assert_eq!(cli.options.rounds, 9);
        assert_eq!(cli.arch.as_deref(), Some("compute_80"));
        assert!(parse(&args(&["--help"])).unwrap().is_none());
        assert!(
            parse(&args(&["--rounds"]))
                .unwrap_err()
                .contains("needs a value")
        );
        assert!(
            parse(&args(&["--rounds", "x"]))
                .unwrap_err()
                .contains("number")
        );
        assert!(
            parse(&args(&["--arch", "sm_90"]))
                .unwrap_err()
                .contains("compute_XX")
        );
        assert!(
            parse(&args(&["--frobnicate"]))
                .unwrap_err()
                .contains("unknown")
        );
    }

    #[test]
    fn seeds_are_fixed_per_name() {
        assert_eq!(seed("vecadd"), seed("vecadd"));
        assert_ne!(seed("vecadd"), seed("saxpy"));
    }
}
