//! The user's Pulumi project, so that a value pins what lies inside it
//! relative to it. The value travels in a generated SDK to teammates and
//! CI, whose checkouts are elsewhere: `/home/alice/infra/data` means
//! nothing on Bob's machine, `./data` means his checkout's `data`.
//!
//! The project is the nearest directory, from the working directory up,
//! holding `Pulumi.yaml`: `pulumi package add` runs inside the project, and
//! the engine starts plugins in it. A pinned relative path is resolved
//! there, and may only go down from it (no `..`), so a value cannot name
//! a directory outside the project as if it were inside.

use std::path::{Component, Path, PathBuf};

use super::GenericError;
use crate::runtime::Grants;

/// The project the working directory is in, if any.
pub fn root() -> Option<PathBuf> {
    let cwd = std::env::current_dir().ok()?;
    cwd.ancestors().find(|d| ["Pulumi.yaml", "Pulumi.yml"].iter().any(|f| d.join(f).is_file())).map(Path::to_path_buf)
}

/// `path` as pinned: `./a/b` when it lies inside `root` (with `/` between
/// its parts, whatever the OS), else as it is.
pub fn pin(path: &Path, root: Option<&Path>) -> PathBuf {
    let Some(inside) = root.and_then(|r| path.strip_prefix(r).ok()) else {
        return path.to_path_buf();
    };
    let parts: Option<Vec<&str>> =
        inside.components().map(|c| if let Component::Normal(p) = c { p.to_str() } else { None }).collect();
    match parts {
        Some(parts) => PathBuf::from(format!("./{}", parts.join("/"))),
        None => path.to_path_buf(),
    }
}

/// A pinned path as a path on this machine: a relative one is the
/// project's (or, outside a project, the working directory's), and may
/// not leave it.
pub fn resolve(pinned: &Path, root: Option<&Path>) -> Result<PathBuf, GenericError> {
    if pinned.is_absolute() {
        return Ok(pinned.to_path_buf());
    }
    if !pinned.components().all(|c| matches!(c, Component::Normal(_) | Component::CurDir)) {
        return Err(GenericError::Value(format!(
            "{:?}: a path pinned relative to the project stays inside it",
            crate::text::escape(&pinned.to_string_lossy(), &[])
        )));
    }
    let base = match root {
        Some(r) => r.to_path_buf(),
        None => std::env::current_dir().map_err(|e| GenericError::Source(format!("the working directory: {e}")))?,
    };
    // Without the `./`: the path must read exactly as the one that was pinned,
    // which is what the approval of it names.
    Ok(pinned.components().fold(base, |path, part| match part {
        Component::Normal(p) => path.join(p),
        _ => path,
    }))
}

/// `grants` with the directories inside `root` pinned relative to it.
pub fn pin_dirs(grants: &Grants, root: Option<&Path>) -> Grants {
    let mut pinned = grants.clone();
    for d in &mut pinned.dirs {
        d.host = pin(&d.host, root);
    }
    pinned
}

/// `grants` as pinned, with their relative directories resolved.
pub fn resolve_dirs(grants: &Grants, root: Option<&Path>) -> Result<Grants, GenericError> {
    let mut resolved = grants.clone();
    for d in &mut resolved.dirs {
        d.host = resolve(&d.host, root)?;
    }
    Ok(resolved)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inside_the_project_is_pinned_relative_and_resolved_in_another_checkout() {
        let alice = Path::new("/home/alice/infra");
        let pinned = pin(Path::new("/home/alice/infra/data/in"), Some(alice));
        assert_eq!(pinned, Path::new("./data/in"));
        let bob = Path::new("/srv/bob/infra");
        assert_eq!(resolve(&pinned, Some(bob)).unwrap(), Path::new("/srv/bob/infra/data/in"));
        // Outside the project, or with no project, a path stays as given.
        for (path, root) in [("/srv/shared", Some(alice)), ("/home/alice/infra/data", None)] {
            assert_eq!(pin(Path::new(path), root), Path::new(path));
            assert_eq!(resolve(Path::new(path), Some(bob)).unwrap(), Path::new(path));
        }
        assert_eq!(pin(Path::new("/home/alice/infra/../etc"), Some(alice)), Path::new("/home/alice/infra/../etc"));
        // A value may not climb out of the project it is resolved in.
        for bad in ["../etc", "./data/../../etc", "data/.."] {
            let e = resolve(Path::new(bad), Some(bob)).unwrap_err();
            assert!(e.to_string().contains("stays inside it"), "{bad}: {e}");
        }
    }
}
