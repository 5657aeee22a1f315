//! Terminators: branches, `mir.return`, `mir.unreachable` and `mir.trap`.
//!
//! The branches implement pliron's [BranchOpInterface]: every successor has its own list of
//! forwarded operands (the arguments of the target block). The translator creates blocks
//! without arguments and branches without operands; mem2reg appends block arguments and the
//! matching branch operands when it promotes a slot.

use std::ops::Range;

use pliron::{
    basic_block::BasicBlock,
    builtin::{
        attributes::IntegerAttr,
        op_interfaces::{
            BranchOpInterface, IsTerminatorInterface, NOpdsInterface, NResultsInterface,
            NSuccsInterface, OneSuccInterface, OperandSegmentInterface,
        },
        types::IntegerType,
    },
    combine::{self, Parser, between, choice, parser::char::string, sep_by, token},
    common_traits::{Named, Verify},
    context::{Context, Ptr},
    derive::{op_interface_impl, pliron_op},
    identifier::Identifier,
    input_err,
    irfmt::{
        parsers::{
            block_opd_parser, delimited_list_parser, number_as_string_parser, spaced,
            ssa_opd_parser,
        },
        printers::list_with_sep,
    },
    location::Location,
    op::{Op, OpObj},
    operation::Operation,
    parsable::{IntoParseResult, Parsable, ParseResult, StateStream, StreamLocation},
    printable::{self, ListSeparator, Printable},
    result::Result,
    r#type::{Typed, TypedHandle},
    utils::apint::APInt,
    value::Value,
};

use super::{
    FuncOp, expect_type, expect_type_eq, invalid, memory::ResultCountErr, opd, opd_ty, ty_str,
};
use crate::{
    attributes::CaseValuesAttr,
    types::{is_bool, is_int_or_bool},
};

/// Print `^block(operands)`.
fn print_dest(
    ctx: &Context,
    state: &printable::State,
    f: &mut core::fmt::Formatter<'_>,
    dest: Ptr<BasicBlock>,
    operands: &[Value],
) -> core::fmt::Result {
    write!(
        f,
        "^{}({})",
        dest.deref(ctx).unique_name(ctx),
        list_with_sep(operands, ListSeparator::CharSpace(',')).print(ctx, state)
    )
}

/// A parser of `^block(operands)`.
fn dest_parser<'a>() -> impl Parser<StateStream<'a>, Output = (Ptr<BasicBlock>, Vec<Value>)> {
    (
        spaced(block_opd_parser()),
        spaced(delimited_list_parser('(', ')', ',', ssa_opd_parser())),
    )
}

/// Fail to parse unless the op has no result.
fn expect_no_results(
    state_stream: &StateStream,
    opid: &str,
    results: &[(Identifier, Location)],
) -> Result<()> {
    if results.is_empty() {
        Ok(())
    } else {
        input_err!(
            state_stream.loc(),
            ResultCountErr(opid.to_string(), 0, results.len())
        )
    }
}

/// Unconditional branch to `dest`, forwarding the operands as its block arguments.
///
/// Printed as `mir.goto ^dest(operands)`.
#[pliron_op(
    name = "mir.goto",
    format = "succ($0) `(` operands(CharSpace(`,`)) `)`",
    interfaces = [IsTerminatorInterface, NResultsInterface<0>, OneSuccInterface],
    verifier = "succ"
)]
pub struct GotoOp;

impl GotoOp {
    /// A branch to `dest` (which has no argument).
    pub fn new(ctx: &mut Context, dest: Ptr<BasicBlock>) -> Self {
        Self::new_with_args(ctx, dest, vec![])
    }

    /// A branch to `dest` passing `args` as its block arguments.
    pub fn new_with_args(ctx: &mut Context, dest: Ptr<BasicBlock>, args: Vec<Value>) -> Self {
        let op = Operation::new(
            ctx,
            Self::get_concrete_op_info(),
            vec![],
            args,
            vec![dest],
            0,
        );
        Self { op }
    }

    /// The target block.
    pub fn dest(&self, ctx: &Context) -> Ptr<BasicBlock> {
        self.get_operation().deref(ctx).get_successor(0)
    }
}

#[op_interface_impl]
impl BranchOpInterface for GotoOp {
    fn verify_successor_operand_layout(&self, ctx: &Context) -> Result<()> {
        <Self as OneSuccInterface>::verify(self, ctx)
    }

    fn successor_operand_range(&self, ctx: &Context, succ_idx: usize) -> Range<usize> {
        assert_eq!(succ_idx, 0, "mir.goto has one successor");
        0..self.get_operation().deref(ctx).get_num_operands()
    }

    fn add_successor_operand(&self, ctx: &mut Context, succ_idx: usize, operand: Value) -> usize {
        assert_eq!(succ_idx, 0, "mir.goto has one successor");
        Operation::push_operand(self.get_operation(), ctx, operand)
    }

    fn remove_successor_operand(
        &self,
        ctx: &mut Context,
        succ_idx: usize,
        arg_idx: usize,
    ) -> Value {
        assert_eq!(succ_idx, 0, "mir.goto has one successor");
        Operation::remove_operand(self.get_operation(), ctx, arg_idx)
    }
}

/// Conditional branch on an `i1`: to the first successor if true, else to the second. The
/// operands are the condition, then the arguments of each successor (an operand segment each).
///
/// Printed as `mir.cond_br c, ^then(operands), ^else(operands)`.
#[pliron_op(
    name = "mir.cond_br",
    interfaces = [IsTerminatorInterface, NResultsInterface<0>, NSuccsInterface<2>]
)]
pub struct CondBrOp;

impl CondBrOp {
    /// Branch to `then_dest` if `cond`, else to `else_dest` (neither has arguments).
    pub fn new(
        ctx: &mut Context,
        cond: Value,
        then_dest: Ptr<BasicBlock>,
        else_dest: Ptr<BasicBlock>,
    ) -> Self {
        Self::new_with_args(ctx, cond, then_dest, vec![], else_dest, vec![])
    }

    /// Branch to `then_dest` with `then_args` if `cond`, else to `else_dest` with `else_args`.
    pub fn new_with_args(
        ctx: &mut Context,
        cond: Value,
        then_dest: Ptr<BasicBlock>,
        then_args: Vec<Value>,
        else_dest: Ptr<BasicBlock>,
        else_args: Vec<Value>,
    ) -> Self {
        let (operands, segments) =
            Self::compute_segment_sizes(vec![vec![cond], then_args, else_args]);
        let op = Operation::new(
            ctx,
            Self::get_concrete_op_info(),
            vec![],
            operands,
            vec![then_dest, else_dest],
            0,
        );
        let op = Self { op };
        op.set_operand_segment_sizes(ctx, segments);
        op
    }

    /// The condition.
    pub fn condition(&self, ctx: &Context) -> Value {
        opd(self, ctx, 0)
    }

    /// The target when the condition is true.
    pub fn then_dest(&self, ctx: &Context) -> Ptr<BasicBlock> {
        self.get_operation().deref(ctx).get_successor(0)
    }

    /// The target when the condition is false.
    pub fn else_dest(&self, ctx: &Context) -> Ptr<BasicBlock> {
        self.get_operation().deref(ctx).get_successor(1)
    }
}

#[op_interface_impl]
impl OperandSegmentInterface for CondBrOp {
    fn expected_num_segments(&self, _ctx: &Context) -> Option<usize> {
        Some(3)
    }
}

#[op_interface_impl]
impl BranchOpInterface for CondBrOp {
    fn verify_successor_operand_layout(&self, ctx: &Context) -> Result<()> {
        <Self as OperandSegmentInterface>::verify(self, ctx)?;
        <Self as NSuccsInterface<2>>::verify(self, ctx)
    }

    fn successor_operand_range(&self, ctx: &Context, succ_idx: usize) -> Range<usize> {
        assert!(succ_idx < 2, "mir.cond_br has two successors");
        self.segment_range(ctx, succ_idx + 1)
    }

    fn add_successor_operand(&self, ctx: &mut Context, succ_idx: usize, operand: Value) -> usize {
        assert!(succ_idx < 2, "mir.cond_br has two successors");
        self.push_to_segment(ctx, succ_idx + 1, operand)
    }

    fn remove_successor_operand(
        &self,
        ctx: &mut Context,
        succ_idx: usize,
        arg_idx: usize,
    ) -> Value {
        assert!(succ_idx < 2, "mir.cond_br has two successors");
        self.remove_from_segment(ctx, succ_idx + 1, arg_idx)
    }
}

impl Verify for CondBrOp {
    fn verify(&self, ctx: &Context) -> Result<()> {
        if self.segment_size(ctx, 0) != 1 {
            return invalid(self, ctx, "expected exactly one condition operand");
        }
        let ty = opd_ty(self, ctx, 0);
        expect_type(self, ctx, is_bool(ctx, ty), "condition", "i1", ty)
    }
}

impl Printable for CondBrOp {
    fn fmt(
        &self,
        ctx: &Context,
        state: &printable::State,
        f: &mut core::fmt::Formatter<'_>,
    ) -> core::fmt::Result {
        write!(
            f,
            "{} {}, ",
            self.get_opid(),
            self.condition(ctx).print(ctx, state)
        )?;
        print_dest(
            ctx,
            state,
            f,
            self.then_dest(ctx),
            &self.successor_operands(ctx, 0),
        )?;
        write!(f, ", ")?;
        print_dest(
            ctx,
            state,
            f,
            self.else_dest(ctx),
            &self.successor_operands(ctx, 1),
        )
    }
}

impl Parsable for CondBrOp {
    type Arg = Vec<(Identifier, Location)>;
    type Parsed = OpObj;

    fn parse<'a>(
        state_stream: &mut StateStream<'a>,
        results: Self::Arg,
    ) -> ParseResult<'a, Self::Parsed> {
        expect_no_results(state_stream, "mir.cond_br", &results)?;
        (
            spaced(ssa_opd_parser()).skip(spaced(token(','))),
            dest_parser().skip(spaced(token(','))),
            dest_parser(),
        )
            .then(
                move |(cond, (then_dest, then_args), (else_dest, else_args))| {
                    combine::parser(move |state: &mut StateStream<'a>| {
                        let op = CondBrOp::new_with_args(
                            state.state.ctx,
                            cond,
                            then_dest,
                            then_args.clone(),
                            else_dest,
                            else_args.clone(),
                        );
                        Ok(OpObj::new(op)).into_parse_result()
                    })
                },
            )
            .parse_stream(state_stream)
            .into_result()
    }
}

/// Multi-way branch on an integer or `bool` (MIR's `SwitchInt`): to the successor of the
/// first case value equal to the operand, else to the last successor ("otherwise").
/// Successors are the cases in order, then otherwise; the case values are a
/// [CaseValuesAttr] of the operand's type. Operands: the switched value, then one segment of
/// forwarded arguments per successor.
///
/// Printed as `mir.switch_int d : T [v0: ^bb0(operands), ..., otherwise: ^bbN(operands)]`.
#[pliron_op(
    name = "mir.switch_int",
    interfaces = [IsTerminatorInterface, NResultsInterface<0>],
    attributes = (mir_switch_case_values: CaseValuesAttr)
)]
pub struct SwitchIntOp;

impl SwitchIntOp {
    /// Switch on `value`: `cases` pairs a value (its bits, truncated to the width of the
    /// switched type; e.g. `-1i8` is `0xff`) with its target; no block has arguments.
    ///
    /// Panics if `value` is not an integer.
    pub fn new(
        ctx: &mut Context,
        value: Value,
        cases: Vec<(u128, Ptr<BasicBlock>)>,
        otherwise: Ptr<BasicBlock>,
    ) -> Self {
        let ty = TypedHandle::<IntegerType>::from_handle(value.get_type(ctx), ctx)
            .expect("mir.switch_int needs an integer operand");
        let width = std::num::NonZero::new(ty.deref(ctx).width() as usize)
            .expect("integer types have a non-zero width");
        let (values, mut dests): (Vec<_>, Vec<_>) = cases
            .into_iter()
            .map(|(bits, dest)| {
                (
                    IntegerAttr::new(ty, APInt::from_u128(bits, width)),
                    (dest, vec![]),
                )
            })
            .unzip();
        dests.push((otherwise, vec![]));
        Self::new_with_args(ctx, value, values, dests)
    }

    /// Switch on `value` with the case `values`; `dests` are the targets with their
    /// arguments: one per case, in order, then the otherwise target.
    pub fn new_with_args(
        ctx: &mut Context,
        value: Value,
        values: Vec<IntegerAttr>,
        dests: Vec<(Ptr<BasicBlock>, Vec<Value>)>,
    ) -> Self {
        let (successors, args): (Vec<_>, Vec<_>) = dests.into_iter().unzip();
        let mut segments = vec![vec![value]];
        segments.extend(args);
        let (operands, segment_sizes) = Self::compute_segment_sizes(segments);
        let op = Operation::new(
            ctx,
            Self::get_concrete_op_info(),
            vec![],
            operands,
            successors,
            0,
        );
        let op = Self { op };
        op.set_operand_segment_sizes(ctx, segment_sizes);
        op.set_attr_mir_switch_case_values(ctx, CaseValuesAttr(values));
        op
    }

    /// The switched value.
    pub fn value(&self, ctx: &Context) -> Value {
        opd(self, ctx, 0)
    }

    /// The case values, in the order of the case successors.
    pub fn case_values(&self, ctx: &Context) -> Vec<IntegerAttr> {
        self.get_attr_mir_switch_case_values(ctx)
            .map(|values| values.0.clone())
            .unwrap_or_default()
    }

    /// The cases: the bits of each value (zero-extended to `u128`) with its target.
    pub fn cases(&self, ctx: &Context) -> Vec<(u128, Ptr<BasicBlock>)> {
        let op = self.get_operation().deref(ctx);
        self.case_values(ctx)
            .iter()
            .zip(op.successors())
            .map(|(value, dest)| (value.value().to_u128(), dest))
            .collect()
    }

    /// The target when no case matches (the last successor).
    pub fn otherwise(&self, ctx: &Context) -> Ptr<BasicBlock> {
        let op = self.get_operation().deref(ctx);
        op.get_successor(op.get_num_successors() - 1)
    }
}

#[op_interface_impl]
impl OperandSegmentInterface for SwitchIntOp {
    fn expected_num_segments(&self, ctx: &Context) -> Option<usize> {
        Some(self.get_operation().deref(ctx).get_num_successors() + 1)
    }
}

#[op_interface_impl]
impl BranchOpInterface for SwitchIntOp {
    fn verify_successor_operand_layout(&self, ctx: &Context) -> Result<()> {
        <Self as OperandSegmentInterface>::verify(self, ctx)
    }

    fn successor_operand_range(&self, ctx: &Context, succ_idx: usize) -> Range<usize> {
        self.segment_range(ctx, succ_idx + 1)
    }

    fn add_successor_operand(&self, ctx: &mut Context, succ_idx: usize, operand: Value) -> usize {
        self.push_to_segment(ctx, succ_idx + 1, operand)
    }

    fn remove_successor_operand(
        &self,
        ctx: &mut Context,
        succ_idx: usize,
        arg_idx: usize,
    ) -> Value {
        self.remove_from_segment(ctx, succ_idx + 1, arg_idx)
    }
}

impl Verify for SwitchIntOp {
    fn verify(&self, ctx: &Context) -> Result<()> {
        if self.segment_size(ctx, 0) != 1 {
            return invalid(self, ctx, "expected exactly one switched operand");
        }
        let ty = opd_ty(self, ctx, 0);
        expect_type(
            self,
            ctx,
            is_int_or_bool(ctx, ty),
            "operand",
            "an integer or i1",
            ty,
        )?;
        let Some(values) = self
            .get_attr_mir_switch_case_values(ctx)
            .map(|v| v.0.clone())
        else {
            return invalid(self, ctx, "missing case values");
        };
        let num_successors = self.get_operation().deref(ctx).get_num_successors();
        if values.len() + 1 != num_successors {
            return invalid(
                self,
                ctx,
                format!(
                    "{} case values need {} successors, found {}",
                    values.len(),
                    values.len() + 1,
                    num_successors
                ),
            );
        }
        for value in &values {
            expect_type_eq(self, ctx, "case value", ty, value.get_type().into())?;
        }
        Ok(())
    }
}

impl Printable for SwitchIntOp {
    fn fmt(
        &self,
        ctx: &Context,
        state: &printable::State,
        f: &mut core::fmt::Formatter<'_>,
    ) -> core::fmt::Result {
        let value = self.value(ctx);
        let ty = value.get_type(ctx);
        let signed = ty
            .deref(ctx)
            .downcast_ref::<IntegerType>()
            .is_some_and(|int_ty| int_ty.prints_as_signed());
        write!(
            f,
            "{} {} : {} [",
            self.get_opid(),
            value.print(ctx, state),
            ty.print(ctx, state)
        )?;
        let op = self.get_operation().deref(ctx);
        for (idx, value) in self.case_values(ctx).iter().enumerate() {
            write!(f, "{}: ", value.value().to_string_decimal(signed))?;
            print_dest(
                ctx,
                state,
                f,
                op.get_successor(idx),
                &self.successor_operands(ctx, idx),
            )?;
            write!(f, ", ")?;
        }
        let last = op.get_num_successors() - 1;
        write!(f, "otherwise: ")?;
        print_dest(
            ctx,
            state,
            f,
            op.get_successor(last),
            &self.successor_operands(ctx, last),
        )?;
        write!(f, "]")
    }
}

/// The label of a switch target: a case value (as written) or `otherwise`.
#[derive(Clone)]
enum CaseLabel {
    Value(String),
    Otherwise,
}

impl Parsable for SwitchIntOp {
    type Arg = Vec<(Identifier, Location)>;
    type Parsed = OpObj;

    fn parse<'a>(
        state_stream: &mut StateStream<'a>,
        results: Self::Arg,
    ) -> ParseResult<'a, Self::Parsed> {
        expect_no_results(state_stream, "mir.switch_int", &results)?;
        let loc = state_stream.loc();
        let label = choice((
            string("otherwise").map(|_| CaseLabel::Otherwise),
            number_as_string_parser().map(CaseLabel::Value),
        ));
        let target = (spaced(label).skip(spaced(token(':'))), dest_parser());
        (
            spaced(ssa_opd_parser()).skip(spaced(token(':'))),
            spaced(TypedHandle::<IntegerType>::parser(())),
            between(
                spaced(token('[')),
                spaced(token(']')),
                sep_by::<Vec<_>, _, _, _>(target, spaced(token(','))),
            ),
        )
            .then(move |(value, ty, targets)| {
                let loc = loc.clone();
                combine::parser(move |state: &mut StateStream<'a>| {
                    let ctx = &mut *state.state.ctx;
                    let width = ty.deref(ctx).width() as usize;
                    let mut values = vec![];
                    let mut dests = vec![];
                    let mut otherwise = None;
                    for (label, dest) in &targets {
                        match label {
                            CaseLabel::Value(_) if otherwise.is_some() => {
                                input_err!(loc.clone(), SwitchSyntaxErr::OtherwiseNotLast)?
                            }
                            CaseLabel::Value(digits) => {
                                let bits =
                                    APInt::from_str(digits, width, 10).map_err(|mut err| {
                                        err.set_loc(loc.clone());
                                        err
                                    })?;
                                values.push(IntegerAttr::new(ty, bits));
                                dests.push(dest.clone());
                            }
                            CaseLabel::Otherwise if otherwise.is_some() => {
                                input_err!(loc.clone(), SwitchSyntaxErr::OtherwiseNotLast)?
                            }
                            CaseLabel::Otherwise => otherwise = Some(dest.clone()),
                        }
                    }
                    let Some(otherwise) = otherwise else {
                        return input_err!(loc.clone(), SwitchSyntaxErr::MissingOtherwise)
                            .into_parse_result();
                    };
                    dests.push(otherwise);
                    let op = SwitchIntOp::new_with_args(ctx, value, values, dests);
                    Ok(OpObj::new(op)).into_parse_result()
                })
            })
            .parse_stream(state_stream)
            .into_result()
    }
}

/// Malformed `mir.switch_int` syntax.
#[derive(Debug, thiserror::Error)]
pub enum SwitchSyntaxErr {
    #[error("mir.switch_int: `otherwise` must be the last target, and appear once")]
    OtherwiseNotLast,
    #[error("mir.switch_int: missing the `otherwise` target")]
    MissingOtherwise,
}

/// Return from the enclosing `mir.func`, with its result if it has one.
///
/// Printed as `mir.return` or `mir.return v`.
#[pliron_op(
    name = "mir.return",
    format = "operands(CharSpace(`,`))",
    interfaces = [IsTerminatorInterface, NResultsInterface<0>]
)]
pub struct ReturnOp;

impl ReturnOp {
    /// Return `value` (`None` for a function without result).
    pub fn new(ctx: &mut Context, value: Option<Value>) -> Self {
        let op = Operation::new(
            ctx,
            Self::get_concrete_op_info(),
            vec![],
            value.into_iter().collect(),
            vec![],
            0,
        );
        Self { op }
    }

    /// The returned value, if any.
    pub fn value(&self, ctx: &Context) -> Option<Value> {
        self.get_operation().deref(ctx).operands().next()
    }
}

impl Verify for ReturnOp {
    fn verify(&self, ctx: &Context) -> Result<()> {
        let operand_types: Vec<_> = self
            .get_operation()
            .deref(ctx)
            .operands()
            .map(|value| value.get_type(ctx))
            .collect();
        if operand_types.len() > 1 {
            return invalid(self, ctx, "returns at most one value");
        }
        let Some(func) = self
            .get_operation()
            .deref(ctx)
            .get_parent_op(ctx)
            .and_then(|parent| Operation::get_op::<FuncOp>(parent, ctx))
        else {
            return Ok(());
        };
        let expected = func.result_types(ctx);
        if expected.len() != operand_types.len() {
            return invalid(
                self,
                ctx,
                format!(
                    "returns {} value(s) but the function has {} result(s)",
                    operand_types.len(),
                    expected.len()
                ),
            );
        }
        for (expected, found) in expected.iter().zip(&operand_types) {
            if expected != found {
                return invalid(
                    self,
                    ctx,
                    format!(
                        "returns a {} but the function returns {}",
                        ty_str(ctx, *found),
                        ty_str(ctx, *expected)
                    ),
                );
            }
        }
        Ok(())
    }
}

/// A point the program never reaches (MIR's `Unreachable`).
///
/// Printed as `mir.unreachable`.
#[pliron_op(
    name = "mir.unreachable",
    format = "",
    interfaces = [IsTerminatorInterface, NOpdsInterface<0>, NResultsInterface<0>],
    verifier = "succ"
)]
pub struct UnreachableOp;

impl UnreachableOp {
    /// An unreachable terminator.
    pub fn new(ctx: &mut Context) -> Self {
        let op = Operation::new(ctx, Self::get_concrete_op_info(), vec![], vec![], vec![], 0);
        Self { op }
    }
}

/// A reached panic or failed assertion: the kernel aborts (`llvm.trap`).
///
/// Printed as `mir.trap`.
#[pliron_op(
    name = "mir.trap",
    format = "",
    interfaces = [IsTerminatorInterface, NOpdsInterface<0>, NResultsInterface<0>],
    verifier = "succ"
)]
pub struct TrapOp;

impl TrapOp {
    /// A trap terminator.
    pub fn new(ctx: &mut Context) -> Self {
        let op = Operation::new(ctx, Self::get_concrete_op_info(), vec![], vec![], vec![], 0);
        Self { op }
    }
}
