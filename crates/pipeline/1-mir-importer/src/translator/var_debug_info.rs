//! The named variables of a MIR body (`var_debug_info`) for the debugger: which local holds
//! which Rust variable, and the DWARF type it is shown with. Used only with the full debug
//! tier (`--device-debug full`), where such a local keeps its stack slot.

use std::collections::HashMap;

use nvptx_attrs::debug_variable::{DebugType, DebugVariable};
use rustc_public::CrateDef;
use rustc_public::mir::Mutability;
use rustc_public::mir::{Body, Local, VarDebugInfo};
use rustc_public::ty::{FloatTy, IntTy, RigidTy, Ty, TyKind, UintTy};

use super::types::{is_disjoint_slice, layout};

/// The named variable each local holds, with its type as the debugger shows it: locals that
/// hold exactly one whole variable of a scalar or thin-pointer type. A variable in a part of
/// a local, a constant, a variable of an aggregate type, or a parameter of a function MIR
/// inlined here (its position is not one of this function's) is left out.
pub(crate) fn described_locals(body: &Body) -> HashMap<Local, (DebugVariable, &VarDebugInfo)> {
    let num_args = body.arg_locals().len();
    let mut out = HashMap::new();
    for info in &body.var_debug_info {
        if info.composite.is_some() {
            continue;
        }
        let Some(local) = info.local() else {
            continue;
        };
        let is_param = (1..=num_args).contains(&local);
        let arg = match info.argument_index {
            Some(index) if is_param => Some(u32::from(index)),
            Some(_) => continue,
            None => None,
        };
        let Some(ty) = debug_type(body.locals()[local].ty) else {
            continue;
        };
        out.entry(local).or_insert((
            DebugVariable {
                name: info.name.clone(),
                arg,
                ty,
            },
            info,
        ));
    }
    out
}

/// The DWARF type of `ty`: integers, `bool`, `char`, floats, thin pointers and references
/// (to such a scalar, or untyped), slice references and `DisjointSlice`s (`data_ptr`,
/// `length`); `None` for anything else.
pub(crate) fn debug_type(ty: Ty) -> Option<DebugType> {
    if let Some(scalar) = scalar_type(ty) {
        return Some(scalar);
    }
    let size = layout(ty).ok()?.size.bytes();
    match ty.kind() {
        TyKind::RigidTy(RigidTy::RawPtr(pointee, _) | RigidTy::Ref(_, pointee, _)) => {
            let slice_elem = match pointee.kind() {
                TyKind::RigidTy(RigidTy::Slice(elem)) => Some(elem),
                TyKind::RigidTy(RigidTy::Str) => Some(Ty::unsigned_ty(UintTy::U8)),
                _ => None,
            };
            match slice_elem {
                // A slice is held as `{ ptr, i64 }`.
                Some(elem) if size == 16 => Some(DebugType::Slice(
                    rust_name(ty),
                    scalar_type(elem).map(Box::new),
                )),
                Some(_) => None,
                // Only a thin pointer: a `dyn` reference is two words, and not described.
                None => (size == 8)
                    .then(|| DebugType::Pointer(rust_name(ty), scalar_type(pointee).map(Box::new))),
            }
        }
        TyKind::RigidTy(RigidTy::Adt(def, args)) if is_disjoint_slice(def) => {
            // Held as `{ ptr, i64 }` like a slice (its dialect-mir type).
            let elem = args.0.first().and_then(|arg| arg.ty()).copied()?;
            Some(DebugType::Slice(
                rust_name(ty),
                scalar_type(elem).map(Box::new),
            ))
        }
        _ => None,
    }
}

/// The name of `ty` as Rust writes it, with ADTs by their last path segment and `_` for what
/// is not spelled out (tuples, closures, ...). Not `Ty`'s `Display`: that asks rustc for
/// trimmed paths, which it allows only while it reports a diagnostic.
fn rust_name(ty: Ty) -> String {
    if let Some(scalar) = scalar_type(ty) {
        return match scalar {
            DebugType::Signed(name, _)
            | DebugType::Unsigned(name, _)
            | DebugType::Float(name, _) => name,
            DebugType::Bool => "bool".into(),
            DebugType::Char => "char".into(),
            DebugType::Pointer(..) | DebugType::Slice(..) => "_".into(),
        };
    }
    let TyKind::RigidTy(rigid) = ty.kind() else {
        return "_".into();
    };
    match rigid {
        RigidTy::Str => "str".into(),
        RigidTy::Slice(elem) => format!("[{}]", rust_name(elem)),
        RigidTy::RawPtr(pointee, Mutability::Mut) => format!("*mut {}", rust_name(pointee)),
        RigidTy::RawPtr(pointee, Mutability::Not) => format!("*const {}", rust_name(pointee)),
        RigidTy::Ref(_, pointee, Mutability::Mut) => format!("&mut {}", rust_name(pointee)),
        RigidTy::Ref(_, pointee, Mutability::Not) => format!("&{}", rust_name(pointee)),
        RigidTy::Adt(def, args) => {
            let types: Vec<String> = args
                .0
                .iter()
                .filter_map(|a| a.ty())
                .map(|t| rust_name(*t))
                .collect();
            if types.is_empty() {
                def.trimmed_name()
            } else {
                format!("{}<{}>", def.trimmed_name(), types.join(", "))
            }
        }
        _ => "_".into(),
    }
}

fn scalar_type(ty: Ty) -> Option<DebugType> {
    let TyKind::RigidTy(rigid) = ty.kind() else {
        return None;
    };
    Some(match rigid {
        RigidTy::Bool => DebugType::Bool,
        RigidTy::Char => DebugType::Char,
        RigidTy::Int(int) => {
            let (name, bits) = match int {
                IntTy::I8 => ("i8", 8),
                IntTy::I16 => ("i16", 16),
                IntTy::I32 => ("i32", 32),
                IntTy::I64 => ("i64", 64),
                IntTy::I128 => ("i128", 128),
                IntTy::Isize => ("isize", 64),
            };
            DebugType::Signed(name.into(), bits)
        }
        RigidTy::Uint(uint) => {
            let (name, bits) = match uint {
                UintTy::U8 => ("u8", 8),
                UintTy::U16 => ("u16", 16),
                UintTy::U32 => ("u32", 32),
                UintTy::U64 => ("u64", 64),
                UintTy::U128 => ("u128", 128),
                UintTy::Usize => ("usize", 64),
            };
            DebugType::Unsigned(name.into(), bits)
        }
        RigidTy::Float(float) => {
            let (name, bits) = match float {
                FloatTy::F16 => ("f16", 16),
                FloatTy::F32 => ("f32", 32),
                FloatTy::F64 => ("f64", 64),
                FloatTy::F128 => ("f128", 128),
            };
            DebugType::Float(name.into(), bits)
        }
        _ => return None,
    })
}
