//! What a block's index holds of a text, and what a needle is looked up by: hashed keys such
//! that a folded text ([`sluice_query::fold`]) containing a folded needle holds every key the
//! needle is looked up by ([`needle_keys`]), so the index never misses a match (proptests
//! below).
//!
//! Text is cut into **runs**: maximal sequences of ASCII letters and digits and non-ASCII
//! characters; the rest are **separators**. Three kinds of key, each chosen for a kind of
//! needle that would otherwise be common in every block:
//! - **Whole runs** ([`WHOLE`]): what VictoriaLogs indexes. A needle's run with a separator on
//!   both sides within the needle is a whole run of any text holding the needle (the inner
//!   runs of `user 4821937 failed`, of a UUID, of an e-mail or IP address).
//! - **Sparse grams** ([`SPARSE`]; GitHub code search's, after Zoekt's trigrams): each bigram
//!   of a run gets a weight (its hash), and a substring of a run whose first bigram weighs more
//!   than every bigram between its ends, and whose last weighs at least as much, is a sparse
//!   gram; every trigram is one, and a run of n characters has fewer than 2n. Whether a substring is a sparse gram depends only
//!   on its own characters, so every sparse gram of a needle's run is one of any run that
//!   contains it: a piece of a request id, an order number inside `ORD4821937`, `onnec` of
//!   `connection`. Those of [`MIN_SPARSE_CHARS`] to [`MAX_SPARSE_CHARS`] characters are kept; a
//!   needle is looked up by its longest, the rarest.
//! - **Pairs** ([`PAIR`]): the last three characters of a run, the separator after it (one to
//!   [`MAX_PAIR_SEPARATOR`] bytes) and the first three of the next run, when none of those
//!   characters is a digit: what makes a phrase of common words (`connection reset by`) rare.
//!
//! - **Number pairs** ([`NUMBER_PAIR`], format version 2 on): two runs joined by a `.` whose
//!   facing ends are digits (the parts of an IP address, a version, a decimal), as the last two
//!   characters of the first and the first two of the second: no other key holds a dotted
//!   quad, whose runs are too short for grams and too common whole.
//!
//! Exact values of the list filters (`source`, `dataset`, `userId`, `sessionId`, `flowId`) are
//! keys too ([`field_key`]), so a list filtered by a rare user reads only its granules.

use xxhash_rust::xxh3::xxh3_64_with_seed;

/// Key kinds: the seed of each kind's hash, so equal bytes of two kinds are two keys.
pub const WHOLE: u64 = 1;
/// See [`WHOLE`].
pub const SPARSE: u64 = 2;
/// See [`WHOLE`].
pub const PAIR: u64 = 4;
/// See [`WHOLE`] (format version 2 on).
pub const NUMBER_PAIR: u64 = 6;
/// The seed of a bigram's weight.
const WEIGHT: u64 = 5;

/// The longest sparse gram kept, in characters.
pub const MAX_SPARSE_CHARS: usize = 12;
/// The shortest sparse gram kept, in characters: every trigram is a sparse gram, and there are
/// few enough trigrams of digits, hex and common words that a granule holds most of them, so
/// they would cost a quarter of the index and rule out little.
pub const MIN_SPARSE_CHARS: usize = 4;
/// The longest separator a pair key spans, in bytes.
pub const MAX_PAIR_SEPARATOR: usize = 4;
/// The most keys a needle is looked up by: the most telling of them (any subset of its keys
/// still never misses), so a pasted stack trace costs no more to look up than a sentence.
pub const MAX_NEEDLE_KEYS: usize = 24;

/// A filter field whose exact value is a key of the index ([`field_key`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldKey {
    /// `source`.
    Source = 16,
    /// `dataset`.
    Dataset = 17,
    /// `userId`.
    UserId = 18,
    /// `sessionId`.
    SessionId = 19,
    /// `flowId`.
    FlowId = 20,
}

/// The key of a filter field's exact value.
pub fn field_key(field: FieldKey, value: &str) -> u64 {
    xxh3_64_with_seed(value.as_bytes(), field as u64)
}

/// Whether a character belongs to a run.
pub const fn is_run_char(character: char) -> bool {
    character.is_ascii_alphanumeric() || !character.is_ascii()
}

/// One run of a text: its byte range, and whether a separator of the same text lies just
/// before and just after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Run {
    start: usize,
    end: usize,
    bounded_before: bool,
    bounded_after: bool,
}

/// Puts the runs of `text`, in order, into `runs`.
fn runs_into(text: &str, runs: &mut Vec<Run>) {
    runs.clear();
    let bytes = text.as_bytes();
    let mut at = 0;
    while at < bytes.len() {
        // Every byte of a non-ASCII character is a run byte, so runs end on character boundaries.
        let run_byte = |byte: u8| byte.is_ascii_alphanumeric() || !byte.is_ascii();
        while at < bytes.len() && !run_byte(bytes[at]) {
            at += 1;
        }
        let start = at;
        while at < bytes.len() && run_byte(bytes[at]) {
            at += 1;
        }
        if at > start {
            runs.push(Run { start, end: at, bounded_before: start > 0, bounded_after: at < bytes.len() });
        }
    }
}

fn runs(text: &str) -> Vec<Run> {
    let mut runs = Vec::new();
    runs_into(text, &mut runs);
    runs
}

fn has_digit(text: &str) -> bool {
    text.bytes().any(|byte| byte.is_ascii_digit())
}

/// Puts the byte offsets of each character's start in `run`, and its end, into `cuts`.
fn boundaries_into(run: &str, cuts: &mut Vec<usize>) {
    cuts.clear();
    if run.is_ascii() {
        cuts.extend(0..=run.len());
    } else {
        cuts.extend(run.char_indices().map(|(at, _)| at).chain(std::iter::once(run.len())));
    }
}

/// Buffers reused from run to run.
#[derive(Debug, Default)]
struct Scratch {
    cuts: Vec<usize>,
    weights: Vec<u64>,
    open: Vec<usize>,
}

/// Calls `each` with every sparse gram of `run` of [`MIN_SPARSE_CHARS`] to [`MAX_SPARSE_CHARS`] characters,
/// as its byte range in `run`.
fn sparse_grams(run: &str, scratch: &mut Scratch, mut each: impl FnMut(usize, usize)) {
    let Scratch { cuts, weights, open } = scratch;
    boundaries_into(run, cuts);
    let characters = cuts.len() - 1;
    if characters < 3 {
        return;
    }
    weights.clear();
    weights.extend((0..characters - 1).map(|at| xxh3_64_with_seed(&run.as_bytes()[cuts[at]..cuts[at + 2]], WEIGHT)));
    // Bigrams whose weight no later bigram has reached yet, heaviest at the bottom: each one
    // a new bigram outweighs (or equals) ends a gram with it, and the first it does not
    // outweigh too, since everything between them was lighter than both.
    open.clear();
    for (end, weight) in weights.iter().enumerate() {
        while let Some(&start) = open.last() {
            if (MIN_SPARSE_CHARS..=MAX_SPARSE_CHARS).contains(&(end - start + 2)) {
                each(cuts[start], cuts[end + 2]);
            }
            if weights[start] > *weight {
                break;
            }
            open.pop();
        }
        open.push(end);
    }
}

/// The last (or first) three characters of a run, when none is a digit.
fn edge(run: &str, last: bool) -> Option<&str> {
    let piece = if run.is_ascii() {
        if run.len() <= 3 {
            run
        } else if last {
            &run[run.len() - 3..]
        } else {
            &run[..3]
        }
    } else {
        let mut cuts = Vec::new();
        boundaries_into(run, &mut cuts);
        let characters = cuts.len() - 1;
        if characters <= 3 {
            run
        } else if last {
            &run[cuts[characters - 3]..]
        } else {
            &run[..cuts[3]]
        }
    };
    (!has_digit(piece)).then_some(piece)
}

/// The last two bytes of a run (all of a shorter one), when they are digits.
fn digits_before(run: &str) -> Option<&str> {
    let edge = &run.as_bytes()[run.len().saturating_sub(2)..];
    edge.iter().all(u8::is_ascii_digit).then(|| &run[run.len() - edge.len()..])
}

/// The first two bytes of a run (all of a shorter one), when they are digits.
fn digits_after(run: &str) -> Option<&str> {
    let edge = &run.as_bytes()[..run.len().min(2)];
    edge.iter().all(u8::is_ascii_digit).then(|| &run[..edge.len()])
}

/// The [`NUMBER_PAIR`] key of two runs joined by a `.`: the digits facing it, two a side (or a
/// shorter run whole), so that a needle whose first number is cut short before, or whose last
/// is cut short after, has the key whenever it holds two digits of it.
fn number_pair_key(left: &str, right: &str) -> u64 {
    let mut bytes = [b'.'; 5];
    bytes[..left.len()].copy_from_slice(left.as_bytes());
    bytes[left.len() + 1..left.len() + 1 + right.len()].copy_from_slice(right.as_bytes());
    xxh3_64_with_seed(&bytes[..left.len() + 1 + right.len()], NUMBER_PAIR)
}

fn pair_key(left: &str, separator: &str, right: &str) -> u64 {
    let mut bytes = [0_u8; 32];
    let mut length = 0;
    for part in [left, separator, right] {
        let part = part.as_bytes();
        let end = (length + part.len()).min(bytes.len());
        bytes[length..end].copy_from_slice(&part[..end - length]);
        length = end;
    }
    xxh3_64_with_seed(&bytes[..length], PAIR)
}

/// Gathers the keys of many texts (a granule's), taking each distinct run's own keys once:
/// logs repeat their words, so most runs of a granule were seen before.
#[derive(Debug, Default)]
pub struct TextIndexer {
    seen: crate::bloom::KeySet,
    runs: Vec<Run>,
    scratch: Scratch,
}

impl TextIndexer {
    /// Forgets the runs seen (at a new granule).
    pub fn clear(&mut self) {
        self.seen.clear();
    }

    /// Calls `each` with every key of a folded text that this indexer has not given for an
    /// earlier text since it was cleared (pairs may come again).
    pub fn keys(&mut self, folded: &str, mut each: impl FnMut(u64)) {
        let TextIndexer { seen, runs, scratch } = self;
        runs_into(folded, runs);
        for (index, run) in runs.iter().enumerate() {
            let text = &folded[run.start..run.end];
            let whole = xxh3_64_with_seed(text.as_bytes(), WHOLE);
            if seen.insert(whole) {
                each(whole);
                sparse_grams(text, scratch, |start, end| each(xxh3_64_with_seed(&text.as_bytes()[start..end], SPARSE)));
            }
            if let Some(next) = runs.get(index + 1) {
                let separator = &folded[run.end..next.start];
                let right_text = &folded[next.start..next.end];
                if separator.len() <= MAX_PAIR_SEPARATOR
                    && let (Some(left), Some(right)) = (edge(text, true), edge(right_text, false))
                {
                    each(pair_key(left, separator, right));
                }
                if separator == "."
                    && let (Some(left), Some(right)) = (digits_before(text), digits_after(right_text))
                {
                    each(number_pair_key(left, right));
                }
            }
        }
    }
}

/// Calls `each` with every key of a folded text (a key may come more than once).
pub fn text_keys(folded: &str, each: impl FnMut(u64)) {
    TextIndexer::default().keys(folded, each);
}

/// The keys a folded needle is looked up by, at most [`MAX_NEEDLE_KEYS`], distinct: every text
/// containing the needle holds them all. Empty when the needle gives the index nothing to
/// look up (a short one, or one of separators): such a needle reads every block.
///
/// ```
/// use sluice_blocks::keys::{needle_keys, text_keys};
/// let mut held = Vec::new();
/// text_keys("order ord-4821937 failed: connection reset by peer", |key| held.push(key));
/// for needle in ["4821937 fail", "connection reset", "onnection", "ord-4821937 "] {
///     let keys = needle_keys(needle);
///     assert!(!keys.is_empty() && keys.iter().all(|key| held.contains(key)), "{needle}");
/// }
/// assert!(needle_keys("12").is_empty());
/// ```
pub fn needle_keys(folded: &str) -> Vec<u64> {
    needle_keys_of(folded, crate::FORMAT_VERSION)
}

/// [`needle_keys`] as the index of a block of format `version` holds them (number pairs from
/// version 2 on).
pub fn needle_keys_of(folded: &str, version: u8) -> Vec<u64> {
    let runs = runs(folded);
    // Each key with how telling it is: a whole run or a pair most, then grams by length.
    let mut keys: Vec<(usize, u64)> = Vec::new();
    let mut add = |rank: usize, key: u64| {
        if !keys.iter().any(|(_, known)| *known == key) {
            keys.push((rank, key));
        }
    };
    let mut scratch = Scratch::default();
    for (index, run) in runs.iter().enumerate() {
        let text = &folded[run.start..run.end];
        // A whole run of a few characters (`by`, `10`) is in most granules: it ranks below grams.
        if run.bounded_before && run.bounded_after {
            let rank = if text.len() >= MIN_SPARSE_CHARS { usize::MAX } else { text.len() };
            add(rank, xxh3_64_with_seed(text.as_bytes(), WHOLE));
        }
        sparse_grams(text, &mut scratch, |start, end| {
            add(end - start, xxh3_64_with_seed(&text.as_bytes()[start..end], SPARSE))
        });
        if let Some(next) = runs.get(index + 1) {
            let separator = &folded[run.end..next.start];
            let right_text = &folded[next.start..next.end];
            // A piece is the text's own edge when the needle holds that end of the run whole,
            // or holds three characters of it next to the separator.
            let left = edge(text, true).filter(|_| run.bounded_before || chars(text) >= 3);
            let right = edge(right_text, false).filter(|_| next.bounded_after || chars(right_text) >= 3);
            if separator.len() <= MAX_PAIR_SEPARATOR
                && let (Some(left), Some(right)) = (left, right)
            {
                add(usize::MAX - 1, pair_key(left, separator, right));
            }
            // Two digits a side are the text's own whatever precedes or follows them; fewer,
            // only when the needle holds that end of the run.
            if version >= 2
                && separator == "."
                && let Some(left) = digits_before(text).filter(|_| run.bounded_before || text.len() >= 2)
                && let Some(right) = digits_after(right_text).filter(|_| next.bounded_after || right_text.len() >= 2)
            {
                add(usize::MAX - 1, number_pair_key(left, right));
            }
        }
    }
    keys.sort_by_key(|(rank, _)| std::cmp::Reverse(*rank));
    keys.into_iter().take(MAX_NEEDLE_KEYS).map(|(_, key)| key).collect()
}

fn chars(text: &str) -> usize {
    text.chars().count()
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn held(text: &str) -> std::collections::HashSet<u64> {
        let mut keys = std::collections::HashSet::new();
        text_keys(text, |key| {
            keys.insert(key);
        });
        keys
    }

    /// Text made of the shapes logs carry: words, numbers, hex, separators, non-ASCII.
    fn text() -> impl Strategy<Value = String> {
        proptest::collection::vec(
            prop_oneof![
                "[a-z]{1,9}",
                "[0-9]{1,9}",
                "[0-9a-f]{4,16}",
                "[a-z]{1,4}[0-9]{1,6}",
                Just("é".to_owned()),
                Just("ß".to_owned()),
                "[ .:/@=_-]{1,3}",
            ],
            1..14,
        )
        .prop_map(|parts| parts.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// Every substring of a text is looked up by keys the text holds.
        #[test]
        fn a_needle_found_in_a_text_has_only_keys_the_text_holds(text in text(), from in 0_usize..200, length in 1_usize..40) {
            let cuts: Vec<usize> = text.char_indices().map(|(at, _)| at).chain(std::iter::once(text.len())).collect();
            let start = cuts[from % cuts.len()];
            let end = cuts[((from % cuts.len()) + length).min(cuts.len() - 1)];
            let needle = &text[start..end];
            let keys = held(&text);
            for key in needle_keys(needle) {
                prop_assert!(keys.contains(&key), "{needle:?} in {text:?}");
            }
        }
    }

    #[test]
    fn the_shapes_of_rare_needles_have_keys() {
        for needle in [
            "4821937",
            "ord-4821937",
            "3f2a9c1e-77b0-4c1d-9e8f-0a1b2c3d4e5f",
            "a3f9c2b1e0",
            "9c2b1e0d",
            "jane.doe@example.com",
            "10.42.7.19",
            "/var/lib/sluice/blocks",
            "getUserById".to_lowercase().as_str(),
            "connection reset by peer",
            "timeout",
        ] {
            assert!(!needle_keys(needle).is_empty(), "{needle}");
        }
    }

    /// An IP address, cut short at either end, has number pairs (version 2) beside the whole
    /// runs inside it, which every granule holds; version 1's needles had only those.
    #[test]
    fn dotted_numbers_are_looked_up_by_their_pairs() {
        let text = held("accepted from 10.251.43.191:50010 in 0.25 s");
        for needle in ["10.251.43.191", "0.251.43.19", "251.43", "51.43.1"] {
            let keys = needle_keys_of(needle, 2);
            assert!(keys.len() > needle_keys_of(needle, 1).len(), "{needle}");
            assert!(keys.iter().all(|key| text.contains(key)), "{needle}");
        }
        // One digit cut short has no pair: the text's may be longer.
        assert_eq!(needle_keys_of("1.4", 2), needle_keys_of("1.4", 1));
    }

    #[test]
    fn a_run_has_fewer_sparse_grams_than_characters() {
        let run = "4821937a";
        let mut grams = Vec::new();
        sparse_grams(run, &mut Scratch::default(), |start, end| grams.push(run[start..end].to_owned()));
        assert!(grams.len() < run.len(), "{grams:?}");
        assert!(grams.iter().all(|gram| (MIN_SPARSE_CHARS..=MAX_SPARSE_CHARS).contains(&gram.len())), "{grams:?}");
    }
}
