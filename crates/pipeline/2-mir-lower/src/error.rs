//! Errors of the lowering: each names the function and, where there is one, the op that could
//! not be lowered, so that a failure deep in a translated crate can be traced to its source.

use thiserror::Error;

/// Why one op, type or signature cannot be lowered (without saying where: see
/// [LoweringError]).
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum OpError {
    /// A type has no LLVM equivalent (or its layout cannot be expressed).
    #[error("type `{ty}` cannot be lowered: {reason}")]
    UnsupportedType {
        /// The printed type.
        ty: String,
        /// Why not.
        reason: String,
    },
    /// A construct that the lowering does not handle.
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// The input breaks an invariant that the dialect verifiers should have caught.
    #[error("malformed input: {0}")]
    Malformed(String),
}

/// A failure of [crate::lower_mir_to_llvm].
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum LoweringError {
    /// An op could not be converted.
    #[error("in function `{function}`: cannot lower `{op}`: {source}")]
    Op {
        /// The symbol of the enclosing function.
        function: String,
        /// The printed op.
        op: String,
        /// The reason.
        source: OpError,
    },
    /// A function's signature (or kernel entry ABI) could not be built.
    #[error("function `{function}`: {source}")]
    Signature {
        /// The symbol of the function.
        function: String,
        /// The reason.
        source: OpError,
    },
    /// A block argument has a type that cannot be lowered.
    #[error("in function `{function}`: block argument of type `{ty}`: {source}")]
    BlockArgument {
        /// The symbol of the enclosing function.
        function: String,
        /// The printed type.
        ty: String,
        /// The reason.
        source: OpError,
    },
    /// An op of another dialect than `mir` / `nvvm` / `llvm` (or one without a conversion) is
    /// left in the module.
    #[error("in function `{function}`: `{op}` has no conversion to the LLVM dialect")]
    Unconverted {
        /// The symbol of the enclosing function.
        function: String,
        /// The op's name.
        op: String,
    },
    /// A global's initial content cannot be expressed.
    #[error("global `{global}`: {reason}")]
    Global {
        /// The symbol of the global.
        global: String,
        /// Why not.
        reason: String,
    },
    /// The module holds something other than `mir.func`s and `mir.global`s.
    #[error("the module holds `{op}`, but only `mir.func` and `mir.global` ops can be lowered")]
    UnexpectedModuleItem {
        /// The op's name.
        op: String,
    },
    /// pliron reported an error of its own while converting.
    #[error("dialect conversion failed: {0}")]
    Conversion(String),
}
