//! Secrets drawn from the operating system's CSPRNG: session tokens, device codes and the user
//! codes people type, with the shape checks that spare the store a lookup.

/// The prefix of every session token.
pub const SESSION_PREFIX: &str = "slc_sess_";

/// The letters of a user code (RFC 8628, 6.1): no vowels, so no words, and none that looks like
/// a digit.
pub const USER_CODE_LETTERS: &[u8; 20] = b"BCDFGHJKLMNPQRSTVWXZ";

/// Letters in a user code.
pub const USER_CODE_LEN: usize = 8;

const BASE62: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// `count` characters drawn uniformly from `alphabet` (at most 256 letters), by rejection
/// sampling of random bytes.
pub fn random_text(alphabet: &[u8], count: usize) -> Result<String, getrandom::Error> {
    let letters = alphabet.len().clamp(1, 256);
    // The largest multiple of the alphabet's size that fits in a byte: bytes at or above it
    // are drawn again, so every letter is equally likely.
    let limit = 256 - 256 % letters;
    let mut text = String::with_capacity(count);
    let mut pool = [0u8; 64];
    while text.len() < count {
        getrandom::fill(&mut pool)?;
        for byte in pool.iter().map(|byte| usize::from(*byte)).filter(|byte| *byte < limit) {
            if text.len() == count {
                break;
            }
            text.push(char::from(alphabet[byte % letters]));
        }
    }
    Ok(text)
}

/// `count` base62 characters.
pub fn random_base62(count: usize) -> Result<String, getrandom::Error> {
    random_text(BASE62, count)
}

/// BLAKE3 of a secret's text: what the store keeps and looks it up by.
pub fn hash_secret(text: &str) -> [u8; 32] {
    *blake3::hash(text.as_bytes()).as_bytes()
}

/// A new session token, `slc_sess_<32 base62>`.
pub fn generate_session_token() -> Result<String, getrandom::Error> {
    Ok(format!("{SESSION_PREFIX}{}", random_base62(crate::RANDOM_CHARS)?))
}

/// Whether `text` is of the session token's shape.
pub fn is_session_token(text: &str) -> bool {
    text.strip_prefix(SESSION_PREFIX).is_some_and(|random| {
        random.len() == crate::RANDOM_CHARS && random.bytes().all(|byte| byte.is_ascii_alphanumeric())
    })
}

/// A new device code: 43 base62 characters (256 bits), never shown to a person.
pub fn generate_device_code() -> Result<String, getrandom::Error> {
    random_base62(43)
}

/// A new user code, as stored: 8 letters of [`USER_CODE_LETTERS`].
pub fn generate_user_code() -> Result<String, getrandom::Error> {
    random_text(USER_CODE_LETTERS, USER_CODE_LEN)
}

/// A user code as shown: `XXXX-XXXX`.
pub fn display_user_code(code: &str) -> String {
    match code.split_at_checked(USER_CODE_LEN / 2) {
        Some((first, second)) => format!("{first}-{second}"),
        None => code.to_owned(),
    }
}

/// What a person typed, as stored: case and dashes (and spaces) ignored; `None` when it cannot
/// be a user code.
pub fn normalize_user_code(typed: &str) -> Option<String> {
    let code: String = typed
        .chars()
        .filter(|letter| !matches!(letter, '-' | ' ' | '\t'))
        .map(|letter| letter.to_ascii_uppercase())
        .collect();
    (code.len() == USER_CODE_LEN && code.bytes().all(|letter| USER_CODE_LETTERS.contains(&letter))).then_some(code)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_tokens_have_their_shape() {
        let token = generate_session_token().expect("csprng");
        assert!(is_session_token(&token), "{token}");
        assert!(!is_session_token("slc_sess_short"));
        assert!(!is_session_token("slc_live_0123456789abcdefghijABCDEFGHIJ01"));
        assert_ne!(token, generate_session_token().expect("csprng"));
    }

    #[test]
    fn user_codes_are_typed_in_any_case_with_or_without_the_dash() {
        let code = generate_user_code().expect("csprng");
        assert_eq!(code.len(), USER_CODE_LEN);
        assert!(code.bytes().all(|letter| USER_CODE_LETTERS.contains(&letter)));
        let shown = display_user_code(&code);
        assert_eq!(shown.len(), USER_CODE_LEN + 1);
        assert_eq!(normalize_user_code(&shown.to_lowercase()), Some(code.clone()));
        assert_eq!(normalize_user_code(&code), Some(code));
        for bad in ["", "BCDF-GHJ", "BCDF-GHJKL", "ABCD-EFGH", "BCDF-GHJ1"] {
            assert_eq!(normalize_user_code(bad), None, "{bad}");
        }
    }

    #[test]
    fn every_letter_can_be_drawn() {
        let drawn = random_text(USER_CODE_LETTERS, 2_000).expect("csprng");
        for letter in USER_CODE_LETTERS {
            assert!(drawn.as_bytes().contains(letter), "{}", char::from(*letter));
        }
    }
}
