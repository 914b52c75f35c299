//! Stress keys and values: both derived from numbers, so a value read back can be
//! checked without storing it.
//!
//! Keys are `k` followed by 10 decimal digits (`k0000000042`), so byte order is numeric
//! order and `ldb scan` output is readable. A value of key `k` with value id `id` is
//!
//! ```text
//! u64 key LE | u32 id LE | filler (0..=max_len-12 bytes)
//! ```
//!
//! where the filler's length and bytes come from a hash of `(key, id)`. Half of the
//! filler is a repeated printable byte, so compression has something to do. Decoding the
//! 12-byte header names the key and id a value claims to be, which makes mismatch
//! messages precise (a stale value, another key's value, garbage).
//!
//! *Counter keys* (a quarter of the keys, chosen by a hash so every thread owns some)
//! hold the id itself as an 8-byte little-endian counter instead, so that merges with
//! the harness's `strata.u64_add` operator can move them from one id to another: a
//! merge of `new - old` (wrapping) turns the value of id `old` into that of id `new`.

/// Bytes of the value header.
pub const VALUE_HEADER: usize = 12;

/// The key bytes of key number `k`.
pub fn key(k: u64) -> Vec<u8> {
    format!("k{k:010}").into_bytes()
}

/// The key number of `key`, if it is a stress key.
pub fn parse_key(key: &[u8]) -> Option<u64> {
    let digits = key.strip_prefix(b"k")?;
    if digits.len() != 10 || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(digits).ok()?.parse().ok()
}

/// Keys per ownership block: thread `t` of `n` owns the keys of blocks `b` with
/// `b % n == t`, so a range deletion inside one block touches one thread's keys only.
pub const BLOCK: u64 = 16;

/// The thread (of `threads`) that owns key `k`.
pub fn owner(k: u64, threads: u64) -> u64 {
    (k / BLOCK) % threads
}

/// True iff key `k` is a counter key (see the module docs).
pub fn is_counter(k: u64) -> bool {
    mix(k ^ 0xC0DE).is_multiple_of(4)
}

/// The `strata.u64_add` operand that turns counter key `k`'s value `from` (`None`:
/// absent) into the value of id `to`.
pub fn counter_operand(from: Option<u32>, to: u32) -> [u8; 8] {
    u64::from(to)
        .wrapping_sub(u64::from(from.unwrap_or(0)))
        .to_le_bytes()
}

fn mix(mut x: u64) -> u64 {
    // splitmix64 finaliser.
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// The value of key `k` with value id `id`, at most `max_len` bytes (at least
/// [`VALUE_HEADER`]).
pub fn value(k: u64, id: u32, max_len: usize) -> Vec<u8> {
    if is_counter(k) {
        return u64::from(id).to_le_bytes().to_vec();
    }
    let mut h = mix(k ^ (u64::from(id) << 40) ^ 0x5354_5241_5441);
    let room = max_len.saturating_sub(VALUE_HEADER);
    let filler = if room == 0 {
        0
    } else {
        (h % (room as u64 + 1)) as usize
    };
    let mut v = Vec::with_capacity(VALUE_HEADER + filler);
    v.extend_from_slice(&k.to_le_bytes());
    v.extend_from_slice(&id.to_le_bytes());
    let run = b'a' + (h % 26) as u8;
    for i in 0..filler {
        if i % 2 == 0 {
            v.push(run);
        } else {
            h = mix(h);
            v.push(b' ' + (h % 95) as u8);
        }
    }
    v
}

/// The `(key, id)` a value claims to be (from its header), if it has one.
pub fn value_header(v: &[u8]) -> Option<(u64, u32)> {
    let k = u64::from_le_bytes(v.get(..8)?.try_into().ok()?);
    let id = u32::from_le_bytes(v.get(8..12)?.try_into().ok()?);
    Some((k, id))
}

/// What a value read for key `k` is: `Ok(id)` iff it is exactly `value(k, id, max_len)`;
/// otherwise a description of what is wrong with it.
pub fn identify(k: u64, v: &[u8], max_len: usize) -> Result<u32, String> {
    if is_counter(k) {
        return <[u8; 8]>::try_from(v)
            .ok()
            .map(u64::from_le_bytes)
            .and_then(|id| u32::try_from(id).ok())
            .filter(|&id| id != 0 && id & super::expected::PENDING == 0)
            .ok_or_else(|| format!("garbage counter value (len {})", v.len()));
    }
    match value_header(v) {
        Some((vk, id)) if vk == k => {
            if v == value(k, id, max_len).as_slice() {
                Ok(id)
            } else {
                Err(format!(
                    "value of id {id} with damaged bytes (len {})",
                    v.len()
                ))
            }
        }
        Some((vk, id)) => Err(format!("value of another key (key {vk}, id {id})")),
        None => Err(format!("garbage value (len {})", v.len())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_round_trip_in_order() {
        assert_eq!(key(42), b"k0000000042".to_vec());
        assert_eq!(parse_key(&key(42)), Some(42));
        assert_eq!(parse_key(b"k42"), None);
        assert_eq!(parse_key(b"x0000000042"), None);
        assert!(key(9) < key(10));
    }

    #[test]
    fn counter_operands_move_one_id_to_another() {
        use strata::MergeOperator;
        let k = (0..100).find(|&k| is_counter(k)).expect("a counter key");
        let counters = (0..1000).filter(|&k| is_counter(k)).count();
        assert!((150..350).contains(&counters), "{counters} of 1000");
        for (from, to) in [(None, 7), (Some(7), 3), (Some(3), 1 << 30)] {
            let base = from.map(|id| value(k, id, 100));
            let v = strata::merge::U64Add
                .full_merge(b"k", base.as_deref(), &[&counter_operand(from, to)])
                .expect("merges");
            assert_eq!(identify(k, &v, 100), Ok(to));
        }
        assert!(identify(k, &value(k + 1, 5, 100), 100).is_err() || is_counter(k + 1));
        assert!(identify(k, b"short", 100).is_err());
        assert!(identify(k, &0u64.to_le_bytes(), 100).is_err());
    }

    #[test]
    fn values_identify_themselves() {
        let plain: Vec<u64> = [0, 1, 77, 1 << 33, 5, 6, 7, 8]
            .into_iter()
            .filter(|&k| !is_counter(k))
            .collect();
        assert!(plain.len() >= 4);
        for &k in &plain {
            for id in [1, 2, 99, 1 << 30] {
                let v = value(k, id, 100);
                assert!(v.len() >= VALUE_HEADER && v.len() <= 100);
                assert_eq!(identify(k, &v, 100), Ok(id));
                assert!(identify(k + 1, &v, 100).is_err());
            }
        }
        let k = plain[0];
        let mut v = value(k, 6, 200);
        if let Some(last) = v.last_mut() {
            *last ^= 1;
        }
        if v.len() > VALUE_HEADER {
            assert!(identify(k, &v, 200).is_err());
        }
        assert!(identify(k, b"short", 100).is_err());
        assert_eq!(value(k, 4, 0).len(), VALUE_HEADER);
    }
}
