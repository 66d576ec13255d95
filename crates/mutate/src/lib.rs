//! The formulation mutator: from a high-level LIFT program, random programs that compute the
//! same thing written the way another user might write it. It checks that the rewrite space
//! finds the same fast kernel whatever the spelling (`tests/suite_mutants.rs`: each mutant
//! equals the interpreter, and exploration's chosen variant for it costs at most 1.05× the
//! original's).
//!
//! Mutations work on the program's text as S-expressions (`ir::sexp`), so a mutant is a
//! program a user could have typed; each is an equality that holds for every program:
//! - `commute`: `(op a b)` = `(op b a)` for `+`, `*`, `min`, `max`;
//! - `operator-lambda`: `(reduce op z xs)` = `(reduce (lambda (u v) (op v u)) z xs)`;
//! - `zip-swap`: `(map (λp. B) (zip a b))` = `(map (λp. B') (zip b a))`, `B'` reading
//!   `(get #1 p)` for `(get #0 p)` and the reverse (`p` read only through `get`s);
//! - `let-intro`: an array argument `e` of `map` or `reduce` = `(let v e v)`;
//! - `let-inline`: `(let x v b)` = `b[v/x]` when `x` occurs once in `b`, outside its lambdas,
//!   and nothing in `b` rebinds a name `v` reads;
//! - `at0`: `(join (map (λr. (map (λs. B) R)) X))` = `(map (λr. B[(at 0 R)/s]) X)`, `R` a
//!   reduction or a call of a definition whose body is one (one element);
//! - `transpose-twice`: `(transpose e)` = `(transpose (transpose (transpose e)))`.
//!
//! Names a mutation introduces start with `mut-`, which no program of the repository uses.

use ir::rng::XorShift;
use ir::sexp::{Sexp, SexpKind};

/// A program text as a tree: atoms keep their source text (so literals print as written).
#[derive(Clone, Debug, PartialEq)]
pub enum Tree {
    List(Vec<Tree>),
    Atom(String),
}

impl Tree {
    fn atom(&self) -> Option<&str> {
        match self {
            Tree::Atom(a) => Some(a),
            Tree::List(_) => None,
        }
    }

    fn list(&self) -> Option<&[Tree]> {
        match self {
            Tree::List(l) => Some(l),
            Tree::Atom(_) => None,
        }
    }

    /// A list whose head is the atom `head`.
    fn is_form(&self, head: &str) -> bool {
        self.list().and_then(|l| l.first()).and_then(Tree::atom) == Some(head)
    }
}

/// The text of a tree (one line a top-level form).
pub fn print(forms: &[Tree]) -> String {
    fn go(t: &Tree, out: &mut String) {
        match t {
            Tree::Atom(a) => out.push_str(a),
            Tree::List(items) => {
                out.push('(');
                for (i, x) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(' ');
                    }
                    go(x, out);
                }
                out.push(')');
            }
        }
    }
    let mut out = String::new();
    for f in forms {
        go(f, &mut out);
        out.push('\n');
    }
    out
}

/// The program's top-level forms, comments dropped.
pub fn read(src: &str) -> Result<Vec<Tree>, String> {
    fn conv(s: &Sexp, src: &str) -> Tree {
        match &s.kind {
            SexpKind::List(items) => Tree::List(items.iter().map(|i| conv(i, src)).collect()),
            _ => Tree::Atom(src[s.span.start as usize..s.span.end as usize].to_string()),
        }
    }
    let forms = ir::sexp::read(src).map_err(|d| d.message)?;
    Ok(forms.iter().map(|f| conv(f, src)).collect())
}

/// One mutant: its text and the mutations that made it, in order.
#[derive(Clone, Debug)]
pub struct Mutant {
    pub src: String,
    pub mutations: Vec<&'static str>,
}

/// The kinds of mutation, by name (see the crate docs).
pub const KINDS: [&str; 7] = [
    "commute",
    "operator-lambda",
    "zip-swap",
    "let-intro",
    "let-inline",
    "at0",
    "transpose-twice",
];

/// `count` mutants of `src`, each made by 1 to `steps` mutations drawn from `seed`. Mutants
/// that came out identical to the program or to an earlier mutant are drawn again (a program
/// with no site for any mutation gives fewer).
pub fn mutants(src: &str, seed: u64, count: usize, steps: usize) -> Result<Vec<Mutant>, String> {
    let forms = read(src)?;
    let original = print(&forms);
    let mut rng = XorShift::new(seed);
    let mut out: Vec<Mutant> = vec![];
    let mut fresh = 0;
    for _ in 0..count * 8 {
        if out.len() == count {
            break;
        }
        let mut t = forms.clone();
        let mut done = vec![];
        for _ in 0..1 + rng.below(steps.max(1)) {
            if let Some(kind) = mutate_once(&mut t, &mut rng, &mut fresh) {
                done.push(kind);
            }
        }
        let text = print(&t);
        if done.is_empty() || text == original || out.iter().any(|m| m.src == text) {
            continue;
        }
        out.push(Mutant {
            src: text,
            mutations: done,
        });
    }
    Ok(out)
}

/// Applies one mutation at a random site of a random kind that has one; its kind.
fn mutate_once(forms: &mut [Tree], rng: &mut XorShift, fresh: &mut usize) -> Option<&'static str> {
    let ones = one_element_definitions(forms);
    let mut sites: Vec<(usize, Vec<usize>)> = vec![];
    for (k, kind) in KINDS.iter().enumerate() {
        for (f, form) in forms.iter().enumerate() {
            let mut paths = vec![];
            find(form, &mut vec![f], &mut |t, path| {
                if applies(kind, t, &ones) {
                    paths.push(path.to_vec());
                }
            });
            sites.extend(paths.into_iter().map(|p| (k, p)));
        }
    }
    if sites.is_empty() {
        return None;
    }
    let (k, path) = rng.pick(&sites).clone();
    let (first, rest) = path.split_first().expect("a form index");
    let node = at_path(&mut forms[*first], rest);
    *fresh += 1;
    apply(KINDS[k], node, *fresh, &ones);
    Some(KINDS[k])
}

/// The names of the definitions whose body is a reduction: a call of one is one element.
fn one_element_definitions(forms: &[Tree]) -> Vec<String> {
    forms
        .iter()
        .filter_map(|f| match f.list() {
            Some([d, head, body]) if d.atom() == Some("define") && body.is_form("reduce") => head
                .list()
                .and_then(|h| h.first())
                .and_then(Tree::atom)
                .map(str::to_string),
            _ => None,
        })
        .collect()
}

/// A reduction, or a call of a definition that is one (`ones`).
fn one_element(t: &Tree, ones: &[String]) -> bool {
    t.is_form("reduce")
        || t.list()
            .and_then(|l| l.first())
            .and_then(Tree::atom)
            .is_some_and(|h| ones.iter().any(|o| o == h))
}

fn find(t: &Tree, path: &mut Vec<usize>, f: &mut dyn FnMut(&Tree, &[usize])) {
    f(t, path);
    if let Tree::List(items) = t {
        for (i, x) in items.iter().enumerate() {
            path.push(i);
            find(x, path, f);
            path.pop();
        }
    }
}

fn at_path<'t>(t: &'t mut Tree, path: &[usize]) -> &'t mut Tree {
    match path.split_first() {
        None => t,
        Some((&i, rest)) => match t {
            Tree::List(items) => at_path(&mut items[i], rest),
            Tree::Atom(_) => unreachable!("a path into an atom"),
        },
    }
}

const COMMUTATIVE: [&str; 4] = ["+", "*", "min", "max"];

/// `(lambda (p) body)` with one parameter: `(p, body)`.
fn lambda1(t: &Tree) -> Option<(&str, &Tree)> {
    let l = t.list()?;
    if l.len() != 3 || !t.is_form("lambda") {
        return None;
    }
    match l[1].list() {
        Some([Tree::Atom(p)]) => Some((p, &l[2])),
        _ => None,
    }
}

/// Every name `t` binds (lambda parameters, `let` variables), anywhere inside it.
fn binders(t: &Tree, out: &mut Vec<String>) {
    if let Some(l) = t.list() {
        if t.is_form("lambda") && l.len() == 3 {
            if let Some(ps) = l[1].list() {
                out.extend(ps.iter().filter_map(Tree::atom).map(str::to_string));
            }
        }
        if t.is_form("let") && l.len() == 4 {
            out.extend(l[1].atom().map(str::to_string));
        }
        l.iter().for_each(|x| binders(x, out));
    }
}

fn atoms(t: &Tree, out: &mut Vec<String>) {
    match t {
        Tree::Atom(a) => out.push(a.clone()),
        Tree::List(l) => l.iter().for_each(|x| atoms(x, out)),
    }
}

/// Whether `t` mentions the atom `x`.
fn mentions(t: &Tree, x: &str) -> bool {
    match t {
        Tree::Atom(a) => a == x,
        Tree::List(l) => l.iter().any(|y| mentions(y, x)),
    }
}

/// Whether nothing in `body` rebinds a name that `value` reads (so `value` may move into it).
fn no_capture(value: &Tree, body: &Tree) -> bool {
    let (mut bound, mut read) = (vec![], vec![]);
    binders(body, &mut bound);
    atoms(value, &mut read);
    !read.iter().any(|a| bound.contains(a))
}

/// Occurrences of `x` in `t`, and whether one is inside a lambda of `t`.
fn occurrences(t: &Tree, x: &str, under: bool) -> (usize, bool) {
    match t {
        Tree::Atom(a) => (usize::from(a == x), a == x && under),
        Tree::List(l) => {
            let inner = under || t.is_form("lambda");
            l.iter()
                .map(|y| occurrences(y, x, inner))
                .fold((0, false), |(n, u), (m, v)| (n + m, u || v))
        }
    }
}

/// Whether every occurrence of `p` in `t` is `(get #0 p)` or `(get #1 p)`.
fn only_projected(t: &Tree, p: &str) -> bool {
    match t {
        Tree::Atom(a) => a != p,
        Tree::List(l) => {
            if t.is_form("get") && l.len() == 3 && l[2].atom() == Some(p) {
                return matches!(l[1].atom(), Some("#0" | "#1"));
            }
            l.iter().all(|y| only_projected(y, p))
        }
    }
}

fn applies(kind: &str, t: &Tree, ones: &[String]) -> bool {
    let Some(l) = t.list() else { return false };
    let head = l.first().and_then(Tree::atom).unwrap_or("");
    match kind {
        "commute" => COMMUTATIVE.contains(&head) && l.len() == 3,
        "operator-lambda" => head == "reduce" && l.len() == 4 && l[1].atom().is_some_and(|a| COMMUTATIVE.contains(&a)),
        "zip-swap" => {
            head == "map"
                && l.len() == 3
                && l[2].is_form("zip")
                && l[2].list().is_some_and(|z| z.len() == 3)
                && lambda1(&l[1]).is_some_and(|(p, b)| {
                    let mut bound = vec![];
                    binders(b, &mut bound);
                    !bound.iter().any(|x| x == p) && only_projected(b, p)
                })
        }
        "let-intro" => matches!(head, "map" | "reduce") && l.len() >= 3 && l.last().is_some_and(|x| x.list().is_some()),
        "let-inline" => {
            head == "let"
                && l.len() == 4
                && l[1].atom().is_some_and(|x| {
                    let (n, under) = occurrences(&l[3], x, false);
                    let mut bound = vec![];
                    binders(&l[3], &mut bound);
                    n == 1 && !under && !bound.iter().any(|b| b == x) && no_capture(&l[2], &l[3])
                })
        }
        "at0" => at0_parts(t, ones).is_some(),
        "transpose-twice" => head == "transpose" && l.len() == 2,
        _ => false,
    }
}

/// For `(join (map (lambda (r) (map (lambda (s) B) R)) X))` with `R` a reduction (or a call of
/// a definition that is one, `ones`): `(s, B, R)`.
fn at0_parts<'t>(t: &'t Tree, ones: &[String]) -> Option<(&'t str, &'t Tree, &'t Tree)> {
    let l = t.list()?;
    if !t.is_form("join") || l.len() != 2 || !l[1].is_form("map") {
        return None;
    }
    let m = l[1].list()?;
    let (_, inner) = lambda1(m.get(1)?)?;
    let im = inner.list()?;
    if !inner.is_form("map") || im.len() != 3 || !one_element(&im[2], ones) {
        return None;
    }
    let (s, b) = lambda1(&im[1])?;
    let mut bound = vec![];
    binders(b, &mut bound);
    let ok = !bound.iter().any(|x| x == s) && no_capture(&im[2], b) && !mentions(&im[2], s);
    ok.then_some((s, b, &im[2]))
}

/// `t[by/x]` for the atom `x`.
fn subst(t: &Tree, x: &str, by: &Tree) -> Tree {
    match t {
        Tree::Atom(a) if a == x => by.clone(),
        Tree::Atom(_) => t.clone(),
        Tree::List(l) => Tree::List(l.iter().map(|y| subst(y, x, by)).collect()),
    }
}

fn swap_projections(t: &Tree, p: &str) -> Tree {
    match t {
        Tree::Atom(_) => t.clone(),
        Tree::List(l) => {
            if t.is_form("get") && l.len() == 3 && l[2].atom() == Some(p) {
                let i = if l[1].atom() == Some("#0") { "#1" } else { "#0" };
                return Tree::List(vec![l[0].clone(), Tree::Atom(i.into()), l[2].clone()]);
            }
            Tree::List(l.iter().map(|y| swap_projections(y, p)).collect())
        }
    }
}

fn atom(s: &str) -> Tree {
    Tree::Atom(s.to_string())
}

fn apply(kind: &str, t: &mut Tree, fresh: usize, ones: &[String]) {
    let new = {
        let l = t.list().expect("a site is a list");
        match kind {
            "commute" => Tree::List(vec![l[0].clone(), l[2].clone(), l[1].clone()]),
            "operator-lambda" => {
                let (u, v) = (format!("mut-a{fresh}"), format!("mut-b{fresh}"));
                let lam = Tree::List(vec![
                    atom("lambda"),
                    Tree::List(vec![atom(&u), atom(&v)]),
                    Tree::List(vec![l[1].clone(), atom(&v), atom(&u)]),
                ]);
                Tree::List(vec![l[0].clone(), lam, l[2].clone(), l[3].clone()])
            }
            "zip-swap" => {
                let (p, b) = lambda1(&l[1]).expect("checked");
                let z = l[2].list().expect("checked");
                let lam = Tree::List(vec![atom("lambda"), Tree::List(vec![atom(p)]), swap_projections(b, p)]);
                let zip = Tree::List(vec![z[0].clone(), z[2].clone(), z[1].clone()]);
                Tree::List(vec![l[0].clone(), lam, zip])
            }
            "let-intro" => {
                let v = format!("mut-v{fresh}");
                let mut items = l.to_vec();
                let last = items.pop().expect("an argument");
                items.push(Tree::List(vec![atom("let"), atom(&v), last, atom(&v)]));
                Tree::List(items)
            }
            "let-inline" => subst(&l[3], l[1].atom().expect("checked"), &l[2]),
            "at0" => {
                let (s, b, r) = at0_parts(t, ones).expect("checked");
                let at = Tree::List(vec![atom("at"), atom("0"), r.clone()]);
                let m = l[1].list().expect("checked");
                let lam = m[1].list().expect("checked");
                let body = subst(b, s, &at);
                let outer = Tree::List(vec![lam[0].clone(), lam[1].clone(), body]);
                Tree::List(vec![m[0].clone(), outer, m[2].clone()])
            }
            "transpose-twice" => Tree::List(vec![atom("transpose"), Tree::List(vec![atom("transpose"), t.clone()])]),
            other => unreachable!("unknown mutation {other}"),
        }
    };
    *t = new;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn once(kind: &str, src: &str) -> String {
        let mut forms = read(src).expect("reads");
        let mut hit = false;
        let mut paths = vec![];
        find(&forms[0], &mut vec![], &mut |t, p| {
            if !hit && applies(kind, t, &[]) {
                hit = true;
                paths.push(p.to_vec());
            }
        });
        let path = paths.pop().unwrap_or_else(|| panic!("no site for {kind} in {src}"));
        apply(kind, at_path(&mut forms[0], &path), 1, &[]);
        print(&forms).trim().to_string()
    }

    #[test]
    fn each_mutation_rewrites_its_site_as_its_equation_says() {
        assert_eq!(once("commute", "(f (+ a 1))"), "(f (+ 1 a))");
        assert_eq!(
            once("operator-lambda", "(reduce + 0.0f xs)"),
            "(reduce (lambda (mut-a1 mut-b1) (+ mut-b1 mut-a1)) 0.0f xs)"
        );
        assert_eq!(
            once("zip-swap", "(map (lambda (p) (* (get #0 p) (get #1 p))) (zip a b))"),
            "(map (lambda (p) (* (get #1 p) (get #0 p))) (zip b a))"
        );
        assert_eq!(once("let-intro", "(map f (g x))"), "(map f (let mut-v1 (g x) mut-v1))");
        assert_eq!(once("let-inline", "(let k (g x) (map f k))"), "(map f (g x))");
        assert_eq!(
            once(
                "at0",
                "(join (map (lambda (r) (map (lambda (s) (* s s)) (reduce + 0.0f r))) m))"
            ),
            "(map (lambda (r) (* (at 0 (reduce + 0.0f r)) (at 0 (reduce + 0.0f r)))) m)"
        );
        assert_eq!(
            once("transpose-twice", "(transpose m)"),
            "(transpose (transpose (transpose m)))"
        );
    }

    #[test]
    fn mutations_that_would_capture_or_lose_a_variable_have_no_site() {
        let none = |kind: &str, src: &str| {
            let forms = read(src).expect("reads");
            let mut any = false;
            find(&forms[0], &mut vec![], &mut |t, _| any |= applies(kind, t, &[]));
            assert!(!any, "{kind} applies to {src}");
        };
        // `p` read whole, not only through its components
        none("zip-swap", "(map (lambda (p) (f p)) (zip a b))");
        // `k` read inside a lambda: inlining would compute it per element
        none("let-inline", "(let k (g x) (map (lambda (y) (+ y (at 0 k))) xs))");
        // `x` of the value rebound in the body
        none("let-inline", "(let k (g x) (map (lambda (x) x) k))");
        // the reduction reads `s`'s binder's shadow
        none(
            "at0",
            "(join (map (lambda (r) (map (lambda (s) (let r 1 s)) (reduce + 0.0f r))) m))",
        );
    }

    #[test]
    fn a_fixed_seed_gives_the_same_mutants() {
        let src = "(lift (N) ((array-type float N)) (lambda (xs) (map (lambda (s) (* s 2.0f)) (reduce + 0.0f xs))))";
        let a = mutants(src, 7, 5, 3).expect("reads");
        let b = mutants(src, 7, 5, 3).expect("reads");
        assert_eq!(
            a.iter().map(|m| &m.src).collect::<Vec<_>>(),
            b.iter().map(|m| &m.src).collect::<Vec<_>>()
        );
        assert!(!a.is_empty());
    }
}
