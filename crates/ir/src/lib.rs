//! The LIFT intermediate representation: reader, core IR, printer and reference interpreter.
//!
//! `parse` turns program text into a [`Program`] (see `expr.rs` for its invariants); every later
//! stage reads a `Program` and keeps its results in side tables keyed by [`ExprId`].
//! This crate knows nothing of OpenCL and does no IO.

pub mod diag;
pub mod expr;
pub mod host;
pub mod interp;
pub mod parse;
pub mod precision;
pub mod print;
pub mod rng;
pub mod sexp;
pub mod types;
pub mod unsupported;

pub use arith::{ArithExpr, Range};

/// How deeply a program may nest: lists in the text, elaboration (definitions inlined into
/// each other), and the expression tree that results. The reader rejects anything deeper with
/// "nested too deeply", and it is the only limit: every later pass must handle this depth,
/// given the stack of [`run_with_stack`].
pub const MAX_DEPTH: usize = 512;

/// Stack that every recursive pass together needs for a program at [`MAX_DEPTH`], with room
/// to spare: a debug build needs up to 64 MiB for the deepest shapes (an `o` pipeline of
/// maps), and 8 MiB overflow.
pub const STACK_BYTES: usize = 1 << 28;

/// Runs `f` on a thread with a [`STACK_BYTES`] stack and returns its result (a panic in `f`
/// resumes on the caller). Entry points that compile a program run it this way.
pub fn run_with_stack<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|scope| {
        let handle = std::thread::Builder::new()
            .name("lift-compile".into())
            .stack_size(STACK_BYTES)
            .spawn_scoped(scope, f);
        match handle {
            Ok(h) => match h.join() {
                Ok(v) => v,
                Err(panic) => std::panic::resume_unwind(panic),
            },
            Err(_) => no_thread(),
        }
    })
}

#[cold]
fn no_thread() -> ! {
    panic!("cannot start a thread for the compiler (out of memory for its stack?)")
}
pub use diag::{Diagnostic, Span};
pub use expr::*;
pub use parse::parse;
pub use precision::Precision;
pub use types::{distinct_lengths, distinct_texts, Scalar, Type};

#[cfg(test)]
mod tests;
