//! The LIFT intermediate representation: reader, core IR, printer and reference interpreter.
//!
//! `parse` turns program text into a [`Program`] (see `expr.rs` for its invariants); every later
//! stage reads a `Program` and keeps its results in side tables keyed by [`ExprId`].
//! This crate knows nothing of OpenCL and does no IO.

pub mod diag;
pub mod expr;
pub mod interp;
pub mod parse;
pub mod print;
pub mod rng;
pub mod sexp;
pub mod types;

pub use arith::{ArithExpr, Range};
pub use diag::{Diagnostic, Span};
pub use expr::*;
pub use parse::parse;
pub use types::{Scalar, Type};

#[cfg(test)]
mod tests;
