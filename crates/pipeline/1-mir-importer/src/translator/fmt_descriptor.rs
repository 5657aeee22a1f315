//! Formatting trait methods in device code: descriptors for panic messages.
//!
//! `format_args!` stores, for each argument, the address of the value and a pointer to the
//! formatting trait method of its type (`<T as Display>::fmt`); a `&dyn Debug` carries that
//! method in its vtable. A panic's message is formatted by the host from the record the device
//! fills (`cuda_device::panic`), which needs, for each argument, a small constant that describes
//! `T` (the layout is `cuda_device::panic::descriptor`): which trait, what kind of value
//! (integer, float, `bool`, `char`, `&str`, trait object, nested `Arguments`, or a type without
//! device formatting, with its name), its size, and how many references lead to it.
//!
//! With panic messages, where device code takes the address of such a method it gets the
//! address of its descriptor instead, and the method is not compiled: no formatting code
//! reaches the GPU. Device code that formats for real (`write!` into a buffer: the collector
//! finds a function that builds a `core::fmt::Formatter`) calls the methods through those
//! addresses, so there they stay the compiled methods, and the module's table of formatting
//! methods (`cuda_device::panic::FORMATTING_METHODS`, written by
//! [super::global::GlobalRegistry::finish]) gives the panic recorder each one's descriptor.

use rustc_middle::ty::{self, TyCtxt};

/// `cuda_device::panic::layout`'s trait codes, by the trait's path.
const TRAITS: &[(&str, u8)] = &[
    ("core::fmt::Display", 1),
    ("core::fmt::Debug", 2),
    ("core::fmt::LowerHex", 3),
    ("core::fmt::UpperHex", 4),
    ("core::fmt::Octal", 5),
    ("core::fmt::Binary", 6),
    ("core::fmt::LowerExp", 7),
    ("core::fmt::UpperExp", 8),
    ("core::fmt::Pointer", 9),
];
const TRAIT_POINTER: u8 = 9;

const KIND_UINT: u8 = 1;
const KIND_SINT: u8 = 2;
const KIND_FLOAT: u8 = 3;
const KIND_BOOL: u8 = 4;
const KIND_CHAR: u8 = 5;
const KIND_STR: u8 = 6;
const KIND_DYN: u8 = 7;
const KIND_ARGUMENTS: u8 = 8;
const KIND_OPAQUE: u8 = 9;
const KIND_POINTER: u8 = 10;

/// The trait code of the formatting trait whose `fmt` `def_id` is (the trait's method or an
/// impl's), and the type it formats (`Self`) under `args`.
fn fmt_method<'tcx>(
    tcx: TyCtxt<'tcx>,
    def_id: rustc_hir::def_id::DefId,
    args: ty::GenericArgsRef<'tcx>,
) -> Option<(u8, ty::Ty<'tcx>)> {
    if tcx
        .opt_item_name(def_id)
        .is_none_or(|name| name.as_str() != "fmt")
    {
        return None;
    }
    let (trait_id, self_ty) = if let Some(trait_id) = tcx.trait_of_assoc(def_id) {
        (trait_id, args.type_at(0))
    } else {
        let trait_item = tcx.trait_item_of(def_id)?;
        let trait_id = tcx.trait_of_assoc(trait_item)?;
        let impl_id = tcx.impl_of_assoc(def_id)?;
        let trait_ref = tcx
            .impl_trait_ref(impl_id)
            .instantiate(tcx, args)
            .skip_normalization();
        (trait_id, trait_ref.self_ty())
    };
    if tcx.crate_name(trait_id.krate).as_str() != "core" {
        return None;
    }
    let path = ty::print::with_no_visible_paths!(ty::print::with_no_trimmed_paths!(
        ty::print::with_resolve_crate_name!(tcx.def_path_str(trait_id))
    ));
    let code = TRAITS.iter().find(|(p, _)| *p == path)?.1;
    Some((code, self_ty))
}

/// The descriptor bytes for `instance` when it is a formatting trait's `fmt` method.
pub fn descriptor_of<'tcx>(tcx: TyCtxt<'tcx>, instance: ty::Instance<'tcx>) -> Option<Vec<u8>> {
    let ty::InstanceKind::Item(def_id) = instance.def else {
        return None;
    };
    let (code, self_ty) = fmt_method(tcx, def_id, instance.args)?;
    let self_ty = tcx.normalize_erasing_regions(
        ty::TypingEnv::fully_monomorphized(),
        ty::Unnormalized::new(self_ty),
    );
    Some(describe(tcx, code, self_ty))
}

/// Whether `instance` is a formatting trait's `fmt` method.
pub fn is_fmt_method<'tcx>(tcx: TyCtxt<'tcx>, instance: ty::Instance<'tcx>) -> bool {
    match instance.def {
        ty::InstanceKind::Item(def_id) => fmt_method(tcx, def_id, instance.args).is_some(),
        _ => false,
    }
}

/// The descriptor bytes for a function of `rustc_public`, when it is a formatting trait's
/// `fmt` method.
pub fn descriptor_of_stable(instance: &rustc_public::mir::mono::Instance) -> Option<Vec<u8>> {
    ty::tls::with(|tcx| {
        let internal = rustc_public::rustc_internal::internal(tcx, *instance);
        descriptor_of(tcx, internal)
    })
}

/// The descriptor of `ty` formatted with trait `code`.
fn describe<'tcx>(tcx: TyCtxt<'tcx>, code: u8, ty: ty::Ty<'tcx>) -> Vec<u8> {
    let mut derefs: u8 = 0;
    let mut base = ty;
    let (kind, size) = loop {
        match *base.kind() {
            ty::Ref(_, inner, _) | ty::RawPtr(inner, _) if code == TRAIT_POINTER => {
                let _ = inner;
                derefs += 1;
                break (KIND_POINTER, 8);
            }
            ty::Ref(_, inner, _) => match *inner.kind() {
                // The reference itself is the value (a fat pointer).
                ty::Str => break (KIND_STR, 16),
                ty::Dynamic(..) => break (KIND_DYN, 16),
                _ => {
                    derefs += 1;
                    base = inner;
                }
            },
            ty::Uint(u) => break (KIND_UINT, int_size(u.bit_width())),
            ty::Int(i) => break (KIND_SINT, int_size(i.bit_width())),
            ty::Float(ty::FloatTy::F32) => break (KIND_FLOAT, 4),
            ty::Float(ty::FloatTy::F64) => break (KIND_FLOAT, 8),
            ty::Bool => break (KIND_BOOL, 1),
            ty::Char => break (KIND_CHAR, 4),
            ty::Adt(def, _)
                if tcx.crate_name(def.did().krate).as_str() == "core"
                    && tcx
                        .opt_item_name(def.did())
                        .is_some_and(|name| name.as_str() == "Arguments") =>
            {
                break (KIND_ARGUMENTS, 16);
            }
            _ => break (KIND_OPAQUE, 0),
        }
    };
    let name = if kind == KIND_OPAQUE {
        // Full paths: trimmed ones make rustc expect a diagnostic.
        ty::print::with_no_trimmed_paths!(base.to_string())
    } else {
        String::new()
    };
    encode(code, kind, size, derefs, &name)
}

/// The descriptor of a formatting method missing from the module's table: a value of an
/// unknown type (which the table never leaves out, as every address taken is entered).
pub fn unknown_descriptor() -> Vec<u8> {
    encode(1, KIND_OPAQUE, 0, 0, "a value of unknown type")
}

/// A descriptor's bytes, in `cuda_device::panic::descriptor`'s layout: trait, kind, size,
/// derefs, the name's length (`u32`), the name.
fn encode(code: u8, kind: u8, size: u8, derefs: u8, name: &str) -> Vec<u8> {
    let mut bytes = vec![code, kind, size, derefs];
    bytes.extend_from_slice(&(name.len() as u32).to_le_bytes());
    bytes.extend_from_slice(name.as_bytes());
    bytes
}

/// The size in bytes of an integer of `bits` bits (`usize`/`isize`: 8, as on the host).
fn int_size(bits: Option<u64>) -> u8 {
    bits.map_or(8, |b| (b / 8) as u8)
}
