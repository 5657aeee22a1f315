//! `core`'s undefined-behaviour checks, which device code leaves off.
//!
//! `core` guards many `unsafe` operations with `if check_language_ub() { precondition_check(..) }`.
//! A release build of `core` never makes those calls; device code does the same: the gate
//! functions return `false` and the checks themselves are never called (nor compiled, which
//! matters because their panic messages need string constants and formatting). The collector
//! skips these functions and the translator replaces their calls.

/// The functions that say whether to run a check.
const GATES: &[&str] = &[
    "core::ub_checks::check_language_ub",
    "core::ub_checks::check_library_ub",
];

/// Whether `path` (a `core` function) is a UB-check gate or a precondition check.
pub fn is_ub_check(path: &str) -> bool {
    is_gate(path) || path.ends_with("::precondition_check")
}

/// Whether `path` is a gate (it returns `false` on the device).
pub fn is_gate(path: &str) -> bool {
    GATES.contains(&path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_gates_and_checks() {
        assert!(is_gate("core::ub_checks::check_language_ub"));
        assert!(is_ub_check("core::ub_checks::check_library_ub"));
        assert!(is_ub_check("core::ptr::read_volatile::precondition_check"));
        assert!(!is_ub_check("core::ptr::read_volatile"));
        assert!(!is_gate("core::ptr::read_volatile::precondition_check"));
    }
}
