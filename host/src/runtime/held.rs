//! Long asset texts kept in the host during one RPC (contract 0.3.1).
//!
//! A component that imports `context.asset-text` gets a text asset of
//! 1 KiB or more as a handle instead of a copy of its text in its memory,
//! and reads the text through that import only if it needs it. A Delete
//! that carries a 1 MB asset twice (state and old inputs) then copies
//! nothing into the guest. The component may hand a handle back (in its
//! answer, or to the monitor) for the same text.
//!
//! The table lives for one RPC (request conversion, the call, the answer's
//! conversion), as a task-local, because the value conversions that hold
//! and resolve texts run at three places (the server, the guest's imports,
//! the monitor) that share nothing else but the task. Handles are numbered
//! across the process, so a handle a component kept from an earlier RPC
//! names nothing in this one rather than another text.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};

use futures::future::Either;

tokio::task_local! {
    static HELD: RefCell<Table>;
}

/// The RPC's held texts by handle: usually a few, but an answer may name
/// them millions of times, so each lookup is one probe.
#[derive(Default)]
struct Table {
    texts: HashMap<u32, Held>,
    /// The bytes of every text held, moved out or not, counted in
    /// [`HELD_BYTES`] until the RPC ends.
    bytes: usize,
}

impl Drop for Table {
    fn drop(&mut self) {
        HELD_BYTES.fetch_sub(self.bytes, Ordering::Relaxed);
    }
}

struct Held {
    /// `None` once moved into the answer.
    text: Option<String>,
    /// How many more times the answer names it (see [`expect_use`]).
    uses: u32,
}

/// The next handle. Wrapping after 2^32 texts is harmless in practice: a
/// component would have to keep a handle that long to see it reused.
static NEXT: AtomicU32 = AtomicU32::new(0);

/// The most texts one RPC keeps back; beyond, texts are copied as before.
const MAX_HELD: usize = 1 << 16;

/// The most bytes of text one RPC keeps back, and all RPCs together. The
/// texts of a request are bounded by its size, but a `construct` or `call`
/// may ask the monitor again and again for values with long texts, which
/// would pile up here until the RPC ends, outside every memory limit.
/// Beyond these, texts are copied into the component, whose memory they
/// are charged to.
const MAX_HELD_BYTES: usize = super::bindings::MAX_VALUE_BYTES;
const MAX_HELD_BYTES_TOTAL: usize = 1 << 30;

/// The bytes all open RPCs' tables hold.
static HELD_BYTES: AtomicUsize = AtomicUsize::new(0);

/// Runs `rpc` with a table of held texts when `enabled` (the component reads
/// held texts); without one, values carry every text as before.
///
/// Not an `async fn`: its state would keep `rpc` and each branch's future
/// apart, three times the size of an RPC's future (~25 KB, copied on every
/// call), where this enum is one.
pub fn scope<F: Future>(enabled: bool, rpc: F) -> impl Future<Output = F::Output> {
    if enabled { Either::Left(HELD.scope(RefCell::default(), rpc)) } else { Either::Right(rpc) }
}

/// Whether this RPC has a table of held texts.
pub fn active() -> bool {
    HELD.try_with(|_| ()).is_ok()
}

/// Keeps `text` back and gives its handle, or gives `text` back when no
/// table is open or it is full.
pub fn hold(text: String) -> Result<u32, String> {
    if !active() {
        return Err(text);
    }
    HELD.with(|held| {
        let mut held = held.borrow_mut();
        if held.texts.len() >= MAX_HELD || held.bytes + text.len() > MAX_HELD_BYTES {
            return Err(text);
        }
        let within = |total: usize| (total + text.len() <= MAX_HELD_BYTES_TOTAL).then_some(total + text.len());
        if HELD_BYTES.fetch_update(Ordering::Relaxed, Ordering::Relaxed, within).is_err() {
            return Err(text);
        }
        held.bytes += text.len();
        let handle = NEXT.fetch_add(1, Ordering::Relaxed);
        held.texts.insert(handle, Held { text: Some(text), uses: 0 });
        Ok(handle)
    })
}

/// A copy of the text behind `handle`, for the component that asks for it
/// (the table keeps its own). `None` for a handle this RPC did not give out.
pub fn text(handle: u32) -> Option<String> {
    with(handle, |h| h.text.clone()).flatten()
}

/// Notes that the call's answer names `handle` once more: its text is then
/// moved, not copied, into the last place the answer names it. Counted
/// before the answer is converted, from its words.
pub fn expect_use(handle: u32) {
    with(handle, |h| h.uses = h.uses.saturating_add(1));
}

/// The text behind `handle` for a value going to the engine, if it is
/// `len` bytes long: moved into the answer's last use of it, copied
/// otherwise (an earlier use, or a value the component hands the monitor
/// or reports as partial state). `Err` says why not.
pub fn resolve(handle: u32, len: u32) -> Result<String, String> {
    let found = with(handle, |h| match &h.text {
        None => Err(format!("held text {handle} was already used up by the answer")),
        Some(t) if t.len() != len as usize => Err(format!("held text {handle} is {} bytes, not {len}", t.len())),
        Some(_) if h.uses == 1 => {
            h.uses = 0;
            Ok(h.text.take().expect("present"))
        }
        Some(t) => {
            h.uses = h.uses.saturating_sub(1);
            Ok(t.clone())
        }
    });
    found.unwrap_or_else(|| Err(format!("held text {handle} is not one this call was given")))
}

fn with<T>(handle: u32, f: impl FnOnce(&mut Held) -> T) -> Option<T> {
    HELD.try_with(|held| held.borrow_mut().texts.get_mut(&handle).map(f)).ok().flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn texts_are_held_only_inside_an_enabled_scope() {
        let long = "x".repeat(2048);
        assert!(!active());
        assert_eq!(hold(long.clone()), Err(long.clone()), "no table outside a scope");
        scope(false, async {
            assert_eq!(hold(long.clone()), Err(long.clone()), "no table when the component cannot read them");
        })
        .await;
        let handle = scope(true, async {
            assert!(active());
            let a = hold(long.clone()).expect("held");
            let b = hold("y".repeat(1500)).expect("held");
            assert_ne!(a, b);
            assert_eq!(text(a).as_deref(), Some(long.as_str()));
            assert_eq!(text(a).as_deref(), Some(long.as_str()), "reading does not use it up");
            assert_eq!(resolve(b, 1500).map(|t| t.len()), Ok(1500), "copied: no use was counted");
            assert_eq!(resolve(b, 1499), Err(format!("held text {b} is 1500 bytes, not 1499")));
            assert_eq!(text(b.wrapping_add(1000)), None, "a handle not given out");
            // Named twice by the answer: copied the first time, moved the second.
            expect_use(a);
            expect_use(a);
            assert_eq!(resolve(a, 2048).as_deref(), Ok(long.as_str()));
            assert_eq!(resolve(a, 2048).as_deref(), Ok(long.as_str()));
            assert_eq!(text(a), None, "moved into the answer");
            assert!(resolve(a, 2048).unwrap_err().contains("already used up"));
            a
        })
        .await;
        assert_eq!(text(handle), None, "a handle outlives its RPC's table");
        scope(true, async {
            let mine = hold(long.clone()).expect("held");
            assert_ne!(mine, handle, "handles are not reused by the next RPC");
            assert_eq!(text(handle), None, "another RPC's handle names nothing here");
        })
        .await;
    }

    /// A component asking the monitor for long texts again and again makes
    /// the host keep at most the RPC's budget; the rest are copied into it.
    /// Three RPCs in a row each get the whole budget: an RPC's bytes leave
    /// the process-wide count when it ends (three budgets exceed it).
    #[tokio::test]
    async fn held_texts_are_bounded_in_bytes() {
        let piece = 8 << 20;
        const { assert!(3 * MAX_HELD_BYTES > MAX_HELD_BYTES_TOTAL) };
        for _ in 0..3 {
            scope(true, async {
                let held = (0..200).take_while(|_| hold("x".repeat(piece)).is_ok()).count();
                assert_eq!(held, MAX_HELD_BYTES / piece, "up to the RPC's budget");
                assert!(hold("y".repeat(piece)).is_err(), "copied from then on");
            })
            .await;
        }
    }
}
