//! The local provider store: installed components, content-addressed, and
//! the lookup of `(package, semver requirement)` to the newest compatible one.
//!
//! Layout under the root (`$PULUMI_WASM_STORE`, else
//! `$XDG_DATA_HOME/pulumi-wasm/store`, else `~/.local/share/pulumi-wasm/store`):
//!
//! ```text
//! blobs/sha256/<digest>.wasm       component bytes, named by their SHA-256
//! packages/<name>/<version>.json   one index entry per installed version
//! artifacts/<digest>-<engine>.cwasm precompiled components (the runtime's cache)
//! approvals/[pending/]<id>.json     grant sets approved for parameterized packages
//! .lock                            held by install and remove
//! ```
//!
//! Every file is written to a temporary `.tmp-*` file in its own directory,
//! synced, then renamed into place, so a crash leaves either the old file or
//! the new one, never a torn one; readers skip `.tmp-*` files and need no
//! lock. The blob is in place before the index entry that names it, and a
//! blob is verified against its digest every time it is read.
//!
//! This layer sits beside `server` and uses nothing of `runtime`: the caller
//! supplies the package name and version (the CLI reads them by loading the
//! component).

mod approvals;
mod spec;
#[cfg(test)]
mod tests;

use std::fs::{self, File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};

use semver::Version;
use serde::{Deserialize, Serialize};

use crate::atomic::{TMP_PREFIX, sync_dir};

pub use spec::{PackageSpec, parse_exact, validate_name};

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{0}")]
    BadSpec(String),
    #[error("no installed package named '{name}' (add one with `pulumi-wasm install <component.wasm>`)")]
    NoPackage { name: String },
    #[error("no installed version of '{name}' matches '{req}' (installed: {installed})")]
    NoMatch { name: String, req: String, installed: String },
    #[error("{name} {version} is not installed")]
    NotInstalled { name: String, version: Version },
    #[error(
        "component {} is corrupt: expected sha256:{expected} ({size} bytes), found sha256:{actual} ({found} bytes); reinstall it",
        path.display()
    )]
    DigestMismatch { path: PathBuf, expected: String, actual: String, size: u64, found: u64 },
    #[error("component {} is missing from the store; reinstall it", path.display())]
    MissingBlob { path: PathBuf },
    #[error("index entry {}: {why}", path.display())]
    BadIndex { path: PathBuf, why: String },
    #[error("{what} {}: {error}", path.display())]
    Io { what: &'static str, path: PathBuf, error: io::Error },
    #[error("no store directory: set PULUMI_WASM_STORE (or HOME; LOCALAPPDATA on Windows)")]
    NoHome,
    #[error("'{0}' is not a SHA-256 digest (64 lower-case hex digits)")]
    BadDigest(String),
}

fn io_err(what: &'static str, path: &Path) -> impl FnOnce(io::Error) -> StoreError + use<> {
    let path = path.to_owned();
    move |error| StoreError::Io { what, path, error }
}

/// One installed version of a package.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Installed {
    pub name: String,
    pub version: Version,
    /// Lower-case hex SHA-256 of the component.
    pub digest: String,
    pub size: u64,
    /// UTC, RFC 3339 (`2026-11-22T01:21:29Z`).
    pub installed_at: String,
}

/// What `packages/<name>/<version>.json` holds.
#[derive(Serialize, Deserialize)]
struct IndexEntry {
    name: String,
    version: String,
    /// `sha256:<hex>`.
    digest: String,
    size: u64,
    installed_at: String,
}

/// The result of [`Store::install`].
#[derive(Clone, Debug)]
pub struct Installation {
    pub installed: Installed,
    /// The entry this one replaced (same name and version), if any.
    pub previous: Option<Installed>,
}

/// The result of [`Store::remove`].
#[derive(Clone, Debug)]
pub struct Removal {
    /// What was removed; `None` for an entry that could not be read.
    pub removed: Option<Installed>,
    /// False when another installed version still uses the same bytes, or
    /// one that cannot be read might (always, for an unreadable one).
    pub blob_deleted: bool,
}

#[derive(Clone, Debug)]
pub struct Store {
    root: PathBuf,
}

impl Store {
    pub fn new(root: impl Into<PathBuf>) -> Store {
        Store { root: root.into() }
    }

    /// `$PULUMI_WASM_STORE`, else `$XDG_DATA_HOME/pulumi-wasm/store`, else
    /// `~/.local/share/pulumi-wasm/store`.
    pub fn default_dir() -> Option<PathBuf> {
        crate::dirs::store_dir()
    }

    /// The store at [`Store::default_dir`].
    pub fn open_default() -> Result<Store, StoreError> {
        Store::default_dir().map(Store::new).ok_or(StoreError::NoHome)
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    fn blob_dir(&self) -> PathBuf {
        self.root.join("blobs").join("sha256")
    }

    /// Where the component with this digest is kept.
    pub fn blob_path(&self, digest: &str) -> PathBuf {
        self.blob_dir().join(format!("{digest}.wasm"))
    }

    fn package_dir(&self, name: &str) -> PathBuf {
        self.root.join("packages").join(name)
    }

    fn index_path(&self, name: &str, version: &Version) -> PathBuf {
        self.package_dir(name).join(format!("{version}.json"))
    }

    /// Installs `wasm` as `name` `version`, replacing an entry of the same
    /// version. The blob is written (if new) before the index entry.
    pub fn install(&self, name: &str, version: &Version, wasm: &[u8]) -> Result<Installation, StoreError> {
        spec::validate_new_name(name)?;
        let _lock = self.lock()?;
        let digest = digest(wasm);
        let blob_dir = self.blob_dir();
        let package_dir = self.package_dir(name);
        // Under the lock every `.tmp-*` file is a crash's leftover.
        remove_leftovers(&blob_dir);
        remove_leftovers(&package_dir);

        // Semver's prereleases are case-sensitive, file systems often not:
        // `1.0.0-RC1` would replace `1.0.0-rc1`'s entry there.
        let file = format!("{version}.json");
        if let Some(other) = read_dir_names(&package_dir)
            .unwrap_or_default()
            .into_iter()
            .find(|n| n.eq_ignore_ascii_case(&file) && *n != file)
        {
            return Err(StoreError::BadSpec(format!(
                "{name} {version}: version {} is installed, which differs only in case",
                other.trim_end_matches(".json")
            )));
        }
        let blob = self.blob_path(&digest);
        if self.read_checked(&blob, &digest, wasm.len() as u64).is_err() {
            crate::atomic::write(&blob, wasm).map_err(io_err("writing", &blob))?;
        }
        let index = self.index_path(name, version);
        let previous = match self.read_entry(&index, name) {
            Ok(e) => Some(e),
            Err(StoreError::Io { error, .. }) if error.kind() == io::ErrorKind::NotFound => None,
            Err(e) => {
                tracing::warn!("replacing unreadable {e}");
                None
            }
        };
        let installed = Installed {
            name: name.to_owned(),
            version: version.clone(),
            digest,
            size: wasm.len() as u64,
            installed_at: utc_now(),
        };
        let entry = IndexEntry {
            name: installed.name.clone(),
            version: installed.version.to_string(),
            digest: format!("sha256:{}", installed.digest),
            size: installed.size,
            installed_at: installed.installed_at.clone(),
        };
        let mut json = serde_json::to_vec_pretty(&entry).expect("an index entry serializes");
        json.push(b'\n');
        crate::atomic::write(&index, &json).map_err(io_err("writing", &index))?;
        if let Some(prev) = &previous
            && prev.digest != installed.digest
            && let Err(e) = self.collect_blob(&prev.digest)
        {
            tracing::warn!("keeping the replaced component sha256:{}: {e}", prev.digest);
        }
        Ok(Installation { installed, previous })
    }

    /// Every installed version, by name, newest version first; only `name`'s when given.
    pub fn list(&self, name: Option<&str>) -> Result<Vec<Installed>, StoreError> {
        let names = match name {
            Some(n) => {
                validate_name(n)?;
                vec![n.to_owned()]
            }
            None => self.package_names()?,
        };
        let mut all = Vec::new();
        for name in names {
            all.extend(self.versions(&name)?);
        }
        Ok(all)
    }

    /// `name`'s installed versions, newest first. An entry that cannot be
    /// read is left out, with a warning: one bad file must not hide the rest.
    pub fn versions(&self, name: &str) -> Result<Vec<Installed>, StoreError> {
        let (versions, unreadable) = self.readable_versions(name)?;
        for e in unreadable {
            tracing::warn!("skipping {e} (`pulumi-wasm remove` it)");
        }
        Ok(versions)
    }

    /// `name`'s readable versions, newest first, and the errors of the others.
    fn readable_versions(&self, name: &str) -> Result<(Vec<Installed>, Vec<StoreError>), StoreError> {
        validate_name(name)?;
        let dir = self.package_dir(name);
        let (mut versions, mut unreadable) = (Vec::new(), Vec::new());
        for file in read_dir_names(&dir)? {
            // `.tmp-*` files are writes that never completed.
            if file.starts_with('.') || !file.ends_with(".json") {
                continue;
            }
            match self.read_entry(&dir.join(&file), name) {
                Ok(v) => versions.push(v),
                Err(e) => unreadable.push(e),
            }
        }
        versions.sort_by(|a, b| b.version.cmp(&a.version));
        Ok((versions, unreadable))
    }

    /// The installed packages' names, sorted.
    fn package_names(&self) -> Result<Vec<String>, StoreError> {
        let packages = self.root.join("packages");
        let mut names: Vec<String> = read_dir_names(&packages)?
            .into_iter()
            .filter(|n| validate_name(n).is_ok() && packages.join(n).is_dir())
            .collect();
        names.sort();
        Ok(names)
    }

    /// Every readable entry, and whether any entry cannot be read.
    fn scan(&self) -> Result<(Vec<Installed>, bool), StoreError> {
        let (mut all, mut any_unreadable) = (Vec::new(), false);
        for name in self.package_names()? {
            let (versions, unreadable) = self.readable_versions(&name)?;
            all.extend(versions);
            any_unreadable |= !unreadable.is_empty();
        }
        Ok((all, any_unreadable))
    }

    /// Whether an installed version other than `except` may use the blob
    /// `digest`: one does, or an entry cannot be read (it might).
    fn blob_in_use(&self, digest: &str, except: Option<&Installed>) -> Result<bool, StoreError> {
        let (all, any_unreadable) = self.scan()?;
        Ok(any_unreadable || all.iter().any(|e| e.digest == digest && Some(e) != except))
    }

    /// The newest installed version of `spec.name` that `spec.req` accepts
    /// (prereleases only when the requirement names one, as Cargo does).
    pub fn lookup(&self, spec: &PackageSpec) -> Result<Installed, StoreError> {
        let versions = self.versions(&spec.name)?;
        if versions.is_empty() {
            return Err(StoreError::NoPackage { name: spec.name.clone() });
        }
        if let Some(found) =
            versions.iter().filter(|v| spec.req.matches(&v.version)).max_by(|a, b| a.version.cmp(&b.version))
        {
            return Ok(found.clone());
        }
        let installed = versions.iter().map(|v| v.version.to_string()).collect::<Vec<_>>().join(", ");
        Err(StoreError::NoMatch { name: spec.name.clone(), req: spec.req.to_string(), installed })
    }

    /// The exact installed version.
    pub fn get(&self, name: &str, version: &Version) -> Result<Installed, StoreError> {
        validate_name(name)?;
        match self.read_entry(&self.index_path(name, version), name) {
            Err(StoreError::Io { error, .. }) if error.kind() == io::ErrorKind::NotFound => {
                Err(StoreError::NotInstalled { name: name.to_owned(), version: version.clone() })
            }
            other => other,
        }
    }

    /// The component's bytes, checked against the digest and size recorded for it.
    pub fn read(&self, entry: &Installed) -> Result<Vec<u8>, StoreError> {
        self.read_checked(&self.blob_path(&entry.digest), &entry.digest, entry.size)
    }

    /// The blob with this digest, checked against it; whether or not an index entry names it.
    pub fn read_blob(&self, digest: &str) -> Result<Vec<u8>, StoreError> {
        check_digest(digest)?;
        let path = self.blob_path(digest);
        let size = fs::metadata(&path).map(|m| m.len()).unwrap_or_default();
        self.read_checked(&path, digest, size)
    }

    /// Keeps `bytes` as a blob without an index entry (a cache: pulled
    /// components); returns its digest. A later `install` of the same bytes
    /// reuses it; `remove` of a version that shares it deletes it.
    pub fn put_blob(&self, bytes: &[u8]) -> Result<String, StoreError> {
        let _lock = self.lock()?;
        let digest = digest(bytes);
        let (dir, blob) = (self.blob_dir(), self.blob_path(&digest));
        remove_leftovers(&dir);
        if self.read_checked(&blob, &digest, bytes.len() as u64).is_err() {
            crate::atomic::write(&blob, bytes).map_err(io_err("writing", &blob))?;
        }
        Ok(digest)
    }

    /// Removes one version; deletes its blob when no other version uses it.
    /// An entry that cannot be read is removed too; while one is there, no
    /// blob is deleted (it might name any), nor when it goes.
    pub fn remove(&self, name: &str, version: &Version) -> Result<Removal, StoreError> {
        let _lock = self.lock()?;
        let index = self.index_path(name, version);
        let dir = self.package_dir(name);
        let removed = match self.get(name, version) {
            // An unreadable entry at exactly this version's file (where file
            // names ignore case, another version's could have been opened).
            Err(StoreError::BadIndex { .. })
                if read_dir_names(&dir)?.iter().any(|f| *f == format!("{version}.json")) =>
            {
                fs::remove_file(&index).map_err(io_err("removing", &index))?;
                sync_dir(&dir);
                let _ = fs::remove_dir(&dir);
                // Its blob is unknown, and blobs no entry names may be
                // pulled components kept for pinned SDKs (`put_blob`): all stay.
                return Ok(Removal { removed: None, blob_deleted: false });
            }
            got => got?,
        };
        // Decided before anything changes.
        let shared = self.blob_in_use(&removed.digest, Some(&removed))?;
        fs::remove_file(&index).map_err(io_err("removing", &index))?;
        sync_dir(&dir);
        remove_leftovers(&dir);
        // The package directory goes when it holds nothing else.
        let _ = fs::remove_dir(&dir);
        let blob_deleted = !shared && self.delete_blob(&removed.digest)?;
        Ok(Removal { removed: Some(removed), blob_deleted })
    }

    /// Deletes the blob when no index entry names it; true if deleted.
    /// Call with the lock held.
    fn collect_blob(&self, digest: &str) -> Result<bool, StoreError> {
        if self.blob_in_use(digest, None)? {
            return Ok(false);
        }
        self.delete_blob(digest)
    }

    /// Where precompiled artifacts of the stored components are cached:
    /// `<digest>-<engine settings hash>.cwasm`, written and keyed by the
    /// runtime's artifact cache (a new engine or wasmtime gives a new name).
    /// Also the runtime's default cache when the store is the default one.
    pub fn artifact_dir(&self) -> PathBuf {
        crate::dirs::artifact_dir(&self.root)
    }

    fn delete_blob(&self, digest: &str) -> Result<bool, StoreError> {
        let blob = self.blob_path(digest);
        match fs::remove_file(&blob) {
            Ok(()) => {
                sync_dir(&self.blob_dir());
                self.delete_artifacts(digest);
                Ok(true)
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(io_err("removing", &blob)(e)),
        }
    }

    /// A removed component's artifacts go with it (best effort: a leftover
    /// is only disk space, never loaded for other bytes).
    fn delete_artifacts(&self, digest: &str) {
        let prefix = format!("{digest}-");
        for name in read_dir_names(&self.artifact_dir()).unwrap_or_default() {
            if name.starts_with(&prefix) && name.ends_with(".cwasm") {
                let _ = fs::remove_file(self.artifact_dir().join(name));
            }
        }
    }

    fn read_checked(&self, path: &Path, digest: &str, size: u64) -> Result<Vec<u8>, StoreError> {
        let bytes = match fs::read(path) {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Err(StoreError::MissingBlob { path: path.to_owned() });
            }
            Err(e) => return Err(io_err("reading", path)(e)),
        };
        let actual = self::digest(&bytes);
        if actual != digest || bytes.len() as u64 != size {
            return Err(StoreError::DigestMismatch {
                path: path.to_owned(),
                expected: digest.to_owned(),
                actual,
                size,
                found: bytes.len() as u64,
            });
        }
        Ok(bytes)
    }

    fn read_entry(&self, path: &Path, name: &str) -> Result<Installed, StoreError> {
        let bad = |why: String| StoreError::BadIndex { path: path.to_owned(), why };
        let text = fs::read(path).map_err(io_err("reading", path))?;
        let entry: IndexEntry = serde_json::from_slice(&text).map_err(|e| bad(e.to_string()))?;
        let version = Version::parse(&entry.version).map_err(|e| bad(format!("version '{}': {e}", entry.version)))?;
        let digest = crate::sha256::hex_of(&entry.digest)
            .ok_or_else(|| bad(format!("digest '{}' is not sha256:<64 hex digits>", entry.digest)))?;
        let expected_file = format!("{version}.json");
        if entry.name != name || path.file_name().and_then(|f| f.to_str()) != Some(expected_file.as_str()) {
            return Err(bad(format!("records {} {} at the wrong place", entry.name, entry.version)));
        }
        Ok(Installed {
            name: entry.name,
            version,
            digest: digest.to_owned(),
            size: entry.size,
            installed_at: entry.installed_at,
        })
    }

    /// An exclusive lock on `<root>/.lock`, released on drop.
    fn lock(&self) -> Result<File, StoreError> {
        fs::create_dir_all(&self.root).map_err(io_err("creating", &self.root))?;
        let path = self.root.join(".lock");
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(io_err("opening", &path))?;
        file.lock().map_err(io_err("locking", &path))?;
        Ok(file)
    }
}

/// Only lower-case hex SHA-256 digests name blobs (nothing else reaches a path).
fn check_digest(digest: &str) -> Result<(), StoreError> {
    if crate::sha256::is_hex(digest) { Ok(()) } else { Err(StoreError::BadDigest(digest.to_owned())) }
}

/// Lower-case hex SHA-256.
pub use crate::sha256::of as digest;

/// Names in `dir`; none when it does not exist.
fn read_dir_names(dir: &Path) -> Result<Vec<String>, StoreError> {
    let entries = match fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io_err("listing", dir)(e)),
    };
    let mut names = Vec::new();
    for entry in entries {
        let entry = entry.map_err(io_err("listing", dir))?;
        if let Some(name) = entry.file_name().to_str() {
            names.push(name.to_owned());
        }
    }
    Ok(names)
}

/// Deletes the `.tmp-*` files a crashed write left in `dir`. Only with the lock held.
fn remove_leftovers(dir: &Path) {
    for name in read_dir_names(dir).unwrap_or_default() {
        if name.starts_with(TMP_PREFIX) {
            let _ = fs::remove_file(dir.join(name));
        }
    }
}

fn utc_now() -> String {
    let secs =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or_default();
    utc(secs)
}

/// RFC 3339 UTC for Unix seconds (days to civil date: H. Hinnant's algorithm).
pub(crate) fn utc(secs: u64) -> String {
    let (days, rem) = ((secs / 86_400) as i64, secs % 86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z", rem / 3600, rem % 3600 / 60, rem % 60)
}
