//! The provider-store commands (`install`, `ls`, `remove`, `approve`) and how every
//! command turns its component argument into bytes: a file that exists, else
//! `name@requirement` from the store.

use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, bail};
use pulumi_wasm_host::generic::approval::Record;
use pulumi_wasm_host::store::{self, PackageSpec, Store};

/// A component's bytes and how to name it in messages.
pub struct Source {
    pub wasm: Arc<[u8]>,
    pub label: String,
}

/// `arg` from a registry if it starts with `oci://`, as a path if that file
/// exists, else as `name[@requirement]` in the store (the newest installed
/// version the requirement accepts).
pub fn load_component(arg: &Path) -> anyhow::Result<Source> {
    // `oci://` always means a registry, whatever files exist.
    if let Some(reference) = arg.to_str().filter(|s| s.starts_with(pulumi_wasm_host::oci::SCHEME)) {
        return crate::registry::load(reference);
    }
    let read_file = || -> anyhow::Result<Source> {
        let wasm = std::fs::read(arg).with_context(|| format!("reading {}", arg.display()))?;
        Ok(Source { wasm: wasm.into(), label: arg.display().to_string() })
    };
    if arg.exists() {
        return read_file();
    }
    // Not a file; a package spec never contains `/` or `.` in its name.
    let Some(spec) = arg.to_str().and_then(|s| PackageSpec::parse(s).ok()) else {
        return read_file();
    };
    let store = Store::open_default()?;
    let entry = store
        .lookup(&spec)
        .with_context(|| format!("{}: no such file, nor in the store {}", arg.display(), store.root().display()))?;
    let wasm = store.read(&entry)?;
    tracing::debug!("{spec} resolved to {} {} (sha256:{})", entry.name, entry.version, entry.digest);
    Ok(Source { wasm: wasm.into(), label: format!("{} {} from the store", entry.name, entry.version) })
}

/// `pulumi-wasm install`: `name` and `version` are what the component itself reported.
pub fn install(component: &Path, wasm: &[u8], name: &str, version: &semver::Version) -> anyhow::Result<()> {
    let store = Store::open_default()?;
    let done = store.install(name, version, wasm)?;
    let new = &done.installed;
    match &done.previous {
        Some(prev) if prev.digest == new.digest => {
            println!("{name} {version} was already installed (sha256:{})", new.digest);
        }
        Some(prev) => {
            println!(
                "reinstalled {name} {version}: sha256:{} (was sha256:{}), {}",
                new.digest,
                prev.digest,
                size(new.size)
            );
            // An SDK pins the bytes it was generated for: the old ones are gone from the store.
            println!(
                "projects whose SDK was generated for the replaced build refuse this one until \
                 `pulumi package add wasm {name}@={version}` is run again in them"
            );
        }
        None => println!(
            "installed {name} {version} from {} into {}: sha256:{}, {}",
            component.display(),
            store.root().display(),
            new.digest,
            size(new.size)
        ),
    }
    println!("use it as {name}@{version} (or {name}@^{version}), e.g. `pulumi-wasm serve {name}@^{version}`");
    Ok(())
}

/// `pulumi-wasm ls [name | name@requirement]`.
pub fn ls(filter: Option<&str>) -> anyhow::Result<()> {
    let store = Store::open_default()?;
    let entries = match filter {
        None => store.list(None)?,
        Some(f) if f.contains('@') => {
            let spec = PackageSpec::parse(f)?;
            store.list(Some(&spec.name))?.into_iter().filter(|e| spec.req.matches(&e.version)).collect()
        }
        Some(name) => {
            store::validate_name(name)?;
            store.list(Some(name))?
        }
    };
    if entries.is_empty() {
        match filter {
            Some(f) => eprintln!("nothing in the store {} matches {f}", store.root().display()),
            None => eprintln!("the store {} is empty", store.root().display()),
        }
        return Ok(());
    }
    let rows: Vec<[String; 5]> = entries
        .iter()
        .map(|e| {
            [
                e.name.clone(),
                e.version.to_string(),
                format!("sha256:{}", &e.digest[..12]),
                size(e.size),
                e.installed_at.clone(),
            ]
        })
        .collect();
    let header = ["NAME", "VERSION", "DIGEST", "SIZE", "INSTALLED"].map(String::from);
    let mut widths = [0; 5];
    for row in std::iter::once(&header).chain(&rows) {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.len());
        }
    }
    for row in std::iter::once(&header).chain(&rows) {
        let line: Vec<String> = row.iter().zip(widths).map(|(cell, w)| format!("{cell:<w$}")).collect();
        println!("{}", line.join("  ").trim_end());
    }
    Ok(())
}

/// `pulumi-wasm remove name@version`.
pub fn remove(spec: &str) -> anyhow::Result<()> {
    let (name, version) = store::parse_exact(spec)?;
    let store = Store::open_default()?;
    let done = store.remove(&name, &version)?;
    match done.removed {
        Some(removed) => {
            let blob = if done.blob_deleted { "deleted" } else { "kept: another installed version uses it" };
            println!("removed {name} {version} (sha256:{}: {blob})", removed.digest);
        }
        None => println!("removed {name} {version}, whose entry could not be read (its component, if any, is kept)"),
    }
    Ok(())
}

/// `pulumi-wasm approve [--list | --revoke | --yes] ID...`.
pub fn approvals(ids: &[String], list: bool, revoke: bool, yes: bool) -> anyhow::Result<()> {
    let store = Store::open_default()?;
    if list {
        for id in store.approvals()? {
            match store.read_approval(&id, true).ok().flatten().and_then(|r| Record::named(&r, &id)) {
                Some(r) => println!("{id}  {} ({}): {}", r.package(), r.origin(), r.grants.describe().join(", ")),
                None => println!("{id}  (not readable or not what its name says: not used)"),
            }
        }
        return Ok(());
    }
    if revoke {
        for id in ids {
            let done = if store.revoke(id)? { "revoked" } else { "was not approved" };
            println!("{id} {done}");
        }
        return Ok(());
    }
    use std::io::IsTerminal;
    let stdin = std::io::stdin();
    approve(&store, ids, if yes { Answer::Yes } else { Answer::Ask(stdin.is_terminal().then(|| stdin.lock())) })
}

/// How `approve` gets the user's word for each id.
enum Answer {
    /// `--yes`.
    Yes,
    /// A line read from the terminal, if there is one.
    Ask(Option<std::io::StdinLock<'static>>),
}

/// Shows what a refused package asked for, then approves it once the user
/// says so.
fn approve(store: &Store, ids: &[String], mut answer: Answer) -> anyhow::Result<()> {
    for id in ids {
        let pending = store.read_approval(id, false)?;
        if pending.is_none() && store.read_approval(id, true)?.is_some() {
            println!("{id} is approved already");
            continue;
        }
        let Some(pending) = pending else {
            bail!(
                "nothing asked for approval {id} with this store ({}); it is named when a package is refused",
                store.root().display()
            );
        };
        // The file must hold what its name says.
        let Some(record) = Record::named(&pending, id) else {
            bail!("the request kept for {id} is not for what that id names; nothing was approved");
        };
        println!("{} ({}) asks for:", record.package(), record.origin());
        for grant in record.grants.describe() {
            println!("  {grant}");
        }
        if let Answer::Ask(terminal) = &mut answer {
            let Some(input) = terminal else {
                bail!("stdin is not a terminal to ask on: add --yes to approve what is shown above");
            };
            if !confirmed(input, &mut std::io::stdout())? {
                println!("{id} was not approved");
                continue;
            }
        }
        store.approve(id)?;
        println!("approved {id}");
    }
    Ok(())
}

/// Asks `Approve? [y/N]` on `out` and reads the answer from `input`.
fn confirmed(input: &mut impl std::io::BufRead, out: &mut impl std::io::Write) -> anyhow::Result<bool> {
    write!(out, "Approve these grants? [y/N] ")?;
    out.flush()?;
    let mut line = String::new();
    input.read_line(&mut line)?;
    Ok(matches!(line.trim().to_ascii_lowercase().as_str(), "y" | "yes"))
}

fn size(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 20 => format!("{:.1} MiB", b as f64 / f64::from(1 << 20)),
        b if b >= 1 << 10 => format!("{:.1} KiB", b as f64 / f64::from(1 << 10)),
        b => format!("{b} B"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_yes_approves() {
        let asked = |answer: &str| {
            let mut out = Vec::new();
            let yes = confirmed(&mut answer.as_bytes(), &mut out).unwrap();
            assert_eq!(String::from_utf8(out).unwrap(), "Approve these grants? [y/N] ");
            yes
        };
        for yes in ["y\n", "Y\n", "yes\n", " YES \r\n"] {
            assert!(asked(yes), "{yes:?}");
        }
        for no in ["\n", "", "n\n", "no\n", "yess\n", "y es\n", "ok\n"] {
            assert!(!asked(no), "{no:?}");
        }
    }
}
