//! A resource call's turn among the `max_instances` that run at once, and
//! the future that gives it back while a patient call waits (see
//! `Pool::bounded_waiting`).

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll, Wake, Waker, ready};

use futures::task::AtomicWaker;
use tokio::sync::{AcquireError, OwnedSemaphorePermit, Semaphore};
use tokio::time::{Instant, Sleep};

use super::state::EngineWait;
use super::ticker::EPOCH_TICK;

/// A call whose time between polls (waiting, not running) is counted in
/// `waits`, when patient: the waits the epoch deadline is moved on by. A
/// patient call also gives its turn back once it has waited a tick (a
/// short wait, a read of the next chunk, keeps it: giving it back would
/// send the call to the end of the queue each time), and takes it again
/// before it runs.
pub(super) struct Waiting<'w, F> {
    call: F,
    patient: Option<Patient<'w>>,
}

struct Patient<'w> {
    waits: &'w EngineWait,
    turn: Turn,
    /// When the turn goes back, if the call still waits; reset at each wait.
    give_back: Pin<Box<Sleep>>,
    /// The call was woken (or never polled here): it must be polled, which
    /// needs the turn. Set by `woken`, the waker the call is polled with,
    /// so that the timer waking the task polls nothing.
    runnable: bool,
    woken: Arc<Woken>,
    waker: Waker,
}

#[derive(Default)]
struct Woken {
    flag: AtomicBool,
    task: AtomicWaker,
}

impl Wake for Woken {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.flag.store(true, Ordering::Release);
        self.task.wake();
    }
}

impl<'w, F> Waiting<'w, F> {
    /// After a first poll that found the call waiting (with its turn).
    pub(super) fn new(call: F, patient: Option<(&'w EngineWait, Turn)>) -> Self {
        let patient = patient.map(|(waits, turn)| {
            waits.begin_gap();
            let woken = Arc::<Woken>::default();
            Patient {
                waker: Waker::from(woken.clone()),
                woken,
                waits,
                turn,
                give_back: Box::pin(tokio::time::sleep(EPOCH_TICK)),
                runnable: true,
            }
        });
        Waiting { call, patient }
    }
}

impl<F: Future + Unpin> Future for Waiting<'_, F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = &mut *self;
        let Some(p) = &mut this.patient else {
            return Pin::new(&mut this.call).poll(cx);
        };
        p.woken.task.register(cx.waker());
        if p.woken.flag.swap(false, Ordering::Acquire) {
            p.runnable = true;
        }
        if !p.runnable {
            // Still waiting: past a tick of it, the turn goes back.
            if p.turn.held() && p.give_back.as_mut().poll(cx).is_ready() {
                p.turn.give_back();
            }
            return Poll::Pending;
        }
        // Waiting for a turn is waiting too: the gap goes on meanwhile.
        ready!(p.turn.poll_take(cx));
        p.runnable = false;
        p.waits.end_gap();
        let polled = Pin::new(&mut this.call).poll(&mut Context::from_waker(&p.waker));
        if polled.is_pending() {
            p.waits.begin_gap();
            p.give_back.as_mut().reset(Instant::now() + EPOCH_TICK);
            let _ = p.give_back.as_mut().poll(cx);
        }
        polled
    }
}

type Acquiring = Pin<Box<dyn Future<Output = Result<OwnedSemaphorePermit, AcquireError>> + Send>>;

/// A resource call's turn among the `max_instances` that run at once. A
/// patient call gives it back while it waits, so calls waiting for hours
/// (a database being made) keep neither the provider's other calls nor
/// each other from running; they keep their instance meanwhile, bounded
/// apart (the pool's `max_waiting`).
pub struct Turn {
    semaphore: Arc<Semaphore>,
    permit: Option<OwnedSemaphorePermit>,
    taking: Option<Acquiring>,
}

impl Turn {
    pub(super) fn new(semaphore: Arc<Semaphore>, permit: OwnedSemaphorePermit) -> Self {
        Turn { semaphore, permit: Some(permit), taking: None }
    }

    fn held(&self) -> bool {
        self.permit.is_some()
    }

    fn give_back(&mut self) {
        self.permit = None;
    }

    /// Ready once the call holds its turn again. A semaphore that was
    /// closed (never, for the pool's) would let the call run without one.
    fn poll_take(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        if self.permit.is_some() {
            return Poll::Ready(());
        }
        let taking = match &mut self.taking {
            Some(taking) => taking,
            None => match self.semaphore.clone().try_acquire_owned() {
                Ok(permit) => {
                    self.permit = Some(permit);
                    return Poll::Ready(());
                }
                Err(_) => self.taking.insert(Box::pin(self.semaphore.clone().acquire_owned())),
            },
        };
        let taken = ready!(taking.as_mut().poll(cx));
        self.taking = None;
        self.permit = taken.ok();
        Poll::Ready(())
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    /// A turn of a one-turn semaphore, and the semaphore.
    async fn one_turn() -> (Arc<Semaphore>, Turn) {
        let turns = Arc::new(Semaphore::new(1));
        let permit = turns.clone().acquire_owned().await.unwrap();
        (turns.clone(), Turn::new(turns, permit))
    }

    /// A call that waits briefly `n` times (woken at once, as a read of the
    /// next chunk is), noting each time whether another call had the turn.
    struct Brief {
        other_ran: Arc<AtomicBool>,
        left: usize,
        seen: Vec<bool>,
    }

    impl Future for Brief {
        type Output = Vec<bool>;

        fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Vec<bool>> {
            let other_ran = self.other_ran.load(Ordering::SeqCst);
            self.seen.push(other_ran);
            if self.left == 0 {
                return Poll::Ready(std::mem::take(&mut self.seen));
            }
            self.left -= 1;
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    }

    #[tokio::test]
    async fn short_waits_keep_the_turn() {
        let (turns, turn) = one_turn().await;
        // Another call queued for the turn meanwhile.
        let other_ran = Arc::new(AtomicBool::new(false));
        let other = tokio::spawn({
            let (turns, other_ran) = (turns.clone(), other_ran.clone());
            async move {
                let _turn = turns.acquire_owned().await.unwrap();
                other_ran.store(true, Ordering::SeqCst);
            }
        });
        tokio::task::yield_now().await;
        let waits = EngineWait::default();
        let call = Brief { other_ran: other_ran.clone(), left: 20, seen: Vec::new() };
        let seen = Waiting::new(call, Some((&waits, turn))).await;
        assert_eq!(seen, vec![false; 21], "the other call never got the turn in between");
        other.await.unwrap();
        assert!(other_ran.load(Ordering::SeqCst), "it got it at the end");
    }

    #[tokio::test]
    async fn a_long_wait_gives_the_turn_back_and_the_call_waits_for_it_again() {
        let (turns, turn) = one_turn().await;
        let waits = EngineWait::default();
        let observed = turns.clone();
        let polls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counted = polls.clone();
        let mut sleep = Box::pin(tokio::time::sleep(Duration::from_millis(100)));
        let call = std::future::poll_fn(move |cx| {
            counted.fetch_add(1, Ordering::SeqCst);
            ready!(sleep.as_mut().poll(cx));
            Poll::Ready(observed.available_permits())
        });
        let task = tokio::spawn(async move { Waiting::new(call, Some((&waits, turn))).await });
        // Past a tick of waiting, the turn is free; another call takes it.
        tokio::time::sleep(Duration::from_millis(50)).await;
        let other = turns.clone().try_acquire_owned().expect("the waiting call gave its turn back");
        // The call's sleep ends meanwhile; it must not run without the turn.
        tokio::time::sleep(Duration::from_millis(150)).await;
        assert!(!task.is_finished(), "ran without its turn");
        drop(other);
        assert_eq!(task.await.unwrap(), 0, "it ran holding the turn");
        assert_eq!(turns.available_permits(), 1);
        // Once to start, once when its sleep ended: the give-back timer's
        // wake-up polled nothing (nor took the turn for it).
        assert_eq!(polls.load(Ordering::SeqCst), 2);
    }

    #[tokio::test]
    async fn a_call_without_patience_is_polled_as_it_is() {
        let (turns, turn) = one_turn().await;
        let call = Box::pin(async {
            tokio::time::sleep(Duration::from_millis(50)).await;
            7
        });
        assert_eq!(Waiting::new(call, None).await, 7);
        assert_eq!(turns.available_permits(), 0, "the caller's turn is untouched");
        drop(turn);
    }
}
