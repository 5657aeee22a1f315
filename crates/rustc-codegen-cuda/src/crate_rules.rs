//! Which functions device code may reach, and what happens to those it reaches.
//!
//! Device code may use its own crate, `core`, `alloc` (on the device heap, see
//! `cuda_device::heap`), `cuda_device` and any other crate that does not need an operating
//! system. It may not reach `std` (files, threads, printing...): such a call stops the build
//! with the chain of calls that led to it.

/// Crates whose functions device code must never reach, with the reason given to the user.
pub const FORBIDDEN_CRATES: &[(&str, &str)] = &[
    ("std", "`std` needs an operating system"),
    ("proc_macro", "`proc_macro` only exists inside the compiler"),
    ("test", "`test` is the host test harness"),
];

/// The crates allowed in device code, as the error message lists them.
pub const ALLOWED_CRATES_HELP: &str = "only these crates are allowed in device code: the kernel's \
     own crate, `cuda_device` (GPU intrinsics), `core` (the no_std standard library), `alloc` \
     (on the device heap), and other `no_std` crates of the dependency tree";

/// What the collector does with a function that device code calls.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum CalleeRule {
    /// Compile it for the device and walk into it.
    Collect,
    /// A `cuda_device` intrinsic stub: the importer turns the call into a GPU instruction.
    IntrinsicStub,
    /// A C math function that `std` or `core` binds for the float methods
    /// (`std::sys::cmath::tanf`, `core::num::imp::libm::cbrt`): it has no MIR, and the
    /// importer turns the call into the math operation it computes.
    MathFunction,
    /// A `#[device]` extern declaration: defined outside Rust (a CUDA system call such as
    /// `vprintf`, libdevice, ...), so it is declared and called, not compiled.
    External,
    /// A function of `core` or `alloc` that never returns (the panic machinery,
    /// `unwrap_failed`, `handle_alloc_error`, ...). Without panic messages the call becomes a
    /// trap. With them (`CUDA_OXIDE_PANIC_MESSAGES`), one of `core` is compiled when it has MIR
    /// (`assert_failed::<T, U>`), replaced by its device version when it has one (the panic
    /// entry points, which record the message and trap), else the call becomes a bare trap.
    Panic,
    /// `core`'s undefined-behaviour checks (`check_language_ub`, `precondition_check`, ...):
    /// off on the device, as in a release build of `core`, so the call is never made.
    UbCheck,
    /// A function that exists only for the CPU (`collector::is_host_only`): a foreign
    /// function, or one that needs CPU features beyond the target's. It is not compiled: a
    /// call to it traps the kernel.
    HostOnly,
    /// A function of a crate device code must not use.
    Forbidden {
        /// Why the crate is forbidden.
        reason: &'static str,
    },
}

/// Paths of `std` that device code may use anyway: the inherent methods of `f16`, `f32` and `f64`
/// (`sqrt`, `sin`, `tan`, ...) live in `std` but are thin wrappers over compiler intrinsics
/// and C math functions ([CalleeRule::MathFunction]), which the device pipeline implements.
/// What they reach is checked like everything else.
const STD_ALLOWED_PREFIXES: &[&str] = &[
    "std::f16::<impl f16>::",
    "std::f32::<impl f32>::",
    "std::f64::<impl f64>::",
];

/// Paths of `std` whose diverging functions are panics (`begin_panic`, `panic_fmt`...).
const STD_PANIC_PREFIXES: &[&str] = &["std::panicking::", "std::rt::"];

/// Paths of `std` whose math has no GPU implementation, with the reason given to the user.
const STD_UNSUPPORTED_MATH: &[(&str, &str)] = &[(
    "std::f128::<impl f128>::",
    "the GPU has no `f128` arithmetic and its math library no `f128` functions (`f16` \
         ones are computed in `f32`, `f32` and `f64` ones are native)",
)];

/// Classifies a called function by its crate, its fully qualified path, and whether it
/// diverges (returns `!`).
pub fn classify(crate_name: &str, path: &str, diverges: bool) -> CalleeRule {
    if matches!(crate_name, "std" | "core") && mir_importer::rules::is_c_math_function(path) {
        return CalleeRule::MathFunction;
    }
    if let Some(&(_, reason)) = STD_UNSUPPORTED_MATH
        .iter()
        .find(|(prefix, _)| crate_name == "std" && path.starts_with(prefix))
    {
        return CalleeRule::Forbidden { reason };
    }
    // `std`'s panic entry points (a crate of edition 2015 or 2018 with `std` panics through
    // `std::panicking::begin_panic`): a panic like `core`'s, which traps on the GPU.
    if crate_name == "std" && diverges && STD_PANIC_PREFIXES.iter().any(|p| path.starts_with(p)) {
        return CalleeRule::Panic;
    }
    if let Some(&(_, reason)) = FORBIDDEN_CRATES
        .iter()
        .find(|(name, _)| *name == crate_name)
        && !STD_ALLOWED_PREFIXES.iter().any(|p| path.starts_with(p))
    {
        return CalleeRule::Forbidden { reason };
    }
    if reserved_oxide_symbols::kind_of(path)
        == Some(reserved_oxide_symbols::ReservedKind::DeviceExtern)
    {
        return CalleeRule::External;
    }
    if crate_name == "cuda_device" && mir_importer::rules::is_intrinsic_stub(path) {
        return CalleeRule::IntrinsicStub;
    }
    if matches!(crate_name, "core" | "alloc") && diverges {
        return CalleeRule::Panic;
    }
    if crate_name == "core" && mir_importer::rules::is_ub_check(path) {
        return CalleeRule::UbCheck;
    }
    CalleeRule::Collect
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_extern_declarations_are_not_compiled() {
        let tag = reserved_oxide_symbols::crate_tag("cuda_device");
        let name = reserved_oxide_symbols::reserved_name(
            reserved_oxide_symbols::ReservedKind::DeviceExtern,
            &tag,
            "vprintf",
        );
        assert!(matches!(
            classify(
                "cuda_device",
                &format!("cuda_device::printf::{name}"),
                false
            ),
            CalleeRule::External
        ));
    }

    #[test]
    fn std_is_forbidden_alloc_is_collected() {
        assert!(matches!(
            classify("std", "std::io::_print", false),
            CalleeRule::Forbidden { .. }
        ));
        assert_eq!(
            classify("alloc", "alloc::vec::Vec::<T>::push", false),
            CalleeRule::Collect
        );
    }

    #[test]
    fn float_methods_of_std_are_allowed() {
        assert_eq!(
            classify("std", "std::f32::<impl f32>::sqrt", false),
            CalleeRule::Collect
        );
        assert_eq!(
            classify("std", "std::f64::<impl f64>::mul_add", false),
            CalleeRule::Collect
        );
        assert!(matches!(
            classify("std", "std::f32::consts_printer", false),
            CalleeRule::Forbidden { .. }
        ));
    }

    #[test]
    fn c_math_functions_of_std_and_core_are_math_functions() {
        assert_eq!(
            classify("std", "std::sys::cmath::tanf", false),
            CalleeRule::MathFunction
        );
        assert_eq!(
            classify("std", "std::sys::cmath::lgamma_r", false),
            CalleeRule::MathFunction
        );
        assert_eq!(
            classify("core", "core::num::imp::libm::cbrtf", false),
            CalleeRule::MathFunction
        );
        // Only those paths: the rest of `std::sys` stays forbidden, other crates' `tanf` is
        // their own code.
        assert!(matches!(
            classify("std", "std::sys::cmath::tanf128", false),
            CalleeRule::Forbidden { .. }
        ));
        assert!(matches!(
            classify("std", "std::sys::fs::open", false),
            CalleeRule::Forbidden { .. }
        ));
        assert_eq!(
            classify("app", "std::sys::cmath::tanf", false),
            CalleeRule::Collect
        );
    }

    #[test]
    fn f128_math_is_refused_with_its_own_reason_f16_math_is_collected() {
        let CalleeRule::Forbidden { reason } =
            classify("std", "std::f128::<impl f128>::sin", false)
        else {
            panic!("f128 math must be refused");
        };
        assert!(reason.contains("no `f128`"), "{reason}");
        assert_eq!(
            classify("std", "std::f16::<impl f16>::exp", false),
            CalleeRule::Collect
        );
    }

    #[test]
    fn intrinsic_stubs_are_skipped_but_other_cuda_device_code_is_collected() {
        assert_eq!(
            classify("cuda_device", "cuda_device::thread::threadIdx_x", false),
            CalleeRule::IntrinsicStub
        );
        assert_eq!(
            classify("cuda_device", "cuda_device::thread::index_1d", false),
            CalleeRule::Collect
        );
    }

    #[test]
    fn diverging_core_functions_are_panics() {
        assert_eq!(
            classify("core", "core::panicking::panic_bounds_check", true),
            CalleeRule::Panic
        );
        assert_eq!(
            classify("core", "core::num::<impl u32>::wrapping_add", false),
            CalleeRule::Collect
        );
        // Only core's diverging functions: a user's `-> !` helper is real device code.
        assert_eq!(classify("app", "app::fail", true), CalleeRule::Collect);
        // `std`'s panic entry points too (`assert!` in a 2015-edition crate with `std`), but
        // no other function of `std`.
        assert_eq!(
            classify("std", "std::panicking::begin_panic", true),
            CalleeRule::Panic
        );
        assert!(matches!(
            classify("std", "std::process::exit", true),
            CalleeRule::Forbidden { .. }
        ));
    }

    #[test]
    fn ub_checks_of_core_are_skipped() {
        assert_eq!(
            classify("core", "core::ub_checks::check_language_ub", false),
            CalleeRule::UbCheck
        );
        assert_eq!(
            classify(
                "core",
                "core::hint::unreachable_unchecked::precondition_check",
                false
            ),
            CalleeRule::UbCheck
        );
        assert_eq!(
            classify("app", "app::precondition_check", false),
            CalleeRule::Collect
        );
    }

    #[test]
    fn other_crates_are_collected() {
        assert_eq!(classify("app", "app::helper", false), CalleeRule::Collect);
        assert_eq!(classify("libm", "libm::sqrtf", false), CalleeRule::Collect);
    }
}
