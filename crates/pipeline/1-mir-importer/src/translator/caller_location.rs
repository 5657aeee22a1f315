//! `#[track_caller]` and `Location::caller()`, as rustc's own backends do them.
//!
//! A function that requires a caller location (`#[track_caller]`, not inlined away) takes
//! one more parameter after its own: the `&'static Location<'static>` of its call site. A call
//! of such a function passes it: the location of the call (a device global holding the
//! `Location`, its file name a `&str` global), or, inside a `#[track_caller]` function, the
//! location that function received, so the location is the first caller's that is not
//! `#[track_caller]`. The `caller_location` intrinsic (`Location::caller()`) reads the same.
//! Scopes inlined by rustc's MIR inliner are followed as rustc's
//! `Body::caller_location_span` does. Which functions take the parameter, and its type, are
//! [super::track_caller]'s answers.

use pliron::value::Value;
use rustc_middle::ty::TyCtxt;
use rustc_public::mir::mono::Instance;
use rustc_public::rustc_internal::{internal, stable};
use rustc_public::ty::MirConst;

use super::body::FnTranslator;
use super::error::{TResult, unsupported};

/// Where the caller location at a terminator comes from.
enum Source {
    /// The function's own hidden parameter.
    Parameter,
    /// A constant `&Location` of a span.
    Constant(MirConst),
}

/// The caller location for the terminator of block `block` of `instance`'s body.
fn source(instance: &Instance, block: usize, has_parameter: bool) -> Source {
    rustc_middle::ty::tls::with(|tcx: TyCtxt<'_>| {
        let instance = internal(tcx, *instance);
        let body = tcx.instance_mir(instance.def);
        let terminator =
            body.basic_blocks[rustc_middle::mir::BasicBlock::from_usize(block)].terminator();
        let mut source_info = terminator.source_info;
        // A call's location is the span of the call itself (`unwrap()` of
        // `x.iter().position(f).unwrap()`), as rustc's backends take it.
        if let rustc_middle::mir::TerminatorKind::Call { fn_span, .. } = &terminator.kind {
            source_info.span = *fn_span;
        }
        body.caller_location_span(
            source_info,
            has_parameter.then_some(Source::Parameter),
            tcx,
            |span| {
                let value = tcx.span_as_caller_location(span);
                let constant = rustc_middle::mir::Const::Val(value, tcx.caller_location_ty());
                Source::Constant(stable(constant))
            },
        )
    })
}

impl FnTranslator<'_> {
    /// The `&Location` of the call being translated (the terminator of the current block).
    pub(crate) fn caller_location(&mut self) -> TResult<Value> {
        let Some(block) = self.current_block else {
            unsupported!("`Location::caller()` outside a block")
        };
        match source(&self.instance, block, self.caller_location_param.is_some()) {
            Source::Parameter => Ok(self.caller_location_param.expect("a parameter was offered")),
            Source::Constant(constant) => match self.translate_constant(&constant)? {
                Some(value) => Ok(value),
                None => unsupported!("a zero-sized `Location`"),
            },
        }
    }
}
