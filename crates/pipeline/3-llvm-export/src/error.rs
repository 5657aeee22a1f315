//! Typed errors of the exporter ([`ExportError`]).

use thiserror::Error;

/// Why a pliron module could not be written as LLVM IR.
///
/// Every variant names the op, type or attribute at fault; the exporter never emits text it
/// cannot vouch for.
#[derive(Debug, Error)]
pub enum ExportError {
    /// An op with no LLVM IR counterpart in this exporter.
    #[error("op `{op}` is not supported by the LLVM IR exporter")]
    UnsupportedOp { op: String },
    /// A type with no LLVM IR counterpart in this exporter.
    #[error("type `{ty}` is not supported by the LLVM IR exporter")]
    UnsupportedType { ty: String },
    /// An attribute of an op that cannot be expressed (a linkage, a constant kind, ...).
    #[error("op `{op}`: attribute {attr} is not supported: {reason}")]
    UnsupportedAttr {
        op: String,
        attr: String,
        reason: String,
    },
    /// An op that breaks an invariant the exporter relies on (missing attribute, bad arity).
    #[error("op `{op}` is malformed: {reason}")]
    Malformed { op: String, reason: String },
    /// A call or address-of naming a symbol that is not a function or global of the module.
    #[error("op `{op}` refers to `@{symbol}`, which is not a function or global of the module")]
    UnknownSymbol { op: String, symbol: String },
    /// Two module items mapping to the same LLVM symbol, or intrinsic uses with clashing types.
    #[error("symbol `@{symbol}` is defined twice or used with different types")]
    SymbolClash { symbol: String },
    /// A function body whose entry block is a branch target (LLVM forbids it).
    #[error("the entry block is the target of a branch")]
    EntryBlockHasPredecessors,
    /// A block whose terminator is missing or is not the last op.
    #[error("block `{block}` does not end with a terminator")]
    MissingTerminator { block: String },
    /// A function carrying the kernel marker whose result type is not `void`.
    #[error("kernel functions must return void")]
    KernelNotVoid,
    /// An error inside a function, with the function's name.
    #[error("in function `@{func}`: {source}")]
    InFunction {
        func: String,
        #[source]
        source: Box<ExportError>,
    },
}

impl ExportError {
    /// Attach the name of the function in which this error happened.
    pub(crate) fn in_function(self, func: &str) -> Self {
        ExportError::InFunction {
            func: func.to_string(),
            source: Box::new(self),
        }
    }

    pub(crate) fn malformed(op: impl Into<String>, reason: impl Into<String>) -> Self {
        ExportError::Malformed {
            op: op.into(),
            reason: reason.into(),
        }
    }
}
