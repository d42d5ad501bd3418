//! Default directories: the provider store's root and the compiled-artifact
//! cache inside it.
//!
//! A leaf module (it uses nothing else of this crate) because `store` and
//! `runtime` each need these defaults and neither may depend on the other:
//! the store's layout and the runtime's default cache both come from here,
//! so a library user gets the same cache as the CLI, beside the store, where
//! removing a component removes its artifacts.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// `$PULUMI_WASM_STORE`, else `$XDG_DATA_HOME/pulumi-wasm/store`, else
/// `~/.local/share/pulumi-wasm/store`; on Windows, where shells set no
/// `HOME`, `%LOCALAPPDATA%\pulumi-wasm\store` comes before the last
/// (unless a store is already there, as a shell with `HOME` made one).
pub(crate) fn store_dir() -> Option<PathBuf> {
    store_dir_from(|name| std::env::var_os(name))
}

/// `$PULUMI_WASM_CACHE_DIR`, else `artifacts/` in the store ([`store_dir`]).
pub(crate) fn cache_dir() -> Option<PathBuf> {
    cache_dir_from(|name| std::env::var_os(name))
}

/// Where a store rooted at `root` keeps its components' compiled artifacts.
pub(crate) fn artifact_dir(root: &Path) -> PathBuf {
    root.join("artifacts")
}

fn store_dir_from(var: impl Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
    store_dir_on(var, cfg!(windows).then_some(|p: &Path| p.is_dir()))
}

/// `windows`: on Windows, with how to tell whether a store exists.
fn store_dir_on(var: impl Fn(&str) -> Option<OsString>, windows: Option<impl Fn(&Path) -> bool>) -> Option<PathBuf> {
    let var = |name| var(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(d) = var("PULUMI_WASM_STORE") {
        return Some(d);
    }
    let store = |base: PathBuf| base.join("pulumi-wasm").join("store");
    if let Some(d) = var("XDG_DATA_HOME") {
        return Some(store(d));
    }
    let home = var("HOME").map(|h| store(h.join(".local").join("share")));
    match windows {
        Some(exists) if !home.as_deref().is_some_and(&exists) => var("LOCALAPPDATA").map(store).or(home),
        _ => home,
    }
}

fn cache_dir_from(var: impl Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
    // Empty is unset, as for the store: an empty path would be the working
    // directory (a project's), whose files would then load as native code.
    if let Some(d) = var("PULUMI_WASM_CACHE_DIR").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(d));
    }
    store_dir_from(var).map(|root| artifact_dir(&root))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<OsString> {
        let vars: Vec<(String, String)> = vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        move |name| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.into())
    }

    #[test]
    fn store_dir_honours_the_environment() {
        let all = [("PULUMI_WASM_STORE", "/s"), ("XDG_DATA_HOME", "/x"), ("HOME", "/h")];
        assert_eq!(store_dir_from(env(&all)), Some("/s".into()));
        assert_eq!(store_dir_from(env(&all[1..])), Some("/x/pulumi-wasm/store".into()));
        assert_eq!(store_dir_from(env(&all[2..])), Some("/h/.local/share/pulumi-wasm/store".into()));
        assert_eq!(
            store_dir_from(env(&[("PULUMI_WASM_STORE", ""), ("XDG_DATA_HOME", ""), ("HOME", "/h")])),
            store_dir_from(env(&all[2..])),
            "empty is unset"
        );
        assert_eq!(store_dir_from(env(&[])), None);
    }

    #[test]
    fn on_windows_the_store_is_in_local_app_data() {
        let windows = [("LOCALAPPDATA", r"C:\Users\a\AppData\Local")];
        let expected = PathBuf::from(r"C:\Users\a\AppData\Local").join("pulumi-wasm").join("store");
        let none_yet = Some(|_: &Path| false);
        assert_eq!(store_dir_on(env(&windows), none_yet), Some(expected.clone()));
        // Before a HOME that Git Bash sets, so every shell finds the same store ...
        let both = [windows[0], ("HOME", "/h")];
        assert_eq!(store_dir_on(env(&both), none_yet), Some(expected));
        // ... unless that shell made a store there already, which is kept.
        let made = Some(|p: &Path| p == Path::new("/h/.local/share/pulumi-wasm/store"));
        assert_eq!(store_dir_on(env(&both), made), Some("/h/.local/share/pulumi-wasm/store".into()));
        let elsewhere: Option<fn(&Path) -> bool> = None;
        assert_eq!(store_dir_on(env(&both), elsewhere), Some("/h/.local/share/pulumi-wasm/store".into()));
        assert_eq!(store_dir_on(env(&windows), elsewhere), None, "elsewhere it means nothing");
    }

    #[test]
    fn the_cache_defaults_to_artifacts_in_the_store() {
        let home = [("HOME", "/h"), ("XDG_CACHE_HOME", "/c")];
        assert_eq!(cache_dir_from(env(&home)), Some("/h/.local/share/pulumi-wasm/store/artifacts".into()));
        assert_eq!(cache_dir_from(env(&[("XDG_DATA_HOME", "/x")])), Some("/x/pulumi-wasm/store/artifacts".into()));
        let store = [("PULUMI_WASM_STORE", "/s"), ("HOME", "/h")];
        assert_eq!(cache_dir_from(env(&store)), Some("/s/artifacts".into()));
        assert_eq!(cache_dir_from(env(&store)), store_dir_from(env(&store)).map(|s| artifact_dir(&s)));
        // PULUMI_WASM_CACHE_DIR overrides all of them.
        let cache = [("PULUMI_WASM_CACHE_DIR", "/k"), ("PULUMI_WASM_STORE", "/s"), ("HOME", "/h")];
        assert_eq!(cache_dir_from(env(&cache)), Some("/k".into()));
        let empty = [("PULUMI_WASM_CACHE_DIR", ""), ("PULUMI_WASM_STORE", "/s")];
        assert_eq!(cache_dir_from(env(&empty)), Some("/s/artifacts".into()), "empty is unset");
        assert_eq!(cache_dir_from(env(&[])), None);
    }
}
