//! Rendering of user-facing errors with miette: file name, line, column and a caret.

use ir::Diagnostic;
use miette::{GraphicalReportHandler, GraphicalTheme, LabeledSpan, NamedSource, SourceSpan};
use std::fmt;

#[derive(Debug)]
struct Report {
    message: String,
    label: String,
    notes: Vec<String>,
    src: NamedSource<String>,
    span: SourceSpan,
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.message)
    }
}

impl std::error::Error for Report {}

impl miette::Diagnostic for Report {
    fn source_code(&self) -> Option<&dyn miette::SourceCode> {
        Some(&self.src)
    }
    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        let label = (!self.label.is_empty()).then(|| self.label.clone());
        Some(Box::new(std::iter::once(LabeledSpan::new_with_span(label, self.span))))
    }
    fn help<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        (!self.notes.is_empty()).then(|| Box::new(self.notes.join("\n")) as Box<dyn fmt::Display>)
    }
}

/// Renders `diag` against the source `src` of `file`, without colours (deterministic).
pub fn render(diag: &Diagnostic, file: &str, src: &str) -> String {
    let start = (diag.span.start as usize).min(src.len());
    let len = diag.span.len().min(src.len() - start);
    let (line, col) = line_col(src, start);
    let report = Report {
        message: format!("{}:{line}:{col}: {}", file, diag.message),
        label: diag.label.clone(),
        notes: diag.notes.clone(),
        src: NamedSource::new(file, src.to_string()),
        span: SourceSpan::new(start.into(), len),
    };
    let mut out = String::new();
    let handler = GraphicalReportHandler::new_themed(GraphicalTheme::unicode_nocolor()).with_width(100);
    if handler.render_report(&mut out, &report).is_err() {
        out = format!("error: {}\n", report.message);
    }
    out
}

/// 1-based line and column (in characters) of a byte offset.
pub fn line_col(src: &str, offset: usize) -> (usize, usize) {
    let before = &src[..floor_char_boundary(src, offset)];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// An error without a place in the source (data files, devices).
pub fn render_plain(message: &str, notes: &[String]) -> String {
    let mut out = format!("error: {message}\n");
    for n in notes {
        out.push_str(&format!("  help: {n}\n"));
    }
    out
}
