//! Text from a guest or a registry on its way to the user's terminal (the
//! engine prints statuses, log lines and check failures as they come) or to
//! the host's log. A control character there is an instruction, not a letter:
//! an escape sequence can rewrite the screen, set the clipboard (OSC 52) or
//! hide a link (OSC 8), a carriage return or a line separator can forge a
//! line, a bidi override can reorder what the user reads ("Trojan Source"),
//! and zero-width, tag and filler characters and runs of variation
//! selectors carry text the user cannot see.
//!
//! The Pulumi CLI also acts on its own colour markup (`<{%fg 1%}>`) in all
//! of these, and it has no way to write the markup as text: a directive it
//! does not know stops some versions of it, and an opening one never
//! closed swallows the rest of the line, such as what the host adds after
//! a provider's words. So openings and closings are broken up (`<\{%`,
//! `%\}>`): a provider's messages may not colour, hide or end the user's
//! display. Property values, ids and diff keys, which must round-trip, are
//! not this module's business.

use std::borrow::Cow;

use unicode_properties::{GeneralCategory, UnicodeGeneralCategory};

/// What a message of several lines keeps: newlines and tabs.
pub const LINES: &[char] = &['\n', '\t'];

/// The longest text of a provider's passed on in one piece (a status, a
/// log line, a check failure's reason). A provider's text has no bound of
/// its own (a guest may copy out 128 MiB in a call), and the engine
/// prints it all; a status also travels in HTTP/2 trailers, which clients
/// cap (grpc-go at 16 MiB), so a huge one would reach the engine as a
/// transport error.
pub const MAX_MESSAGE: usize = 64 << 10;

/// Whether `c` is one of those wherever it stands: a control (Cc), a line
/// or paragraph separator (Zl, Zp), a format character (Cf) but the
/// joiners; a letter or mark that draws nothing and joins nothing (the
/// Hangul fillers, which make a blank name; the combining grapheme joiner;
/// Khmer's inherent vowels); or a code point Unicode keeps invisible for
/// the future (unassigned, so a terminal draws nothing). The zero-width
/// joiner and non-joiner and the variation selectors depend on what they
/// follow (`judged`).
pub fn hidden(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_control();
    }
    match c.general_category() {
        GeneralCategory::Control | GeneralCategory::LineSeparator | GeneralCategory::ParagraphSeparator => true,
        GeneralCategory::Format => !joiner(c),
        _ => matches!(
            c,
            '\u{115f}' | '\u{1160}' | '\u{3164}' | '\u{ffa0}' | '\u{34f}' | '\u{17b4}' | '\u{17b5}'
                | '\u{2065}' | '\u{fff0}'..='\u{fff8}' | '\u{e0000}'..='\u{e00ff}' | '\u{e01f0}'..='\u{e0fff}'
        ),
    }
}

/// The zero-width joiner and non-joiner, which emoji sequences and Persian
/// or Indic writing need between two characters, and which change no order.
fn joiner(c: char) -> bool {
    matches!(c, '\u{200c}' | '\u{200d}')
}

/// Unicode's variation selectors (VS1-VS256) and Mongolian's free ones.
fn variation_selector(c: char) -> bool {
    matches!(c, '\u{fe00}'..='\u{fe0f}' | '\u{e0100}'..='\u{e01ef}' | '\u{180b}'..='\u{180d}' | '\u{180f}')
}

/// Each character of `text`, where it starts, and whether it is hidden
/// there: [`hidden`]; a variation selector but one right after a shown
/// character (one picks a glyph's form, an emoji's colour presentation or
/// an ideograph's variant); a joiner but one right after a shown character
/// or its selector. Runs of either, or one that follows nothing, draw
/// nothing and can carry a byte each.
fn judged(text: &str) -> impl Iterator<Item = (usize, char, bool)> + '_ {
    // What the last character was, for the next selector or joiner: a
    // joiner leaves them nothing to follow, as a hidden character does.
    #[derive(PartialEq)]
    enum After {
        Nothing,
        Shown,
        Selector,
    }
    let mut after = After::Nothing;
    text.char_indices().map(move |(at, c)| {
        let (hide, next) = if variation_selector(c) {
            (after != After::Shown, After::Selector)
        } else if joiner(c) {
            (after == After::Nothing, After::Nothing)
        } else {
            (hidden(c), After::Shown)
        };
        after = if hide { After::Nothing } else { next };
        (at, c, hide)
    })
}

/// Whether `text` holds an opening or a closing of Pulumi's colour markup.
fn marked(text: &str) -> bool {
    text.contains("<{%") || text.contains("%}>")
}

/// Whether a terminal or the Pulumi CLI would act on something in `text`
/// but the `keep` characters: what [`escape`] changes.
fn acted_on(text: &str, keep: &[char]) -> bool {
    judged(text).any(|(_, c, hide)| hide && !keep.contains(&c)) || marked(text)
}

/// Whether a name a user reads (a resource's type or name, a declared
/// need) holds anything a terminal or the Pulumi CLI would act on. Names
/// are refused rather than escaped: they must stay what they say.
pub fn unfit_name(text: &str) -> bool {
    acted_on(text, &[])
}

/// Whether a name would show as nothing: empty, or only spaces (any of
/// Unicode's, and the Braille blank, which is a letter but draws no dot),
/// joiners, selectors and hidden characters. Two resources named "  " and
/// "\u{3000}" would be two rows the user cannot tell apart or point at.
pub fn blank(text: &str) -> bool {
    text.chars().all(|c| c.is_whitespace() || c == '\u{2800}' || hidden(c) || joiner(c) || variation_selector(c))
}

/// Whether the byte at `at` is the brace of an opening (`<{%`) or closing
/// (`%}>`) of the markup. All ASCII, so bytes serve for text too: none of
/// them occurs inside a multi-byte UTF-8 character.
fn markup_brace(bytes: &[u8], at: usize) -> bool {
    let between = |before: u8, after: u8| at > 0 && bytes[at - 1] == before && bytes.get(at + 1) == Some(&after);
    match bytes[at] {
        b'{' => between(b'<', b'%'),
        b'}' => between(b'%', b'>'),
        _ => false,
    }
}

/// The host's own log on stderr, which the engine shows line by line
/// through the CLI's colouriser, with the markup broken up as in
/// [`escape`], whatever a line quotes (a guest's function names in a
/// backtrace, a declaration in a parser's error). Each write is taken
/// whole, as `tracing` writes a line at once.
pub struct Unmarked<W>(pub W);

impl<W: std::io::Write> std::io::Write for Unmarked<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if !(0..buf.len()).any(|at| markup_brace(buf, at)) {
            return self.0.write_all(buf).map(|()| buf.len());
        }
        let mut out = Vec::with_capacity(buf.len() + 16);
        for (at, &b) in buf.iter().enumerate() {
            if markup_brace(buf, at) {
                out.push(b'\\');
            }
            out.push(b);
        }
        self.0.write_all(&out).map(|()| buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

/// `text` with its hidden characters (`judged`) but those in `keep` escaped as
/// Rust writes them (`\u{1b}`, `\r`, `\u{202e}`), so what was there stays
/// readable, and the colour markup broken up, cut at [`MAX_MESSAGE`] (a
/// guest's text may be huge, and escapes grow it). Borrowed when there is
/// nothing to change.
pub fn escape<'a>(text: &'a str, keep: &[char]) -> Cow<'a, str> {
    if text.len() <= MAX_MESSAGE && !acted_on(text, keep) {
        return text.into();
    }
    escaped(text, keep, MAX_MESSAGE).into()
}

/// The first `max` bytes of `text` (fewer, to end at a character): for a
/// stranger's text about to be formatted into a message, so that the
/// message costs no more than what it keeps.
pub fn clip(text: &str, max: usize) -> &str {
    &text[..text.floor_char_boundary(max)]
}

/// A stranger's name or version for a message: its first 256 bytes,
/// escaped ([`escape`]).
pub fn named(text: &str) -> Cow<'_, str> {
    escape(clip(text, 256), &[])
}

/// `args` formatted to at most `max` bytes, the cut said: a guest's value
/// `Debug`-formatted whole first would cost several times its size.
pub fn bounded(args: std::fmt::Arguments<'_>, max: usize) -> String {
    struct Capped {
        out: String,
        max: usize,
        cut: bool,
    }
    impl std::fmt::Write for Capped {
        fn write_str(&mut self, s: &str) -> std::fmt::Result {
            let kept = clip(s, self.max - self.out.len());
            self.out.push_str(kept);
            if kept.len() < s.len() {
                self.cut = true;
                return Err(std::fmt::Error);
            }
            Ok(())
        }
    }
    let mut capped = Capped { out: String::new(), max, cut: false };
    let _ = std::fmt::write(&mut capped, args);
    if capped.cut {
        capped.out.push_str(" [cut]");
    }
    capped.out
}

/// [`escape`] of an owned `text`, kept to `max` bytes: the rest is cut,
/// at a character and never inside an escape, and the cut said
/// (` [N more bytes cut]`, counting `text`'s bytes). Escaping as it goes,
/// a huge text costs no more than what is kept. `text` itself when there
/// is nothing to escape or cut.
pub fn escape_within(text: String, keep: &[char], max: usize) -> String {
    if text.len() <= max && !acted_on(&text, keep) {
        return text;
    }
    escaped(&text, keep, max)
}

/// [`escape_within`]'s work, on a borrowed text.
fn escaped(text: &str, keep: &[char], max: usize) -> String {
    let mut out = String::with_capacity(text.len().min(max) + 32);
    for (at, c, hide) in judged(text) {
        let before = out.len();
        if hide && !keep.contains(&c) {
            out.extend(c.escape_default());
        } else {
            if markup_brace(text.as_bytes(), at) {
                out.push('\\');
            }
            out.push(c);
        }
        if out.len() > max {
            out.truncate(before);
            out.push_str(&format!(" [{} more bytes cut]", text.len() - at));
            break;
        }
    }
    out
}

/// A stranger's short text (a registry's error message, an annotation)
/// for one line of a message: its hidden characters (`judged`) blanked, the
/// colour markup broken up, cut after `max` characters.
pub fn printable(text: &str, max: usize) -> String {
    let mut shown = String::new();
    for (at, c, hide) in judged(text).take(max) {
        if hide {
            shown.push(' ');
        } else {
            if markup_brace(text.as_bytes(), at) {
                shown.push('\\');
            }
            shown.push(c);
        }
    }
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
        for c in ['\u{3164}', '\u{115f}', '\u{ffa0}', '\u{34f}', '\u{2065}', '\u{fff0}', '\u{e0080}', '\u{e0fff}'] {
            assert!(hidden(c), "{c:?}");
        }
        for c in ['a', ' ', 'é', '日', '\u{200d}', '\u{200c}', '\u{fe0f}', '👩', '한', '\u{1100}'] {
            assert!(!hidden(c), "{c:?}");
        }
    }

    /// A guest's huge text costs a message of at most [`MAX_MESSAGE`],
    /// however its escapes would grow it, and is never copied whole.
    #[test]
    fn a_huge_text_makes_a_bounded_message() {
        let huge = "\u{1}".repeat(32 << 20);
        let shown = escape(&huge, &[]);
        assert!(shown.len() <= MAX_MESSAGE + 40, "{}", shown.len());
        assert!(
            shown.starts_with("\\u{1}\\u{1}") && shown.ends_with("more bytes cut]"),
            "{}",
            &shown[shown.len() - 40..]
        );
        assert!(matches!(escape("plain", &[]), Cow::Borrowed("plain")));
        let long_plain = "a".repeat(MAX_MESSAGE + 10);
        assert!(escape(&long_plain, &[]).ends_with("[10 more bytes cut]"));
        assert_eq!(clip("日本", 4), "日", "at a character");
        assert_eq!(clip("ab", 10), "ab");
        let debug = bounded(format_args!("{huge:?}"), 100);
        assert_eq!(debug.len(), 100 + " [cut]".len());
        assert!(debug.starts_with("\"\\u{1}"), "{debug}");
        assert_eq!(bounded(format_args!("{:?}", "short"), 100), "\"short\"");
    }

    #[test]
    fn one_selector_or_joiner_after_a_shown_character_is_shown() {
        // An emoji's presentation, an ideograph's variant, a keycap.
        let mongolian = "\u{1821}\u{180b}\u{1822}";
        let persian = "\u{645}\u{6cc}\u{200c}\u{62e}\u{648}\u{627}\u{647}\u{645}";
        for text in
            ["❤\u{fe0f}", "👩\u{200d}❤\u{fe0f}\u{200d}👨", "葛\u{e0100}", "1\u{fe0f}\u{20e3}", mongolian, persian]
        {
            assert!(matches!(escape(text, &[]), Cow::Borrowed(_)), "{text:?}");
            assert!(!unfit_name(text), "{text:?}");
        }
        // Bytes smuggled as a run after one letter, or selectors after
        // nothing shown: all but the first after the letter are escaped.
        let smuggled = "a\u{fe0f}\u{e0141}\u{e0142}";
        assert_eq!(escape(smuggled, &[]), "a\u{fe0f}\\u{e0141}\\u{e0142}");
        assert_eq!(escape("\u{fe0f}x", &[]), "\\u{fe0f}x");
        assert_eq!(escape("\n\u{fe0f}", &['\n']), "\n\\u{fe0f}");
        assert_eq!(escape("\u{3164}\u{fe0f}", &[]), "\\u{3164}\\u{fe0f}");
        // Joiners likewise: one between two characters, not runs, not
        // after nothing, not interleaved with selectors.
        assert_eq!(escape("a\u{200d}\u{200c}b", &[]), "a\u{200d}\\u{200c}b");
        assert_eq!(escape("\u{200d}a", &[]), "\\u{200d}a");
        assert_eq!(escape("a\u{200d}\u{fe0f}\u{200d}", &[]), "a\u{200d}\\u{fe0f}\\u{200d}");
        assert_eq!(printable(smuggled, 10), "a\u{fe0f}  ");
        assert!(unfit_name(smuggled) && unfit_name("\u{3164}") && unfit_name("web\u{3164}"));
    }

    #[test]
    fn a_name_of_spaces_is_blank() {
        for text in ["", " ", "\u{3000}", "\u{2800}\u{2800}", "\u{a0}\u{200d}", " \u{fe0f}", "\t\u{3164}"] {
            assert!(blank(text), "{text:?}");
        }
        for text in ["a", " a ", "\u{2800}.", "❤\u{fe0f}", "日"] {
            assert!(!blank(text), "{text:?}");
        }
        // Spaces alone act on nothing: they are refused as names only for being blank.
        assert!(!unfit_name("\u{3000} \u{2800}"));
    }

    #[test]
    fn escaping_keeps_what_is_asked_and_borrows_when_it_can() {
        assert_eq!(escape("a\x1b[2Jb\r\nc\u{202e}d\te", &['\n', '\t']), "a\\u{1b}[2Jb\\r\nc\\u{202e}d\te");
        assert_eq!(escape("a\nb", &[]), "a\\nb");
        assert!(matches!(escape("plain, é, 👩\u{200d}💻", &[]), Cow::Borrowed(_)));
        assert_eq!(escape_within("x\u{2028}y".into(), &[], 100), "x\\u{2028}y");
    }

    #[test]
    fn escaping_within_a_bound_never_cuts_an_escape() {
        assert_eq!(escape_within("ab\x1bcd".into(), &[], 100), "ab\\u{1b}cd");
        // The escape does not fit whole: it goes, and so does the rest.
        assert_eq!(escape_within("ab\x1bcd".into(), &[], 6), "ab [3 more bytes cut]");
        assert_eq!(escape_within("ab\x1bcd".into(), &[], 8), "ab\\u{1b} [2 more bytes cut]");
        assert_eq!(escape_within("éé".into(), &[], 3), "é [2 more bytes cut]");
        assert_eq!(escape_within("abc".into(), &[], 3), "abc");
        let huge = "\x1b".repeat(1 << 20);
        let kept = escape_within(huge, &[], MAX_MESSAGE);
        assert!(kept.len() <= MAX_MESSAGE + 32 && kept.ends_with(" more bytes cut]"), "{}", kept.len());
        assert!(kept.capacity() < 2 * MAX_MESSAGE, "no copy of the whole: {}", kept.capacity());
    }

    #[test]
    fn pulumis_colour_markup_is_broken_up() {
        let said = "<{%fg 1%}>red<{%reset%}> <{%}> {%x%} <{%unclosed";
        let shown = "<\\{%fg 1%\\}>red<\\{%reset%\\}> <\\{%\\}> {%x%} <\\{%unclosed";
        assert_eq!(escape(said, &[]), shown);
        assert!(!marked(&escape(said, &[])));
        assert_eq!(escape_within(said.into(), &[], 1000), shown);
        assert_eq!(printable(said, 1000), shown);
        assert_eq!(escape_within("ab<{%".into(), &[], 3), "ab< [2 more bytes cut]");
        assert!(matches!(escape("{\"json\": \"100%\"} <b>", &[]), Cow::Borrowed(_)));
        let mut log = Unmarked(Vec::new());
        std::io::Write::write_all(&mut log, format!("WARN é {said}\n").as_bytes()).unwrap();
        assert_eq!(String::from_utf8(log.0).unwrap(), format!("WARN é {shown}\n"));
    }

    #[test]
    fn printable_blanks_and_cuts() {
        assert_eq!(printable("a\x1b[2Jb\u{202e}c\u{200b}d\te\u{9b}f\u{2028}g\u{e0041}h", 100), "a [2Jb c d e f g h");
        assert_eq!(printable("abcdef", 3), "abc...");
        assert_eq!(printable("abc", 3), "abc");
    }
}
