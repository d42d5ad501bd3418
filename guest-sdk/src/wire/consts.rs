//! The numbers of the words encoding (wit/README.md, "Values as words").

// Node kinds (a node's first word) and the codes of its operands,
// as wit/README.md lists them.
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
// Sources of assets and archives; resource reference IDs.
pub const SOURCE_NONE: u32 = 0;
pub const SOURCE_TEXT: u32 = 1;
pub const SOURCE_LONG_TEXT: u32 = 2;
pub const SOURCE_PATH: u32 = 3;
pub const SOURCE_URI: u32 = 4;
pub const SOURCE_ASSETS: u32 = 5;
/// Since 0.3.1: a handle for `context.asset-text`, then the length.
pub const SOURCE_HELD_TEXT: u32 = 6;
pub const ID_NONE: u32 = 0;
pub const ID_KNOWN: u32 = 1;
pub const ID_UNKNOWN: u32 = 2;
/// Words of `extra` per asset or archive, per resource reference,
/// and per output value before its dependencies.
pub const ASSET_WORDS: usize = 6;
pub const REFERENCE_WORDS: usize = 7;
pub const OUTPUT_WORDS: usize = 4;
/// The counts that open a value's words: nodes, items, fields, extra.
pub const HEADER: usize = 4;

/// Strings this long or longer go into `long`: moved, not copied
/// into the shared text (the host uses the same length).
pub const LONG: usize = 1 << 10;
