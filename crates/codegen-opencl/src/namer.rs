//! Identifiers of generated code.
//!
//! Owns: the one place that spells C identifiers. Every name in a generated module (variables,
//! loop indices, buffers, kernel parameters, size variables, run-time lengths, struct types,
//! kernel names) is an [`Ident`] from one [`Namer`], which never hands out a name twice, nor a
//! C/OpenCL keyword or built-in, nor a name reserved for a fixed spelling (the error flag, the
//! filter kernels' locals). Names derive from user names only through [`Namer::fresh`], so a
//! user who calls a variable `X1`, `gout`, `float` or `get_global_id` cannot clash with anything:
//! the Namer picks the next free spelling. Counters advance in the order names are asked for, so
//! the output is a deterministic function of the program.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::rc::Rc;

/// A C identifier handed out by a [`Namer`].
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Ident(Rc<str>);

impl Ident {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Ident {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// What identifies a size variable: today its name in the typed program. A size variable is
/// always looked up by this key, never by a spelling, so two variables that print alike (a
/// user's `X1` and an existential length `X1`) can be told apart by extending the key.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SizeKey(pub String);

/// C89/C99 keywords, OpenCL C keywords, qualifiers and type names, and the built-in functions
/// and macros generated code calls or that a kernel may not shadow.
const RESERVED: &[&str] = &[
    // C
    "auto",
    "break",
    "case",
    "char",
    "const",
    "continue",
    "default",
    "do",
    "double",
    "else",
    "enum",
    "extern",
    "float",
    "for",
    "goto",
    "if",
    "inline",
    "int",
    "long",
    "register",
    "restrict",
    "return",
    "short",
    "signed",
    "sizeof",
    "static",
    "struct",
    "switch",
    "typedef",
    "union",
    "unsigned",
    "void",
    "volatile",
    "while",
    "_Bool",
    "_Complex",
    "_Imaginary",
    "bool",
    "true",
    "false",
    "main",
    // OpenCL C
    "kernel",
    "__kernel",
    "global",
    "__global",
    "local",
    "__local",
    "constant",
    "__constant",
    "private",
    "__private",
    "generic",
    "__generic",
    "read_only",
    "write_only",
    "read_write",
    "__read_only",
    "__write_only",
    "__read_write",
    "uniform",
    "pipe",
    "uchar",
    "ushort",
    "uint",
    "ulong",
    "half",
    "size_t",
    "ptrdiff_t",
    "intptr_t",
    "uintptr_t",
    "image1d_t",
    "image2d_t",
    "image3d_t",
    "sampler_t",
    "event_t",
    "attribute",
    "__attribute__",
    "complex",
    "imaginary",
    // built-ins generated code uses, and common ones
    "get_global_id",
    "get_global_size",
    "get_local_id",
    "get_local_size",
    "get_group_id",
    "get_num_groups",
    "get_work_dim",
    "get_global_offset",
    "barrier",
    "mem_fence",
    "CLK_LOCAL_MEM_FENCE",
    "CLK_GLOBAL_MEM_FENCE",
    "atomic_max",
    "atomic_min",
    "atomic_add",
    "atomic_inc",
    "atomic_xchg",
    "atom_max",
    "min",
    "max",
    "fmin",
    "fmax",
    "abs",
    "fabs",
    "sqrt",
    "exp",
    "log",
    "sin",
    "cos",
    "tan",
    "pow",
    "fma",
    "fmod",
    "dot",
    "length",
    "clamp",
    "select",
    "mad",
    "floor",
    "ceil",
    "round",
    "trunc",
    "vload2",
    "vload3",
    "vload4",
    "vload8",
    "vload16",
    "vstore2",
    "vstore3",
    "vstore4",
    "vstore8",
    "vstore16",
    "INFINITY",
    "NAN",
    "MAXFLOAT",
    "HUGE_VALF",
    "FLT_MAX",
    "DBL_MAX",
    "INT_MAX",
    "INT_MIN",
    "NULL",
];

/// Hands out identifiers; see the module documentation.
#[derive(Debug)]
pub struct Namer {
    taken: BTreeSet<String>,
    /// The next suffix to try for each base.
    next: BTreeMap<String, usize>,
    sizes: BTreeMap<SizeKey, Ident>,
}

impl Default for Namer {
    fn default() -> Namer {
        Namer::new()
    }
}

impl Namer {
    pub fn new() -> Namer {
        Namer {
            taken: RESERVED.iter().map(|s| s.to_string()).collect(),
            next: BTreeMap::new(),
            sizes: BTreeMap::new(),
        }
    }

    /// Reserves a fixed spelling (the error flag, a filter kernel's locals), so no name handed
    /// out later is spelled alike. Returns it as an identifier; reserving it twice is fine.
    pub fn fixed(&mut self, name: &str) -> Ident {
        self.taken.insert(name.to_string());
        Ident(name.into())
    }

    /// `base` itself when it is free, else the first free `base_k` (k = 1, 2, ...).
    pub fn exact(&mut self, base: &str) -> Ident {
        let base = sanitize(base);
        if self.taken.insert(base.clone()) {
            return Ident(base.into());
        }
        self.fresh(&base)
    }

    /// The first free `base_k` (k counting from 1 per base).
    pub fn fresh(&mut self, base: &str) -> Ident {
        let base = sanitize(base);
        let k = self.next.entry(base.clone()).or_insert(1);
        loop {
            let name = format!("{base}_{k}");
            *k += 1;
            if self.taken.insert(name.clone()) {
                return Ident(name.into());
            }
        }
    }

    /// The C name of a size variable: `v_<name>` when free; the same key always gets the same
    /// name.
    pub fn size(&mut self, key: &SizeKey) -> Ident {
        if let Some(i) = self.sizes.get(key) {
            return i.clone();
        }
        let i = self.exact(&format!("v_{}", key.0));
        self.sizes.insert(key.clone(), i.clone());
        i
    }
}

/// A C identifier from any text: characters other than ASCII letters, digits and `_` become
/// `_`, and a leading digit gets a `_` before it.
fn sanitize(s: &str) -> String {
    let mut out: String = s
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' })
        .collect();
    if out.is_empty() || out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, '_');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_never_collide() {
        let mut n = Namer::new();
        // a user parameter spelled like a generated name, then the generated one
        let user = n.exact("v_x_1");
        let gen = n.fresh("v_x");
        assert_eq!(user.as_str(), "v_x_1");
        assert_eq!(gen.as_str(), "v_x_2");
        let mut seen = BTreeSet::new();
        for base in ["v_x", "v_x", "v_x_1", "v_x_2", "v_i", "v_i_1"] {
            assert!(seen.insert(n.fresh(base)));
            assert!(seen.insert(n.exact(base)));
        }
    }

    #[test]
    fn keywords_and_builtins_are_never_handed_out() {
        let mut n = Namer::new();
        for w in ["float", "int", "kernel", "get_global_id", "max", "min"] {
            let i = n.exact(w);
            assert_ne!(i.as_str(), w);
            assert!(i.as_str().starts_with(w));
        }
    }

    #[test]
    fn fixed_spellings_are_reserved() {
        let mut n = Namer::new();
        let flag = n.fixed("e_flag");
        assert_eq!(flag.as_str(), "e_flag");
        assert_eq!(n.exact("e_flag").as_str(), "e_flag_1");
        let r = n.fixed("v_rounded_launch");
        assert_ne!(n.size(&SizeKey("rounded_launch".into())), r);
    }

    #[test]
    fn sizes_are_named_by_key() {
        let mut n = Namer::new();
        let a = n.size(&SizeKey("N".into()));
        let user = n.exact("v_N");
        assert_eq!(a.as_str(), "v_N");
        assert_ne!(user, a);
        assert_eq!(n.size(&SizeKey("N".into())), a);
    }

    #[test]
    fn names_are_c_identifiers() {
        let mut n = Namer::new();
        assert_eq!(n.exact("v_my-var").as_str(), "v_my_var");
        assert_eq!(n.exact("1x").as_str(), "_1x");
    }

    #[test]
    fn deterministic() {
        let run = || {
            let mut n = Namer::new();
            (0..5)
                .map(|k| n.fresh(["a", "b"][k % 2]).to_string())
                .collect::<Vec<_>>()
        };
        assert_eq!(run(), run());
        assert_eq!(run(), ["a_1", "b_1", "a_2", "b_2", "a_3"]);
    }
}
