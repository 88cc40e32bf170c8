//! The command line, as DECISIONS' "Administration" section fixes it. Flags win over
//! `SLUICE_*` variables.

use clap::{Args, Parser, Subcommand};
use sluice_model::{KeyEnv, Plan, Scopes};

/// sluice: a multi-tenant structured-log service.
#[derive(Debug, Parser)]
#[command(name = "sluice", version, about)]
pub(crate) struct Cli {
    /// Where data lives: `sqlite://relative/path.db`, `sqlite:///absolute/path.db`, or
    /// `postgres://user:password@host:port/database`.
    #[arg(long, env = "SLUICE_DATABASE_URL", default_value = "sqlite://sluice-data/sluice.db", global = true)]
    pub(crate) database_url: String,

    /// PostgreSQL: connections in the pool.
    #[arg(long, env = "SLUICE_DB_POOL_SIZE", default_value_t = 16, global = true)]
    pub(crate) db_pool_size: usize,

    /// PostgreSQL: how long a request waits for a connection (or for a new one to open)
    /// before it is answered 503, in milliseconds.
    #[arg(long, env = "SLUICE_DB_TIMEOUT_MS", default_value_t = 5_000, global = true)]
    pub(crate) db_timeout_ms: u64,

    /// PostgreSQL: how long one request's database work may take in all before it is
    /// answered 503 (also the server's `statement_timeout`), in milliseconds.
    #[arg(long, env = "SLUICE_DB_CALL_TIMEOUT_MS", default_value_t = 10_000, global = true)]
    pub(crate) db_call_timeout_ms: u64,

    /// Log filter for the process's own diagnostics (tracing syntax, e.g. `info,sluice_http=debug`).
    #[arg(long, env = "SLUICE_LOG", default_value = "info", global = true)]
    pub(crate) log: String,

    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Run the HTTP server; creates the schema, and on first start a workspace and key.
    Serve(ServeOptions),
    /// Administer workspaces and keys (the dashboard's job, as a CLI).
    #[command(subcommand)]
    Admin(AdminCommand),
}

#[derive(Debug, Args)]
pub(crate) struct ServeOptions {
    /// Address to listen on.
    #[arg(long, env = "SLUICE_LISTEN", default_value = "127.0.0.1:8080")]
    pub(crate) listen: String,
}

#[derive(Debug, Subcommand)]
pub(crate) enum AdminCommand {
    /// Workspaces.
    #[command(subcommand)]
    Workspace(WorkspaceCommand),
    /// API keys.
    #[command(subcommand)]
    Key(KeyCommand),
    /// Apply the pending schema migrations and make the coming days' partitions (every
    /// command, and `serve`, does this first; this one does nothing else).
    Migrate {
        /// Print one JSON object.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
pub(crate) enum WorkspaceCommand {
    /// Create a workspace.
    Create {
        /// Its name.
        #[arg(long)]
        name: String,
        /// Its plan.
        #[arg(long, default_value = "free", value_parser = parse::<Plan>)]
        plan: Plan,
        /// Print one JSON object.
        #[arg(long)]
        json: bool,
    },
    /// List every workspace.
    List {
        /// Print one JSON object.
        #[arg(long)]
        json: bool,
    },
    /// Change a workspace's plan; takes effect on running servers within 5 seconds.
    SetPlan {
        /// The workspace.
        workspace_id: String,
        /// The new plan.
        #[arg(value_parser = parse::<Plan>)]
        plan: Plan,
        /// Print one JSON object.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
pub(crate) enum KeyCommand {
    /// Create a key; its value is printed once and never again.
    Create {
        /// The workspace it belongs to.
        #[arg(long)]
        workspace: String,
        /// `live` for production, `test` for test and development.
        #[arg(long, default_value = "live", value_parser = parse::<KeyEnv>)]
        env: KeyEnv,
        /// A label.
        #[arg(long)]
        name: Option<String>,
        /// What it may do: `ingest`, `read`, or `ingest,read`.
        #[arg(long, default_value = "ingest,read", value_parser = parse::<Scopes>)]
        scopes: Scopes,
        /// Seconds until it expires; never when absent.
        #[arg(long)]
        expires_in: Option<u64>,
        /// Print one JSON object.
        #[arg(long)]
        json: bool,
    },
    /// List a workspace's keys (never their values).
    List {
        /// The workspace.
        #[arg(long)]
        workspace: String,
        /// Print one JSON object.
        #[arg(long)]
        json: bool,
    },
    /// Revoke a key; running servers refuse it within 5 seconds.
    Revoke {
        /// The key's id (from `key list`).
        key_id: String,
        /// Print one JSON object.
        #[arg(long)]
        json: bool,
    },
}

fn parse<T: std::str::FromStr<Err = sluice_model::UnknownValue>>(text: &str) -> Result<T, String> {
    text.parse().map_err(|error: sluice_model::UnknownValue| error.to_string())
}
