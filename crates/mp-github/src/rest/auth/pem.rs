//! Reading an RSA private key from PEM text into the PKCS#1 DER the signer wants.
//!
//! Accepts `RSA PRIVATE KEY` (PKCS#1, what GitHub hands out) and unencrypted `PRIVATE KEY`
//! (PKCS#8) blocks. Error texts name what is wrong and never include key material.

use base64::Engine as _;

/// The DER object identifier of `rsaEncryption` (1.2.840.113549.1.1.1), content bytes only.
const RSA_ENCRYPTION_OID: [u8; 9] = [0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01];

/// The PKCS#1 `RSAPrivateKey` DER inside the first PEM block of `text`.
pub(super) fn rsa_private_key_der(text: &str) -> Result<Vec<u8>, String> {
    let (label, body) = pem_block(text)?;
    if body.contains(':') {
        return Err("encrypted PEM keys are not supported".to_owned());
    }
    let compact: String = body.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    let der = base64::engine::general_purpose::STANDARD
        .decode(compact.as_bytes())
        .map_err(|_| "the PEM body is not valid base64".to_owned())?;
    match label {
        "RSA PRIVATE KEY" => Ok(der),
        "PRIVATE KEY" => pkcs8_rsa_key(&der)
            .map(<[u8]>::to_vec)
            .ok_or_else(|| "the PKCS#8 key is not an RSA key".to_owned()),
        other => Err(format!(
            "expected an RSA PRIVATE KEY or PRIVATE KEY block, found {other}"
        )),
    }
}

/// The label and the body of the first `-----BEGIN <label>-----` block.
fn pem_block(text: &str) -> Result<(&str, &str), String> {
    const NO_PEM: &str = "no -----BEGIN ...----- line";
    let start = text.find("-----BEGIN ").ok_or_else(|| NO_PEM.to_owned())?;
    let after_begin = &text[start + "-----BEGIN ".len()..];
    let label_end = after_begin.find("-----").ok_or_else(|| NO_PEM.to_owned())?;
    let label = &after_begin[..label_end];
    if label.len() > 40 || !label.chars().all(|c| c.is_ascii_uppercase() || c == ' ') {
        return Err(NO_PEM.to_owned());
    }
    let body_and_rest = &after_begin[label_end + "-----".len()..];
    let end_marker = format!("-----END {label}-----");
    let body_end = body_and_rest
        .find(&end_marker)
        .ok_or_else(|| format!("no {end_marker} line"))?;
    Ok((label, &body_and_rest[..body_end]))
}

/// The `privateKey` octet string of a PKCS#8 `PrivateKeyInfo` whose algorithm is RSA.
fn pkcs8_rsa_key(der: &[u8]) -> Option<&[u8]> {
    let (info, _) = tlv(der, 0x30)?;
    let (_version, rest) = tlv(info, 0x02)?;
    let (algorithm, rest) = tlv(rest, 0x30)?;
    let (oid, _) = tlv(algorithm, 0x06)?;
    if oid != RSA_ENCRYPTION_OID {
        return None;
    }
    let (key, _) = tlv(rest, 0x04)?;
    Some(key)
}

/// Splits one DER element with the expected tag into (content, rest).
fn tlv(input: &[u8], tag: u8) -> Option<(&[u8], &[u8])> {
    let (&found, rest) = input.split_first()?;
    if found != tag {
        return None;
    }
    let (&first, rest) = rest.split_first()?;
    let (len, rest) = if first < 0x80 {
        (usize::from(first), rest)
    } else {
        let count = usize::from(first & 0x7f);
        if count == 0 || count > 4 || rest.len() < count {
            return None;
        }
        let (bytes, rest) = rest.split_at(count);
        let len = bytes
            .iter()
            .fold(0usize, |acc, &b| (acc << 8) | usize::from(b));
        (len, rest)
    };
    if rest.len() < len {
        return None;
    }
    Some(rest.split_at(len))
}
