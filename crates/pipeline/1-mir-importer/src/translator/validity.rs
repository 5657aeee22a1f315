//! Whether a type allows a value: what `assert_inhabited`, `assert_zero_valid` and
//! `assert_mem_uninitialized_valid` check (behind `mem::zeroed`, `MaybeUninit::uninit().assume_init()`
//! in old code, ...). rustc's backends decide it at compile time and panic where the type does
//! not allow it; this follows rustc's "lax" check (`might_permit_raw_init_lax`): a scalar's
//! valid range must hold the fill value, references to non-zero-sized types are refused,
//! fields are checked recursively, and enums with several variants are given the benefit of
//! the doubt.

use rustc_public::abi::{FieldsShape, Primitive, Scalar, ValueAbi, VariantsShape};
use rustc_public::ty::{AdtKind, GenericArgKind, RigidTy, Ty, TyKind};
use rustc_public_bridge::IndexedVal;

use super::error::TResult;
use super::types::layout;

/// The validity requirement an `assert_*` intrinsic checks for its type argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Validity {
    /// `assert_inhabited`: some value of the type exists.
    Inhabited,
    /// `assert_zero_valid`: all-zero bytes are a value of the type (`mem::zeroed`).
    Zeroed,
    /// `assert_mem_uninitialized_valid`: the bytes `mem::uninitialized` writes (0x01) are one.
    Uninitialized,
}

/// Whether `ty` allows what `validity` asks for.
pub fn allows(ty: Ty, validity: Validity) -> TResult<bool> {
    match validity {
        Validity::Inhabited => is_inhabited(ty),
        Validity::Zeroed => allows_fill(ty, 0x00),
        Validity::Uninitialized => allows_fill(ty, 0x01),
    }
}

/// Whether some value of `ty` exists.
fn is_inhabited(ty: Ty) -> TResult<bool> {
    let TyKind::RigidTy(rigid) = ty.kind() else {
        return Ok(true);
    };
    Ok(match rigid {
        RigidTy::Never => false,
        RigidTy::Tuple(fields) => all_inhabited(&fields)?,
        RigidTy::Array(elem, len) => {
            len.eval_target_usize().is_ok_and(|n| n == 0) || is_inhabited(elem)?
        }
        RigidTy::Closure(_, args) => match args.0.last() {
            Some(GenericArgKind::Type(upvars)) => is_inhabited(*upvars)?,
            _ => true,
        },
        RigidTy::Adt(def, args) => match def.kind() {
            AdtKind::Union => true,
            AdtKind::Struct => all_inhabited(&field_types(def.variants()[0], &args))?,
            AdtKind::Enum => {
                let mut any = false;
                for variant in def.variants() {
                    any |= all_inhabited(&field_types(variant, &args))?;
                }
                any
            }
        },
        _ => true,
    })
}

fn all_inhabited(tys: &[Ty]) -> TResult<bool> {
    for &ty in tys {
        if !is_inhabited(ty)? {
            return Ok(false);
        }
    }
    Ok(true)
}

fn field_types(
    variant: rustc_public::ty::VariantDef,
    args: &rustc_public::ty::GenericArgs,
) -> Vec<Ty> {
    variant
        .fields()
        .iter()
        .map(|field| field.ty_with_args(args))
        .collect()
}

/// Whether every byte of `ty` set to `byte` is a valid value of `ty`.
fn allows_fill(ty: Ty, byte: u8) -> TResult<bool> {
    if !is_inhabited(ty)? {
        return Ok(false);
    }
    let shape = layout(ty)?;
    let scalar_ok = |scalar: &Scalar| match scalar {
        Scalar::Initialized { value, valid_range } => {
            valid_range.contains(fill_value(*value, byte))
        }
        Scalar::Union { .. } => true,
    };
    let abi_ok = match &shape.abi {
        ValueAbi::Scalar(s) => scalar_ok(s),
        ValueAbi::ScalarPair(a, b) => scalar_ok(a) && scalar_ok(b),
        ValueAbi::Vector { element, count } | ValueAbi::ScalableVector { element, count, .. } => {
            *count == 0 || scalar_ok(element)
        }
        ValueAbi::Aggregate { .. } => true,
    };
    if !abi_ok {
        return Ok(false);
    }
    if let TyKind::RigidTy(RigidTy::Ref(_, pointee, _)) = ty.kind() {
        // A reference must be aligned and dereferenceable: a fake integer address is neither.
        let pointee = layout(pointee)?;
        if pointee.abi_align > 1 || pointee.size.bytes() > 0 {
            return Ok(false);
        }
    }
    let variant = match &shape.variants {
        VariantsShape::Empty => return Ok(false),
        // Only the tag is known; whether the fill is a valid variant is not checked.
        VariantsShape::Multiple { .. } => return Ok(true),
        VariantsShape::Single { index } => index.to_index(),
    };
    match (&shape.fields, ty.kind()) {
        (FieldsShape::Array { count, .. }, TyKind::RigidTy(RigidTy::Array(elem, _))) => {
            Ok(*count == 0 || allows_fill(elem, byte)?)
        }
        (FieldsShape::Arbitrary { .. }, TyKind::RigidTy(rigid)) => {
            for field in fields_of(rigid, variant) {
                if !allows_fill(field, byte)? {
                    return Ok(false);
                }
            }
            Ok(true)
        }
        _ => Ok(true),
    }
}

/// The field types of a struct-like type (for an enum laid out as its variant `variant`, that
/// variant's).
fn fields_of(rigid: RigidTy, variant: usize) -> Vec<Ty> {
    match rigid {
        RigidTy::Tuple(fields) => fields,
        RigidTy::Closure(_, args) => match args.0.last() {
            Some(GenericArgKind::Type(upvars)) => vec![*upvars],
            _ => vec![],
        },
        RigidTy::Adt(def, args) => match def.kind() {
            AdtKind::Struct => field_types(def.variants()[0], &args),
            AdtKind::Enum => def
                .variants()
                .get(variant)
                .map(|variant| field_types(*variant, &args))
                .unwrap_or_default(),
            AdtKind::Union => vec![],
        },
        _ => vec![],
    }
}

/// The bits of a scalar of `primitive` whose every byte is `byte`.
fn fill_value(primitive: Primitive, byte: u8) -> u128 {
    let bytes = match primitive {
        Primitive::Int { length, .. } => length.bits() / 8,
        Primitive::Float { length } => length.bits() / 8,
        Primitive::Pointer(_) => 8,
    };
    (0..bytes).fold(0u128, |acc, _| (acc << 8) | u128::from(byte))
}
