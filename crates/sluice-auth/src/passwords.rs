//! Passwords: Argon2id hashes in PHC strings (the `argon2` crate with OWASP's parameters:
//! 19 MiB of memory, 2 passes, 1 lane), and a check that costs the same for unknown users.

use std::sync::OnceLock;

use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::{Algorithm, Argon2, Params, Version};

/// The hasher: Argon2id, version 0x13, OWASP's first recommended parameters.
fn argon2() -> Argon2<'static> {
    Argon2::new(Algorithm::Argon2id, Version::V0x13, Params::default())
}

/// Why a password could not be hashed.
#[derive(Debug, thiserror::Error)]
pub enum PasswordError {
    /// The CSPRNG failed to give a salt.
    #[error("no random salt: {0}")]
    Random(#[from] getrandom::Error),
    /// Argon2 refused its input.
    #[error("argon2: {0}")]
    Hash(argon2::password_hash::Error),
}

/// The PHC string of `password`'s Argon2id hash with a fresh 16-byte salt.
pub fn hash_password(password: &str) -> Result<String, PasswordError> {
    let mut salt = [0u8; 16];
    getrandom::fill(&mut salt)?;
    let salt = SaltString::encode_b64(&salt).map_err(PasswordError::Hash)?;
    let hash = argon2().hash_password(password.as_bytes(), &salt).map_err(PasswordError::Hash)?;
    Ok(hash.to_string())
}

/// Whether `password` matches the PHC string `stored`; false for a string that is not one.
/// The parameters come from `stored`, so hashes made with older parameters still verify.
pub fn verify_password(password: &str, stored: &str) -> bool {
    PasswordHash::new(stored).is_ok_and(|hash| argon2().verify_password(password.as_bytes(), &hash).is_ok())
}

/// Spends what [`verify_password`] spends, for an email no user has, so that a wrong email and
/// a wrong password take about the same time to refuse.
pub fn verify_nobody(password: &str) {
    static NOBODY: OnceLock<String> = OnceLock::new();
    let stored = NOBODY.get_or_init(|| hash_password("no user has this password").unwrap_or_default());
    let _ = verify_password(password, stored);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hash_verifies_its_password_only() {
        let stored = hash_password("correct horse").expect("hash");
        assert!(stored.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"), "{stored}");
        assert!(verify_password("correct horse", &stored));
        assert!(!verify_password("Correct horse", &stored));
        assert!(!verify_password("correct horse", "not a phc string"));
        assert_ne!(stored, hash_password("correct horse").expect("hash"), "salted");
    }
}
