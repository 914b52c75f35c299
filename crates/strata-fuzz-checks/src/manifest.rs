//! The `manifest` target: MANIFEST records through `VersionEdit::decode`.

use strata::version::edit::VersionEdit;

/// Decodes `data` as a version edit; if it decodes, checks `decode(encode(e)) == e` and
/// that encoding the re-decoded edit gives the same bytes.
pub fn check_manifest(data: &[u8]) {
    let Ok(edit) = VersionEdit::decode(data) else {
        return;
    };
    let mut bytes = Vec::new();
    edit.encode(&mut bytes);
    let again = VersionEdit::decode(&bytes).expect("an encoded edit decodes");
    assert_eq!(again, edit, "edit round trip");
    let mut bytes2 = Vec::new();
    again.encode(&mut bytes2);
    assert_eq!(bytes2, bytes, "edit encoding is deterministic");
}
