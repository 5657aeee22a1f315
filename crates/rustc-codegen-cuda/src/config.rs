//! The backend's configuration, read once from `CUDA_OXIDE_*` environment variables.
//!
//! The backend cannot take command-line flags of its own (rustc parses those), so `cargo oxide`
//! and users talk to it through the environment. Every variable is optional; without any the
//! build is quiet and writes the PTX next to the host artifacts only.

use std::path::PathBuf;

/// Every variable the backend reads (`CUDA_OXIDE_LIBDEVICE` is read by `llvm-export`, when the
/// kernels' math needs libdevice; `PTXAS` names the `ptxas` that makes the embedded cubin).
pub const VARIABLES: &[&str] = &[
    "CUDA_OXIDE_VERBOSE",
    "CUDA_OXIDE_DUMP_MIR",
    "CUDA_OXIDE_DUMP_LLVM",
    "CUDA_OXIDE_SHOW_RUSTC_MIR",
    "CUDA_OXIDE_PTX_DIR",
    "CUDA_OXIDE_TARGET",
    "CUDA_OXIDE_DEFAULT_TARGETS",
    "CUDA_OXIDE_LLC",
    "CUDA_OXIDE_LIBDEVICE",
    "CUDA_OXIDE_DEVICE_DEBUG",
    "CUDA_OXIDE_FMAD",
    "CUDA_OXIDE_NO_CUBIN",
    "CUDA_OXIDE_PANIC_MESSAGES",
    "CUDA_OXIDE_FAULTING_CHECKS",
    "CUDA_OXIDE_CHECK_HOISTING",
    "CUDA_OXIDE_CPU",
    "CUDA_OXIDE_RACE",
    "PTXAS",
];

/// The default GPU architecture when nothing else chooses one.
pub const DEFAULT_TARGET: &str = "sm_90";

/// Settings for the device path.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CudaCodegenConfig {
    /// `CUDA_OXIDE_VERBOSE`: list collected functions and stage timings on stderr.
    pub verbose: bool,
    /// `CUDA_OXIDE_DUMP_MIR`: write dialect-mir before and after mem2reg.
    pub dump_mir: bool,
    /// `CUDA_OXIDE_DUMP_LLVM`: write the generated `.ll`.
    pub dump_llvm: bool,
    /// `CUDA_OXIDE_SHOW_RUSTC_MIR`: write rustc's MIR of every collected function.
    pub show_rustc_mir: bool,
    /// `CUDA_OXIDE_PTX_DIR`: also copy each crate's `.ptx` into this directory.
    pub ptx_dir: Option<PathBuf>,
    /// `CUDA_OXIDE_TARGET`: the GPU architecture (`sm_90`, ...), or several
    /// (`sm_80,sm_86,sm_90`).
    pub target: Option<String>,
    /// `CUDA_OXIDE_DEFAULT_TARGETS`: the target list is `cargo oxide`'s default, not the
    /// user's: architectures the kernels need more than are left out, with a warning.
    pub default_targets: bool,
    /// `CUDA_OXIDE_LLC`: the `llc` to use.
    pub llc: Option<PathBuf>,
    /// `CUDA_OXIDE_DEVICE_DEBUG`: `none`, `lines` (the default) or `full`, as written; see
    /// [CudaCodegenConfig::device_debug].
    pub device_debug: Option<String>,
    /// `CUDA_OXIDE_FMAD`: contract float `a * b + c` into fused multiply-adds in every device
    /// function (nvcc's `--fmad=true`); off by default, as Rust rounds each operation.
    pub fmad: bool,
    /// `CUDA_OXIDE_NO_CUBIN`: embed only the PTX (no `ptxas` at build time; the driver then
    /// compiles the PTX when the module is loaded).
    pub no_cubin: bool,
    /// `CUDA_OXIDE_PANIC_MESSAGES`: `1` (or `true`, `yes`, `on`) makes every device panic,
    /// failed checks included, record its message, location and thread for the host; `0`
    /// (anything else) makes them all bare traps. Unset: explicit panics record theirs, failed
    /// checks in builds with debug assertions only, see [CudaCodegenConfig::panic_messages]
    /// and [CudaCodegenConfig::check_messages].
    pub panic_messages: Option<bool>,
    /// `CUDA_OXIDE_FAULTING_CHECKS`: `0` (anything not truthy) keeps every failed check a
    /// branch to a trap; unset or truthy, a check that guards a global load or store in a build
    /// without panic messages faults at that access instead (see
    /// [CudaCodegenConfig::faulting_checks]).
    pub faulting_checks: Option<bool>,
    /// `CUDA_OXIDE_CHECK_HOISTING`: `0` (anything not truthy) keeps every check where `opt`
    /// leaves it; unset or truthy, checks are hoisted (see [CudaCodegenConfig::check_hoisting]).
    pub check_hoisting: Option<bool>,
    /// `CUDA_OXIDE_CPU`: `0` (anything not truthy) builds no CPU flavour of the kernels; unset
    /// or truthy, the host binary also carries them compiled for the CPU device (see
    /// [CudaCodegenConfig::cpu_flavour]).
    pub cpu_flavour: Option<bool>,
    /// `CUDA_OXIDE_RACE`: truthy instruments the CPU flavour for the race detector (every
    /// access of memory reported to the CPU device's runtime, docs/cpu.md); implies the CPU
    /// flavour.
    pub race: bool,
}

impl CudaCodegenConfig {
    /// Reads the process environment.
    pub fn from_env() -> Self {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    /// Reads the variables through `lookup` (the environment, or a map in tests).
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Self {
        let flag = |name: &str| lookup(name).is_some_and(|v| is_truthy(&v));
        let non_empty = |name: &str| lookup(name).filter(|v| !v.trim().is_empty());
        Self {
            verbose: flag("CUDA_OXIDE_VERBOSE"),
            dump_mir: flag("CUDA_OXIDE_DUMP_MIR"),
            dump_llvm: flag("CUDA_OXIDE_DUMP_LLVM"),
            show_rustc_mir: flag("CUDA_OXIDE_SHOW_RUSTC_MIR"),
            ptx_dir: non_empty("CUDA_OXIDE_PTX_DIR").map(PathBuf::from),
            target: non_empty("CUDA_OXIDE_TARGET").map(|t| t.trim().to_owned()),
            default_targets: flag("CUDA_OXIDE_DEFAULT_TARGETS"),
            llc: non_empty("CUDA_OXIDE_LLC").map(PathBuf::from),
            fmad: flag("CUDA_OXIDE_FMAD"),
            no_cubin: flag("CUDA_OXIDE_NO_CUBIN"),
            panic_messages: non_empty("CUDA_OXIDE_PANIC_MESSAGES").map(|v| is_truthy(&v)),
            faulting_checks: non_empty("CUDA_OXIDE_FAULTING_CHECKS").map(|v| is_truthy(&v)),
            check_hoisting: non_empty("CUDA_OXIDE_CHECK_HOISTING").map(|v| is_truthy(&v)),
            device_debug: non_empty("CUDA_OXIDE_DEVICE_DEBUG"),
            cpu_flavour: non_empty("CUDA_OXIDE_CPU").map(|v| is_truthy(&v)),
            race: flag("CUDA_OXIDE_RACE"),
        }
    }

    /// The source information the device code carries: Rust lines unless
    /// `CUDA_OXIDE_DEVICE_DEBUG` says otherwise; an unknown value is an error naming the
    /// accepted ones.
    pub fn device_debug(&self) -> Result<device_pipeline::DeviceDebug, String> {
        match &self.device_debug {
            None => Ok(device_pipeline::DeviceDebug::default()),
            Some(value) => device_pipeline::DeviceDebug::parse(value).ok_or_else(|| {
                format!(
                    "CUDA_OXIDE_DEVICE_DEBUG is `{value}`; expected {}",
                    device_pipeline::DeviceDebug::CHOICES
                )
            }),
        }
    }

    /// Whether explicit device panics (`panic!`, `assert!`, `unwrap`, `expect`, and those of
    /// `core`'s functions) record their message, location and thread for the host: unless
    /// `CUDA_OXIDE_PANIC_MESSAGES` turns them off. Their messages are built only on the
    /// failing path, so they cost nothing on the hot path.
    pub fn panic_messages(&self) -> bool {
        self.panic_messages.unwrap_or(true)
    }

    /// Whether failed checks (bounds, overflow, division) record their message too: as
    /// `CUDA_OXIDE_PANIC_MESSAGES` says, else when the crate is compiled with debug assertions
    /// (the dev profile). A release build keeps them bare traps, which can be hoisted out of
    /// loops, merged, and made faulting accesses (no cost on the hot path); the host then
    /// reports a fault of the kernel and says how to get the line.
    pub fn check_messages(&self, debug_assertions: bool) -> bool {
        self.panic_messages.unwrap_or(debug_assertions)
    }

    /// Whether failed checks may fault at the global access they guard instead of trapping
    /// before it (`ptx_tools::faulting_checks`): on unless `CUDA_OXIDE_FAULTING_CHECKS` turns
    /// it off. Either way the kernel stops and the host reports a fault; the faulting form lets
    /// ptxas predicate guarded loads.
    pub fn faulting_checks(&self) -> bool {
        self.faulting_checks.unwrap_or(true)
    }

    /// Whether checks are hoisted between two `opt` runs: a loop whose bounds checks a test
    /// before it can prove gets a check-free copy (`llvm_export::loop_versioning`), and a run of
    /// checks branches once (`llvm_export::check_merging`). On unless
    /// `CUDA_OXIDE_CHECK_HOISTING` turns it off.
    pub fn check_hoisting(&self) -> bool {
        self.check_hoisting.unwrap_or(true)
    }

    /// Whether the kernels are also compiled for the CPU device (`CUDA_OXIDE_DEVICE=cpu` at run
    /// time, `docs/cpu.md`). On unless `CUDA_OXIDE_CPU` turns it off.
    pub fn cpu_flavour(&self) -> bool {
        self.race || self.cpu_flavour.unwrap_or(true)
    }

    /// The GPU architecture to compile for.
    pub fn target(&self) -> &str {
        self.target.as_deref().unwrap_or(DEFAULT_TARGET)
    }
}

/// `1`, `true`, `yes`, `on` (any case) turn a flag on; anything else, empty included, leaves it off.
fn is_truthy(value: &str) -> bool {
    matches!(
        value.trim().to_ascii_lowercase().as_str(),
        "1" | "true" | "yes" | "on"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn config(vars: &[(&str, &str)]) -> CudaCodegenConfig {
        let map: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        CudaCodegenConfig::from_lookup(|name| map.get(name).cloned())
    }

    #[test]
    fn defaults_are_quiet() {
        let c = config(&[]);
        assert_eq!(c, CudaCodegenConfig::default());
        assert_eq!(c.target(), DEFAULT_TARGET);
        assert_eq!(c.device_debug(), Ok(device_pipeline::DeviceDebug::Lines));
    }

    #[test]
    fn reads_every_variable() {
        let c = config(&[
            ("CUDA_OXIDE_VERBOSE", "1"),
            ("CUDA_OXIDE_DUMP_MIR", "true"),
            ("CUDA_OXIDE_DUMP_LLVM", "YES"),
            ("CUDA_OXIDE_SHOW_RUSTC_MIR", "on"),
            ("CUDA_OXIDE_PTX_DIR", "/tmp/ptx"),
            ("CUDA_OXIDE_TARGET", " sm_80 "),
            ("CUDA_OXIDE_LLC", "/opt/llc"),
            ("CUDA_OXIDE_DEVICE_DEBUG", "Full"),
            ("CUDA_OXIDE_FMAD", "1"),
            ("CUDA_OXIDE_NO_CUBIN", "1"),
            ("CUDA_OXIDE_PANIC_MESSAGES", "1"),
            ("CUDA_OXIDE_FAULTING_CHECKS", "0"),
            ("CUDA_OXIDE_CHECK_HOISTING", "off"),
        ]);
        assert!(!c.check_hoisting());
        assert!(config(&[]).check_hoisting());
        assert_eq!(c.panic_messages, Some(true));
        assert!(!c.faulting_checks());
        assert!(config(&[]).faulting_checks());
        assert!(c.panic_messages() && c.check_messages(false));
        assert!(c.verbose && c.dump_mir && c.dump_llvm && c.show_rustc_mir && c.fmad);
        assert!(c.no_cubin);
        assert_eq!(c.device_debug(), Ok(device_pipeline::DeviceDebug::Full));
        assert_eq!(c.ptx_dir, Some(PathBuf::from("/tmp/ptx")));
        assert_eq!(c.target(), "sm_80");
        assert_eq!(c.llc, Some(PathBuf::from("/opt/llc")));
    }

    #[test]
    fn unknown_debug_level_is_an_error() {
        let c = config(&[("CUDA_OXIDE_DEVICE_DEBUG", "-G")]);
        let message = c.device_debug().unwrap_err();
        assert!(
            message.contains("`-G`") && message.contains("`full`"),
            "{message}"
        );
    }

    #[test]
    fn zero_and_empty_are_off() {
        let c = config(&[
            ("CUDA_OXIDE_VERBOSE", "0"),
            ("CUDA_OXIDE_DUMP_MIR", ""),
            ("CUDA_OXIDE_PTX_DIR", "  "),
            ("CUDA_OXIDE_TARGET", ""),
        ]);
        assert_eq!(c, CudaCodegenConfig::default());
    }

    /// Explicit panics record their message unless told not to; failed checks do in builds
    /// with debug assertions, or when told to.
    #[test]
    fn panic_messages_follow_debug_assertions_unless_set() {
        let unset = config(&[]);
        assert!(unset.panic_messages());
        assert!(unset.check_messages(true));
        assert!(!unset.check_messages(false));
        let off = config(&[("CUDA_OXIDE_PANIC_MESSAGES", "0")]);
        assert!(!off.panic_messages() && !off.check_messages(true));
        let on = config(&[("CUDA_OXIDE_PANIC_MESSAGES", "on")]);
        assert!(on.panic_messages() && on.check_messages(false));
    }
}
