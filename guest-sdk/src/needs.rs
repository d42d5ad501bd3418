//! Declaring what a provider needs from the sandbox. A declaration grants
//! nothing: it lets tooling show the needs and lets a denial name the grant
//! the user has to add.

/// The custom section the host reads declarations from.
pub const SECTION: &str = "pulumi-wasm-needs";

/// Declares the sandbox grants this provider needs, as a custom section of
/// the component (`packages`: other packages a component provider asks the
/// engine for from `construct` and `call`):
///
/// ```ignore
/// pulumi_wasm_sdk::declare_needs!(r#"{"http": ["https://api.example.com"], "env": ["API_TOKEN"], "dirs": ["/data"], "packages": ["random"]}"#);
/// ```
#[macro_export]
macro_rules! declare_needs {
    ($json:literal) => {
        #[cfg(target_arch = "wasm32")]
        #[doc(hidden)]
        #[unsafe(link_section = "pulumi-wasm-needs")]
        #[used]
        static __PULUMI_WASM_NEEDS: [u8; $json.len()] = {
            let bytes = $json.as_bytes();
            let mut out = [0u8; $json.len()];
            let mut i = 0;
            while i < bytes.len() {
                out[i] = bytes[i];
                i += 1;
            }
            out
        };
    };
}
