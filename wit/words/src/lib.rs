// The crate's documentation is its README (with an example, run as a doctest).
#![doc = include_str!("../README.md")]
#![no_std]

/// Node kinds: a node's first word.
pub mod kind {
    pub const NULL: u32 = 0;
    pub const BOOL: u32 = 1;
    pub const NUMBER: u32 = 2;
    pub const STRING: u32 = 3;
    pub const LONG_STRING: u32 = 4;
    pub const BYTES: u32 = 5;
    pub const ARRAY: u32 = 6;
    pub const OBJECT: u32 = 7;
    pub const SECRET: u32 = 8;
    pub const UNKNOWN: u32 = 9;
    pub const ASSET: u32 = 10;
    pub const ARCHIVE: u32 = 11;
    pub const REFERENCE: u32 = 12;
    pub const OUTPUT: u32 = 13;
}

/// The sources of an asset's and an archive's operands (their fourth word).
pub mod source {
    pub const NONE: u32 = 0;
    pub const TEXT: u32 = 1;
    pub const LONG_TEXT: u32 = 2;
    pub const PATH: u32 = 3;
    pub const URI: u32 = 4;
    pub const ASSETS: u32 = 5;
    /// A handle for `context.asset-text`, then the text's length (since 0.3.1).
    pub const HELD_TEXT: u32 = 6;
}

/// A resource reference's ID (its operands' third word).
pub mod id {
    pub const NONE: u32 = 0;
    pub const KNOWN: u32 = 1;
    pub const UNKNOWN: u32 = 2;
}

/// Words of `extra` per asset and per archive: hash present, hash span,
/// source, two source operands.
pub const ASSET_WORDS: usize = 6;
/// Words of `extra` per resource reference: URN span, ID kind, ID span,
/// package version span.
pub const REFERENCE_WORDS: usize = 7;
/// Words of `extra` per output value before its dependencies: value
/// present, value node, secret, dependency count; then a span per dependency.
pub const OUTPUT_WORDS: usize = 4;
/// The counts that open `words`: nodes, items, fields, words of extra.
pub const HEADER: usize = 4;

/// Strings this long or longer get their own entry in `long`, moved rather
/// than copied into the value's shared `text`.
pub const LONG: usize = 1 << 10;
