//! The search index's encoding, shared by every store: trigram codes of folded text
//! ([`sluice_query::fold`]) and the codes a needle is looked up by. The SQLite store writes a
//! chunk's codes as FTS5 tokens, the PostgreSQL store as bits of a Bloom filter; both look a
//! needle up by [`needle_trigrams`], so a text containing the needle always holds them.

/// Calls `each` with the code of every trigram (three consecutive characters) of `folded`:
/// the three code points side by side, 21 bits each, so two trigrams share a code only when
/// they are the same. A text of fewer than three characters has none. Stores that index
/// trigrams of folded text look up a needle by [`needle_trigrams`], so a text containing the
/// needle holds every trigram the needle gives.
///
/// ```
/// use sluice_store::trigrams::{trigram_code, trigram_codes};
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

/// The most trigrams [`needle_trigrams`] gives: a long needle is looked up by a spread of
/// them (a superset of its matches; the exact check decides), so a pasted stack trace costs
/// no more to look up than a sentence.
pub const MAX_NEEDLE_TRIGRAMS: usize = 12;

/// The distinct trigram codes an index looks a folded needle up by: all of them, or for a
/// long needle [`MAX_NEEDLE_TRIGRAMS`] spread from its start to its end. Empty under
/// [`sluice_query::INDEX_MIN_CHARS`].
///
/// ```
/// assert_eq!(sluice_store::trigrams::needle_trigrams("abab").len(), 2);
/// assert!(sluice_store::trigrams::needle_trigrams("ab").is_empty());
/// ```
pub fn needle_trigrams(folded: &str) -> Vec<u64> {
    let mut codes = Vec::new();
    trigram_codes(folded, |code| {
        if !codes.contains(&code) {
            codes.push(code);
        }
    });
    if codes.len() > MAX_NEEDLE_TRIGRAMS {
        let step = codes.len() as f64 / MAX_NEEDLE_TRIGRAMS as f64;
        codes = (0..MAX_NEEDLE_TRIGRAMS).map(|index| codes[(index as f64 * step) as usize]).collect();
    }
    codes
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use sluice_query::{INDEX_MIN_CHARS, fold};

    use super::*;

    proptest! {
        /// A text holds every trigram a needle inside it is looked up by, whatever the case of
        /// either: an index of [`trigram_codes`] never misses a match of the exact check.
        #[test]
        fn a_text_holds_every_trigram_of_a_needle_inside_it(a in "\\PC{0,12}", b in "\\PC{0,40}", c in "\\PC{0,12}") {
            let mut held = std::collections::HashSet::new();
            trigram_codes(&fold(&format!("{a}{b}{c}")), |code| { held.insert(code); });
            let needle = needle_trigrams(&fold(&b));
            prop_assert!(needle.len() <= MAX_NEEDLE_TRIGRAMS);
            prop_assert_eq!(needle.is_empty(), fold(&b).chars().count() < INDEX_MIN_CHARS);
            prop_assert!(needle.iter().all(|code| held.contains(code)));
        }
    }
}
