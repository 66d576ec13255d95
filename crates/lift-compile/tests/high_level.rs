//! `is_high_level`: which programs `compile` explores (a program that fixes no mapping, a view of
//! its inputs included) and which it compiles as written.

use lift_compile::is_high_level;

fn prog(src: &str) -> ir::Program {
    ir::parse(src).unwrap_or_else(|d| panic!("{}\n{src}", d.message))
}

const M: &str = "(lift (M N) ((array-type (array-type float N) M)) (lambda (m) ";

#[test]
fn a_view_of_the_inputs_is_explored_and_a_fixed_mapping_is_not() {
    // views: the transpose primitive, a split of the rows
    assert!(is_high_level(&prog(&format!("{M}(transpose m)))"))));
    assert!(is_high_level(&prog(&format!("{M}(split #2 (join m))))"))));
    // a high-level map
    assert!(is_high_level(&prog(&format!(
        "{M}(map (lambda (r) (map (lambda (x) x) r)) (transpose m))))"
    ))));
    // a mapping fixed by the program
    assert!(!is_high_level(&prog(&format!(
        "{M}(toGlobal (mapGlb1 (lambda (r) (mapGlb (lambda (x) x) r)) (transpose m)))))"
    ))));
    // no primitive at all: the parameter itself
    assert!(!is_high_level(&prog(&format!("{M}m))"))));
}
