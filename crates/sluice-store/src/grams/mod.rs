//! The search index's encoding, shared by every store: the keys of folded text
//! ([`sluice_query::fold`]) and the keys a needle is looked up by, such that a text containing
//! the needle always holds every key the needle is looked up by (the index never misses a
//! match of the exact check; proptests below).
//!
//! Text is cut into **runs**: maximal sequences of ASCII letters and digits and non-ASCII
//! characters ([`is_run_char`]; what SQLite FTS5's `ascii` tokenizer keeps in one token). Runs
//! holding a digit are numbers and identifiers, where trigrams fail; runs of letters are
//! words, which trigrams find well. Three kinds of key:
//! - **Trigrams** ([`run_trigram_codes`], [`needle_run_trigrams`]): three consecutive characters
//!   inside a run, except those of hex digits with a digit among them. Over digits and hex there
//!   are only 1,000 and 4,096 trigrams: a chunk of logs carrying order numbers and request ids
//!   holds nearly all, so they cannot tell a rare identifier's chunks from the others, and
//!   cost the most to write.
//! - **Runs with a digit** ([`needle_runs`]): each whole. A needle's run that
//!   has a separator on both sides in the needle is a whole run of any text containing it; one
//!   that ends the needle after a separator starts a run of the text (a prefix lookup). So
//!   `ORD-4821937` is found by the runs starting with `4821937`, and a UUID by its inner runs.
//! - **Long grams of runs with a digit** ([`gram_keys`], [`needle_grams`]): six consecutive
//!   characters of a run of [`GRAM_MIN_CHARS`] or more, sampled by winnowing (Schleimer,
//!   Wilkerson and Aiken, 2003): of every [`GRAM_WINDOW`] consecutive six-grams, the one whose
//!   hash is least is kept. The choice depends only on the window's own characters, so a
//!   needle's run of [`GRAM_MIN_CHARS`] or more, which holds at least one whole window, picks
//!   the same six-grams inside any run containing it: a hex request id or `kappa042` anywhere
//!   inside a longer run is found by a few rare keys. Each is kept as a 20-bit key
//!   ([`GRAM_KEY_BITS`]): a key may stand for several grams (a false candidate the exact check
//!   drops).
//!
//! A run of a needle holds a digit only when the run of the text around it does, so the needle
//! and the text agree on which of its runs are keyed.
//!
//! Both stores put the runs, their starts ([`PREFIX_LENGTHS`]) and long grams of a chunk into
//! its signature ([`signature_keys`], [`needle_signature_keys`]; [`crate::signature`]). SQLite
//! writes the trigrams as FTS5 tokens ([`trigram_token`]); PostgreSQL puts them into the
//! signature too ([`trigram_signature_key`]).

mod signature;

pub use signature::{
    MAX_NEEDLE_SIGNATURE_KEYS, PREFIX_LENGTHS, chunk_keys, needle_second_start_key, needle_signature_keys,
    needle_start_keys, signature_keys, trigram_signature_key,
};

/// Calls `each` with the code of every trigram (three consecutive characters) of `folded`:
/// the three code points side by side, 21 bits each, so two trigrams share a code only when
/// they are the same. A text of fewer than three characters has none.
///
/// ```
/// use sluice_store::grams::{trigram_code, trigram_codes};
/// let mut codes = Vec::new();
/// trigram_codes("abcd", |code| codes.push(code));
/// assert_eq!(codes, [trigram_code(['a', 'b', 'c']), trigram_code(['b', 'c', 'd'])]);
/// ```
pub fn trigram_codes(folded: &str, mut each: impl FnMut(u64)) {
    let mut window = 0_u64;
    for (index, character) in folded.chars().enumerate() {
        window = ((window << 21) | u64::from(character)) & ((1 << 63) - 1);
        if index >= 2 {
            each(window);
        }
    }
}

/// The code [`trigram_codes`] gives three characters.
pub fn trigram_code(characters: [char; 3]) -> u64 {
    characters.into_iter().fold(0, |code, character| (code << 21) | u64::from(character))
}

/// The most trigrams [`needle_run_trigrams`] gives: a long needle is looked up by a spread of
/// them (a superset of its matches; the exact check decides), so a pasted stack trace costs
/// no more to look up than a sentence.
pub const MAX_NEEDLE_TRIGRAMS: usize = 12;

/// Calls `each` with the code of every trigram inside a run of `folded` that is not made of
/// hex digits only with a digit among them (`123`, `a04`, `4f5`; `bad` and `dea` stay): what
/// an index of runs and long grams still needs trigrams for (needles too short for a long
/// gram). A trigram across a separator, or of digits and hex, is in nearly every chunk of logs
/// that carry numbers and ids and would only cost: a needle is looked up by its other keys.
///
/// ```
/// let mut codes = Vec::new();
/// sluice_store::grams::run_trigram_codes("ab-123x 4f5", |code| codes.push(code));
/// assert_eq!(codes, [sluice_store::grams::trigram_code(['2', '3', 'x'])]);
/// ```
pub fn run_trigram_codes(folded: &str, each: impl FnMut(u64)) {
    text_keys(folded, each, |_| {}, |_| {});
}

/// [`run_trigram_codes`] of a run holding a non-ASCII character, read character by character.
fn wide_run_trigrams(run: &str, each: &mut impl FnMut(u64)) {
    trigram_codes(run, |code| {
        if !hex_with_a_digit(code) {
            each(code);
        }
    });
}

/// [`run_trigram_codes`] of a run of ASCII (nearly all), read byte by byte in one pass: the
/// same codes as [`trigram_codes`], a trigram of hex digits with a digit among them known from
/// how many hex digits end at it and how far back the last digit was.
fn ascii_run_trigrams(run: &[u8], each: &mut impl FnMut(u64)) {
    let (mut code, mut hex, mut since_digit) = (0_u64, 0_usize, usize::MAX);
    for (index, byte) in run.iter().enumerate() {
        code = ((code << 21) | u64::from(*byte)) & ((1 << 63) - 1);
        let class = CLASSES[usize::from(*byte)];
        hex = if class & HEX != 0 { hex + 1 } else { 0 };
        since_digit = if class & DIGIT != 0 { 0 } else { since_digit.saturating_add(1) };
        if index >= 2 && !(hex >= 3 && since_digit < 3) {
            each(code);
        }
    }
}

/// Every key an index of runs and long grams takes from `folded`, in one pass over its runs:
/// [`run_trigram_codes`], each run holding a digit (whole, as it is in `folded`), and
/// [`gram_keys`]. The one place
/// that decides which runs give which keys: those three, and so every needle's keys, are this
/// with the other kinds left out.
pub fn text_keys(folded: &str, trigram: impl FnMut(u64), mut run: impl FnMut(&str), gram: impl FnMut(u32)) {
    keys_of_runs(folded, trigram, |text, _| run(text), gram);
}

/// What a byte of folded text is to [`keys_of_runs`]: bits of [`RUN`] (it belongs to a run:
/// [`is_run_byte`]), [`HEX`], [`DIGIT`] and [`WIDE`] (a byte of a non-ASCII character).
const CLASSES: [u8; 256] = classes();
const RUN: u8 = 1;
const HEX: u8 = 2;
const DIGIT: u8 = 4;
const WIDE: u8 = 8;

const fn classes() -> [u8; 256] {
    let mut table = [0; 256];
    let mut index = 0;
    while index < 256 {
        let byte = index as u8;
        table[index] = (if is_run_byte(byte) { RUN } else { 0 })
            | (if byte.is_ascii() { 0 } else { WIDE })
            | (if byte.is_ascii_hexdigit() { HEX } else { 0 })
            | (if byte.is_ascii_digit() { DIGIT } else { 0 });
        index += 1;
    }
    table
}

/// [`text_keys`], telling `run` whether the run is all ASCII. Each run is found, and what its
/// bytes are learnt, in one read of a byte-class table ([`CLASSES`]); its trigrams in a second
/// (taking a chunk's keys read each run about six times before: `cargo bench -p sluice-store
/// --features bench --bench keys`, docs/PERFORMANCE.md, issue 24).
pub(crate) fn keys_of_runs(
    folded: &str,
    mut trigram: impl FnMut(u64),
    mut run: impl FnMut(&str, bool),
    mut gram: impl FnMut(u32),
) {
    let bytes = folded.as_bytes();
    let mut at = 0;
    loop {
        while bytes.get(at).is_some_and(|byte| CLASSES[usize::from(*byte)] & RUN == 0) {
            at += 1;
        }
        let start = at;
        let mut seen = 0;
        while let Some(byte) = bytes.get(at) {
            let class = CLASSES[usize::from(*byte)];
            if class & RUN == 0 {
                break;
            }
            seen |= class;
            at += 1;
        }
        // A run's ends are character boundaries (every byte of a non-ASCII character is in
        // a run), so `get` finds it; past the text's end there is none.
        let Some(text) = folded.get(start..at).filter(|text| !text.is_empty()) else { return };
        let ascii = seen & WIDE == 0;
        if ascii {
            ascii_run_trigrams(text.as_bytes(), &mut trigram);
        } else {
            wide_run_trigrams(text, &mut trigram);
        }
        if seen & DIGIT != 0 {
            run(text, ascii);
            if ascii {
                run_gram_keys(text.bytes().map(u32::from), &mut gram);
            } else {
                run_gram_keys(text.chars().map(u32::from), &mut gram);
            }
        }
    }
}

/// Whether a trigram code is of three ASCII hex digits, at least one a digit.
fn hex_with_a_digit(code: u64) -> bool {
    let bytes = [code >> 42, code >> 21, code].map(|bits| u8::try_from(bits & 0x1f_ffff).ok());
    bytes.iter().all(|byte| byte.is_some_and(|byte| byte.is_ascii_hexdigit()))
        && bytes.iter().any(|byte| byte.is_some_and(|byte| byte.is_ascii_digit()))
}

/// Whether a run holds a digit: only such runs (numbers, ids, versions) are indexed whole and
/// by long grams. Runs of letters are words, which their trigrams find well.
fn has_digit(run: &str) -> bool {
    run.bytes().any(|byte| byte.is_ascii_digit())
}

/// The distinct codes [`run_trigram_codes`] gives a folded needle, at most
/// [`MAX_NEEDLE_TRIGRAMS`] spread from its start to its end: the trigrams of its runs, which any
/// text containing it holds inside its own runs.
///
/// ```
/// assert_eq!(sluice_store::grams::needle_run_trigrams("a-b 123").len(), 0);
/// assert_eq!(sluice_store::grams::needle_run_trigrams("abcd").len(), 2);
/// ```
pub fn needle_run_trigrams(folded: &str) -> Vec<u64> {
    let mut codes = Vec::new();
    run_trigram_codes(folded, |code| {
        if !codes.contains(&code) {
            codes.push(code);
        }
    });
    spread(codes, MAX_NEEDLE_TRIGRAMS)
}

/// At most `most` of `items`, spread from the first to the last.
fn spread<T: Copy>(items: Vec<T>, most: usize) -> Vec<T> {
    if items.len() <= most {
        return items;
    }
    let step = items.len() as f64 / most as f64;
    (0..most).map(|index| items[(index as f64 * step) as usize]).collect()
}

/// The characters of a long gram.
pub const GRAM_CHARS: usize = 6;

/// Winnowing's window: of this many consecutive six-grams, the one with the least hash is kept
/// (about half of a text's six-grams, two in every [`GRAM_WINDOW`] + 1 on random text).
pub const GRAM_WINDOW: usize = 3;

/// The shortest needle [`needle_grams`] gives keys for: one that holds a whole window
/// ([`GRAM_CHARS`] + [`GRAM_WINDOW`] - 1 characters). Shorter needles are looked up by trigrams.
pub const GRAM_MIN_CHARS: usize = GRAM_CHARS + GRAM_WINDOW - 1;

/// The bits of a long gram's key: a million keys, so a chunk's few tens of thousands of grams
/// take a few per cent of them and a needle's two or three keys together pick out its chunks.
pub const GRAM_KEY_BITS: u32 = 20;

/// The most keys [`needle_grams`] gives (spread over a long needle, as trigrams are).
pub const MAX_NEEDLE_GRAMS: usize = 8;

/// splitmix64's finalizer. Stored indexes depend on it: it must never change.
fn mix(mut value: u64) -> u64 {
    value = (value ^ (value >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    value = (value ^ (value >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    value ^ (value >> 31)
}

/// The 64-bit hash of a six-gram given as its code points side by side (21 bits each). Its low
/// 32 bits rank it in its window; its high [`GRAM_KEY_BITS`] are its key. Stored indexes depend
/// on it: it must never change.
fn gram_hash(window: u128) -> u64 {
    mix((window as u64) ^ mix((window >> 64) as u64 ^ 0x736c_7569_6365))
}

/// Whether `character` belongs to a run: an ASCII letter or digit, or any non-ASCII character.
pub fn is_run_char(character: char) -> bool {
    character.is_ascii_alphanumeric() || !character.is_ascii()
}

/// The runs of `folded`: its maximal sequences of [`is_run_char`] characters, each with whether
/// a separator comes before it and after it (false at the text's start and end).
///
/// Read byte by byte: every byte of a non-ASCII character is 0x80 or above, so a run's bytes
/// are those [`is_run_byte`] keeps and its ends are character boundaries.
fn runs(folded: &str) -> impl Iterator<Item = (&str, bool, bool)> {
    let bytes = folded.as_bytes();
    let mut at = 0;
    std::iter::from_fn(move || {
        let start = at + bytes.get(at..)?.iter().position(|byte| is_run_byte(*byte))?;
        let end = bytes
            .get(start..)?
            .iter()
            .position(|byte| !is_run_byte(*byte))
            .map_or(bytes.len(), |length| start + length);
        at = end;
        Some((folded.get(start..end)?, start > 0, end < bytes.len()))
    })
}

/// Whether a byte of UTF-8 text is part of a run ([`is_run_char`]): an ASCII letter or digit,
/// or a byte of a non-ASCII character.
const fn is_run_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || !byte.is_ascii()
}

/// Calls `each` with the key of every six-gram that winnowing keeps in each run of `folded`
/// holding a digit, of [`GRAM_MIN_CHARS`] characters or more, each kept position once (a key may come again from
/// another position).
///
/// ```
/// let mut keys = Vec::new();
/// sluice_store::grams::gram_keys("req=8f3a2b1c9d0e4f57 ok", |key| keys.push(key));
/// assert!(!keys.is_empty() && keys.iter().all(|key| *key < 1 << 20));
/// ```
pub fn gram_keys(folded: &str, each: impl FnMut(u32)) {
    text_keys(folded, |_| {}, |_| {}, each);
}

/// [`gram_keys`] of one run, given as its code points.
fn run_gram_keys(run: impl Iterator<Item = u32>, each: &mut impl FnMut(u32)) {
    let mut window = 0_u128;
    // The hashes of the last GRAM_WINDOW six-grams, oldest first, and how many there were.
    let mut hashes = [0_u64; GRAM_WINDOW];
    let mut grams = 0_usize;
    let mut last_kept = usize::MAX;
    let mask = (1_u128 << (21 * GRAM_CHARS)) - 1;
    for (index, character) in run.enumerate() {
        window = ((window << 21) | u128::from(character)) & mask;
        if index + 1 < GRAM_CHARS {
            continue;
        }
        hashes.rotate_left(1);
        hashes[GRAM_WINDOW - 1] = gram_hash(window);
        grams += 1;
        if grams >= GRAM_WINDOW {
            // The rightmost least hash of the window ending at six-gram `grams - 1`.
            let offset = least(&hashes);
            let position = grams - GRAM_WINDOW + offset;
            if position != last_kept {
                last_kept = position;
                each(key(hashes[offset]));
            }
        }
    }
}

/// The offset of the rightmost least ranking (low 32 bits) among `hashes`.
fn least(hashes: &[u64]) -> usize {
    let mut best = (0, u32::MAX);
    for (offset, hash) in hashes.iter().enumerate() {
        let rank = *hash as u32;
        if rank <= best.1 {
            best = (offset, rank);
        }
    }
    best.0
}

/// A six-gram's key: the high [`GRAM_KEY_BITS`] of its hash.
fn key(hash: u64) -> u32 {
    (hash >> (64 - GRAM_KEY_BITS)) as u32
}

/// The distinct long-gram keys an index looks a folded needle up by: those [`gram_keys`] keeps
/// of the needle itself, at most [`MAX_NEEDLE_GRAMS`] spread from its start to its end. Empty
/// when no run of the needle has [`GRAM_MIN_CHARS`] characters (none holds a whole window).
///
/// ```
/// use sluice_store::grams::needle_grams;
/// assert!(!needle_grams("8f3a2b1c9d0e4f57").is_empty());
/// assert!(needle_grams("ord-4821937").is_empty());
/// ```
pub fn needle_grams(folded: &str) -> Vec<u32> {
    let mut keys = Vec::new();
    gram_keys(folded, |key| {
        if !keys.contains(&key) {
            keys.push(key);
        }
    });
    spread(keys, MAX_NEEDLE_GRAMS)
}

/// The longest run a key holds: a longer run's key is its first this many characters, and so
/// is a needle's.
pub const MAX_RUN_CHARS: usize = 64;

/// The shortest run a needle is looked up by as the start of a run ([`RunKey::Prefix`]):
/// shorter prefixes are common, and costly to look up.
pub const MIN_PREFIX_CHARS: usize = 4;

/// How a needle's run is looked up among the runs of a text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunKey {
    /// A whole run: the needle has a separator on both sides of it.
    Whole(String),
    /// The start of a run: the needle ends with it, after a separator.
    Prefix(String),
}

/// The run keys an index looks a folded needle up by ([`RunKey`]), in order: of its runs
/// holding a digit (others are looked up by trigrams). A run that starts
/// the needle (it may be the end of a longer run) gives none, nor does a final run under
/// [`MIN_PREFIX_CHARS`] characters.
///
/// ```
/// use sluice_store::grams::{RunKey, needle_runs};
/// assert_eq!(needle_runs("ord-4821937"), [RunKey::Prefix("4821937".into())]);
/// assert_eq!(needle_runs("a-b2-def"), [RunKey::Whole("b2".into())]);
/// assert!(needle_runs("a-bc-def").is_empty());
/// assert!(needle_runs("8f3a2b1c9d0e4f57").is_empty());
/// ```
pub fn needle_runs(folded: &str) -> Vec<RunKey> {
    let mut keys: Vec<RunKey> = Vec::new();
    for (run, before, after) in runs(folded).filter(|(run, _, _)| has_digit(run)) {
        let run: String = run.chars().take(MAX_RUN_CHARS).collect();
        let key = match (before, after) {
            (true, true) => RunKey::Whole(run),
            (true, false) if run.chars().count() >= MIN_PREFIX_CHARS => RunKey::Prefix(run),
            _ => continue,
        };
        if !keys.contains(&key) {
            keys.push(key);
        }
    }
    keys
}

/// A trigram code as a token of a full-text index: its hex digits.
pub fn trigram_token(code: u64, into: &mut String) {
    hex(code, 1, into);
}

/// `value` in lowercase hex digits, at least `width` of them.
fn hex(value: u64, width: u32, into: &mut String) {
    let digits = (64 - value.leading_zeros()).div_ceil(4).max(width);
    for index in (0..digits).rev() {
        let nibble = ((value >> (4 * index)) & 0xf) as u8;
        into.push(char::from(if nibble < 10 { b'0' + nibble } else { b'a' + nibble - 10 }));
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use sluice_query::fold;

    use super::*;

    proptest! {
        /// A text holds every run trigram a needle inside it is looked up by.
        #[test]
        fn a_text_holds_every_run_trigram_of_a_needle_inside_it(
            a in "[a-z0-9 -]{0,12}|\\PC{0,12}",
            b in "[a-z0-9 -]{0,40}|\\PC{0,40}",
            c in "[a-z0-9 -]{0,12}|\\PC{0,12}",
        ) {
            let mut held = std::collections::HashSet::new();
            run_trigram_codes(&fold(&format!("{a}{b}{c}")), |code| { held.insert(code); });
            let needle = needle_run_trigrams(&fold(&b));
            prop_assert!(needle.len() <= MAX_NEEDLE_TRIGRAMS);
            prop_assert!(needle.iter().all(|code| held.contains(code)));
        }

        /// A text holds every long-gram key a needle inside it is looked up by: winnowing
        /// picks the same six-grams from a whole window wherever it stands.
        #[test]
        fn a_text_holds_every_long_gram_of_a_needle_inside_it(
            a in "[a-f0-9 -]{0,12}|\\PC{0,12}",
            b in "[a-f0-9-]{0,40}|[0-9]{0,20}|\\PC{0,40}",
            c in "[a-f0-9 -]{0,12}|\\PC{0,12}",
        ) {
            let mut held = std::collections::HashSet::new();
            gram_keys(&fold(&format!("{a}{b}{c}")), |key| { held.insert(key); });
            let needle = needle_grams(&fold(&b));
            prop_assert!(needle.len() <= MAX_NEEDLE_GRAMS);
            let longest =
                runs(&fold(&b)).filter(|(run, _, _)| has_digit(run)).map(|(run, _, _)| run.chars().count()).max().unwrap_or(0);
            prop_assert_eq!(needle.is_empty(), longest < GRAM_MIN_CHARS);
            prop_assert!(needle.iter().all(|key| held.contains(key)), "{:?} in {:?}", b, held);
        }

        /// A text holds a run for every run key of a needle inside it: the whole run, or one
        /// starting with the needle's last run.
        #[test]
        fn a_text_holds_the_runs_of_a_needle_inside_it(
            a in "[a-z0-9 -]{0,12}|\\PC{0,12}",
            b in "[a-z0-9 =_-]{0,40}|\\PC{0,40}",
            c in "[a-z0-9 -]{0,12}|\\PC{0,12}",
        ) {
            // The runs holding a digit, as far as a key holds them.
            let mut held = Vec::new();
            text_keys(&fold(&format!("{a}{b}{c}")), |_| {}, |run| held.push(run.chars().take(MAX_RUN_CHARS).collect::<String>()), |_| {});
            for key in needle_runs(&fold(&b)) {
                let found = match &key {
                    RunKey::Whole(run) => held.contains(run),
                    RunKey::Prefix(run) => held.iter().any(|held| held.starts_with(run.as_str())),
                };
                prop_assert!(found, "{:?} of {:?} in {:?}", key, b, held);
            }
        }
    }

    /// Stored indexes hold these keys: a change to how they are taken from text (a faster
    /// scan, say) must give exactly the same ones, in the same order.
    #[test]
    fn the_keys_of_a_text_never_change() {
        let texts = [
            "081109 203615 148 INFO dfs.DataNode$PacketResponder: PacketResponder 1 for block blk_38865049064139660 terminating",
            "order=ord-4821937 req=8f3a2b1c9d0e4f57 trace=0c6e2b1a-9f3d-4a7e-b2c1-5d8e9f0a1b2c kappa042 lambda7 failover to replica east414865",
            "été-x9 straße_42 日本語テキスト1234567 ÅÄÖ0 a1 ab12 abc123 abcd1234 abcdefgh12345678901234567890123456789012345678901234567890123456789012345678",
            "",
            "--==  ==--",
            "x",
            "0123456789abcdef0123456789abcdef",
        ];
        let mut all = Vec::new();
        for text in texts {
            let folded = fold(text);
            run_trigram_codes(&folded, |code| all.push(code));
            gram_keys(&folded, |key| all.push(u64::from(key)));
            signature_keys(&folded, |key| all.push(key));
            text_keys(&folded, |_| {}, |run| all.push(run.len() as u64), |_| {});
            for run in needle_runs(&folded) {
                all.push(match run {
                    RunKey::Whole(run) => run.len() as u64,
                    RunKey::Prefix(run) => !(run.len() as u64),
                });
            }
            all.extend(needle_run_trigrams(&folded));
            all.extend(needle_grams(&folded).into_iter().map(u64::from));
            all.extend(needle_signature_keys(&folded));
        }
        let digest = all.iter().fold(0xcbf2_9ce4_8422_2325_u64, |hash, key| mix(hash ^ key));
        assert_eq!((all.len(), digest), (483, 454_068_609_072_997_726));
    }

    #[test]
    fn runs_know_their_separators() {
        let runs: Vec<_> = runs("ab-cd ef").collect();
        assert_eq!(runs, [("ab", false, true), ("cd", true, true), ("ef", true, false)]);
        let runs: Vec<_> = runs_of("-été_x");
        assert_eq!(runs, [("été".to_owned(), true, true), ("x".to_owned(), true, false)]);
    }

    fn runs_of(text: &str) -> Vec<(String, bool, bool)> {
        runs(text).map(|(run, before, after)| (run.to_owned(), before, after)).collect()
    }

    #[test]
    fn winnowing_keeps_about_half_of_the_six_grams_of_random_text() {
        let text: String = (0..10_000_u64).map(|n| format!("{:x}", mix(n) & 0xf)).collect();
        let mut kept = 0;
        gram_keys(&text, |_| kept += 1);
        // Two in every GRAM_WINDOW + 1 on random text: 5,000 of 9,995.
        assert!((4_500..5_500).contains(&kept), "{kept}");
    }

    #[test]
    fn only_runs_of_a_whole_window_with_a_digit_have_long_grams() {
        let mut keys = Vec::new();
        gram_keys("abcdef1 abcdef1-abcdef1 abcdefgh", |key| keys.push(key));
        assert!(keys.is_empty());
        gram_keys("abcdefg1", |key| keys.push(key));
        assert_eq!(keys.len(), 1);
    }

    #[test]
    fn hex_tokens_are_lowercase_hex_digits() {
        let mut text = String::new();
        for value in [0, 1, 0xf, 0x10, 0xabc, u64::MAX, 1 << 62] {
            text.clear();
            trigram_token(value, &mut text);
            assert_eq!(text, format!("{value:x}"));
        }
    }
}
