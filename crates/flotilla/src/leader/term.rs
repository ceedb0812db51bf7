//! One term's controllers: tasks on a runtime of their own, so that stopping them also stops
//! every task they spawned in turn (a controller's detached watch tasks included).

use std::time::Duration;

use anyhow::{Context, Result};
use tokio::task::JoinHandle;

/// Running controller tasks and the runtime they (and everything they spawn) run on.
pub struct Term {
    runtime: Option<tokio::runtime::Runtime>,
    tasks: Vec<JoinHandle<()>>,
}

impl std::fmt::Debug for Term {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Term")
            .field("tasks", &self.tasks.len())
            .finish()
    }
}

/// How long stopping waits for a term's leftover tasks to notice their runtime is gone.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

impl Term {
    /// Starts a term: a fresh runtime, and `start` run inside it (its `tokio::spawn`s land
    /// there).
    pub fn start(start: &mut dyn FnMut() -> Result<Vec<JoinHandle<()>>>) -> Result<Self> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .thread_name("flotilla-controllers")
            .enable_all()
            .build()
            .context("starting the controllers' runtime")?;
        let tasks = {
            let _inside = runtime.enter();
            start()
        };
        // Built first, so that on an error the runtime is shut down by `Drop`.
        let mut term = Self {
            runtime: Some(runtime),
            tasks: Vec::new(),
        };
        term.tasks = tasks?;
        Ok(term)
    }

    /// Resolves when any of the term's tasks ends (never, when it has none); that task
    /// leaves the term.
    pub async fn ended(&mut self) {
        if self.tasks.is_empty() {
            return std::future::pending().await;
        }
        let (_, index, _) = futures::future::select_all(self.tasks.iter_mut()).await;
        self.tasks.swap_remove(index);
    }

    /// Aborts every task and waits until each has ended, then shuts the runtime down (ending
    /// whatever the tasks spawned).
    pub async fn stop(mut self) {
        for task in &self.tasks {
            task.abort();
        }
        for task in self.tasks.drain(..) {
            let _ = task.await;
        }
        if let Some(runtime) = self.runtime.take() {
            let _ =
                tokio::task::spawn_blocking(move || runtime.shutdown_timeout(SHUTDOWN_GRACE)).await;
        }
    }
}

impl Drop for Term {
    /// A term dropped without [`Term::stop`] (its owner was cancelled) still ends its tasks.
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    use super::*;

    #[tokio::test]
    async fn stopping_ends_spawned_tasks_too() {
        let detached_alive = Arc::new(AtomicBool::new(true));
        let flag = detached_alive.clone();
        let mut start = move || -> Result<Vec<JoinHandle<()>>> {
            let flag = flag.clone();
            Ok(vec![tokio::spawn(async move {
                // A controller that spawns a detached task of its own.
                tokio::spawn(async move {
                    struct Alive(Arc<AtomicBool>);
                    impl Drop for Alive {
                        fn drop(&mut self) {
                            self.0.store(false, Ordering::SeqCst);
                        }
                    }
                    let _alive = Alive(flag);
                    std::future::pending::<()>().await
                });
                std::future::pending::<()>().await
            })])
        };
        let term = Term::start(&mut start).unwrap();
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(detached_alive.load(Ordering::SeqCst));
        term.stop().await;
        assert!(!detached_alive.load(Ordering::SeqCst));
    }

    #[tokio::test]
    async fn ended_resolves_when_a_task_ends() {
        let mut start = || -> Result<Vec<JoinHandle<()>>> {
            Ok(vec![
                tokio::spawn(std::future::pending()),
                tokio::spawn(async {}),
            ])
        };
        let mut term = Term::start(&mut start).unwrap();
        tokio::time::timeout(Duration::from_secs(5), term.ended())
            .await
            .expect("the finished task is noticed");
        term.stop().await;
    }
}
