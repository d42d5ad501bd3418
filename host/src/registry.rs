//! The OCI registry commands (`push`, `pull`) and `oci://` component arguments.

use std::future::Future;
use std::path::Path;

use pulumi_wasm_host::oci::{self, OciOptions, Progress, Pulled, Reference};
use pulumi_wasm_host::store::Store;

use crate::commands::{self, Source};

/// `pulumi-wasm push`: `name` and `version` are what the component itself reported.
pub async fn push(
    source: &Source,
    reference: &str,
    name: &str,
    version: &semver::Version,
    options: &OciOptions,
) -> anyhow::Result<()> {
    let reference: Reference = reference.parse()?;
    let version = version.to_string();
    let pushed = oci::push(&reference, &source.wasm, name, &version, options, &Progress::stderr()).await?;
    let already = if pushed.uploaded { "" } else { " (the registry already had the component's bytes)" };
    println!("pushed {name} {version} ({}) to {}{already}", source.label, pushed.reference);
    println!("digest: sha256:{}", pushed.manifest_digest);
    println!("pinned: {}", pushed.pinned);
    Ok(())
}

/// The first half of `pulumi-wasm pull`: the verified component (from the
/// store when it already holds those bytes); the caller identifies and installs it.
pub async fn pull(reference: &str, options: &OciOptions) -> anyhow::Result<(Reference, Pulled)> {
    let reference: Reference = reference.parse()?;
    let store = Store::open_default()?;
    let pulled = oci::pull(&reference, options, &Progress::stderr(), Some(&store)).await?;
    let cached = if pulled.cached { " (component bytes already in the store)" } else { "" };
    println!("pulled {reference}: manifest sha256:{}{cached}", pulled.manifest_digest);
    Ok((reference, pulled))
}

/// The second half: installs under the name and version the component itself reported.
pub fn install(reference: &Reference, pulled: &Pulled, name: &str, version: &semver::Version) -> anyhow::Result<()> {
    let version_text = version.to_string();
    // The annotations are the pusher's word; the component's own answer is what gets installed.
    if pulled.name.as_deref().is_some_and(|n| n != name) || pulled.version.as_deref().is_some_and(|v| v != version_text)
    {
        eprintln!(
            "warning: {reference} is annotated {} {} but the component says {name} {version}",
            pulled.name.as_deref().unwrap_or("?"),
            pulled.version.as_deref().unwrap_or("?")
        );
    }
    commands::install(Path::new(&reference.to_string()), &pulled.wasm, name, version)
}

/// An `oci://` component argument: pulled (the bytes from the store when it
/// has them), then kept in the store by digest for the next time.
pub fn load(text: &str) -> anyhow::Result<Source> {
    let reference: Reference = text.parse()?;
    let options = OciOptions::from_env()?;
    let store = Store::open_default().ok();
    let pulled = block_on(oci::pull(&reference, &options, &Progress::stderr(), store.as_ref()))??;
    if let Some(store) = store.as_ref().filter(|_| !pulled.cached)
        && let Err(e) = store.put_blob(&pulled.wasm)
    {
        tracing::warn!("not caching {reference}: {e}");
    }
    Ok(Source { wasm: pulled.wasm.into(), label: format!("{reference} (sha256:{})", pulled.digest) })
}

/// Runs `future` from synchronous code, which `load_component` is: called
/// inside the CLI's multi-thread runtime (`info`), on one of its blocking
/// threads (`serve`), or outside any runtime (`pack`, `grants`).
fn block_on<F: Future>(future: F) -> anyhow::Result<F::Output> {
    match tokio::runtime::Handle::try_current() {
        Ok(handle) => Ok(tokio::task::block_in_place(|| handle.block_on(future))),
        Err(_) => Ok(tokio::runtime::Builder::new_current_thread().enable_all().build()?.block_on(future)),
    }
}
