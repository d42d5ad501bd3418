//! Writing and reading spans of the latest encoding's shared buffers, for
//! everything in the host that builds or reads a value: `convert::value`
//! (from the wire, and validation) and `flat` (for 0.1.0 components).

use super::LONG_STRING;
use super::tree::{Span, Str};

/// Where a span that cannot be expressed points: past any buffer, so that
/// the value's validation refuses it.
const UNREACHABLE: Span = Span { start: u32::MAX, len: 0 };

/// The span of positions `start..end`.
pub fn span(start: usize, end: usize) -> Span {
    match (u32::try_from(start), u32::try_from(end - start)) {
        (Ok(start), Ok(len)) => Span { start, len },
        _ => UNREACHABLE,
    }
}

/// The positions a span covers, computed without overflow.
pub fn range(s: Span) -> std::ops::Range<usize> {
    let start = s.start as usize;
    start..start.saturating_add(s.len as usize)
}

/// Appends `s` to a value's `text`; its span.
pub fn push_text(text: &mut String, s: &str) -> Span {
    let start = text.len();
    text.push_str(s);
    span(start, text.len())
}

/// A string that may be long: a long one moves whole, the rest go into `text`.
pub fn push_str(text: &mut String, s: String) -> Str {
    if s.len() >= LONG_STRING { Str::Long(s) } else { Str::Short(push_text(text, &s)) }
}
