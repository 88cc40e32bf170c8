//! The sealer: one thread of the store's own, with a runtime and database connections of its
//! own, on which every block is sealed ([`crate::signatures::seal`]), one at a time, in the
//! order asked.
//!
//! A seal reads a thousand signatures (about 8 MB) and builds 32 MiB of bands in some 65,000
//! buffers. Built on a blocking-pool thread and freed by the HTTP worker that wrote them (and
//! the signatures the other way round), that memory went back to the allocator across
//! threads, and mimalloc did not always give it back: in some of the PostgreSQL soaks the
//! server's RSS stopped falling back after each seal and climbed about 100 MB to a plateau
//! (docs/PERFORMANCE.md, issue 25). Here the connection that reads the signatures, the build
//! and the writes all run on one thread, which allocates and frees a block's memory itself; and
//! a block's 100-170 ms of building holds neither an HTTP worker nor a blocking-pool thread.

use std::future::Future;
use std::pin::Pin;

use diesel_async::AsyncPgConnection;
use sluice_store::StoreError;

use crate::error::{backend, unavailable};

/// The sealer thread's name (a seal checks it runs there).
pub(crate) const THREAD: &str = "sluice-sealer";

type Job = Pin<Box<dyn Future<Output = ()> + Send>>;

/// Where jobs go to the sealer thread. The thread ends once every sender is dropped (the last
/// clone of the store, and any job holding one, gone) and what was asked before has run.
pub(crate) struct Sealer {
    jobs: tokio::sync::mpsc::UnboundedSender<Job>,
}

impl Sealer {
    /// Starts the sealer thread.
    pub(crate) fn start() -> Result<Sealer, StoreError> {
        let (jobs, mut queue) = tokio::sync::mpsc::unbounded_channel::<Job>();
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(backend)?;
        std::thread::Builder::new()
            .name(THREAD.to_owned())
            .spawn(move || {
                runtime.block_on(async move {
                    while let Some(job) = queue.recv().await {
                        // Spawned, so that a job that panics ends alone, not the sealer.
                        let _ = tokio::spawn(job).await;
                    }
                });
            })
            .map_err(|error| backend(format!("cannot start the sealer thread: {error}")))?;
        Ok(Sealer { jobs })
    }

    /// Runs `job` on the sealer thread once the jobs asked before it have run, without waiting
    /// for it; false when the thread is gone.
    pub(crate) fn run(&self, job: impl Future<Output = ()> + Send + 'static) -> bool {
        self.jobs.send(Box::pin(job)).is_ok()
    }

    /// Runs `job` on the sealer thread and waits for its answer.
    pub(crate) async fn call<T: Send + 'static>(
        &self,
        job: impl Future<Output = Result<T, StoreError>> + Send + 'static,
    ) -> Result<T, StoreError> {
        let (answer, answered) = tokio::sync::oneshot::channel();
        let asked = self.run(async move {
            let _ = answer.send(job.await);
        });
        if !asked {
            return Err(backend("the sealer thread is gone"));
        }
        answered.await.unwrap_or_else(|_| Err(backend("a seal ended without an answer")))
    }
}

/// A connection of the sealer's own, opened on its thread (a pooled one would read its
/// answers on the HTTP worker that opened it), closed when dropped.
pub(crate) async fn connection(config: &tokio_postgres::Config) -> Result<AsyncPgConnection, StoreError> {
    let (client, connection) = config.connect(tokio_postgres::NoTls).await.map_err(unavailable)?;
    AsyncPgConnection::try_from_client_and_connection(client, connection).await.map_err(unavailable)
}
