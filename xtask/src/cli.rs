//! The command line of `cargo xtask`: its tasks and their options (clap).

use clap::{Parser, Subcommand, ValueEnum};

/// Project automation: the checks and tests of CI, the benchmarks, the fuzzers.
#[derive(Parser)]
#[command(name = "cargo xtask", bin_name = "cargo xtask")]
pub(crate) struct Xtask {
    #[command(subcommand)]
    pub(crate) command: Task,
}

#[derive(Subcommand)]
pub(crate) enum Task {
    /// Every check and test: fmt, clippy, layers, tidy, both stores, fuzzers, shippers, browser.
    Ci,
    /// A benchmark (without one: the crates' benchmarks, then the ingest benchmark).
    Bench {
        #[command(subcommand)]
        bench: Option<Bench>,
        /// A shorter run.
        #[arg(long, global = true)]
        quick: bool,
    },
    /// The tidy rules alone: module docs, file lengths, doc paths, no circles.
    Tidy,
    /// Every fuzz target for a while.
    Fuzz {
        /// Seconds a target.
        #[arg(long, default_value_t = crate::fuzz::CI_SECONDS)]
        seconds: u32,
    },
    /// Real shippers' clients against the real binary, then the API check.
    Shippers,
    /// The dashboard's browser tests.
    Browser,
    /// Runs a command with `SLUICE_TEST_PG` and `SLUICE_TEST_REDIS` naming throwaway servers.
    WithPg {
        /// The command and its arguments.
        #[arg(required = true, trailing_var_arg = true, allow_hyphen_values = true)]
        command: Vec<String>,
    },
    /// Regenerates the PostgreSQL store's schema.rs.
    PgSchema,
}

#[derive(Subcommand)]
pub(crate) enum Bench {
    /// Ingest over HTTP, each store beside the baselines.
    Ingest,
    /// Searches of each kind over a data set.
    Search {
        /// Logs in the data set (default 10M; 1M with --quick).
        #[arg(long)]
        logs: Option<u64>,
        /// Messages that are their loghub line alone.
        #[arg(long)]
        plain: bool,
        #[command(flatten)]
        store: Stores,
    },
    /// Ingest and reads together for minutes.
    Soak {
        /// Measured minutes.
        #[arg(long, default_value_t = 10)]
        minutes: u32,
        /// Minutes run first and not kept.
        #[arg(long, default_value_t = crate::soak::WARMUP_MINUTES)]
        warmup_minutes: u32,
        /// Reads a second (0: as fast as answered).
        #[arg(long, default_value_t = crate::soak::READS_PER_SECOND)]
        reads_per_second: u32,
        #[command(flatten)]
        store: Stores,
    },
    /// Ingest of this build against another revision's, in pairs.
    Against {
        /// The revision to compare with.
        revision: String,
        /// Logs a run.
        #[arg(long, default_value_t = 4_000_000)]
        logs: u64,
        /// Pairs of runs.
        #[arg(long, default_value_t = 2)]
        pairs: usize,
        #[command(flatten)]
        store: Stores,
    },
    /// sluice beside VictoriaLogs on the same logs and searches.
    Peers {
        /// Logs a kind.
        #[arg(long, default_value_t = 10_000_000)]
        logs: u64,
        #[command(flatten)]
        store: Stores,
        /// One kind of data only.
        #[arg(long, value_enum)]
        kind: Option<Kind>,
        /// Searches a needle shape.
        #[arg(long, default_value_t = 20)]
        repeat: u64,
    },
    /// Live tail latency under ingest.
    Tail {
        /// Seconds of ingest.
        #[arg(long, default_value_t = 20)]
        seconds: u64,
        #[command(flatten)]
        store: Stores,
    },
    /// Flow lists and timelines.
    Flows {
        /// Logs in the data set.
        #[arg(long, default_value_t = 1_000_000)]
        logs: u64,
        #[command(flatten)]
        store: Stores,
    },
}

/// `--store sqlite|postgres`: one store, else both.
#[derive(clap::Args)]
pub(crate) struct Stores {
    /// One store only.
    #[arg(long, value_enum)]
    store: Option<Store>,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Store {
    Sqlite,
    Postgres,
}

impl Stores {
    /// The stores to run (true: SQLite), SQLite first.
    pub(crate) fn stores(&self) -> Vec<bool> {
        match self.store {
            Some(Store::Sqlite) => vec![true],
            Some(Store::Postgres) => vec![false],
            None => vec![true, false],
        }
    }
}

/// The kinds of data of `bench peers`.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Kind {
    /// The loghub lines as they are.
    Plain,
    /// Lines with digit runs randomised and unique ids.
    Entropy,
}

impl Kind {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Kind::Plain => "plain",
            Kind::Entropy => "entropy",
        }
    }
}
