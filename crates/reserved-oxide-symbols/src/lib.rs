//! The naming contract between cuda-oxide's proc macros and its codegen backend.
//!
//! `#[kernel]` and `#[device]` rename the function they annotate into a reserved namespace:
//!
//! | prefix                                 | set by                            |
//! |----------------------------------------|-----------------------------------|
//! | `cuda_oxide_kernel_<tag>_`             | `#[kernel]`                       |
//! | `cuda_oxide_device_<tag>_`             | `#[device]`                       |
//! | `cuda_oxide_device_extern_<tag>_`      | `#[device]` on an `extern` block  |
//!
//! `<tag>` is eight lowercase hex digits derived from the defining crate's name, so that two
//! crates exporting a kernel of the same name never clash at link time, and so that no one
//! writes such a name by accident. The backend recognises a reserved name by its shape alone:
//! it never needs to know the tag in advance.
//!
//! Both the macro side and the collector side use this crate, so the contract lives in one place.
//! So do the host runtime and the backend's embedding: the symbols of a crate's embedded PTX
//! and cubin ([`ptx_symbol`], [`cubin_symbol`], ...), the cubin set of a build for several
//! architectures ([`cubin_set`]), the module record of every embedded module
//! ([`MODULE_RECORD_SECTION`]) and the entry name of a generic kernel's instantiation
//! ([`generic_kernel_entry`]).

#![forbid(unsafe_code)]

use std::fmt;

pub mod cubin_set;

/// The PTX symbol of `cuda_device::panic::RECORD`, the address of a module's panic record:
/// the device lowering exports it (`.visible`), the host runtime writes it after loading the
/// module (`cuModuleGetGlobal`).
pub const PANIC_RECORD_SYMBOL: &str = "cuda_device__panic__RECORD";

/// Which reserved namespace a function name belongs to.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum ReservedKind {
    /// A `#[kernel]`: a GPU entry point.
    Kernel,
    /// A `#[device]` function: a helper meant to be called from device code of any crate.
    Device,
    /// A `#[device]` declaration of a function defined outside Rust (linked in later).
    DeviceExtern,
}

impl ReservedKind {
    /// The prefix stem, without the tag.
    pub const fn stem(self) -> &'static str {
        match self {
            ReservedKind::Kernel => "cuda_oxide_kernel_",
            ReservedKind::Device => "cuda_oxide_device_",
            ReservedKind::DeviceExtern => "cuda_oxide_device_extern_",
        }
    }

    /// Every kind, longest stem first: `DeviceExtern` must be tried before `Device`, whose stem is
    /// a prefix of it.
    pub const ALL: [ReservedKind; 3] = [
        ReservedKind::DeviceExtern,
        ReservedKind::Kernel,
        ReservedKind::Device,
    ];
}

impl fmt::Display for ReservedKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ReservedKind::Kernel => "kernel",
            ReservedKind::Device => "device function",
            ReservedKind::DeviceExtern => "device extern function",
        })
    }
}

/// Number of hex digits in a tag.
pub const TAG_LEN: usize = 8;

/// The tag of a crate: FNV-1a (32 bit) of its name, as eight lowercase hex digits.
///
/// `crate_name` is the name rustc uses (`CARGO_CRATE_NAME`, with `-` already turned into `_`).
pub fn crate_tag(crate_name: &str) -> String {
    let mut hash: u32 = 0x811c_9dc5;
    for byte in crate_name.bytes() {
        hash ^= u32::from(byte);
        hash = hash.wrapping_mul(0x0100_0193);
    }
    format!("{hash:08x}")
}

/// Builds the reserved name of `base_name` in the namespace `kind`, with `tag`.
///
/// # Panics
/// If `tag` is not eight lowercase hex digits (a programming error in the caller).
pub fn reserved_name(kind: ReservedKind, tag: &str, base_name: &str) -> String {
    assert!(is_tag(tag), "`{tag}` is not an 8-digit lowercase hex tag");
    format!("{}{tag}_{base_name}", kind.stem())
}

/// A function name recognised as reserved, split into its parts.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct ReservedName<'a> {
    /// The namespace.
    pub kind: ReservedKind,
    /// The eight hex digits between the stem and the base name.
    pub tag: &'a str,
    /// The name the user wrote.
    pub base_name: &'a str,
}

/// Recognises a reserved name: the last path segment of `name` (so `a::b::cuda_oxide_kernel_..._k`
/// works as well as the bare identifier) must be `<stem><8 hex>_<non-empty base>`.
pub fn parse(name: &str) -> Option<ReservedName<'_>> {
    let ident = name.rsplit("::").next().unwrap_or(name);
    ReservedKind::ALL.into_iter().find_map(|kind| {
        let rest = ident.strip_prefix(kind.stem())?;
        let tag = rest.get(..TAG_LEN)?;
        let base_name = rest.get(TAG_LEN..)?.strip_prefix('_')?;
        (is_tag(tag) && !base_name.is_empty()).then_some(ReservedName {
            kind,
            tag,
            base_name,
        })
    })
}

/// The kind of a reserved name, if it is one.
pub fn kind_of(name: &str) -> Option<ReservedKind> {
    parse(name).map(|r| r.kind)
}

/// The user-written name of a kernel (`None` if `name` is not a kernel name).
pub fn kernel_base_name(name: &str) -> Option<&str> {
    parse(name)
        .filter(|r| r.kind == ReservedKind::Kernel)
        .map(|r| r.base_name)
}

/// The user-written name of a `#[device]` function (`None` if `name` is not one).
pub fn device_base_name(name: &str) -> Option<&str> {
    parse(name)
        .filter(|r| r.kind == ReservedKind::Device)
        .map(|r| r.base_name)
}

/// The external symbol named by a `#[device]` extern declaration (`None` if `name` is not one).
pub fn device_extern_base_name(name: &str) -> Option<&str> {
    parse(name)
        .filter(|r| r.kind == ReservedKind::DeviceExtern)
        .map(|r| r.base_name)
}

/// Replaces the reserved last segment of a path by its base name, leaving other paths as they
/// are: `dep::cuda_oxide_device_0badf00d_helper` becomes `dep::helper`.
pub fn strip_reserved(path: &str) -> String {
    match path.rsplit_once("::") {
        Some((parent, last)) => match parse(last) {
            Some(r) => format!("{parent}::{}", r.base_name),
            None => path.to_owned(),
        },
        None => parse(path).map_or_else(|| path.to_owned(), |r| r.base_name.to_owned()),
    }
}

/// Removes every reserved prefix from a piece of text (a path with generic arguments, a message),
/// so that users read the names they wrote: `app::cuda_oxide_kernel_0badf00d_k` becomes `app::k`.
pub fn strip_all_reserved(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(pos) = rest.find("cuda_oxide_") {
        out.push_str(&rest[..pos]);
        let tail = &rest[pos..];
        let end = tail
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(tail.len());
        match parse(&tail[..end]) {
            Some(r) => out.push_str(r.base_name),
            None => out.push_str(&tail[..end]),
        }
        rest = &tail[end..];
    }
    out.push_str(rest);
    out
}

/// The ELF section in which every crate's embedded module leaves a record, so that the host
/// runtime can find the modules of a whole program (`__start_`/`__stop_` of the section): a
/// generic kernel instantiated by another crate than its own is compiled into that crate's
/// module, where its launcher looks for it after its own.
///
/// A record is [`MODULE_RECORD_WORDS`] 64-bit words: [`MODULE_RECORD_VERSION`] (0 marks a
/// placeholder to skip), the address and length of the crate's name, of its PTX (followed by a
/// NUL), of its cubin, and the address of its CPU image table.
pub const MODULE_RECORD_SECTION: &str = "cuda_oxide_modules";
/// The layout version of a module record.
pub const MODULE_RECORD_VERSION: u64 = 1;
/// The words of a module record.
pub const MODULE_RECORD_WORDS: usize = 8;

/// The PTX entry of one instantiation of a generic kernel: its base name, its generic
/// arguments made readable, and 16 hex digits that tell instantiations apart
/// (`axpy_f32_0f3c...`, `tile_16_...`, `map_closure_...`).
///
/// Both sides compute it from the kernel's function item type `F` (`axpy::<f32>`): the host
/// launcher from `core::any::type_name::<F>()` and the `Hash` of `TypeId::of::<F>()`, the
/// backend from the same two facts as rustc computes them (`type_name` and `type_id_hash`),
/// so the two always agree. `type_name` alone would not do: two closures of one function print
/// alike.
pub fn generic_kernel_entry(base_name: &str, type_name: &str, type_id: u64) -> String {
    let args = type_name.find('<').map_or("", |start| &type_name[start..]);
    format!("{base_name}_{}{type_id:016x}", readable_arguments(args))
}

/// Generic arguments as identifier characters: paths shortened to their last segment,
/// `{{closure}}` as `closure`, every other run of punctuation one `_`, at most
/// [`READABLE_ARGUMENTS_LEN`] characters; ends with `_` unless empty.
fn readable_arguments(args: &str) -> String {
    let mut out = String::new();
    let mut word = String::new();
    let mut chars = args.chars().peekable();
    let flush = |word: &mut String, out: &mut String| {
        if !word.is_empty() {
            out.push_str(word);
            out.push('_');
            word.clear();
        }
    };
    while let Some(c) = chars.next() {
        if c.is_ascii_alphanumeric() || c == '_' {
            word.push(c);
        } else if c == ':' && chars.peek() == Some(&':') {
            // A path qualifier: only the last segment stays.
            chars.next();
            word.clear();
        } else {
            flush(&mut word, &mut out);
        }
    }
    flush(&mut word, &mut out);
    if out.len() > READABLE_ARGUMENTS_LEN {
        out.truncate(READABLE_ARGUMENTS_LEN);
        out.push('_');
    }
    out
}

/// The longest readable part of a generic kernel's entry name.
pub const READABLE_ARGUMENTS_LEN: usize = 48;

/// The symbol that holds a crate's embedded PTX (NUL-terminated bytes), defined by the codegen
/// backend in an object it adds to the crate, and referenced by `#[cuda_module]`'s `load`.
///
/// The name ends in a sentence on purpose ([PTX_SYMBOL_SUFFIX]): a crate built without the
/// backend (plain `cargo build`) has no such symbol, and the linker's "undefined symbol" error
/// then reads as the explanation and the fix. Symbol names may hold any byte but NUL.
///
/// # Panics
/// If `tag` is not eight lowercase hex digits.
pub fn ptx_symbol(tag: &str) -> String {
    assert!(is_tag(tag), "`{tag}` is not an 8-digit lowercase hex tag");
    format!("{PTX_SYMBOL_STEM}{tag}{PTX_SYMBOL_SUFFIX}")
}

/// The symbol that holds the length in bytes of [`ptx_symbol`]'s PTX, without the final NUL, as a
/// `u64` in the target's byte order.
///
/// # Panics
/// If `tag` is not eight lowercase hex digits.
pub fn ptx_len_symbol(tag: &str) -> String {
    assert!(is_tag(tag), "`{tag}` is not an 8-digit lowercase hex tag");
    format!("{PTX_LEN_SYMBOL_STEM}{tag}{PTX_SYMBOL_SUFFIX}")
}

/// The symbol that holds a crate's embedded cubin: the PTX assembled by `ptxas` at build time
/// for the build's `sm_XX` (an ELF image, not NUL-terminated; empty when no `ptxas` was found).
///
/// # Panics
/// If `tag` is not eight lowercase hex digits.
pub fn cubin_symbol(tag: &str) -> String {
    assert!(is_tag(tag), "`{tag}` is not an 8-digit lowercase hex tag");
    format!("{CUBIN_SYMBOL_STEM}{tag}{PTX_SYMBOL_SUFFIX}")
}

/// The symbol that holds the length in bytes of [`cubin_symbol`]'s image, as a `u64` in the
/// target's byte order (0: no cubin).
///
/// # Panics
/// If `tag` is not eight lowercase hex digits.
pub fn cubin_len_symbol(tag: &str) -> String {
    assert!(is_tag(tag), "`{tag}` is not an 8-digit lowercase hex tag");
    format!("{CUBIN_LEN_SYMBOL_STEM}{tag}{PTX_SYMBOL_SUFFIX}")
}

/// The symbol of a crate's CPU image table: the kernels compiled for the CPU device, which
/// the host's runtime loads under `CUDA_OXIDE_DEVICE=cpu` (its layout is
/// `llvm_export::cpu_image`'s; a first `u64` of 0 when the build made no CPU flavour).
///
/// # Panics
/// If `tag` is not eight lowercase hex digits.
pub fn cpu_image_symbol(tag: &str) -> String {
    assert!(is_tag(tag), "`{tag}` is not an 8-digit lowercase hex tag");
    format!("{CPU_IMAGE_SYMBOL_STEM}{tag}{PTX_SYMBOL_SUFFIX}")
}

/// The start of [`cpu_image_symbol`].
pub const CPU_IMAGE_SYMBOL_STEM: &str = "cuda_oxide_cpu_";
/// The start of [`cubin_symbol`].
pub const CUBIN_SYMBOL_STEM: &str = "cuda_oxide_cubin_";
/// The start of [`cubin_len_symbol`].
pub const CUBIN_LEN_SYMBOL_STEM: &str = "cuda_oxide_cubin_len_";
/// The start of [`ptx_symbol`].
pub const PTX_SYMBOL_STEM: &str = "cuda_oxide_ptx_";
/// The start of [`ptx_len_symbol`].
pub const PTX_LEN_SYMBOL_STEM: &str = "cuda_oxide_ptx_len_";
/// The end of both embedded-PTX symbols: what a user reads in a link error.
pub const PTX_SYMBOL_SUFFIX: &str = " (the kernels of this crate were not compiled: build it with \
                                     `cargo oxide build` or `cargo oxide run`, not plain cargo)";

fn is_tag(tag: &str) -> bool {
    tag.len() == TAG_LEN && tag.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crate_tag_is_fnv1a_and_stable() {
        // FNV-1a of the empty string is the offset basis.
        assert_eq!(crate_tag(""), "811c9dc5");
        // Known FNV-1a 32-bit value of "a".
        assert_eq!(crate_tag("a"), "e40c292c");
        assert_ne!(crate_tag("vecadd"), crate_tag("vecadd2"));
    }

    #[test]
    fn build_then_parse_round_trips() {
        for kind in ReservedKind::ALL {
            let name = reserved_name(kind, "0badf00d", "my_fn");
            let parsed = parse(&name).expect("reserved name must parse");
            assert_eq!(parsed.kind, kind);
            assert_eq!(parsed.tag, "0badf00d");
            assert_eq!(parsed.base_name, "my_fn");
        }
    }

    #[test]
    fn extern_is_not_mistaken_for_device() {
        let name = reserved_name(ReservedKind::DeviceExtern, "12345678", "memcpy");
        assert_eq!(kind_of(&name), Some(ReservedKind::DeviceExtern));
        assert_eq!(device_base_name(&name), None);
        assert_eq!(device_extern_base_name(&name), Some("memcpy"));
    }

    #[test]
    fn base_name_may_contain_underscores_and_digits() {
        let name = reserved_name(ReservedKind::Kernel, "abcdef01", "gemm_2d_tiled");
        assert_eq!(kernel_base_name(&name), Some("gemm_2d_tiled"));
    }

    #[test]
    fn rejects_near_misses() {
        for name in [
            "cuda_oxide_kernel_",
            "cuda_oxide_kernel_1234567_x",   // 7 digits
            "cuda_oxide_kernel_123456789_x", // 9 digits: tag followed by '9', not '_'
            "cuda_oxide_kernel_ABCDEF01_x",  // upper case
            "cuda_oxide_kernel_abcdef01_",   // empty base name
            "cuda_oxide_kernel_abcdef01x",   // no separator
            "cuda_oxide_kernels_abcdef01_x",
            "vecadd",
            "",
        ] {
            assert_eq!(parse(name), None, "{name} must not parse");
        }
    }

    #[test]
    fn parses_last_path_segment() {
        let path = "dep::math::cuda_oxide_device_0badf00d_helper";
        assert_eq!(kind_of(path), Some(ReservedKind::Device));
        assert_eq!(strip_reserved(path), "dep::math::helper");
        assert_eq!(strip_reserved("cuda_oxide_kernel_0badf00d_k"), "k");
        assert_eq!(
            strip_reserved("core::num::wrapping_add"),
            "core::num::wrapping_add"
        );
    }

    #[test]
    fn strips_every_reserved_name_in_text() {
        assert_eq!(
            strip_all_reserved(
                "dep::cuda_oxide_device_0badf00d_sum::<u32> <- app::cuda_oxide_kernel_12345678_k"
            ),
            "dep::sum::<u32> <- app::k"
        );
        assert_eq!(strip_all_reserved("cuda_oxide_thing"), "cuda_oxide_thing");
    }

    #[test]
    fn ptx_symbols_name_the_fix_and_are_not_function_names() {
        let tag = crate_tag("vecadd");
        let data = ptx_symbol(&tag);
        let len = ptx_len_symbol(&tag);
        let fix = " (the kernels of this crate were not compiled: build it with `cargo oxide \
                   build` or `cargo oxide run`, not plain cargo)";
        assert_eq!(data, format!("cuda_oxide_ptx_{tag}{fix}"));
        assert_eq!(len, format!("cuda_oxide_ptx_len_{tag}{fix}"));
        assert_ne!(data, len);
        assert_eq!(parse(&data), None);
        assert_eq!(parse(&len), None);
    }

    #[test]
    fn generic_entries_are_readable_and_told_apart_by_the_type_id() {
        let entry = |name| generic_kernel_entry("axpy", name, 0x0123_4567_89ab_cdef);
        assert_eq!(
            entry("app::kernels::cuda_oxide_kernel_0badf00d_axpy<f32>"),
            "axpy_f32_0123456789abcdef"
        );
        assert_eq!(
            generic_kernel_entry(
                "tile",
                "app::k::cuda_oxide_kernel_0badf00d_tile<f64, 16>",
                1
            ),
            "tile_f64_16_0000000000000001"
        );
        assert_eq!(
            entry("app::cuda_oxide_kernel_0badf00d_axpy<app::main::{{closure}}>"),
            "axpy_closure_0123456789abcdef"
        );
        assert_eq!(
            entry("app::cuda_oxide_kernel_0badf00d_axpy<(alloc::vec::Vec<f32>, &[u8; 4])>"),
            "axpy_Vec_f32_u8_4_0123456789abcdef"
        );
        let long = entry(&format!(
            "k<{}>",
            "very_long_type_name::".repeat(2) + &"X".repeat(90)
        ));
        assert_eq!(
            long.len(),
            "axpy_".len() + READABLE_ARGUMENTS_LEN + 1 + 16,
            "{long}"
        );
        assert_ne!(
            generic_kernel_entry("k", "k<f32>", 1),
            generic_kernel_entry("k", "k<f32>", 2)
        );
    }

    #[test]
    #[should_panic(expected = "not an 8-digit")]
    fn reserved_name_checks_tag() {
        reserved_name(ReservedKind::Kernel, "xyz", "k");
    }
}
