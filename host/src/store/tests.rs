use std::fs;

use semver::Version;

use super::*;

fn v(s: &str) -> Version {
    Version::parse(s).unwrap()
}

/// Distinct bytes per version (the store never parses them).
fn bytes(name: &str, version: &str) -> Vec<u8> {
    format!("\0asm component {name} {version}").into_bytes()
}

fn store_with(versions: &[(&str, &str)]) -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::new(dir.path().join("store"));
    for (name, version) in versions {
        store.install(name, &v(version), &bytes(name, version)).unwrap();
    }
    (dir, store)
}

fn pick(store: &Store, spec: &str) -> Result<String, StoreError> {
    store.lookup(&PackageSpec::parse(spec).unwrap()).map(|i| i.version.to_string())
}

const RANDOM: &[(&str, &str)] = &[
    ("random", "0.1.0"),
    ("random", "0.1.7"),
    ("random", "0.2.0"),
    ("random", "1.2.0"),
    ("random", "1.2.5"),
    ("random", "1.3.0"),
    ("random", "1.4.0-beta.1"),
    ("random", "2.0.0-rc.1"),
    ("other", "9.0.0"),
];

#[test]
fn lookup_picks_the_newest_compatible_version() {
    let (_dir, store) = store_with(RANDOM);
    assert_eq!(pick(&store, "random@^0.1").unwrap(), "0.1.7");
    assert_eq!(pick(&store, "random@0.1").unwrap(), "0.1.7", "a bare version is a caret requirement");
    assert_eq!(pick(&store, "random@^0.2").unwrap(), "0.2.0");
    assert_eq!(pick(&store, "random@~1.2").unwrap(), "1.2.5");
    assert_eq!(pick(&store, "random@^1").unwrap(), "1.3.0");
    assert_eq!(pick(&store, "random@=0.1.0").unwrap(), "0.1.0");
    assert_eq!(pick(&store, "random@=1.2.0").unwrap(), "1.2.0");
    assert_eq!(pick(&store, "random@*").unwrap(), "1.3.0");
    assert_eq!(pick(&store, "random").unwrap(), "1.3.0", "a bare name is `*`");
    assert_eq!(pick(&store, "random@>=0.1, <1").unwrap(), "0.2.0");
    assert_eq!(pick(&store, "other").unwrap(), "9.0.0");
}

#[test]
fn prereleases_only_when_the_requirement_names_one() {
    let (_dir, store) = store_with(RANDOM);
    // `*` and `^1` skip 1.4.0-beta.1 and 2.0.0-rc.1, newer though they are.
    assert_eq!(pick(&store, "random@*").unwrap(), "1.3.0");
    assert_eq!(pick(&store, "random@^1.3").unwrap(), "1.3.0");
    assert_eq!(pick(&store, "random@^1.4.0-beta").unwrap(), "1.4.0-beta.1");
    assert_eq!(pick(&store, "random@=2.0.0-rc.1").unwrap(), "2.0.0-rc.1");
    assert_eq!(pick(&store, "random@>=2.0.0-alpha").unwrap(), "2.0.0-rc.1");
    // A prerelease requirement does not admit other versions' prereleases.
    let err = pick(&store, "random@^2.1.0-alpha").unwrap_err();
    assert!(matches!(err, StoreError::NoMatch { .. }), "{err}");

    // Only prereleases installed: a plain requirement finds nothing, and says what there is.
    let (_dir, only_pre) = store_with(&[("beta", "0.3.0-alpha.2")]);
    let err = pick(&only_pre, "beta").unwrap_err();
    assert!(err.to_string().contains("installed: 0.3.0-alpha.2"), "{err}");
    assert_eq!(pick(&only_pre, "beta@^0.3.0-alpha").unwrap(), "0.3.0-alpha.2");
}

#[test]
fn lookup_failures_are_clear() {
    let (_dir, store) = store_with(RANDOM);
    let err = pick(&store, "random@^3").unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, StoreError::NoMatch { .. }), "{text}");
    assert!(text.contains("'random'") && text.contains("^3") && text.contains("1.3.0"), "{text}");
    let err = pick(&store, "missing").unwrap_err();
    assert!(matches!(err, StoreError::NoPackage { .. }), "{err}");
    assert!(err.to_string().contains("pulumi-wasm install"), "{err}");
}

#[test]
fn specs_parse() {
    let s = PackageSpec::parse("random@^0.1").unwrap();
    assert_eq!((s.name.as_str(), s.req.to_string().as_str()), ("random", "^0.1"));
    assert_eq!(PackageSpec::parse("random").unwrap().req, semver::VersionReq::STAR);
    assert_eq!(PackageSpec::parse("my-pkg_2@=1.0.0").unwrap().name, "my-pkg_2");
    for bad in ["", "@1", "Random", "../x", "a/b", "random.wasm", "random@", "random@^x", "2abc"] {
        assert!(PackageSpec::parse(bad).is_err(), "{bad:?} should not parse");
    }
    assert_eq!(parse_exact("random@0.1.0").unwrap(), ("random".into(), v("0.1.0")));
    assert_eq!(parse_exact("random@=0.1.0").unwrap(), ("random".into(), v("0.1.0")));
    for bad in ["random", "random@^0.1", "random@0.1", "../x@1.0.0"] {
        assert!(parse_exact(bad).is_err(), "{bad:?} should not parse");
    }
}

#[test]
fn install_lays_out_blobs_and_index_entries() {
    let (_dir, store) = store_with(&[]);
    let wasm = bytes("random", "0.1.0");
    let done = store.install("random", &v("0.1.0"), &wasm).unwrap();
    assert!(done.previous.is_none());
    let entry = done.installed;
    assert_eq!(entry.digest, digest(&wasm));
    assert_eq!(entry.size, wasm.len() as u64);
    assert_eq!(fs::read(store.root().join(format!("blobs/sha256/{}.wasm", entry.digest))).unwrap(), wasm);
    let index: serde_json::Value =
        serde_json::from_slice(&fs::read(store.root().join("packages/random/0.1.0.json")).unwrap()).unwrap();
    assert_eq!(index["digest"], format!("sha256:{}", entry.digest));
    assert_eq!(index["size"], wasm.len());
    assert_eq!(index["version"], "0.1.0");
    assert!(index["installed_at"].as_str().unwrap().ends_with('Z'));
    assert_eq!(store.read(&entry).unwrap(), wasm);
    assert_eq!(store.list(None).unwrap(), vec![entry.clone()]);
    assert_eq!(store.get("random", &v("0.1.0")).unwrap(), entry);
    assert!(matches!(store.get("random", &v("0.9.0")), Err(StoreError::NotInstalled { .. })));
    assert!(store.install("../evil", &v("1.0.0"), &wasm).is_err(), "names are path-safe");
}

#[test]
fn list_orders_by_name_then_newest_first() {
    let (_dir, store) = store_with(RANDOM);
    let all: Vec<String> = store.list(None).unwrap().iter().map(|i| format!("{}@{}", i.name, i.version)).collect();
    assert_eq!(
        all,
        [
            "other@9.0.0",
            "random@2.0.0-rc.1",
            "random@1.4.0-beta.1",
            "random@1.3.0",
            "random@1.2.5",
            "random@1.2.0",
            "random@0.2.0",
            "random@0.1.7",
            "random@0.1.0"
        ]
    );
    assert_eq!(store.list(Some("other")).unwrap().len(), 1);
    assert!(store.list(Some("nothing")).unwrap().is_empty());
    let empty = Store::new(_dir.path().join("never-created"));
    assert!(empty.list(None).unwrap().is_empty());
}

#[test]
fn leftover_temp_files_are_ignored() {
    let (_dir, store) = store_with(&[("random", "0.1.0")]);
    // What a crash between write and rename leaves: a torn temporary file.
    let package = store.root().join("packages/random");
    let blobs = store.root().join("blobs/sha256");
    fs::write(package.join(".tmp-4242-1-0"), b"{\"name\": \"random\", \"vers").unwrap();
    fs::write(blobs.join(".tmp-4242-2-0"), b"\0asm torn").unwrap();
    assert_eq!(store.versions("random").unwrap().len(), 1);
    assert_eq!(pick(&store, "random").unwrap(), "0.1.0");
    let entry = store.lookup(&PackageSpec::parse("random").unwrap()).unwrap();
    assert_eq!(store.read(&entry).unwrap(), bytes("random", "0.1.0"));
    // The next writer (holding the lock) clears them away.
    store.install("random", &v("0.2.0"), &bytes("random", "0.2.0")).unwrap();
    assert!(!package.join(".tmp-4242-1-0").exists());
    assert!(!blobs.join(".tmp-4242-2-0").exists());
    let names = |dir: &std::path::Path| -> Vec<String> {
        fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect()
    };
    assert!(names(&package).iter().all(|n| !n.starts_with(".tmp")), "no temp files stay behind");
    assert!(names(&blobs).iter().all(|n| !n.starts_with(".tmp")), "no temp files stay behind");
}

#[test]
fn a_tampered_blob_is_rejected() {
    let (_dir, store) = store_with(&[("random", "0.1.0")]);
    let entry = store.lookup(&PackageSpec::parse("random@^0.1").unwrap()).unwrap();
    let blob = store.blob_path(&entry.digest);
    let mut evil = fs::read(&blob).unwrap();
    evil[0] ^= 0xff;
    fs::write(&blob, &evil).unwrap();
    let err = store.read(&entry).unwrap_err();
    assert!(matches!(err, StoreError::DigestMismatch { .. }), "{err}");
    let text = err.to_string();
    assert!(text.contains(&entry.digest) && text.contains("corrupt") && text.contains("reinstall"), "{text}");
    // Truncated (same prefix, fewer bytes) is caught too.
    fs::write(&blob, &evil[..3]).unwrap();
    assert!(matches!(store.read(&entry), Err(StoreError::DigestMismatch { .. })));
    // Missing.
    fs::remove_file(&blob).unwrap();
    assert!(matches!(store.read(&entry), Err(StoreError::MissingBlob { .. })));
    // Reinstalling the same bytes repairs it.
    store.install("random", &v("0.1.0"), &bytes("random", "0.1.0")).unwrap();
    assert_eq!(store.read(&entry).unwrap(), bytes("random", "0.1.0"));
}

#[test]
fn a_tampered_index_entry_is_rejected_and_hides_nothing_else() {
    let (_dir, store) = store_with(&[("random", "0.1.0"), ("random", "0.2.0")]);
    let index = store.root().join("packages/random/0.1.0.json");
    let text = fs::read_to_string(&index).unwrap();
    let blob = store.blob_path(&store.get("random", &v("0.1.0")).unwrap().digest);
    fs::write(&index, text.replace("sha256:", "md5:")).unwrap();
    assert!(matches!(store.get("random", &v("0.1.0")), Err(StoreError::BadIndex { .. })));
    let listed: Vec<String> = store.versions("random").unwrap().iter().map(|i| i.version.to_string()).collect();
    assert_eq!(listed, ["0.2.0"], "the bad entry is left out, the others are listed");
    fs::write(&index, text.replace("\"0.1.0\"", "\"0.9.0\"")).unwrap();
    assert!(
        matches!(store.get("random", &v("0.1.0")), Err(StoreError::BadIndex { .. })),
        "an entry must sit at its version"
    );
    assert_eq!(pick(&store, "random").unwrap(), "0.2.0");
    // Removing another version keeps every blob the bad entry might name.
    let other = store.remove("random", &v("0.2.0")).unwrap();
    let other_blob = store.blob_path(&other.removed.unwrap().digest);
    assert!(!other.blob_deleted && other_blob.is_file(), "an unreadable entry might use it");
    // The bad entry itself can be removed; blobs stay (no entry names them,
    // as none names a pulled component kept for a pinned SDK).
    let bad = store.remove("random", &v("0.1.0")).unwrap();
    assert!(bad.removed.is_none() && !bad.blob_deleted);
    assert!(blob.is_file() && other_blob.is_file());
    assert!(store.list(None).unwrap().is_empty());
    assert!(!store.root().join("packages/random").exists());
}

#[test]
fn versions_differing_only_in_case_and_device_names_are_refused() {
    let (_dir, store) = store_with(&[("random", "1.0.0-rc1")]);
    let err = store.install("random", &v("1.0.0-RC1"), b"\0asm other").unwrap_err();
    assert!(err.to_string().contains("differs only in case"), "{err}");
    for name in ["con", "nul", "aux", "prn", "com1", "lpt9"] {
        assert!(store.install(name, &v("1.0.0"), b"\0asm x").is_err(), "{name}");
        assert!(validate_name(name).is_ok(), "{name}: one already in a store is still listed");
    }
    assert!(store.install("console", &v("1.0.0"), b"\0asm x").is_ok());
    assert!(store.install("com", &v("1.0.0"), b"\0asm x").is_ok());
}

#[test]
fn remove_keeps_shared_blobs() {
    let (_dir, store) = store_with(&[]);
    let same = bytes("random", "shared");
    let a = store.install("random", &v("0.1.0"), &same).unwrap().installed;
    let b = store.install("random", &v("0.1.1"), &same).unwrap().installed;
    let c = store.install("alias", &v("1.0.0"), &same).unwrap().installed;
    assert!(a.digest == b.digest && b.digest == c.digest);
    let blob = store.blob_path(&a.digest);

    let r = store.remove("random", &v("0.1.0")).unwrap();
    assert!(!r.blob_deleted && blob.is_file());
    assert_eq!(pick(&store, "random").unwrap(), "0.1.1");
    let r = store.remove("random", &v("0.1.1")).unwrap();
    assert!(!r.blob_deleted && blob.is_file(), "another package uses the same bytes");
    assert!(!store.root().join("packages/random").exists(), "an empty package directory goes");
    assert!(matches!(pick(&store, "random"), Err(StoreError::NoPackage { .. })));
    let r = store.remove("alias", &v("1.0.0")).unwrap();
    assert!(r.blob_deleted && !blob.exists(), "the last reference takes the blob with it");

    assert!(matches!(store.remove("alias", &v("1.0.0")), Err(StoreError::NotInstalled { .. })));
    assert!(store.list(None).unwrap().is_empty());
}

#[test]
fn reinstalling_a_version_replaces_it_and_collects_the_old_blob() {
    let (_dir, store) = store_with(&[("random", "0.1.0")]);
    let old = store.get("random", &v("0.1.0")).unwrap();
    let rebuilt = b"\0asm rebuilt".to_vec();
    let done = store.install("random", &v("0.1.0"), &rebuilt).unwrap();
    assert_eq!(done.previous.as_ref(), Some(&old));
    assert!(!store.blob_path(&old.digest).exists(), "nothing references the old bytes");
    assert_eq!(store.read(&done.installed).unwrap(), rebuilt);
    assert_eq!(store.list(None).unwrap().len(), 1);
}

#[test]
fn utc_formats_rfc3339() {
    assert_eq!(utc(0), "1970-01-01T00:00:00Z");
    assert_eq!(utc(951_782_400), "2000-02-29T00:00:00Z");
    assert_eq!(utc(1_795_310_489), "2026-11-22T01:21:29Z");
}

#[test]
fn put_blob_and_read_blob_round_trip_without_an_index_entry() {
    let (_dir, store) = store_with(&[]);
    let wasm = bytes("pulled", "1.0.0");
    let digest = store.put_blob(&wasm).unwrap();
    assert_eq!(digest, super::digest(&wasm));
    assert_eq!(store.read_blob(&digest).unwrap(), wasm);
    assert_eq!(store.put_blob(&wasm).unwrap(), digest, "putting it again is a no-op");
    assert!(store.list(None).unwrap().is_empty(), "a cached blob is not an installed package");
    let leftovers: Vec<_> = fs::read_dir(store.root().join("blobs/sha256")).unwrap().collect();
    assert_eq!(leftovers.len(), 1);

    // Installing the same bytes reuses the blob; removing the version deletes it.
    store.install("pulled", &v("1.0.0"), &wasm).unwrap();
    assert!(store.remove("pulled", &v("1.0.0")).unwrap().blob_deleted);
    assert!(matches!(store.read_blob(&digest), Err(StoreError::MissingBlob { .. })));
}

#[test]
fn read_blob_checks_the_digest() {
    let (_dir, store) = store_with(&[]);
    let digest = store.put_blob(b"\0asm cached").unwrap();
    fs::write(store.blob_path(&digest), b"\0asm evil!!").unwrap();
    let err = store.read_blob(&digest).unwrap_err().to_string();
    assert!(err.contains("corrupt") && err.contains(&digest), "{err}");
    // A corrupt blob is replaced by the next put.
    store.put_blob(b"\0asm cached").unwrap();
    assert_eq!(store.read_blob(&digest).unwrap(), b"\0asm cached");

    for bad in ["../../etc/passwd", "ABC", &digest.to_uppercase(), &digest[1..]] {
        assert!(matches!(store.read_blob(bad), Err(StoreError::BadDigest(_))), "{bad}");
    }
}

#[test]
fn removing_a_component_removes_its_compiled_artifacts() {
    let (_dir, store) = store_with(&[("random", "0.1.0"), ("random", "0.2.0")]);
    let digest_of = |version: &str| store.get("random", &v(version)).unwrap().digest;
    let (gone, kept) = (digest_of("0.1.0"), digest_of("0.2.0"));
    fs::create_dir_all(store.artifact_dir()).unwrap();
    for name in [format!("{gone}-0123.cwasm"), format!("{gone}-4567.cwasm"), format!("{kept}-0123.cwasm")] {
        fs::write(store.artifact_dir().join(name), b"artifact").unwrap();
    }
    store.remove("random", &v("0.1.0")).unwrap();
    let mut left = read_dir_names(&store.artifact_dir()).unwrap();
    left.sort();
    assert_eq!(left, vec![format!("{kept}-0123.cwasm")]);
}

#[test]
fn only_a_pending_record_can_be_approved() {
    let (_dir, store) = store_with(&[]);
    let id = digest(b"what was asked for");
    assert!(store.read_approval(&id, true).unwrap().is_none());
    assert!(matches!(store.approve(&id), Err(StoreError::BadSpec(m)) if m.contains("nothing asked for")));

    store.write_approval(&id, b"{\"grants\": 1}", false).unwrap();
    assert!(store.read_approval(&id, true).unwrap().is_none(), "pending is not approved");
    assert_eq!(store.approve(&id).unwrap(), b"{\"grants\": 1}");
    assert_eq!(store.read_approval(&id, true).unwrap().unwrap(), b"{\"grants\": 1}");
    assert!(store.read_approval(&id, false).unwrap().is_none(), "no longer pending");
    assert_eq!(store.approvals().unwrap(), std::slice::from_ref(&id));
    assert!(store.revoke(&id).unwrap());
    assert!(!store.revoke(&id).unwrap());
    assert!(store.read_approval(&id, true).unwrap().is_none() && store.approvals().unwrap().is_empty());

    // Ids name files: nothing but a digest gets that far.
    for bad in ["../../x", "ABC", ""] {
        assert!(matches!(store.read_approval(bad, true), Err(StoreError::BadDigest(_))), "{bad}");
        assert!(store.write_approval(bad, b"x", true).is_err(), "{bad}");
    }
}
