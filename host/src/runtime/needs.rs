//! What a component declares it needs, read from its `pulumi-wasm-needs`
//! custom section (written by the SDK's `declare_needs!`). A declaration
//! grants nothing; it lets `grants` show the needs and errors name the grant
//! the user still has to add.

use serde::{Deserialize, Serialize};
use wasmparser::{Parser, Payload};

use super::policy::{Grants, HttpGrant};
use crate::text::unfit_name;

const SECTION: &str = "pulumi-wasm-needs";
/// A declaration larger than this is ignored (it is only advice).
const MAX_SECTION: usize = 64 * 1024;

#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(default)]
pub struct Needs {
    pub http: Vec<String>,
    pub env: Vec<String>,
    pub dirs: Vec<String>,
    /// Packages it asks the engine for from `construct` and `call`.
    pub packages: Vec<String>,
    /// Keys this host does not read: misspelled, or from a newer SDK.
    pub unknown: Vec<String>,
}

/// The keys [`Needs`] reads.
const KEYS: [&str; 4] = ["http", "env", "dirs", "packages"];

impl Needs {
    /// Reads the declaration from a component (searching nested modules).
    pub fn read(wasm: &[u8]) -> Result<Needs, String> {
        for payload in Parser::new(0).parse_all(wasm) {
            let payload = payload.map_err(|e| e.to_string())?;
            if let Payload::CustomSection(s) = payload
                && s.name() == SECTION
            {
                if s.data().len() > MAX_SECTION {
                    return Err("the needs declaration is too large".into());
                }
                let needs = Needs::parse(s.data())?;
                // Printed by `grants` and in errors and the host's log: no one
                // needs a control character, or the Pulumi CLI's colour markup.
                let all = [&needs.http, &needs.env, &needs.dirs, &needs.packages, &needs.unknown];
                if all.into_iter().flatten().any(|n| unfit_name(n)) {
                    return Err("the needs declaration holds control or invisible characters or colour markup".into());
                }
                return Ok(needs);
            }
        }
        Ok(Needs::default())
    }

    /// A section's declarations: one JSON object, or several one after the
    /// other (the linker joins the sections of every crate that declares
    /// needs), merged.
    fn parse(data: &[u8]) -> Result<Needs, String> {
        type Object = serde_json::Map<String, serde_json::Value>;
        let bad = |e: serde_json::Error| format!("bad needs declaration: {e}");
        let mut needs = Needs::default();
        for object in serde_json::Deserializer::from_slice(data).into_iter::<Object>() {
            let mut object = object.map_err(bad)?;
            needs.unknown.extend(object.keys().filter(|k| !KEYS.contains(&k.as_str())).cloned());
            object.retain(|k, _| KEYS.contains(&k.as_str()));
            let one = Needs::deserialize(serde_json::Value::Object(object)).map_err(bad)?;
            needs.http.extend(one.http);
            needs.env.extend(one.env);
            needs.dirs.extend(one.dirs);
            needs.packages.extend(one.packages);
        }
        for list in [&mut needs.http, &mut needs.env, &mut needs.dirs, &mut needs.packages, &mut needs.unknown] {
            let mut seen = std::collections::HashSet::new();
            list.retain(|n| seen.insert(n.clone()));
        }
        Ok(needs)
    }

    /// Declared needs the grants do not cover, each as the grant to add.
    pub fn missing(&self, grants: &Grants) -> Vec<String> {
        let http = grants.http_grants();
        let mut out = Vec::new();
        for url in &self.http {
            let covered = HttpGrant::parse(url).is_ok_and(|need| {
                let scheme = need.scheme.as_deref().unwrap_or("https");
                let port = match need.port {
                    Some(p) if p != 0 => p,
                    _ if scheme == "https" => 443,
                    _ => 80,
                };
                http.iter().any(|g| g.allows(scheme, &need.host, port) || *g == need)
            });
            if !covered {
                out.push(format!("http \"{url}\""));
            }
        }
        out.extend(self.env.iter().filter(|e| !grants.env.contains(e)).map(|e| format!("env \"{e}\"")));
        out.extend(
            self.dirs.iter().filter(|d| !grants.dirs.iter().any(|g| &g.guest == *d)).map(|d| format!("dir \"{d}\"")),
        );
        // As the monitor's guard has it: `*` leaves out the engine's own package.
        let granted = |p: &String| grants.packages.iter().any(|g| g == p || (g == "*" && p != "pulumi"));
        out.extend(self.packages.iter().filter(|p| !granted(p)).map(|p| format!("package \"{p}\"")));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A core module holding only a needs section with `json`.
    fn module(json: &str) -> Vec<u8> {
        let mut body = vec![SECTION.len() as u8];
        body.extend_from_slice(SECTION.as_bytes());
        body.extend_from_slice(json.as_bytes());
        assert!(body.len() < 128, "one LEB128 byte of size");
        [&b"\0asm\x01\0\0\0\0"[..], &[body.len() as u8], &body].concat()
    }

    #[test]
    fn declared_packages_are_missing_until_granted() {
        let needs = Needs::read(&module(r#"{"packages": ["random", "aws"]}"#)).unwrap();
        let grants = |p: &[&str]| Grants { packages: p.iter().map(|s| s.to_string()).collect(), ..Grants::default() };
        assert_eq!(needs.missing(&grants(&["random"])), ["package \"aws\""]);
        assert!(needs.missing(&grants(&["*"])).is_empty());
        let engine_s = Needs::read(&module(r#"{"packages": ["pulumi"]}"#)).unwrap();
        assert_eq!(engine_s.missing(&grants(&["*"])), ["package \"pulumi\""], "granted only by name");
    }

    #[test]
    fn keys_the_host_does_not_read_are_named() {
        let needs = Needs::read(&module(r#"{"htpp": ["https://x"], "env": ["A"]}"#)).unwrap();
        assert_eq!((needs.unknown, needs.env), (vec!["htpp".to_owned()], vec!["A".to_owned()]));
        assert!(Needs::read(&module(r#"{"env": "A"}"#)).unwrap_err().contains("bad needs declaration"));
        let named_unknown = Needs::read(&module(r#"{"unknown": 1}"#)).unwrap();
        assert_eq!(named_unknown.unknown, ["unknown"]);
        // Two crates' declarations, joined by the linker.
        let two = Needs::read(&module(r#"{"env":["A"],"x":[]}{"env":["A","B"],"http":["h"]}"#)).unwrap();
        let (a, b, h, x) = ("A".to_owned(), "B".to_owned(), "h".to_owned(), "x".to_owned());
        assert_eq!((two.env, two.http, two.unknown), (vec![a, b], vec![h], vec![x]));
        let err = Needs::read(&module(r#"{"\u001b[2J": []}"#)).unwrap_err();
        assert!(err.contains("control or invisible characters"), "{err}");
    }

    #[test]
    fn a_declaration_is_read_unless_it_holds_what_a_terminal_acts_on() {
        let needs = Needs::read(&module(r#"{"env": ["KV_TOKEN"], "dirs": ["/data"]}"#)).unwrap();
        assert_eq!((needs.env, needs.dirs), (vec!["KV_TOKEN".to_owned()], vec!["/data".to_owned()]));
        for bad in [
            r#"{"env": ["A\u001b]52;c;eA==\u0007"]}"#,
            r#"{"http": ["https://x\u202e.example"]}"#,
            r#"{"dirs": ["/<{%fg 1%}>"]}"#,
        ] {
            let err = Needs::read(&module(bad)).unwrap_err();
            assert!(err.contains("control or invisible characters"), "{bad}: {err}");
        }
    }
}
