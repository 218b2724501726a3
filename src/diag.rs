//! One error style for the whole command line: every error, note and assembly diagnostic
//! (and clap's own argument errors) is rendered by `annotate-snippets`, in colour when stderr
//! is a terminal and `NO_COLOR` is not set. Assembly errors show `--> file:line:column`, the
//! source line with a caret, and a `help:` line where there is a suggestion, and end with a
//! count of the errors.

use annotate_snippets::{Level, Message, Renderer, Snippet};
use lanejit_interp::asm::AsmErrors;
use std::io::{IsTerminal as _, Write as _};

/// Whether stderr gets colour: a terminal, and `NO_COLOR` unset or empty.
pub fn color() -> bool {
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    !no_color && std::io::stderr().is_terminal()
}

fn renderer(color: bool) -> Renderer {
    if color {
        Renderer::styled()
    } else {
        Renderer::plain()
    }
}

/// `text` as the byte range of the 1-based character column `col` (one character; empty at
/// the end of the line).
fn span(text: &str, col: usize) -> std::ops::Range<usize> {
    let mut chars = text.char_indices().skip(col.saturating_sub(1));
    match chars.next() {
        Some((at, c)) => at..at + c.len_utf8(),
        None => text.len()..text.len(),
    }
}

/// Every error of `errors`, then the count, as the CLI prints them.
pub fn render_asm(errors: &AsmErrors, color: bool) -> String {
    let r = renderer(color);
    let mut out = String::new();
    for e in &errors.errors {
        let title = e.kind.to_string();
        let mut msg: Message = if e.line == 0 {
            // An error about a `--set` override: no source line.
            Level::Error
                .title(&title)
                .footer(Level::Note.title(&e.text))
        } else {
            Level::Error.title(&title).snippet(
                Snippet::source(&e.text)
                    .line_start(e.line)
                    .origin(&errors.file)
                    .annotation(Level::Error.span(span(&e.text, e.col))),
            )
        };
        if let Some(h) = &e.help {
            msg = msg.footer(Level::Help.title(h));
        }
        out.push_str(&r.render(msg).to_string());
        out.push('\n');
    }
    let n = errors.errors.len();
    let count = format!(
        "could not assemble `{}` due to {n} error{}",
        errors.file,
        if n == 1 { "" } else { "s" }
    );
    out.push_str(&r.render(Level::Error.title(&count)).to_string());
    out.push('\n');
    out
}

/// A one-line error (or note) in the same style, with optional `help:` lines.
pub fn render_message(level: Level, text: &str, helps: &[String], color: bool) -> String {
    let mut msg = level.title(text);
    for h in helps {
        msg = msg.footer(Level::Help.title(h));
    }
    format!("{}\n", renderer(color).render(msg))
}

/// Print an error to stderr.
pub fn error(text: &str) {
    let _ =
        std::io::stderr().write_all(render_message(Level::Error, text, &[], color()).as_bytes());
}

/// Print a note to stderr.
pub fn note(text: &str) {
    let _ = std::io::stderr().write_all(render_message(Level::Note, text, &[], color()).as_bytes());
}

/// A clap error in the CLI's style: its message as the title, its tips as `help:` lines and
/// its usage line as a note. `--help` and `--version` output (not errors) pass through as is.
pub fn render_clap(e: &clap::Error, color: bool) -> String {
    let text = e.to_string();
    let mut title = String::new();
    let mut helps = Vec::new();
    let mut usage = None;
    for line in text.lines() {
        let t = line.trim();
        if let Some(m) = t.strip_prefix("error: ") {
            title = m.to_string();
        } else if let Some(tip) = t.strip_prefix("tip: ") {
            helps.push(tip.to_string());
        } else if let Some(u) = t.strip_prefix("Usage: ") {
            usage = Some(format!("usage: {u}"));
        } else if !t.is_empty() && !t.starts_with("For more information") && title.is_empty() {
            title = t.to_string();
        }
    }
    let mut msg = Level::Error.title(&title);
    for h in &helps {
        msg = msg.footer(Level::Help.title(h));
    }
    if let Some(u) = &usage {
        msg = msg.footer(Level::Note.title(u));
    }
    format!("{}\n", renderer(color).render(msg))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn asm_errors_name_file_line_column_and_count() {
        let e = lanejit_interp::asm::assemble("  NOP\n  S.LI s1, outt\nout: HALT\n", "k.s")
            .unwrap_err();
        let text = render_asm(&e, false);
        assert!(text.contains("error: undefined symbol `outt`"), "{text}");
        assert!(text.contains("--> k.s:2:12"), "{text}");
        assert!(text.contains("help: did you mean `out`?"), "{text}");
        assert!(
            text.trim_end()
                .ends_with("error: could not assemble `k.s` due to 1 error"),
            "{text}"
        );
        assert!(!text.contains('\u{1b}'), "plain without colour");
        assert!(
            render_asm(&e, true).contains('\u{1b}'),
            "styled with colour"
        );
        assert_eq!(span("aé b", 2), 1..3);
        assert_eq!(span("ab", 5), 2..2);
    }
}
