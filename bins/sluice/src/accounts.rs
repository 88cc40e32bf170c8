//! Users made from the command line: by `sluice admin user create` and, on a first start, the
//! admin `serve` prints the sign-in of.

use std::io::BufRead;

use anyhow::Context;
use sluice_model::{User, UserId};
use sluice_store::Store;
use sluice_store::accounts::{EMAIL_TAKEN, NewUser};

/// The shortest password accepted.
pub(crate) const MIN_PASSWORD_CHARS: usize = 8;

/// One line of stdin, its line end dropped.
pub(crate) fn password_from_stdin() -> anyhow::Result<String> {
    let mut line = String::new();
    std::io::stdin().lock().take_line(&mut line)?;
    Ok(line.trim_end_matches(['\n', '\r']).to_owned())
}

/// Reads one line of at most 4 KiB.
trait TakeLine {
    fn take_line(&mut self, line: &mut String) -> anyhow::Result<()>;
}

impl<R: BufRead> TakeLine for R {
    fn take_line(&mut self, line: &mut String) -> anyhow::Result<()> {
        let read = std::io::Read::take(self, 4096).read_line(line).context("cannot read the password from stdin")?;
        anyhow::ensure!(
            read > 0,
            "--password-stdin: stdin is empty; pipe the password in, e.g. `echo \"$PW\" | sluice admin user create ...`"
        );
        Ok(())
    }
}

/// Creates a user with `password`, or a generated one (returned to be shown once).
pub(crate) async fn create_user(
    store: &dyn Store,
    email: &str,
    name: Option<String>,
    admin: bool,
    password: Option<String>,
    now: i64,
) -> anyhow::Result<(User, Option<String>)> {
    let email = email.trim();
    anyhow::ensure!(
        email.contains('@') && email.len() <= 320 && !email.chars().any(char::is_whitespace),
        "'{email}' is not an email address"
    );
    let generated = match password {
        Some(_) => None,
        None => Some(sluice_auth::secrets::random_base62(20).context("the OS random number generator failed")?),
    };
    let password = password.or_else(|| generated.clone()).unwrap_or_default();
    anyhow::ensure!(
        password.chars().count() >= MIN_PASSWORD_CHARS,
        "the password is too short: use at least {MIN_PASSWORD_CHARS} characters"
    );
    let password_hash = sluice_auth::passwords::hash_password(&password)?;
    let user = User {
        id: UserId::generate(),
        email: email.to_owned(),
        name: name.filter(|name| !name.trim().is_empty()).unwrap_or_else(|| email.to_owned()),
        admin,
        created_at: now,
    };
    match store.create_user(&NewUser { user: user.clone(), password_hash }).await {
        Err(sluice_store::StoreError::Conflict(EMAIL_TAKEN)) => {
            anyhow::bail!("a user with the email {email} already exists")
        }
        other => other?,
    }
    Ok((user, generated))
}

/// A user named by id or email.
pub(crate) async fn existing_user(store: &dyn Store, named: &str) -> anyhow::Result<User> {
    let found = match named.parse::<UserId>() {
        Ok(id) => store.get_user(id).await?,
        Err(_) => store.find_user_by_email(named).await?.map(|(user, _)| user),
    };
    found.with_context(|| format!("no user {named}; create one with `sluice admin user create --email ...`"))
}
