//! A chunk of the search index as it is built from its logs and written: its FTS5 document
//! of run trigrams, its signature of the rest ([`sluice_store::signature`]) and its logs' own
//! key filters ([`sluice_store::log_keys`]), worked out on two threads before the write lock is
//! taken ([`Chunker`], [`Written`], [`write`]). When chunks are written, and which logs they
//! cover, is [`crate::index`]'s.

use std::collections::HashSet;

use diesel::prelude::*;
use diesel::result::Error as DieselError;
use diesel::sql_types::Text;
use sluice_store::grams::{chunk_keys, trigram_token};
use sluice_store::log_keys::LogKeys;
use sluice_store::signature::Signature;

use crate::schema::{log_chunk_keys, log_chunk_signatures, log_chunks};

/// The keys of a chunk: its distinct trigram codes, its signature of the rest, and each of its
/// logs' own filter of those ([`sluice_store::log_keys`]).
#[derive(Default)]
struct Codes {
    trigrams: HashSet<u64, foldhash::fast::RandomState>,
    signature: Signature,
    log_keys: LogKeys,
}

/// One chunk as it is built.
pub(crate) struct Chunk {
    first: i64,
    last: i64,
    workspace: Vec<u8>,
    min_ts: i64,
    max_ts: i64,
    /// Of every searchable field.
    codes: Codes,
}

/// One log's searchable text, as the index takes it.
pub(crate) struct Indexed<'a> {
    pub(crate) seq: i64,
    pub(crate) workspace: &'a [u8],
    pub(crate) ts: i64,
    pub(crate) fields: [Option<&'a str>; 4],
}

/// Cuts logs, given in `seq` order, into chunks, then works out their keys.
pub(crate) struct Chunker<'a> {
    max_rows: i64,
    /// Each chunk with the searchable fields of its logs, whose keys [`Chunker::finish`] adds.
    chunks: Vec<(Chunk, Vec<[Option<&'a str>; 4]>)>,
}

impl<'a> Chunker<'a> {
    pub(crate) fn new(max_rows: usize) -> Self {
        Self { max_rows: i64::try_from(max_rows.max(1)).unwrap_or(i64::MAX), chunks: Vec::new() }
    }

    /// Adds the next log: it joins the last chunk when it follows that chunk's last log, is
    /// of its workspace, and the chunk has room.
    pub(crate) fn add(&mut self, log: &Indexed<'a>) {
        let joins = self.chunks.last().is_some_and(|(chunk, _)| {
            chunk.workspace == log.workspace && chunk.last + 1 == log.seq && log.seq - chunk.first < self.max_rows
        });
        if !joins {
            let chunk = Chunk {
                first: log.seq,
                last: log.seq,
                workspace: log.workspace.to_vec(),
                min_ts: log.ts,
                max_ts: log.ts,
                codes: Codes::default(),
            };
            self.chunks.push((chunk, Vec::new()));
        }
        if let Some((chunk, fields)) = self.chunks.last_mut() {
            chunk.last = log.seq;
            chunk.min_ts = chunk.min_ts.min(log.ts);
            chunk.max_ts = chunk.max_ts.max(log.ts);
            fields.push(log.fields);
        }
    }

    /// The chunks of every log added, with their keys: worked out on two threads (the index's
    /// rounds are most of the store's CPU under sustained ingest, and the second core has
    /// room), each chunk's by one.
    #[cfg(test)]
    pub(crate) fn finish(self) -> Vec<Chunk> {
        self.map(|chunk| chunk)
    }

    /// [`Chunker::finish`], each chunk made ready to write on the thread that built it.
    pub(crate) fn written(self) -> Vec<Written> {
        self.map(Written::new)
    }

    fn map<T: Send>(self, each: impl Fn(Chunk) -> T + Sync) -> Vec<T> {
        let build = |(mut chunk, fields): (Chunk, Vec<[Option<&str>; 4]>)| {
            add_keys(&mut chunk.codes, &fields);
            each(chunk)
        };
        let mut chunks = self.chunks;
        if chunks.len() < 2 {
            return chunks.into_iter().map(build).collect();
        }
        let second = chunks.split_off(chunks.len() / 2);
        std::thread::scope(|scope| {
            let other = scope.spawn(|| second.into_iter().map(build).collect::<Vec<T>>());
            let mut built: Vec<T> = chunks.into_iter().map(build).collect();
            match other.join() {
                Ok(rest) => built.extend(rest),
                Err(panic) => std::panic::resume_unwind(panic),
            }
            built
        })
    }
}

/// Adds the keys of logs' searchable fields to a chunk's.
fn add_keys(codes: &mut Codes, logs: &[[Option<&str>; 4]]) {
    for fields in logs {
        codes.log_keys.start_log();
        for text in fields.iter().flatten() {
            let folded = sluice_query::fold(text);
            chunk_keys(
                &folded,
                |code| {
                    codes.trigrams.insert(code);
                },
                |key| {
                    codes.signature.insert(key);
                    codes.log_keys.insert(key);
                },
            );
        }
    }
}

/// A chunk's row in `log_chunks`.
#[derive(Insertable)]
#[diesel(table_name = log_chunks)]
struct NewChunkRow {
    id: i64,
    last_seq: i64,
    workspace_id: Vec<u8>,
    min_ts: i64,
    max_ts: i64,
}

/// A chunk's row in `log_chunk_keys`.
#[derive(Insertable)]
#[diesel(table_name = log_chunk_keys)]
struct NewChunkKeysRow {
    chunk_id: i64,
    log_keys: Vec<u8>,
}

/// A chunk's row in `log_chunk_signatures`.
#[derive(Insertable)]
#[diesel(table_name = log_chunk_signatures)]
struct NewSignatureRow {
    chunk_id: i64,
    workspace_id: Vec<u8>,
    digest: i64,
    signature: Vec<u8>,
}

/// A chunk made ready to write: its row, its document as the JSON array `[rowid, keys]`, and
/// its signature. Built before the write lock is taken.
pub(crate) struct Written {
    row: NewChunkRow,
    document: serde_json::Value,
    signature: NewSignatureRow,
    keys: NewChunkKeysRow,
}

impl Written {
    /// The seq of its last log.
    pub(crate) fn last_seq(&self) -> i64 {
        self.row.last_seq
    }

    /// Its workspace's id.
    pub(crate) fn workspace(&self) -> &[u8] {
        &self.row.workspace_id
    }

    pub(crate) fn new(chunk: Chunk) -> Self {
        let document = vec![serde_json::Value::from(chunk.first), serde_json::Value::String(tokens(&chunk.codes))];
        let folded = chunk.codes.signature.folded();
        let signature = NewSignatureRow {
            chunk_id: chunk.first,
            workspace_id: chunk.workspace.clone(),
            digest: sluice_store::signature::digest(&folded),
            signature: folded,
        };
        let row = NewChunkRow {
            id: chunk.first,
            last_seq: chunk.last,
            workspace_id: chunk.workspace,
            min_ts: chunk.min_ts,
            max_ts: chunk.max_ts,
        };
        let keys = NewChunkKeysRow { chunk_id: chunk.first, log_keys: chunk.codes.log_keys.stored() };
        Self { row, document: serde_json::Value::Array(document), signature, keys }
    }
}

/// Writes chunks: their rows, every document in one statement, and their signatures. FTS5 writes a
/// transaction's documents out as one new segment, whose cost is mostly per distinct term:
/// the more chunks one transaction holds, the less each costs, and the longer it holds the
/// write lock.
pub(crate) fn write(connection: &mut SqliteConnection, chunks: &[Written]) -> Result<(), DieselError> {
    if chunks.is_empty() {
        return Ok(());
    }
    // A transaction holds a few chunks: 5 bound values a row, well under SQLite's limit.
    let rows: Vec<&NewChunkRow> = chunks.iter().map(|chunk| &chunk.row).collect();
    diesel::insert_into(log_chunks::table).values(rows).execute(connection)?;
    let documents: Vec<&serde_json::Value> = chunks.iter().map(|chunk| &chunk.document).collect();
    diesel::sql_query("INSERT INTO log_chunks_fts (rowid, keys) SELECT value ->> 0, value ->> 1 FROM json_each(?1)")
        .bind::<Text, _>(serde_json::to_string(&documents).unwrap_or_else(|_| "[]".to_owned()))
        .execute(connection)?;
    let signatures: Vec<&NewSignatureRow> = chunks.iter().map(|chunk| &chunk.signature).collect();
    diesel::insert_into(log_chunk_signatures::table).values(signatures).execute(connection)?;
    let keys: Vec<&NewChunkKeysRow> = chunks.iter().map(|chunk| &chunk.keys).collect();
    // Replacing: filters a forgotten chunk of the same first seq left (a rebuilt index) are stale.
    diesel::replace_into(log_chunk_keys::table).values(keys).execute(connection)?;
    Ok(())
}

/// A chunk's trigrams as the document's text: tokens of run characters, which FTS5's `ascii`
/// tokenizer keeps whole.
fn tokens(codes: &Codes) -> String {
    let mut text = String::with_capacity(codes.trigrams.len() * 13);
    for code in &codes.trigrams {
        trigram_token(*code, &mut text);
        text.push(' ');
    }
    text
}

#[cfg(test)]
mod tests {
    use sluice_store::grams::needle_signature_keys;
    use sluice_store::signature::needle_positions;

    use super::*;

    fn log(seq: i64, workspace: &'static [u8], message: &'static str) -> Indexed<'static> {
        Indexed { seq, workspace, ts: seq * 10, fields: [Some(message), None, None, None] }
    }

    #[test]
    fn chunks_follow_workspace_runs_consecutive_seqs_and_their_cap() {
        let (a, b): (&'static [u8], &'static [u8]) = (&[1], &[2]);
        let mut chunker = Chunker::new(2);
        for entry in [log(1, a, "x"), log(2, a, "x"), log(3, a, "x"), log(4, b, "x"), log(6, b, "x")] {
            chunker.add(&entry);
        }
        let chunks: Vec<(i64, i64, Vec<u8>)> =
            chunker.finish().into_iter().map(|chunk| (chunk.first, chunk.last, chunk.workspace)).collect();
        assert_eq!(chunks, [(1, 2, vec![1]), (3, 3, vec![1]), (4, 4, vec![2]), (6, 6, vec![2])]);
    }

    #[test]
    fn a_chunk_holds_each_trigram_of_its_runs_once_but_none_of_hex_and_digits() {
        let mut chunker = Chunker::new(10);
        chunker.add(&log(1, &[1], "ABCD"));
        chunker.add(&log(2, &[1], "abcab ab-1234 4f5"));
        let chunk = chunker.finish().pop().expect("one chunk");
        let mut codes: Vec<u64> = chunk.codes.trigrams.iter().copied().collect();
        codes.sort_unstable();
        let mut expected: Vec<u64> = [['a', 'b', 'c'], ['b', 'c', 'd'], ['b', 'c', 'a'], ['c', 'a', 'b']]
            .map(sluice_store::grams::trigram_code)
            .to_vec();
        expected.sort_unstable();
        assert_eq!(codes, expected);
        let signature = chunk.codes.signature.folded();
        for run in ["ab-1234", "x-4f5"] {
            let positions = needle_positions(&needle_signature_keys(run));
            assert!(sluice_store::signature::holds(&signature, &positions), "runs holding a digit: {run}");
        }
        assert_eq!((chunk.min_ts, chunk.max_ts), (10, 20));
    }

    #[test]
    fn a_chunk_signs_the_long_grams_and_runs_of_its_folded_text() {
        let mut chunker = Chunker::new(10);
        chunker.add(&log(1, &[1], "Order ORD-4821937 req=8F3A2B1C9D0E4F57 shipped"));
        let chunk = chunker.finish().pop().expect("one chunk");
        let signature = chunk.codes.signature.folded();
        for needle in ["8f3a2b1c9d0e4f57", "ord-4821937", "d-482193", "c9d0e4f5"] {
            let positions = needle_positions(&needle_signature_keys(needle));
            assert!(sluice_store::signature::holds(&signature, &positions), "{needle}");
        }
    }
}
