//! `sluice admin`: workspaces and keys, straight against the store the server uses.
//! `--json` prints exactly one JSON object on one line on stdout.

use anyhow::Context;
use serde_json::{Value, json};
use sluice_http::unix_now_ms;
use sluice_model::{KeyId, Limits, Workspace, WorkspaceId};
use sluice_store::accounts::MemberChange;
use sluice_store::{Store, StoreError};

use crate::cli::{AdminCommand, KeyCommand, MemberCommand, RetentionCommand, UserCommand, WorkspaceCommand};

/// Prints `value` as one line of JSON, or `human` for people.
fn print(json_output: bool, value: impl serde::Serialize, human: impl FnOnce() -> String) {
    if json_output {
        println!("{}", serde_json::to_string(&value).unwrap_or_default());
    } else {
        println!("{}", human());
    }
}

fn workspace_json(workspace: &Workspace) -> Value {
    json!({
        "workspaceId": workspace.id.to_string(),
        "name": workspace.name,
        "plan": workspace.plan.as_str(),
        "limits": workspace.limits,
        "createdAt": workspace.created_at,
    })
}

/// A figure for people: the number, or "unlimited".
fn figure(value: Option<impl std::fmt::Display>) -> String {
    value.map_or_else(|| "unlimited".to_owned(), |value| value.to_string())
}

/// The UTC month holding `ms`, as `YYYY-MM`.
fn month_name(ms: i64) -> String {
    time::OffsetDateTime::from_unix_timestamp(ms.div_euclid(1000))
        .map(|moment| format!("{:04}-{:02}", moment.year(), u8::from(moment.month())))
        .unwrap_or_default()
}

async fn existing_workspace(store: &dyn Store, id: &str) -> anyhow::Result<Workspace> {
    let id: WorkspaceId = id.parse().map_err(|_| anyhow::anyhow!("workspace {id} not found"))?;
    store.get_workspace(id).await?.with_context(|| format!("workspace {id} not found"))
}

/// Runs one admin command.
pub(crate) async fn run(store: &dyn Store, command: AdminCommand) -> anyhow::Result<()> {
    let now = unix_now_ms();
    match command {
        // Opening the store applied the migrations already.
        AdminCommand::Migrate { json } => {
            store.maintain().await?;
            print(json, json!({"migrated": true}), || "the database schema is current".to_owned());
        }
        AdminCommand::Workspace(WorkspaceCommand::Create { name, plan, json }) => {
            let workspace = Workspace::new(name, plan, now);
            store.create_workspace(&workspace).await?;
            let value = json!({"workspaceId": workspace.id.to_string(), "name": workspace.name, "plan": plan.as_str()});
            print(json, value, || format!("created workspace {} ({}, plan {plan})", workspace.id, workspace.name));
        }
        AdminCommand::Workspace(WorkspaceCommand::List { json }) => {
            let workspaces = store.list_workspaces().await?;
            let value = json!({"workspaces": workspaces.iter().map(workspace_json).collect::<Vec<_>>()});
            print(json, value, || {
                workspaces
                    .iter()
                    .map(|w| format!("{}  {:<10}  {}", w.id, w.plan.as_str(), w.name))
                    .collect::<Vec<_>>()
                    .join("\n")
            });
        }
        AdminCommand::Workspace(WorkspaceCommand::Show { workspace_id, json }) => {
            let workspace = existing_workspace(store, &workspace_id).await?;
            let month = sluice_model::calendar::month_start_ms(now);
            let used = store.monthly_usage(workspace.id, month).await?;
            let limits = workspace.limits;
            let value = json!({
                "workspaceId": workspace.id.to_string(),
                "name": workspace.name,
                "plan": workspace.plan.as_str(),
                "limits": limits,
                "usage": {"month": month_name(now), "logs": used},
                "createdAt": workspace.created_at,
            });
            print(json, value, || {
                format!(
                    "workspace {} ({})\nplan:        {}\nrate limit:  {} requests/min\nquota:       {} logs/month\nretention:   {} days\nusage:       {} logs in {}",
                    workspace.id,
                    workspace.name,
                    workspace.plan,
                    figure(limits.requests_per_minute),
                    figure(limits.logs_per_month),
                    limits.retention_days,
                    used,
                    month_name(now)
                )
            });
        }
        AdminCommand::Workspace(WorkspaceCommand::SetPlan {
            workspace_id,
            plan,
            requests_per_minute,
            logs_per_month,
            retention_days,
            json,
        }) => {
            let workspace = existing_workspace(store, &workspace_id).await?;
            let defaults = plan.limits();
            let limits = Limits {
                requests_per_minute: match requests_per_minute {
                    Some(figure) => figure
                        .0
                        .map(|value| u32::try_from(value).context("--requests-per-minute is too large"))
                        .transpose()?,
                    None => defaults.requests_per_minute,
                },
                logs_per_month: logs_per_month.map_or(defaults.logs_per_month, |figure| figure.0),
                retention_days: retention_days.unwrap_or(defaults.retention_days),
            };
            store.set_plan(workspace.id, plan, limits).await?;
            let value = json!({"workspaceId": workspace.id.to_string(), "plan": plan.as_str(), "limits": limits});
            print(json, value, || format!("workspace {} is now on plan {plan}", workspace.id));
        }
        AdminCommand::Retention(RetentionCommand::Run { json }) => {
            let deleted = sluice_store::retention::sweep(store, now).await?;
            print(json, json!({"deleted": deleted}), || format!("retention sweep: {deleted} logs deleted"));
        }
        AdminCommand::Key(KeyCommand::Create { workspace, env, name, scopes, expires_in, json }) => {
            let workspace = existing_workspace(store, &workspace).await?;
            anyhow::ensure!(
                expires_in.is_none_or(|seconds| seconds <= i64::MAX.unsigned_abs() / 1000 - now.unsigned_abs() / 1000),
                "--expires-in is too large"
            );
            let (text, key) = sluice_auth::mint_key(workspace.id, env, name, scopes, expires_in, now)
                .context("the OS random number generator failed")?;
            store.create_key(&key).await?;
            let (record, expires_at) = (&key.record, key.record.expires_at);
            let value = json!({
                "keyId": record.id.to_string(),
                "apiKey": text,
                "workspaceId": workspace.id.to_string(),
                "expiresAt": expires_at,
            });
            print(json, value, || {
                format!(
                    "created key {} for workspace {}; it is shown only this once:\n\n    {}\n",
                    record.id, workspace.id, text
                )
            });
        }
        AdminCommand::Key(KeyCommand::List { workspace, json }) => {
            let workspace = existing_workspace(store, &workspace).await?;
            let keys = store.list_keys(workspace.id).await?;
            let value = json!({"keys": keys.iter().map(|key| sluice_http::views::key(key, now)).collect::<Vec<_>>()});
            print(json, value, || {
                keys.iter()
                    .map(|k| {
                        format!(
                            "{}  {}  {:<8}  {:<11}  {}",
                            k.id,
                            k.env.as_str(),
                            format!("{:?}", k.state(now)).to_lowercase(),
                            k.scopes,
                            k.name.as_deref().unwrap_or("")
                        )
                    })
                    .collect::<Vec<_>>()
                    .join("\n")
            });
        }
        AdminCommand::Key(KeyCommand::Revoke { key_id, json }) => {
            let id: KeyId = key_id.parse().map_err(|_| anyhow::anyhow!("key {key_id} not found"))?;
            match store.revoke_key(id, now).await {
                Err(StoreError::NotFound(_)) => anyhow::bail!("key {key_id} not found"),
                other => other?,
            }
            print(json, json!({"keyId": id.to_string(), "state": "revoked"}), || format!("key {id} revoked"));
        }
        AdminCommand::User(UserCommand::Create { email, name, admin, password_stdin, json }) => {
            let password = if password_stdin { Some(crate::accounts::password_from_stdin()?) } else { None };
            let (user, generated) = crate::accounts::create_user(store, &email, name, admin, password, now).await?;
            let mut value = json!(sluice_http::views::user(&user));
            if let (Some(password), Some(object)) = (&generated, value.as_object_mut()) {
                object.insert("password".into(), json!(password));
            }
            print(json, value, || match &generated {
                Some(password) => format!(
                    "created user {} ({}); their password is shown only this once:\n\n    {password}\n",
                    user.id, user.email
                ),
                None => format!("created user {} ({})", user.id, user.email),
            });
        }
        AdminCommand::Member(MemberCommand::Add { workspace, user, role, json }) => {
            let workspace = existing_workspace(store, &workspace).await?;
            let user = crate::accounts::existing_user(store, &user).await?;
            store.change_member(workspace.id, user.id, MemberChange::Set(role), false, now).await?;
            let value =
                json!({"workspaceId": workspace.id.to_string(), "userId": user.id.to_string(), "role": role.as_str()});
            print(json, value, || {
                format!("{} is now {role} of workspace {} ({})", user.email, workspace.id, workspace.name)
            });
        }
        AdminCommand::Member(MemberCommand::Remove { workspace, user, json }) => {
            let workspace = existing_workspace(store, &workspace).await?;
            let user = crate::accounts::existing_user(store, &user).await?;
            match store.change_member(workspace.id, user.id, MemberChange::Remove, false, now).await {
                Err(StoreError::NotFound(_)) => {
                    anyhow::bail!("{} is not a member of workspace {}", user.email, workspace.id)
                }
                other => other?,
            }
            let value =
                json!({"workspaceId": workspace.id.to_string(), "userId": user.id.to_string(), "removed": true});
            print(json, value, || format!("{} is no longer a member of workspace {}", user.email, workspace.id));
        }
    }
    Ok(())
}
