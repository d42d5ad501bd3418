//! Typed resources: declare inputs, state, function arguments and provider
//! configuration as Rust types; the schema, Check, Diff, secrets and
//! unknowns follow (like pulumi-go-provider's `infer`).
//!
//! ```
//! use pulumi_wasm_sdk::typed::*;
//!
//! /// A greeting.
//! #[derive(PulumiType)]
//! #[pulumi(replace_on_changes)]          // every input replaces the resource
//! pub struct GreetingArgs {
//!     /// Who to greet.
//!     #[pulumi(default = "world")]
//!     pub name: String,
//!     /// Exclamation marks, 0 to 5.
//!     #[pulumi(min = 0, max = 5)]
//!     pub excitement: Option<u8>,
//! }
//!
//! /// A greeting, made once.
//! #[derive(PulumiType)]
//! pub struct GreetingState {
//!     #[pulumi(flatten)]
//!     pub args: GreetingArgs,
//!     /// The text.
//!     #[pulumi(secret)]
//!     pub text: String,
//! }
//!
//! pub struct Greeting;
//! impl Resource for Greeting {
//!     const TOKEN: &'static str = "greeter:index:Greeting";
//!     type Inputs = GreetingArgs;
//!     type State = GreetingState;
//!     fn create(&self, _ctx: &Context, args: GreetingArgs) -> Result<(String, GreetingState)> {
//!         let text = format!("hello, {}{}", args.name, "!".repeat(args.excitement.unwrap_or(0).into()));
//!         Ok((args.name.clone(), GreetingState { args, text }))
//!     }
//! }
//!
//! pub struct Greeter;
//! impl Package for Greeter {
//!     fn build() -> Builder {
//!         Builder::new("greeter", env!("CARGO_PKG_VERSION")).resource(Greeting)
//!     }
//! }
//! pulumi_wasm_sdk::export_provider!(Typed<Greeter>);
//! # let schema: serde_json::Value = serde_json::from_str(&Greeter::build().schema()).unwrap();
//! # assert_eq!(schema["resources"]["greeter:index:Greeting"]["properties"]["text"]["secret"], true);
//! ```
//!
//! `#[derive(PulumiType)]` on a struct with named fields makes an
//! [`Object`]; on an enum of unit variants, a string enum. Field types:
//! `bool`, `String`, integers (range-checked), `f32`/`f64`, `Option<T>`
//! (optional), `Vec<T>`, `BTreeMap<String, T>`, `Box<T>`, [`Asset`],
//! [`Archive`], [`Value`] (any), and other derived types (named schema types).
//! Descriptions come from doc comments. Attributes, `#[pulumi(...)]`:
//!
//! - on fields: `name = "x"` (default: the field in camelCase), `secret`,
//!   `replace_on_changes`, `default = <expr>` (an expression of the field's
//!   type, checked when compiling: `2.0` for an `f64`, `"x"` for a `String`,
//!   the inner type's for an `Option`; see [`Defaulted`]; shown in the
//!   schema when a boolean, number or string) or `default`
//!   (`Default::default()`), `min = <expr>`, `max = <expr>` (inclusive
//!   range, number fields only), `flatten` (include another object's
//!   properties, e.g. the inputs in the state), `autoname` (the one string
//!   input that names a resource, filled before Check when the program
//!   gives none; see [`autoname`]);
//! - on the type: `token = "pkg:module:Name"` (default
//!   `<package>:index:<TypeName>`), `replace_on_changes` (every field; on
//!   the provider configuration, a change to such a setting replaces the
//!   provider and every resource it manages);
//! - on enum variants: `name = "value"` (default: the variant's name).
//!
//! A default is of the field's type, so a whole number for a float field
//! does not compile:
//!
//! ```compile_fail,E0308
//! # use pulumi_wasm_sdk::typed::*;
//! #[derive(PulumiType)]
//! pub struct Scale {
//!     #[pulumi(default = 2)]
//!     pub factor: f64,
//! }
//! ```
//! ```
//! # use pulumi_wasm_sdk::typed::*;
//! #[derive(PulumiType)]
//! pub struct Scale {
//!     #[pulumi(default = 2.0)]
//!     pub factor: f64,
//! }
//! ```
//!
//! Failures name the property path (`length`, `keepers.k`, `items[0].name`)
//! and are all collected. Unknowns: Check lets unknown values pass and runs
//! [`Resource::validate`] only once every input is known; `create`, `update`
//! and `Function::invoke` only ever get fully known values. A preview goes to
//! [`Resource::preview`] with [`Partial`] inputs (known ones typed, unknown
//! paths listed, the raw map); by default it shows the inputs and every other
//! state property as unknown. Secrets: fields marked `secret` are always
//! secret, and any value that was secret in the inputs is secret again at the
//! same path of the state (a secret argument makes a function's whole result secret).

mod adapt;
pub(crate) mod decode;
mod input;
mod provider;
mod resource;
mod schema;
mod types;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_provider;

pub use decode::{Decoded, Decoder, Seg, decode, decode_state, describe, render};
pub use provider::{Builder, Package, Typed};
pub use pulumi_wasm_sdk_derive::PulumiType;
pub use resource::{Context, Function, Partial, Resource, autoname, check_inputs, diff_inputs, init_failed};
pub use schema::{Json, Types};
pub use types::{
    Bounded, Defaulted, Object, Property, PulumiType, normalize, normalize_object, object_replace_paths, put,
    replace_paths_from_top, replace_paths_of,
};

// What typed providers use most, so `use pulumi_wasm_sdk::typed::*` is enough.
#[doc(hidden)]
pub use crate::fields::Fields;
pub use crate::provider::{CheckFailure, CheckRequest, CheckResponse, DiffRequest, DiffResponse, Error, Result};
pub use crate::value::{Archive, Asset, PropertyMap, UnknownKind, Value};
pub use crate::{Differ, export_provider};

impl CheckFailure {
    /// A failure of the property at `path` (`length`, `tags.env`).
    pub fn new(path: impl Into<String>, reason: impl Into<String>) -> Self {
        CheckFailure { property: path.into(), reason: reason.into() }
    }
}
