//! LLVM type syntax for pliron builtin and LLVM-dialect types.

use std::collections::HashSet;

use pliron::{
    builtin::types::{BF16Type, FP16Type, FP32Type, FP64Type, IntegerType},
    context::Context,
    printable::Printable,
    r#type::TypeHandle,
};
use pliron_llvm::types::{
    ArrayType, FuncType, PointerType, StructLayout, StructType, VectorType, VoidType,
};

use crate::{error::ExportError, naming::type_ref};

/// Writes types, remembering the named structs it meets so that their definitions can be
/// emitted once at the top of the module.
#[derive(Default)]
pub(crate) struct TypeWriter {
    named: Vec<(String, TypeHandle)>,
    seen: HashSet<String>,
}

impl TypeWriter {
    /// The LLVM spelling of `ty` (`i32`, `ptr addrspace(3)`, `{ i32, [4 x float] }`, ...).
    pub(crate) fn write(&mut self, ctx: &Context, ty: TypeHandle) -> Result<String, ExportError> {
        let t = ty.deref(ctx);
        if let Some(int) = t.downcast_ref::<IntegerType>() {
            return Ok(format!("i{}", int.width()));
        }
        if t.is::<FP32Type>() {
            return Ok("float".into());
        }
        if t.is::<FP64Type>() {
            return Ok("double".into());
        }
        if t.is::<FP16Type>() {
            return Ok("half".into());
        }
        if t.is::<BF16Type>() {
            return Ok("bfloat".into());
        }
        if t.is::<VoidType>() {
            return Ok("void".into());
        }
        if let Some(ptr) = t.downcast_ref::<PointerType>() {
            return Ok(match ptr.address_space() {
                0 => "ptr".into(),
                n => format!("ptr addrspace({n})"),
            });
        }
        if let Some(arr) = t.downcast_ref::<ArrayType>() {
            let (elem, size) = (arr.elem_type(), arr.size());
            drop(t);
            return Ok(format!("[{size} x {}]", self.write(ctx, elem)?));
        }
        if let Some(vec) = t.downcast_ref::<VectorType>() {
            let (elem, n, scalable) = (vec.elem_type(), vec.num_elements(), vec.is_scalable());
            drop(t);
            let elem = self.write(ctx, elem)?;
            return Ok(if scalable {
                format!("<vscale x {n} x {elem}>")
            } else {
                format!("<{n} x {elem}>")
            });
        }
        if let Some(st) = t.downcast_ref::<StructType>() {
            if let Some(name) = st.name() {
                let name = String::from(name);
                if self.seen.insert(name.clone()) {
                    self.named.push((name.clone(), ty));
                }
                return Ok(type_ref(&name));
            }
            drop(t);
            return self.struct_body(ctx, ty);
        }
        if let Some(func) = t.downcast_ref::<FuncType>() {
            let (res, args, var_arg) = func_parts(func);
            drop(t);
            return self.function(ctx, res, &args, var_arg);
        }
        drop(t);
        Err(ExportError::UnsupportedType {
            ty: ty.disp(ctx).to_string(),
        })
    }

    /// `{ a, b }` or `<{ a, b }>` for a struct with a body.
    fn struct_body(&mut self, ctx: &Context, ty: TypeHandle) -> Result<String, ExportError> {
        let (fields, packed) = {
            let t = ty.deref(ctx);
            let st = t
                .downcast_ref::<StructType>()
                .expect("struct_body called on a struct type");
            (
                st.fields().collect::<Vec<_>>(),
                st.layout() == StructLayout::Packed,
            )
        };
        let fields = fields
            .into_iter()
            .map(|f| self.write(ctx, f))
            .collect::<Result<Vec<_>, _>>()?;
        let body = if fields.is_empty() {
            "{}".to_string()
        } else {
            format!("{{ {} }}", fields.join(", "))
        };
        Ok(if packed { format!("<{body}>") } else { body })
    }

    /// `ret (a, b, ...)`: the spelling of a function type.
    pub(crate) fn function(
        &mut self,
        ctx: &Context,
        res: TypeHandle,
        args: &[TypeHandle],
        var_arg: bool,
    ) -> Result<String, ExportError> {
        let mut params = args
            .iter()
            .map(|a| self.write(ctx, *a))
            .collect::<Result<Vec<_>, _>>()?;
        if var_arg {
            params.push("...".into());
        }
        Ok(format!("{} ({})", self.write(ctx, res)?, params.join(", ")))
    }

    /// `%name = type { ... }` lines for every named struct met so far (and those they use).
    pub(crate) fn definitions(&mut self, ctx: &Context) -> Result<String, ExportError> {
        let mut out = String::new();
        let mut i = 0;
        while i < self.named.len() {
            let (name, ty) = self.named[i].clone();
            let opaque = ty
                .deref(ctx)
                .downcast_ref::<StructType>()
                .is_some_and(StructType::is_opaque);
            let body = if opaque {
                "opaque".to_string()
            } else {
                self.struct_body(ctx, ty)?
            };
            out.push_str(&format!("{} = type {body}\n", type_ref(&name)));
            i += 1;
        }
        Ok(out)
    }
}

/// Result type, argument types and variadicity of a function type.
pub(crate) fn func_parts(func: &FuncType) -> (TypeHandle, Vec<TypeHandle>, bool) {
    use pliron::builtin::type_interfaces::FunctionTypeInterface;
    (func.result_type(), func.arg_types(), func.is_var_arg())
}

/// Result type, argument types and variadicity of `ty`, which must be an `llvm.func` type.
pub(crate) fn func_signature(
    ctx: &Context,
    ty: TypeHandle,
    op: &str,
) -> Result<(TypeHandle, Vec<TypeHandle>, bool), ExportError> {
    let t = ty.deref(ctx);
    match t.downcast_ref::<FuncType>() {
        Some(ft) => Ok(func_parts(ft)),
        None => {
            drop(t);
            Err(ExportError::malformed(
                op,
                format!("`{}` is not an llvm.func type", ty.disp(ctx)),
            ))
        }
    }
}

/// Whether `ty` is LLVM's `void`.
pub(crate) fn is_void(ctx: &Context, ty: TypeHandle) -> bool {
    ty.deref(ctx).is::<VoidType>()
}

/// Natural alignment in bytes of a scalar type under the NVPTX data layout, for atomics
/// written without an explicit alignment.
pub(crate) fn scalar_align(ctx: &Context, ty: TypeHandle) -> Option<u32> {
    let t = ty.deref(ctx);
    if let Some(int) = t.downcast_ref::<IntegerType>() {
        return Some(int.width().div_ceil(8).next_power_of_two());
    }
    if t.is::<FP16Type>() || t.is::<BF16Type>() {
        return Some(2);
    }
    if t.is::<FP32Type>() {
        return Some(4);
    }
    if t.is::<FP64Type>() {
        return Some(8);
    }
    if let Some(ptr) = t.downcast_ref::<PointerType>() {
        return Some(if ptr.address_space() == 6 { 4 } else { 8 });
    }
    None
}
