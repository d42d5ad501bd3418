//! Text from a guest or a registry on its way to the user's terminal (the
//! engine prints statuses, log lines and check failures as they come) or to
//! the host's log. A control character there is an instruction, not a letter:
//! an escape sequence can rewrite the screen, set the clipboard (OSC 52) or
//! hide a link (OSC 8), a carriage return or a line separator can forge a
//! line, a bidi override can reorder what the user reads ("Trojan Source"),
//! and zero-width and tag characters carry text the user cannot see.

use std::borrow::Cow;

use unicode_properties::{GeneralCategory, UnicodeGeneralCategory};

/// What a message of several lines keeps: newlines and tabs.
pub const LINES: &[char] = &['\n', '\t'];

/// Whether `c` is one of those: a control (Cc), a line or paragraph
/// separator (Zl, Zp) or a format character (Cf), but the zero-width
/// joiner and non-joiner, which emoji sequences and Persian or Indic
/// writing need and which change no order.
pub fn hidden(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_control();
    }
    match c.general_category() {
        GeneralCategory::Control | GeneralCategory::LineSeparator | GeneralCategory::ParagraphSeparator => true,
        GeneralCategory::Format => !matches!(c, '\u{200c}' | '\u{200d}'),
        _ => false,
    }
}

/// `text` with its [`hidden`] characters but those in `keep` escaped as
/// Rust writes them (`\u{1b}`, `\r`, `\u{202e}`), so what was there stays
/// readable. Borrowed when there is nothing to escape.
pub fn escape<'a>(text: &'a str, keep: &[char]) -> Cow<'a, str> {
    let escaped = |c: char| hidden(c) && !keep.contains(&c);
    if !text.chars().any(escaped) {
        return text.into();
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if escaped(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out.into()
}

/// [`escape`] of an owned string, which it returns as it is when there is
/// nothing to escape.
pub fn escape_owned(text: String, keep: &[char]) -> String {
    match escape(&text, keep) {
        Cow::Borrowed(_) => text,
        Cow::Owned(escaped) => escaped,
    }
}

/// A stranger's short text (a registry's error message, an annotation)
/// for one line of a message: its [`hidden`] characters blanked, cut after
/// `max` characters.
pub fn printable(text: &str, max: usize) -> String {
    let mut shown: String = text.chars().take(max).map(|c| if hidden(c) { ' ' } else { c }).collect();
    if text.chars().nth(max).is_some() {
        shown.push_str("...");
    }
    shown
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_a_terminal_would_act_on_is_hidden() {
        for c in ['\x1b', '\r', '\x07', '\x7f', '\u{9b}', '\u{2028}', '\u{2029}', '\u{202e}', '\u{2066}', '\u{200b}'] {
            assert!(hidden(c), "{c:?}");
        }
        for c in ['\u{feff}', '\u{ad}', '\u{e0041}', '\u{61c}', '\u{200e}'] {
            assert!(hidden(c), "{c:?}");
        }
        for c in ['a', ' ', 'é', '日', '\u{200d}', '\u{200c}', '\u{fe0f}', '👩'] {
            assert!(!hidden(c), "{c:?}");
        }
    }

    #[test]
    fn escaping_keeps_what_is_asked_and_borrows_when_it_can() {
        assert_eq!(escape("a\x1b[2Jb\r\nc\u{202e}d\te", &['\n', '\t']), "a\\u{1b}[2Jb\\r\nc\\u{202e}d\te");
        assert_eq!(escape("a\nb", &[]), "a\\nb");
        assert!(matches!(escape("plain, é, 👩\u{200d}💻", &[]), Cow::Borrowed(_)));
        assert_eq!(escape_owned("x\u{2028}y".into(), &[]), "x\\u{2028}y");
    }

    #[test]
    fn printable_blanks_and_cuts() {
        assert_eq!(printable("a\x1b[2Jb\u{202e}c\u{200b}d\te\u{9b}f\u{2028}g\u{e0041}h", 100), "a [2Jb c d e f g h");
        assert_eq!(printable("abcdef", 3), "abc...");
        assert_eq!(printable("abc", 3), "abc");
    }
}
