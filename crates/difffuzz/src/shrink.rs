//! Shrinking a failing case to a small one that fails the same way.
//!
//! The program is shrunk as an S-expression: a subterm is replaced by one of its own subterms
//! or by a literal, a numeric literal by a simpler one, an unused definition is dropped. A
//! candidate that no longer type-checks is refused by the front end, which is a different
//! verdict, so only candidates of the right type survive without this module knowing types.
//! Then the sizes shrink (the data is regenerated from the same seed at the smaller sizes).

use crate::gen::Case;
use crate::oracle::Verdict;
use std::time::{Duration, Instant};

#[derive(Clone, Debug, PartialEq)]
enum Sexp {
    Atom(String),
    List(Vec<Sexp>),
}

fn parse(src: &str) -> Option<Vec<Sexp>> {
    let mut stack: Vec<Vec<Sexp>> = vec![vec![]];
    let mut atom = String::new();
    let flush = |atom: &mut String, stack: &mut Vec<Vec<Sexp>>| {
        if !atom.is_empty() {
            let a = std::mem::take(atom);
            stack.last_mut().expect("never empty").push(Sexp::Atom(a));
        }
    };
    let mut comment = false;
    for c in src.chars() {
        if comment {
            comment = c != '\n';
            continue;
        }
        match c {
            ';' => {
                flush(&mut atom, &mut stack);
                comment = true;
            }
            '(' => {
                flush(&mut atom, &mut stack);
                stack.push(vec![]);
            }
            ')' => {
                flush(&mut atom, &mut stack);
                let done = stack.pop()?;
                stack.last_mut()?.push(Sexp::List(done));
            }
            c if c.is_whitespace() => flush(&mut atom, &mut stack),
            c => atom.push(c),
        }
    }
    flush(&mut atom, &mut stack);
    if stack.len() == 1 {
        stack.pop()
    } else {
        None
    }
}

fn print(e: &Sexp, out: &mut String) {
    match e {
        Sexp::Atom(a) => out.push_str(a),
        Sexp::List(xs) => {
            out.push('(');
            for (i, x) in xs.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                print(x, out);
            }
            out.push(')');
        }
    }
}

/// Defines one per line, then the `lift` form with its header and body on lines of their own.
fn render(forms: &[Sexp]) -> String {
    let mut s = String::new();
    for f in forms {
        match f {
            Sexp::List(xs) if matches!(xs.first(), Some(Sexp::Atom(a)) if a == "lift") && xs.len() == 4 => {
                s.push_str("(lift\n  ");
                print(&xs[1], &mut s);
                s.push_str("\n  ");
                print(&xs[2], &mut s);
                s.push_str("\n  ");
                print(&xs[3], &mut s);
                s.push_str(")\n");
            }
            f => {
                print(f, &mut s);
                s.push('\n');
            }
        }
    }
    s
}

/// Number of nodes, the measure shrinking decreases.
fn size(e: &Sexp) -> usize {
    match e {
        Sexp::Atom(_) => 1,
        Sexp::List(xs) => 1 + xs.iter().map(size).sum::<usize>(),
    }
}

/// Paths (child indices from a top-level form) of the nodes that may be replaced: inside
/// definitions and inside the body of the `lift` form's lambda, never its header.
fn editable(forms: &[Sexp]) -> Vec<Vec<usize>> {
    fn walk(e: &Sexp, path: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
        out.push(path.clone());
        if let Sexp::List(xs) = e {
            for (i, x) in xs.iter().enumerate() {
                path.push(i);
                walk(x, path, out);
                path.pop();
            }
        }
    }
    let mut out = vec![];
    for (k, f) in forms.iter().enumerate() {
        let Sexp::List(xs) = f else { continue };
        match xs.first() {
            Some(Sexp::Atom(a)) if a == "lift" => {
                // (lift sizes types (lambda params body)): the body is [3][2].
                if let Some(Sexp::List(lam)) = xs.get(3) {
                    if let Some(body) = lam.get(2) {
                        walk(body, &mut vec![k, 3, 2], &mut out);
                    }
                }
            }
            Some(Sexp::Atom(a)) if a == "define" => {
                if let Some(body) = xs.get(2) {
                    walk(body, &mut vec![k, 2], &mut out);
                }
            }
            _ => {}
        }
    }
    out
}

fn get<'a>(forms: &'a [Sexp], path: &[usize]) -> &'a Sexp {
    let mut e = &forms[path[0]];
    for &i in &path[1..] {
        let Sexp::List(xs) = e else {
            unreachable!("paths follow lists")
        };
        e = &xs[i];
    }
    e
}

fn set(forms: &mut [Sexp], path: &[usize], new: Sexp) {
    let mut e = &mut forms[path[0]];
    for &i in &path[1..] {
        let Sexp::List(xs) = e else {
            unreachable!("paths follow lists")
        };
        e = &mut xs[i];
    }
    *e = new;
}

const SIMPLE: &[&str] = &["0.0f", "1.0f", "0", "1", "true"];

/// Smaller programs to try, most promising (smallest) first.
fn candidates(forms: &[Sexp]) -> Vec<Vec<Sexp>> {
    let mut out = vec![];
    // Drop a definition.
    for k in 0..forms.len() {
        if matches!(&forms[k], Sexp::List(xs) if matches!(xs.first(), Some(Sexp::Atom(a)) if a == "define")) {
            let mut c = forms.to_vec();
            c.remove(k);
            out.push(c);
        }
    }
    for path in editable(forms) {
        let node = get(forms, &path);
        match node {
            Sexp::List(xs) => {
                let mut repl: Vec<Sexp> = xs.iter().skip(1).filter(|x| size(x) < size(node)).cloned().collect();
                // The body of a lambda in head position, e.g. (lambda (x) e) -> e.
                for x in xs {
                    if let Sexp::List(ys) = x {
                        if matches!(ys.first(), Some(Sexp::Atom(a)) if a == "lambda") {
                            if let Some(b) = ys.get(2) {
                                repl.push(b.clone());
                            }
                        }
                    }
                }
                repl.extend(SIMPLE.iter().map(|s| Sexp::Atom(s.to_string())));
                for r in repl {
                    let mut c = forms.to_vec();
                    set(&mut c, &path, r);
                    out.push(c);
                }
            }
            Sexp::Atom(a) => {
                let numeric = a.starts_with(|c: char| c.is_ascii_digit() || c == '-') && a.len() > 1;
                if numeric {
                    for s in SIMPLE {
                        if *s != a && s.len() <= a.len() {
                            let mut c = forms.to_vec();
                            set(&mut c, &path, Sexp::Atom(s.to_string()));
                            out.push(c);
                        }
                    }
                }
            }
        }
    }
    out
}

pub struct Budget {
    pub evaluations: usize,
    pub time: Duration,
}

/// Shrinks `case` (which got `verdict`) while `eval` keeps giving the same kind of failure.
/// Returns the smallest case found and its verdict.
pub fn shrink(
    case: &Case,
    verdict: &Verdict,
    budget: &Budget,
    eval: &mut dyn FnMut(&str, &str) -> Verdict,
) -> (Case, Verdict) {
    let started = Instant::now();
    let mut evals = 0;
    let mut best = case.clone();
    let mut best_verdict = verdict.clone();
    let Some(mut forms) = parse(&case.src) else {
        return (best, best_verdict);
    };
    let out_of_budget = |evals: &mut usize| {
        *evals += 1;
        *evals > budget.evaluations || started.elapsed() > budget.time
    };
    // Sizes first: smaller data makes every later evaluation cheaper.
    'sizes: loop {
        for k in 0..best.sizes.len() {
            let (_, v) = best.sizes[k].clone();
            for smaller in [1, 2, 4, 8, v / 2] {
                if smaller == 0 || smaller >= v {
                    continue;
                }
                if out_of_budget(&mut evals) {
                    break 'sizes;
                }
                let mut c = best.clone();
                c.sizes[k].1 = smaller;
                let got = eval(&c.src, &c.data().to_string());
                if got.same_as(verdict) {
                    best = c;
                    best_verdict = got;
                    continue 'sizes;
                }
            }
        }
        break;
    }
    if !out_of_budget(&mut evals) {
        try_plain_data(&mut best, &mut best_verdict, verdict, eval);
    }
    let data = best.data().to_string();
    'program: loop {
        let mut cands = candidates(&forms);
        let current: usize = forms.iter().map(size).sum();
        cands.retain(|c| c.iter().map(size).sum::<usize>() < current);
        cands.sort_by_key(|c| c.iter().map(size).sum::<usize>());
        for c in cands {
            if out_of_budget(&mut evals) {
                break 'program;
            }
            let src = render(&c);
            let got = eval(&src, &data);
            if got.same_as(verdict) {
                forms = c;
                best.src = src;
                best_verdict = got;
                continue 'program;
            }
        }
        break;
    }
    // Again: plain data may fail the same way only once the program is small.
    if !out_of_budget(&mut evals) {
        try_plain_data(&mut best, &mut best_verdict, verdict, eval);
    }
    // Parameters the shrunk body no longer uses, and size variables no type mentions.
    let mut k = 0;
    while k < best.params.len() {
        if out_of_budget(&mut evals) {
            break;
        }
        let Some(c) = without_param(&forms, &best, k) else {
            k += 1;
            continue;
        };
        let (cforms, ccase) = c;
        let got = eval(&ccase.src, &ccase.data().to_string());
        if got.same_as(verdict) {
            forms = cforms;
            best = ccase;
            best_verdict = got;
        } else {
            k += 1;
        }
    }
    (best, best_verdict)
}

fn try_plain_data(
    best: &mut Case,
    best_verdict: &mut Verdict,
    verdict: &Verdict,
    eval: &mut dyn FnMut(&str, &str) -> Verdict,
) {
    if best.plain_data {
        return;
    }
    let mut c = best.clone();
    c.plain_data = true;
    let got = eval(&c.src, &c.data().to_string());
    if got.same_as(verdict) {
        *best = c;
        *best_verdict = got;
    }
}

/// `case` without its `k`-th parameter, if the body does not use it.
fn without_param(forms: &[Sexp], case: &Case, k: usize) -> Option<(Vec<Sexp>, Case)> {
    let name = &case.params[k].0;
    let at = forms
        .iter()
        .position(|f| matches!(f, Sexp::List(xs) if matches!(xs.first(), Some(Sexp::Atom(a)) if a == "lift")))?;
    let mut forms = forms.to_vec();
    let Sexp::List(lift) = &mut forms[at] else { return None };
    if lift.len() != 4 {
        return None;
    }
    let Sexp::List(lam) = &mut lift[3] else { return None };
    let uses = |e: &Sexp| -> bool {
        fn walk(e: &Sexp, name: &str) -> bool {
            match e {
                Sexp::Atom(a) => a == name,
                Sexp::List(xs) => xs.iter().any(|x| walk(x, name)),
            }
        }
        walk(e, name)
    };
    if lam.len() != 3 || uses(&lam[2]) {
        return None;
    }
    let Sexp::List(names) = &mut lam[1] else { return None };
    let i = names.iter().position(|n| *n == Sexp::Atom(name.clone()))?;
    names.remove(i);
    let Sexp::List(types) = &mut lift[2] else { return None };
    if types.len() <= i {
        return None;
    }
    types.remove(i);
    let mut case = case.clone();
    case.params.remove(k);
    // Size variables that no remaining type mentions go too.
    let types_text = {
        let mut t = String::new();
        for ty in types.iter() {
            print(ty, &mut t);
            t.push(' ');
        }
        t
    };
    let mentioned = |v: &str| types_text.split(|c: char| !c.is_ascii_alphanumeric()).any(|w| w == v);
    case.sizes.retain(|(v, _)| mentioned(v));
    if let Sexp::List(sizes) = &mut lift[1] {
        sizes.retain(|s| matches!(s, Sexp::Atom(v) if mentioned(v)));
    }
    case.src = render(&forms);
    Some((forms, case))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oracle::Class;

    #[test]
    fn shrinks_to_the_failing_subterm() {
        // A fake oracle: the case "fails" while the program still contains `(reverse`.
        let case = Case {
            id: "t".into(),
            src: "(define (f p) (+ p 1.0f))\n(lift (N) ((array-type float N)) (lambda (xs) (toGlobal (mapGlb (lambda (x) (f (* x 2.0f))) (reverse (pad #1 #1 0.0f xs))))))".into(),
            params: vec![],
            sizes: vec![],
            data_seed: 1,
            plain_data: false,
        };
        let bad = Verdict::new(Class::Wrong, "different results", "");
        let mut eval = |src: &str, _: &str| {
            if src.contains("(reverse") {
                bad.clone()
            } else {
                Verdict::new(Class::Agree, "", "")
            }
        };
        let budget = Budget {
            evaluations: 1000,
            time: Duration::from_secs(10),
        };
        let (small, v) = shrink(&case, &bad, &budget, &mut eval);
        assert_eq!(v.class, Class::Wrong);
        assert!(small.src.len() < case.src.len() / 2, "{}", small.src);
        assert!(small.src.contains("(reverse"), "{}", small.src);
        assert!(!small.src.contains("define"), "{}", small.src);
    }

    #[test]
    fn drops_unused_parameters_and_sizes() {
        use crate::gen::{Len, Ty};
        let arr = |n: &str, v| Ty::Array(Box::new(Ty::Float), Len { text: n.into(), val: v });
        let case = Case {
            id: "t".into(),
            src: "(lift (M N) ((array-type float N) (array-type float M)) (lambda (xs ys) (toGlobal (mapGlb (lambda (x) (- x)) xs))))".into(),
            params: vec![("xs".into(), arr("N", 4)), ("ys".into(), arr("M", 4))],
            sizes: vec![("M".into(), 4), ("N".into(), 4)],
            data_seed: 1,
            plain_data: false,
        };
        let bad = Verdict::new(Class::Driver, "build: x", "");
        let mut eval = |src: &str, data: &str| {
            // Fails while the negation is there; the data must match the parameters.
            let params_ok = data.contains("\"xs\"") && src.contains("(xs ys)") == data.contains("\"ys\"");
            if src.contains("(mapGlb (lambda (x) (- x)) xs)") && params_ok {
                bad.clone()
            } else {
                Verdict::new(Class::CleanError, "other", "")
            }
        };
        let budget = Budget {
            evaluations: 1000,
            time: Duration::from_secs(10),
        };
        let (small, _) = shrink(&case, &bad, &budget, &mut eval);
        assert!(
            small
                .src
                .contains("(lift\n  (N)\n  ((array-type float N))\n  (lambda (xs)"),
            "{}",
            small.src
        );
        assert_eq!(small.params.len(), 1);
        assert_eq!(small.sizes, vec![("N".to_string(), 1)]);
    }
}
