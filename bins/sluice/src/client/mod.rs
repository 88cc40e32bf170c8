//! `sluice` as a client of a running server (docs/API.md, "Command-line client"): sign in with
//! the device flow, send and import logs, read them, follow the tail, manage keys and members.
//! Built on `sluice-client`; exit codes 0 ok, 1 usage, 2 refused (4xx), 3 unavailable.

mod credentials;
mod output;
mod progress;
mod read;
mod send;
mod team;

use clap::{Args, Subcommand};
use sluice_client::Client;

pub(crate) use credentials::Credentials;

/// The server when nothing else names one.
pub(crate) const DEFAULT_SERVER: &str = "http://127.0.0.1:8080";

/// What every client command takes.
#[derive(Debug, Clone, Args)]
pub(crate) struct ClientOptions {
    /// The server's URL; else `SLUICE_SERVER`, else the server last signed in to, else
    /// http://127.0.0.1:8080.
    #[arg(long, env = "SLUICE_SERVER")]
    pub(crate) server: Option<String>,
    /// The workspace to act on (its id); else your only one, or the first by name.
    #[arg(long)]
    pub(crate) workspace: Option<String>,
    /// Print JSON: one document per line.
    #[arg(long)]
    pub(crate) json: bool,
    /// An API key to use instead of your sign-in.
    #[arg(long, env = "SLUICE_API_KEY", hide_env_values = true)]
    pub(crate) api_key: Option<String>,
}

/// The client commands.
#[derive(Debug, Subcommand)]
pub(crate) enum ClientCommand {
    /// Sign in to a server with your browser (OAuth device flow); the session is kept in
    /// ~/.config/sluice/credentials.toml.
    Login {
        #[command(flatten)]
        options: ClientOptions,
        /// Open the approval page in a browser (`xdg-open`).
        #[arg(long)]
        open: bool,
    },
    /// Sign out: end the stored session on the server and forget it here.
    Logout {
        #[command(flatten)]
        options: ClientOptions,
    },
    /// Who you are signed in as, and your workspaces.
    Whoami {
        #[command(flatten)]
        options: ClientOptions,
    },
    /// Send logs from files, or stdin without any, in batches of 100.
    Send(send::SendArgs),
    /// Import large files with a progress bar; run it again after an interruption to resume.
    Import(send::ImportArgs),
    /// List logs, newest first.
    List(read::ListArgs),
    /// One log, every field.
    Get {
        #[command(flatten)]
        options: ClientOptions,
        /// The log's id.
        id: String,
    },
    /// Search logs with the query language (`"a phrase" word -excluded`).
    Search(read::SearchArgs),
    /// Counts per level by day, hour or source.
    Stats(read::StatsArgs),
    /// Today against yesterday.
    Summary {
        #[command(flatten)]
        options: ClientOptions,
    },
    /// Follow logs as they arrive (Ctrl-C ends).
    Tail(read::TailArgs),
    /// Flows, the most recently active first.
    Flows(read::FlowsArgs),
    /// One flow's timeline: its steps in order, gaps and duplicates marked.
    Flow {
        #[command(flatten)]
        options: ClientOptions,
        /// The flow's id.
        id: String,
    },
    /// API keys of the workspace.
    #[command(subcommand)]
    Keys(team::KeysCommand),
    /// Members of the workspace.
    #[command(subcommand)]
    Members(team::MembersCommand),
}

/// An error of a client command, with its exit code.
pub(crate) struct Failure {
    pub(crate) code: u8,
    pub(crate) message: String,
}

impl From<sluice_client::Error> for Failure {
    fn from(error: sluice_client::Error) -> Self {
        let mut message = error.to_string();
        if let sluice_client::Error::Refused { body, .. } = &error {
            for issue in body["issues"].as_array().into_iter().flatten() {
                message.push('\n');
                message.push_str(&issue_line(issue));
            }
            if error.status() == Some(401) {
                message.push_str("\n  Sign in with `sluice login`, or pass --api-key.");
            }
        }
        Failure { code: u8::try_from(error.exit_code()).unwrap_or(3), message }
    }
}

impl From<anyhow::Error> for Failure {
    fn from(error: anyhow::Error) -> Self {
        Failure { code: 1, message: format!("{error:#}") }
    }
}

/// One issue of a Validation error (`{"path": [...], "message"}`) as an indented line:
/// `  0.source: Required`.
pub(crate) fn issue_line(issue: &serde_json::Value) -> String {
    let path: Vec<String> = issue["path"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|part| part.to_string().trim_matches('"').to_owned())
        .collect();
    format!("  {}: {}", path.join("."), issue["message"].as_str().unwrap_or_default())
}

/// The server a command talks to: `--server`/`SLUICE_SERVER`, else the last signed in to,
/// else the default.
pub(crate) fn server_of(options: &ClientOptions, credentials: &Credentials) -> String {
    options
        .server
        .clone()
        .or_else(|| credentials.current.clone())
        .unwrap_or_else(|| DEFAULT_SERVER.to_owned())
        .trim_end_matches('/')
        .to_owned()
}

/// A client of the command's server with its credential: `--api-key`/`SLUICE_API_KEY`, else
/// `SLUICE_TOKEN`, else the stored sign-in for that server.
pub(crate) fn client_of(options: &ClientOptions) -> Result<Client, Failure> {
    let credentials = Credentials::load()?;
    let server = server_of(options, &credentials);
    let mut client = Client::new(&server)?;
    let token = options
        .api_key
        .clone()
        .filter(|key| !key.is_empty())
        .or_else(|| std::env::var("SLUICE_TOKEN").ok().filter(|token| !token.is_empty()))
        .or_else(|| credentials.servers.get(&server).map(|login| login.token.clone()));
    if let Some(token) = token {
        client = client.with_token(token);
    }
    if let Some(workspace) = &options.workspace {
        client = client.with_workspace(workspace.clone());
    }
    Ok(client)
}

/// Runs a client command; the exit code.
pub(crate) async fn run(command: ClientCommand) -> u8 {
    let result = match command {
        ClientCommand::Login { options, open } => team::login(&options, open).await,
        ClientCommand::Logout { options } => team::logout(&options).await,
        ClientCommand::Whoami { options } => team::whoami(&options).await,
        ClientCommand::Send(args) => send::send(args).await,
        ClientCommand::Import(args) => send::import(args).await,
        ClientCommand::List(args) => read::list(args).await,
        ClientCommand::Get { options, id } => read::get(&options, &id).await,
        ClientCommand::Search(args) => read::search(args).await,
        ClientCommand::Stats(args) => read::stats(args).await,
        ClientCommand::Summary { options } => read::summary(&options).await,
        ClientCommand::Tail(args) => read::tail(args).await,
        ClientCommand::Flows(args) => read::flows(args).await,
        ClientCommand::Flow { options, id } => read::flow(&options, &id).await,
        ClientCommand::Keys(command) => team::keys(command).await,
        ClientCommand::Members(command) => team::members(command).await,
    };
    match result {
        Ok(()) => 0,
        Err(failure) => {
            let style = anstyle::Style::new().fg_color(Some(anstyle::AnsiColor::Red.into())).bold();
            let mut err = anstream::stderr();
            let _ = std::io::Write::write_fmt(&mut err, format_args!("{style}error:{style:#} {}\n", failure.message));
            failure.code
        }
    }
}
