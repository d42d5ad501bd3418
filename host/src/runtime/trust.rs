//! Whether a file of the artifact cache may be believed. A `.cwasm` is
//! native code that wasmtime maps and runs as it is, so a cache directory
//! someone else created or can write (say `PULUMI_WASM_CACHE_DIR=/tmp/cache`
//! on a shared machine) would hand this host their code to run.
//!
//! On Unix the file must belong to this user (or root) and be writable by
//! no one else, and every directory above it must belong to this user or
//! root and not be writable by everyone, unless sticky like `/tmp` (as ssh
//! asks of its keys, but a group-writable directory is allowed: under the
//! common per-user groups, `umask 002` makes every directory so). Elsewhere
//! nothing is checked. The cache writes its files `0644` whatever the umask.

use std::path::Path;

/// `Err` says why `path` is not to be trusted.
#[cfg(unix)]
pub fn check(path: &Path) -> Result<(), String> {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    let path = std::fs::canonicalize(path).map_err(|e| format!("{}: {e}", path.display()))?;
    for (i, p) in path.ancestors().enumerate() {
        let m = std::fs::metadata(p).map_err(|e| format!("{}: {e}", p.display()))?;
        let mode = m.permissions().mode();
        if m.uid() != me && m.uid() != 0 {
            return Err(format!("{} belongs to another user (uid {})", p.display(), m.uid()));
        }
        let sticky = mode & 0o1000 != 0;
        let unsafe_write = if i == 0 { !m.is_file() || mode & 0o022 != 0 } else { mode & 0o002 != 0 && !sticky };
        if unsafe_write {
            return Err(format!("{} may be written by other users (mode {:o})", p.display(), mode & 0o7777));
        }
    }
    Ok(())
}

#[cfg(not(unix))]
pub fn check(_path: &Path) -> Result<(), String> {
    Ok(())
}

/// Creates `path` for writing with mode `0644` whatever the umask allows
/// beyond it (so a `umask 002` does not make a file [`check`] refuses).
pub fn create(path: &Path) -> std::io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o644);
    options.open(path)
}

#[cfg(all(test, unix))]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    fn chmod(path: &Path, mode: u32) {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    #[test]
    fn only_files_no_one_else_can_write_are_trusted() {
        let dir = tempfile::tempdir().unwrap();
        let cache = dir.path().join("cache");
        std::fs::create_dir(&cache).unwrap();
        let file = cache.join("a.cwasm");
        std::io::Write::write_all(&mut create(&file).unwrap(), b"x").unwrap();
        check(&file).unwrap();

        chmod(&file, 0o664);
        assert!(check(&file).unwrap_err().contains("a.cwasm may be written by other users (mode 664)"));
        chmod(&file, 0o644);
        chmod(&cache, 0o777);
        assert!(check(&file).unwrap_err().contains("cache may be written by other users"));
        chmod(&cache, 0o1777);
        check(&file).expect("a sticky directory: others cannot replace this user's files");
        chmod(&cache, 0o775);
        check(&file).expect("group-writable directories are allowed");
        // Through a symbolic link, the target is what counts.
        let link = dir.path().join("link.cwasm");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        check(&link).unwrap();
        chmod(&file, 0o666);
        assert!(check(&link).is_err());
        chmod(&file, 0o644);

        // SAFETY: as in `check`.
        if unsafe { libc::geteuid() } == 0 {
            std::os::unix::fs::lchown(&file, Some(4321), None).unwrap();
            assert!(check(&file).unwrap_err().contains("belongs to another user (uid 4321)"));
        }
    }
}
