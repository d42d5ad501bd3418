//! Sending a provider's logs to `Engine.Log`: several calls at once, one
//! resource's messages in order.
//!
//! One call at a time was the engine's round trip per message: a provider
//! that logs under load (a Create per resource, many resources at once)
//! filled the queue and lost most of its lines. The engine shows messages per
//! resource, so only each URN's order must hold: every URN (and the messages
//! tied to none) is a chain whose next message goes once the one before it
//! has been answered, and up to [`IN_FLIGHT`] chains send at once. What
//! waits here is bounded by the provider's log budget (`runtime::LogQueue`):
//! each message holds its share of it until sent.
//! Written by hand because it is a small scheduler over our own queue; no
//! crate keeps per-key order over a bounded set of concurrent calls.

use std::collections::{HashMap, VecDeque};
use std::future::Future;

use futures::StreamExt;
use futures::stream::FuturesUnordered;
use tokio::sync::mpsc;

use crate::runtime::GuestLog;

/// `Engine.Log` calls in flight at once, each for a different URN.
const IN_FLIGHT: usize = 8;

/// Messages waiting, per URN, and which URNs have a call in flight.
#[derive(Default)]
struct Chains {
    chains: HashMap<String, Chain>,
    /// URNs with messages waiting and no call in flight, oldest first.
    ready: VecDeque<String>,
    in_flight: usize,
}

#[derive(Default)]
struct Chain {
    waiting: VecDeque<GuestLog>,
    sending: bool,
}

impl Chains {
    /// Queues `log` behind the earlier messages of its URN.
    fn push(&mut self, log: GuestLog) {
        let urn = log.urn.clone().unwrap_or_default();
        let chain = self.chains.entry(urn.clone()).or_default();
        chain.waiting.push_back(log);
        // A chain is in `ready` exactly when it has messages and none in flight.
        if !chain.sending && chain.waiting.len() == 1 {
            self.ready.push_back(urn);
        }
    }

    /// The next message to send and its chain's URN (to hand back to
    /// [`Chains::done`]), when a call may start: the oldest ready URN's.
    fn next(&mut self) -> Option<(String, GuestLog)> {
        if self.in_flight >= IN_FLIGHT {
            return None;
        }
        let urn = self.ready.pop_front()?;
        let chain = self.chains.get_mut(&urn).expect("a ready URN has a chain");
        chain.sending = true;
        self.in_flight += 1;
        let log = chain.waiting.pop_front().expect("a ready chain has a message");
        Some((urn, log))
    }

    /// The call for `urn` was answered: its next message becomes ready.
    fn done(&mut self, urn: String) {
        self.in_flight -= 1;
        let Some(chain) = self.chains.get_mut(&urn) else { return };
        chain.sending = false;
        if chain.waiting.is_empty() {
            self.chains.remove(&urn);
        } else {
            self.ready.push_back(urn);
        }
    }

    fn is_idle(&self) -> bool {
        self.chains.is_empty()
    }
}

/// Sends every message `logs` yields with `send`, as [`Chains`] orders
/// them, until `logs` closes and every message has been sent.
pub async fn forward<S, F>(mut logs: mpsc::Receiver<GuestLog>, send: S)
where
    S: Fn(GuestLog) -> F,
    F: Future<Output = ()>,
{
    let mut chains = Chains::default();
    let mut calls = FuturesUnordered::new();
    let mut open = true;
    loop {
        while let Some((urn, log)) = chains.next() {
            let call = send(log);
            calls.push(async move {
                call.await;
                urn
            });
        }
        if !open && chains.is_idle() {
            return;
        }
        tokio::select! {
            log = logs.recv(), if open => match log {
                Some(log) => {
                    chains.push(log);
                    // Whatever else is queued, so a burst costs one wake.
                    while let Ok(log) = logs.try_recv() {
                        chains.push(log);
                    }
                }
                None => open = false,
            },
            Some(urn) = calls.next(), if !calls.is_empty() => chains.done(urn),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;
    use crate::runtime::{LogQueue, LogSeverity};

    /// Every URN's messages arrive in order, one call at a time per URN,
    /// and up to `IN_FLIGHT` URNs' calls run at once.
    #[tokio::test(flavor = "current_thread")]
    async fn each_urn_in_order_several_urns_at_once() {
        let (tx, rx) = mpsc::channel(1024);
        let queue = LogQueue::new(tx);
        let urns: Vec<Option<String>> = (0..12).map(|i| Some(format!("urn:{i}"))).chain([None]).collect();
        for n in 0..20 {
            for urn in &urns {
                queue.send(LogSeverity::Info, n.to_string(), urn.clone(), false);
            }
        }
        drop(queue);

        #[derive(Default)]
        struct Seen {
            sent: Vec<(String, String)>,
            in_flight: Vec<String>,
            most: usize,
        }
        let seen = Arc::new(Mutex::new(Seen::default()));
        let send = |log: GuestLog| {
            let seen = seen.clone();
            async move {
                let urn = log.urn.clone().unwrap_or_default();
                {
                    let mut s = seen.lock().unwrap();
                    assert!(!s.in_flight.contains(&urn), "two calls at once for '{urn}'");
                    s.in_flight.push(urn.clone());
                    s.most = s.most.max(s.in_flight.len());
                }
                for _ in 0..3 {
                    tokio::task::yield_now().await;
                }
                let mut s = seen.lock().unwrap();
                s.in_flight.retain(|u| *u != urn);
                s.sent.push((urn, log.message.clone()));
            }
        };
        forward(rx, send).await;

        let seen = seen.lock().unwrap();
        assert_eq!(seen.sent.len(), 20 * urns.len(), "every message sent");
        assert_eq!(seen.most, IN_FLIGHT, "calls overlap, up to the limit");
        for urn in &urns {
            let urn = urn.clone().unwrap_or_default();
            let order: Vec<&str> = seen.sent.iter().filter(|(u, _)| *u == urn).map(|(_, m)| m.as_str()).collect();
            let expected: Vec<String> = (0..20).map(|n| n.to_string()).collect();
            assert_eq!(order, expected, "messages of '{urn}' in order");
        }
    }
}
