//! The `block` target: one block's bytes through every block-level decoder.

use crate::reference::{self, RefBlock};
use std::cmp::Ordering;
use std::sync::Arc;
use strata::key::{compare_internal, make_internal_key, ValueKind};
use strata::sst::compression::{seal_block, unseal_block, MAX_BLOCK_LEN};
use strata::sst::filter::BloomFilter;
use strata::sst::{properties, Block, BlockHandle, BlockIter, Footer};
use strata::Compression;

/// Most seek targets tried per block.
const MAX_SEEKS: usize = 24;

/// Feeds `data` to `Block::decode` (as block contents), `unseal_block` (as a sealed
/// block, as given and with its CRC fixed), `BloomFilter::decode`,
/// `properties::decode`, `Footer::decode` and `BlockHandle::decode`, and checks what
/// decodes.
pub fn check_block(data: &[u8]) {
    if let Ok(block) = Block::decode(data.to_vec()) {
        exercise_block(block);
    }
    check_sealed(data);
    if let Some(fixed) = crate::fixup::sealed_block(data) {
        check_sealed(&fixed);
    }
    check_filter(data);
    check_properties(data);
    check_footer(data);
    check_handle(data);
}

fn check_sealed(data: &[u8]) {
    let Ok(raw) = unseal_block(data.to_vec()) else {
        return;
    };
    assert!(raw.len() <= MAX_BLOCK_LEN, "unsealed block over the bound");
    if raw.len() <= 1 << 16 {
        for c in [Compression::None, Compression::Lz4, Compression::Zstd] {
            let mut sealed = Vec::new();
            seal_block(&raw, c, &mut sealed);
            assert_eq!(
                unseal_block(sealed).as_deref(),
                Ok(raw.as_slice()),
                "{c:?} round trip"
            );
        }
    }
    if let Ok(block) = Block::decode(raw) {
        exercise_block(block);
    }
}

/// Iterates `block` forward, backward and by seeks, comparing with the reference reader.
pub(crate) fn exercise_block(block: Block) {
    let reference = reference::parse_block(block.data())
        .expect("Block::decode accepted a block whose restart array does not fit");
    let bound = block.data().len() + 1;
    let block = Arc::new(block);
    let mut it = BlockIter::new(Arc::clone(&block));

    it.seek_to_first();
    let mut forward = Vec::new();
    while it.valid() {
        assert!(forward.len() < bound, "forward iteration does not progress");
        forward.push((it.key().to_vec(), it.value().to_vec()));
        it.next();
    }
    assert_eq!(forward, reference.pairs(), "forward iteration vs reference");
    assert_eq!(
        it.is_corrupt(),
        reference.corrupt,
        "corruption vs reference"
    );

    // Corruption is sticky: each phase gets a fresh cursor.
    let mut it = BlockIter::new(Arc::clone(&block));
    it.seek_to_last();
    let mut backward = Vec::new();
    while it.valid() {
        assert!(
            backward.len() < bound,
            "backward iteration does not progress"
        );
        backward.push((it.key().to_vec(), it.value().to_vec()));
        it.prev();
    }
    if reference.aligned() {
        assert!(!it.is_corrupt(), "aligned block reported corrupt backwards");
        backward.reverse();
        assert_eq!(backward, forward, "backward iteration vs forward");
    }

    check_seeks(&block, &reference);
}

/// Seek targets: stored keys, their neighbours, and a few fixed extremes.
fn seek_targets(keys: &[&[u8]]) -> Vec<Vec<u8>> {
    let mut out = vec![
        Vec::new(),
        make_internal_key(b"", 0, ValueKind::Delete),
        vec![0xff; 16],
    ];
    let step = keys.len().div_ceil(MAX_SEEKS / 3).max(1);
    for k in keys.iter().step_by(step) {
        out.push(k.to_vec());
        let mut shorter = k.to_vec();
        shorter.pop();
        out.push(shorter);
        let mut longer = k.to_vec();
        longer.push(0);
        out.push(longer);
    }
    out
}

fn check_seeks(block: &Arc<Block>, reference: &RefBlock) {
    let keys: Vec<&[u8]> = reference.entries.iter().map(|e| e.key.as_slice()).collect();
    let exact = reference.aligned() && reference.sorted();
    for target in seek_targets(&keys) {
        let mut it = BlockIter::new(Arc::clone(block));
        it.seek(&target);
        if exact {
            let want = keys
                .iter()
                .find(|k| compare_internal(k, &target) != Ordering::Less);
            assert_eq!(it.valid().then(|| it.key()), want.copied(), "seek");
        } else if it.valid() {
            it.next();
            if it.valid() {
                it.prev();
            }
        }
        let mut it = BlockIter::new(Arc::clone(block));
        it.seek_for_prev(&target);
        if exact {
            let want = keys
                .iter()
                .rev()
                .find(|k| compare_internal(k, &target) != Ordering::Greater);
            assert_eq!(it.valid().then(|| it.key()), want.copied(), "seek_for_prev");
        }
    }
}

fn check_filter(data: &[u8]) {
    let Ok(filter) = BloomFilter::decode(data.to_vec()) else {
        return;
    };
    assert_eq!(filter.size() + 5, data.len(), "filter size");
    for key in [&b""[..], b"a", data.get(..8).unwrap_or_default(), data] {
        let _ = filter.may_contain(key);
    }
}

fn check_properties(data: &[u8]) {
    let Ok((props, compression)) = properties::decode(data) else {
        return;
    };
    let again = properties::encode(&props, compression);
    assert_eq!(
        properties::decode(&again),
        Ok((props, compression)),
        "properties round trip"
    );
}

fn check_footer(data: &[u8]) {
    for file_size in [data.len() as u64, 1 << 20, u64::MAX] {
        if let Ok(footer) = Footer::decode(data, file_size) {
            assert_eq!(
                Footer::decode(&footer.encode(), file_size),
                Ok(footer),
                "footer round trip"
            );
        }
    }
}

fn check_handle(data: &[u8]) {
    if let Some(h) = BlockHandle::decode(data) {
        let mut again = Vec::new();
        h.encode_to(&mut again);
        assert_eq!(BlockHandle::decode(&again), Some(h), "handle round trip");
        let _ = h.end();
    }
}
