//! The `options` target: `OPTIONS` file text through `options_file::decode`.

use strata::options_file::{decode, encode};

/// Decodes `data` (if UTF-8) as an OPTIONS file; if it decodes, checks that
/// re-encoding is stable: `encode(decode(encode(o))) == encode(o)`. (Compared as text,
/// not as `Options`, so a decoded `NaN` float still counts as a round trip.)
pub fn check_options(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(stored) = decode(text) else {
        return;
    };
    let encoded = encode(&stored.options);
    let again = decode(&encoded).expect("an encoded OPTIONS file decodes");
    assert!(again.unknown.is_empty(), "own encoding has no unknown keys");
    assert_eq!(encode(&again.options), encoded, "OPTIONS round trip");
}
