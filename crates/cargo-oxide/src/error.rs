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
        "the codegen backend `{}` does not exist; set CUDA_OXIDE_BACKEND to a built \
         librustc_codegen_cuda.so, or unset it to let cargo oxide build one",
        .0.display()
    )]
    BackendMissing(PathBuf),

    #[error(
        "this cargo-oxide does not know where the cuda-oxide sources are (looked in `{}`); \
         run it from the cuda-oxide repository (`cargo oxide ...`) or set CUDA_OXIDE_BACKEND",
        .0.display()
    )]
    RepoNotFound(PathBuf),

    #[error("no example named `{name}` (looked for `{}`); available: {available}", .manifest.display())]
    UnknownExample {
        name: String,
        manifest: PathBuf,
        available: String,
    },

    #[error("no crate to build: name an example or pass --manifest-path PATH/Cargo.toml")]
    NoTarget,

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
