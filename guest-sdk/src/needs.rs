//! Declaring what a provider needs from the sandbox. A declaration grants
//! nothing: it lets tooling show the needs and lets a denial name the grant
//! the user has to add.

/// The custom section the host reads declarations from.
pub const SECTION: &str = "pulumi-wasm-needs";

/// Declares the sandbox grants this provider needs, as a custom section of
/// the component. The keys are `http` (URLs or hosts), `env` (variables),
/// `dirs` (guest paths) and `packages` (other packages a component
/// provider asks the engine for from `construct` and `call`); each takes a
/// list of strings:
///
/// ```
/// pulumi_wasm_sdk::declare_needs! {
///     http: ["https://api.example.com"],
///     env: ["API_TOKEN"],
///     dirs: ["/data"],
///     packages: ["random"],
/// }
/// ```
///
/// A misspelled key does not compile, nor does a key given twice or a
/// control character:
///
/// ```compile_fail,E0599
/// pulumi_wasm_sdk::declare_needs! { htpp: ["https://api.example.com"] }
/// ```
///
/// ```compile_fail,E0080
/// pulumi_wasm_sdk::declare_needs! { env: ["A"], env: ["B"] }
/// ```
///
/// ```compile_fail,E0080
/// pulumi_wasm_sdk::declare_needs! { env: ["A\nB"] }
/// ```
///
/// Several declarations may be given, in one module or in several crates
/// (a provider and a client library it uses): the host reads them all.
///
/// The older form, the JSON text itself, is still taken as it is; its keys
/// are checked only by the host, which warns about those it does not read:
///
/// ```
/// pulumi_wasm_sdk::declare_needs!(r#"{"env": ["API_TOKEN"]}"#);
/// ```
#[macro_export]
macro_rules! declare_needs {
    // Each declaration is an anonymous item of its own, so a module may
    // hold several (the host reads them all, as it does several crates').
    ($json:literal) => {
        const _: () = {
            #[cfg(target_arch = "wasm32")]
            #[unsafe(link_section = "pulumi-wasm-needs")]
            #[used]
            static NEEDS: [u8; $json.len()] = $crate::needs::__bytes::<{ $json.len() }>($json);
        };
    };
    ($($key:ident : [$($value:expr),* $(,)?]),+ $(,)?) => {
        const _: () = {
            const LIST: &[(&str, &[&str])] = $crate::__needs_list!($($key: [$($value),*]),+);
            // Built on every target, so a key given twice fails every build.
            const _: usize = $crate::needs::__json_len(LIST);
            #[cfg(target_arch = "wasm32")]
            #[unsafe(link_section = "pulumi-wasm-needs")]
            #[used]
            static NEEDS: [u8; $crate::needs::__json_len(LIST)] = $crate::needs::__json(LIST);
        };
    };
}

/// The keys and values of a [`declare_needs!`], as its writer takes them.
#[macro_export]
#[doc(hidden)]
macro_rules! __needs_list {
    ($($key:ident : [$($value:expr),*]),+) => {
        // A key the host reads names a variant; any other does not compile.
        &[$(($crate::needs::Key::$key.name(), &[$($value),*])),+]
    };
}

/// The keys of a declaration, named as written in [`declare_needs!`].
#[allow(non_camel_case_types)]
#[doc(hidden)]
pub enum Key {
    http,
    env,
    dirs,
    packages,
}

impl Key {
    /// The key as the host reads it (`r#env` is `env`).
    pub const fn name(self) -> &'static str {
        match self {
            Key::http => "http",
            Key::env => "env",
            Key::dirs => "dirs",
            Key::packages => "packages",
        }
    }
}

// The section is built while compiling (a `static`'s bytes), which no JSON
// crate does in a `const fn`; hence this small writer.

/// `text` as a fixed array (the JSON-text form).
#[doc(hidden)]
pub const fn __bytes<const N: usize>(text: &str) -> [u8; N] {
    let (bytes, mut out, mut i) = (text.as_bytes(), [0u8; N], 0);
    while i < N {
        out[i] = bytes[i];
        i += 1;
    }
    out
}

/// The length of [`__json`]'s text for `list`; a key given twice fails the build.
#[doc(hidden)]
pub const fn __json_len(list: &[(&str, &[&str])]) -> usize {
    write(list, &mut [])
}

/// `list` as a JSON object of string lists.
#[doc(hidden)]
pub const fn __json<const N: usize>(list: &[(&str, &[&str])]) -> [u8; N] {
    let mut out = [0u8; N];
    write(list, &mut out);
    out
}

/// Writes `list` as JSON into `out` (nothing when it is empty, to measure);
/// returns the length.
const fn write(list: &[(&str, &[&str])], out: &mut [u8]) -> usize {
    let mut at = put(out, 0, b'{');
    let mut k = 0;
    while k < list.len() {
        let (key, values) = list[k];
        let mut earlier = 0;
        while earlier < k {
            assert!(!same(list[earlier].0, key), "declare_needs!: a key is given twice");
            earlier += 1;
        }
        if k > 0 {
            at = put(out, at, b',');
        }
        at = string(out, at, key);
        at = put(out, at, b':');
        at = put(out, at, b'[');
        let mut v = 0;
        while v < values.len() {
            if v > 0 {
                at = put(out, at, b',');
            }
            at = string(out, at, values[v]);
            v += 1;
        }
        at = put(out, at, b']');
        k += 1;
    }
    put(out, at, b'}')
}

const fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

const fn put(out: &mut [u8], at: usize, byte: u8) -> usize {
    if !out.is_empty() {
        out[at] = byte;
    }
    at + 1
}

/// A JSON string: quotes and backslashes escaped. A control character
/// fails the build: the host refuses a declaration holding one, as it
/// would reach a terminal in `grants` and errors.
const fn string(out: &mut [u8], mut at: usize, text: &str) -> usize {
    let bytes = text.as_bytes();
    at = put(out, at, b'"');
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        assert!(b >= 0x20 && b != 0x7f, "declare_needs!: a control character in a value");
        if b == b'"' || b == b'\\' {
            at = put(out, at, b'\\');
        }
        at = put(out, at, b);
        i += 1;
    }
    put(out, at, b'"')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_declaration_is_written_as_json_the_host_reads() {
        const LIST: &[(&str, &[&str])] = &[("http", &["https://a.example", "q\"\\ü"]), ("env", &[]), ("dirs", &["/d"])];
        const N: usize = __json_len(LIST);
        let text = __json::<N>(LIST);
        let parsed: serde_json::Value = serde_json::from_slice(&text).unwrap();
        let expected = serde_json::json!({"http": ["https://a.example", "q\"\\ü"], "env": [], "dirs": ["/d"]});
        assert_eq!(parsed, expected);
        // What the macro builds, on every target (the section itself only on wasm32).
        const MACRO: &[(&str, &[&str])] =
            crate::__needs_list!(http: ["https://api.example.com"], r#packages: ["random"]);
        let json: serde_json::Value = serde_json::from_slice(&__json::<{ __json_len(MACRO) }>(MACRO)).unwrap();
        assert_eq!(json, serde_json::json!({"http": ["https://api.example.com"], "packages": ["random"]}));
        // Several declarations in one module (or function) are several sections.
        crate::declare_needs! { http: ["https://api.example.com"] }
        crate::declare_needs! { r#env: ["TOKEN"] }
        crate::declare_needs!(r#"{"dirs": ["/d"]}"#);
    }

    #[test]
    #[should_panic(expected = "a key is given twice")]
    fn a_key_given_twice_is_refused() {
        __json_len(&[("env", &["A"]), ("env", &["B"])]);
    }

    #[test]
    #[should_panic(expected = "a control character")]
    fn a_control_character_is_refused() {
        __json_len(&[("env", &["A\u{1b}[2J"])]);
    }
}
