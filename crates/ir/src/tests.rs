use crate::sexp::{read, FloatSuffix, SexpKind};
use crate::{parse, print};

fn kinds(src: &str) -> Vec<SexpKind> {
    read(src).unwrap().into_iter().map(|s| s.kind).collect()
}

#[test]
fn reads_literals() {
    assert_eq!(
        kinds("2.0f 2.0 2.0d 3 #4 true false -1 array-type >= 1e3"),
        vec![
            SexpKind::Float(2.0, FloatSuffix::F),
            SexpKind::Float(2.0, FloatSuffix::None),
            SexpKind::Float(2.0, FloatSuffix::D),
            SexpKind::Int(3),
            SexpKind::Size(4),
            SexpKind::Bool(true),
            SexpKind::Bool(false),
            SexpKind::Int(-1),
            SexpKind::Symbol("array-type".into()),
            SexpKind::Symbol(">=".into()),
            SexpKind::Float(1000.0, FloatSuffix::None),
        ]
    );
}

#[test]
fn reads_nested_lists_with_spans_and_comments() {
    let src = "; comment\n(a (b c) ; more\n d)";
    let forms = read(src).unwrap();
    assert_eq!(forms.len(), 1);
    assert_eq!(
        &src[forms[0].span.start as usize..forms[0].span.end as usize],
        "(a (b c) ; more\n d)"
    );
    let items = forms[0].as_list().unwrap();
    assert_eq!(&src[items[1].span.start as usize..items[1].span.end as usize], "(b c)");
}

#[test]
fn reader_errors_point_at_the_culprit() {
    let e = read("(a (b c)").unwrap_err();
    assert_eq!(
        (e.span.start, e.message.as_str()),
        (0, "unbalanced parenthesis: this `(` is never closed")
    );
    let e = read("(a))").unwrap_err();
    assert_eq!(e.span.start, 3);
    let e = read("(a [b])").unwrap_err();
    assert_eq!(e.span.start, 3);
    assert_eq!(e.message, "unexpected character `[`");
    for bad in ["1.2.3", "12abc", "#x", "#", "2.0q", "3f", "99999999999"] {
        let e = read(bad).unwrap_err();
        assert_eq!(e.span.start, 0, "{bad}");
        assert!(e.message.starts_with("bad "), "{bad}: {}", e.message);
    }
}

#[test]
fn reader_never_panics_on_random_bytes() {
    let mut x: u64 = 0x9E3779B97F4A7C15;
    for _ in 0..20000 {
        let mut bytes = vec![];
        for _ in 0..(x % 40) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let alphabet = b"()#;.0123456789fdabc-+ \n\t\"[]\xc3\xa9x";
            bytes.push(alphabet[(x % alphabet.len() as u64) as usize]);
        }
        let s = String::from_utf8_lossy(&bytes);
        let _ = read(&s);
        let _ = parse(&s);
    }
}

#[test]
fn pipelines_and_partial_application_normalize() {
    let p = parse(
        "(lift (N) ((array-type float N)) (lambda (xs) (o join (mapSeq (lambda (ys) (mapSeq (lambda (y) (* y 2.0f)) ys))) (split #2) xs)))",
    )
    .unwrap();
    assert_eq!(
        print::program(&p),
        "(lift\n  (N)\n  ((array-type float N))\n  (lambda (xs)\n    (join (mapSeq (lambda (ys) (mapSeq (lambda (y) (* y 2.0f)) ys)) (split #2 xs)))))\n"
    );
    let q = parse(
        "(define (twice f x) (f (f x))) (lift (N) ((array-type float N)) (lambda (xs) (twice (mapSeq (+ 1.0f)) xs)))",
    )
    .unwrap();
    assert_eq!(
        print::program(&q).lines().last().unwrap().trim(),
        "(mapSeq (lambda (p2) (+ 1.0f p2)) (mapSeq (lambda (p1) (+ 1.0f p1)) xs))))"
    );
}

#[test]
fn filter_arguments_are_k_normalized() {
    let p = parse("(lift (N) ((array-type float N)) (lambda (xs) (mapSeq (lambda (x) x) (filterSeq (lambda (x) (< x 0.5f)) xs))))").unwrap();
    assert!(
        print::program(&p).contains("(let k1 (filterSeq (lambda (x) (< x 0.5f)) xs) (mapSeq (lambda (x_2) x_2) k1))"),
        "{}",
        print::program(&p)
    );
}

#[test]
fn unknown_names_suggest_the_closest() {
    let e = parse("(lift (N) ((array-type float N)) (lambda (xs) (mapGbl (lambda (x) x) xs)))").unwrap_err();
    assert_eq!(e.message, "unknown name `mapGbl`");
    assert_eq!(e.notes, vec!["did you mean `mapGlb`?".to_string()]);
}

#[test]
fn nesting_beyond_the_limit_is_a_reader_error() {
    let lists = |k: usize| format!("{}x{}", "(".repeat(k), ")".repeat(k));
    let too_deep = format!(
        "nested too deeply: programs may nest at most {} levels",
        crate::MAX_DEPTH
    );
    assert!(crate::sexp::read(&lists(crate::MAX_DEPTH)).is_ok());
    let e = crate::sexp::read(&lists(crate::MAX_DEPTH + 1)).unwrap_err();
    assert_eq!(e.message, too_deep);
    assert_eq!(
        e.span.start as usize,
        crate::MAX_DEPTH,
        "points at the first `(` too many"
    );
    // Elaboration counts inlined definitions too.
    let mut src = "(define (f0 x) (+ x 1.0f))\n".to_string();
    for i in 1..2000 {
        src += &format!("(define (f{i} x) (f{} (+ x 1.0f)))\n", i - 1);
    }
    src += "(lift (N) ((array-type float N)) (lambda (xs) (mapGlb (lambda (x) (f1999 x)) xs)))";
    // (Elaborating up to the limit needs the compiler's stack, not a test thread's 2 MiB.)
    let e = crate::run_with_stack(|| crate::parse(&src)).unwrap_err();
    assert_eq!(e.message, too_deep);
}

#[test]
fn arity_errors_name_the_counts() {
    let err = |body: &str| {
        let src = format!("(define (g x y) (+ x y))\n(lift (N) ((array-type float N)) (lambda (xs) {body}))");
        crate::parse(&src).map(|_| ()).unwrap_err().message
    };
    assert_eq!(
        err("(mapGlb (lambda (x) (g x x x)) xs)"),
        "too many arguments: this function takes 2, but is given 3"
    );
    assert_eq!(
        err("(mapGlb (lambda (x) (* x 2.0f)) xs xs)"),
        "too many arguments: this function takes 2, but is given 3"
    );
    assert_eq!(
        err("(reduceSeq (lambda (acc) acc) 0.0f xs)"),
        "this function takes 1 argument(s), but is called with 2 here"
    );
    assert_eq!(
        err("(reduceSeq (lambda (a b c) a) 0.0f xs)"),
        "this function takes 3 argument(s), but is called with 2 here"
    );
    assert_eq!(
        err("(mapGlb (lambda (x) (g x)) xs)"),
        "this function returns a function, not a value: its body needs 1 more argument(s)"
    );
}

#[test]
fn host_sections_read_print_and_read_back() {
    let src = "(lift (N K) ((array-type float N)) (lambda (xs)
      (let s (iterate K (lambda (a) (mapGlb (lambda (x) (* x 2.0f)) a)) xs)
        (iterate-until #8 (lambda (p q) (reduceSeq (lambda (c x) (and c (> x 1.0f))) true q))
          (lambda (b) (mapGlb (lambda (x) (+ x 1.0f)) b)) s))))";
    let p = parse(src).expect("parses");
    let text = print::program(&p);
    assert!(text.contains("(iterate K (lambda (a)"), "{text}");
    assert!(
        text.contains("(iterate-until #8") && text.contains("(lambda (p q)"),
        "{text}"
    );
    let q = parse(&text).expect("reads back");
    assert_eq!(print::program(&q), text);
    let plan = crate::host::HostPlan::of(&p);
    let loops: Vec<_> = plan.sections().map(|(_, s)| s).collect();
    assert_eq!(loops, [crate::host::Section::Loop; 2], "both loops run on the host");
    // The loops' functions' maps and the condition's reduction are kernels of their own.
    let kernels: Vec<String> = plan
        .kernels(&p)
        .iter()
        .map(|k| match p.expr(*k) {
            crate::Expr::Prim { prim, .. } => prim.name(),
            other => format!("{other:?}"),
        })
        .collect();
    assert_eq!(kernels, ["mapGlb", "reduceSeq", "mapGlb"]);
    // `iterate-until` needs a function of two parameters for its condition.
    let bad = "(lift (N) ((array-type float N)) (lambda (xs) (iterate-until #8 (lambda (p) true) (lambda (b) b) xs)))";
    let err = parse(bad).map(|_| ()).expect_err("arity");
    assert_eq!(
        err.message,
        "this function takes 1 argument(s), but is called with 2 here"
    );
}

/// A variable or literal nested past the printer's margin prints as itself: `(x)` would read
/// back as an application of `x` (the deeply nested variants of a batch of register-blocked
/// products reached the margin).
#[test]
fn leaves_past_the_margin_print_as_themselves() {
    let mut body = "x".to_string();
    for _ in 0..60 {
        body = format!("(+ x {body})");
    }
    let src = format!("(lift (N) ((array-type float N)) (lambda (xs) (mapGlb (lambda (x) {body}) xs)))");
    let p = parse(&src).expect("parses");
    let text = print::program(&p);
    assert!(text.lines().any(|l| l.len() > 100), "{text}");
    let q = parse(&text).unwrap_or_else(|e| panic!("{e:?}\n{text}"));
    assert_eq!(print::program(&q), text);
}

#[test]
fn reads_integer_literals_of_every_type() {
    assert_eq!(
        kinds("3u 3l 3ul 3UL 3lu 0x67452301u 0x1f 0xdu -0x80000000 0xffffffffffffffffUL -9223372036854775808l"),
        vec![
            SexpKind::Uint(3),
            SexpKind::Long(3),
            SexpKind::Ulong(3),
            SexpKind::Ulong(3),
            SexpKind::Ulong(3),
            SexpKind::Uint(0x6745_2301),
            // hexadecimal digits `f` and `d` are digits, not float suffixes
            SexpKind::Int(31),
            SexpKind::Uint(13),
            SexpKind::Int(-2_147_483_648),
            SexpKind::Ulong(u64::MAX),
            SexpKind::Long(i64::MIN),
        ]
    );
}

#[test]
fn integer_literals_out_of_range_are_errors() {
    let message = |src: &str| read(src).unwrap_err().message;
    assert_eq!(
        message("2147483648"),
        "bad number `2147483648`: the value does not fit in int; write `u`, `l` or `ul` after it for a uint, long or ulong"
    );
    assert_eq!(
        message("18446744073709551616ul"),
        "bad number `18446744073709551616ul`: the value does not fit in ulong"
    );
    assert_eq!(message("-3ul"), "bad number `-3ul`: a ulong cannot be negative");
    assert_eq!(message("0x"), "bad number `0x`: no hexadecimal digits after `0x`");
    assert_eq!(
        message("0x12z"),
        "bad number `0x12z`: `z` is not an integer suffix (`u`, `l` or `ul`)"
    );
}

#[test]
fn integer_literals_print_with_their_suffix() {
    let prog = parse::parse("(lift () (uint) (lambda (u) (tuple (+ u 0xffu) 3l 3ul)))").unwrap();
    let text = print::program(&prog);
    assert!(
        text.contains("255u") && text.contains("3l") && text.contains("3ul"),
        "{text}"
    );
}

/// Two lengths a message says differ never print alike: a floor division and the exact
/// division of a split print as `/` and `/^` where the plain text would not tell them apart.
#[test]
fn different_lengths_print_differently() {
    use crate::{distinct_lengths, distinct_texts, Type};
    use arith::ArithExpr;
    let n = ArithExpr::size_var("N");
    let four = ArithExpr::cst(4);
    let (floor, exact) = (n.div(&four), n.div_assume_exact(&four));
    assert_eq!(
        floor.to_string(),
        exact.to_string(),
        "the OpenCL text of both is C's `/`"
    );
    assert_eq!(
        distinct_lengths(&floor, &exact),
        ("(N/4)".to_string(), "(N/^4)".to_string())
    );
    assert_eq!(distinct_lengths(&floor, &n), ("(N/4)".to_string(), "N".to_string()));
    let (a, b) = (
        Type::array(Type::float(), floor),
        Type::array(Type::float(), exact.clone()),
    );
    assert_eq!(
        distinct_texts(&a, &b),
        ("[float](N/4)".to_string(), "[float](N/^4)".to_string())
    );
    let same = Type::array(Type::float(), exact);
    assert_eq!(
        distinct_texts(&b, &same),
        ("[float](N/4)".to_string(), "[float](N/4)".to_string())
    );
}
