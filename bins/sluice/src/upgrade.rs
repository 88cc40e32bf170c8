//! The terminal's view of a storage upgrade the store runs on its first start after one
//! (`sluice_store::upgrade`): a progress bar on a terminal, a line at each tenth otherwise.

use std::io::IsTerminal;

use sluice_store::upgrade::Progress;
use tokio::sync::watch;

/// Follows `progress` until the upgrade ends, on a task of its own.
pub(crate) fn show(mut progress: watch::Receiver<Progress>) {
    tokio::spawn(async move {
        let total = progress.borrow().total;
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = indicatif::ProgressBar::new(total);
            bar.set_style(
                indicatif::ProgressStyle::with_template(
                    "converting stored logs into blocks [{bar:30}] {human_pos}/{human_len} {per_sec} eta {eta}",
                )
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
                .progress_chars("=> "),
            );
            bar
        });
        let step = (total / 10).max(1);
        let mut next = step;
        loop {
            let now = *progress.borrow_and_update();
            match &bar {
                Some(bar) => bar.set_position(now.done),
                None if now.done >= next && !now.finished => {
                    eprintln!(
                        "converting stored logs into blocks: {}% ({} of {total})",
                        now.done * 100 / total.max(1),
                        now.done
                    );
                    next = now.done - now.done % step + step;
                }
                None => {}
            }
            if now.finished {
                if let Some(bar) = &bar {
                    bar.finish_and_clear();
                }
                eprintln!("converted {} stored logs into blocks; the server is ready", now.done);
                return;
            }
            if progress.changed().await.is_err() {
                return;
            }
        }
    });
}
