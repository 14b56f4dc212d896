//! `X-Hub-Signature-256`: GitHub signs each delivery's exact body with HMAC-SHA256 under
//! the webhook secret and sends `sha256=<lowercase hex>`. Checking it is the only thing
//! that tells GitHub's deliveries from anyone else's POST.

use hmac::{Hmac, Mac};
use sha2::Sha256;

/// The header GitHub puts the signature in.
pub const SIGNATURE_HEADER: &str = "x-hub-signature-256";

/// The webhook secret. Its `Debug` never shows it.
#[derive(Clone)]
pub struct WebhookSecret(Vec<u8>);

impl std::fmt::Debug for WebhookSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("WebhookSecret([redacted])")
    }
}

impl WebhookSecret {
    /// A secret from its bytes; `None` when empty (an empty secret signs nothing).
    pub fn new(bytes: impl Into<Vec<u8>>) -> Option<Self> {
        let bytes = bytes.into();
        (!bytes.is_empty()).then_some(Self(bytes))
    }

    fn mac(&self) -> Hmac<Sha256> {
        // HMAC takes a key of any length; `new_from_slice` cannot fail for it.
        <Hmac<Sha256> as Mac>::new_from_slice(&self.0).unwrap_or_else(|_| unreachable!())
    }

    /// The header value GitHub would send for `body`.
    pub fn sign(&self, body: &[u8]) -> String {
        let mut mac = self.mac();
        mac.update(body);
        format!("sha256={}", hex::encode(mac.finalize().into_bytes()))
    }

    /// Checks `header` (the whole `X-Hub-Signature-256` value) against `body`, in constant
    /// time over the digest.
    ///
    /// # Errors
    /// Why the signature does not hold: absent, not `sha256=<64 hex digits>`, or another
    /// body's (or another secret's).
    pub fn verify(&self, header: Option<&str>, body: &[u8]) -> Result<(), SignatureError> {
        let header = header.ok_or(SignatureError::Missing)?;
        let digest = header
            .trim()
            .strip_prefix("sha256=")
            .ok_or(SignatureError::Malformed)?;
        let digest = hex::decode(digest).map_err(|_| SignatureError::Malformed)?;
        if digest.len() != 32 {
            return Err(SignatureError::Malformed);
        }
        let mut mac = self.mac();
        mac.update(body);
        mac.verify_slice(&digest)
            .map_err(|_| SignatureError::Mismatch)
    }
}

/// Why a delivery's signature does not hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SignatureError {
    /// No `X-Hub-Signature-256` header.
    #[error("no X-Hub-Signature-256 header (is the App's webhook secret set?)")]
    Missing,
    /// Not `sha256=` and 64 hex digits.
    #[error("X-Hub-Signature-256 is not sha256=<64 hex digits>")]
    Malformed,
    /// A well-formed signature of another body, or under another secret.
    #[error("X-Hub-Signature-256 does not match the body under the configured secret")]
    Mismatch,
}

#[cfg(test)]
mod tests {
    use super::*;

    // GitHub's documented test vector (docs.github.com, "Validating webhook deliveries").
    const SECRET: &str = "It's a Secret to Everybody";
    const BODY: &str = "Hello, World!";
    const SIGNATURE: &str =
        "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17";

    fn secret() -> WebhookSecret {
        WebhookSecret::new(SECRET).expect("not empty")
    }

    #[test]
    fn github_documented_vector_verifies() {
        assert_eq!(secret().sign(BODY.as_bytes()), SIGNATURE);
        assert_eq!(secret().verify(Some(SIGNATURE), BODY.as_bytes()), Ok(()));
    }

    #[test]
    fn another_body_another_secret_or_no_signature_is_refused() {
        assert_eq!(
            secret().verify(Some(SIGNATURE), b"Hello, World?"),
            Err(SignatureError::Mismatch)
        );
        let other = WebhookSecret::new("another").expect("not empty");
        assert_eq!(
            other.verify(Some(SIGNATURE), BODY.as_bytes()),
            Err(SignatureError::Mismatch)
        );
        assert_eq!(
            secret().verify(None, BODY.as_bytes()),
            Err(SignatureError::Missing)
        );
        for bad in ["757107ea", "sha1=757107ea", "sha256=zz", "sha256=7571"] {
            assert_eq!(
                secret().verify(Some(bad), BODY.as_bytes()),
                Err(SignatureError::Malformed),
                "{bad}"
            );
        }
        assert!(WebhookSecret::new("").is_none());
        assert_eq!(format!("{:?}", secret()), "WebhookSecret([redacted])");
    }
}
