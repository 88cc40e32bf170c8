//! The command line, as README.md (Administration, Configuration) documents it. Flags win over
//! `SLUICE_*` variables.

use clap::{Args, Parser, Subcommand};
use sluice_model::{KeyEnv, Plan, Role, Scopes};

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

    /// How long a request waits for a database connection (on PostgreSQL, or for a new one to
    /// open) before it is answered 503, in milliseconds.
    #[arg(long, env = "SLUICE_DB_TIMEOUT_MS", default_value_t = 5_000, global = true)]
    pub(crate) db_timeout_ms: u64,

    /// How long one request's database work may take in all before it is answered 503 (a
    /// search 500 `Search failed`), its statement stopped; on PostgreSQL also the server's
    /// `statement_timeout`. In milliseconds.
    #[arg(long, env = "SLUICE_DB_CALL_TIMEOUT_MS", default_value_t = 10_000, global = true)]
    pub(crate) db_call_timeout_ms: u64,

    /// The most bytes the SQLite database file may take; past it, as on a full disk, ingest
    /// answers 503 `Storage is full` until retention or an operator frees space. Unset: as much
    /// as the disk holds.
    #[arg(long, env = "SLUICE_SQLITE_MAX_BYTES", global = true)]
    pub(crate) sqlite_max_bytes: Option<u64>,

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
    /// The client commands (login, send, list, tail...).
    #[command(flatten)]
    Client(crate::client::ClientCommand),
}

#[derive(Debug, Args)]
pub(crate) struct ServeOptions {
    /// Address to listen on.
    #[arg(long, env = "SLUICE_LISTEN", default_value = "127.0.0.1:8080")]
    pub(crate) listen: String,

    /// Proxies whose `X-Forwarded-For` / `Forwarded` and `CF-IPCountry` are believed: IP
    /// addresses and CIDR blocks, separated by commas (default: none).
    #[arg(long, env = "SLUICE_TRUSTED_PROXIES", default_value = "")]
    pub(crate) trusted_proxies: String,

    /// A MaxMind-format country database (GeoLite2-Country.mmdb) for clients' countries.
    #[arg(long, env = "SLUICE_GEOIP_DB")]
    pub(crate) geoip_db: Option<std::path::PathBuf>,

    /// Redis (`redis://host:port/db`) holding the rate-limit window, shared by every process
    /// that names it; in-process when absent.
    #[arg(long, env = "SLUICE_REDIS_URL")]
    pub(crate) redis_url: Option<String>,

    /// How long a rate-limit check may wait for Redis before the request is admitted
    /// unlimited (fail open), in milliseconds.
    #[arg(long, env = "SLUICE_REDIS_TIMEOUT_MS", default_value_t = 50)]
    pub(crate) redis_timeout_ms: u64,

    /// How long a request body may take to arrive in full before the request gets 408, in
    /// milliseconds.
    #[arg(long, env = "SLUICE_BODY_TIMEOUT_MS", default_value_t = 30_000)]
    pub(crate) body_timeout_ms: u64,

    /// How long a client may take to send a request's headers before the connection gets 408
    /// and is closed, in milliseconds.
    #[arg(long, env = "SLUICE_HEADER_TIMEOUT_MS", default_value_t = 5_000)]
    pub(crate) header_timeout_ms: u64,

    /// The most bytes of headers a request may carry (names, values, `: ` and line ends)
    /// before it is answered 431 `Request headers too large`.
    #[arg(long, env = "SLUICE_MAX_HEADER_BYTES", default_value_t = sluice_http::limits::DEFAULT_MAX_HEADER_BYTES)]
    pub(crate) max_header_bytes: usize,

    /// The most logs waiting to be written; a request that would pass it is answered 503 with
    /// `Retry-After` at once, nothing stored.
    #[arg(long, env = "SLUICE_WRITE_QUEUE_LOGS", default_value_t = sluice_store::DEFAULT_MAX_QUEUED_LOGS)]
    pub(crate) write_queue_logs: usize,

    /// How long a request's logs may wait to be written before it is answered 503 with
    /// `Retry-After`, nothing stored, in milliseconds.
    #[arg(long, env = "SLUICE_WRITE_QUEUE_WAIT_MS", default_value_t = sluice_store::DEFAULT_MAX_WAIT.as_millis() as u64)]
    pub(crate) write_queue_wait_ms: u64,

    /// The base URL people reach this server at (`https://logs.example.com`), for the device
    /// sign-in's link; `http://` and the listen address when absent.
    #[arg(long, env = "SLUICE_PUBLIC_URL")]
    pub(crate) public_url: Option<String>,

    /// How long an idle keep-alive connection stays open, in seconds.
    #[arg(long, env = "SLUICE_KEEP_ALIVE_SECS", default_value_t = 75)]
    pub(crate) keep_alive_secs: u64,

    /// Most open connections per worker thread (one worker per core); further ones wait in
    /// the listen backlog.
    #[arg(long, env = "SLUICE_MAX_CONNECTIONS", default_value_t = 10_000)]
    pub(crate) max_connections: usize,

    /// Time between retention sweeps, counted from start (`3600`, `90s`, `30m`, `1h`, `1d`).
    #[arg(long, env = "SLUICE_RETENTION_INTERVAL", default_value = "1h", value_parser = parse_interval)]
    pub(crate) retention_interval: std::time::Duration,

    /// The ingest benchmark's stand-ins (feature `bench`, which no production build enables).
    #[cfg(feature = "bench")]
    #[command(flatten)]
    pub(crate) bench: crate::bench::BenchOptions,
}

/// A duration: whole seconds, or a number with `s`, `m`, `h` or `d`.
fn parse_interval(text: &str) -> Result<std::time::Duration, String> {
    let text = text.trim();
    let (number, unit) = match text.find(|c: char| !c.is_ascii_digit()) {
        Some(at) => text.split_at(at),
        None => (text, "s"),
    };
    let scale = match unit.trim() {
        "s" => 1,
        "m" => 60,
        "h" => 3_600,
        "d" => 86_400,
        _ => return Err(format!("expected seconds or a number with s, m, h or d, got '{text}'")),
    };
    match number.parse::<u64>() {
        Ok(value) if value > 0 => Ok(std::time::Duration::from_secs(value.saturating_mul(scale))),
        _ => Err(format!("expected a positive interval, got '{text}'")),
    }
}

#[derive(Debug, Subcommand)]
pub(crate) enum AdminCommand {
    /// Workspaces.
    #[command(subcommand)]
    Workspace(WorkspaceCommand),
    /// API keys.
    #[command(subcommand)]
    Key(KeyCommand),
    /// Retention.
    #[command(subcommand)]
    Retention(RetentionCommand),
    /// People who sign in.
    #[command(subcommand)]
    User(UserCommand),
    /// Who belongs to a workspace, with which role.
    #[command(subcommand)]
    Member(MemberCommand),
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
    /// Show a workspace: plan, figures in force and this month's usage.
    Show {
        /// The workspace.
        workspace_id: String,
        /// Print one JSON object.
        #[arg(long)]
        json: bool,
    },
    /// Put a workspace on a plan, with the plan's figures unless given here; takes effect on
    /// running servers within 5 seconds.
    SetPlan {
        /// The workspace.
        workspace_id: String,
        /// The new plan.
        #[arg(value_parser = parse::<Plan>)]
        plan: Plan,
        /// `POST /v1/logs` requests per 60 seconds, or `unlimited`.
        #[arg(long, value_parser = parse_figure)]
        requests_per_minute: Option<Figure>,
        /// Logs accepted per UTC month, or `unlimited`.
        #[arg(long, value_parser = parse_figure)]
        logs_per_month: Option<Figure>,
        /// Days a log is kept.
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..=36_500))]
        retention_days: Option<u32>,
        /// Print one JSON object.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
pub(crate) enum RetentionCommand {
    /// Sweep now: delete every workspace's logs older than its retention.
    Run {
        /// Print one JSON object.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
pub(crate) enum UserCommand {
    /// Create a user; without `--password-stdin` a password is generated and printed once.
    Create {
        /// Their email, unique whatever its case.
        #[arg(long)]
        email: String,
        /// A display name (the email when absent).
        #[arg(long)]
        name: Option<String>,
        /// An instance administrator (may change plans).
        #[arg(long)]
        admin: bool,
        /// Read the password from one line of stdin (its newline dropped).
        #[arg(long)]
        password_stdin: bool,
        /// Print one JSON object.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
pub(crate) enum MemberCommand {
    /// Make a user a member of a workspace, or give a member another role.
    Add {
        /// The workspace.
        #[arg(long)]
        workspace: String,
        /// The user: their id or email.
        #[arg(long)]
        user: String,
        /// `owner`, `member` or `viewer`.
        #[arg(long, value_parser = parse::<Role>)]
        role: Role,
        /// Print one JSON object.
        #[arg(long)]
        json: bool,
    },
    /// Remove a member (this may leave a workspace without an owner).
    Remove {
        /// The workspace.
        #[arg(long)]
        workspace: String,
        /// The user: their id or email.
        #[arg(long)]
        user: String,
        /// Print one JSON object.
        #[arg(long)]
        json: bool,
    },
}

/// A custom figure: a number, or no limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Figure(pub(crate) Option<u64>);

fn parse_figure(text: &str) -> Result<Figure, String> {
    if text == "unlimited" {
        return Ok(Figure(None));
    }
    match text.parse::<u64>() {
        Ok(value) if value > 0 => Ok(Figure(Some(value))),
        _ => Err(format!("expected a positive whole number or 'unlimited', got '{text}'")),
    }
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
