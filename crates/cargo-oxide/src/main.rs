//! `cargo oxide`: builds crates with the cuda-oxide codegen backend.
//!
//! Works as `cargo oxide ...` inside this repository (a `.cargo/config.toml` alias) and as an
//! installed `cargo-oxide` binary (cargo then passes `oxide` as the first argument).

mod backend;
mod bench;
mod bundle;
mod bundle_files;
mod cache;
mod cli;
mod doctor;
mod error;
mod example_metadata;
mod fuzz;
mod libdevice;
mod new;
mod pipeline;
mod run;
mod source_tree;
mod sysroot;
mod toolchain;
mod user_build;

use std::process::ExitCode;

use clap::Parser;

use crate::cli::{Cli, Command};

fn main() -> ExitCode {
    let mut args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    // `cargo oxide build` runs `cargo-oxide oxide build`.
    if args.get(1).is_some_and(|a| a == "oxide") {
        args.remove(1);
    }
    let cli = Cli::parse_from(args);
    let result = match cli.command {
        Command::Build(mut target) => {
            if target.release
                && target.arch.is_none()
                && std::env::var_os("CUDA_OXIDE_TARGET").is_none()
            {
                target.arch = Some(cli::RELEASE_ARCHITECTURES.to_owned());
                target.default_arch = true;
            }
            user_build::build(&target).map(|built| {
                eprintln!("cargo oxide: artifacts in {}", built.artifact_dir.display());
                for ptx in user_build::own_ptx(&built) {
                    eprintln!("cargo oxide: PTX in {}", ptx.display());
                }
                ExitCode::SUCCESS
            })
        }
        Command::Run(target) => run::run(&target),
        Command::Pipeline(options) => pipeline::pipeline(&options).map(|files| {
            for file in files {
                println!("{}", file.display());
            }
            ExitCode::SUCCESS
        }),
        Command::Bundle(options) => bundle::bundle(&options).map(|bundle| {
            for (name, reason) in &bundle.pending {
                eprintln!("cargo oxide: left out example `{name}`: {reason}");
            }
            let (examples, dir) = (bundle.examples.len(), bundle.dir.display());
            if options.cpu || options.race {
                let what = if options.race {
                    "with the race detector"
                } else {
                    "on the CPU device"
                };
                eprintln!(
                    "cargo oxide: bundled {examples} example(s) in {dir}; {dir}/run.sh runs them \
                     {what}, on any x86-64 Linux machine"
                );
            } else {
                eprintln!(
                    "cargo oxide: bundled {examples} example(s) and the benchmark suite in {dir}; \
                     run {dir}/run.sh (examples) and {dir}/bench.sh (benchmarks) on a machine \
                     with a GPU"
                );
            }
            ExitCode::SUCCESS
        }),
        Command::Bench(options) => bench::bench(&options),
        Command::New(options) => new::new(&options).map(|dir| {
            eprintln!(
                "cargo oxide: created {}; `cd` there and run `cargo oxide run`",
                dir.display()
            );
            ExitCode::SUCCESS
        }),
        Command::Fuzz(command) => match &command.action {
            None => fuzz::fuzz(&command.campaign),
            Some(cli::FuzzAction::Reduce(options)) => fuzz::reduce(options),
            Some(cli::FuzzAction::Show { seed }) => Ok(fuzz::show(*seed)),
        },
        Command::Doctor(options) => Ok(match options.which {
            Some(tool) => doctor::which(tool),
            None => doctor::doctor(),
        }),
    };
    result.unwrap_or_else(|error| {
        eprintln!("error: {error}");
        ExitCode::FAILURE
    })
}
