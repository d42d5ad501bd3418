//! `name@requirement`: how a user names an installed component.

use std::fmt;

use semver::{Version, VersionReq};

use super::StoreError;

/// A package name and a semver requirement: `random`, `random@^0.1`,
/// `random@=0.1.0`, `random@~1.2`. A bare name means any release (`*`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PackageSpec {
    pub name: String,
    pub req: VersionReq,
}

impl PackageSpec {
    pub fn parse(spec: &str) -> Result<PackageSpec, StoreError> {
        let (name, req) = match spec.split_once('@') {
            Some((name, req)) => {
                let req = VersionReq::parse(req.trim())
                    .map_err(|e| StoreError::BadSpec(format!("'{spec}': version requirement '{req}': {e}")))?;
                (name, req)
            }
            None => (spec, VersionReq::STAR),
        };
        validate_name(name).map_err(|_| StoreError::BadSpec(format!("'{spec}': package name '{name}'")))?;
        Ok(PackageSpec { name: name.to_owned(), req })
    }
}

impl fmt::Display for PackageSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}@{}", self.name, self.req)
    }
}

/// `name@version`: one exact installed version (what `remove` takes).
pub fn parse_exact(spec: &str) -> Result<(String, Version), StoreError> {
    let bad = |why: String| StoreError::BadSpec(format!("'{spec}': {why} (expected NAME@VERSION, e.g. random@0.1.0)"));
    let (name, version) = spec.split_once('@').ok_or_else(|| bad("no version".into()))?;
    validate_name(name).map_err(|_| bad(format!("package name '{name}'")))?;
    let version = version.trim().trim_start_matches('=');
    let version = Version::parse(version).map_err(|e| bad(format!("version '{version}': {e}")))?;
    Ok((name.to_owned(), version))
}

/// The package names the host accepts (see `runtime::engine`): lower-case
/// ASCII letters, digits, `-` and `_`, starting with a letter, at most 64
/// characters. This also keeps every name a safe single path component.
pub fn validate_name(name: &str) -> Result<(), StoreError> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
        && name.starts_with(|c: char| c.is_ascii_lowercase());
    if ok { Ok(()) } else { Err(StoreError::BadSpec(format!("package name '{name}'"))) }
}

/// A name a new package may take: also none of Windows' device names
/// (`con`, `nul`, `com1`, ...), which are no file's name there, so that a
/// store stays usable wherever it is copied. (Checked on install only, so
/// a store that holds one still lists it and can remove it.)
pub fn validate_new_name(name: &str) -> Result<(), StoreError> {
    validate_name(name)?;
    let device = matches!(name, "con" | "prn" | "aux" | "nul")
        || (name.len() == 4
            && (name.starts_with("com") || name.starts_with("lpt"))
            && name.as_bytes()[3].is_ascii_digit());
    if device {
        return Err(StoreError::BadSpec(format!("package name '{name}' (a device name on Windows)")));
    }
    Ok(())
}
