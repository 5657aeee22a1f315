//! Module-level memory: `mir.global`, and the addresses of globals and functions
//! (`mir.global_addr`, `mir.func_addr`).
//!
//! Every constant allocation device code refers to (a promoted constant, a string literal, a
//! `static`, a vtable) is one `mir.global`: untyped bytes with the pointers they hold
//! ([Relocation]s), a size, an alignment and an NVPTX address space. Code reaches a global only
//! through `mir.global_addr`, which yields a generic pointer of whatever pointee the code reads
//! it as, as Rust's pointers are generic.

use pliron::{
    builtin::{
        attributes::{IdentifierAttr, UnitAttr},
        op_interfaces::{
            NOpdsInterface, NResultsInterface, OneResultInterface, SymbolOpInterface,
            SymbolUserOpInterface,
        },
    },
    combine::{Parser, attempt, choice, optional, parser::char::string, token},
    common_traits::Verify,
    context::Context,
    derive::{op_interface_impl, pliron_op},
    identifier::Identifier,
    input_err,
    irfmt::parsers::spaced,
    location::Location,
    op::{Op, OpObj},
    operation::Operation,
    parsable::{Parsable, ParseResult, StateStream, StreamLocation},
    printable::{self, Printable},
    result::Result,
    symbol_table::SymbolTableCollection,
    r#type::TypeHandle,
    value::Value,
};

use super::{FuncOp, expect_type, invalid, memory::ResultCountErr, no_side_effects, res, res_ty};
use crate::{
    attributes::{GlobalInitAttr, GlobalLayoutAttr},
    types::{ADDRSPACE_GENERIC, PtrType},
};

/// What a [GlobalOp] holds when the kernel starts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GlobalContent {
    /// These bytes and pointers (rustc's evaluated allocation).
    Init(GlobalInitAttr),
    /// Nothing defined: shared memory, which cannot be initialised.
    Uninit,
    /// Defined outside the module: the block's dynamic shared memory, sized at launch
    /// (`.extern .shared`), whose size is 0 here.
    Extern,
}

/// A global variable: `layout.size` bytes aligned to `layout.align` in NVPTX address space
/// `layout.address_space`, with its [GlobalContent]. Read-only unless `mutable` (a
/// `static mut`, or shared memory). Globals live in the `builtin.module`, beside the
/// `mir.func`s.
///
/// Printed as `mir.global @name <size S, align A, addrspace N> [mutable] = x"..." [relocs]`,
/// with `uninit` or `extern` instead of `= ...` for the other contents.
#[pliron_op(
    name = "mir.global",
    interfaces = [SymbolOpInterface, NOpdsInterface<0>, NResultsInterface<0>],
    attributes = (
        mir_global_layout: GlobalLayoutAttr,
        mir_global_init: GlobalInitAttr,
        mir_global_mutable: UnitAttr,
        mir_global_extern: UnitAttr
    )
)]
pub struct GlobalOp;

impl GlobalOp {
    /// A global named `name` with `layout` and `content`.
    pub fn new(
        ctx: &mut Context,
        name: Identifier,
        layout: GlobalLayoutAttr,
        mutable: bool,
        content: GlobalContent,
    ) -> Self {
        let op = Operation::new(ctx, Self::get_concrete_op_info(), vec![], vec![], vec![], 0);
        let global = Self { op };
        global.set_symbol_name(ctx, name);
        global.set_attr_mir_global_layout(ctx, layout);
        if mutable {
            global.set_attr_mir_global_mutable(ctx, UnitAttr::new());
        }
        match content {
            GlobalContent::Init(init) => global.set_attr_mir_global_init(ctx, init),
            GlobalContent::Uninit => {}
            GlobalContent::Extern => global.set_attr_mir_global_extern(ctx, UnitAttr::new()),
        }
        global
    }

    /// Size, alignment and address space.
    pub fn layout(&self, ctx: &Context) -> GlobalLayoutAttr {
        *self
            .get_attr_mir_global_layout(ctx)
            .expect("mir.global has a layout")
    }

    /// Whether device code may write it.
    pub fn is_mutable(&self, ctx: &Context) -> bool {
        self.get_attr_mir_global_mutable(ctx).is_some()
    }

    /// Its content.
    pub fn content(&self, ctx: &Context) -> GlobalContent {
        if let Some(init) = self.get_attr_mir_global_init(ctx) {
            GlobalContent::Init(init.clone())
        } else if self.get_attr_mir_global_extern(ctx).is_some() {
            GlobalContent::Extern
        } else {
            GlobalContent::Uninit
        }
    }
}

impl Verify for GlobalOp {
    fn verify(&self, ctx: &Context) -> Result<()> {
        let Some(layout) = self.get_attr_mir_global_layout(ctx).map(|l| *l) else {
            return invalid(self, ctx, "missing layout");
        };
        let has_init = self.get_attr_mir_global_init(ctx).is_some();
        let is_extern = self.get_attr_mir_global_extern(ctx).is_some();
        if has_init && is_extern {
            return invalid(self, ctx, "an extern global has no initial bytes");
        }
        if is_extern && layout.size != 0 {
            return invalid(self, ctx, "an extern global has size 0");
        }
        if let Some(init) = self.get_attr_mir_global_init(ctx)
            && init.bytes.len() as u64 != layout.size
        {
            return invalid(
                self,
                ctx,
                format!(
                    "{} initial bytes for a size of {}",
                    init.bytes.len(),
                    layout.size
                ),
            );
        }
        Ok(())
    }
}

/// A symbol used by a `mir.global` or an address op is missing or of the wrong kind.
#[derive(Debug, thiserror::Error)]
pub enum SymbolRefErr {
    #[error("{0}: no symbol named {1}")]
    NotFound(String, String),
    #[error("{0}: {1} is not a {2}")]
    WrongKind(String, String, &'static str),
}

/// Check that `name`, used by `op`, names an op of kind `O` (described as `what`).
fn expect_symbol<O: Op>(
    op: &dyn Op,
    ctx: &Context,
    symbol_tables: &mut SymbolTableCollection,
    name: &Identifier,
    what: &'static str,
) -> Result<()> {
    let opid = op.get_opid().to_string();
    let Some(found) = symbol_tables.lookup_symbol_in_nearest_table(ctx, op.get_operation(), name)
    else {
        return pliron::verify_err!(op.loc(ctx), SymbolRefErr::NotFound(opid, name.to_string()));
    };
    if Operation::get_op::<O>(found.get_operation(), ctx).is_none() {
        return pliron::verify_err!(
            op.loc(ctx),
            SymbolRefErr::WrongKind(opid, name.to_string(), what)
        );
    }
    Ok(())
}

#[op_interface_impl]
impl SymbolUserOpInterface for GlobalOp {
    fn verify_symbol_uses(
        &self,
        ctx: &Context,
        symbol_tables: &mut SymbolTableCollection,
    ) -> Result<()> {
        for name in self.used_symbols(ctx) {
            let found =
                symbol_tables.lookup_symbol_in_nearest_table(ctx, self.get_operation(), &name);
            let is_target = found.is_some_and(|op| {
                let op = op.get_operation();
                Operation::get_op::<GlobalOp>(op, ctx).is_some()
                    || Operation::get_op::<FuncOp>(op, ctx).is_some()
            });
            if !is_target {
                return pliron::verify_err!(
                    self.loc(ctx),
                    SymbolRefErr::WrongKind(
                        self.get_opid().to_string(),
                        name.to_string(),
                        "mir.global or mir.func"
                    )
                );
            }
        }
        Ok(())
    }

    fn used_symbols(&self, ctx: &Context) -> Vec<Identifier> {
        self.get_attr_mir_global_init(ctx)
            .map(|init| init.relocations.iter().map(|r| r.target.clone()).collect())
            .unwrap_or_default()
    }
}

impl Printable for GlobalOp {
    fn fmt(
        &self,
        ctx: &Context,
        state: &printable::State,
        f: &mut core::fmt::Formatter<'_>,
    ) -> core::fmt::Result {
        write!(
            f,
            "{} @{} {}",
            self.get_opid(),
            self.get_symbol_name(ctx),
            self.layout(ctx).print(ctx, state)
        )?;
        if self.is_mutable(ctx) {
            write!(f, " mutable")?;
        }
        match self.content(ctx) {
            GlobalContent::Init(init) => write!(f, " = {}", init.print(ctx, state)),
            GlobalContent::Uninit => write!(f, " uninit"),
            GlobalContent::Extern => write!(f, " extern"),
        }
    }
}

impl Parsable for GlobalOp {
    type Arg = Vec<(Identifier, Location)>;
    type Parsed = OpObj;

    fn parse<'a>(
        state_stream: &mut StateStream<'a>,
        results: Self::Arg,
    ) -> ParseResult<'a, Self::Parsed> {
        if !results.is_empty() {
            input_err!(
                state_stream.loc(),
                ResultCountErr(Self::get_opid_static().to_string(), 0, results.len())
            )?
        }
        let content = choice((
            spaced(token('='))
                .with(spaced(GlobalInitAttr::parser(())))
                .map(GlobalContent::Init),
            attempt(spaced(string("uninit"))).map(|_| GlobalContent::Uninit),
            spaced(string("extern")).map(|_| GlobalContent::Extern),
        ));
        (
            spaced(token('@').with(Identifier::parser(()))),
            spaced(GlobalLayoutAttr::parser(())),
            spaced(optional(attempt(string("mutable")))),
            content,
        )
            .parse_stream(state_stream)
            .map(|(name, layout, mutable, content)| {
                let ctx = &mut *state_stream.state.ctx;
                OpObj::new(GlobalOp::new(ctx, name, layout, mutable.is_some(), content))
            })
            .into()
    }
}

/// Check that the result of `op` is a generic `mir.ptr`.
fn expect_generic_ptr_result(op: &dyn Op, ctx: &Context) -> Result<()> {
    let ty = res_ty(op, ctx, 0);
    let ok = ty
        .deref(ctx)
        .downcast_ref::<PtrType>()
        .is_some_and(|ptr| ptr.address_space() == ADDRSPACE_GENERIC);
    expect_type(op, ctx, ok, "result", "a generic mir.ptr", ty)
}

/// The generic address of the `mir.global` named `global`, as a pointer to whatever type the
/// code reads there (a global is untyped bytes). A global in another address space (shared
/// memory) is converted to the generic address space, as Rust's pointers are generic; LLVM
/// infers the specific space back where it can.
///
/// Printed as `p = mir.global_addr @global : mir.ptr<T, 0>`.
///
/// | result | type |
/// |--------|------|
/// | `res` | `mir.ptr<T, 0>` |
#[pliron_op(
    name = "mir.global_addr",
    format = "`@` attr($mir_global_addr_symbol, $IdentifierAttr) ` : ` type($0)",
    interfaces = [NOpdsInterface<0>, OneResultInterface],
    attributes = (mir_global_addr_symbol: IdentifierAttr)
)]
pub struct GlobalAddrOp;

impl GlobalAddrOp {
    /// The address of `global` as a value of type `ptr_ty`, a generic `mir.ptr`.
    pub fn new(ctx: &mut Context, global: Identifier, ptr_ty: TypeHandle) -> Self {
        let op = Operation::new(
            ctx,
            Self::get_concrete_op_info(),
            vec![ptr_ty],
            vec![],
            vec![],
            0,
        );
        let op = Self { op };
        op.set_attr_mir_global_addr_symbol(ctx, IdentifierAttr::new(global));
        op
    }

    /// The global's name.
    pub fn global(&self, ctx: &Context) -> Identifier {
        self.get_attr_mir_global_addr_symbol(ctx)
            .expect("mir.global_addr names a global")
            .clone()
            .into()
    }

    /// The address.
    pub fn result(&self, ctx: &Context) -> Value {
        res(self, ctx, 0)
    }
}

impl Verify for GlobalAddrOp {
    fn verify(&self, ctx: &Context) -> Result<()> {
        if self.get_attr_mir_global_addr_symbol(ctx).is_none() {
            return invalid(self, ctx, "missing global name");
        }
        expect_generic_ptr_result(self, ctx)
    }
}

#[op_interface_impl]
impl SymbolUserOpInterface for GlobalAddrOp {
    fn verify_symbol_uses(
        &self,
        ctx: &Context,
        symbol_tables: &mut SymbolTableCollection,
    ) -> Result<()> {
        expect_symbol::<GlobalOp>(self, ctx, symbol_tables, &self.global(ctx), "mir.global")
    }

    fn used_symbols(&self, ctx: &Context) -> Vec<Identifier> {
        vec![self.global(ctx)]
    }
}

/// The address of the `mir.func` named `func`: a function pointer (`fn(..)` values, vtable
/// entries), called with `mir.call_indirect`.
///
/// Printed as `p = mir.func_addr @func : mir.ptr<T, 0>`.
///
/// | result | type |
/// |--------|------|
/// | `res` | `mir.ptr<T, 0>` |
#[pliron_op(
    name = "mir.func_addr",
    format = "`@` attr($mir_func_addr_symbol, $IdentifierAttr) ` : ` type($0)",
    interfaces = [NOpdsInterface<0>, OneResultInterface],
    attributes = (mir_func_addr_symbol: IdentifierAttr)
)]
pub struct FuncAddrOp;

impl FuncAddrOp {
    /// The address of `func` as a value of type `ptr_ty`, a generic `mir.ptr`.
    pub fn new(ctx: &mut Context, func: Identifier, ptr_ty: TypeHandle) -> Self {
        let op = Operation::new(
            ctx,
            Self::get_concrete_op_info(),
            vec![ptr_ty],
            vec![],
            vec![],
            0,
        );
        let op = Self { op };
        op.set_attr_mir_func_addr_symbol(ctx, IdentifierAttr::new(func));
        op
    }

    /// The function's name.
    pub fn func(&self, ctx: &Context) -> Identifier {
        self.get_attr_mir_func_addr_symbol(ctx)
            .expect("mir.func_addr names a function")
            .clone()
            .into()
    }

    /// The address.
    pub fn result(&self, ctx: &Context) -> Value {
        res(self, ctx, 0)
    }
}

impl Verify for FuncAddrOp {
    fn verify(&self, ctx: &Context) -> Result<()> {
        if self.get_attr_mir_func_addr_symbol(ctx).is_none() {
            return invalid(self, ctx, "missing function name");
        }
        expect_generic_ptr_result(self, ctx)
    }
}

#[op_interface_impl]
impl SymbolUserOpInterface for FuncAddrOp {
    fn verify_symbol_uses(
        &self,
        ctx: &Context,
        symbol_tables: &mut SymbolTableCollection,
    ) -> Result<()> {
        expect_symbol::<FuncOp>(self, ctx, symbol_tables, &self.func(ctx), "mir.func")
    }

    fn used_symbols(&self, ctx: &Context) -> Vec<Identifier> {
        vec![self.func(ctx)]
    }
}

no_side_effects!(GlobalAddrOp, FuncAddrOp);
