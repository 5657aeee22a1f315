//! Globals (with pointers inside), shared memory, function pointers and trait objects: lowered,
//! exported (snapshot of the `.ll`), compiled to PTX and assembled with `ptxas` when available.

mod common;

use common::*;
use dialect_mir::{
    attributes::{GlobalInitAttr, GlobalLayoutAttr, Relocation},
    ops::*,
    types::{DynPtrType, StructType},
};
use pliron::{
    builtin::{op_interfaces::SingleBlockRegionInterface, ops::ModuleOp, types::FunctionType},
    context::Context,
    ident,
    op::Op,
    r#type::TypeHandle,
};

fn global(
    ctx: &mut Context,
    module: ModuleOp,
    name: &str,
    (size, align, address_space): (u64, u64, u32),
    mutable: bool,
    content: GlobalContent,
) {
    let layout = GlobalLayoutAttr {
        size,
        align,
        address_space,
    };
    GlobalOp::new(ctx, name.try_into().unwrap(), layout, mutable, content)
        .get_operation()
        .insert_at_back(module.get_body(ctx, 0), ctx);
}

fn init(bytes: Vec<u8>, relocations: &[(u64, &str, u64)]) -> GlobalContent {
    GlobalContent::Init(GlobalInitAttr {
        bytes,
        relocations: relocations
            .iter()
            .map(|&(offset, target, addend)| Relocation {
                offset,
                target: target.try_into().unwrap(),
                addend,
            })
            .collect(),
    })
}

/// `names: &[&str] = &["four", "our"]` over one string, a table of two functions, a counter,
/// a shared tile and the dynamic shared memory; the kernel calls `OPS[sel](x)` and a method of
/// a trait object whose vtable is `OPS`, goes through shared memory, and adds the length of
/// `names[1]` and the counter.
fn tables(ctx: &mut Context) -> ModuleOp {
    let m = module(ctx);
    let u32_ = ui(ctx, 32);
    let u64_ = ui(ctx, 64);
    let u8_ = ui(ctx, 8);

    for (name, add) in [("double", true), ("square", false)] {
        let (_, entry, args) = func(ctx, m, name, &[("v", u32_)], vec![u32_], false);
        let mut b = B::new(ctx, entry);
        let r = if add {
            b.val(|ctx| AddOp::new(ctx, args[0], args[0]))
        } else {
            b.val(|ctx| MulOp::new(ctx, args[0], args[0]))
        };
        b.op(|ctx| ReturnOp::new(ctx, Some(r)));
    }

    global(
        ctx,
        m,
        "text",
        (4, 1, 1),
        false,
        init(b"four".to_vec(), &[]),
    );
    let mut names = vec![0u8; 32];
    names[8] = 4;
    names[24] = 3;
    global(
        ctx,
        m,
        "names",
        (32, 8, 1),
        false,
        init(names, &[(0, "text", 0), (16, "text", 1)]),
    );
    global(
        ctx,
        m,
        "ops",
        (16, 8, 1),
        false,
        init(vec![0; 16], &[(0, "double", 0), (8, "square", 0)]),
    );
    global(
        ctx,
        m,
        "counter",
        (4, 4, 1),
        true,
        init(vec![7, 0, 0, 0], &[]),
    );
    global(ctx, m, "tile", (1024, 16, 3), true, GlobalContent::Uninit);
    global(ctx, m, "dynamic", (0, 16, 3), true, GlobalContent::Extern);

    let out_ty = ptr(ctx, u32_);
    let (_, entry, args) = func(
        ctx,
        m,
        "k",
        &[("sel", u32_), ("x", u32_), ("out", out_ty)],
        vec![],
        true,
    );
    let (sel, x, out) = (args[0], args[1], args[2]);
    let fn_struct: TypeHandle = StructType::get(ctx, "fn", 0, 1, vec![]).into();
    let fn_ptr = ptr(ctx, fn_struct);
    let fn_table = ptr(ctx, fn_ptr);
    let tile_ty = ptr(ctx, u32_);
    let str_ty = slice(ctx, u8_);
    let names_ty = ptr(ctx, str_ty);
    let u8_ptr = ptr(ctx, u8_);
    let callee_ty = FunctionType::get(ctx, vec![u32_], vec![u32_]);
    let dyn_ty = DynPtrType::get(ctx, "Op".into()).into();

    let mut b = B::new(ctx, entry);
    let index = b.val(|ctx| IntCastOp::new(ctx, sel, u64_));
    let one = b.int(u64_, 1);
    let table = b.val(|ctx| GlobalAddrOp::new(ctx, ident!("ops"), fn_table));
    let slot = b.val(|ctx| PtrOffsetOp::new(ctx, table, index));
    let f = b.val(|ctx| LoadOp::new(ctx, slot));
    let called = b.op(|ctx| CallIndirectOp::new(ctx, f, callee_ty, vec![x]));
    let r = called.result(b.ctx).unwrap();

    let data = b.val(|ctx| GlobalAddrOp::new(ctx, ident!("counter"), u8_ptr));
    let vtable = b.val(|ctx| GlobalAddrOp::new(ctx, ident!("ops"), u8_ptr));
    let object = b.val(|ctx| MakeDynOp::new(ctx, data, vtable, dyn_ty));
    let methods = b.val(|ctx| DynVtableOp::new(ctx, object, fn_table));
    let method_slot = b.val(|ctx| PtrOffsetOp::new(ctx, methods, one));
    let method = b.val(|ctx| LoadOp::new(ctx, method_slot));
    let called = b.op(|ctx| CallIndirectOp::new(ctx, method, callee_ty, vec![r]));
    let r = called.result(b.ctx).unwrap();
    b.val(|ctx| DynDataOp::new(ctx, object, u8_ptr));

    let tile = b.val(|ctx| GlobalAddrOp::new(ctx, ident!("tile"), tile_ty));
    let elem = b.val(|ctx| PtrOffsetOp::new(ctx, tile, index));
    b.op(|ctx| StoreOp::new(ctx, r, elem));
    let shared = b.val(|ctx| LoadOp::new(ctx, elem));
    let dynamic = b.val(|ctx| GlobalAddrOp::new(ctx, ident!("dynamic"), tile_ty));
    let dyn_elem = b.val(|ctx| PtrOffsetOp::new(ctx, dynamic, index));
    b.op(|ctx| StoreOp::new(ctx, shared, dyn_elem));

    let names = b.val(|ctx| GlobalAddrOp::new(ctx, ident!("names"), names_ty));
    let second = b.val(|ctx| PtrOffsetOp::new(ctx, names, index));
    let word = b.val(|ctx| LoadOp::new(ctx, second));
    let len = b.val(|ctx| SliceLenOp::new(ctx, word));
    let len = b.val(|ctx| IntCastOp::new(ctx, len, u32_));
    let counter = b.val(|ctx| GlobalAddrOp::new(ctx, ident!("counter"), tile_ty));
    let count = b.val(|ctx| LoadOp::new(ctx, counter));
    let total = b.val(|ctx| AddOp::new(ctx, shared, len));
    let total = b.val(|ctx| AddOp::new(ctx, total, count));
    b.op(|ctx| StoreOp::new(ctx, total, counter));
    b.op(|ctx| StoreOp::new(ctx, total, out));
    b.op(|ctx| ReturnOp::new(ctx, None));
    m
}

#[test]
fn globals_function_pointers_and_shared_memory() {
    let ctx = &mut context();
    let module = tables(ctx);
    lower(ctx, module);
    let ll = export(ctx, module);
    insta::assert_snapshot!("tables_ll", ll);
    assert!(
        ll.contains(
            "ptr getelementptr (i8, ptr addrspacecast (ptr addrspace(1) @text to ptr), i32 1)"
        ),
        "{ll}"
    );
    let ptx = check_ptx(&ll, &["k"]);
    for expected in [
        "generic(text)+1",
        ".global .align 8 .u64 ops[2] = {double, square};",
        ".extern .shared .align 16 .b8 dynamic[];",
        "st.shared.b32",
        ".callprototype",
    ] {
        assert!(ptx.contains(expected), "no `{expected}` in:\n{ptx}");
    }
}
