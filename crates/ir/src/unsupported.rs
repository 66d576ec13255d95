//! Parts of the language (`LANGUAGE.md`) that this compiler does not implement yet: each is
//! refused with one message saying so, at the place it is written, instead of as an unknown
//! name or an unrelated type error.

use crate::diag::{Diagnostic, Span};

/// Names of primitives the language has and this compiler does not implement yet, with what
/// to write instead today.
const PRIMITIVES: &[(&str, &str)] = &[];

/// The error for a use of `name` when it is a primitive that is not supported yet.
pub(crate) fn primitive(name: &str, span: Span) -> Option<Diagnostic> {
    let (_, note) = PRIMITIVES.iter().find(|(n, _)| *n == name)?;
    Some(
        Diagnostic::new(span, format!("`{name}` is not supported yet"))
            .with_label("not implemented by this compiler")
            .with_note(*note),
    )
}

/// The error for an `iterate` whose count is a size variable, inside a kernel.
pub fn iterate_count_in_kernel(span: Span) -> Diagnostic {
    Diagnostic::new(span, "`iterate` with a size-variable count inside a kernel is not supported yet")
        .with_label("a loop in one work-item")
        .with_note("inside a kernel the count must be a literal like #3 (the steps are unrolled); a size variable may count the steps of an `iterate` at host level, outside every `mapGlb`, `mapWrg` and sequential primitive")
}

/// The error for an `iterate-until` inside a kernel.
pub fn iterate_until_in_kernel(span: Span) -> Diagnostic {
    Diagnostic::new(span, "`iterate-until` inside a kernel is not supported yet")
        .with_label("a loop in one work-item")
        .with_note("`iterate-until` runs at host level, outside every `mapGlb`, `mapWrg` and sequential primitive, launching its kernels each step")
}

/// The error for an `iterate` inside a kernel whose state is not an array (`what`: its type).
pub fn iterate_state_in_kernel(span: Span, what: &str) -> Diagnostic {
    Diagnostic::new(
        span,
        format!("`iterate` inside a kernel over a {what} (not an array) is not supported yet"),
    )
    .with_label(what.to_string())
    .with_note("inside a kernel `iterate` steps an array; a scalar, tuple or vector state (\"Loops inside a work-item\") is part of the language but not implemented")
}
