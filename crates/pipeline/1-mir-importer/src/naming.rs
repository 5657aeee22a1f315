//! The symbol each device function gets in LLVM IR and PTX.
//!
//! One function decides it, [`export_name`], and both the definition of a function and every
//! call to it ask it, so the two always agree.
//!
//! - A kernel is named after the Rust function the user wrote (`vecadd`): that is the PTX
//!   `.entry` the host launches. An instantiation of a generic kernel is named by the backend,
//!   which sees rustc's type ids (`reserved_oxide_symbols::generic_kernel_entry`), and arrives
//!   here already named.
//! - A non-generic function is named after its fully qualified path, with the reserved prefix of
//!   a `#[device]` function removed and `::` turned into `__` (`dep__math__helper`).
//! - A `#[device]` extern declaration is named after the function it declares (`vprintf`):
//!   its definition comes from outside Rust.
//! - Anything else (generic instances, closures, compiler shims) takes its mangled symbol, which
//!   is unique and already a valid identifier.
//! - A function with a device version ([`crate::shims`]) takes the device version's symbol.
//!
//! Statics are named the same way ([`static_symbol`]); the other globals, which have no Rust
//! name, are `__oxide_const_N`.

use rustc_public::CrateDef;
use rustc_public::mir::mono::{Instance, InstanceKind, StaticDef};

/// The symbol of `instance`, a kernel when `is_kernel`.
pub fn export_name(instance: &Instance, is_kernel: bool) -> String {
    let path = instance.name();
    if is_kernel && let Some(base) = reserved_oxide_symbols::kernel_base_name(&path) {
        return base.to_owned();
    }
    if let Some(base) = reserved_oxide_symbols::device_extern_base_name(&path) {
        return base.to_owned();
    }
    if let Some(symbol) = shim_of(instance).and_then(path_symbol) {
        return symbol;
    }
    // An intrinsic with a fallback body is called under the symbol of that body.
    let item_like = matches!(instance.kind, InstanceKind::Item | InstanceKind::Intrinsic);
    let plain = item_like && instance.args().0.is_empty();
    match plain.then(|| path_symbol(&path)).flatten() {
        Some(symbol) => symbol,
        None => instance.mangled_name(),
    }
}

/// The device version of `instance`'s function, if it has one ([`crate::shims`]). The lookup
/// uses the path where the function is defined, as the collector does: `rustc_public`'s names
/// follow re-exports (`core::option::unwrap_failed` prints as `std::option::unwrap_failed`).
pub fn shim_of(instance: &Instance) -> Option<&'static str> {
    crate::shims::shim_for(&canonical_path(instance))
}

/// The path of `instance`'s item as its crate defines it (`alloc::alloc::__rust_alloc`), not
/// as the current crate sees it (`my_crate::alloc::alloc::__rust_alloc` after `extern crate
/// alloc;`): what [`crate::shims`] lists.
pub fn canonical_path(instance: &Instance) -> String {
    use rustc_middle::ty::print::{
        with_no_trimmed_paths, with_no_visible_paths, with_resolve_crate_name,
    };
    rustc_middle::ty::tls::with(|tcx| {
        let def_id = rustc_public::rustc_internal::internal(tcx, *instance).def_id();
        with_no_visible_paths!(with_no_trimmed_paths!(with_resolve_crate_name!(
            tcx.def_path_str(def_id)
        )))
    })
}

/// The symbol of a `static` item: its path with reserved names stripped (a static declared in a
/// kernel is `app__kernels__block_sum__TILE`), or its mangled symbol when the path is not plain.
pub fn static_symbol(def: StaticDef) -> String {
    let path = reserved_oxide_symbols::strip_all_reserved(&def.name());
    match path_symbol(&path) {
        Some(symbol) => symbol,
        None => Instance::from(def).mangled_name(),
    }
}

/// `a::b::c` as `a__b__c`, with a reserved last segment replaced by its base name; `None` when the
/// path holds anything but identifiers (`<`, `{`, spaces...).
pub fn path_symbol(path: &str) -> Option<String> {
    let is_plain = !path.is_empty()
        && path
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b':');
    is_plain.then(|| reserved_oxide_symbols::strip_reserved(path).replace("::", "__"))
}

#[cfg(test)]
mod tests {
    use super::path_symbol;

    #[test]
    fn plain_paths_become_identifiers() {
        assert_eq!(
            path_symbol("app::helpers::square").as_deref(),
            Some("app__helpers__square")
        );
        assert_eq!(
            path_symbol("dep::cuda_oxide_device_0badf00d_scale").as_deref(),
            Some("dep__scale")
        );
    }

    #[test]
    fn other_paths_are_left_to_mangling() {
        assert_eq!(path_symbol("core::num::<impl u32>::wrapping_add"), None);
        assert_eq!(path_symbol("app::main::{closure#0}"), None);
        assert_eq!(path_symbol(""), None);
    }
}
