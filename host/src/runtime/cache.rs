//! On-disk cache of precompiled components, so a warm start maps a file
//! instead of running Cranelift again; and records of the component files
//! served, so a warm start need not even read and hash the component.

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};
use wasmtime::Engine;
use wasmtime::component::Component;

use super::RuntimeError;
use super::needs::Needs;
use crate::trust;

/// How long before a record was taken a file's last change must lie for the
/// record to be trusted (see [`ArtifactCache::known_file`]). File timestamps
/// come from the kernel's coarse clock, up to a scheduler tick (1-10 ms)
/// behind, so a change made just after the file was hashed could carry the
/// timestamp seen before it; a change this long after that timestamp cannot.
const SETTLED: Duration = Duration::from_millis(100);
/// The same where the file system keeps whole seconds (ext3: 1 s, FAT: 2 s).
const SETTLED_COARSE: Duration = Duration::from_secs(2);

/// A directory of `<sha256 of the wasm>-<engine settings hash>.cwasm` files,
/// and `files/<sha256 of a path>.json` records of the component files served.
/// Only files this host wrote are ever loaded from it.
#[derive(Clone, Debug)]
pub struct ArtifactCache {
    dir: PathBuf,
    /// Read artifacts into memory rather than mapping their files.
    in_memory: bool,
}

impl ArtifactCache {
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        ArtifactCache { dir: dir.into(), in_memory: false }
    }

    /// Loads artifacts by reading them instead of mapping them. `perf` names
    /// JIT code from its map only in anonymous memory; code mapped from a
    /// file it looks up in the file, where a `.cwasm` has no names.
    pub fn in_memory(mut self, yes: bool) -> Self {
        self.in_memory = yes;
        self
    }

    /// `$PULUMI_WASM_CACHE_DIR`, else `artifacts/` in the default provider
    /// store (as `Store::default_dir`): the default of both the CLI and
    /// [`super::RuntimeConfig::default`].
    pub fn default_dir() -> Option<PathBuf> {
        crate::dirs::cache_dir()
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The artifact path for this component under this engine's settings.
    pub fn path_for(&self, engine: &Engine, digest: &str) -> PathBuf {
        // Engine settings hash: any change to compiler flags or wasmtime version changes it.
        let mut h = std::collections::hash_map::DefaultHasher::new();
        engine.precompile_compatibility_hash().hash(&mut h);
        self.dir.join(format!("{digest}-{:016x}.cwasm", h.finish()))
    }

    /// The cached artifact of the component whose SHA-256 is `digest`, if
    /// there is a readable one. Blocking.
    pub fn open(&self, engine: &Engine, digest: &str) -> Option<Component> {
        let path = self.path_for(engine, digest);
        if !path.is_file() {
            return None;
        }
        let file = match trust::open(&path) {
            Ok(file) => file,
            Err(why) => {
                tracing::warn!("not loading cached artifact {}: {why}; compiling instead", path.display());
                return None;
            }
        };
        // SAFETY: the file was written by `load` below from `precompile_component`
        // of this engine configuration (the name carries both hashes), and
        // (on Unix, `trust::open`) nobody but this user or root can have written it
        // since; what is loaded is that open file, whatever its name points at now.
        let loaded = if self.in_memory {
            let mut bytes = Vec::new();
            std::io::Read::read_to_end(&mut &file, &mut bytes)
                .map_err(wasmtime::Error::from)
                .and_then(|_| unsafe { Component::deserialize(engine, &bytes) })
        } else {
            unsafe { Component::deserialize_file(engine, trust::path_of(&file, &path)) }
        };
        match loaded {
            Ok(c) => Some(c),
            Err(e) => {
                tracing::warn!("discarding unreadable artifact {}: {e}", path.display());
                None
            }
        }
    }

    /// Loads the component whose SHA-256 is `digest` from the cache,
    /// compiling and storing it on a miss. Blocking: call from a blocking thread.
    pub fn load(&self, engine: &Engine, wasm: &[u8], digest: &str) -> Result<(Component, bool), RuntimeError> {
        if let Some(c) = self.open(engine, digest) {
            return Ok((c, true));
        }
        let path = self.path_for(engine, digest);
        // What interrupted writes left (a compile cut short by an exit).
        for dir in [self.dir.clone(), self.dir.join("files")] {
            crate::atomic::sweep(&dir, Duration::from_secs(3600));
        }
        let artifact = engine.precompile_component(wasm).map_err(|e| RuntimeError::NotAComponent(format!("{e:#}")))?;
        // Synced before the rename: a torn artifact would be mapped as code.
        if let Err(e) = crate::atomic::write(&path, &artifact) {
            tracing::warn!("could not cache {}: {e}", path.display());
        }
        // SAFETY: produced just now by this engine.
        let component =
            unsafe { Component::deserialize(engine, &artifact) }.map_err(|e| RuntimeError::Cache(format!("{e:#}")))?;
        Ok((component, false))
    }

    /// What the component file at `path` was when it was last served, if the
    /// file has not changed since (for [`super::Runtime::load_known`]). Blocking.
    ///
    /// This is what lets a warm start skip reading, hashing and running the
    /// component, and it stays safe: the record only maps a file identity to
    /// a digest, and the artifact loaded for that digest is still one this host
    /// compiled from bytes with that digest. The identity includes the inode
    /// change time (ctime), which the kernel sets on every write, truncation,
    /// rename or `utimes` and which unprivileged code cannot set back; and a
    /// record is trusted only if the file's last change was `SETTLED` (on
    /// file systems with whole-second times `SETTLED_COARSE`) before the
    /// record's stat, so a write in the same timestamp tick as the hash (the
    /// "racy clean" case) is re-hashed. Whoever can write this directory
    /// can already replace the artifacts themselves, so the record adds no
    /// new trust.
    pub fn known_file(&self, path: &Path) -> Option<KnownFile> {
        // A planted record could name another cached component for this file.
        let file = trust::open(&self.record_path(path)?).ok()?;
        let mut record = Vec::new();
        std::io::Read::read_to_end(&mut &file, &mut record).ok()?;
        let known: KnownFile = serde_json::from_slice(&record).ok()?;
        // Written by another host, its facts may be read differently or lack one.
        if known.format != RECORD_FORMAT || known.host != env!("CARGO_PKG_VERSION") {
            return None;
        }
        // The digest names the artifact's file: nothing but a SHA-256 in hex.
        if !crate::sha256::is_hex(&known.digest) {
            return None;
        }
        let now = FileIdentity::of(&std::fs::metadata(path).ok()?)?;
        (known.identity == now && known.identity.settled_before(known.checked_at_ns)).then_some(known)
    }

    /// Records what the file at `path`, as it was at `seen`, turned out to
    /// be. Best effort: a failure only means the next start hashes again.
    pub fn remember_file(&self, path: &Path, seen: &SeenFile, known: KnownFacts) {
        let Some(record) = self.record_path(path) else { return };
        let known = KnownFile {
            format: RECORD_FORMAT,
            host: env!("CARGO_PKG_VERSION").to_owned(),
            identity: seen.identity.clone(),
            checked_at_ns: seen.checked_at_ns,
            digest: known.digest,
            name: known.name,
            version: known.version,
            needs: known.needs,
            autonaming: known.autonaming,
        };
        let json = serde_json::to_vec(&known).map_err(std::io::Error::from);
        if let Err(e) = json.and_then(|json| crate::atomic::write(&record, &json)) {
            tracing::debug!("could not record {}: {e}", record.display());
        }
    }

    /// `files/<sha256 of the absolute path>.json`.
    fn record_path(&self, path: &Path) -> Option<PathBuf> {
        let abs = std::path::absolute(path).ok()?;
        Some(self.dir.join("files").join(format!("{}.json", digest(abs.as_os_str().as_encoded_bytes()))))
    }
}

/// Lower-case hex SHA-256.
pub use crate::sha256::of as digest;

/// Which file, and which version of it: changes whenever the content can have.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileIdentity {
    dev: u64,
    ino: u64,
    size: u64,
    mtime_ns: i64,
    ctime_ns: i64,
}

impl FileIdentity {
    #[cfg(unix)]
    fn of(meta: &std::fs::Metadata) -> Option<FileIdentity> {
        use std::os::unix::fs::MetadataExt;
        let ns = |s: i64, n: i64| s.saturating_mul(1_000_000_000).saturating_add(n);
        meta.is_file().then(|| FileIdentity {
            dev: meta.dev(),
            ino: meta.ino(),
            size: meta.size(),
            mtime_ns: ns(meta.mtime(), meta.mtime_nsec()),
            ctime_ns: ns(meta.ctime(), meta.ctime_nsec()),
        })
    }

    /// Without a change time the identity proves nothing: never recorded.
    #[cfg(not(unix))]
    fn of(_meta: &std::fs::Metadata) -> Option<FileIdentity> {
        None
    }

    fn settled_before(&self, checked_at_ns: i64) -> bool {
        // The change time detects changes, so its granularity sets the margin.
        let whole_seconds = self.ctime_ns % 1_000_000_000 == 0;
        let settled = if whole_seconds { SETTLED_COARSE } else { SETTLED }.as_nanos() as i64;
        self.ctime_ns.max(self.mtime_ns).saturating_add(settled) < checked_at_ns
    }
}

/// A file's identity taken before reading it, to record once it has loaded.
#[derive(Clone, Debug)]
pub struct SeenFile {
    identity: FileIdentity,
    checked_at_ns: i64,
}

impl SeenFile {
    /// Blocking. `None` if the platform gives no change time.
    pub fn stat(path: &Path) -> Option<SeenFile> {
        // The clock is read before the stat, so a change racing the read is seen as recent.
        let checked_at_ns = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).ok()?.as_nanos() as i64;
        Some(SeenFile { identity: FileIdentity::of(&std::fs::metadata(path).ok()?)?, checked_at_ns })
    }
}

/// What loading a component found out, as recorded for its file.
#[derive(Clone, Debug)]
pub struct KnownFacts {
    pub digest: String,
    pub name: String,
    pub version: String,
    pub needs: Needs,
    pub autonaming: bool,
}

/// What a file record's facts mean: bumped whenever a fact is added or
/// read differently, so that a host never takes a record written by an
/// older one for its own (a fact the older one did not record would read
/// as a default: a component saying it does not autoname, forever).
const RECORD_FORMAT: u32 = 2;

/// The record of a served component file.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct KnownFile {
    /// [`RECORD_FORMAT`] and the host's version when written.
    #[serde(default)]
    format: u32,
    #[serde(default)]
    host: String,
    identity: FileIdentity,
    checked_at_ns: i64,
    pub digest: String,
    pub name: String,
    pub version: String,
    pub needs: Needs,
    /// The component honours autonaming options (said at Handshake).
    pub autonaming: bool,
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn facts(digest: &str) -> KnownFacts {
        KnownFacts {
            digest: digest.into(),
            name: "p".into(),
            version: "1.0.0".into(),
            needs: Needs::default(),
            autonaming: false,
        }
    }

    #[test]
    fn the_library_default_cache_is_the_clis() {
        let dir = crate::runtime::RuntimeConfig::default().cache.map(|c| c.dir().to_owned());
        assert_eq!(dir, ArtifactCache::default_dir());
        if std::env::var_os("PULUMI_WASM_CACHE_DIR").is_none() {
            let store = crate::dirs::store_dir().map(|root| crate::dirs::artifact_dir(&root));
            assert_eq!(dir, store, "beside the store");
        }
    }

    /// `seen` as if recorded well after the file's last change.
    fn settled(seen: SeenFile) -> SeenFile {
        SeenFile { checked_at_ns: seen.identity.ctime_ns + 2 * SETTLED_COARSE.as_nanos() as i64, ..seen }
    }

    #[test]
    fn a_file_record_is_trusted_only_while_the_file_is_unchanged_and_settled() {
        let dir = tempfile::tempdir().unwrap();
        let cache = ArtifactCache::new(dir.path().join("cache"));
        let file = dir.path().join("c.wasm");
        std::fs::write(&file, b"first").unwrap();

        // Hashed within a millisecond of its last change: a later write could share its timestamps.
        let seen = SeenFile::stat(&file).unwrap();
        let racy = SeenFile { checked_at_ns: seen.identity.ctime_ns + 1_000_000, ..seen.clone() };
        let d1 = "d1".repeat(32);
        cache.remember_file(&file, &racy, facts(&d1));
        assert!(cache.known_file(&file).is_none(), "a file changed just before its record is not trusted");

        // As if recorded well after the file's last change.
        let settled = settled(seen);
        cache.remember_file(&file, &settled, facts("../../elsewhere"));
        assert!(cache.known_file(&file).is_none(), "a digest that is not hex names no artifact");
        cache.remember_file(&file, &settled, facts(&d1));
        assert_eq!(cache.known_file(&file).unwrap().digest, d1);

        // Same size, new content and timestamps: the record no longer applies.
        std::fs::write(&file, b"other").unwrap();
        let f = std::fs::File::options().write(true).open(&file).unwrap();
        f.set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000)).unwrap();
        assert!(cache.known_file(&file).is_none(), "a changed file is hashed again");

        // Another file is another record.
        assert!(cache.known_file(&dir.path().join("missing.wasm")).is_none());
    }

    #[test]
    fn a_record_another_host_wrote_is_not_taken() {
        let dir = tempfile::tempdir().unwrap();
        let cache = ArtifactCache::new(dir.path().join("cache"));
        let file = dir.path().join("c.wasm");
        std::fs::write(&file, b"bytes").unwrap();
        let seen = SeenFile::stat(&file).unwrap();
        let settled = settled(seen);
        cache.remember_file(&file, &settled, facts(&"d1".repeat(32)));
        assert!(cache.known_file(&file).is_some());
        let record = cache.record_path(&file).unwrap();
        let written: serde_json::Value = serde_json::from_slice(&std::fs::read(&record).unwrap()).unwrap();
        let rewrite = |change: &dyn Fn(&mut serde_json::Map<String, serde_json::Value>)| {
            let mut json = written.as_object().unwrap().clone();
            change(&mut json);
            crate::atomic::write(&record, &serde_json::to_vec(&json).unwrap()).unwrap();
        };
        // One from before formats were recorded, without the autonaming fact.
        rewrite(&|json| {
            json.remove("format");
            json.remove("host");
            json.remove("autonaming");
        });
        assert!(cache.known_file(&file).is_none(), "a record of an older format");
        rewrite(&|json| {
            json.insert("host".into(), "0.0.1".into());
        });
        assert!(cache.known_file(&file).is_none(), "a record of another host version");
        rewrite(&|_| {});
        assert!(cache.known_file(&file).is_some(), "this host's record, rewritten as it was");
    }
}
