//! A packed plugin's files: the executable `pulumi-resource-<name>` (with
//! `.exe` on Windows, which the engine looks for there), and beside it, under
//! the same name without that suffix on every platform, the component
//! (`pulumi-resource-<name>.wasm`) and its policy (`.policy.toml`).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

const PREFIX: &str = "pulumi-resource-";

/// The plugin name an executable's file name gives, when it is a plugin's.
pub fn name_of(exe: &Path) -> Option<String> {
    let file = exe.file_name()?.to_str()?;
    strip_suffix(file, std::env::consts::EXE_SUFFIX).strip_prefix(PREFIX).map(str::to_owned)
}

/// Where the plugin whose executable is `exe` keeps its `suffix` file
/// (`wasm`, `policy.toml`).
pub fn beside(exe: &Path, suffix: &str) -> PathBuf {
    // A name that is not UTF-8 (no plugin's is) keeps all of itself.
    let base = match exe.file_name().and_then(|f| f.to_str()) {
        Some(file) => exe.with_file_name(strip_suffix(file, std::env::consts::EXE_SUFFIX)),
        None => exe.to_owned(),
    };
    let mut p: OsString = base.into_os_string();
    p.push(".");
    p.push(suffix);
    PathBuf::from(p)
}

/// The executable of the plugin `name` in the folder `out`.
pub fn executable(out: &Path, name: &str) -> PathBuf {
    out.join(format!("{PREFIX}{name}{}", std::env::consts::EXE_SUFFIX))
}

/// `file` without `suffix` (case-insensitive: Windows file names are).
fn strip_suffix<'a>(file: &'a str, suffix: &str) -> &'a str {
    let cut = file.len().wrapping_sub(suffix.len());
    match file.get(cut..) {
        Some(tail) if !suffix.is_empty() && tail.eq_ignore_ascii_case(suffix) => &file[..cut],
        _ => file,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_platforms_executable_suffix_is_not_part_of_the_name() {
        assert_eq!(strip_suffix("pulumi-resource-kv.exe", ".exe"), "pulumi-resource-kv");
        assert_eq!(strip_suffix("PULUMI-RESOURCE-KV.EXE", ".exe"), "PULUMI-RESOURCE-KV");
        assert_eq!(strip_suffix("pulumi-resource-kv", ".exe"), "pulumi-resource-kv");
        assert_eq!(strip_suffix("x", ".exe"), "x");
        assert_eq!(strip_suffix("pulumi-resource-kv.exe", ""), "pulumi-resource-kv.exe");
    }

    #[test]
    fn names_and_files_beside_round_trip_through_the_executable() {
        let out = Path::new("plugins").join("kv");
        let exe = executable(&out, "kv");
        assert_eq!(name_of(&exe).as_deref(), Some("kv"));
        assert_eq!(beside(&exe, "wasm"), out.join("pulumi-resource-kv.wasm"));
        assert_eq!(beside(&exe, "policy.toml"), out.join("pulumi-resource-kv.policy.toml"));
        assert_eq!(name_of(Path::new("pulumi-wasm")), None);
    }
}
