//! `cargo oxide bundle`: every example, built and gathered with a runner script, ready to be
//! carried to a machine with a GPU (which needs no Rust toolchain: the binaries embed their
//! PTX and load the CUDA driver at run time).

use std::path::{Path, PathBuf};

use crate::bench::{self, BENCH_CRATE};
use crate::bundle_files::{place, set_executable};
use crate::cli::{BuildTarget, BundleOptions};
use crate::error::OxideError;
use crate::example_metadata::{cpu_reason, example_arch, pending_reason};
use crate::source_tree;
use crate::user_build;

/// What `bundle` produced.
pub struct Bundle {
    /// The folder.
    pub dir: PathBuf,
    /// The examples in it.
    pub examples: Vec<String>,
    /// The examples left out, with why (their `pending` reason).
    pub pending: Vec<(String, String)>,
}

/// Builds every example and the benchmark suite, and fills the bundle folder.
pub fn bundle(options: &BundleOptions) -> Result<Bundle, OxideError> {
    let examples_dir = source_tree::repo_root()?.join("examples");
    let mut examples = Vec::new();
    let mut pending = Vec::new();
    for name in runnable_examples(&examples_dir) {
        match pending_reason(&examples_dir.join(&name).join("Cargo.toml")) {
            Some(reason) => pending.push((name, reason)),
            None => examples.push(name),
        }
    }
    let dir = source_tree::resolve_dir(&options.out)?;
    let io = |path: &Path| {
        let path = path.to_owned();
        move |source| OxideError::Io { path, source }
    };
    if dir.exists() {
        std::fs::remove_dir_all(&dir).map_err(io(&dir))?;
    }
    std::fs::create_dir_all(&dir).map_err(io(&dir))?;
    // The architecture is part of every crate's build (the backend reads it), so a change of
    // architecture rebuilds the dependencies: the examples that name their own go last.
    let mut builds: Vec<(Option<String>, &String)> = examples
        .iter()
        .map(|name| {
            (
                example_arch(&examples_dir.join(name).join("Cargo.toml")),
                name,
            )
        })
        .collect();
    builds.sort_by_key(|(arch, _)| arch.is_some());
    for (arch, name) in builds {
        let target = BuildTarget {
            example: Some(name.clone()),
            manifest_path: None,
            release: options.release,
            arch: arch.or_else(|| options.arch.clone()),
            default_arch: false,
            features: Vec::new(),
            verbose: false,
            device_debug: options.device_debug,
            race: options.race,
            fmad: false,
            panic_messages: options.panic_messages,
        };
        let built = user_build::build(&target)?;
        place(&built.artifact_dir, name, &dir)?;
    }
    let not_on_cpu: Vec<(String, String)> = examples
        .iter()
        .filter_map(|name| {
            cpu_reason(&examples_dir.join(name).join("Cargo.toml")).map(|r| (name.clone(), r))
        })
        .collect();
    let script = dir.join("run.sh");
    let device = if options.race {
        Device::Race
    } else if options.cpu {
        Device::Cpu
    } else {
        Device::Gpu
    };
    std::fs::write(
        &script,
        runner_script(&examples, &pending, &not_on_cpu, device),
    )
    .map_err(io(&script))?;
    set_executable(&script).map_err(io(&script))?;
    if device == Device::Gpu {
        bench::build_into(&dir, &[], options.arch.clone(), options.device_debug)?;
    }
    Ok(Bundle {
        dir,
        examples,
        pending,
    })
}

/// The examples with a program to run (a `src/main.rs`), sorted; the benchmark suite has its
/// own script.
fn runnable_examples(dir: &Path) -> Vec<String> {
    let mut examples = user_build::subdirs_holding(dir, "src/main.rs");
    examples.retain(|name| name != BENCH_CRATE);
    examples
}

/// Where a bundle's runner runs the examples by default.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Device {
    /// The machine's GPU (`CUDA_OXIDE_DEVICE=cpu` in the environment still picks the CPU).
    Gpu,
    /// The CPU device.
    Cpu,
    /// The CPU device with the race detector: a report fails the example.
    Race,
}

/// A script that runs each example, prints `PASS name` or `FAIL name`, keeps each log (in
/// `$OUT` when set, as the device machine provides, else `logs/`), and ends with
/// `N passed, N failed`; it exits non-zero when any failed. Under `CUDA_OXIDE_DEVICE=cpu`
/// (the CPU device; the default for `device` other than the GPU) it skips the examples of
/// `not_on_cpu`, printing why.
fn runner_script(
    examples: &[String],
    pending: &[(String, String)],
    not_on_cpu: &[(String, String)],
    device: Device,
) -> String {
    let defaults = match device {
        Device::Gpu => "",
        Device::Cpu => "export CUDA_OXIDE_DEVICE=\"${CUDA_OXIDE_DEVICE:-cpu}\"\n",
        Device::Race => "export CUDA_OXIDE_DEVICE=cpu CUDA_OXIDE_RACE=1\n",
    };
    // A race report is a failure of the example in a race bundle.
    let race_check = if device == Device::Race {
        "    if [ \"$status\" = PASS ] && grep -q '^cuda-oxide race detector:' \"$logs/$example.log\"; then\n\
         \x20       status=\"FAIL (race reports)\"\n\
         \x20       passed=$((passed - 1))\n\
         \x20       failed=$((failed + 1))\n\
         \x20   fi\n"
    } else {
        ""
    };
    let cpu_cases: String = not_on_cpu
        .iter()
        .map(|(name, reason)| {
            let reason = reason.replace(['\'', '"', '$', '`'], "");
            format!(
                "            {name}) echo \"SKIP {name} on the CPU device: {reason}\"; skipped=$((skipped + 1)); continue ;;\n"
            )
        })
        .collect();
    let skipped: String = pending
        .iter()
        .map(|(name, reason)| {
            let line = format!("SKIP {name}: {reason}").replace('\'', "");
            format!("echo '{line}'\n")
        })
        .collect();
    format!(
        r#"#!/usr/bin/env bash
# Runs every cuda-oxide example of this bundle on the local GPU, or on the CPU device with
# CUDA_OXIDE_DEVICE=cpu (docs/cpu.md), skipping there the examples that say they cannot run.
# Made by `cargo oxide bundle`; each example checks its results against the CPU.
set -u
{defaults}cd "$(dirname "${{BASH_SOURCE[0]}}")"
logs="${{OUT:-logs}}"
mkdir -p "$logs"
passed=0
failed=0
skipped=0
on_cpu=no
case "${{CUDA_OXIDE_DEVICE:-}}" in [cC][pP][uU]) on_cpu=yes ;; esac
if [ -x ./gemm_bf16 ]; then
{cublas}fi
{skipped}for example in {examples}; do
    if [ "$on_cpu" = yes ]; then
        case "$example" in
{cpu_cases}        esac
    fi
    start=$(date +%s%N)
    if "./$example" >"$logs/$example.log" 2>&1; then
        status=PASS
        passed=$((passed + 1))
    else
        status="FAIL (exit $?)"
        failed=$((failed + 1))
    fi
{race_check}    millis=$(( ($(date +%s%N) - start) / 1000000 ))
    echo "$status $example (${{millis}} ms)"
    grep -E '^(ok|FAIL) ' "$logs/$example.log" | sed 's/^/    /'
    if [ "$status" != PASS ]; then
        tail -n 5 "$logs/$example.log" | sed 's/^/    | /'
    fi
done
if [ "$on_cpu" = yes ]; then
    echo "on the CPU device: $skipped example(s) skipped"
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
"#,
        examples = examples.join(" "),
        cublas = bench::CUBLAS_ON_LIBRARY_PATH,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn script_runs_every_example_and_summarises() {
        let script = runner_script(
            &["vecadd".into(), "casts".into()],
            &[("printf".into(), "needs string constants".into())],
            &[("casts".into(), "needs `wgmma`".into())],
            Device::Gpu,
        );
        assert!(!script.contains("export CUDA_OXIDE_DEVICE"), "{script}");
        assert!(!script.contains("race reports"), "{script}");
        assert!(
            script.contains(r#"casts) echo "SKIP casts on the CPU device: needs wgmma"; skipped=$((skipped + 1)); continue ;;"#),
            "{script}"
        );
        assert!(
            script.contains("echo 'SKIP printf: needs string constants'"),
            "{script}"
        );
        assert!(
            script.contains("for example in vecadd casts; do"),
            "{script}"
        );
        assert!(
            script.contains(r#"echo "$passed passed, $failed failed""#),
            "{script}"
        );
        assert!(script.contains(r#"[ "$failed" -eq 0 ]"#), "{script}");
        // gemm_bf16 loads cuBLAS (cudarc's names: libcublas.so, ...).
        assert!(
            script.contains(r#"ln -s "$cublas" "$link/libcublas.so""#),
            "{script}"
        );
    }

    #[test]
    fn cpu_and_race_bundles_run_on_the_cpu_device() {
        let cpu = runner_script(&["vecadd".into()], &[], &[], Device::Cpu);
        assert!(
            cpu.contains("export CUDA_OXIDE_DEVICE=\"${CUDA_OXIDE_DEVICE:-cpu}\""),
            "{cpu}"
        );
        let race = runner_script(&["vecadd".into()], &[], &[], Device::Race);
        assert!(
            race.contains("export CUDA_OXIDE_DEVICE=cpu CUDA_OXIDE_RACE=1"),
            "{race}"
        );
        assert!(
            race.contains("grep -q '^cuda-oxide race detector:' \"$logs/$example.log\""),
            "{race}"
        );
        assert!(race.contains("status=\"FAIL (race reports)\""), "{race}");
    }

    #[test]
    fn only_examples_with_a_program_are_runnable() {
        let dir = std::env::temp_dir().join(format!("oxide-bundle-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("app/src")).unwrap();
        std::fs::create_dir_all(dir.join("lib/src")).unwrap();
        std::fs::create_dir_all(dir.join("bench/src")).unwrap();
        std::fs::write(dir.join("app/src/main.rs"), "fn main() {}").unwrap();
        std::fs::write(dir.join("bench/src/main.rs"), "fn main() {}").unwrap();
        std::fs::write(dir.join("lib/src/lib.rs"), "").unwrap();
        assert_eq!(runnable_examples(&dir), vec!["app".to_string()]);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
