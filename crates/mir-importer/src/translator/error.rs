//! The translation stage's error: which function, which construct, where.

use rustc_public::ty::Span;

/// Why a function could not be translated to dialect-mir.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not supported in device code: {construct}{}", location_suffix(.location))]
pub struct TranslationError {
    /// What could not be translated, in words a user recognises ("a call through a `dyn`
    /// trait object", "inline `asm!`").
    pub construct: String,
    /// `file:line:column` of the construct, when MIR has it.
    pub location: Option<String>,
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
        }
    }

    /// Attaches `span` as the location, unless one is already known.
    pub fn at(mut self, span: Span) -> Self {
        if self.location.is_none() {
            self.location = Some(describe_span(span));
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
