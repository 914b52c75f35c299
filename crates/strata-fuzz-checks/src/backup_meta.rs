//! The `backup_meta` target: a backup's metadata file through `BackupMeta::decode`.

use crate::fixup;
use std::path::{Component, Path};
use strata::backup::meta::BackupMeta;

/// Decodes `data` as backup metadata, as given and with its trailing checksum
/// recomputed (the metadata's trailer is sealed like a block's, so
/// [`fixup::sealed_block`] reseals it). Whatever decodes must name only plain file
/// names (a restore joins them to its target) and round-trip:
/// `decode(encode(m)) == m`, with a deterministic encoding.
pub fn check_backup_meta(data: &[u8]) {
    check_once(data);
    if let Some(sealed) = fixup::sealed_block(data) {
        check_once(&sealed);
    }
}

fn check_once(data: &[u8]) {
    let path = Path::new("meta/1");
    let Ok(meta) = BackupMeta::decode(data, path) else {
        return;
    };
    for f in &meta.files {
        let parts: Vec<_> = Path::new(&f.name).components().collect();
        assert!(
            matches!(parts.as_slice(), [Component::Normal(_)]),
            "a decoded file name is not one plain name: {:?}",
            f.name
        );
    }
    let bytes = meta.encode();
    let again = BackupMeta::decode(&bytes, path).expect("encoded metadata decodes");
    assert_eq!(again, meta, "backup metadata round trip");
    assert_eq!(
        again.encode(),
        bytes,
        "backup metadata encoding is deterministic"
    );
}
