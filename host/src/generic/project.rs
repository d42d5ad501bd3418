//! The user's Pulumi project, so that a value pins what lies inside it
//! relative to it. The value travels in a generated SDK to teammates and
//! CI, whose checkouts are elsewhere: `/home/alice/infra/data` means
//! nothing on Bob's machine, `./data` means his checkout's `data`.
//!
//! The project is the nearest directory, from the working directory up,
//! holding `Pulumi.yaml`: `pulumi package add` runs inside the project, and
//! the engine starts plugins in it. A pinned relative path is resolved
//! there, and may only go down from it: no `..`, and where it really leads
//! (symbolic links followed) must be inside the project too, so a commit
//! turning `data` into a link to `~/.aws` is refused, not granted.
//!
//! Granted directories are named by their real paths (links followed),
//! both when `package add` approves them and when a run checks the
//! approval: a link retargeted since names another directory, which is
//! asked about again.

use std::path::{Component, Path, PathBuf};

use super::GenericError;
use crate::runtime::Grants;

/// The project the working directory is in, if any, by its real path.
pub fn root() -> Option<PathBuf> {
    let cwd = real(&std::env::current_dir().ok()?).ok()?;
    cwd.ancestors().find(|d| ["Pulumi.yaml", "Pulumi.yml"].iter().any(|f| d.join(f).is_file())).map(Path::to_path_buf)
}

/// `path` with every symbolic link followed. Windows' own form of that
/// (`\\?\C:\...`) is given back as the plain drive path it names, which is
/// how the working directory and the user's flags spell it.
pub fn real(path: &Path) -> std::io::Result<PathBuf> {
    let real = std::fs::canonicalize(path)?;
    #[cfg(windows)]
    if let Some(plain) = real.to_str().and_then(|s| s.strip_prefix(r"\\?\")) {
        if plain.as_bytes().get(1) == Some(&b':') {
            return Ok(PathBuf::from(plain));
        }
    }
    Ok(real)
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

/// A pinned file's path on this machine, by its parts: a relative one is
/// in the project (or, outside a project, the working directory), and may
/// not climb out of it. Enough for a component file, whose bytes are
/// checked against the pinned digest whatever path leads to them.
pub fn resolve_file(pinned: &Path, root: Option<&Path>) -> Result<PathBuf, GenericError> {
    Ok(join(pinned, root)?.1)
}

/// The project (or working directory) and `pinned` in it.
fn join(pinned: &Path, root: Option<&Path>) -> Result<(PathBuf, PathBuf), GenericError> {
    if pinned.is_absolute() {
        return Ok((PathBuf::new(), pinned.to_path_buf()));
    }
    if !pinned.components().all(|c| matches!(c, Component::Normal(_) | Component::CurDir)) {
        return Err(outside(pinned));
    }
    let base = match root {
        Some(r) => r.to_path_buf(),
        None => std::env::current_dir().map_err(|e| GenericError::Source(format!("the working directory: {e}")))?,
    };
    let base = real(&base).unwrap_or(base);
    let joined = pinned.components().fold(base.clone(), |path, part| match part {
        Component::Normal(p) => path.join(p),
        _ => path,
    });
    // A part such as `C:` replaces what it is joined to.
    if joined.starts_with(&base) { Ok((base, joined)) } else { Err(outside(pinned)) }
}

fn outside(pinned: &Path) -> GenericError {
    GenericError::Value(format!(
        "{:?}: a path pinned relative to the project stays inside it",
        crate::text::escape(&pinned.to_string_lossy(), &[])
    ))
}

/// A pinned directory's real path on this machine: as [`resolve_file`],
/// and where its links lead must be inside the project too.
pub fn resolve(pinned: &Path, root: Option<&Path>) -> Result<PathBuf, GenericError> {
    if pinned.is_absolute() {
        return Ok(pinned.to_path_buf());
    }
    let (base, joined) = join(pinned, root)?;
    let found = real(&joined).map_err(|e| {
        GenericError::Source(format!(
            "{} (pinned as {:?}): {e}",
            joined.display(),
            crate::text::escape(&pinned.to_string_lossy(), &[])
        ))
    })?;
    // A link may lead anywhere.
    if found.starts_with(&base) { Ok(found) } else { Err(outside(pinned)) }
}

/// `grants` with their directories named by their real paths, where they
/// exist (one that does not is refused when the component loads).
pub fn real_dirs(grants: &Grants) -> Grants {
    let mut named = grants.clone();
    for d in &mut named.dirs {
        if let Ok(path) = real(&d.host) {
            d.host = path;
        }
    }
    named
}

/// `grants` with the directories inside `root` pinned relative to it.
pub fn pin_dirs(grants: &Grants, root: Option<&Path>) -> Grants {
    let mut pinned = grants.clone();
    for d in &mut pinned.dirs {
        d.host = pin(&d.host, root);
    }
    pinned
}

/// `grants` as pinned, with their directories resolved to real paths
/// ([`resolve`] gives a relative one's; an absolute one's is looked up).
pub fn resolve_dirs(grants: &Grants, root: Option<&Path>) -> Result<Grants, GenericError> {
    let mut resolved = grants.clone();
    for d in &mut resolved.dirs {
        d.host = match resolve(&d.host, root)? {
            absolute if d.host.is_absolute() => real(&absolute).unwrap_or(absolute),
            found => found,
        };
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
        let bob = tempfile::tempdir().unwrap();
        let bob = real(bob.path()).unwrap();
        std::fs::create_dir_all(bob.join("data/in")).unwrap();
        assert_eq!(resolve(&pinned, Some(&bob)).unwrap(), bob.join("data/in"));
        // Outside the project, or with no project, a path stays as given.
        for (path, root) in [("/srv/shared", Some(alice)), ("/home/alice/infra/data", None)] {
            assert_eq!(pin(Path::new(path), root), Path::new(path));
            assert_eq!(resolve(Path::new(path), Some(&bob)).unwrap(), Path::new(path));
        }
        assert_eq!(pin(Path::new("/home/alice/infra/../etc"), Some(alice)), Path::new("/home/alice/infra/../etc"));
        // A value may not climb out of the project it is resolved in.
        for bad in ["../etc", "./data/../../etc", "data/.."] {
            let e = resolve(Path::new(bad), Some(&bob)).unwrap_err();
            assert!(e.to_string().contains("stays inside it"), "{bad}: {e}");
        }
        // Nor lead out of it through a link; a missing directory is named.
        #[cfg(unix)]
        {
            let outside = tempfile::tempdir().unwrap();
            std::os::unix::fs::symlink(outside.path(), bob.join("data/out")).unwrap();
            let e = resolve(Path::new("./data/out"), Some(&bob)).unwrap_err();
            assert!(e.to_string().contains("stays inside it"), "{e}");
            std::os::unix::fs::symlink(bob.join("data/in"), bob.join("data/link")).unwrap();
            assert_eq!(resolve(Path::new("./data/link"), Some(&bob)).unwrap(), bob.join("data/in"));
        }
        let e = resolve(Path::new("./missing"), Some(&bob)).unwrap_err();
        assert!(e.to_string().contains("pinned as \"./missing\""), "{e}");
    }
}
