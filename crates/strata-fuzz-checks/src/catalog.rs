//! The `catalog` target: a table's catalog records and its parts (`strata::table`).
//!
//! The first byte picks the decoder: 0 the schema record, 1 the layout record, 2 a
//! part of a table of [`SCHEMA`]; the rest is its input. Whatever decodes must encode
//! to bytes that decode again and encode identically (compared as bytes, so a decoded
//! `NaN` still counts as a round trip).

use strata::table::codecs;
use strata::table::Schema;

/// The schema parts are decoded against: every column type, nullable and not.
pub const SCHEMA: &str = "id:u64,a:i32,b:i64?,c:f64,d:fixed3,e:bytes?";

/// Checks `data` (see the module docs).
pub fn check_catalog(data: &[u8]) {
    let Some((&which, rest)) = data.split_first() else {
        return;
    };
    match which {
        0 => {
            if let Ok((_, again)) = codecs::schema(rest) {
                let (_, twice) = codecs::schema(&again).expect("an encoded schema decodes");
                assert_eq!(twice, again, "schema round trip");
            }
        }
        1 => {
            if let Ok(again) = codecs::layout(rest) {
                let twice = codecs::layout(&again).expect("an encoded layout decodes");
                assert_eq!(twice, again, "layout round trip");
            }
        }
        2 => {
            let schema = Schema::parse(SCHEMA).expect("the fixed schema parses");
            if let Ok(again) = codecs::part(&schema, rest) {
                let twice = codecs::part(&schema, &again).expect("an encoded part decodes");
                assert_eq!(twice, again, "part round trip");
            }
        }
        _ => {}
    }
}
