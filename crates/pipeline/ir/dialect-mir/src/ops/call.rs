//! Calls: `mir.call` (direct) and `mir.call_indirect` (through a function pointer).

use std::ops::Range;

use pliron::{
    builtin::{
        attributes::IdentifierAttr,
        op_interfaces::{CallOpCallable, CallOpInterface, SymbolUserOpInterface},
        type_interfaces::FunctionTypeInterface,
        types::FunctionType,
    },
    combine::{self, Parser, token},
    common_traits::Verify,
    context::Context,
    derive::{op_interface_impl, pliron_op},
    identifier::Identifier,
    input_err,
    irfmt::{
        parsers::{delimited_list_parser, process_parsed_ssa_defs, spaced, ssa_opd_parser},
        printers::list_with_sep,
    },
    location::Location,
    op::{Op, OpObj},
    operation::Operation,
    parsable::{IntoParseResult, Parsable, ParseResult, StateStream, StreamLocation},
    printable::{self, ListSeparator, Printable},
    result::Result,
    symbol_table::SymbolTableCollection,
    r#type::{Typed, TypedHandle},
    value::Value,
};

use super::{FuncOp, invalid, memory::ResultCountErr, ty_str};

/// A direct call of the function named `callee` (the export name, see
/// `mir_importer::naming`), passing the non-ZST arguments by value. The callee type
/// (`builtin.function`, the `CallOpInterface` callee type attribute) gives the argument types
/// and the zero or one result.
///
/// Printed as `r = mir.call @callee(args) : builtin.function <(...) -> (...)>` (no `r =`
/// without result).
#[pliron_op(
    name = "mir.call",
    attributes = (mir_call_callee: IdentifierAttr)
)]
pub struct CallOp;

impl CallOp {
    /// A call of `callee`, of type `callee_ty`, with `args`.
    pub fn new(
        ctx: &mut Context,
        callee: Identifier,
        callee_ty: TypedHandle<FunctionType>,
        args: Vec<Value>,
    ) -> Self {
        let result_types = callee_ty.deref(ctx).res_types();
        let op = Operation::new(
            ctx,
            Self::get_concrete_op_info(),
            result_types,
            args,
            vec![],
            0,
        );
        let op = Self { op };
        op.set_attr_mir_call_callee(ctx, IdentifierAttr::new(callee));
        op.set_callee_type(ctx, callee_ty.into());
        op
    }

    /// The name of the called function.
    pub fn callee_name(&self, ctx: &Context) -> Identifier {
        self.get_attr_mir_call_callee(ctx)
            .expect("mir.call has a callee")
            .clone()
            .into()
    }

    /// The result, if the callee returns one.
    pub fn result(&self, ctx: &Context) -> Option<Value> {
        self.get_operation().deref(ctx).results().next()
    }
}

#[op_interface_impl]
impl CallOpInterface for CallOp {
    fn callee(&self, ctx: &Context) -> CallOpCallable {
        CallOpCallable::Direct(self.callee_name(ctx))
    }

    fn arg_range(&self, ctx: &Context) -> Range<usize> {
        0..self.get_operation().deref(ctx).get_num_operands()
    }
}

impl Verify for CallOp {
    fn verify(&self, ctx: &Context) -> Result<()> {
        if self.get_attr_mir_call_callee(ctx).is_none() {
            return invalid(self, ctx, "missing callee");
        }
        let callee_ty = self.callee_type(ctx);
        let Ok(callee_ty) = TypedHandle::<FunctionType>::from_handle(callee_ty, ctx) else {
            return invalid(
                self,
                ctx,
                format!(
                    "callee type {} is not a builtin.function",
                    ty_str(ctx, callee_ty)
                ),
            );
        };
        let arg_types = callee_ty.deref(ctx).arg_types();
        let args = self.args(ctx);
        if args.len() != arg_types.len() {
            return invalid(
                self,
                ctx,
                format!(
                    "passes {} argument(s) to a function of {} parameter(s)",
                    args.len(),
                    arg_types.len()
                ),
            );
        }
        for (idx, (arg, expected)) in args.iter().zip(&arg_types).enumerate() {
            let found = arg.get_type(ctx);
            if found != *expected {
                return invalid(
                    self,
                    ctx,
                    format!(
                        "argument {idx} has type {} but the parameter has type {}",
                        ty_str(ctx, found),
                        ty_str(ctx, *expected)
                    ),
                );
            }
        }
        let result_types: Vec<_> = self.get_operation().deref(ctx).result_types().collect();
        if result_types != callee_ty.deref(ctx).res_types() || result_types.len() > 1 {
            return invalid(
                self,
                ctx,
                "the results differ from the callee's (zero or one) results",
            );
        }
        Ok(())
    }
}

/// The callee of a `mir.call` is missing or is not a matching `mir.func`.
#[derive(Debug, thiserror::Error)]
pub enum CalleeErr {
    #[error("mir.call: no function named {0}")]
    NotFound(String),
    #[error("mir.call: {0} is not a mir.func")]
    NotAFunction(String),
    #[error("mir.call: {0} has type {1}, but the call has type {2}")]
    TypeMismatch(String, String, String),
}

#[op_interface_impl]
impl SymbolUserOpInterface for CallOp {
    fn verify_symbol_uses(
        &self,
        ctx: &Context,
        symbol_tables: &mut SymbolTableCollection,
    ) -> Result<()> {
        let name = self.callee_name(ctx);
        let Some(callee) =
            symbol_tables.lookup_symbol_in_nearest_table(ctx, self.get_operation(), &name)
        else {
            return pliron::verify_err!(self.loc(ctx), CalleeErr::NotFound(name.to_string()));
        };
        let Some(func) = Operation::get_op::<FuncOp>(callee.get_operation(), ctx) else {
            return pliron::verify_err!(self.loc(ctx), CalleeErr::NotAFunction(name.to_string()));
        };
        let func_ty = func.func_type(ctx).to_handle();
        if func_ty != self.callee_type(ctx) {
            return pliron::verify_err!(
                self.loc(ctx),
                CalleeErr::TypeMismatch(
                    name.to_string(),
                    ty_str(ctx, func_ty),
                    ty_str(ctx, self.callee_type(ctx))
                )
            );
        }
        Ok(())
    }

    fn used_symbols(&self, ctx: &Context) -> Vec<Identifier> {
        vec![self.callee_name(ctx)]
    }
}

impl Printable for CallOp {
    fn fmt(
        &self,
        ctx: &Context,
        state: &printable::State,
        f: &mut core::fmt::Formatter<'_>,
    ) -> core::fmt::Result {
        if let Some(result) = self.result(ctx) {
            write!(f, "{} = ", result.print(ctx, state))?;
        }
        write!(
            f,
            "{} @{}({}) : {}",
            self.get_opid(),
            self.callee_name(ctx),
            list_with_sep(&self.args(ctx), ListSeparator::CharSpace(',')).print(ctx, state),
            self.callee_type(ctx).print(ctx, state)
        )
    }
}

impl Parsable for CallOp {
    type Arg = Vec<(Identifier, Location)>;
    type Parsed = OpObj;

    fn parse<'a>(
        state_stream: &mut StateStream<'a>,
        results: Self::Arg,
    ) -> ParseResult<'a, Self::Parsed> {
        let loc = state_stream.loc();
        (
            spaced(token('@').with(Identifier::parser(()))),
            spaced(delimited_list_parser('(', ')', ',', ssa_opd_parser())),
            spaced(token(':')).with(spaced(TypedHandle::<FunctionType>::parser(()))),
        )
            .then(move |(callee, args, callee_ty)| {
                let results = results.clone();
                let loc = loc.clone();
                combine::parser(move |state: &mut StateStream<'a>| {
                    let num_results = callee_ty.deref(state.state.ctx).res_types().len();
                    if num_results != results.len() {
                        input_err!(
                            loc.clone(),
                            ResultCountErr("mir.call".to_string(), num_results, results.len())
                        )?
                    }
                    let op = CallOp::new(state.state.ctx, callee.clone(), callee_ty, args.clone());
                    process_parsed_ssa_defs(state, &results, op.get_operation())?;
                    Ok(OpObj::new(op)).into_parse_result()
                })
            })
            .parse_stream(state_stream)
            .into_result()
    }
}

/// A call through a function pointer (a `fn(..)` value, a vtable entry): operand 0 is the
/// pointer, the others the non-ZST arguments by value, with the same convention as
/// `mir.call`. The callee type (`builtin.function`, the `CallOpInterface` callee type
/// attribute) gives the argument types and the zero or one result.
///
/// Printed as `r = mir.call_indirect %f(args) : builtin.function <(...) -> (...)>` (no `r =`
/// without result).
#[pliron_op(name = "mir.call_indirect")]
pub struct CallIndirectOp;

impl CallIndirectOp {
    /// A call of the function at `callee`, of type `callee_ty`, with `args`.
    pub fn new(
        ctx: &mut Context,
        callee: Value,
        callee_ty: TypedHandle<FunctionType>,
        args: Vec<Value>,
    ) -> Self {
        let result_types = callee_ty.deref(ctx).res_types();
        let mut operands = vec![callee];
        operands.extend(args);
        let op = Operation::new(
            ctx,
            Self::get_concrete_op_info(),
            result_types,
            operands,
            vec![],
            0,
        );
        let op = Self { op };
        op.set_callee_type(ctx, callee_ty.into());
        op
    }

    /// The function pointer.
    pub fn callee_ptr(&self, ctx: &Context) -> Value {
        self.get_operation().deref(ctx).get_operand(0)
    }

    /// The result, if the callee returns one.
    pub fn result(&self, ctx: &Context) -> Option<Value> {
        self.get_operation().deref(ctx).results().next()
    }
}

#[op_interface_impl]
impl CallOpInterface for CallIndirectOp {
    fn callee(&self, ctx: &Context) -> CallOpCallable {
        CallOpCallable::Indirect(self.callee_ptr(ctx))
    }

    fn arg_range(&self, ctx: &Context) -> Range<usize> {
        1..self.get_operation().deref(ctx).get_num_operands()
    }
}

impl Verify for CallIndirectOp {
    fn verify(&self, ctx: &Context) -> Result<()> {
        if self.get_operation().deref(ctx).get_num_operands() == 0 {
            return invalid(self, ctx, "missing function pointer");
        }
        let ptr_ty = self.callee_ptr(ctx).get_type(ctx);
        if !crate::types::is_ptr(ctx, ptr_ty) {
            return invalid(
                self,
                ctx,
                format!("the callee has type {}, not a mir.ptr", ty_str(ctx, ptr_ty)),
            );
        }
        let callee_ty = self.callee_type(ctx);
        let Ok(callee_ty) = TypedHandle::<FunctionType>::from_handle(callee_ty, ctx) else {
            return invalid(
                self,
                ctx,
                format!(
                    "callee type {} is not a builtin.function",
                    ty_str(ctx, callee_ty)
                ),
            );
        };
        let arg_types = callee_ty.deref(ctx).arg_types();
        let found: Vec<_> = self.args(ctx).iter().map(|a| a.get_type(ctx)).collect();
        if found != arg_types {
            return invalid(
                self,
                ctx,
                "the arguments differ from the callee's parameters",
            );
        }
        let result_types: Vec<_> = self.get_operation().deref(ctx).result_types().collect();
        if result_types != callee_ty.deref(ctx).res_types() || result_types.len() > 1 {
            return invalid(
                self,
                ctx,
                "the results differ from the callee's (zero or one) results",
            );
        }
        Ok(())
    }
}

impl Printable for CallIndirectOp {
    fn fmt(
        &self,
        ctx: &Context,
        state: &printable::State,
        f: &mut core::fmt::Formatter<'_>,
    ) -> core::fmt::Result {
        if let Some(result) = self.result(ctx) {
            write!(f, "{} = ", result.print(ctx, state))?;
        }
        write!(
            f,
            "{} {}({}) : {}",
            self.get_opid(),
            self.callee_ptr(ctx).print(ctx, state),
            list_with_sep(&self.args(ctx), ListSeparator::CharSpace(',')).print(ctx, state),
            self.callee_type(ctx).print(ctx, state)
        )
    }
}

impl Parsable for CallIndirectOp {
    type Arg = Vec<(Identifier, Location)>;
    type Parsed = OpObj;

    fn parse<'a>(
        state_stream: &mut StateStream<'a>,
        results: Self::Arg,
    ) -> ParseResult<'a, Self::Parsed> {
        let loc = state_stream.loc();
        (
            spaced(ssa_opd_parser()),
            spaced(delimited_list_parser('(', ')', ',', ssa_opd_parser())),
            spaced(token(':')).with(spaced(TypedHandle::<FunctionType>::parser(()))),
        )
            .then(move |(callee, args, callee_ty)| {
                let results = results.clone();
                let loc = loc.clone();
                combine::parser(move |state: &mut StateStream<'a>| {
                    let num_results = callee_ty.deref(state.state.ctx).res_types().len();
                    if num_results != results.len() {
                        input_err!(
                            loc.clone(),
                            ResultCountErr(
                                "mir.call_indirect".to_string(),
                                num_results,
                                results.len()
                            )
                        )?
                    }
                    let op = CallIndirectOp::new(state.state.ctx, callee, callee_ty, args.clone());
                    process_parsed_ssa_defs(state, &results, op.get_operation())?;
                    Ok(OpObj::new(op)).into_parse_result()
                })
            })
            .parse_stream(state_stream)
            .into_result()
    }
}
