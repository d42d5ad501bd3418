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
use std::sync::atomic::{AtomicU32, Ordering};

tokio::task_local! {
    /// The RPC's held texts by handle; an RPC holds a few, so a list.
    static HELD: RefCell<Vec<(u32, String)>>;
}

/// The next handle. Wrapping after 2^32 texts is harmless in practice: a
/// component would have to keep a handle that long to see it reused.
static NEXT: AtomicU32 = AtomicU32::new(0);

/// The most texts one RPC keeps back; beyond, texts are copied as before.
const MAX_HELD: usize = 1 << 16;

/// Runs `rpc` with a table of held texts when `enabled` (the component reads
/// held texts); without one, values carry every text as before.
pub async fn scope<F: Future>(enabled: bool, rpc: F) -> F::Output {
    if enabled { HELD.scope(RefCell::default(), rpc).await } else { rpc.await }
}

/// Keeps `text` back and gives its handle, or gives `text` back when no
/// table is open.
pub fn hold(text: String) -> Result<u32, String> {
    let mut text = Some(text);
    let handle = HELD
        .try_with(|held| {
            let mut held = held.borrow_mut();
            (held.len() < MAX_HELD).then(|| {
                let handle = NEXT.fetch_add(1, Ordering::Relaxed);
                held.push((handle, text.take().expect("taken once")));
                handle
            })
        })
        .ok()
        .flatten();
    match (handle, text) {
        (Some(h), _) => Ok(h),
        (None, Some(t)) => Err(t),
        (None, None) => unreachable!("a text is either held or given back"),
    }
}

/// A copy of the text behind `handle`: for the component that asks for it,
/// and for a value going back to the engine (the table keeps its own, since
/// a component may name one handle in several places). `None` for a handle
/// this RPC did not give out.
pub fn text(handle: u32) -> Option<String> {
    with_text(handle, str::to_owned)
}

/// The length in bytes of the text behind `handle`, without copying it.
pub fn len(handle: u32) -> Option<usize> {
    with_text(handle, str::len)
}

fn with_text<T>(handle: u32, f: impl FnOnce(&str) -> T) -> Option<T> {
    HELD.try_with(|held| held.borrow().iter().find(|(h, _)| *h == handle).map(|(_, t)| f(t))).ok().flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn texts_are_held_only_inside_an_enabled_scope() {
        let long = "x".repeat(2048);
        assert_eq!(hold(long.clone()), Err(long.clone()), "no table outside a scope");
        scope(false, async {
            assert_eq!(hold(long.clone()), Err(long.clone()), "no table when the component cannot read them");
        })
        .await;
        let handle = scope(true, async {
            let a = hold(long.clone()).expect("held");
            let b = hold("y".repeat(1500)).expect("held");
            assert_ne!(a, b);
            assert_eq!(text(a).as_deref(), Some(long.as_str()));
            assert_eq!(text(a).as_deref(), Some(long.as_str()), "reading does not use it up");
            assert_eq!(len(b), Some(1500));
            assert_eq!(text(b.wrapping_add(1000)), None, "a handle not given out");
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
}
