//! `nvvm.intrinsic` ops in a `mir` kernel: every declared intrinsic built, verified, printed
//! (snapshot) and parsed back; verification failures; the PTX ISA a module needs.

use dialect_mir::ops::{FuncOp, ReturnOp};
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

/// The scalars an intrinsic may take, one kernel parameter each.
const SCALARS: [Scalar; 10] = [
    Scalar::Bool,
    Scalar::U32,
    Scalar::I32,
    Scalar::U64,
    Scalar::I64,
    Scalar::F32,
    Scalar::F64,
    Scalar::F32x32,
    Scalar::F32x64,
    Scalar::F32x128,
];

#[test]
fn every_intrinsic_builds_verifies_prints_and_parses() {
    let ctx = &mut context();
    let module = ModuleOp::new(ctx, ident!("m"));
    let params: Vec<_> = SCALARS.iter().map(|s| s.mir_type(ctx)).collect();
    let ty = FunctionType::get(ctx, params, vec![]);
    let kernel = FuncOp::new(ctx, ident!("k"), ty);
    kernel.set_kernel(ctx, true);
    kernel
        .get_operation()
        .insert_at_back(module.get_body(ctx, 0), ctx);
    let entry = kernel.entry_block(ctx).unwrap();
    let mut b = IRInserter::<DummyListener>::new_at_block_end(entry);
    for intrinsic in table::ALL {
        let operands = intrinsic
            .operands
            .iter()
            .map(|scalar| {
                let index = SCALARS.iter().position(|s| s == scalar).unwrap();
                entry.deref(ctx).get_argument(index)
            })
            .collect();
        let op = IntrinsicOp::new(ctx, intrinsic, operands);
        b.append_op(ctx, &op);
    }
    let ret = ReturnOp::new(ctx, None);
    b.append_op(ctx, &ret);

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
    for intrinsic in table::ALL {
        assert!(
            reparsed.contains(&format!("nvvm.intrinsic {}(", intrinsic.name)),
            "{} in\n{reparsed}",
            intrinsic.name
        );
    }
}

#[test]
fn intrinsic_results_flow_into_mir_ops() {
    let (ctx, op) = parse(
        "builtin.module @m {
          ^m():
            mir.func @f: builtin.function <() -> (builtin.integer ui32)> {
              ^entry():
                t = nvvm.intrinsic read_ptx_sreg_tid_x() : () -> (builtin.integer ui32);
                mir.return t
            }
        }",
    );
    verify_operation(op, &ctx).unwrap();
}

#[test]
fn the_required_ptx_isa_is_the_newest_of_the_intrinsics_used() {
    let (ctx, op) = parse(
        "builtin.module @m {
          ^m():
            mir.func @f: builtin.function <(builtin.integer ui32) -> ()> {
              ^entry(x: builtin.integer ui32):
                t = nvvm.intrinsic read_ptx_sreg_tid_x() : () -> (builtin.integer ui32);
                s = nvvm.intrinsic redux_sync_add(x) : (builtin.integer ui32) -> (builtin.integer ui32);
                nvvm.intrinsic nanosleep(s) : (builtin.integer ui32) -> ();
                mir.return
            }
        }",
    );
    assert_eq!(required_ptx_isa(&ctx, op), Some(70));
    let (ctx, op) = parse(
        "builtin.module @m {
          ^m():
            mir.func @f: builtin.function <() -> ()> {
              ^entry():
                mir.return
            }
        }",
    );
    assert_eq!(required_ptx_isa(&ctx, op), None);
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
fn ill_typed_intrinsics_fail_to_verify() {
    let errors = [
        error_of(
            "r = nvvm.intrinsic shfl_sync_idx_i32(x, u) : (builtin.fp32, builtin.integer ui32) \
             -> (builtin.integer ui32);\n mir.return",
        ),
        error_of(
            "r = nvvm.intrinsic shfl_sync_bfly_i32(u, u) : (builtin.integer ui32, \
             builtin.integer ui32) -> (builtin.integer si64);\n mir.return",
        ),
        error_of(
            "r = nvvm.intrinsic read_ptx_sreg_laneid(u) : (builtin.integer ui32) -> \
             (builtin.integer ui32);\n mir.return",
        ),
        error_of("nvvm.intrinsic read_ptx_sreg_laneid() : () -> ();\n mir.return"),
        error_of(
            "r = nvvm.intrinsic vote_ballot_sync(u) : (builtin.integer ui32) -> \
             (builtin.integer ui32);\n mir.return",
        ),
    ];
    insta::assert_snapshot!(errors.join("\n"));
}

#[test]
fn unknown_intrinsics_do_not_parse() {
    let mut ctx = context();
    let text = "builtin.module @m {
          ^m():
            mir.func @f: builtin.function <() -> ()> {
              ^entry():
                nvvm.intrinsic no_such_thing() : () -> ();
                mir.return
            }
        }";
    let err = parse_from_str(spaced(Operation::top_level_parser()), &mut ctx, text)
        .expect_err("must not parse");
    assert!(
        err.to_string()
            .contains("unknown GPU intrinsic `no_such_thing`"),
        "{err}"
    );
}
