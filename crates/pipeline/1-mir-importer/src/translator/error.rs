//! The translation stage's error: which function, which construct, where.

use rustc_public::ty::Span;

/// Why a function could not be translated to dialect-mir.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{construct}{}", kind.prefix(), location_suffix(.location))]
pub struct TranslationError {
    /// What could not be translated, in words a user recognises ("a call through a `dyn`
    /// trait object", "inline `asm!`").
    pub construct: String,
    /// `file:line:column` of the construct, when MIR has it.
    pub location: Option<String>,
    /// The construct's span, for diagnostics that show the source.
    pub span: Option<Span>,
    /// Whether the construct is unsupported or the translator has a bug.
    pub kind: ErrorKind,
}

/// What kind of failure a [TranslationError] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// Rust that device code does not support.
    Unsupported,
    /// A bug in cuda-oxide (the translation does not verify).
    Internal,
}

impl ErrorKind {
    fn prefix(self) -> &'static str {
        match self {
            ErrorKind::Unsupported => "not supported in device code: ",
            ErrorKind::Internal => {
                "internal error in cuda-oxide (a bug; please report it with this code): "
            }
        }
    }
}

fn location_suffix(location: &Option<String>) -> String {
    location
        .as_ref()
        .map(|l| format!(" (at {l})"))
        .unwrap_or_default()
}

impl TranslationError {
    /// An unsupported construct without a location yet.
    pub fn unsupported(construct: impl Into<String>) -> Self {
        Self {
            construct: construct.into(),
            location: None,
            span: None,
            kind: ErrorKind::Unsupported,
        }
    }

    /// A bug of the translator, described by `what`.
    pub fn internal(what: impl Into<String>) -> Self {
        Self {
            kind: ErrorKind::Internal,
            ..Self::unsupported(what)
        }
    }

    /// Attaches `span` as the location, unless one is already known.
    pub fn at(mut self, span: Span) -> Self {
        if self.location.is_none() {
            self.location = Some(describe_span(span));
            self.span = Some(span);
        }
        self
    }
}

/// `file:line:column` of a span.
pub fn describe_span(span: Span) -> String {
    let lines = span.get_lines();
    format!(
        "{}:{}:{}",
        span.get_filename(),
        lines.start_line,
        lines.start_col
    )
}

/// Shorthand for results of the translator.
pub type TResult<T> = Result<T, TranslationError>;

/// Returns early with an "unsupported" error.
macro_rules! unsupported {
    ($($arg:tt)*) => {
        return Err($crate::translator::error::TranslationError::unsupported(format!($($arg)*)))
    };
}
pub(crate) use unsupported;
