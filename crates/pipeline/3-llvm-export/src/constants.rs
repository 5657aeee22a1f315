//! LLVM constant syntax for pliron constant attributes (integers, floats in LLVM's exact forms,
//! aggregates, byte strings, splats, symbol addresses, zero/undef/poison).

use pliron::{
    attribute::Attribute,
    builtin::{
        attributes::{FPBFloatAttr, FPDoubleAttr, FPHalfAttr, FPSingleAttr, IntegerAttr},
        types::{BF16Type, FP16Type, FP32Type, FP64Type, IntegerType},
    },
    context::Context,
    r#type::TypeHandle,
    utils::apfloat::Float,
};
use pliron_llvm::{
    attributes::{
        AggregateAttr, BytesAttr, PoisonAttr, SplatAttr, SymbolAddrAttr, UndefAttr, ZeroAttr,
    },
    types::{ArrayType, PointerType, StructType, VectorType},
};

use crate::{
    error::ExportError,
    naming::{escape_bytes, global_ref},
    symbols::Symbols,
    types::TypeWriter,
};

/// Writes constants; `op` names the op being exported, for error messages.
pub(crate) struct ConstWriter<'a> {
    pub(crate) ctx: &'a Context,
    pub(crate) types: &'a mut TypeWriter,
    pub(crate) symbols: &'a Symbols,
    pub(crate) op: &'a str,
}

impl ConstWriter<'_> {
    /// `attr` as an LLVM constant of type `ty`, without the type (`42`, `0x3FB99999A0000000`).
    pub(crate) fn value(
        &mut self,
        attr: &dyn Attribute,
        ty: TypeHandle,
    ) -> Result<String, ExportError> {
        if let Some(int) = attr.downcast_ref::<IntegerAttr>() {
            return Ok(int_text(int));
        }
        if let Some(text) = float_text(attr) {
            return Ok(text);
        }
        if attr.is::<ZeroAttr>() {
            return Ok(zero_text(self.ctx, ty));
        }
        if attr.is::<UndefAttr>() {
            return Ok("undef".into());
        }
        if attr.is::<PoisonAttr>() {
            return Ok("poison".into());
        }
        if let Some(bytes) = attr.downcast_ref::<BytesAttr>() {
            return Ok(format!("c\"{}\"", escape_bytes(bytes.as_ref())));
        }
        if let Some(sym) = attr.downcast_ref::<SymbolAddrAttr>() {
            let symbol = String::from(sym.symbol().clone());
            return match self.symbols.get(&symbol) {
                Some(s) => Ok(global_ref(&s.llvm_name)),
                None => Err(ExportError::UnknownSymbol {
                    op: self.op.to_string(),
                    symbol,
                }),
            };
        }
        if let Some(splat) = attr.downcast_ref::<SplatAttr>() {
            let elem_ty = splat.ty().deref(self.ctx).elem_type();
            let elem: &dyn Attribute = splat.element();
            return Ok(format!("splat ({})", self.typed(elem, elem_ty)?));
        }
        if let Some(aggr) = attr.downcast_ref::<AggregateAttr>() {
            return self.aggregate(aggr, ty);
        }
        Err(self.unsupported(attr, "not a constant the exporter knows"))
    }

    /// `T value` for `attr` of type `ty`.
    pub(crate) fn typed(
        &mut self,
        attr: &dyn Attribute,
        ty: TypeHandle,
    ) -> Result<String, ExportError> {
        let value = self.value(attr, ty)?;
        Ok(format!("{} {value}", self.types.write(self.ctx, ty)?))
    }

    fn aggregate(&mut self, aggr: &AggregateAttr, ty: TypeHandle) -> Result<String, ExportError> {
        let ctx = self.ctx;
        let elements = aggr.elements();
        let (elem_tys, open, close): (Vec<TypeHandle>, &str, &str) = {
            let t = ty.deref(ctx);
            if let Some(arr) = t.downcast_ref::<ArrayType>() {
                (vec![arr.elem_type(); elements.len()], "[", "]")
            } else if let Some(vec) = t.downcast_ref::<VectorType>() {
                (vec![vec.elem_type(); elements.len()], "<", ">")
            } else if let Some(st) = t.downcast_ref::<StructType>().filter(|s| !s.is_opaque()) {
                let packed = st.layout() == pliron_llvm::types::StructLayout::Packed;
                let fields: Vec<_> = st.fields().collect();
                if packed {
                    (fields, "<{", "}>")
                } else {
                    (fields, "{", "}")
                }
            } else {
                drop(t);
                return Err(self.unsupported(aggr, "aggregate of a non-aggregate type"));
            }
        };
        if elem_tys.len() != elements.len() {
            return Err(self.unsupported(aggr, "element count does not match its type"));
        }
        let items = elements
            .iter()
            .zip(elem_tys)
            .map(|(e, t)| {
                let e: &dyn Attribute = &**e;
                self.typed(e, t)
            })
            .collect::<Result<Vec<_>, _>>()?;
        let items = items.join(", ");
        Ok(match (open, items.is_empty()) {
            ("{" | "<{", false) => format!("{open} {items} {close}"),
            _ => format!("{open}{items}{close}"),
        })
    }

    fn unsupported(&self, attr: &dyn Attribute, reason: &str) -> ExportError {
        ExportError::UnsupportedAttr {
            op: self.op.to_string(),
            attr: format!("`{}`", attr.disp(self.ctx)),
            reason: reason.to_string(),
        }
    }
}

/// An integer constant: `true`/`false` for `i1`, signed decimal otherwise.
pub(crate) fn int_text(int: &IntegerAttr) -> String {
    let value = int.value();
    if value.bw() == 1 {
        return if value.is_zero() { "false" } else { "true" }.into();
    }
    value.to_string_signed_decimal()
}

/// The zero of `ty`: `0`, `0.0`, `null` or `zeroinitializer`.
pub(crate) fn zero_text(ctx: &Context, ty: TypeHandle) -> String {
    let t = ty.deref(ctx);
    if let Some(int) = t.downcast_ref::<IntegerType>() {
        return if int.width() == 1 { "false" } else { "0" }.into();
    }
    if t.is::<FP32Type>() || t.is::<FP64Type>() || t.is::<FP16Type>() || t.is::<BF16Type>() {
        return "0.0".into();
    }
    if t.is::<PointerType>() {
        return "null".into();
    }
    "zeroinitializer".into()
}

/// A float constant in a form LLVM reads back bit-exactly, or `None` if `attr` is no float.
pub(crate) fn float_text(attr: &dyn Attribute) -> Option<String> {
    if let Some(f) = attr.downcast_ref::<FPSingleAttr>() {
        return Some(single_text(f.0.to_bits() as u32));
    }
    if let Some(f) = attr.downcast_ref::<FPDoubleAttr>() {
        return Some(double_text(f.0.to_bits() as u64));
    }
    if let Some(f) = attr.downcast_ref::<FPHalfAttr>() {
        return Some(format!("0xH{:04X}", f.0.to_bits() as u16));
    }
    if let Some(f) = attr.downcast_ref::<FPBFloatAttr>() {
        return Some(format!("0xR{:04X}", f.0.to_bits() as u16));
    }
    None
}

/// A short decimal spelling of `value` when it has one that reads back exactly, else `None`.
fn short_decimal(value: f64) -> Option<String> {
    if !value.is_finite() {
        return None;
    }
    let text = format!("{value:?}");
    (text.contains('.') && !text.contains('e') && text.len() <= 12).then_some(text)
}

/// A `double` constant: short decimal when exact, else LLVM's `0x` + 16 hex digits.
pub(crate) fn double_text(bits: u64) -> String {
    short_decimal(f64::from_bits(bits)).unwrap_or_else(|| format!("0x{bits:016X}"))
}

/// A `float` constant. LLVM writes floats as the hex of the equal `double`; NaN payloads are
/// moved into the double's significand bit for bit, as LLVM's parser expects.
pub(crate) fn single_text(bits: u32) -> String {
    let value = f32::from_bits(bits);
    if let Some(text) = short_decimal(f64::from(value)) {
        return text;
    }
    let double_bits = if value.is_nan() {
        let sign = u64::from(bits >> 31) << 63;
        let payload = u64::from(bits & 0x007f_ffff) << 29;
        sign | (0x7ffu64 << 52) | payload
    } else {
        f64::from(value).to_bits()
    };
    format!("0x{double_bits:016X}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats() {
        assert_eq!(single_text(1.5f32.to_bits()), "1.5");
        assert_eq!(single_text((-0.0f32).to_bits()), "-0.0");
        assert_eq!(single_text(0.1f32.to_bits()), "0x3FB99999A0000000");
        assert_eq!(single_text(f32::INFINITY.to_bits()), "0x7FF0000000000000");
        assert_eq!(single_text(f32::NAN.to_bits()), "0x7FF8000000000000");
        assert_eq!(single_text(0x7fa0_0000), "0x7FF4000000000000");
        assert_eq!(double_text(0.1f64.to_bits()), "0.1");
        assert_eq!(double_text(1e300f64.to_bits()), "0x7E37E43C8800759C");
        assert_eq!(
            double_text(f64::NEG_INFINITY.to_bits()),
            "0xFFF0000000000000"
        );
        assert_eq!(double_text(1.0f64.to_bits()), "1.0");
    }
}
