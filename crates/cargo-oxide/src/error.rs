//! What can go wrong in `cargo oxide`, each with what to do about it.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum OxideError {
    #[error("could not run `{command}`: {source}")]
    Spawn {
        command: String,
        #[source]
        source: std::io::Error,
    },

    #[error("building the cuda-oxide codegen backend failed (see cargo's messages above)")]
    BackendBuild,

    #[error(
        "building the standard library with MIR (cargo -Zbuild-std, from the toolchain's \
         rust-src) failed (see cargo's messages above); CUDA_OXIDE_MIR_SYSROOT=0 builds \
         against the toolchain's own, where device code cannot call `core`'s non-generic \
         functions"
    )]
    SysrootBuild,

    #[error(
        "the codegen backend `{}` does not exist; set CUDA_OXIDE_BACKEND to a built \
         librustc_codegen_cuda.so, or unset it to let cargo oxide build one",
        .0.display()
    )]
    BackendMissing(PathBuf),

    #[error(
        "the cuda-oxide sources are not at `{}`, where this cargo-oxide looks for them (they \
         hold the backend it builds and the crates kernels use): reinstall cargo-oxide from a \
         checkout you keep (`cargo install --path crates/cargo-oxide`), or set CUDA_OXIDE_SRC \
         to one",
        .0.display()
    )]
    RepoNotFound(PathBuf),

    #[error("`{}` has no `[toolchain]` table with a `channel`", .path.display())]
    ToolchainFile { path: PathBuf },

    #[error(
        "cuda-oxide builds with the Rust toolchain {toolchain}, which rustup installs, but \
         there is no `rustup` on PATH: install rustup (https://rustup.rs)"
    )]
    NoRustup { toolchain: String },

    #[error(
        "installing the Rust toolchain {toolchain} failed (see rustup's messages above); \
         check the network, then run `{command}` yourself"
    )]
    ToolchainInstall { toolchain: String, command: String },

    #[error(
        "no cache directory to keep the backend in: set CUDA_OXIDE_CACHE (or XDG_CACHE_HOME, \
         or HOME)"
    )]
    NoCacheDir,

    #[error("no example named `{name}` (looked for `{}`); available: {available}", .manifest.display())]
    UnknownExample {
        name: String,
        manifest: PathBuf,
        available: String,
    },

    #[error(
        "no crate to build: there is no Cargo.toml in `{}` or above it; run this in a crate, \
         pass --manifest-path PATH/Cargo.toml, or name an example of cuda-oxide",
        .0.display()
    )]
    NoTarget(PathBuf),

    #[error(
        "`{}` exists and is not empty; `cargo oxide new` writes a new crate into a new (or \
         empty) directory",
        .0.display()
    )]
    NewTargetExists(PathBuf),

    #[error(
        "`{0}` cannot be a package name: use ASCII letters, digits, `-` and `_`, not starting \
         with a digit (and not `cuda-device`, `cuda-host`, `test`, `core` or `std`); choose \
         one with --name"
    )]
    BadCrateName(String),

    #[error("the path `{}` is not UTF-8, which Cargo.toml needs", .0.display())]
    NonUtf8Path(PathBuf),

    #[error("`{}` does not exist", .0.display())]
    ManifestMissing(PathBuf),

    #[error("building `{}` failed (see the messages above)", .0.display())]
    UserBuild(PathBuf),

    #[error(
        "the kernels use math functions that come from NVIDIA's libdevice, which is not \
         installed, and installing it failed ({detail}); run `python3 -m pip install \
         {requirement}` yourself, or set CUDA_OXIDE_LIBDEVICE to the path of libdevice.10.bc \
         (CUDA installs it in nvvm/libdevice/)"
    )]
    LibdeviceInstall { requirement: String, detail: String },

    #[error("`cargo metadata` for `{}` did not say where its target directory is", .0.display())]
    Metadata(PathBuf),

    #[error("`{}` has no `[package]` name", .0.display())]
    NoPackage(PathBuf),

    #[error(
        "`{}` produced no device code: it has no `#[kernel]` (the pipeline stages only run for \
         crates with kernels)",
        .0.display()
    )]
    NoDeviceCode(PathBuf),

    #[error("the CPU side of the fuzz batch `{}` failed: {stderr}", .binary.display())]
    FuzzCpu { binary: PathBuf, stderr: String },

    #[error(
        "`{0}` is not a class of `cargo oxide fuzz`: use unsupported, internal-error, \
         llc-failure, ptxas-failure, rustc-rejected or cpu-panic"
    )]
    FuzzClass(String),

    #[error(
        "seed {seed} is in batch `{first}` and in batch `{second}`: a campaign's programs need \
         distinct seeds (choose --seeds that avoid those of the --programs folders)"
    )]
    FuzzSeedTwice {
        seed: u64,
        first: String,
        second: String,
    },

    #[error("the program of seed {seed} is {class} here: nothing to reduce")]
    FuzzNothingToReduce { seed: u64, class: String },

    #[error("could not read or write `{}`: {source}", .path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error("could not copy `{}` to `{}`: {source}", .from.display(), .to.display())]
    CopyPtx {
        from: PathBuf,
        to: PathBuf,
        #[source]
        source: std::io::Error,
    },
}
