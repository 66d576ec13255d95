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

/// The error for a loop inside a work-item (`iterate`, `iterate-until` in a kernel) whose
/// state holds an array of run-time length (`what`: its type), e.g. a filter result.
pub fn loop_state_of_run_time_length(span: Span, what: &str, ty: &str) -> Diagnostic {
    Diagnostic::new(
        span,
        format!("`{what}` inside a kernel over a state of type {ty} (an array of run-time length) is not supported yet"),
    )
    .with_label(format!("{ty}: its length is known only at run time"))
    .with_note("a loop of one work-item keeps its state in private variables or one buffer: scalars, tuples, vectors and arrays whose length the types give (\"Loops inside a work-item\"); an array whose length changes from step to step needs a host-level loop")
}
