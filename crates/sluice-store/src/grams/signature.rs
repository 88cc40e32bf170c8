//! The keys a chunk's signature holds ([`crate::signature`]) and those a needle is looked up
//! by there: the runs holding a digit whole, their starts of each of [`PREFIX_LENGTHS`], and
//! their long grams, each hashed with a tag of its kind ([`signature_keys`],
//! [`needle_signature_keys`]); and trigrams, for a store whose signatures hold them too
//! ([`trigram_signature_key`]). Which runs give which keys is `keys_of_runs`' (behind
//! [`super::text_keys`]).

use super::{MAX_RUN_CHARS, RunKey, keys_of_runs, mix, needle_grams, needle_runs, spread};

/// The lengths of the starts of a run that are keys of their own ([`signature_keys`]): a
/// needle whose last run follows a separator is looked up by that run's start of the longest
/// of these it reaches. Every length up to seven (shorter needle runs have no long grams), then
/// a few longer ones: a needle run like `east414865` is rare as a whole where its grams
/// (`east41`, `414865`) and its first seven characters are common. Starts of four characters
/// are the most numerous kind of key (a fifth of a chunk's) and each is in many chunks: none.
pub const PREFIX_LENGTHS: [usize; 7] = [5, 6, 7, 8, 10, 12, 16];

/// The most keys [`needle_signature_keys`] gives (spread over a long needle).
pub const MAX_NEEDLE_SIGNATURE_KEYS: usize = 16;

/// The tags that keep a signature's three kinds of key apart. Stored signatures depend on
/// them: they must never change.
const WHOLE_TAG: u8 = b'w';
const PREFIX_TAG: u8 = b'p';
const GRAM_TAG: u8 = b'g';
const TRIGRAM_TAG: u8 = b't';

/// The 64-bit key of tagged bytes: FNV-1a, then [`mix`]. Stored signatures depend on it: it
/// must never change.
fn signature_key(tag: u8, bytes: &[u8]) -> u64 {
    let mut hash = FNV_OFFSET ^ u64::from(tag);
    for byte in bytes {
        hash = (hash ^ u64::from(*byte)).wrapping_mul(FNV_PRIME);
    }
    mix(hash)
}

/// FNV-1a's 64-bit offset basis and prime.
const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

/// The signature key of a trigram code, for stores whose signatures hold trigrams too (the
/// PostgreSQL store's: it has no full-text index beside them).
pub fn trigram_signature_key(code: u64) -> u64 {
    signature_key(TRIGRAM_TAG, &code.to_le_bytes())
}

/// `run` up to its `chars`th character, or `None` when it is shorter.
fn run_start(run: &str, chars: usize) -> Option<&str> {
    match run.char_indices().nth(chars) {
        Some((end, _)) => Some(&run[..end]),
        None => (run.chars().count() == chars).then_some(run),
    }
}

/// Calls `each` with the key of everything a Bloom-filter signature of `folded` holds
/// ([`crate::signature`]): of each run holding a digit, the run whole (its first
/// [`MAX_RUN_CHARS`] characters), its starts of each of [`PREFIX_LENGTHS`] it reaches, and its
/// [`gram_keys`]. These are the keys found nowhere else in a chunk
/// (numbers, identifiers), which a full-text index pays for most; the trigrams of words
/// stay with it.
///
/// ```
/// let mut keys = Vec::new();
/// sluice_store::grams::signature_keys("order ord-4821937", |key| keys.push(key));
/// // The run whole, and its starts of 5, 6 and 7 characters.
/// assert_eq!(keys.len(), 4);
/// ```
pub fn signature_keys(folded: &str, each: impl FnMut(u64)) {
    chunk_keys(folded, |_| {}, each);
}

/// [`run_trigram_codes`](super::run_trigram_codes) and [`signature_keys`] of `folded` in one
/// pass over its runs: what a store takes from each searchable field of a chunk's logs.
///
/// ```
/// use sluice_store::grams::{chunk_keys, run_trigram_codes, signature_keys};
/// let text = "order ord-4821937 failover";
/// let (mut trigrams, mut keys) = (Vec::new(), Vec::new());
/// chunk_keys(text, |code| trigrams.push(code), |key| keys.push(key));
/// let (mut alone, mut signed) = (Vec::new(), Vec::new());
/// run_trigram_codes(text, |code| alone.push(code));
/// signature_keys(text, |key| signed.push(key));
/// assert_eq!((trigrams, keys), (alone, signed));
/// ```
pub fn chunk_keys(folded: &str, trigram: impl FnMut(u64), each: impl FnMut(u64)) {
    let each = std::cell::RefCell::new(each);
    keys_of_runs(
        folded,
        trigram,
        |run, ascii| {
            let mut each = each.borrow_mut();
            if ascii {
                ascii_run_keys(run.as_bytes(), &mut *each);
                return;
            }
            let whole = run_start(run, MAX_RUN_CHARS).unwrap_or(run);
            each(signature_key(WHOLE_TAG, whole.as_bytes()));
            for chars in PREFIX_LENGTHS {
                match run_start(run, chars) {
                    Some(start) => each(signature_key(PREFIX_TAG, start.as_bytes())),
                    None => break,
                }
            }
        },
        |key| (each.borrow_mut())(signature_key(GRAM_TAG, &key.to_le_bytes())),
    );
}

/// The whole and start keys of a run of ASCII, where characters are bytes: the same as
/// [`signature_key`] of each, with the starts hashed in one pass.
fn ascii_run_keys(run: &[u8], each: &mut impl FnMut(u64)) {
    each(signature_key(WHOLE_TAG, run.get(..MAX_RUN_CHARS).unwrap_or(run)));
    let mut hash = FNV_OFFSET ^ u64::from(PREFIX_TAG);
    let mut lengths = PREFIX_LENGTHS.iter().peekable();
    for (index, byte) in run.iter().enumerate() {
        hash = (hash ^ u64::from(*byte)).wrapping_mul(FNV_PRIME);
        if lengths.next_if_eq(&&(index + 1)).is_some() {
            each(mix(hash));
            if lengths.peek().is_none() {
                break;
            }
        }
    }
}

/// The distinct keys a signature looks a folded needle up by: its [`needle_runs`] (a whole
/// run, or the start of one, as long as the longest of [`PREFIX_LENGTHS`] it reaches) and its
/// [`needle_grams`], at most [`MAX_NEEDLE_SIGNATURE_KEYS`] spread from its start to its end.
/// Every text containing the needle holds them all ([`signature_keys`]; proptest below).
/// Empty for a needle without a run holding a digit, looked up by its trigrams.
///
/// ```
/// use sluice_store::grams::needle_signature_keys;
/// assert_eq!(needle_signature_keys("ord-4821937").len(), 1);
/// assert!(needle_signature_keys("failover to replica").is_empty());
/// ```
pub fn needle_signature_keys(folded: &str) -> Vec<u64> {
    let mut keys = Vec::new();
    for run in needle_runs(folded) {
        let key = match run {
            RunKey::Whole(run) => signature_key(WHOLE_TAG, run.as_bytes()),
            RunKey::Prefix(run) => {
                let chars = run.chars().count();
                let Some(&length) = PREFIX_LENGTHS.iter().rev().find(|length| **length <= chars) else { continue };
                start_key(&run, length)
            }
        };
        keys.push(key);
    }
    for gram in needle_grams(folded) {
        keys.push(signature_key(GRAM_TAG, &gram.to_le_bytes()));
    }
    let mut distinct = Vec::with_capacity(keys.len());
    for key in keys {
        if !distinct.contains(&key) {
            distinct.push(key);
        }
    }
    spread(distinct, MAX_NEEDLE_SIGNATURE_KEYS)
}

/// A second key for a needle [`needle_signature_keys`] looks up by one key only, the start of
/// its last run (an order number's `ord-4821937` by `4821937`): the same run's start of the
/// next shorter of [`PREFIX_LENGTHS`] (`482193`), at least six characters. Every text holding
/// the needle holds it too (the run that holds the needle's start holds its shorter start).
///
/// A start of six digits is shared by ten order numbers, so it is in a few percent of chunks
/// as truly; but a chunk whose signature falsely holds the longer start (measured at 10M logs,
/// 0.14 to 0.33 % of chunks, each one read whole) holds the shorter one in that few percent
/// too, so the two together leave about one false chunk in fifty of what the longer leaves
/// alone. `None` for any other needle: two keys or more already compound their false
/// positives, and a whole run or a start of five characters has no shorter key.
///
/// ```
/// use sluice_store::grams::{needle_second_start_key, signature_keys};
/// let second = needle_second_start_key("ord-4821937").unwrap();
/// let mut held = Vec::new();
/// signature_keys("ord-48219375", |key| held.push(key));
/// assert!(held.contains(&second));
/// assert_eq!(needle_second_start_key("a-b2-def"), None);
/// assert_eq!(needle_second_start_key("ord-48219"), None);
/// ```
pub fn needle_second_start_key(folded: &str) -> Option<u64> {
    if !needle_grams(folded).is_empty() {
        return None;
    }
    let runs = needle_runs(folded);
    let [RunKey::Prefix(run)] = runs.as_slice() else { return None };
    let chars = run.chars().count();
    let longest = PREFIX_LENGTHS.iter().rposition(|length| *length <= chars)?;
    let shorter = *PREFIX_LENGTHS.get(longest.checked_sub(1)?)?;
    if shorter < 6 {
        return None;
    }
    Some(start_key(run, shorter))
}

/// The start keys every text holding `folded` holds beside [`needle_signature_keys`]: of each
/// of its [`needle_runs`], its starts of each of [`PREFIX_LENGTHS`] it reaches, longest first
/// (the run of a text holding such a needle run begins with it, so holds its shorter starts
/// too). A per-log filter, where one key lets through a share of a chunk's logs, looks a
/// needle up by several (`ord-4821937`: `4821937`, `482193` and `48219`).
///
/// ```
/// use sluice_store::grams::{needle_start_keys, signature_keys};
/// let starts = needle_start_keys("ord-4821937");
/// assert_eq!(starts.len(), 3);
/// let mut held = Vec::new();
/// signature_keys("order ord-48219375 shipped", |key| held.push(key));
/// assert!(starts.iter().all(|key| held.contains(key)));
/// assert!(needle_start_keys("8f3a2b1c9d0e4f57").is_empty());
/// ```
pub fn needle_start_keys(folded: &str) -> Vec<u64> {
    let mut keys = Vec::new();
    for run in needle_runs(folded) {
        let (RunKey::Whole(run) | RunKey::Prefix(run)) = run;
        let chars = run.chars().count();
        for length in PREFIX_LENGTHS.iter().rev().filter(|length| **length <= chars) {
            let key = start_key(&run, *length);
            if !keys.contains(&key) {
                keys.push(key);
            }
        }
    }
    keys
}

/// The key a needle's final run is looked up by as the start of a run: its first `length`
/// characters (all of it when shorter), as [`signature_keys`] keys a run's starts.
fn start_key(run: &str, length: usize) -> u64 {
    signature_key(PREFIX_TAG, run_start(run, length).unwrap_or(run).as_bytes())
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use sluice_query::fold;

    use super::*;

    proptest! {
        /// A text's signature holds every key a needle inside it is looked up by.
        #[test]
        fn a_text_holds_every_signature_key_of_a_needle_inside_it(
            a in "[a-f0-9 -]{0,12}|\\PC{0,12}",
            b in "[a-z0-9 =_-]{0,40}|[0-9]{0,20}|\\PC{0,40}",
            c in "[a-f0-9 -]{0,12}|\\PC{0,12}",
        ) {
            let mut held = std::collections::HashSet::new();
            signature_keys(&fold(&format!("{a}{b}{c}")), |key| { held.insert(key); });
            let needle = needle_signature_keys(&fold(&b));
            prop_assert!(needle.len() <= MAX_NEEDLE_SIGNATURE_KEYS);
            prop_assert!(needle.iter().all(|key| held.contains(key)), "{:?}", b);
            if let Some(second) = needle_second_start_key(&fold(&b)) {
                prop_assert!(held.contains(&second), "{:?}", b);
            }
            prop_assert!(needle_start_keys(&fold(&b)).iter().all(|key| held.contains(key)), "{:?}", b);
        }
    }

    #[test]
    fn needles_with_a_digit_have_signature_keys_and_words_do_not() {
        assert_eq!(needle_signature_keys("ord-4821937").len(), 1);
        assert_eq!(needle_signature_keys("a-b2-def").len(), 1);
        assert!(needle_signature_keys("8f3a2b1c9d0e4f57").len() > 1);
        assert!(needle_signature_keys("abc def").is_empty());
        assert!(needle_signature_keys("x-123").is_empty(), "a final run under four characters");
        assert!(needle_signature_keys("x-1234").is_empty(), "a final run under five characters");
        // A final run longer than a prefix key is looked up by its first seven characters.
        let mut held = Vec::new();
        signature_keys("ord-48219375", |key| held.push(key));
        assert!(needle_signature_keys("ord-4821937").iter().all(|key| held.contains(key)));
    }
}
