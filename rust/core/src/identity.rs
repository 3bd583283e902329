//! Identities (pinned decision 3): SHA-256 over
//! `u64_be(len(D)) || D || u64_be(len(C)) || C`, D = `spine.v2/<name>`, C = canonical JSON.

use sha2::{Digest, Sha256};

/// The domain prefix every identity name is placed under.
pub const DOMAIN_PREFIX: &str = "spine.v2/";

/// An identity name outside `^[a-z][a-z0-9_]{0,63}$`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("INVALID_IDENTITY_NAME: {name:?} is not an identity name; expected ^[a-z][a-z0-9_]{{0,63}}$ such as \"config_hash\"")]
pub struct IdentityError {
    /// The refused name.
    pub name: String,
}

/// Check an identity name (`config_hash`, `bar_fingerprint`, ...).
///
/// # Errors
/// [`IdentityError`] when the name is empty, too long or not lowercase snake case.
pub fn check_name(name: &str) -> Result<(), IdentityError> {
    let bytes = name.as_bytes();
    let ok = (1..=64).contains(&bytes.len())
        && bytes[0].is_ascii_lowercase()
        && bytes
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'_');
    if ok {
        Ok(())
    } else {
        Err(IdentityError {
            name: name.to_owned(),
        })
    }
}

/// The 32-byte identity of already-canonical JSON bytes.
///
/// # Errors
/// [`IdentityError`] for a bad name.
pub fn identity(name: &str, canonical: &[u8]) -> Result<[u8; 32], IdentityError> {
    check_name(name)?;
    let domain_len = (DOMAIN_PREFIX.len() + name.len()) as u64;
    let mut hasher = Sha256::new();
    hasher.update(domain_len.to_be_bytes());
    hasher.update(DOMAIN_PREFIX.as_bytes());
    hasher.update(name.as_bytes());
    hasher.update((canonical.len() as u64).to_be_bytes());
    hasher.update(canonical);
    Ok(hasher.finalize().into())
}

/// [`identity`] as 64 lowercase hex characters.
///
/// # Errors
/// [`IdentityError`] for a bad name.
pub fn identity_hex(name: &str, canonical: &[u8]) -> Result<String, IdentityError> {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let digest = identity(name, canonical)?;
    let mut out = String::with_capacity(64);
    for byte in digest {
        out.push(HEX[(byte >> 4) as usize] as char);
        out.push(HEX[(byte & 0xf) as usize] as char);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_layout_by_hand() {
        // Independent layout: build the preimage explicitly, hash it once.
        let mut preimage = Vec::new();
        let d = b"spine.v2/config_hash";
        preimage.extend_from_slice(&(d.len() as u64).to_be_bytes());
        preimage.extend_from_slice(d);
        preimage.extend_from_slice(&2u64.to_be_bytes());
        preimage.extend_from_slice(b"{}");
        let expected: [u8; 32] = Sha256::digest(&preimage).into();
        assert_eq!(identity("config_hash", b"{}").ok(), Some(expected));
    }

    #[test]
    fn refuses_bad_names() {
        for bad in ["", "Config", "9x", "a-b", "a.b", &"x".repeat(65)] {
            assert!(identity_hex(bad, b"{}").is_err(), "{bad:?}");
        }
        assert!(identity_hex(&"x".repeat(64), b"{}").is_ok());
    }
}
