//! Where a parameterized component comes from: a file, the provider store,
//! or an OCI registry; and, for the value form, getting exactly the pinned
//! bytes back (from the store's content-addressed blobs first).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::GenericError;
use super::param::Pinned;
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

/// The args form: whatever `source` names now.
pub async fn fetch(source: &str, store: &Store) -> Result<Fetched, GenericError> {
    match kind(source) {
        Kind::Path(path) => {
            let wasm = blocking(move || {
                std::fs::read(&path)
                    .map(|w| (w, path.canonicalize().unwrap_or(path.clone())))
                    .map_err(|e| GenericError::Source(format!("reading {}: {e}", path.display())))
            })
            .await?;
            let (wasm, path) = wasm;
            let digest = store::digest(&wasm);
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
        Kind::Oci(reference) => super::oci::pull(&reference, store).await,
    }
}

/// The value form: exactly the bytes `pinned` names. The store's blobs are
/// the cache (the args call put them there); otherwise the recorded source
/// is fetched again (`in_store` false: the caller keeps them with [`cache`]).
/// Either way the digest is checked.
pub async fn fetch_pinned(pinned: &Pinned, store: &Store) -> Result<Fetched, GenericError> {
    let hex = pinned.digest.trim_start_matches("sha256:").to_owned();
    let cached = {
        let (store, hex) = (store.clone(), hex.clone());
        blocking(move || Ok(store.read_blob(&hex))).await?
    };
    let fetched = match cached {
        Ok(wasm) => {
            Fetched { digest: store::digest(&wasm), wasm: wasm.into(), source: pinned.source.clone(), in_store: true }
        }
        Err(e) => {
            tracing::debug!("sha256:{hex} is not in the store ({e}); fetching {}", pinned.source);
            fetch(&pinned.source, store).await.map_err(|e| {
                GenericError::Source(format!(
                    "the parameter pins {} ({} {}), which is not in the store {} and could not be fetched again: {e}",
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

/// Keeps `wasm` in the store's blobs so value-form runs find it by digest
/// even after the file moves or the registry goes away. Best effort.
pub async fn cache(wasm: Arc<[u8]>, store: &Store) {
    let store = store.clone();
    if let Err(e) = blocking(move || store.put_blob(&wasm).map_err(GenericError::from)).await {
        tracing::warn!("could not keep the component in the store: {e}");
    }
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, GenericError> + Send + 'static,
) -> Result<T, GenericError> {
    tokio::task::spawn_blocking(f).await.map_err(|e| GenericError::Source(format!("reading the component: {e}")))?
}
