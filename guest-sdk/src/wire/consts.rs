//! The numbers of the words encoding (wit/README.md, "Values as words"),
//! from `pulumi-wasm-words`, which the host reads too: node kinds by their
//! own names, sources and reference IDs in their modules.

pub use pulumi_wasm_words::kind::*;
pub use pulumi_wasm_words::{ASSET_WORDS, HEADER, LONG, OUTPUT_WORDS, REFERENCE_WORDS, id, source};
