//! A differential fuzzer through the whole compiler: random well-typed LIFT programs
//! ([`gen`]) run on the reference interpreter and on OpenCL ([`api`], the only module that
//! calls the compiler), a verdict per case ([`oracle`]), failing cases shrunk ([`shrink`]) and
//! written out with their data. [`runner`] evaluates cases in a child process so that an abort
//! or a hang costs one verdict; [`campaign`] is the long run of `scripts/fuzz.sh`. The variants
//! mode ([`variants`], `--variants K`) runs high-level programs as the variants that rewriting
//! makes of them instead.

pub mod api;
pub mod campaign;
pub mod gen;
pub mod oclgrind;
pub mod oracle;
pub mod runner;
pub mod shrink;
pub mod variants;

/// One line of `known-failures.txt`: `seed:index class  # the defect it shows`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KnownFailure {
    pub id: String,
    pub class: oracle::Class,
    pub defect: String,
}

/// Reads `known-failures.txt`; blank lines and lines starting with `#` are comments.
pub fn parse_known_failures(text: &str) -> Result<Vec<KnownFailure>, String> {
    let mut out = vec![];
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (entry, defect) = line.split_once('#').unwrap_or((line, ""));
        let mut words = entry.split_whitespace();
        let (Some(id), Some(class), None) = (words.next(), words.next(), words.next()) else {
            return Err(format!("line {}: expected `seed:index class # defect`", n + 1));
        };
        let class = oracle::Class::parse(class).ok_or_else(|| format!("line {}: unknown class {class}", n + 1))?;
        if defect.trim().is_empty() {
            return Err(format!("line {}: say which defect the case shows after `#`", n + 1));
        }
        out.push(KnownFailure {
            id: id.to_string(),
            class,
            defect: defect.trim().to_string(),
        });
    }
    Ok(out)
}
