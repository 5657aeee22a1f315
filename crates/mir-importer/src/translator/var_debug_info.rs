//! The named variables of a MIR body (`var_debug_info`) for the debugger: which local holds
//! which Rust variable, and the DWARF type it is shown with. Used only with the full debug
//! tier (`--device-debug full`), where such a local keeps its stack slot.

use std::collections::HashMap;

use llvm_export::debug_info::{DebugType, DebugVariable};
use rustc_public::mir::{Body, Local, VarDebugInfo};
use rustc_public::ty::{FloatTy, IntTy, RigidTy, Ty, TyKind, UintTy};

use super::types::layout;

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

/// The DWARF type of `ty`: integers, `bool`, `char`, floats, and thin pointers and
/// references (to such a scalar, or untyped); `None` for anything else.
pub(crate) fn debug_type(ty: Ty) -> Option<DebugType> {
    if let Some(scalar) = scalar_type(ty) {
        return Some(scalar);
    }
    match ty.kind() {
        TyKind::RigidTy(RigidTy::RawPtr(pointee, _) | RigidTy::Ref(_, pointee, _)) => {
            // Only a thin pointer: a slice, `str` or `dyn` reference is two words.
            let thin = layout(ty).ok()?.size.bytes() == 8;
            thin.then(|| DebugType::Pointer(ty.to_string(), scalar_type(pointee).map(Box::new)))
        }
        _ => None,
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
