//! `oci://` sources: pulled with every digest verified, the bytes taken from
//! the store when it already holds them, recorded pinned by manifest digest
//! so a later run fetches exactly the same artifact even if the tag moves.

use super::GenericError;
use super::source::Fetched;
use crate::oci::{self, OciOptions, Progress, Reference};
use crate::store::Store;

/// `given`: the user gave this reference (the args form), rather than a
/// value recorded it (see [`OciOptions::scoped`]).
pub async fn pull(reference: &str, store: &Store, given: bool) -> Result<Fetched, GenericError> {
    let failed = |e: oci::OciError| GenericError::Source(format!("oci://{reference}: {e}"));
    let parsed: Reference = reference.parse().map_err(failed)?;
    let options = OciOptions::from_env().map_err(failed)?;
    let options = if given { options } else { options.scoped() };
    // Progress goes to the log: a plugin's stderr belongs to the engine.
    let progress = Progress::new(|t| tracing::info!("{t}"));
    let pulled = oci::pull(&parsed, &options, &progress, Some(store)).await.map_err(failed)?;
    Ok(Fetched {
        wasm: pulled.wasm.into(),
        digest: pulled.digest,
        source: format!("oci://{}", parsed.pinned(&pulled.manifest_digest)),
        in_store: pulled.cached,
    })
}
