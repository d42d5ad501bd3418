//! What a guest keeps in the host through its handles, counted against its
//! instance's memory limit together with its linear memory.
//!
//! wasmtime bounds how many handles an instance holds (`state::MAX_RESOURCES`)
//! but not what each holds: an outgoing request buffers the body written to
//! it, a fields handle its headers, a file stream a read, a directory
//! listing every name. Without a count, a guest with no grant at all could
//! keep 10,000 unsent requests of 2 MiB each. So the constructors of those
//! handles are replaced by ones that first charge the most the handle (and
//! what can come of it) may hold; the charge must fit beside linear memory
//! in the instance's limit, or the guest ends as when its memory cannot
//! grow. Drops are not seen here: the charge is a running total, counted
//! again from the handles still alive only when something would not fit,
//! so what a guest dropped comes back at the next count, and what it keeps
//! stays charged. Each charge is a worst case: an instance needs room for
//! it beside its linear memory's high-water mark (~0.7 MiB for each request
//! it has open at once).

use std::any::Any;
use std::collections::BTreeMap;
use std::sync::Arc;

use wasmtime::StoreContextMut;
use wasmtime::component::{Linker, LinkerInstance, Resource};
use wasmtime_wasi::filesystem::{Descriptor, WasiFilesystemCtxView, WasiFilesystemView};
use wasmtime_wasi::p2::bindings::filesystem::types::{
    DescriptorFlags, ErrorCode as FsErrorCode, HostDescriptor, OpenFlags, PathFlags,
};
use wasmtime_wasi::p2::{DynInputStream, DynOutputStream, FsResult, ReaddirIterator};
use wasmtime_wasi_http::FieldMap;
use wasmtime_wasi_http::WasiHttpView;
use wasmtime_wasi_http::p2::bindings::http::types::{
    HeaderError, HostFields, HostOutgoingRequest as NewRequest, HostOutgoingResponse as NewResponse,
};
use wasmtime_wasi_http::p2::body::{HostFutureTrailers, HostIncomingBody, HostOutgoingBody};
use wasmtime_wasi_http::p2::types::{
    HostFutureIncomingResponse, HostIncomingResponse, HostOutgoingRequest, HostOutgoingResponse,
};

use super::state::{HostState, MAX_FIELDS_BYTES};

/// Bytes of one write to an outgoing body, and what one body buffers at
/// most: two writes (wasmtime's channel holds one more than the chunks it
/// is told to buffer, here one). wasmtime's default chunk is 1 MiB.
pub(super) const BODY_CHUNK: usize = 64 << 10;
/// The most one hyper connection reads ahead into its buffer: a response
/// head must fit (servers take 8-16 KiB). hyper's default is ~400 KiB.
pub(super) const READ_BUFFER: usize = 64 << 10;

/// One fields handle: its headers (`MAX_FIELDS_BYTES`) and the map around them.
const FIELDS: usize = MAX_FIELDS_BYTES + (1 << 10);
/// An outgoing request or response: its body's buffer (two chunks), a path
/// of up to 64 KiB, its headers (moved in from a fields handle) and the rest.
const MESSAGE: usize = 256 << 10;
/// An open connection, held by whichever of a request's future, response,
/// body or trailers the guest keeps (wasmtime ends it when they go): the
/// request body still to send (two chunks), hyper's write buffer (its limit
/// and a chunk) and read buffer, TLS's buffers (~100 KiB), the socket.
const CONNECTION: usize = 512 << 10;
/// A response's head, or its trailers: hyper reads either into its buffer.
const RESPONSE_PART: usize = READ_BUFFER;
/// A file or body stream: wasmtime-wasi reads and writes files 64 KiB at a
/// time, and a response body's stream holds one frame of the read buffer.
const STREAM: usize = 64 << 10;
/// Charged for an outgoing request or response when it is made: the most
/// it and what can come of it hold at once. Sent, it becomes a connection,
/// with a response's head, the headers handle read from it, the body's
/// stream, the stream and body the request's body is still written
/// through, and the small handles around them.
const CHAIN: usize = CONNECTION + RESPONSE_PART + FIELDS + 2 * STREAM + BODY + 4 * SMALL;
/// An outgoing body whose request is gone: its channel's ends.
const BODY: usize = 2 << 10;
/// Descriptors one instance may hold at once (each an open file of the
/// host's, whose number the operating system bounds for the whole process).
const MAX_DESCRIPTORS: usize = 256;
/// Any other handle (a pollable, a descriptor, options): its slot and box.
const SMALL: usize = 128;
/// One directory entry besides its name: wasmtime keeps each as a `String`
/// and a type inside a `Result`, in a `Vec` grown by doubling, each name
/// allocated on its own.
const ENTRY: usize = 96;

/// The running charge of one instance.
#[derive(Debug, Default)]
pub(super) struct Charges {
    /// At least what the live handles may hold: exact after a count, then
    /// only growing until the next.
    held: usize,
    /// Directory listings by handle, with what each was charged: their size
    /// is the directory's, which the table cannot tell.
    listings: BTreeMap<u32, usize>,
}

impl HostState {
    /// Makes room for `bytes` more in the host, beside linear memory; ends
    /// the guest as a refused memory growth does when they do not fit.
    pub(super) fn charge(&mut self, bytes: usize) -> wasmtime::Result<()> {
        if !self.fits(bytes) {
            self.recount();
            if !self.fits(bytes) {
                self.limits.refused = Some(super::state::MemoryCap::Instance(self.limits.limit));
                wasmtime::bail!(
                    "the host would hold {} KiB more for this instance's handles, beside {} KiB in them \
                     and {} KiB of linear memory, over its memory limit",
                    bytes >> 10,
                    self.charges.held >> 10,
                    self.limits.memory >> 10,
                );
            }
        }
        self.charges.held += bytes;
        Ok(())
    }

    fn fits(&self, bytes: usize) -> bool {
        self.limits.memory.saturating_add(self.charges.held).saturating_add(bytes) <= self.limits.limit
    }

    /// What may still be charged, after a count.
    fn room(&mut self) -> usize {
        self.recount();
        self.limits.limit.saturating_sub(self.limits.memory.saturating_add(self.charges.held))
    }

    /// Whether linear memory may grow to `desired` bytes beside what the
    /// handles hold (counted again first when the charge says no).
    pub(super) fn room_to_grow(&mut self, desired: usize) -> bool {
        let fits = |s: &Self| desired.saturating_add(s.charges.held) <= s.limits.limit;
        fits(self) || {
            self.recount();
            fits(self)
        }
    }

    /// Sets the charge to what the live handles may hold.
    fn recount(&mut self) {
        let mut held: usize = self.table.iter_mut().map(|entry| weight(entry)).sum();
        let listings = std::mem::take(&mut self.charges.listings).into_iter().map(|(rep, b)| (rep, (rep, b))).collect();
        for (entry, (rep, bytes)) in self.table.iter_entries(listings) {
            if entry.is_ok_and(|e| e.is::<ReaddirIterator>()) {
                held += bytes;
                self.charges.listings.insert(rep, bytes);
            }
        }
        self.charges.held = held;
    }
}

/// The most one live handle holds in the host (a directory listing's is
/// kept beside, in [`Charges::listings`]). Its shares of a [`CHAIN`] add up
/// to no more than the chain was charged.
fn weight(entry: &(dyn Any + Send)) -> usize {
    if entry.is::<FieldMap>() {
        FIELDS
    } else if entry.is::<HostOutgoingRequest>() || entry.is::<HostOutgoingResponse>() {
        MESSAGE
    } else if let Some(future) = entry.downcast_ref::<HostFutureIncomingResponse>() {
        match future {
            HostFutureIncomingResponse::Consumed => SMALL,
            _ => CONNECTION + RESPONSE_PART,
        }
    } else if let Some(response) = entry.downcast_ref::<HostIncomingResponse>() {
        RESPONSE_PART + if response.body.is_some() { CONNECTION } else { 0 }
    } else if entry.is::<HostIncomingBody>() {
        CONNECTION
    } else if let Some(trailers) = entry.downcast_ref::<HostFutureTrailers>() {
        match trailers {
            HostFutureTrailers::Waiting(_) => CONNECTION,
            HostFutureTrailers::Done(_) => RESPONSE_PART,
            HostFutureTrailers::Consumed => SMALL,
        }
    } else if entry.is::<DynInputStream>() || entry.is::<DynOutputStream>() {
        STREAM
    } else if entry.is::<HostOutgoingBody>() {
        BODY
    } else if entry.is::<ReaddirIterator>() {
        0
    } else {
        SMALL
    }
}

/// Replaces the constructors of the handles that hold much with ones that
/// charge for them first (see the module's doc).
pub(super) fn charge_for_handles(linker: &mut Linker<HostState>) -> wasmtime::Result<()> {
    linker.allow_shadowing(true);
    let mut http = linker.instance(super::http::HTTP_TYPES)?;
    http.func_wrap("[constructor]fields", |mut store: Store<'_>, (): ()| {
        store.data_mut().charge(FIELDS)?;
        HostFields::new(&mut store.data_mut().http()).map(|f| (f,))
    })?;
    http.func_wrap("[static]fields.from-list", |mut store: Store<'_>, (entries,): (Vec<(String, Vec<u8>)>,)| {
        store.data_mut().charge(FIELDS)?;
        let made: Result<_, HeaderError> = match HostFields::from_list(&mut store.data_mut().http(), entries) {
            Ok(fields) => Ok(fields),
            Err(e) => Err(e.downcast()?),
        };
        Ok((made,))
    })?;
    http.func_wrap("[method]fields.clone", |mut store: Store<'_>, (of,): (Resource<FieldMap>,)| {
        store.data_mut().charge(FIELDS)?;
        HostFields::clone(&mut store.data_mut().http(), of).map(|f| (f,))
    })?;
    http.func_wrap("[constructor]outgoing-request", |mut store: Store<'_>, (headers,): (Resource<FieldMap>,)| {
        store.data_mut().charge(CHAIN)?;
        NewRequest::new(&mut store.data_mut().http(), headers).map(|r| (r,))
    })?;
    http.func_wrap("[constructor]outgoing-response", |mut store: Store<'_>, (headers,): (Resource<FieldMap>,)| {
        store.data_mut().charge(CHAIN)?;
        NewResponse::new(&mut store.data_mut().http(), headers).map(|r| (r,))
    })?;
    let mut fs = linker.instance(FILESYSTEM_TYPES)?;
    fs.func_wrap_async(
        "[method]descriptor.open-at",
        |mut store: Store<'_>, (dir, follow, path, how, flags): (Resource<Descriptor>, PathFlags, String, OpenFlags, DescriptorFlags)| {
            Box::new(async move {
                let open = store.data_mut().table.iter_mut().filter(|e| e.is::<Descriptor>()).count();
                if open >= MAX_DESCRIPTORS {
                    let note = format!("{MAX_DESCRIPTORS} files are open, the most one instance may keep");
                    store.data().note(note);
                    return Ok((Err(FsErrorCode::InsufficientMemory),));
                }
                fs_result(HostDescriptor::open_at(&mut store.data_mut().filesystem(), dir, follow, path, how, flags).await)
            })
        },
    )?;
    stream_at(&mut fs, "[method]descriptor.read-via-stream", |fs, fd, at| fs.read_via_stream(fd, at))?;
    stream_at(&mut fs, "[method]descriptor.write-via-stream", |fs, fd, at| fs.write_via_stream(fd, at))?;
    fs.func_wrap("[method]descriptor.append-via-stream", |mut store: Store<'_>, (fd,): (Resource<Descriptor>,)| {
        store.data_mut().charge(STREAM)?;
        fs_result(HostDescriptor::append_via_stream(&mut store.data_mut().filesystem(), fd))
    })?;
    fs.func_wrap_async("[method]descriptor.read-directory", |mut store: Store<'_>, (fd,): (Resource<Descriptor>,)| {
        Box::new(async move {
            let listed = match store.data_mut().table.get(&fd)? {
                Descriptor::Dir(dir) => Some(dir.dir.clone()),
                Descriptor::File(_) => None,
            };
            let mut bytes = SMALL;
            if let Some(dir) = listed {
                let room = store.data_mut().room();
                bytes += tokio::task::spawn_blocking(move || listing_size(&dir, room)).await?;
            }
            store.data_mut().charge(bytes)?;
            let listing = HostDescriptor::read_directory(&mut store.data_mut().filesystem(), fd).await;
            if let Ok(listing) = &listing {
                store.data_mut().charges.listings.insert(listing.rep(), bytes);
            }
            fs_result(listing)
        })
    })?;
    linker.allow_shadowing(false);
    Ok(())
}

/// The name wasmtime-wasi defines the filesystem types under (a component's
/// import of any 0.2.x version resolves to it).
const FILESYSTEM_TYPES: &str = "wasi:filesystem/types@0.2.12";

type Store<'a> = StoreContextMut<'a, HostState>;

/// A file stream's constructor that starts at an offset, charged for.
fn stream_at<S: Send + 'static>(
    fs: &mut LinkerInstance<'_, HostState>,
    name: &str,
    make: fn(&mut WasiFilesystemCtxView<'_>, Resource<Descriptor>, u64) -> FsResult<Resource<S>>,
) -> wasmtime::Result<()> {
    fs.func_wrap(name, move |mut store: Store<'_>, (fd, at): (Resource<Descriptor>, u64)| {
        store.data_mut().charge(STREAM)?;
        fs_result(make(&mut store.data_mut().filesystem(), fd, at))
    })
}

/// A filesystem call's result as the guest gets it: its error code, or a trap.
fn fs_result<T>(result: FsResult<T>) -> wasmtime::Result<(Result<T, FsErrorCode>,)> {
    match result {
        Ok(made) => Ok((Ok(made),)),
        Err(e) => Ok((Err(e.downcast()?),)),
    }
}

/// What wasmtime-wasi will keep for a listing of `dir`: each entry's name
/// and its place. Stops counting past `most`, which will not fit anyway.
/// (wasmtime-wasi lists with its own copy of cap-primitives' code.)
/// An error here is left for the listing itself to meet and report.
fn listing_size(dir: &Arc<std::fs::File>, most: usize) -> usize {
    let Ok(entries) = cap_primitives::fs::read_base_dir(dir) else { return 0 };
    let mut bytes = 0usize;
    for entry in entries.flatten() {
        bytes += ENTRY + entry.file_name().len();
        if bytes > most {
            break;
        }
    }
    bytes
}

// A request's parts, all kept at once, never hold more than it was
// charged (checked as the crate builds).
const _: () = {
    assert!(MESSAGE + STREAM + BODY <= CHAIN, "unsent, with its body and the body's stream");
    assert!(CONNECTION >= 2 * BODY_CHUNK + 2 * READ_BUFFER + BODY_CHUNK + (100 << 10), "its buffers");
    assert!(MESSAGE >= 2 * BODY_CHUNK + (64 << 10) + FIELDS, "its body, path and headers");
};
