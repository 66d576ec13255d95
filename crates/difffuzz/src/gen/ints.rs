//! Integers of every width inside scalar code (LANGUAGE.md, "Types", "Expressions"): `uint`,
//! `long` and `ulong` values made from the program's ints, floats and doubles by conversions and
//! bit reinterpretation, or written as literals of every spelling (decimal, hexadecimal, the
//! suffixes `u`, `l`, `ul`, the extremes of each type); combined by wrapping arithmetic,
//! division by constants, `min`/`max` and the bit operations (`bit-and bit-or bit-xor bit-not
//! shl shr rotl`, counts of any integer type and of any size, which wrap modulo the width); and
//! brought back to an `int`, a `float` or a comparison. The program's data stay ints and floats,
//! so these values live inside the kernels, where the interpreter's exact integer semantics
//! (`ir::interp::ints`) meet the generated OpenCL.

use super::*;

/// An integer type other than `int`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Wide {
    Uint,
    Long,
    Ulong,
}

impl Wide {
    fn convert(self) -> &'static str {
        match self {
            Wide::Uint => "to-uint",
            Wide::Long => "to-long",
            Wide::Ulong => "to-ulong",
        }
    }
    fn literals(self) -> &'static [&'static str] {
        match self {
            Wide::Uint => &["0u", "1u", "7u", "0xffu", "0x80000000u", "4294967295u", "2654435761u"],
            Wide::Long => &[
                "0l",
                "1l",
                "-3l",
                "1000000007l",
                "0x7fffffffffffffffl",
                "-9223372036854775807l",
                "-1l",
            ],
            Wide::Ulong => &[
                "0ul",
                "1ul",
                "5ul",
                "0xfffffffffffffffful",
                "11400714819323198485ul",
                "0x100000000ul",
            ],
        }
    }
    /// Divisors that are never zero (nor -1, whose quotient of the minimum overflows).
    fn divisors(self) -> &'static [&'static str] {
        match self {
            Wide::Uint => &["3u", "16u", "4294967295u"],
            Wide::Long => &["3l", "-7l", "1099511627776l"],
            Wide::Ulong => &["3ul", "256ul", "0x8000000000000000ul"],
        }
    }
}

impl Gen {
    pub(super) fn any_wide(&mut self) -> Wide {
        self.pick(&[Wide::Uint, Wide::Long, Wide::Ulong])
    }

    /// A value of type `w`.
    pub(super) fn wide(&mut self, w: Wide, env: &[Var], depth: usize) -> String {
        if depth == 0 || self.chance(25) {
            return match self.rng.below(6) {
                0 | 1 => self.pick(w.literals()).to_string(),
                2 | 3 => {
                    let a = self.scalar(&Ty::Int, env, depth.min(1));
                    format!("({} {a})", w.convert())
                }
                // bits of a float, or a float converted (saturating, NaN to 0)
                4 => {
                    let a = self.scalar(&Ty::Float, env, depth.min(1));
                    match w {
                        Wide::Uint if self.chance(60) => format!("(as-uint {a})"),
                        Wide::Ulong if self.chance(60) => format!("(as-ulong (to-double {a}))"),
                        Wide::Long if self.chance(60) => format!("(as-long (to-double {a}))"),
                        _ => format!("({} {a})", w.convert()),
                    }
                }
                // another width converted (truncated, sign- or zero-extended)
                _ => {
                    let o = self.any_wide();
                    let a = self.wide(o, env, depth.min(1));
                    if o == w {
                        a
                    } else {
                        format!("({} {a})", w.convert())
                    }
                }
            };
        }
        let d = depth - 1;
        match self.rng.below(9) {
            0..=2 => {
                let op = self.pick(&["bit-and", "bit-or", "bit-xor", "bit-xor"]);
                let a = self.wide(w, env, d);
                let b = self.wide(w, env, d);
                format!("({op} {a} {b})")
            }
            3 => {
                let a = self.wide(w, env, d);
                format!("(bit-not {a})")
            }
            4 | 5 => {
                let op = self.pick(&["shl", "shr", "rotl"]);
                let a = self.wide(w, env, d);
                let k = match self.rng.below(4) {
                    0 => self.pick(&["1", "13", "31", "63", "64", "100"]).to_string(),
                    1 => self.pick(&["5u", "17u", "33ul", "7l"]).to_string(),
                    2 => self.scalar(&Ty::Int, env, d.min(1)),
                    _ => self.wide(w, env, d.min(1)),
                };
                format!("({op} {a} {k})")
            }
            6 => {
                let op = self.pick(&["+", "-", "*", "+"]);
                let a = self.wide(w, env, d);
                let b = self.wide(w, env, d);
                format!("({op} {a} {b})")
            }
            7 => {
                let op = self.pick(&["/", "%"]);
                let a = self.wide(w, env, d);
                let k = self.pick(w.divisors());
                format!("({op} {a} {k})")
            }
            _ => {
                let op = self.pick(&["min", "max"]);
                let a = self.wide(w, env, d);
                let b = self.wide(w, env, d);
                format!("({op} {a} {b})")
            }
        }
    }

    /// An `int` made from a wider integer computation, or from bit operations on ints.
    pub(super) fn int_of_wide(&mut self, env: &[Var], depth: usize) -> String {
        if self.chance(30) {
            let op = self.pick(&["bit-and", "bit-or", "bit-xor", "shl", "shr", "rotl"]);
            let a = self.scalar(&Ty::Int, env, depth);
            let b = self.scalar(&Ty::Int, env, depth);
            return format!("({op} {a} {b})");
        }
        let w = self.any_wide();
        let a = self.wide(w, env, depth);
        format!("(to-int {a})")
    }

    /// A `float` converted from a wider integer (rounded to nearest).
    pub(super) fn float_of_wide(&mut self, env: &[Var], depth: usize) -> String {
        let w = self.any_wide();
        let a = self.wide(w, env, depth);
        format!("(to-float {a})")
    }

    /// A comparison of two wider integers (unsigned ones compare unsigned).
    pub(super) fn compare_wide(&mut self, env: &[Var], depth: usize) -> String {
        let w = self.any_wide();
        let op = self.pick(&["<", "<=", ">", "=", "!="]);
        let a = self.wide(w, env, depth);
        let b = self.wide(w, env, depth);
        format!("({op} {a} {b})")
    }
}
