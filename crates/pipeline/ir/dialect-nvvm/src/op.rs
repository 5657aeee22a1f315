//! `nvvm.intrinsic`: one op for every GPU intrinsic, keyed by the [Intrinsic] it executes and
//! verified against its declaration.

use pliron::{
    combine::{Parser, many1, parser::char::alpha_num, satisfy},
    common_traits::Verify,
    context::Context,
    derive::{op_interface_impl, pliron_attr, pliron_op},
    input_error,
    op::Op,
    operation::Operation,
    parsable::{IntoParseResult, Parsable, ParseResult, StateStream, StreamLocation},
    printable::{self, Printable},
    result::Result,
    r#type::Typed,
    value::Value,
    verify_err,
};
use thiserror::Error;

use crate::intrinsic::Intrinsic;
use crate::table::by_name;

/// The intrinsic an `nvvm.intrinsic` op executes, printed as its name.
#[pliron_attr(name = "nvvm.intrinsic_name", verifier = "succ")]
#[derive(Clone, Copy, Debug)]
pub struct IntrinsicAttr(pub &'static Intrinsic);

impl PartialEq for IntrinsicAttr {
    fn eq(&self, other: &Self) -> bool {
        self.0.name == other.0.name
    }
}

impl Eq for IntrinsicAttr {}

impl std::hash::Hash for IntrinsicAttr {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.name.hash(state);
    }
}

impl Printable for IntrinsicAttr {
    fn fmt(
        &self,
        _ctx: &Context,
        _state: &printable::State,
        f: &mut core::fmt::Formatter<'_>,
    ) -> core::fmt::Result {
        write!(f, "{}", self.0.name)
    }
}

/// An `nvvm.intrinsic` name that no declaration has.
#[derive(Debug, Error)]
#[error("unknown GPU intrinsic `{0}`")]
pub struct UnknownIntrinsic(pub String);

impl Parsable for IntrinsicAttr {
    type Arg = ();
    type Parsed = Self;

    fn parse<'a>(
        state_stream: &mut StateStream<'a>,
        _arg: Self::Arg,
    ) -> ParseResult<'a, Self::Parsed> {
        let loc = state_stream.loc();
        let (name, _): (String, _) = many1(alpha_num().or(satisfy(|c| c == '_')))
            .parse_stream(state_stream)
            .into_result()?;
        by_name(&name)
            .map(IntrinsicAttr)
            .ok_or_else(|| input_error!(loc, UnknownIntrinsic(name)))
            .into_parse_result()
    }
}

/// A verification failure of an `nvvm.intrinsic` op.
#[derive(Debug, Error)]
pub enum NvvmVerifyErr {
    /// The op has no intrinsic attribute.
    #[error("nvvm.intrinsic: missing intrinsic attribute")]
    NoIntrinsic,
    /// Operand or result count differs from the declaration.
    #[error("nvvm.intrinsic {intrinsic}: expected {expected} {what}, found {found}")]
    Count {
        intrinsic: &'static str,
        what: &'static str,
        expected: usize,
        found: usize,
    },
    /// An operand or the result has another type than declared.
    #[error("nvvm.intrinsic {intrinsic}: {what} must be {expected}, but has type {found}")]
    Type {
        intrinsic: &'static str,
        what: String,
        expected: &'static str,
        found: String,
    },
}

/// Executes a GPU intrinsic: its operands and result are those of the [Intrinsic]'s
/// declaration.
///
/// Printed as `r = nvvm.intrinsic name(operands) : (operand types) -> (result type)`.
#[pliron_op(
    name = "nvvm.intrinsic",
    format = "attr($nvvm_intrinsic, $IntrinsicAttr) `(` operands(CharSpace(`,`)) `) : ` typesig",
    attributes = (nvvm_intrinsic: IntrinsicAttr)
)]
pub struct IntrinsicOp;

impl IntrinsicOp {
    /// `intrinsic(operands)`, with the declared result type.
    pub fn new(ctx: &mut Context, intrinsic: &'static Intrinsic, operands: Vec<Value>) -> Self {
        let results = intrinsic
            .result
            .map(|scalar| scalar.mir_type(ctx))
            .into_iter()
            .collect();
        let op = Operation::new(
            ctx,
            Self::get_concrete_op_info(),
            results,
            operands,
            vec![],
            0,
        );
        let op = Self { op };
        op.set_attr_nvvm_intrinsic(ctx, IntrinsicAttr(intrinsic));
        op
    }

    /// The intrinsic executed.
    pub fn intrinsic(&self, ctx: &Context) -> &'static Intrinsic {
        self.get_attr_nvvm_intrinsic(ctx)
            .expect("nvvm.intrinsic has an intrinsic attribute")
            .0
    }

    /// The operands, in the declaration's order.
    pub fn args(&self, ctx: &Context) -> Vec<Value> {
        self.get_operation().deref(ctx).operands().collect()
    }

    /// The result, for an intrinsic that has one.
    pub fn result(&self, ctx: &Context) -> Option<Value> {
        let op = self.get_operation().deref(ctx);
        (op.get_num_results() > 0).then(|| op.get_result(0))
    }
}

impl Verify for IntrinsicOp {
    fn verify(&self, ctx: &Context) -> Result<()> {
        let loc = self.loc(ctx);
        let Some(intrinsic) = self.get_attr_nvvm_intrinsic(ctx).map(|attr| attr.0) else {
            return verify_err!(loc, NvvmVerifyErr::NoIntrinsic);
        };
        let op = self.get_operation().deref(ctx);
        let count = |what, expected, found| {
            verify_err!(
                loc.clone(),
                NvvmVerifyErr::Count {
                    intrinsic: intrinsic.name,
                    what,
                    expected,
                    found,
                }
            )
        };
        if op.get_num_operands() != intrinsic.operands.len() {
            return count(
                "operand(s)",
                intrinsic.operands.len(),
                op.get_num_operands(),
            );
        }
        let expected_results = usize::from(intrinsic.result.is_some());
        if op.get_num_results() != expected_results {
            return count("result(s)", expected_results, op.get_num_results());
        }
        let typed = intrinsic
            .operands
            .iter()
            .enumerate()
            .map(|(i, scalar)| {
                (
                    format!("operand {i}"),
                    *scalar,
                    op.get_operand(i).get_type(ctx),
                )
            })
            .chain(
                intrinsic
                    .result
                    .map(|scalar| ("the result".to_string(), scalar, op.get_type(0))),
            );
        for (what, scalar, ty) in typed {
            if !scalar.is_type_of(ctx, ty) {
                return verify_err!(
                    loc,
                    NvvmVerifyErr::Type {
                        intrinsic: intrinsic.name,
                        what,
                        expected: scalar.rust_name(),
                        found: ty.disp(ctx).to_string(),
                    }
                );
            }
        }
        Ok(())
    }
}

#[op_interface_impl]
impl pliron::opts::dce::SideEffects for IntrinsicOp {
    fn has_side_effects(&self, ctx: &Context) -> bool {
        self.get_attr_nvvm_intrinsic(ctx)
            .is_none_or(|attr| attr.0.has_side_effects())
    }
}
