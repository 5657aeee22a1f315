//! `nvvm` ops in a `mir` kernel: building, verifying, printing (snapshot), parsing back, and
//! verification failures.

use dialect_mir::ops::{AddOp, FuncOp};
use dialect_nvvm::*;
use pliron::{
    builtin::{
        given_names::erase_given_names, op_interfaces::SingleBlockRegionInterface, ops::ModuleOp,
        types::FunctionType,
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
};

/// A fresh context with both dialects registered.
fn context() -> Context {
    let mut ctx = Context::new();
    dialect_mir::register(&mut ctx);
    register(&mut ctx);
    ctx
}

fn print(ctx: &Context, op: Ptr<Operation>) -> String {
    op.deref(ctx).disp(ctx).to_string()
}

/// Parse `text` in a fresh context.
fn parse(text: &str) -> (Context, Ptr<Operation>) {
    let mut ctx = context();
    let op = parse_from_str(spaced(Operation::top_level_parser()), &mut ctx, text)
        .unwrap_or_else(|err| panic!("{text}\ndoes not parse: {err}"));
    (ctx, op)
}

/// Rename the generated value (`v<N>`) and block (`block<N>v<M>`) names of `text` to `n0`,
/// `n1`, ... in order of first appearance, so that two prints of the same IR compare equal.
fn renumber(text: &str) -> String {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let generated = |word: &str| match word.strip_prefix("block") {
        Some(rest) => rest
            .split_once('v')
            .is_some_and(|(id, version)| digits(id) && digits(version)),
        None => word.strip_prefix('v').is_some_and(digits),
    };
    let mut names: Vec<String> = vec![];
    let mut out = String::new();
    for piece in text.split_inclusive(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
        let split = piece
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(piece.len());
        let (word, rest) = piece.split_at(split);
        if generated(word) {
            let idx = names
                .iter()
                .position(|name| name == word)
                .unwrap_or_else(|| {
                    names.push(word.to_string());
                    names.len() - 1
                });
            out.push_str(&format!("n{idx}"));
        } else {
            out.push_str(word);
        }
        out.push_str(rest);
    }
    out
}

#[test]
fn nvvm_ops_build_verify_print_and_parse() {
    let ctx = &mut context();
    let module = ModuleOp::new(ctx, ident!("m"));
    let ty = FunctionType::get(ctx, vec![], vec![]);
    let kernel = FuncOp::new(ctx, ident!("k"), ty);
    kernel.set_kernel(ctx, true);
    kernel
        .get_operation()
        .insert_at_back(module.get_body(ctx, 0), ctx);
    let entry = kernel.entry_block(ctx).unwrap();
    let mut b = IRInserter::<DummyListener>::new_at_block_end(entry);

    let mut values = vec![];
    for register in [
        SpecialRegister::Tid,
        SpecialRegister::Ctaid,
        SpecialRegister::Ntid,
        SpecialRegister::Nctaid,
    ] {
        for axis in [Axis::X, Axis::Y, Axis::Z] {
            let op = new_sreg_read(ctx, register, axis);
            b.append_operation(ctx, op);
            values.push(op.deref(ctx).get_result(0));
        }
    }
    let lane = ReadPtxSregLaneIdOp::new(ctx);
    b.append_op(ctx, &lane);
    let lane = lane.result(ctx);
    let global = AddOp::new(ctx, values[0], values[3]);
    b.append_op(ctx, &global);
    let barrier = Barrier0Op::new(ctx);
    b.append_op(ctx, &barrier);
    for mode in [
        ShuffleMode::Idx,
        ShuffleMode::Bfly,
        ShuffleMode::Down,
        ShuffleMode::Up,
    ] {
        let op = new_shuffle(ctx, mode, global.result(ctx), lane);
        b.append_operation(ctx, op);
    }
    let trap = TrapOp::new(ctx);
    b.append_op(ctx, &trap);

    verify_operation(module.get_operation(), ctx).unwrap();
    let text = print(ctx, module.get_operation());
    insta::assert_snapshot!(text);

    let (ctx2, op2) = parse(&text);
    verify_operation(op2, &ctx2).unwrap();
    for (ctx, op) in [(&*ctx, module.get_operation()), (&ctx2, op2)] {
        erase_given_names(ctx, op);
        erase_locations(ctx, op);
    }
    let reparsed = renumber(&print(&ctx2, op2));
    assert_eq!(reparsed, renumber(&print(ctx, module.get_operation())));
    for opid in [
        "nvvm.read_ptx_sreg_nctaid_z",
        "nvvm.barrier0",
        "nvvm.shfl_sync_up_i32",
    ] {
        assert!(reparsed.contains(opid), "{opid} in\n{reparsed}");
    }
}

#[test]
fn special_register_values_flow_into_mir_ops() {
    let (ctx, op) = parse(
        "builtin.module @m {
          ^m():
            mir.func @f: builtin.function <() -> (builtin.integer ui32)> {
              ^entry():
                t = nvvm.read_ptx_sreg_tid_x : builtin.integer ui32;
                mir.return t
            }
        }",
    );
    verify_operation(op, &ctx).unwrap();
}

/// The message of the verification error of the module `text`.
fn error_of(body: &str) -> String {
    let (ctx, op) = parse(&format!(
        "builtin.module @m {{
          ^m():
            mir.func @f: builtin.function <(builtin.fp32, builtin.integer ui32) -> ()> {{
              ^entry(x: builtin.fp32, u: builtin.integer ui32):
                {body}
            }}
        }}"
    ));
    let err = verify_operation(op, &ctx).expect_err("must not verify");
    err.to_string().lines().last().unwrap().to_string()
}

#[test]
fn ill_typed_nvvm_ops_fail_to_verify() {
    let errors = [
        error_of("r = nvvm.shfl_sync_idx_i32 x, u : builtin.integer ui32;\n mir.return"),
        error_of("r = nvvm.shfl_sync_bfly_i32 u, u : builtin.integer si64;\n mir.return"),
        error_of("r = nvvm.read_ptx_sreg_laneid : builtin.integer si32;\n mir.return"),
        error_of("nvvm.trap;\n mir.return"),
    ];
    insta::assert_snapshot!(errors.join("\n"));
}
