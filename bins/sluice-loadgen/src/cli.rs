//! The command line of `sluice-loadgen` (clap): by default the ingest benchmark's load, or one
//! of the other benchmarks' modes as a subcommand.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// Load for sluice's benchmarks, sent over HTTP to a server in its own process.
#[derive(Parser)]
#[command(name = "sluice-loadgen", args_conflicts_with_subcommands = true)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) mode: Option<Mode>,
    #[command(flatten)]
    pub(crate) ingest: IngestArgs,
}

/// The ingest benchmark: 100-entry batches of one format for `--warmup`, then `--seconds`.
#[derive(Args)]
pub(crate) struct IngestArgs {
    /// The server, `http://HOST:PORT`.
    #[arg(long, required_unless_present = "copy_csv")]
    pub(crate) url: Option<String>,
    /// An API key with `ingest`.
    #[arg(long, required_unless_present = "copy_csv")]
    pub(crate) key: Option<String>,
    /// `json`, `jsonl`, `syslog`, `text` or `otlp`.
    #[arg(long, default_value = "json")]
    pub(crate) format: String,
    /// The test corpus (its `loghub` folder is read).
    #[arg(long, default_value = "../shared/corpus")]
    pub(crate) corpus: PathBuf,
    /// Keep-alive connections.
    #[arg(long, default_value_t = 32)]
    pub(crate) connections: usize,
    /// Measured seconds.
    #[arg(long, default_value_t = 60)]
    pub(crate) seconds: u64,
    /// Seconds sent first and not counted.
    #[arg(long, default_value_t = 5)]
    pub(crate) warmup: u64,
    /// The server's process: its CPU time and peak RSS are read from /proc.
    #[arg(long)]
    pub(crate) server_pid: Option<u32>,
    /// A PostgreSQL postmaster whose children's CPU time is counted with it.
    #[arg(long)]
    pub(crate) db_pid: Option<u32>,
    /// The row's label.
    #[arg(long, default_value = "sluice")]
    pub(crate) label: String,
    /// Offered load in logs a second (open loop); without it, as fast as answers come.
    #[arg(long)]
    pub(crate) rate: Option<f64>,
    /// Rows `--copy-csv` writes.
    #[arg(long, default_value_t = 100_000)]
    pub(crate) copy_rows: usize,
    /// Instead of sending: write the JSON workload's entries as CSV in the naive table's
    /// columns here (the raw COPY baseline).
    #[arg(long)]
    pub(crate) copy_csv: Option<PathBuf>,
}

#[derive(Subcommand)]
pub(crate) enum Mode {
    /// The search benchmark's logs, sent once.
    SearchIngest(WorkloadArgs),
    /// The loghub lines alone, sent once.
    PlainIngest(WorkloadArgs),
    /// Searches of each kind, one at a time.
    SearchQueries(WorkloadArgs),
    /// The flow benchmark's logs, sent once.
    FlowsIngest(WorkloadArgs),
    /// Flow lists and timelines (and, with `--password`, the dashboard's explorer).
    FlowsQueries(WorkloadArgs),
    /// The peers benchmark's logs, sent to sluice or VictoriaLogs.
    PeersIngest(PeersArgs),
    /// The peers benchmark's searches.
    PeersQueries(PeersArgs),
    /// The soak's readers.
    Reads(ReadsArgs),
    /// Live tails while logs are sent.
    Tail(TailArgs),
}

/// What the search, flow and peers benchmarks' modes share: the logs they make.
#[derive(Args)]
pub(crate) struct DataArgs {
    /// Logs in the workload.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) logs: u64,
    /// The test corpus.
    #[arg(long, default_value = "../shared/corpus")]
    pub(crate) corpus: PathBuf,
    /// Keep-alive connections.
    #[arg(long, default_value_t = 32)]
    pub(crate) connections: usize,
}

/// The search and flow benchmarks' modes.
#[derive(Args)]
pub(crate) struct WorkloadArgs {
    /// The server, `http://HOST:PORT`.
    #[arg(long)]
    pub(crate) url: String,
    /// An API key.
    #[arg(long)]
    pub(crate) key: String,
    #[command(flatten)]
    pub(crate) data: DataArgs,
    /// Queries of each kind.
    #[arg(long, default_value_t = 30)]
    pub(crate) repeat: u64,
    /// Where the searches' value numbers start: another start asks for values no run with
    /// the default asked for.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) first: u64,
    /// The first admin's password, for the explorer's reads.
    #[arg(long)]
    pub(crate) password: Option<String>,
}

/// The peers benchmark's modes.
#[derive(Args)]
pub(crate) struct PeersArgs {
    /// The server, `http://HOST:PORT`.
    #[arg(long)]
    pub(crate) url: String,
    /// An API key (sluice only).
    #[arg(long, default_value = "")]
    pub(crate) key: String,
    #[command(flatten)]
    pub(crate) data: DataArgs,
    /// Searches a needle shape.
    #[arg(long, default_value_t = 20)]
    pub(crate) repeat: u64,
    /// The seed the needles are drawn from.
    #[arg(long, default_value_t = 1)]
    pub(crate) seed: u64,
    /// The data's kind.
    #[arg(long, value_enum)]
    pub(crate) kind: Kind,
    /// Who is measured.
    #[arg(long, value_enum)]
    pub(crate) target: Target,
}

/// The peers benchmark's kinds of data.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Kind {
    /// The loghub lines as they are.
    Plain,
    /// Digit runs randomised, unique ids.
    Entropy,
}

/// The peers benchmark's servers.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Target {
    /// sluice.
    Sluice,
    /// VictoriaLogs.
    Victorialogs,
}

/// The soak's readers.
#[derive(Args)]
pub(crate) struct ReadsArgs {
    /// The server, `http://HOST:PORT`.
    #[arg(long)]
    pub(crate) url: String,
    /// An API key with `read`.
    #[arg(long)]
    pub(crate) key: String,
    /// Seconds of reading.
    #[arg(long, default_value_t = 60)]
    pub(crate) seconds: u64,
    /// Readers.
    #[arg(long, default_value_t = 2)]
    pub(crate) connections: usize,
    /// Reads a second, all readers together (without it, as fast as answered).
    #[arg(long)]
    pub(crate) rate: Option<f64>,
}

/// The tail benchmark.
#[derive(Args)]
pub(crate) struct TailArgs {
    /// The server, `http://HOST:PORT`.
    #[arg(long)]
    pub(crate) url: String,
    /// An API key.
    #[arg(long)]
    pub(crate) key: String,
    /// Seconds of sending.
    #[arg(long, default_value_t = 20)]
    pub(crate) seconds: u64,
    /// Tails open.
    #[arg(long, default_value_t = 10)]
    pub(crate) tails: usize,
    /// Logs a second sent.
    #[arg(long)]
    pub(crate) rate: Option<f64>,
    /// The server's process, for its CPU time.
    #[arg(long)]
    pub(crate) server_pid: Option<u32>,
}
