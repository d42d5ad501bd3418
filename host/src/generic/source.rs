//! Where a parameterized component comes from: a file, the provider store,
//! or an OCI registry; and, for the value form, getting exactly the pinned
//! bytes back (from the store's content-addressed blobs first).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::GenericError;
use super::param::Pinned;
use crate::runtime::MAX_COMPONENT_BYTES;
use crate::store::{self, PackageSpec, Store};

/// A component's bytes, their digest, and how to find them again.
pub struct Fetched {
    pub wasm: Arc<[u8]>,
    /// Lower-case hex SHA-256.
    pub digest: String,
    /// The source to record: an absolute path, `name@=version`, or an OCI
    /// reference pinned by digest.
    pub source: String,
    /// The bytes came from the store's blobs, so there is nothing to keep.
    pub in_store: bool,
}

enum Kind {
    Path(PathBuf),
    Store(PackageSpec),
    Oci(String),
}

/// `oci://` always means a registry; an existing file is a file; otherwise
/// `name[@requirement]` from the store.
fn kind(source: &str) -> Kind {
    if let Some(reference) = source.strip_prefix("oci://") {
        return Kind::Oci(reference.to_owned());
    }
    let path = Path::new(source);
    if path.exists() || source.contains('/') || source.ends_with(".wasm") {
        return Kind::Path(path.to_owned());
    }
    match PackageSpec::parse(source) {
        Ok(spec) => Kind::Store(spec),
        Err(_) => Kind::Path(path.to_owned()),
    }
}

/// Whatever `source` names now; `given` when the user gave it (the args
/// form), not a value.
pub async fn fetch(source: &str, store: &Store, given: bool) -> Result<Fetched, GenericError> {
    match kind(source) {
        Kind::Path(path) => {
            let (wasm, digest, path) = blocking(move || {
                let wasm = read_component(&path)?;
                let digest = store::digest(&wasm);
                Ok((wasm, digest, super::project::real(&path).unwrap_or(path)))
            })
            .await?;
            Ok(Fetched { wasm: wasm.into(), digest, source: path.display().to_string(), in_store: false })
        }
        Kind::Store(spec) => {
            let store = store.clone();
            blocking(move || {
                let entry = store.lookup(&spec)?;
                let wasm = store.read(&entry)?;
                Ok(Fetched {
                    wasm: wasm.into(),
                    digest: entry.digest,
                    source: format!("{}@={}", entry.name, entry.version),
                    in_store: true,
                })
            })
            .await
        }
        Kind::Oci(reference) => super::oci::pull(&reference, store, given).await,
    }
}

/// The value form: exactly the bytes `pinned` names. The store's blobs are
/// the cache (the args call put them there); otherwise the recorded source
/// is fetched again (`in_store` false: the caller keeps them with [`cache`]).
/// Either way the digest is checked.
pub async fn fetch_pinned(pinned: &Pinned, store: &Store) -> Result<Fetched, GenericError> {
    let hex = pinned.digest.trim_start_matches("sha256:").to_owned();
    let cached = {
        let (store, hex, source) = (store.clone(), hex.clone(), pinned.source.clone());
        // The store checks a blob against its digest as it reads it.
        blocking(move || {
            let cached = store.read_blob(&hex).map(|wasm| (wasm, hex.clone()));
            if let Ok((wasm, _)) = &cached {
                note_rebuilt(&source, wasm, &hex);
            }
            Ok(cached)
        })
        .await?
    };
    let fetched = match cached {
        Ok((wasm, digest)) => Fetched { digest, wasm: wasm.into(), source: pinned.source.clone(), in_store: true },
        Err(e) => {
            tracing::debug!("sha256:{hex} is not in the store ({e}); fetching {}", pinned.source);
            fetch(&pinned.source, store, false).await.map_err(|e| {
                GenericError::Source(format!(
                    "the parameter pins {} ({} {}), which is not in the store {} and could not be fetched again: {e}; \
                     `pulumi-wasm install` that build, or run `pulumi package add wasm` again for the one you have",
                    pinned.digest,
                    pinned.name,
                    pinned.version,
                    store.root().display()
                ))
            })?
        }
    };
    if fetched.digest != hex {
        return Err(GenericError::DigestMismatch {
            from: pinned.source.clone(),
            pinned: pinned.digest.clone(),
            found: format!("sha256:{}", fetched.digest),
        });
    }
    Ok(fetched)
}

/// Warns when the file a package was added from has changed since: the
/// value pins the bytes it had then (what makes a run reproducible), so a
/// rebuilt component is not what runs until it is added again.
/// `pinned` (the store checked it against its digest) is compared with the
/// file's bytes rather than hashing them again: a start reads the file
/// either way, and comparing costs a fraction of SHA-256.
fn note_rebuilt(source: &str, pinned: &[u8], pinned_hex: &str) {
    let Kind::Path(path) = kind(source) else { return };
    let Ok(now) = read_component(&path) else { return };
    if now != pinned {
        tracing::warn!(
            "{} has changed since `pulumi package add` pinned sha256:{pinned_hex}; the pinned build runs. \
             To use the new one: pulumi package add wasm {}",
            path.display(),
            path.display()
        );
    }
}

/// Keeps `wasm` in the store's blobs so value-form runs find it by digest
/// even after the file moves or the registry goes away. Best effort.
pub async fn cache(wasm: Arc<[u8]>, store: &Store) {
    let store = store.clone();
    if let Err(e) = blocking(move || store.put_blob(&wasm).map_err(GenericError::from)).await {
        tracing::warn!("could not keep the component in the store: {e}");
    }
}

/// A component file: a regular file no larger than the host loads, read
/// whole (not a device or a pipe, which a path in a Parameterize value could
/// name: `/dev/zero` would never end, a FIFO would never answer).
fn read_component(path: &Path) -> Result<Vec<u8>, GenericError> {
    use std::io::Read;
    let failed = |e: &dyn std::fmt::Display| GenericError::Source(format!("reading {}: {e}", path.display()));
    let mut open = std::fs::OpenOptions::new();
    open.read(true);
    // Opening a FIFO waits for a writer; without waiting, it is refused below.
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut open, libc::O_NONBLOCK);
    let file = open.open(path).map_err(|e| failed(&e))?;
    let meta = file.metadata().map_err(|e| failed(&e))?;
    if !meta.is_file() {
        return Err(failed(&"not a regular file"));
    }
    if meta.len() > MAX_COMPONENT_BYTES as u64 {
        return Err(failed(&format!("{} bytes is over the {MAX_COMPONENT_BYTES}-byte limit", meta.len())));
    }
    let mut wasm = Vec::with_capacity(meta.len() as usize);
    // Bounded again while reading: the file may grow meanwhile.
    file.take(MAX_COMPONENT_BYTES as u64 + 1).read_to_end(&mut wasm).map_err(|e| failed(&e))?;
    if wasm.len() > MAX_COMPONENT_BYTES {
        return Err(failed(&format!("it grew over the {MAX_COMPONENT_BYTES}-byte limit while read")));
    }
    Ok(wasm)
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, GenericError> + Send + 'static,
) -> Result<T, GenericError> {
    tokio::task::spawn_blocking(f).await.map_err(|e| GenericError::Source(format!("reading the component: {e}")))?
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_regular_files_within_the_limit_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let small = dir.path().join("small.wasm");
        std::fs::write(&small, b"\0asm").unwrap();
        assert_eq!(read_component(&small).unwrap(), b"\0asm");
        // Sparse: as large as it says, without the bytes.
        let big = dir.path().join("big.wasm");
        std::fs::File::create(&big).unwrap().set_len(MAX_COMPONENT_BYTES as u64 + 1).unwrap();
        assert!(read_component(&big).unwrap_err().to_string().contains("over the"));
        assert!(read_component(dir.path()).is_err(), "a directory");
        #[cfg(unix)]
        assert!(read_component(Path::new("/dev/zero")).unwrap_err().to_string().contains("not a regular file"));
        // A FIFO no one writes to: refused, not waited on.
        #[cfg(unix)]
        {
            let fifo = dir.path().join("fifo.wasm");
            let name = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
            // SAFETY: `name` is a NUL-terminated path that outlives the call.
            assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
            let (tx, rx) = std::sync::mpsc::channel();
            std::thread::spawn(move || tx.send(read_component(&fifo).map(drop)));
            let read = rx.recv_timeout(std::time::Duration::from_secs(10)).expect("refused without waiting");
            assert!(read.unwrap_err().to_string().contains("not a regular file"));
        }
    }
}
