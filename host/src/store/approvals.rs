//! Approvals: which grant sets this machine lets parameterized packages run
//! with. The store keeps the records and knows nothing of their content
//! beyond bytes and an id (the caller's hash of what it approves).
//!
//! ```text
//! approvals/<id>.json           approved (0644, believed only if no one else can have written it)
//! approvals/pending/<id>.json   asked for and refused; `approve` moves it up
//! ```

use std::fs;
use std::io;
use std::path::PathBuf;

use super::{Store, StoreError, check_digest, io_err, read_dir_names};
use crate::trust;

/// A record larger than this is not one of ours.
const MAX_RECORD: u64 = 1 << 20;

impl Store {
    fn approvals_dir(&self, approved: bool) -> PathBuf {
        let dir = self.root.join("approvals");
        if approved { dir } else { dir.join("pending") }
    }

    /// Where the record with this id is (or would be) kept.
    pub fn approval_path(&self, id: &str, approved: bool) -> Result<PathBuf, StoreError> {
        check_digest(id)?;
        Ok(self.approvals_dir(approved).join(format!("{id}.json")))
    }

    /// Writes the record `id`, approved or pending.
    pub fn write_approval(&self, id: &str, record: &[u8], approved: bool) -> Result<PathBuf, StoreError> {
        let path = self.approval_path(id, approved)?;
        crate::atomic::write(&path, record).map_err(io_err("writing", &path))?;
        Ok(path)
    }

    /// The record `id`, approved or pending; `None` when there is none.
    /// One that someone else can have written is refused (see `trust::open`).
    pub fn read_approval(&self, id: &str, approved: bool) -> Result<Option<Vec<u8>>, StoreError> {
        let path = self.approval_path(id, approved)?;
        if !path.exists() {
            return Ok(None);
        }
        let file = trust::open(&path).map_err(|why| StoreError::BadIndex { path: path.clone(), why })?;
        let mut bytes = Vec::new();
        io::Read::read_to_end(&mut io::Read::take(file, MAX_RECORD + 1), &mut bytes)
            .map_err(io_err("reading", &path))?;
        if bytes.len() as u64 > MAX_RECORD {
            return Err(StoreError::BadIndex { path, why: "larger than an approval record".into() });
        }
        Ok(Some(bytes))
    }

    /// The ids of the approved records, sorted.
    pub fn approvals(&self) -> Result<Vec<String>, StoreError> {
        let mut ids: Vec<String> = read_dir_names(&self.approvals_dir(true))?
            .into_iter()
            .filter_map(|n| n.strip_suffix(".json").map(str::to_owned))
            .filter(|id| check_digest(id).is_ok())
            .collect();
        ids.sort();
        Ok(ids)
    }

    /// Takes back the approval `id`; false if there was none.
    pub fn revoke(&self, id: &str) -> Result<bool, StoreError> {
        let path = self.approval_path(id, true)?;
        match fs::remove_file(&path) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(io_err("removing", &path)(e)),
        }
    }

    /// Approves the pending record `id`; returns it. Only what this machine
    /// was asked for (and showed) can be approved, never a bare id.
    pub fn approve(&self, id: &str) -> Result<Vec<u8>, StoreError> {
        let record = self.read_approval(id, false)?.ok_or_else(|| {
            StoreError::BadSpec(format!(
                "nothing asked for approval {id} with this store ({}); it is named when a package is refused",
                self.root.display()
            ))
        })?;
        self.write_approval(id, &record, true)?;
        let _ = fs::remove_file(self.approval_path(id, false)?);
        Ok(record)
    }
}
