//! The conversion of a database's logs into a new storage layout on the first start of a build
//! that brings one: how far it is, for `/readyz` (not ready until it is done) and the
//! terminal's progress bar.

use tokio::sync::watch;

/// Logs converted so far and logs to convert, as the converting thread reports them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Progress {
    /// Logs converted.
    pub done: u64,
    /// Logs there were to convert when it started.
    pub total: u64,
    /// Whether it is over.
    pub finished: bool,
}

/// The converting side of an upgrade.
#[derive(Debug)]
pub struct Upgrade {
    sender: watch::Sender<Progress>,
}

impl Upgrade {
    /// An upgrade of `total` logs, and the receiver that follows it.
    pub fn start(total: u64) -> (Upgrade, watch::Receiver<Progress>) {
        let (sender, receiver) = watch::channel(Progress { done: 0, total, finished: false });
        (Upgrade { sender }, receiver)
    }

    /// `logs` more are converted.
    pub fn advance(&self, logs: u64) {
        self.sender.send_modify(|progress| progress.done = progress.done.saturating_add(logs));
    }

    /// It is over (also when dropped).
    pub fn finish(&self) {
        self.sender.send_modify(|progress| progress.finished = true);
    }
}

impl Drop for Upgrade {
    fn drop(&mut self) {
        self.finish();
    }
}

/// What `/readyz` says while an upgrade runs: not ready, and how far it is.
pub fn not_ready(progress: &Progress) -> Option<crate::StoreError> {
    (!progress.finished).then(|| {
        crate::StoreError::Unavailable(format!(
            "converting stored logs into blocks: {} of {} done",
            progress.done, progress.total
        ))
    })
}
