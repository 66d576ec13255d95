//! Deterministic text forms of a `Program`: LIFT source that `parse` reads back, and an
//! indented tree with one node per line for annotated output (`--emit types`).

use crate::expr::*;
use std::collections::HashMap;
use std::fmt::Write;

/// Printed names of variables: the user's name, made unique with a suffix where shadowing or
/// inlining produced several variables of one name.
pub fn var_names(prog: &Program) -> Vec<String> {
    let mut count: HashMap<&str, usize> = HashMap::new();
    for v in &prog.vars {
        *count.entry(v.name.as_str()).or_default() += 1;
    }
    let mut seen: HashMap<&str, usize> = HashMap::new();
    let taken: std::collections::HashSet<&str> = prog.vars.iter().map(|v| v.name.as_str()).collect();
    prog.vars
        .iter()
        .map(|v| {
            if count[v.name.as_str()] == 1 {
                return v.name.clone();
            }
            let n = seen.entry(v.name.as_str()).or_default();
            *n += 1;
            if *n == 1 {
                return v.name.clone();
            }
            let mut k = *n;
            loop {
                let cand = format!("{}_{k}", v.name);
                if !taken.contains(cand.as_str()) {
                    return cand;
                }
                k += 1;
            }
        })
        .collect()
}

pub fn lit(l: &Lit) -> String {
    match l {
        Lit::Float(f) => format!("{}f", float_text(f64::from(*f))),
        Lit::Double(d) => format!("{}d", float_text(*d)),
        Lit::Int(i) => i.to_string(),
        Lit::Bool(b) => b.to_string(),
        Lit::Uint(u) => format!("{u}u"),
        Lit::Long(l) => format!("{l}l"),
        Lit::Ulong(u) => format!("{u}ul"),
    }
}

/// The one place floating-point literals are turned into text: always with a `.`, shortest
/// round-trip digits.
pub fn float_text(f: f64) -> String {
    let s = format!("{f:?}");
    if s.contains(['.', 'e', 'E', 'n', 'i']) {
        s
    } else {
        format!("{s}.0")
    }
}

fn size_text(e: &arith::ArithExpr) -> String {
    match e.as_cst() {
        Some(c) if c >= 0 => format!("#{c}"),
        // in the reader's prefix syntax, so that a printed variant reads back (the tuning cache)
        _ => size_source(e),
    }
}

/// The program as LIFT source.
pub fn program(prog: &Program) -> String {
    let names = var_names(prog);
    let mut out = String::from("(lift\n  (");
    out.push_str(&prog.sizes.join(" "));
    out.push_str(")\n  (");
    let tys: Vec<String> = prog.params.iter().map(|p| type_source(&p.ty)).collect();
    out.push_str(&tys.join(" "));
    out.push_str(")\n  (lambda (");
    let ps: Vec<&str> = prog.params.iter().map(|p| names[p.var.index()].as_str()).collect();
    out.push_str(&ps.join(" "));
    out.push_str(")\n");
    let mut p = Printer {
        prog,
        names: &names,
        out: String::new(),
    };
    p.expr(prog.body, 4);
    out.push_str(&p.out);
    out.push_str("))\n");
    out
}

/// A type in the syntax of parameter declarations.
pub fn type_source(t: &crate::Type) -> String {
    use crate::Type;
    match t {
        Type::Scalar(s) => s.name().to_string(),
        Type::Vector(s, w) => format!("(vector-type {} {w})", s.name()),
        Type::Tuple(ts) => format!(
            "(tuple-type {})",
            ts.iter().map(type_source).collect::<Vec<_>>().join(" ")
        ),
        Type::Array(e, n) => format!("(array-type {} {})", type_source(e), size_source(n)),
        Type::Exists(e) => format!("{{∃X. {}}}", type_source(e)),
        Type::Fun(..) => t.to_string(),
    }
}

fn size_source(e: &arith::ArithExpr) -> String {
    // ArithExpr prints infix C; sizes in source are prefix, so reprint through a tiny converter.
    let s = e.to_string();
    if s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        s
    } else {
        infix_to_prefix(&s).unwrap_or(s)
    }
}

/// Converts a fully or partially parenthesized infix integer expression into prefix form.
fn infix_to_prefix(s: &str) -> Option<String> {
    let toks: Vec<String> = tokenize(s);
    let mut pos = 0;
    let r = parse_sum(&toks, &mut pos)?;
    (pos == toks.len()).then_some(r)
}

fn tokenize(s: &str) -> Vec<String> {
    let mut out = vec![];
    let mut cur = String::new();
    for c in s.chars() {
        if c.is_ascii_alphanumeric() || c == '_' {
            cur.push(c);
        } else {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            if !c.is_whitespace() {
                out.push(c.to_string());
            }
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

fn parse_sum(t: &[String], pos: &mut usize) -> Option<String> {
    let mut lhs = parse_prod(t, pos)?;
    while *pos < t.len() && (t[*pos] == "+" || t[*pos] == "-") {
        let op = t[*pos].clone();
        *pos += 1;
        let rhs = parse_prod(t, pos)?;
        lhs = format!("({op} {lhs} {rhs})");
    }
    Some(lhs)
}

fn parse_prod(t: &[String], pos: &mut usize) -> Option<String> {
    let mut lhs = parse_atom(t, pos)?;
    while *pos < t.len() && (t[*pos] == "*" || t[*pos] == "/" || t[*pos] == "%") {
        let op = t[*pos].clone();
        *pos += 1;
        let rhs = parse_atom(t, pos)?;
        lhs = format!("({op} {lhs} {rhs})");
    }
    Some(lhs)
}

fn parse_atom(t: &[String], pos: &mut usize) -> Option<String> {
    let tok = t.get(*pos)?.clone();
    *pos += 1;
    if tok == "(" {
        let e = parse_sum(t, pos)?;
        (t.get(*pos)? == ")").then_some(())?;
        *pos += 1;
        Some(e)
    } else if tok == "pow" {
        (t.get(*pos)? == "(").then_some(())?;
        *pos += 1;
        let a = parse_sum(t, pos)?;
        (t.get(*pos)? == ",").then_some(())?;
        *pos += 1;
        let b = parse_sum(t, pos)?;
        (t.get(*pos)? == ")").then_some(())?;
        *pos += 1;
        Some(format!("(pow {a} {b})"))
    } else if tok == "-" {
        let a = parse_atom(t, pos)?;
        Some(format!("(- 0 {a})"))
    } else if tok.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        Some(tok)
    } else {
        None
    }
}

struct Printer<'a> {
    prog: &'a Program,
    names: &'a [String],
    out: String,
}

impl Printer<'_> {
    /// One-line form if short, else the head on one line and arguments indented below.
    fn expr(&mut self, id: ExprId, indent: usize) {
        let flat = self.flat(id);
        // a variable or literal has no parts to lay out: past the margin it is still itself,
        // not `(x)`, which would read back as an application (deeply nested variants, as a
        // batch's register-blocked products, reach the margin)
        if flat.len() + indent <= 100 || matches!(self.prog.expr(id), Expr::Var(_) | Expr::Lit(_)) {
            let _ = write!(self.out, "{:indent$}{flat}", "");
            return;
        }
        let (head, children) = self.parts(id);
        let _ = write!(self.out, "{:indent$}({head}", "");
        for c in children {
            self.out.push('\n');
            self.expr(c, indent + 2);
        }
        self.out.push(')');
    }

    fn parts(&self, id: ExprId) -> (String, Vec<ExprId>) {
        let n = |v: &VarId| self.names[v.index()].clone();
        match self.prog.expr(id) {
            Expr::Var(v) => (n(v), vec![]),
            Expr::Lit(l) => (lit(l), vec![]),
            Expr::Lambda { params, body } => (
                format!("lambda ({})", params.iter().map(n).collect::<Vec<_>>().join(" ")),
                vec![*body],
            ),
            Expr::Prim { prim, args } => {
                let mut head = prim.name();
                for s in prim.size_args() {
                    head.push(' ');
                    head.push_str(&size_text(&s));
                }
                (head, args.clone())
            }
            Expr::Op { op, args } => {
                let head = match op {
                    Op::Get(i) | Op::VGet(i) => format!("{} #{i}", op.name()),
                    _ => op.name(),
                };
                (head, args.clone())
            }
            Expr::If { cond, then, els } => ("if".into(), vec![*cond, *then, *els]),
            Expr::Let { kind, var, value, body } => {
                let kw = match kind {
                    LetKind::Let => "let",
                    LetKind::Unpack => "unpack",
                };
                (format!("{kw} {}", n(var)), vec![*value, *body])
            }
            Expr::Pack(e) => ("pack".into(), vec![*e]),
        }
    }

    fn flat(&self, id: ExprId) -> String {
        let (head, children) = self.parts(id);
        match self.prog.expr(id) {
            Expr::Var(_) | Expr::Lit(_) => head,
            _ => {
                let mut s = format!("({head}");
                for c in children {
                    s.push(' ');
                    s.push_str(&self.flat(c));
                }
                s.push(')');
                s
            }
        }
    }
}

/// The program as an indented tree, one node per line, each followed by `annot(node)`.
pub fn tree(prog: &Program, annot: &dyn Fn(ExprId) -> String) -> String {
    let names = var_names(prog);
    let p = Printer {
        prog,
        names: &names,
        out: String::new(),
    };
    let mut out = String::new();
    for param in &prog.params {
        let _ = writeln!(out, "param {} : {}", names[param.var.index()], param.ty);
    }
    fn go(p: &Printer, id: ExprId, depth: usize, annot: &dyn Fn(ExprId) -> String, out: &mut String) {
        let (head, children) = p.parts(id);
        let _ = writeln!(out, "{:w$}{head}{}", "", annot(id), w = depth * 2);
        for c in children {
            go(p, c, depth + 1, annot, out);
        }
    }
    go(&p, prog.body, 0, annot, &mut out);
    out
}
