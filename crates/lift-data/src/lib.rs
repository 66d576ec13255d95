//! Program inputs: `--data` files (JSON, `.npy`) to interpreter values, with the size variables
//! inferred from the data; `.npy` output; deterministic random inputs for testing and tuning.
//!
//! Sizes are inferred by walking each parameter's declared type along its value: an array whose
//! declared length is a bare size variable binds that variable; any other length expression is
//! checked once the variables are known (an affine one in a single unknown variable, such as
//! `(* 2 N)`, may also determine it). Bindings remember where they came from, so a
//! contradiction names both places.
//!
//! Conversions are explicit and lossless where the declared type allows it: an integral JSON
//! number (or `.npy` integer) is accepted for `float`/`double`; an `int` takes only integral
//! values in `i32` range; a `float` rejects finite values beyond `f32` range (they would become
//! infinities). JSON data may spell NaN and the infinities `NaN`, `Infinity` and `-Infinity`, as
//! Python's `json` writes them and as `lift run` prints them.
//!
//! Modules: [`load`] binds sizes and reads JSON ([`json`]) and `.npy` ([`npy`]) files against the
//! declared types, integers of every width through [`ints`]; [`random`] draws inputs; [`layout`] is the byte layout of values in device
//! buffers, shared with the runtime that writes and reads them.

mod ints;
mod json;
pub mod layout;
mod load;
mod npy;
mod random;
#[cfg(test)]
mod tests;

pub use layout::{decode_dims, encode, layout, member_layout};
pub use load::load;
pub use npy::value_to_npy;
pub use random::{input_elements, random_inputs, random_inputs_lean};

use ir::interp::Value;
use std::collections::BTreeMap;
use std::fmt;

pub struct Inputs {
    /// One value per program parameter, in order.
    pub values: Vec<Value>,
    /// Every declared size variable.
    pub sizes: BTreeMap<String, i64>,
}

pub enum DataSource {
    /// JSON text and the file name for messages.
    Json(String, String),
    /// One parameter's `.npy` file.
    Npy {
        param: String,
        bytes: Vec<u8>,
        file: String,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub struct DataError {
    pub message: String,
    pub notes: Vec<String>,
}

impl DataError {
    pub(crate) fn new(message: impl Into<String>) -> DataError {
        DataError {
            message: message.into(),
            notes: vec![],
        }
    }
    pub(crate) fn note(mut self, note: impl Into<String>) -> DataError {
        self.notes.push(note.into());
        self
    }
}

impl fmt::Display for DataError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for DataError {}

pub(crate) type Res<T> = Result<T, DataError>;

/// Largest number of scalars a generated input may have, so that a typo in `--size` is an
/// error rather than an allocation failure.
pub(crate) const MAX_ELEMENTS: u64 = 1 << 30;
