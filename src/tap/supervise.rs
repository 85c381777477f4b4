//! A tap's observer, supervised: the observer task runs until the data
//! path is gone; if it ends before that (a panic), that is one event
//! (`ObserverEnded`: a log line and `mcp_tap_observer_restarts_total`), the
//! tap says it is not observing (`mcp_tap_observing` 0, its page and
//! `/api/clients`), and after a back-off a fresh observer starts on the
//! same queue and reference catalogues. Meanwhile the queue is drained and
//! each message counted as not observed (`observer_restart`), so the data
//! path never meets a full queue because of it; forwarding never notices.

use super::observe::{observe, ObserverInputs, ObserverTask};
use crate::telemetry::events::{ObserverEnded, ObserverRestarted};
use mcp_tap::{NotObserved, TapEvent};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::Mutex;

/// The first wait before a fresh observer; doubled after each observer
/// that ended within [`SETTLED`], up to [`LONGEST_WAIT`].
const FIRST_WAIT: Duration = Duration::from_secs(1);
const LONGEST_WAIT: Duration = Duration::from_secs(60);
/// An observer that ran this long before ending starts the back-off over.
const SETTLED: Duration = Duration::from_secs(60);

/// Run the tap's observer until its queue ends, restarting it whenever it
/// ends before that.
pub async fn supervise(inputs: ObserverInputs, task: ObserverTask) {
    let inputs = Arc::new(Mutex::new(inputs));
    let health = task.health.clone();
    let mut wait = first_wait();
    loop {
        let run = {
            let (inputs, task) = (inputs.clone(), task.clone());
            tokio::spawn(async move {
                let mut inputs = inputs.lock_owned().await;
                observe(&mut inputs, task).await;
            })
        };
        let started = Instant::now();
        let cause = match run.await {
            Ok(()) => break,
            Err(e) if e.is_panic() => panic_message(e.into_panic()),
            Err(_) => "cancelled".to_string(),
        };
        wait = if started.elapsed() >= SETTLED {
            first_wait()
        } else {
            wait
        };
        ObserverEnded {
            tap: &task.tap,
            cause: &cause,
            restart_in: wait,
        }
        .emit(&health);
        task.sinks.book.not_observing(&task.tap, health.restarts());
        // The event it was reading when it ended.
        let mut not_observed = 1;
        task.stats.not_observed(NotObserved::ObserverRestart);
        let drained = drain(&inputs, wait, &task).await;
        not_observed += drained.messages;
        if drained.queue_ended {
            break;
        }
        ObserverRestarted {
            tap: &task.tap,
            not_observed,
        }
        .emit();
        wait = (wait * 2).min(LONGEST_WAIT);
    }
    health.stopped();
}

/// What a drain found.
struct Drained {
    messages: u64,
    /// The data path is gone: no observer is needed any more.
    queue_ended: bool,
}

/// Empty the queue for `wait`, counting each message as not observed.
async fn drain(inputs: &Mutex<ObserverInputs>, wait: Duration, task: &ObserverTask) -> Drained {
    let mut inputs = inputs.lock().await;
    let deadline = tokio::time::Instant::now() + wait;
    let mut drained = Drained {
        messages: 0,
        queue_ended: false,
    };
    loop {
        tokio::select! {
            event = inputs.queue.recv() => match event {
                Some(TapEvent::MessageEnd { .. }) => {
                    drained.messages += 1;
                    task.stats.not_observed(NotObserved::ObserverRestart);
                }
                Some(_) => {}
                None => {
                    drained.queue_ended = true;
                    return drained;
                }
            },
            _ = tokio::time::sleep_until(deadline) => return drained,
        }
    }
}

/// A panic's message, cut and escaped for a log line.
fn panic_message(payload: Box<dyn std::any::Any + Send>) -> String {
    let text = match payload.downcast_ref::<&str>() {
        Some(s) => (*s).to_string(),
        None => payload
            .downcast_ref::<String>()
            .cloned()
            .unwrap_or_else(|| "panic".to_string()),
    };
    mcp_tap::identity::label(&text)
}

fn first_wait() -> Duration {
    #[cfg(debug_assertions)]
    if let Some(wait) = super::test_hooks::first_wait() {
        return wait;
    }
    FIRST_WAIT
}
