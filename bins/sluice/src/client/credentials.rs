//! Where `sluice login` keeps its session tokens: `$XDG_CONFIG_HOME/sluice/credentials.toml`
//! (else `~/.config/...`), mode 0600, one table per server URL, and which server was signed in
//! to last.

use std::collections::BTreeMap;
use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::PathBuf;

use anyhow::Context;
use serde::{Deserialize, Serialize};

/// The file's contents.
#[derive(Debug, Default, Serialize, Deserialize)]
pub(crate) struct Credentials {
    /// The server signed in to last.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) current: Option<String>,
    /// Each server's sign-in, by its URL.
    #[serde(default)]
    pub(crate) servers: BTreeMap<String, Login>,
}

/// One server's sign-in.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Login {
    /// The session token (`slc_sess_...`).
    pub(crate) token: String,
    /// Who signed in.
    pub(crate) email: String,
}

/// The credentials file's path.
pub(crate) fn path() -> anyhow::Result<PathBuf> {
    let base = match std::env::var_os("XDG_CONFIG_HOME").filter(|value| !value.is_empty()) {
        Some(base) => PathBuf::from(base),
        None => {
            PathBuf::from(std::env::var_os("HOME").context("neither XDG_CONFIG_HOME nor HOME is set")?).join(".config")
        }
    };
    Ok(base.join("sluice").join("credentials.toml"))
}

impl Credentials {
    /// Reads the file; an absent one holds nothing.
    pub(crate) fn load() -> anyhow::Result<Credentials> {
        let path = path()?;
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(Credentials::default()),
            Err(error) => return Err(error).with_context(|| format!("cannot read {}", path.display())),
        };
        toml::from_str(&text).with_context(|| {
            format!("{} is not a sluice credentials file; remove it and sign in again", path.display())
        })
    }

    /// Writes the file whole, readable by its owner only (0600), by a rename so a reader never
    /// sees half of it.
    pub(crate) fn save(&self) -> anyhow::Result<()> {
        let path = path()?;
        let folder = path.parent().context("the credentials path has no folder")?;
        std::fs::create_dir_all(folder).with_context(|| format!("cannot create {}", folder.display()))?;
        let text = toml::to_string(self).context("cannot write the credentials")?;
        let temporary = path.with_extension("toml.tmp");
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&temporary)
            .with_context(|| format!("cannot write {}", temporary.display()))?;
        file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
        file.write_all(text.as_bytes())?;
        file.sync_all()?;
        std::fs::rename(&temporary, &path).with_context(|| format!("cannot write {}", path.display()))?;
        Ok(())
    }
}
