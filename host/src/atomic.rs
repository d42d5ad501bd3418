//! Files replaced whole: a temporary file beside the destination, written,
//! synced, then renamed over it. A reader (another host process, a plugin
//! starting) sees the old file or the new one, never a part; a crash leaves
//! at most a `.tmp-*` file, never a torn destination; and on Unix a file in
//! use (a running plugin's executable) is replaced rather than written into
//! (Windows refuses to replace a running executable at all).

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// What temporary files start with, for sweeping what a crash left.
pub const TMP_PREFIX: &str = ".tmp-";

/// Replaces `dest` with `bytes` (mode 0644, see `trust::create`).
pub fn write(dest: &Path, bytes: &[u8]) -> io::Result<()> {
    replace_with(dest, |file| file.write_all(bytes))
}

/// Replaces `dest` with what `fill` writes into a new file (mode 0644,
/// which `fill` may change through the handle).
pub fn replace_with(dest: &Path, fill: impl FnOnce(&mut File) -> io::Result<()>) -> io::Result<()> {
    let dir = match dest.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    fs::create_dir_all(dir)?;
    let tmp = temporary_in(dir);
    let result = (|| {
        let mut file = crate::trust::create(&tmp)?;
        fill(&mut file)?;
        file.sync_all()?;
        drop(file);
        fs::rename(&tmp, dest)?;
        sync_dir(dir);
        Ok(())
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// A name no other write uses: this process's id, the time, and a counter.
fn temporary_in(dir: &Path) -> PathBuf {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nonce =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or_default();
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    dir.join(format!("{TMP_PREFIX}{}-{nonce}-{n}", std::process::id()))
}

/// Whether `name` is one [`temporary_in`] makes (`.tmp-<pid>-<time>-<n>`,
/// or without `-<n>` as the artifact cache made them before): a sweep of a
/// folder the user chose (pack's) must take nothing else.
fn is_temporary(name: &str) -> bool {
    name.strip_prefix(TMP_PREFIX).is_some_and(|rest| {
        let parts: Vec<&str> = rest.split('-').collect();
        (2..=3).contains(&parts.len()) && parts.iter().all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
    })
}

/// Makes a rename durable (best effort: not every platform can sync a directory).
pub fn sync_dir(dir: &Path) {
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}

/// Deletes the temporary files in `dir` older than `age`: what crashed or
/// interrupted writes left (a younger one may be another process's write).
pub fn sweep(dir: &Path, age: std::time::Duration) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let stale = entry.file_name().to_str().is_some_and(is_temporary)
            && entry.metadata().and_then(|m| m.modified()).is_ok_and(|t| t.elapsed().is_ok_and(|e| e >= age));
        if stale {
            let _ = fs::remove_file(entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_replaced_whole_and_nothing_is_left_beside_it() {
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("f");
        write(&dest, b"one").unwrap();
        write(&dest, b"two").unwrap();
        assert_eq!(fs::read(&dest).unwrap(), b"two");
        let failed = replace_with(&dest, |f| {
            f.write_all(b"half")?;
            Err(io::Error::other("interrupted"))
        });
        assert!(failed.is_err());
        assert_eq!(fs::read(&dest).unwrap(), b"two", "a failed write leaves the old file");
        let names: Vec<_> = fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, ["f"]);
    }

    #[test]
    fn only_stale_temporary_files_are_swept() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join(".tmp-1-2-3"), b"left").unwrap();
        fs::write(dir.path().join("kept"), b"").unwrap();
        fs::write(dir.path().join(".tmp-notes"), b"the user's").unwrap();
        sweep(dir.path(), std::time::Duration::from_secs(3600));
        assert!(dir.path().join(".tmp-1-2-3").exists(), "young: maybe another process's write");
        sweep(dir.path(), std::time::Duration::ZERO);
        assert!(!dir.path().join(".tmp-1-2-3").exists());
        assert!(dir.path().join("kept").exists());
        assert!(dir.path().join(".tmp-notes").exists(), "not a name this module makes");
        assert!(is_temporary(temporary_in(dir.path()).file_name().unwrap().to_str().unwrap()));
    }
}
