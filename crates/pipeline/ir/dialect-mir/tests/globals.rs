//! Globals, addresses of globals and functions, indirect calls and trait objects: built,
//! verified, printed (snapshot) and parsed back; malformed ones rejected.

mod common;

use common::*;
use dialect_mir::{
    attributes::{GlobalInitAttr, GlobalLayoutAttr, Relocation},
    ops::*,
    types::{DynPtrType, PtrType, StructType, usize_type},
};
use pliron::{
    builtin::{op_interfaces::CallOpInterface, types::FunctionType},
    context::Context,
    ident,
    op::Op,
    r#type::TypeHandle,
};

fn layout(size: u64, align: u64, address_space: u32) -> GlobalLayoutAttr {
    GlobalLayoutAttr {
        size,
        align,
        address_space,
    }
}

/// A `mir.global` at the end of `module`.
fn add_global(
    ctx: &mut Context,
    module: pliron::builtin::ops::ModuleOp,
    name: &str,
    layout: GlobalLayoutAttr,
    mutable: bool,
    content: GlobalContent,
) {
    use pliron::builtin::op_interfaces::SingleBlockRegionInterface;
    let name = name.try_into().unwrap();
    GlobalOp::new(ctx, name, layout, mutable, content)
        .get_operation()
        .insert_at_back(module.get_body(ctx, 0), ctx);
}

#[test]
fn globals_addresses_indirect_calls_and_trait_objects() {
    let ctx = &mut context();
    let module = module(ctx);
    let u8_ty = ui(ctx, 8);
    let u32_ty = ui(ctx, 32);
    let usize_ty: TypeHandle = usize_type(ctx).into();

    // A function whose address a table holds.
    let double = func(ctx, module, "double", vec![u32_ty], vec![u32_ty]);
    let x = double.entry_block(ctx).unwrap().deref(ctx).get_argument(0);
    let mut b = Builder::at_end(double.entry_block(ctx).unwrap());
    let twice = b.add(AddOp::new(ctx, x, x), ctx).result(ctx);
    b.add(ReturnOp::new(ctx, Some(twice)), ctx);

    // "four" and a `&[&str]`-like table pointing into it, a function table, a counter,
    // shared memory and the dynamic shared memory.
    let text = GlobalInitAttr {
        bytes: b"four".to_vec(),
        relocations: vec![],
    };
    add_global(
        ctx,
        module,
        "str_0",
        layout(4, 1, 1),
        false,
        GlobalContent::Init(text),
    );
    let mut table_bytes = vec![0u8; 16];
    table_bytes[8] = 3;
    let table = GlobalInitAttr {
        bytes: table_bytes,
        relocations: vec![Relocation {
            offset: 0,
            target: ident!("str_0"),
            addend: 1,
        }],
    };
    add_global(
        ctx,
        module,
        "table",
        layout(16, 8, 1),
        false,
        GlobalContent::Init(table),
    );
    let fns = GlobalInitAttr {
        bytes: vec![0; 8],
        relocations: vec![Relocation {
            offset: 0,
            target: ident!("double"),
            addend: 0,
        }],
    };
    add_global(
        ctx,
        module,
        "fns",
        layout(8, 8, 1),
        false,
        GlobalContent::Init(fns),
    );
    let counter = GlobalInitAttr {
        bytes: vec![0; 4],
        relocations: vec![],
    };
    add_global(
        ctx,
        module,
        "counter",
        layout(4, 4, 1),
        true,
        GlobalContent::Init(counter),
    );
    add_global(
        ctx,
        module,
        "tile",
        layout(1024, 16, 3),
        true,
        GlobalContent::Uninit,
    );
    add_global(
        ctx,
        module,
        "dynamic",
        layout(0, 16, 3),
        true,
        GlobalContent::Extern,
    );

    let f = func(ctx, module, "user", vec![u32_ty], vec![u32_ty]);
    let arg = f.entry_block(ctx).unwrap().deref(ctx).get_argument(0);
    let mut b = Builder::at_end(f.entry_block(ctx).unwrap());
    let ptr_u8 = PtrType::get_generic(ctx, u8_ty).into();
    let text_ptr = b
        .add(GlobalAddrOp::new(ctx, ident!("str_0"), ptr_u8), ctx)
        .result(ctx);
    b.add(LoadOp::new(ctx, text_ptr), ctx);
    let fn_struct = StructType::get(ctx, "fn", 0, 1, vec![]).into();
    let fn_ptr_ty: TypeHandle = PtrType::get_generic(ctx, fn_struct).into();
    let table_ptr_ty = PtrType::get_generic(ctx, fn_ptr_ty).into();
    let table_ptr = b
        .add(GlobalAddrOp::new(ctx, ident!("fns"), table_ptr_ty), ctx)
        .result(ctx);
    let loaded = b.add(LoadOp::new(ctx, table_ptr), ctx).result(ctx);
    let direct = b
        .add(FuncAddrOp::new(ctx, ident!("double"), fn_ptr_ty), ctx)
        .result(ctx);
    let callee_ty = FunctionType::get(ctx, vec![u32_ty], vec![u32_ty]);
    let call = b.add(CallIndirectOp::new(ctx, loaded, callee_ty, vec![arg]), ctx);
    let result = call.result(ctx).unwrap();

    // A trait object from a data pointer and the function table as its vtable.
    let dyn_ty = DynPtrType::get(ctx, "Shape".into()).into();
    let object = b
        .add(MakeDynOp::new(ctx, text_ptr, direct, dyn_ty), ctx)
        .result(ctx);
    b.add(DynDataOp::new(ctx, object, ptr_u8), ctx);
    let ptr_usize = PtrType::get_generic(ctx, usize_ty).into();
    let vtable = b
        .add(DynVtableOp::new(ctx, object, ptr_usize), ctx)
        .result(ctx);
    b.add(LoadOp::new(ctx, vtable), ctx);
    b.add(ReturnOp::new(ctx, Some(result)), ctx);

    verify(ctx, module.get_operation());
    assert_eq!(call.args(ctx), vec![arg]);
    insta::assert_snapshot!(print(ctx, module.get_operation()));
    assert_roundtrip(ctx, module.get_operation());
}

#[test]
fn malformed_globals_and_addresses_are_rejected() {
    let cases = [
        (
            "mir.global @g <size 4, align 4, addrspace 1> = x\"0000\" []",
            "2 initial bytes for a size of 4",
        ),
        (
            "mir.global @g <size 8, align 8, addrspace 1> = x\"0000000000000000\" [0: @nowhere + 0]",
            "nowhere is not a mir.global or mir.func",
        ),
        (
            "mir.global @g <size 4, align 3, addrspace 1> uninit",
            "not a power of two",
        ),
        (
            "mir.global @g <size 8, align 8, addrspace 1> = x\"0000000000000000\" [4: @g + 0]",
            "does not fit",
        ),
    ];
    for (global, expected) in cases {
        let text = format!("builtin.module @m {{\n  ^m():\n    {global}\n}}");
        let (ctx, op) = parse_unverified(&text);
        let error = verify_error(&ctx, op);
        assert!(error.contains(expected), "{global}: {error}");
    }

    let text = r#"
builtin.module @m {
  ^m():
    mir.func @f: builtin.function <() -> ()> {
      ^entry():
        p = mir.global_addr @f : mir.ptr <builtin.integer ui8, 0>;
        mir.return
    }
}
"#;
    let (ctx, op) = parse_unverified(text);
    let error = verify_error(&ctx, op);
    assert!(error.contains("f is not a mir.global"), "{error}");

    let bodies = [
        (
            "d = mir.make_dyn x, p : mir.dyn_ptr <\"T\">;",
            "operand 0 (data) must be a generic mir.ptr",
        ),
        (
            "r = mir.call_indirect p(p) : builtin.function <(builtin.integer ui32) -> (builtin.integer ui32)>;",
            "the arguments differ from the callee's parameters",
        ),
        (
            "r = mir.call_indirect x(x) : builtin.function <(builtin.integer ui32) -> (builtin.integer ui32)>;",
            "not a mir.ptr",
        ),
    ];
    for (body, expected) in bodies {
        let text = format!(
            "builtin.module @m {{\n  ^m():\n    mir.func @f: builtin.function <(builtin.integer \
             ui32, mir.ptr <builtin.integer ui8, 0>) -> ()> {{\n      ^entry(x: builtin.integer \
             ui32, p: mir.ptr <builtin.integer ui8, 0>):\n        {body}\n        mir.return\n    \
             }}\n}}"
        );
        let (ctx, op) = parse_unverified(&text);
        let error = verify_error(&ctx, op);
        assert!(error.contains(expected), "{body}: {error}");
    }
}
