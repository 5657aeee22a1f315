//! Functions: `mir.func`.

use pliron::{
    attribute::AttributeDict,
    basic_block::BasicBlock,
    builtin::{
        attributes::{IntegerAttr, StringAttr, TypeAttr, UnitAttr},
        op_interfaces::{
            ATTR_KEY_SYM_NAME, IsolatedFromAboveInterface, NOpdsInterface, NResultsInterface,
            OneRegionInterface, SymbolOpInterface,
        },
        type_interfaces::FunctionTypeInterface,
        types::{FunctionType, IntegerType, Signedness},
    },
    combine::{Parser, optional, parser::char::string, token},
    common_traits::Verify,
    context::{Context, Ptr},
    derive::{op_interface_impl, pliron_op},
    dict_key, ident,
    identifier::Identifier,
    input_err,
    irfmt::parsers::spaced,
    linked_list::ContainsLinkedList,
    location::Location,
    op::{Op, OpObj},
    operation::Operation,
    opts::dce::BlockArgRemoval,
    parsable::{Parsable, ParseResult, StateStream, StreamLocation},
    printable::{self, Printable, indented_nl},
    region::Region,
    result::Result,
    r#type::{TypeHandle, Typed, TypedHandle},
    utils::apint::APInt,
};

use super::{invalid, memory::ResultCountErr, ty_str};

dict_key!(
    /// Attribute key of a kernel's `#[launch_bounds]` maximum threads per block (`ui32`).
    ATTR_KEY_MIR_FUNC_MAX_THREADS,
    "mir_func_max_threads"
);
dict_key!(
    /// Attribute key of a kernel's `#[launch_bounds]` minimum blocks per multiprocessor (`ui32`).
    ATTR_KEY_MIR_FUNC_MIN_BLOCKS,
    "mir_func_min_blocks"
);

dict_key!(
    /// Attribute key of a kernel's `#[cluster_dims(x, y, z)]`: blocks per cluster along x
    /// (`ui32`; the y and z keys follow).
    ATTR_KEY_MIR_FUNC_CLUSTER_X,
    "mir_func_cluster_x"
);
dict_key!(
    /// Attribute key of a kernel's blocks per cluster along y (`ui32`).
    ATTR_KEY_MIR_FUNC_CLUSTER_Y,
    "mir_func_cluster_y"
);
dict_key!(
    /// Attribute key of a kernel's blocks per cluster along z (`ui32`).
    ATTR_KEY_MIR_FUNC_CLUSTER_Z,
    "mir_func_cluster_z"
);

dict_key!(
    /// Attribute key of a kernel's `#[block_dims(x, y, z)]`: threads per block along x
    /// (`ui32`; the y and z keys follow).
    ATTR_KEY_MIR_FUNC_BLOCK_X,
    "mir_func_block_x"
);
dict_key!(
    /// Attribute key of a kernel's threads per block along y (`ui32`).
    ATTR_KEY_MIR_FUNC_BLOCK_Y,
    "mir_func_block_y"
);
dict_key!(
    /// Attribute key of a kernel's threads per block along z (`ui32`).
    ATTR_KEY_MIR_FUNC_BLOCK_Z,
    "mir_func_block_z"
);

dict_key!(
    /// Attribute key marking a function never to be inlined (`#[inline(never)]`: LLVM
    /// `noinline`, PTX `.noinline`). A unit attribute.
    ATTR_KEY_MIR_FUNC_NOINLINE,
    "mir_func_noinline"
);

dict_key!(
    /// Attribute key of the mask of a kernel's grid-constant parameters (`ui64`, bit `i` for
    /// parameter `i`, zero-sized parameters not counted): `&T` parameters whose value the host
    /// passes, and whose address stays in the kernel's parameter space.
    ATTR_KEY_MIR_FUNC_GRID_CONSTANTS,
    "mir_func_grid_constants"
);

dict_key!(
    /// Attribute key of what a kernel may assume about the memory behind each parameter (a
    /// `builtin.string`, one [ParamAccess] letter per parameter, see [ParamAccess::letter]).
    ATTR_KEY_MIR_FUNC_PARAM_ACCESS,
    "mir_func_param_access"
);

dict_key!(
    /// Attribute key of the fused multiply-add opt-in (a `builtin.unit`): float
    /// multiplications and additions in this function may be contracted into one `fma`
    /// (`#[kernel(fmad)]`, or a build with `CUDA_OXIDE_FMAD=1`). Without it they round
    /// separately, as Rust specifies.
    ATTR_KEY_MIR_FUNC_FMAD,
    "mir_func_fmad"
);

/// What Rust's reference rules promise about the memory a kernel parameter points to, for
/// the whole launch: the facts behind LLVM's `noalias` and `readonly`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ParamAccess {
    /// A shared reference to data without interior mutability (`&[T]`, `T: Freeze`): nothing
    /// writes the memory while the kernel runs, and nothing else reaches it mutably.
    Shared,
    /// An exclusive reference (`&mut [T]`, `DisjointSlice<T>`): only this parameter reaches
    /// the memory while the kernel runs.
    Exclusive,
    /// No promise (scalars, aggregates, shared references to atomics or cells).
    Plain,
}

impl ParamAccess {
    /// The letter that stands for it in [ATTR_KEY_MIR_FUNC_PARAM_ACCESS]: `s`, `x` or `-`.
    pub fn letter(self) -> char {
        match self {
            ParamAccess::Shared => 's',
            ParamAccess::Exclusive => 'x',
            ParamAccess::Plain => '-',
        }
    }

    /// The access a letter of [ATTR_KEY_MIR_FUNC_PARAM_ACCESS] stands for.
    pub fn from_letter(letter: char) -> Option<ParamAccess> {
        match letter {
            's' => Some(ParamAccess::Shared),
            'x' => Some(ParamAccess::Exclusive),
            '-' => Some(ParamAccess::Plain),
            _ => None,
        }
    }
}

/// The most threads a CUDA block can have, and so the largest launch bound.
pub const MAX_THREADS_PER_BLOCK: u32 = 1024;

/// A kernel's launch bounds (`#[launch_bounds(max_threads, min_blocks)]`): the most threads a
/// block of it is launched with, and optionally how many blocks should fit on one
/// multiprocessor. They become PTX `.maxntid` and `.minnctapersm`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct LaunchBounds {
    /// Maximum threads per block, 1 to 1024.
    pub max_threads: u32,
    /// Minimum resident blocks per multiprocessor, if asked for (at least 1).
    pub min_blocks: Option<u32>,
}

/// The most blocks a portable thread-block cluster has (sm_90).
pub const MAX_BLOCKS_PER_CLUSTER: u32 = 8;

/// A kernel's cluster shape (`#[cluster_dims(x, y, z)]`, CUDA's `__cluster_dims__`): every
/// launch of it groups blocks into clusters of `x × y × z` blocks. It becomes PTX
/// `.explicitcluster` and `.reqnctapercluster x, y, z` (sm_90 and newer).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct ClusterDims {
    /// Blocks per cluster along x, y and z: each at least 1, their product at most
    /// [MAX_BLOCKS_PER_CLUSTER].
    pub dims: [u32; 3],
}

impl ClusterDims {
    /// Why `dims` is not a cluster shape, if it is not one.
    pub fn problem(dims: [u32; 3]) -> Option<String> {
        if dims.contains(&0) {
            return Some(format!(
                "a cluster of {} x {} x {} blocks: each side is at least 1",
                dims[0], dims[1], dims[2]
            ));
        }
        let blocks = dims.iter().map(|&d| u64::from(d)).product::<u64>();
        (blocks > u64::from(MAX_BLOCKS_PER_CLUSTER)).then(|| {
            format!(
                "a cluster of {} x {} x {} = {blocks} blocks: a cluster has at most \
                 {MAX_BLOCKS_PER_CLUSTER}",
                dims[0], dims[1], dims[2]
            )
        })
    }
}

/// The most threads along z of a block.
pub const MAX_BLOCK_Z: u32 = 64;

/// A kernel's exact block shape (`#[block_dims(x, y, z)]`): every launch has blocks of `x × y ×
/// z` threads. It becomes PTX `.reqntid x, y, z`, from which LLVM bounds the thread indices.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct BlockDims {
    /// Threads per block along x, y and z: each at least 1, z at most [MAX_BLOCK_Z], their
    /// product at most [MAX_THREADS_PER_BLOCK].
    pub dims: [u32; 3],
}

impl BlockDims {
    /// Why `dims` is not a block shape, if it is not one.
    pub fn problem(dims: [u32; 3]) -> Option<String> {
        let [x, y, z] = dims;
        if dims.contains(&0) {
            return Some(format!(
                "a block of {x} x {y} x {z} threads: each side is at least 1"
            ));
        }
        if z > MAX_BLOCK_Z {
            return Some(format!(
                "a block of {x} x {y} x {z} threads: at most {MAX_BLOCK_Z} along z"
            ));
        }
        let threads = dims.iter().map(|&d| u64::from(d)).product::<u64>();
        (threads > u64::from(MAX_THREADS_PER_BLOCK)).then(|| {
            format!(
                "a block of {x} x {y} x {z} = {threads} threads: a block has at most \
                 {MAX_THREADS_PER_BLOCK}"
            )
        })
    }
}

/// The three attribute keys of a kernel's cluster shape.
const CLUSTER_KEYS: [&Identifier; 3] = [
    &ATTR_KEY_MIR_FUNC_CLUSTER_X,
    &ATTR_KEY_MIR_FUNC_CLUSTER_Y,
    &ATTR_KEY_MIR_FUNC_CLUSTER_Z,
];

/// The three attribute keys of a kernel's block shape.
const BLOCK_KEYS: [&Identifier; 3] = [
    &ATTR_KEY_MIR_FUNC_BLOCK_X,
    &ATTR_KEY_MIR_FUNC_BLOCK_Y,
    &ATTR_KEY_MIR_FUNC_BLOCK_Z,
];

/// A function: a symbol (the export name), a `builtin.function` type (parameters without the
/// ZST ones, zero or one result) and one region whose entry block's arguments are the
/// parameters. GPU entry points carry the `kernel` marker. A function whose region has no
/// block is a declaration. Functions live in a `builtin.module`.
///
/// Printed as `mir.func @name: builtin.function <(params) -> (results)> [kernel] { ... }`,
/// with `kernel` present only on kernels. A kernel's launch bounds are the attributes
/// `mir_func_max_threads` and `mir_func_min_blocks`, printed in its attribute dictionary.
#[pliron_op(
    name = "mir.func",
    interfaces = [
        OneRegionInterface,
        SymbolOpInterface,
        IsolatedFromAboveInterface,
        NOpdsInterface<0>,
        NResultsInterface<0>
    ],
    attributes = (mir_func_type: TypeAttr, mir_func_kernel: UnitAttr)
)]
pub struct FuncOp;

impl FuncOp {
    /// A function named `name` of type `ty`, with an empty entry block whose arguments are the
    /// parameters.
    pub fn new(ctx: &mut Context, name: Identifier, ty: TypedHandle<FunctionType>) -> Self {
        let func = Self::new_declaration(ctx, name, ty);
        let arg_types = ty.deref(ctx).arg_types();
        let entry = BasicBlock::new(ctx, Some(ident!("entry")), arg_types);
        entry.insert_at_front(func.get_region(ctx), ctx);
        func
    }

    /// A declaration (a function without body) named `name` of type `ty`.
    pub fn new_declaration(
        ctx: &mut Context,
        name: Identifier,
        ty: TypedHandle<FunctionType>,
    ) -> Self {
        let op = Operation::new(ctx, Self::get_concrete_op_info(), vec![], vec![], vec![], 1);
        let func = Self { op };
        func.set_symbol_name(ctx, name);
        func.set_attr_mir_func_type(ctx, TypeAttr::new(ty.into()));
        func
    }

    /// The function type.
    pub fn func_type(&self, ctx: &Context) -> TypedHandle<FunctionType> {
        let ty = self
            .get_attr_mir_func_type(ctx)
            .expect("mir.func has a type")
            .get_type(ctx);
        TypedHandle::from_handle(ty, ctx).expect("mir.func type is a builtin.function")
    }

    /// The parameter types.
    pub fn arg_types(&self, ctx: &Context) -> Vec<TypeHandle> {
        self.func_type(ctx).deref(ctx).arg_types()
    }

    /// The result types (none or one).
    pub fn result_types(&self, ctx: &Context) -> Vec<TypeHandle> {
        self.func_type(ctx).deref(ctx).res_types()
    }

    /// The entry block, absent for a declaration.
    pub fn entry_block(&self, ctx: &Context) -> Option<Ptr<BasicBlock>> {
        self.get_region(ctx).deref(ctx).get_head()
    }

    /// Whether this is a declaration (no body).
    pub fn is_declaration(&self, ctx: &Context) -> bool {
        self.entry_block(ctx).is_none()
    }

    /// Whether this function is a GPU kernel (an entry point launched from the host).
    pub fn is_kernel(&self, ctx: &Context) -> bool {
        self.get_attr_mir_func_kernel(ctx).is_some()
    }

    /// Mark this function as a kernel, or not.
    pub fn set_kernel(&self, ctx: &Context, kernel: bool) {
        if kernel {
            self.set_attr_mir_func_kernel(ctx, UnitAttr::new());
        } else {
            self.get_operation()
                .deref_mut(ctx)
                .attributes
                .0
                .remove(&func_op_attr_names::ATTR_KEY_MIR_FUNC_KERNEL);
        }
    }
}

impl FuncOp {
    /// Mark the function never to be inlined (`#[inline(never)]`).
    pub fn set_noinline(&self, ctx: &Context) {
        self.get_operation()
            .deref_mut(ctx)
            .attributes
            .set(ATTR_KEY_MIR_FUNC_NOINLINE.clone(), UnitAttr::new());
    }

    /// Whether the function is never to be inlined.
    pub fn is_noinline(&self, ctx: &Context) -> bool {
        self.get_operation()
            .deref(ctx)
            .attributes
            .0
            .contains_key(&ATTR_KEY_MIR_FUNC_NOINLINE)
    }

    /// Record the kernel's launch bounds.
    pub fn set_launch_bounds(&self, ctx: &mut Context, bounds: LaunchBounds) {
        let ui32 = IntegerType::get(ctx, 32, Signedness::Unsigned);
        let width = std::num::NonZero::new(32).expect("32 is not zero");
        let int = |value: u32| IntegerAttr::new(ui32, APInt::from_u64(u64::from(value), width));
        let attributes = &mut self.get_operation().deref_mut(ctx).attributes;
        attributes.set(
            ATTR_KEY_MIR_FUNC_MAX_THREADS.clone(),
            int(bounds.max_threads),
        );
        match bounds.min_blocks {
            Some(min) => attributes.set(ATTR_KEY_MIR_FUNC_MIN_BLOCKS.clone(), int(min)),
            None => {
                attributes.0.remove(&ATTR_KEY_MIR_FUNC_MIN_BLOCKS);
            }
        }
    }

    /// Record the kernel's cluster shape.
    pub fn set_cluster_dims(&self, ctx: &mut Context, cluster: ClusterDims) {
        self.set_shape(ctx, CLUSTER_KEYS, cluster.dims);
    }

    /// The kernel's cluster shape, if it has one (all three attributes).
    pub fn cluster_dims(&self, ctx: &Context) -> Option<ClusterDims> {
        self.shape(ctx, CLUSTER_KEYS)
            .map(|dims| ClusterDims { dims })
    }

    /// Record the kernel's block shape.
    pub fn set_block_dims(&self, ctx: &mut Context, block: BlockDims) {
        self.set_shape(ctx, BLOCK_KEYS, block.dims);
    }

    /// The kernel's block shape, if it has one (all three attributes).
    pub fn block_dims(&self, ctx: &Context) -> Option<BlockDims> {
        self.shape(ctx, BLOCK_KEYS).map(|dims| BlockDims { dims })
    }

    fn set_shape(&self, ctx: &mut Context, keys: [&Identifier; 3], dims: [u32; 3]) {
        let ui32 = IntegerType::get(ctx, 32, Signedness::Unsigned);
        let width = std::num::NonZero::new(32).expect("32 is not zero");
        let int = |value: u32| IntegerAttr::new(ui32, APInt::from_u64(u64::from(value), width));
        let attributes = &mut self.get_operation().deref_mut(ctx).attributes;
        for (key, value) in keys.into_iter().zip(dims) {
            attributes.set(key.clone(), int(value));
        }
    }

    fn shape(&self, ctx: &Context, keys: [&Identifier; 3]) -> Option<[u32; 3]> {
        let op = self.get_operation().deref(ctx);
        let read = |key: &Identifier| {
            op.attributes
                .get::<IntegerAttr>(key)
                .map(|attr| u32::try_from(attr.value().to_u64()).unwrap_or(u32::MAX))
        };
        Some([read(keys[0])?, read(keys[1])?, read(keys[2])?])
    }

    /// Checks a shape's three attributes: all or none, on a kernel only, a valid shape.
    fn verify_shape(
        &self,
        ctx: &Context,
        keys: [&Identifier; 3],
        what: &str,
        problem: fn([u32; 3]) -> Option<String>,
    ) -> Result<()> {
        let present = {
            let op = self.get_operation().deref(ctx);
            keys.iter()
                .filter(|key| op.attributes.0.contains_key(**key))
                .count()
        };
        if present == 0 {
            return Ok(());
        }
        if !self.is_kernel(ctx) {
            return invalid(self, ctx, format!("only a kernel has a {what} shape"));
        }
        let Some(dims) = self.shape(ctx, keys).filter(|_| present == 3) else {
            return invalid(
                self,
                ctx,
                format!(
                    "a {what} shape needs the three integer attributes `{}`, `_y` and `_z`",
                    keys[0]
                ),
            );
        };
        match problem(dims) {
            Some(problem) => invalid(self, ctx, problem),
            None => Ok(()),
        }
    }

    /// Record which parameters of the kernel are grid constants (bit `i` for parameter `i`).
    pub fn set_grid_constants(&self, ctx: &mut Context, mask: u64) {
        let ui64 = IntegerType::get(ctx, 64, Signedness::Unsigned);
        let width = std::num::NonZero::new(64).expect("64 is not zero");
        let attr = IntegerAttr::new(ui64, APInt::from_u64(mask, width));
        let attributes = &mut self.get_operation().deref_mut(ctx).attributes;
        if mask == 0 {
            attributes.0.remove(&ATTR_KEY_MIR_FUNC_GRID_CONSTANTS);
        } else {
            attributes.set(ATTR_KEY_MIR_FUNC_GRID_CONSTANTS.clone(), attr);
        }
    }

    /// The mask of the kernel's grid-constant parameters (bit `i` for parameter `i`).
    pub fn grid_constants(&self, ctx: &Context) -> u64 {
        self.get_operation()
            .deref(ctx)
            .attributes
            .get::<IntegerAttr>(&ATTR_KEY_MIR_FUNC_GRID_CONSTANTS)
            .map_or(0, |attr| attr.value().to_u64())
    }

    /// Record what the kernel may assume about each parameter's memory (one entry per
    /// parameter, in order).
    pub fn set_param_access(&self, ctx: &Context, access: &[ParamAccess]) {
        let letters: String = access.iter().map(|a| a.letter()).collect();
        self.get_operation().deref_mut(ctx).attributes.set(
            ATTR_KEY_MIR_FUNC_PARAM_ACCESS.clone(),
            StringAttr::new(letters),
        );
    }

    /// What the kernel may assume about each parameter's memory; [ParamAccess::Plain] for
    /// every parameter when nothing was recorded.
    pub fn param_access(&self, ctx: &Context) -> Vec<ParamAccess> {
        let count = self.arg_types(ctx).len();
        let op = self.get_operation().deref(ctx);
        let recorded = op
            .attributes
            .get::<StringAttr>(&ATTR_KEY_MIR_FUNC_PARAM_ACCESS)
            .map(|attr| String::from(attr.clone()))
            .unwrap_or_default();
        let mut access: Vec<ParamAccess> = recorded
            .chars()
            .map(|c| ParamAccess::from_letter(c).unwrap_or(ParamAccess::Plain))
            .collect();
        access.resize(count, ParamAccess::Plain);
        access
    }

    /// Allow (or not) contracting float multiplications and additions of this function into
    /// fused multiply-adds ([ATTR_KEY_MIR_FUNC_FMAD]).
    pub fn set_fmad(&self, ctx: &Context, fmad: bool) {
        let attributes = &mut self.get_operation().deref_mut(ctx).attributes;
        if fmad {
            attributes.set(ATTR_KEY_MIR_FUNC_FMAD.clone(), UnitAttr::new());
        } else {
            attributes.0.remove(&ATTR_KEY_MIR_FUNC_FMAD);
        }
    }

    /// Whether float multiplications and additions of this function may be contracted.
    pub fn fmad(&self, ctx: &Context) -> bool {
        self.get_operation()
            .deref(ctx)
            .attributes
            .get::<UnitAttr>(&ATTR_KEY_MIR_FUNC_FMAD)
            .is_some()
    }

    /// The kernel's launch bounds, if it has them.
    pub fn launch_bounds(&self, ctx: &Context) -> Option<LaunchBounds> {
        let op = self.get_operation().deref(ctx);
        let read = |key| {
            op.attributes
                .get::<IntegerAttr>(key)
                .map(|attr| attr.value().to_u64())
        };
        let max_threads = read(&ATTR_KEY_MIR_FUNC_MAX_THREADS)?;
        Some(LaunchBounds {
            max_threads: u32::try_from(max_threads).unwrap_or(u32::MAX),
            min_blocks: read(&ATTR_KEY_MIR_FUNC_MIN_BLOCKS)
                .map(|min| u32::try_from(min).unwrap_or(u32::MAX)),
        })
    }
}

impl Typed for FuncOp {
    fn get_type(&self, ctx: &Context) -> TypeHandle {
        self.func_type(ctx).into()
    }
}

impl Verify for FuncOp {
    fn verify(&self, ctx: &Context) -> Result<()> {
        let Some(ty) = self
            .get_attr_mir_func_type(ctx)
            .map(|attr| attr.get_type(ctx))
        else {
            return invalid(self, ctx, "missing function type");
        };
        let Ok(ty) = TypedHandle::<FunctionType>::from_handle(ty, ctx) else {
            return invalid(
                self,
                ctx,
                format!("type {} is not a builtin.function", ty_str(ctx, ty)),
            );
        };
        if ty.deref(ctx).res_types().len() > 1 {
            return invalid(self, ctx, "a function has at most one result");
        }
        if self.is_kernel(ctx) && !ty.deref(ctx).res_types().is_empty() {
            return invalid(self, ctx, "a kernel returns nothing");
        }
        let attributes = &self.get_operation().deref(ctx).attributes;
        let has_bounds = attributes.0.contains_key(&ATTR_KEY_MIR_FUNC_MAX_THREADS)
            || attributes.0.contains_key(&ATTR_KEY_MIR_FUNC_MIN_BLOCKS);
        if has_bounds {
            if !self.is_kernel(ctx) {
                return invalid(self, ctx, "only a kernel has launch bounds");
            }
            let Some(bounds) = self.launch_bounds(ctx) else {
                return invalid(
                    self,
                    ctx,
                    "launch bounds need a `mir_func_max_threads` integer attribute",
                );
            };
            if !(1..=MAX_THREADS_PER_BLOCK).contains(&bounds.max_threads) {
                return invalid(
                    self,
                    ctx,
                    format!(
                        "launch bounds of {} threads per block; 1 to {MAX_THREADS_PER_BLOCK} \
                         are possible",
                        bounds.max_threads
                    ),
                );
            }
            if bounds.min_blocks == Some(0) {
                return invalid(
                    self,
                    ctx,
                    "launch bounds asking for 0 blocks per multiprocessor; at least 1 is needed",
                );
            }
        }
        self.verify_shape(ctx, CLUSTER_KEYS, "cluster", ClusterDims::problem)?;
        self.verify_shape(ctx, BLOCK_KEYS, "block", BlockDims::problem)?;
        let grid_constants = self.grid_constants(ctx);
        if grid_constants != 0 {
            if !self.is_kernel(ctx) {
                return invalid(self, ctx, "only a kernel has grid-constant parameters");
            }
            let params = ty.deref(ctx).arg_types();
            for bit in 0..64 {
                if grid_constants >> bit & 1 == 0 {
                    continue;
                }
                let is_ptr = params
                    .get(bit)
                    .is_some_and(|&param| param.deref(ctx).is::<crate::types::PtrType>());
                if !is_ptr {
                    return invalid(
                        self,
                        ctx,
                        format!("grid-constant parameter {bit} is not a pointer parameter"),
                    );
                }
            }
        }
        if let Some(entry) = self.entry_block(ctx) {
            let arg_types: Vec<_> = entry
                .deref(ctx)
                .arguments()
                .map(|arg| arg.get_type(ctx))
                .collect();
            if arg_types != ty.deref(ctx).arg_types() {
                return invalid(
                    self,
                    ctx,
                    "the entry block arguments differ from the parameter types",
                );
            }
        }
        Ok(())
    }
}

#[op_interface_impl]
impl BlockArgRemoval for FuncOp {
    fn can_remove_block_args(&self, ctx: &Context, block: Ptr<BasicBlock>) -> bool {
        self.entry_block(ctx) != Some(block)
    }
}

impl Printable for FuncOp {
    fn fmt(
        &self,
        ctx: &Context,
        state: &printable::State,
        f: &mut core::fmt::Formatter<'_>,
    ) -> core::fmt::Result {
        write!(
            f,
            "{} @{}: {}",
            self.get_opid(),
            self.get_symbol_name(ctx),
            self.func_type(ctx).print(ctx, state)
        )?;
        if self.is_kernel(ctx) {
            write!(f, " kernel")?;
        }
        let mut other_attributes = self.get_operation().deref(ctx).attributes.clone();
        other_attributes.0.retain(|key, _| {
            key != &ATTR_KEY_SYM_NAME
                && key != &func_op_attr_names::ATTR_KEY_MIR_FUNC_TYPE
                && key != &func_op_attr_names::ATTR_KEY_MIR_FUNC_KERNEL
        });
        if !other_attributes.0.is_empty() {
            let _indent = state.indent();
            write!(
                f,
                "{}{}",
                indented_nl(state),
                other_attributes.print(ctx, state)
            )?;
        }
        write!(f, " ")?;
        self.get_region(ctx).fmt(ctx, state, f)
    }
}

impl Parsable for FuncOp {
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
        let op = Operation::new(
            state_stream.state.ctx,
            Self::get_concrete_op_info(),
            vec![],
            vec![],
            vec![],
            0,
        );
        (
            spaced(token('@').with(Identifier::parser(()))).skip(spaced(token(':'))),
            spaced(TypedHandle::<FunctionType>::parser(())),
            spaced(optional(string("kernel"))),
            spaced(optional(AttributeDict::parser(()))),
            spaced(Region::parser(op)),
        )
            .parse_stream(state_stream)
            .map(|(name, ty, kernel, attributes, _region)| -> OpObj {
                let ctx = &mut *state_stream.state.ctx;
                if let Some(attributes) = attributes {
                    op.deref_mut(ctx).attributes = attributes;
                }
                let func = FuncOp { op };
                func.set_symbol_name(ctx, name);
                func.set_attr_mir_func_type(ctx, TypeAttr::new(ty.into()));
                func.set_kernel(ctx, kernel.is_some());
                OpObj::new(func)
            })
            .into()
    }
}
