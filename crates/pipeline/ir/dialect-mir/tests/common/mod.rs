//! Helpers shared by the `dialect-mir` tests: building functions, printing, parsing back.

#![allow(dead_code)]

use dialect_mir::ops::FuncOp;
use pliron::{
    basic_block::BasicBlock,
    builtin::{
        given_names::erase_given_names,
        op_interfaces::{OneRegionInterface, SingleBlockRegionInterface},
        ops::ModuleOp,
        types::{FunctionType, IntegerType, Signedness},
    },
    context::{Context, Ptr},
    ident,
    irbuild::{
        inserter::{IRInserter, Inserter},
        listener::DummyListener,
    },
    irfmt::parsers::spaced,
    location::erase_locations,
    op::Op,
    operation::{Operation, verify_operation},
    parsable::parse_from_str,
    printable::Printable,
    result::Result,
    r#type::TypeHandle,
};

/// A fresh context with the `mir` dialect registered.
pub fn context() -> Context {
    let mut ctx = Context::new();
    dialect_mir::register(&mut ctx);
    ctx
}

/// `builtin.integer` of `width` bits, signed.
pub fn si(ctx: &Context, width: u32) -> TypeHandle {
    IntegerType::get(ctx, width, Signedness::Signed).into()
}

/// `builtin.integer` of `width` bits, unsigned.
pub fn ui(ctx: &Context, width: u32) -> TypeHandle {
    IntegerType::get(ctx, width, Signedness::Unsigned).into()
}

/// An empty module named `m`.
pub fn module(ctx: &mut Context) -> ModuleOp {
    ModuleOp::new(ctx, ident!("m"))
}

/// A new function `name` with parameters `args` and results `results`, appended to `module`.
pub fn func(
    ctx: &mut Context,
    module: ModuleOp,
    name: &str,
    args: Vec<TypeHandle>,
    results: Vec<TypeHandle>,
) -> FuncOp {
    let ty = FunctionType::get(ctx, args, results);
    let func = FuncOp::new(ctx, name.try_into().unwrap(), ty);
    func.get_operation()
        .insert_at_back(module.get_body(ctx, 0), ctx);
    func
}

/// A new block without arguments at the end of the body of `func`.
pub fn block(ctx: &mut Context, func: FuncOp, label: &str) -> Ptr<BasicBlock> {
    let block = BasicBlock::new(ctx, Some(label.try_into().unwrap()), vec![]);
    block.insert_at_back(func.get_region(ctx), ctx);
    block
}

/// Appends ops at the end of a block.
pub struct Builder(IRInserter<DummyListener>);

impl Builder {
    /// A builder appending to `block`.
    pub fn at_end(block: Ptr<BasicBlock>) -> Self {
        Self(IRInserter::new_at_block_end(block))
    }

    /// Append `op` and return it.
    pub fn add<T: Op>(&mut self, op: T, ctx: &Context) -> T {
        self.0.append_op(ctx, &op);
        op
    }
}

/// The textual form of `op` (with the outlined-attributes section, if any).
pub fn print(ctx: &Context, op: Ptr<Operation>) -> String {
    op.deref(ctx).disp(ctx).to_string()
}

/// `op` printed without given names or locations, its generated value and block names
/// renumbered by first appearance: a form that survives a parse.
pub fn canonical(ctx: &Context, op: Ptr<Operation>) -> String {
    erase_given_names(ctx, op);
    erase_locations(ctx, op);
    renumber(&print(ctx, op))
}

/// Whether `word` is a generated name: `v<N>` (a value) or `block<N>v<M>` (a block).
fn is_generated_name(word: &str) -> bool {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if let Some(rest) = word.strip_prefix("block") {
        return rest
            .split_once('v')
            .is_some_and(|(id, version)| digits(id) && digits(version));
    }
    word.strip_prefix('v').is_some_and(digits)
}

/// Rename the generated names of `text` to `n0`, `n1`, ... in order of first appearance.
fn renumber(text: &str) -> String {
    let mut names: Vec<String> = vec![];
    let mut out = String::new();
    let mut word = String::new();
    let mut flush = |word: &mut String, out: &mut String| {
        if is_generated_name(word) {
            let idx = names
                .iter()
                .position(|name| name == word)
                .unwrap_or_else(|| {
                    names.push(word.clone());
                    names.len() - 1
                });
            out.push_str(&format!("n{idx}"));
        } else {
            out.push_str(word);
        }
        word.clear();
    };
    for c in text.chars() {
        if c.is_ascii_alphanumeric() || c == '_' {
            word.push(c);
        } else {
            flush(&mut word, &mut out);
            out.push(c);
        }
    }
    flush(&mut word, &mut out);
    out
}

/// Parse `text` in a fresh context and verify it.
pub fn parse(text: &str) -> Result<(Context, Ptr<Operation>)> {
    let mut ctx = context();
    let op = parse_from_str(spaced(Operation::top_level_parser()), &mut ctx, text)?;
    verify_operation(op, &ctx)?;
    Ok((ctx, op))
}

/// Check that the printed `op` parses back, verifies, and prints the same (up to names and
/// locations).
pub fn assert_roundtrip(ctx: &Context, op: Ptr<Operation>) {
    let text = print(ctx, op);
    let (ctx2, op2) = match parse(&text) {
        Ok(parsed) => parsed,
        Err(err) => panic!("{text}\ndoes not parse back: {err}"),
    };
    assert_eq!(
        canonical(&ctx2, op2),
        canonical(ctx, op),
        "round trip of\n{text}"
    );
}

/// Verify `op`, panicking with the error.
pub fn verify(ctx: &Context, op: Ptr<Operation>) {
    if let Err(err) = verify_operation(op, ctx) {
        panic!("{}\n{}", err.disp(ctx), print(ctx, op));
    }
}

/// The message of the verification error of `op` (which must fail to verify).
pub fn verify_error(ctx: &Context, op: Ptr<Operation>) -> String {
    match verify_operation(op, ctx) {
        Ok(()) => panic!("verifies, but should not:\n{}", print(ctx, op)),
        Err(err) => err.to_string(),
    }
}

/// Parse `text` in a fresh context without verifying it.
pub fn parse_unverified(text: &str) -> (Context, Ptr<Operation>) {
    let mut ctx = context();
    match parse_from_str(spaced(Operation::top_level_parser()), &mut ctx, text) {
        Ok(op) => (ctx, op),
        Err(err) => panic!("{text}\ndoes not parse: {err}"),
    }
}
