//! How far an `import` got (kept under `$XDG_STATE_HOME/sluice/imports/`, else
//! `~/.local/state/...`), and its progress bar: `indicatif` on a terminal, a plain line every
//! tenth otherwise.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::{Deserialize, Serialize};

use super::Failure;

/// How far the server acknowledged one file's import.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Progress {
    /// Bytes of a line-based file, or entries of a JSON or OBL document, acknowledged.
    pub(crate) done: u64,
    /// Whether `done` counts bytes.
    #[serde(rename = "bytes")]
    pub(crate) unit_is_bytes: bool,
    #[serde(skip)]
    path: PathBuf,
}

fn state_folder() -> anyhow::Result<PathBuf> {
    let base = match std::env::var_os("XDG_STATE_HOME").filter(|value| !value.is_empty()) {
        Some(base) => PathBuf::from(base),
        None => PathBuf::from(std::env::var_os("HOME").context("neither XDG_STATE_HOME nor HOME is set")?)
            .join(".local/state"),
    };
    Ok(base.join("sluice").join("imports"))
}

impl Progress {
    /// The progress of importing `file` to `server` (and `workspace`), zero when none is kept.
    pub(crate) fn load(server: &str, workspace: Option<&str>, file: &Path) -> Result<Progress, Failure> {
        let absolute = std::fs::canonicalize(file)
            .map_err(|error| Failure { code: 1, message: format!("{}: {error}", file.display()) })?;
        let key = format!("{server}\n{}\n{}", workspace.unwrap_or(""), absolute.display());
        let name: String =
            sluice_auth::secrets::hash_secret(&key).iter().take(16).map(|byte| format!("{byte:02x}")).collect();
        let path = state_folder()?.join(format!("{name}.json"));
        let kept = std::fs::read(&path).ok().and_then(|bytes| serde_json::from_slice::<Progress>(&bytes).ok());
        Ok(match kept {
            Some(kept) => Progress { path, ..kept },
            None => Progress { done: 0, unit_is_bytes: true, path },
        })
    }

    /// From the start.
    pub(crate) fn restarted(self) -> Progress {
        Progress { done: 0, ..self }
    }

    /// Counting in bytes or in entries (a different unit than kept starts over).
    pub(crate) fn with_unit(self, bytes: bool) -> Progress {
        if self.unit_is_bytes == bytes { self } else { Progress { done: 0, unit_is_bytes: bytes, path: self.path } }
    }

    /// Writes it (a rename: a crash leaves the old or the new value, never half).
    pub(crate) fn save(&self) -> Result<(), Failure> {
        let folder = self.path.parent().context("no state folder")?;
        std::fs::create_dir_all(folder).with_context(|| format!("cannot create {}", folder.display()))?;
        let temporary = self.path.with_extension("tmp");
        std::fs::write(&temporary, serde_json::to_vec(self).context("progress")?)
            .context("cannot keep the import's progress")?;
        std::fs::rename(&temporary, &self.path).context("cannot keep the import's progress")?;
        Ok(())
    }

    /// The import is done: nothing to resume.
    pub(crate) fn forget(&self) -> Result<(), Failure> {
        match std::fs::remove_file(&self.path) {
            Err(error) if error.kind() != std::io::ErrorKind::NotFound => {
                Err(anyhow::anyhow!("cannot remove {}: {error}", self.path.display()).into())
            }
            _ => Ok(()),
        }
    }
}

/// The progress shown while importing.
pub(crate) enum Bar {
    /// A bar on a terminal.
    Terminal(indicatif::ProgressBar),
    /// Plain lines on stderr at each tenth of the file (or every 10,000 entries).
    Plain { name: String, size: Option<u64>, next: std::cell::Cell<u64>, entries: std::cell::Cell<u64> },
    /// Nothing (`--json`).
    Quiet,
}

impl Bar {
    pub(crate) fn new(file: &Path, size: Option<u64>, start: u64, json: bool) -> Bar {
        let name = file.display().to_string();
        if json {
            return Bar::Quiet;
        }
        if !std::io::stderr().is_terminal() {
            let step = size.map_or(10_000, |size| (size / 10).max(1));
            return Bar::Plain {
                name,
                size,
                next: std::cell::Cell::new(start + step),
                entries: std::cell::Cell::new(0),
            };
        }
        let bar = match size {
            Some(size) => {
                let bar = indicatif::ProgressBar::new(size);
                bar.set_style(
                    indicatif::ProgressStyle::with_template(
                        "{msg} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec} eta {eta}",
                    )
                    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
                    .progress_chars("=> "),
                );
                bar
            }
            None => indicatif::ProgressBar::new_spinner(),
        };
        bar.set_position(start);
        bar.set_message(name);
        Bar::Terminal(bar)
    }

    pub(crate) fn advance(&self, end: u64, count: u64) {
        match self {
            Bar::Terminal(bar) => match bar.length() {
                Some(_) => bar.set_position(end),
                None => bar.set_message(format!("{end} entries")),
            },
            Bar::Plain { name, size, next, entries } => {
                entries.set(entries.get() + count);
                if end >= next.get() {
                    let step = size.map_or(10_000, |size| (size / 10).max(1));
                    next.set(end + step);
                    match size {
                        Some(size) => {
                            eprintln!("{name}: {}% ({} entries sent)", end * 100 / (*size).max(1), entries.get())
                        }
                        None => eprintln!("{name}: {end} entries sent"),
                    }
                }
            }
            Bar::Quiet => {}
        }
    }

    pub(crate) fn finish(&self, sent: u64) {
        if let Bar::Terminal(bar) = self {
            bar.finish_with_message(format!("{sent} entries sent"));
        }
    }
}
