//! The S-expression reader: text to `Sexp` trees with byte spans.
//! Written by hand because general readers split `2.0f` into two atoms and reject `#4`.

use crate::diag::{Diagnostic, Span};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FloatSuffix {
    /// `2.0` (a `float`, as in the thesis)
    None,
    /// `2.0f`
    F,
    /// `2.0d`
    D,
}

#[derive(Clone, Debug, PartialEq)]
pub enum SexpKind {
    List(Vec<Sexp>),
    Symbol(String),
    /// `3`, `0x7f`: an `int` (in range by construction).
    Int(i64),
    /// `3u`
    Uint(u32),
    /// `3l`
    Long(i64),
    /// `3ul`
    Ulong(u64),
    Float(f64, FloatSuffix),
    /// `#4`: a size literal.
    Size(u64),
    Bool(bool),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Sexp {
    pub kind: SexpKind,
    pub span: Span,
}

impl Sexp {
    pub fn as_symbol(&self) -> Option<&str> {
        match &self.kind {
            SexpKind::Symbol(s) => Some(s),
            _ => None,
        }
    }
    pub fn as_list(&self) -> Option<&[Sexp]> {
        match &self.kind {
            SexpKind::List(items) => Some(items),
            _ => None,
        }
    }
}

fn is_symbol_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "+-*/%<>=!?_.:".contains(c)
}

/// Reads every top-level form of `src`.
pub fn read(src: &str) -> Result<Vec<Sexp>, Diagnostic> {
    let bytes = src.as_bytes();
    let mut pos = 0;
    // Each open list: its start offset and the items read so far.
    let mut stack: Vec<(usize, Vec<Sexp>)> = Vec::new();
    let mut top = Vec::new();
    while pos < bytes.len() {
        let c = src[pos..].chars().next().expect("pos is on a char boundary");
        if c.is_whitespace() {
            pos += c.len_utf8();
            continue;
        }
        if c == ';' {
            while pos < bytes.len() && bytes[pos] != b'\n' {
                pos += 1;
            }
            continue;
        }
        if c == '(' {
            if stack.len() >= crate::MAX_DEPTH {
                return Err(too_deep(Span::new(pos, pos + 1)));
            }
            stack.push((pos, Vec::new()));
            pos += 1;
            continue;
        }
        let item = if c == ')' {
            let Some((start, items)) = stack.pop() else {
                return Err(Diagnostic::new(
                    Span::new(pos, pos + 1),
                    "unbalanced parenthesis: this `)` closes nothing",
                )
                .with_label("no matching `(`"));
            };
            pos += 1;
            Sexp {
                kind: SexpKind::List(items),
                span: Span::new(start, pos),
            }
        } else if c == '#' || is_symbol_char(c) {
            let start = pos;
            while pos < bytes.len() {
                let d = src[pos..].chars().next().expect("char boundary");
                if d.is_whitespace() || d == '(' || d == ')' || d == ';' {
                    break;
                }
                pos += d.len_utf8();
            }
            atom(&src[start..pos], Span::new(start, pos))?
        } else {
            return Err(Diagnostic::new(
                Span::new(pos, pos + c.len_utf8()),
                format!("unexpected character `{}`", c.escape_default()),
            )
            .with_label("not part of any token")
            .with_note(
                "LIFT programs are S-expressions: parentheses, symbols, numbers, `#n` size literals and `;` comments",
            ));
        };
        match stack.last_mut() {
            Some((_, items)) => items.push(item),
            None => top.push(item),
        }
    }
    if let Some((start, _)) = stack.last() {
        return Err(Diagnostic::new(
            Span::new(*start, *start + 1),
            "unbalanced parenthesis: this `(` is never closed",
        )
        .with_label("opened here"));
    }
    Ok(top)
}

/// The one error for input beyond [`crate::MAX_DEPTH`], from the reader and the elaborator.
pub(crate) fn too_deep(span: Span) -> Diagnostic {
    Diagnostic::new(
        span,
        format!(
            "nested too deeply: programs may nest at most {} levels",
            crate::MAX_DEPTH
        ),
    )
    .with_label("this goes one level deeper")
}

fn atom(text: &str, span: Span) -> Result<Sexp, Diagnostic> {
    let bad = |what: &str| Diagnostic::new(span, format!("bad {what} `{text}`"));
    let kind = if let Some(digits) = text.strip_prefix('#') {
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad("size literal").with_note("a size literal is `#` followed by a natural number, e.g. `#4`"));
        }
        SexpKind::Size(
            digits
                .parse()
                .map_err(|_| bad("size literal").with_label("too large"))?,
        )
    } else if text == "true" || text == "false" {
        SexpKind::Bool(text == "true")
    } else if let Some(int) = integer(text) {
        int.map_err(|why| {
            Diagnostic::new(span, format!("bad number `{text}`: {why}")).with_note(
                "integers are `3` (int), `3u` (uint), `3l` (long), `3ul` (ulong), also in hexadecimal: `0x67452301u`",
            )
        })?
    } else if starts_number(text) {
        number(text).ok_or_else(|| {
            bad("number").with_note("numbers are written `3` (int), `2.0` or `2.0f` (float), `2.0d` (double)")
        })?
    } else {
        if let Some(c) = text.chars().find(|c| !is_symbol_char(*c)) {
            return Err(Diagnostic::new(
                span,
                format!("unexpected character `{}` in `{text}`", c.escape_default()),
            )
            .with_label("not allowed in a name"));
        }
        SexpKind::Symbol(text.to_string())
    };
    Ok(Sexp { kind, span })
}

/// An integer literal: optional sign, decimal digits or `0x` and hexadecimal digits, optional
/// suffix `u`, `l`, `ul` (either case, `lu` too, as C reads them). `None` when `text` is no
/// integer literal at all (a float, or not a number); an error when it is one whose value does
/// not fit its type. Hexadecimal is tried before float suffixes: `0x1f` ends in `f`.
fn integer(text: &str) -> Option<Result<SexpKind, String>> {
    let (negative, unsigned_text) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let lower = unsigned_text.to_ascii_lowercase();
    let (radix, body) = match lower.strip_prefix("0x") {
        Some(rest) => (16, rest),
        None => (10, lower.as_str()),
    };
    let digits_end = body.find(|c: char| !c.is_digit(radix)).unwrap_or(body.len());
    let (digits, suffix) = body.split_at(digits_end);
    if digits.is_empty() {
        return (radix == 16).then(|| Err("no hexadecimal digits after `0x`".to_string()));
    }
    let (unsigned, long) = match suffix {
        "" => (false, false),
        "u" => (true, false),
        "l" => (false, true),
        "ul" | "lu" => (true, true),
        // `2.0`, `1e3`, `2f`, ...: not an integer
        _ if radix == 10 => return None,
        _ => return Some(Err(format!("`{suffix}` is not an integer suffix (`u`, `l` or `ul`)"))),
    };
    let (ty, hint) = match (unsigned, long) {
        (false, false) => ("int", "; write `u`, `l` or `ul` after it for a uint, long or ulong"),
        (true, false) => ("uint", "; write `ul` after it for a ulong"),
        (false, true) => ("long", "; write `ul` after it for a ulong"),
        (true, true) => ("ulong", ""),
    };
    let too_large = || format!("the value does not fit in {ty}{hint}");
    let Ok(magnitude) = u128::from_str_radix(digits, radix) else {
        return Some(Err(too_large()));
    };
    if negative && unsigned && magnitude != 0 {
        return Some(Err(format!("a {ty} cannot be negative")));
    }
    let value = if negative {
        -(magnitude as i128)
    } else {
        magnitude as i128
    };
    let fits = |lo: i128, hi: i128| (lo..=hi).contains(&value);
    Some(match (unsigned, long) {
        (false, false) if fits(i32::MIN.into(), i32::MAX.into()) => Ok(SexpKind::Int(value as i64)),
        (true, false) if fits(0, u32::MAX.into()) => Ok(SexpKind::Uint(value as u32)),
        (false, true) if fits(i64::MIN.into(), i64::MAX.into()) => Ok(SexpKind::Long(value as i64)),
        (true, true) if fits(0, u64::MAX.into()) => Ok(SexpKind::Ulong(value as u64)),
        _ => Err(too_large()),
    })
}

fn starts_number(text: &str) -> bool {
    let rest = text.strip_prefix(['-', '+']).unwrap_or(text);
    let mut chars = rest.chars();
    match chars.next() {
        Some(c) if c.is_ascii_digit() => true,
        Some('.') => chars.next().is_some_and(|c| c.is_ascii_digit()),
        _ => false,
    }
}

fn number(text: &str) -> Option<SexpKind> {
    let (body, suffix) = match text.as_bytes().last() {
        Some(b'f') | Some(b'F') => (&text[..text.len() - 1], FloatSuffix::F),
        Some(b'd') | Some(b'D') => (&text[..text.len() - 1], FloatSuffix::D),
        _ => (text, FloatSuffix::None),
    };
    let digits_ok = body
        .trim_start_matches(['-', '+'])
        .bytes()
        .all(|b| b.is_ascii_digit() || b == b'.' || b == b'e' || b == b'E' || b == b'-' || b == b'+');
    if !digits_ok {
        return None;
    }
    // integers were read by `integer`; `2f` (no point or exponent) is no number
    if !body.contains(['.', 'e', 'E']) {
        return None;
    }
    let v: f64 = body.parse().ok()?;
    v.is_finite().then_some(SexpKind::Float(v, suffix))
}
