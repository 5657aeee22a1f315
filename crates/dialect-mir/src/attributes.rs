//! The attributes of the `mir` dialect.

use pliron::{
    builtin::attributes::IntegerAttr, common_traits::Verify, context::Context, derive::pliron_attr,
    result::Result, verify_err_noloc,
};
use thiserror::Error;

/// A small non-negative index held by an op: a field index, a variant index.
///
/// Printed as the bare number inside the ops that use it.
#[pliron_attr(name = "mir.index", format = "$0", verifier = "succ")]
#[derive(PartialEq, Eq, Clone, Copy, Debug, Hash)]
pub struct IndexAttr(pub u32);

impl IndexAttr {
    /// The index as a `usize`.
    pub fn index(&self) -> usize {
        self.0 as usize
    }
}

/// An alignment in bytes (a power of two) that an access may assume.
///
/// Printed as the bare number inside the ops that use it.
#[pliron_attr(name = "mir.align", format = "$0", verifier = "succ")]
#[derive(PartialEq, Eq, Clone, Copy, Debug, Hash)]
pub struct AlignAttr(pub u64);

/// The case values of a `mir.switch_int`, one [IntegerAttr] of the switched type per case, in
/// the order of the case successors.
///
/// Printed as `[value, ...]`.
#[pliron_attr(name = "mir.case_values", format = "`[` vec($0, CharSpace(`,`)) `]`")]
#[derive(PartialEq, Eq, Clone, Debug, Hash)]
pub struct CaseValuesAttr(pub Vec<IntegerAttr>);

/// Errors of [CaseValuesAttr].
#[derive(Debug, Error)]
pub enum CaseValuesAttrVerifyErr {
    #[error("switch case values must all have the same type")]
    MixedTypes,
    #[error("switch case value {0} appears twice")]
    Duplicate(String),
}

impl Verify for CaseValuesAttr {
    fn verify(&self, ctx: &Context) -> Result<()> {
        for (idx, value) in self.0.iter().enumerate() {
            value.verify(ctx)?;
            if value.get_type() != self.0[0].get_type() {
                return verify_err_noloc!(CaseValuesAttrVerifyErr::MixedTypes);
            }
            if self.0[..idx].contains(value) {
                return verify_err_noloc!(CaseValuesAttrVerifyErr::Duplicate(
                    value.value().to_string_unsigned_decimal()
                ));
            }
        }
        Ok(())
    }
}
