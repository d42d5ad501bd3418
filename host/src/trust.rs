//! Whether a file this host once wrote may be believed: a cached artifact
//! (native code that wasmtime maps and runs as it is), a record of a served
//! file, an approval of grants. A directory someone else created or can
//! write (say `PULUMI_WASM_CACHE_DIR=/tmp/cache` on a shared machine, made
//! first by another user) would otherwise hand this host their code or
//! their decisions.
//!
//! On Unix [`open`] opens the file only if:
//! - every directory and link on its path, as given and as resolved,
//!   belongs to this user or root, and no directory is writable by everyone
//!   unless sticky like `/tmp` (group-writable ones are allowed: under the
//!   common per-user groups `umask 002` makes every directory so);
//! - the file itself (checked on the open handle, so what is checked is
//!   what is read) is a regular file with one link, belongs to this user or
//!   root, and no one else may write it.
//!
//! POSIX ACLs need no check of their own: with extended entries the group
//! bits of the mode are the ACL mask, which caps what named users and groups
//! may do, so a file whose group bits lack write cannot be written through an
//! ACL either; and only a file's owner (this user, or root) can set one.
//!
//! A leaf module, like `dirs`: `store` and `runtime` both use it. Elsewhere
//! than Unix nothing is checked.

use std::fs::File;
use std::path::Path;

/// Opens `path` for reading if it may be believed; `Err` says why not.
#[cfg(unix)]
pub fn open(path: &Path) -> Result<File, String> {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    let why = |p: &Path, e: std::io::Error| format!("{}: {e}", p.display());
    let owned = |p: &Path, m: &std::fs::Metadata| {
        if m.uid() == me || m.uid() == 0 {
            Ok(())
        } else {
            Err(format!("{} belongs to another user (uid {})", p.display(), m.uid()))
        }
    };
    let dir_ok = |p: &Path, m: &std::fs::Metadata| {
        owned(p, m)?;
        let mode = m.permissions().mode();
        // A link's own mode means nothing; where it points is checked as resolved.
        if !m.file_type().is_symlink() && mode & 0o002 != 0 && mode & 0o1000 == 0 {
            return Err(format!("{} may be written by any user (mode {:o})", p.display(), mode & 0o7777));
        }
        Ok(())
    };
    // As given, without following links: a link someone else made could be re-pointed.
    let given = std::path::absolute(path).map_err(|e| why(path, e))?;
    for p in given.ancestors() {
        dir_ok(p, &std::fs::symlink_metadata(p).map_err(|e| why(p, e))?)?;
    }
    let real = std::fs::canonicalize(path).map_err(|e| why(path, e))?;
    // Without links (or `..`) on the way, the resolved path is the one just walked.
    if real != given {
        for p in real.ancestors().skip(1) {
            dir_ok(p, &std::fs::metadata(p).map_err(|e| why(p, e))?)?;
        }
    }
    let file = File::open(&real).map_err(|e| why(&real, e))?;
    let m = file.metadata().map_err(|e| why(&real, e))?;
    owned(&real, &m)?;
    let mode = m.permissions().mode();
    if !m.is_file() || m.nlink() != 1 {
        return Err(format!("{} is not a regular file with a single link", real.display()));
    }
    if mode & 0o022 != 0 {
        return Err(format!("{} may be written by other users (mode {:o})", real.display(), mode & 0o7777));
    }
    Ok(file)
}

#[cfg(not(unix))]
pub fn open(path: &Path) -> Result<File, String> {
    File::open(path).map_err(|e| format!("{}: {e}", path.display()))
}

/// A path that names exactly the file `file` has open (the one [`open`]
/// checked), for an API that takes a path: `/dev/fd/N` on Unix, where
/// opening it reaches the same file whatever its name points at since.
pub fn path_of(file: &File, path: &Path) -> std::path::PathBuf {
    #[cfg(unix)]
    {
        let _ = path;
        std::path::PathBuf::from(format!("/dev/fd/{}", std::os::fd::AsRawFd::as_raw_fd(file)))
    }
    #[cfg(not(unix))]
    {
        let _ = file;
        path.to_owned()
    }
}

/// Creates `path` for writing with mode `0644` whatever the umask allows
/// beyond it (so a `umask 002` does not make a file [`open`] refuses).
pub fn create(path: &Path) -> std::io::Result<File> {
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

    fn check(path: &Path) -> Result<(), String> {
        open(path).map(drop)
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
        assert!(check(&file).unwrap_err().contains("cache may be written by any user"));
        chmod(&cache, 0o1777);
        check(&file).expect("a sticky directory: others cannot replace this user's files");
        chmod(&cache, 0o775);
        check(&file).expect("group-writable directories are allowed");

        // Through a link, the target is what counts.
        let link = dir.path().join("link.cwasm");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        check(&link).unwrap();
        chmod(&file, 0o666);
        assert!(check(&link).is_err());
        chmod(&file, 0o644);

        // A second name for the file: someone may hold the other one.
        let hard = cache.join("b.cwasm");
        std::fs::hard_link(&file, &hard).unwrap();
        assert!(check(&file).unwrap_err().contains("single link"));
        std::fs::remove_file(&hard).unwrap();

        // SAFETY: as in `open`.
        if unsafe { libc::geteuid() } == 0 {
            // A link another user made on the way, though it points at this user's file.
            std::os::unix::fs::lchown(&link, Some(4321), None).unwrap();
            assert!(check(&link).unwrap_err().contains("link.cwasm belongs to another user (uid 4321)"));
            std::os::unix::fs::lchown(&file, Some(4321), None).unwrap();
            assert!(check(&file).unwrap_err().contains("a.cwasm belongs to another user (uid 4321)"));
        }
    }

    #[test]
    fn the_checked_file_is_the_one_read() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        std::fs::write(&a, b"checked").unwrap();
        std::fs::write(&b, b"swapped in").unwrap();
        let file = open(&a).unwrap();
        // The name now points at other bytes; the handle still reads the checked file.
        std::fs::rename(&b, &a).unwrap();
        assert_eq!(std::fs::read(path_of(&file, &a)).unwrap(), b"checked");
    }

    /// An ACL giving another user write shows in the group bits (its mask),
    /// so the mode check refuses it. Linux only: the ACL is set as the raw
    /// `system.posix_acl_access` attribute, as `setfacl` would.
    #[cfg(target_os = "linux")]
    #[test]
    fn an_acl_letting_another_user_write_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.cwasm");
        std::io::Write::write_all(&mut create(&file).unwrap(), b"x").unwrap();
        check(&file).unwrap();
        // Version 2, then (tag, permissions, id) entries in tag order: owner rw,
        // user 4321 rw, owning group r, mask rw, others r (as `setfacl -m u:4321:rw`).
        let mut acl = 2u32.to_le_bytes().to_vec();
        for (tag, perm, id) in
            [(0x01u16, 6u16, u32::MAX), (0x02, 6, 4321), (0x04, 4, u32::MAX), (0x10, 6, u32::MAX), (0x20, 4, u32::MAX)]
        {
            acl.extend([tag.to_le_bytes(), perm.to_le_bytes()].concat());
            acl.extend(id.to_le_bytes());
        }
        let path = std::ffi::CString::new(file.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: both names are NUL-terminated and `acl` outlives the call.
        let set = unsafe {
            libc::setxattr(path.as_ptr(), c"system.posix_acl_access".as_ptr(), acl.as_ptr().cast(), acl.len(), 0)
        };
        if set != 0 {
            let error = std::io::Error::last_os_error();
            assert_eq!(error.raw_os_error(), Some(libc::EOPNOTSUPP), "setting the ACL: {error}");
            eprintln!("this file system has no ACLs: {error}");
            return;
        }
        assert!(check(&file).unwrap_err().contains("may be written by other users (mode 664)"));
    }
}
