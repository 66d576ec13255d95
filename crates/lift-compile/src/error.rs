//! The one error type of every stage, with a source place where there is one.

use crate::report;
use ir::Diagnostic;

/// A failure of any stage, with a source place where there is one.
#[derive(Debug)]
pub enum Error {
    Source(Diagnostic),
    /// Everything `validate` found wrong with the program (at least one).
    Invalid(Vec<Diagnostic>),
    Plain {
        message: String,
        notes: Vec<String>,
    },
}

impl Error {
    pub fn plain(message: impl Into<String>) -> Error {
        Error::Plain {
            message: message.into(),
            notes: vec![],
        }
    }
    pub fn render(&self, file: &str, src: &str) -> String {
        match self {
            Error::Source(d) => report::render(d, file, src),
            Error::Invalid(ds) => ds
                .iter()
                .map(|d| report::render(d, file, src))
                .collect::<Vec<_>>()
                .join("\n"),
            Error::Plain { message, notes } => report::render_plain(message, notes),
        }
    }
    pub fn message(&self) -> String {
        match self {
            Error::Source(d) => d.message.clone(),
            Error::Invalid(ds) => ds.iter().map(|d| d.message.as_str()).collect::<Vec<_>>().join("; "),
            Error::Plain { message, .. } => message.clone(),
        }
    }
}

impl From<Diagnostic> for Error {
    fn from(d: Diagnostic) -> Error {
        Error::Source(d)
    }
}

impl From<lift_data::DataError> for Error {
    fn from(e: lift_data::DataError) -> Error {
        Error::Plain {
            message: e.message,
            notes: e.notes,
        }
    }
}
