//! Ill-typed `mir` IR fails to verify, with a message naming the op and the culprit.

mod common;

use common::*;
use dialect_mir::ops::*;
use pliron::{builtin::attributes::IntegerAttr, op::Op, utils::apint::APInt};

/// The module holding the functions of `funcs`, each `(name, signature, body)`.
fn module_text(funcs: &[(&str, &str, &str)]) -> String {
    let funcs: Vec<String> = funcs
        .iter()
        .map(|(name, signature, body)| {
            format!("    mir.func @{name}: builtin.function <{signature}> {{\n{body}\n    }}")
        })
        .collect();
    format!("builtin.module @m {{\n  ^m():\n{}\n}}", funcs.join(";\n"))
}

/// The last line (the message) of the verification error of `funcs`.
fn error_of(funcs: &[(&str, &str, &str)]) -> String {
    let (ctx, op) = parse_unverified(&module_text(funcs));
    let message = verify_error(&ctx, op);
    message.lines().last().unwrap_or_default().to_string()
}

const SI32: &str = "builtin.integer si32";
const UI32: &str = "builtin.integer ui32";

/// A function `f` of two `si32` and a `ui32` parameters, returning nothing, with `body`
/// (which must end with a terminator).
fn in_f(body: &str) -> String {
    error_of(&[(
        "f",
        &format!("({SI32}, {SI32}, {UI32}) -> ()"),
        &format!("      ^entry(a: {SI32}, b: {SI32}, u: {UI32}):\n{body}"),
    )])
}

#[test]
fn ill_typed_ops_fail_to_verify() {
    let cases: Vec<(&str, String)> = vec![
        (
            "add of mixed signedness",
            in_f(&format!(
                "        r = mir.add a, u : {SI32};\n        mir.return"
            )),
        ),
        (
            "add result type",
            in_f(&format!(
                "        r = mir.add a, b : {UI32};\n        mir.return"
            )),
        ),
        (
            "add of signless integers",
            in_f(
                "        x = mir.undef : builtin.integer i32;\n        \
                 r = mir.add x, x : builtin.integer i32;\n        mir.return",
            ),
        ),
        (
            "shift of floats",
            in_f(
                "        x = mir.constant <builtin.single 1.0> : builtin.fp32;\n        \
                 r = mir.shl x, x : builtin.fp32;\n        mir.return",
            ),
        ),
        (
            "comparison result",
            in_f(&format!(
                "        r = mir.eq a, b : {SI32};\n        mir.return"
            )),
        ),
        (
            "comparison operands",
            in_f("        r = mir.lt a, u : builtin.integer i1;\n        mir.return"),
        ),
        (
            "checked flag",
            in_f(&format!(
                "        r, o = mir.checked_add a, b : {SI32}, {SI32};\n        mir.return"
            )),
        ),
        (
            "cmp result",
            in_f(&format!(
                "        r = mir.cmp a, b : {SI32};\n        mir.return"
            )),
        ),
        (
            "constant type",
            in_f(&format!(
                "        r = mir.constant <builtin.integer <1: ui8>> : {SI32};\n        mir.return"
            )),
        ),
        (
            "load result",
            in_f(&format!(
                "        p = mir.alloca {SI32};\n        \
                 r = mir.load p : {UI32};\n        mir.return"
            )),
        ),
        (
            "load of a non-pointer",
            in_f(&format!(
                "        r = mir.load a : {SI32};\n        mir.return"
            )),
        ),
        (
            "store value",
            in_f(&format!(
                "        p = mir.alloca {SI32};\n        mir.store *p = u;\n        mir.return"
            )),
        ),
        (
            "field out of range",
            in_f(&format!(
                "        p = mir.alloca mir.struct <\"S\", 4, 4, [{SI32} @ 0]>;\n        \
                 q = mir.field_addr p field 1 : mir.ptr <{SI32}, 0>;\n        mir.return"
            )),
        ),
        (
            "field pointer type",
            in_f(&format!(
                "        p = mir.alloca mir.struct <\"S\", 4, 4, [{SI32} @ 0]>;\n        \
                 q = mir.field_addr p field 0 : mir.ptr <{UI32}, 0>;\n        mir.return"
            )),
        ),
        (
            "index type",
            in_f(&format!(
                "        p = mir.alloca {SI32};\n        \
                 q = mir.ptr_offset p, u : mir.ptr <{SI32}, 0>;\n        mir.return"
            )),
        ),
        (
            "array element of a non-array",
            in_f(&format!(
                "        p = mir.alloca {SI32};\n        \
                 q = mir.array_elem_addr p : mir.ptr <{SI32}, 0>;\n        mir.return"
            )),
        ),
        (
            "slice data pointer in global memory",
            in_f(&format!(
                "        p = mir.alloca {SI32};\n        \
                 g = mir.ptr_cast p to mir.ptr <{SI32}, 1>;\n        \
                 n = mir.constant <builtin.integer <1: ui64>> : builtin.integer ui64;\n        \
                 s = mir.make_slice g, n : mir.slice <{SI32}>;\n        mir.return"
            )),
        ),
        (
            "slice length of a non-slice",
            in_f("        n = mir.slice_len a : builtin.integer ui64;\n        mir.return"),
        ),
        (
            "variant out of range",
            in_f(&format!(
                "        p = mir.alloca mir.enum <\"E\", 1, 1, {SI32}, direct(builtin.integer ui8 @ 0), \
                 [\"A\" = 0 [], \"B\" = 1 []]>;\n        \
                 mir.set_discriminant p variant 2;\n        mir.return"
            )),
        ),
        (
            "discriminant type",
            in_f(&format!(
                "        p = mir.alloca mir.enum <\"E\", 1, 1, {SI32}, direct(builtin.integer ui8 @ 0), \
                 [\"A\" = 0 [], \"B\" = 1 []]>;\n        \
                 d = mir.get_discriminant p : builtin.integer ui8;\n        mir.return"
            )),
        ),
        (
            "int to float from a pointer",
            in_f(&format!(
                "        p = mir.alloca {SI32};\n        \
                 x = mir.int_to_float p to builtin.fp32;\n        mir.return"
            )),
        ),
        (
            "bitcast of different sizes",
            in_f("        x = mir.bitcast a to builtin.fp64;\n        mir.return"),
        ),
        (
            "condition type",
            in_f("        mir.cond_br a, ^x(), ^x()\n      ^x():\n        mir.return"),
        ),
        (
            "branch operands",
            in_f("        mir.goto ^x(a)\n      ^x():\n        mir.return"),
        ),
        (
            "branch operand types",
            in_f(&format!(
                "        mir.goto ^x(u)\n      ^x(y: {SI32}):\n        mir.return"
            )),
        ),
        ("return value", in_f("        mir.return a")),
        (
            "call argument",
            error_of(&[
                (
                    "g",
                    &format!("({UI32}) -> ()"),
                    &format!("      ^entry(x: {UI32}):\n        mir.return"),
                ),
                (
                    "f",
                    &format!("({SI32}) -> ()"),
                    &format!(
                        "      ^entry(a: {SI32}):\n        \
                         mir.call @g(a) : builtin.function <({UI32}) -> ()>;\n        mir.return"
                    ),
                ),
            ]),
        ),
        (
            "unknown callee",
            error_of(&[(
                "f",
                "() -> ()",
                "      ^entry():\n        mir.call @nowhere() : builtin.function <() -> ()>;\n        \
                 mir.return",
            )]),
        ),
        (
            "callee type",
            error_of(&[
                ("g", "() -> ()", "      ^entry():\n        mir.return"),
                (
                    "f",
                    "() -> ()",
                    &format!(
                        "      ^entry():\n        \
                         r = mir.call @g() : builtin.function <() -> ({SI32})>;\n        mir.return"
                    ),
                ),
            ]),
        ),
        (
            "entry block arguments",
            error_of(&[(
                "f",
                &format!("({SI32}) -> ()"),
                "      ^entry():\n        mir.return",
            )]),
        ),
        (
            "select condition",
            in_f(&format!(
                "        r = mir.select a, a, b : {SI32};\n        mir.return"
            )),
        ),
        (
            "select arms",
            in_f(&format!(
                "        c = mir.eq a, b : builtin.integer i1;\n        \
                 r = mir.select c, a, u : {SI32};\n        mir.return"
            )),
        ),
        (
            "copy between pointees",
            in_f(&format!(
                "        p = mir.alloca {SI32};\n        q = mir.alloca {UI32};\n        \
                 n = mir.undef : builtin.integer ui64;\n        \
                 mir.copy p, q, n volatile false;\n        mir.return"
            )),
        ),
        (
            "write_bytes byte",
            in_f(&format!(
                "        p = mir.alloca {SI32};\n        n = mir.undef : builtin.integer ui64;\n        \
                 mir.write_bytes p, a, n volatile false;\n        mir.return"
            )),
        ),
        (
            "volatile_load alignment",
            in_f(&format!(
                "        p = mir.alloca {SI32};\n        \
                 r = mir.volatile_load p align 3 : {SI32};\n        mir.return"
            )),
        ),
        (
            "volatile_store value",
            in_f(&format!(
                "        p = mir.alloca {SI32};\n        mir.volatile_store *p = u align 4;\n        \
                 mir.return"
            )),
        ),
    ];
    let report: Vec<String> = cases
        .iter()
        .map(|(name, message)| format!("{name}: {message}"))
        .collect();
    insta::assert_snapshot!(report.join("\n"));
}

#[test]
fn switch_needs_one_successor_per_case_plus_otherwise() {
    let ctx = &mut context();
    let module = module(ctx);
    let u8_ty = ui(ctx, 8);
    let f = func(ctx, module, "f", vec![u8_ty], vec![]);
    let entry = f.entry_block(ctx).unwrap();
    let target = block(ctx, f, "target");
    Builder::at_end(target).add(ReturnOp::new(ctx, None), ctx);
    let d = entry.deref(ctx).get_argument(0);
    let u8_int = pliron::r#type::TypedHandle::from_handle(u8_ty, ctx).unwrap();
    let width = std::num::NonZero::new(8).unwrap();
    let values = vec![
        IntegerAttr::new(u8_int, APInt::from_u128(1, width)),
        IntegerAttr::new(u8_int, APInt::from_u128(2, width)),
    ];
    let switch =
        SwitchIntOp::new_with_args(ctx, d, values, vec![(target, vec![]), (target, vec![])]);
    Builder::at_end(entry).add(switch, ctx);
    let message = verify_error(ctx, module.get_operation());
    assert!(
        message.contains("2 case values need 3 successors, found 2"),
        "{message}"
    );
}

#[test]
fn terminator_must_end_its_block() {
    let text = module_text(&[(
        "f",
        "() -> ()",
        "      ^entry():\n        mir.trap;\n        mir.return",
    )]);
    let (ctx, op) = parse_unverified(&text);
    let message = verify_error(&ctx, op);
    assert!(
        message.contains("has a terminator that is not the last operation"),
        "{message}"
    );
}

#[test]
fn kernels_return_nothing() {
    let ctx = &mut context();
    let module = module(ctx);
    let u8_ty = ui(ctx, 8);
    let f = func(ctx, module, "k", vec![u8_ty], vec![u8_ty]);
    let entry = f.entry_block(ctx).unwrap();
    let x = entry.deref(ctx).get_argument(0);
    Builder::at_end(entry).add(ReturnOp::new(ctx, Some(x)), ctx);
    verify(ctx, module.get_operation());
    f.set_kernel(ctx, true);
    let message = verify_error(ctx, module.get_operation());
    assert!(
        message.contains("mir.func: a kernel returns nothing"),
        "{message}"
    );
}
