//! Who you are and who else is there: `login`, `logout`, `whoami`, `keys`, `members`.

use clap::Subcommand;

use super::credentials::Login;
use super::output::{dim, json_line, line, table};
use super::{ClientOptions, Credentials, Failure, client_of, server_of};

pub(crate) async fn login(options: &ClientOptions, open: bool) -> Result<(), Failure> {
    let mut credentials = Credentials::load()?;
    let server = server_of(options, &credentials);
    let client = sluice_client::Client::new(&server)?;
    let code = client.start_device_login().await?;
    if options.json {
        json_line(&serde_json::json!({
            "userCode": code.user_code,
            "verificationUri": code.verification_uri,
            "verificationUriComplete": code.verification_uri_complete,
            "expiresIn": code.expires_in,
        }));
    } else {
        line(format!("To sign in, open {} and enter the code {}", code.verification_uri, code.user_code));
        line(dim(&format!(
            "or open {} (the code expires in {} minutes)",
            code.verification_uri_complete,
            code.expires_in / 60
        )));
    }
    if open {
        // Best effort: without a browser here, the printed link still works.
        let _ = std::process::Command::new("xdg-open")
            .arg(&code.verification_uri_complete)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn();
    }
    let token = client.finish_device_login(&code).await?;
    let me = client.clone().with_token(token.clone()).me().await?;
    credentials.servers.insert(server.clone(), Login { token, email: me.user.email.clone() });
    credentials.current = Some(server.clone());
    credentials.save()?;
    if options.json {
        json_line(&serde_json::json!({"server": server, "user": me.user, "workspaces": me.workspaces}));
    } else {
        line(format!("Signed in to {server} as {}.", me.user.email));
    }
    Ok(())
}

pub(crate) async fn logout(options: &ClientOptions) -> Result<(), Failure> {
    let mut credentials = Credentials::load()?;
    let server = server_of(options, &credentials);
    let Some(login) = credentials.servers.remove(&server) else {
        return Err(Failure { code: 1, message: format!("not signed in to {server}") });
    };
    let client = sluice_client::Client::new(&server)?.with_token(login.token);
    // A session the server no longer knows is signed out all the same.
    match client.logout().await {
        Ok(()) | Err(sluice_client::Error::Refused { status: 401, .. }) => {}
        Err(error) => return Err(error.into()),
    }
    if credentials.current.as_deref() == Some(server.as_str()) {
        credentials.current = credentials.servers.keys().next().cloned();
    }
    credentials.save()?;
    if options.json {
        json_line(&serde_json::json!({"server": server, "signedOut": true}));
    } else {
        line(format!("Signed out of {server} ({}).", login.email));
    }
    Ok(())
}

pub(crate) async fn whoami(options: &ClientOptions) -> Result<(), Failure> {
    let client = client_of(options)?;
    let me = client.me().await?;
    if options.json {
        json_line(&me);
        return Ok(());
    }
    let admin = if me.user.admin { " (instance admin)" } else { "" };
    line(format!("{} <{}>{admin} on {}", me.user.name, me.user.email, client.base_url()));
    let rows: Vec<Vec<String>> =
        me.workspaces.iter().map(|w| vec![w.workspace_id.clone(), w.name.clone(), w.role.clone()]).collect();
    table(&["WORKSPACE", "NAME", "ROLE"], &rows);
    Ok(())
}

/// `sluice keys`.
#[derive(Debug, Subcommand)]
pub(crate) enum KeysCommand {
    /// The workspace's keys (never their values).
    List {
        #[command(flatten)]
        options: ClientOptions,
    },
    /// Make a key; its value is printed once.
    Create {
        #[command(flatten)]
        options: ClientOptions,
        /// A label.
        #[arg(long)]
        name: Option<String>,
        /// live or test.
        #[arg(long)]
        env: Option<String>,
        /// ingest, read, or ingest,read.
        #[arg(long)]
        scopes: Option<String>,
        /// Seconds until it expires.
        #[arg(long)]
        expires_in: Option<u64>,
    },
    /// Revoke a key.
    Revoke {
        #[command(flatten)]
        options: ClientOptions,
        /// The key's id (from `keys list`).
        key_id: String,
    },
}

pub(crate) async fn keys(command: KeysCommand) -> Result<(), Failure> {
    match command {
        KeysCommand::List { options } => {
            let keys = client_of(&options)?.keys().await?;
            if options.json {
                json_line(&serde_json::json!({"keys": keys}));
                return Ok(());
            }
            let rows: Vec<Vec<String>> = keys
                .iter()
                .map(|key| {
                    vec![
                        key.key_id.clone(),
                        key.env.clone(),
                        key.state.clone(),
                        key.scopes.join(","),
                        key.name.clone().unwrap_or_default(),
                    ]
                })
                .collect();
            table(&["KEY", "ENV", "STATE", "SCOPES", "NAME"], &rows);
        }
        KeysCommand::Create { options, name, env, scopes, expires_in } => {
            let scopes = scopes.map(|scopes| scopes.split(',').map(|scope| scope.trim().to_owned()).collect());
            let request = sluice_client::KeyRequest { name, env, scopes, expires_in };
            let key = client_of(&options)?.create_key(&request).await?;
            if options.json {
                json_line(&key);
            } else {
                line(format!(
                    "Created key {}. Its value is shown only this once:\n\n    {}\n",
                    key.key_id, key.api_key
                ));
            }
        }
        KeysCommand::Revoke { options, key_id } => {
            client_of(&options)?.revoke_key(&key_id).await?;
            if options.json {
                json_line(&serde_json::json!({"keyId": key_id, "state": "revoked"}));
            } else {
                line(format!("Revoked key {key_id}."));
            }
        }
    }
    Ok(())
}

/// `sluice members`.
#[derive(Debug, Subcommand)]
pub(crate) enum MembersCommand {
    /// The workspace's members.
    List {
        #[command(flatten)]
        options: ClientOptions,
    },
    /// Add an existing user, by email.
    Add {
        #[command(flatten)]
        options: ClientOptions,
        /// Their email.
        email: String,
        /// owner, member or viewer.
        #[arg(long, default_value = "member")]
        role: String,
    },
    /// Remove a member, by email or user id.
    Remove {
        #[command(flatten)]
        options: ClientOptions,
        /// Their email or user id.
        user: String,
    },
}

pub(crate) async fn members(command: MembersCommand) -> Result<(), Failure> {
    match command {
        MembersCommand::List { options } => {
            let members = client_of(&options)?.members().await?;
            if options.json {
                json_line(&serde_json::json!({"members": members}));
                return Ok(());
            }
            let rows: Vec<Vec<String>> = members
                .iter()
                .map(|m| vec![m.email.clone(), m.name.clone(), m.role.clone(), m.user_id.clone()])
                .collect();
            table(&["EMAIL", "NAME", "ROLE", "USER"], &rows);
        }
        MembersCommand::Add { options, email, role } => {
            let member = client_of(&options)?.add_member(&email, &role).await?;
            if options.json {
                json_line(&member);
            } else {
                line(format!("{} is now {} of the workspace.", member.email, member.role));
            }
        }
        MembersCommand::Remove { options, user } => {
            let client = client_of(&options)?;
            let id = if user.contains('@') {
                let members = client.members().await?;
                let found = members.iter().find(|member| member.email.eq_ignore_ascii_case(&user));
                match found {
                    Some(member) => member.user_id.clone(),
                    None => {
                        return Err(Failure { code: 2, message: format!("{user} is not a member of this workspace") });
                    }
                }
            } else {
                user.clone()
            };
            client.remove_member(&id).await?;
            if options.json {
                json_line(&serde_json::json!({"userId": id, "removed": true}));
            } else {
                line(format!("Removed {user} from the workspace."));
            }
        }
    }
    Ok(())
}
