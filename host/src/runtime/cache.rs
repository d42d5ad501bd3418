//! On-disk cache of precompiled components, so a warm start maps a file
//! instead of running Cranelift again.

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use wasmtime::Engine;
use wasmtime::component::Component;

use super::RuntimeError;

/// A directory of `<sha256 of the wasm>-<engine settings hash>.cwasm` files.
/// Only files this host wrote are ever loaded from it.
#[derive(Clone, Debug)]
pub struct ArtifactCache {
    dir: PathBuf,
}

impl ArtifactCache {
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        ArtifactCache { dir: dir.into() }
    }

    /// `$PULUMI_WASM_CACHE_DIR`, else `$XDG_CACHE_HOME/pulumi-wasm`, else `~/.cache/pulumi-wasm`.
    pub fn default_dir() -> Option<PathBuf> {
        if let Some(d) = std::env::var_os("PULUMI_WASM_CACHE_DIR") {
            return Some(PathBuf::from(d));
        }
        let base = std::env::var_os("XDG_CACHE_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
        Some(base.join("pulumi-wasm"))
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

    /// Loads the component whose SHA-256 is `digest` from the cache,
    /// compiling and storing it on a miss. Blocking: call from a blocking thread.
    pub fn load(&self, engine: &Engine, wasm: &[u8], digest: &str) -> Result<(Component, bool), RuntimeError> {
        let path = self.path_for(engine, digest);
        if path.is_file() {
            // SAFETY: the file was written by `store` below from `precompile_component`
            // of this engine configuration (the name carries both hashes).
            match unsafe { Component::deserialize_file(engine, &path) } {
                Ok(c) => return Ok((c, true)),
                Err(e) => tracing::warn!("discarding unreadable artifact {}: {e}", path.display()),
            }
        }
        let artifact = engine.precompile_component(wasm).map_err(|e| RuntimeError::NotAComponent(format!("{e:#}")))?;
        if let Err(e) = self.store(&path, &artifact) {
            tracing::warn!("could not cache {}: {e}", path.display());
        }
        // SAFETY: produced just now by this engine.
        let component =
            unsafe { Component::deserialize(engine, &artifact) }.map_err(|e| RuntimeError::Cache(format!("{e:#}")))?;
        Ok((component, false))
    }

    /// Writes atomically: a temporary file in the same directory, then rename.
    fn store(&self, path: &Path, bytes: &[u8]) -> std::io::Result<()> {
        std::fs::create_dir_all(&self.dir)?;
        let tmp = tempfile_in(&self.dir)?;
        std::fs::write(&tmp, bytes)?;
        std::fs::rename(&tmp, path).inspect_err(|_| {
            let _ = std::fs::remove_file(&tmp);
        })
    }
}

fn tempfile_in(dir: &Path) -> std::io::Result<PathBuf> {
    let nonce =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or_default();
    Ok(dir.join(format!(".tmp-{}-{nonce}", std::process::id())))
}

/// Lower-case hex SHA-256.
pub fn digest(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}
