//! The arithmetic a program's products may be computed in (`--precision`, LANGUAGE.md "The
//! command"): what the reference interpreter's error bounds allow, and what code generation may
//! use for products summed in a reduction.

use std::fmt;

/// `f32`: IEEE single precision, every product correctly rounded (the default). `tf32`: a
/// `float` product may be computed from its operands rounded to TF32 (8-bit exponent, 10-bit
/// mantissa) and accumulated in `f32`, as NVIDIA's tensor cores do and PyTorch's `allow_tf32`
/// permits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Precision {
    #[default]
    F32,
    Tf32,
}

impl Precision {
    /// The option's spelling on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Precision::F32 => "f32",
            Precision::Tf32 => "tf32",
        }
    }
}

impl fmt::Display for Precision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Relative error of rounding a `float` operand to TF32: its 24-bit significand cut to 11 bits.
/// Rounding to nearest (PTX `cvt.rna.tf32.f32`) errs by at most 2^-11; a tensor core given
/// `f32` bits ignores the 13 low ones (truncation), which errs by less than 2^-10. The bound
/// takes the larger, so it holds whichever the device does.
pub const TF32_UNIT: f64 = 1.0 / 1024.0;
