//! The family-kinds seam: a family created with records opens, at creation and at
//! every later open (read-write or read-only, with or without options for it), with
//! the merge operator and compaction policy its records call for; records the kinds
//! refuse create nothing; families the kinds do not claim keep the database's.

use super::*;
use crate::compaction::policy::tests::Counting;
use crate::db::{CfHandle, Db, DbBuilder};
use crate::merge::U64Add;
use crate::options::{CfOptions, WriteOptions};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The record key the test kinds read.
const KIND: u32 = 1007;

/// Claims families holding record [`KIND`]: `counter` gives them `U64Add` and the
/// shared [`Counting`] policy; anything else in the record is refused; `levels`
/// changes `num_levels` (which the seam must refuse).
#[derive(Debug)]
struct Kinds {
    policy: Arc<Counting>,
    configured: AtomicUsize,
}

impl Kinds {
    fn new() -> Kinds {
        Kinds {
            policy: Arc::new(Counting {
                automatic: true,
                ..Counting::default()
            }),
            configured: AtomicUsize::new(0),
        }
    }
}

impl FamilyKinds for Kinds {
    fn configure(
        &self,
        name: &str,
        version: &Version,
        opts: &mut Options,
    ) -> Result<Option<Arc<dyn CompactionPolicy>>> {
        let Some(kind) = version.record(KIND) else {
            return Ok(None);
        };
        self.configured.fetch_add(1, Ordering::Relaxed);
        match kind {
            b"counter" => {
                opts.merge_operator = Some(Arc::new(U64Add));
                Ok(Some(Arc::clone(&self.policy) as Arc<dyn CompactionPolicy>))
            }
            b"levels" => {
                opts.num_levels += 1;
                Ok(None)
            }
            other => Err(Error::InvalidArgument(format!(
                "column family `{name}`: unknown kind {other:?}"
            ))),
        }
    }
}

fn opts() -> Options {
    Options::default()
        .with_write_buffer_size(4096)
        .with_level0_file_num_compaction_trigger(2)
}

fn open(dir: &std::path::Path, kinds: &Arc<Kinds>) -> Db {
    DbBuilder::new()
        .family_kinds(Arc::clone(kinds) as Arc<dyn FamilyKinds>)
        .open(dir, opts())
        .unwrap()
}

fn counter(db: &Db, cf: &CfHandle, key: &str) -> Option<u64> {
    let ro = crate::options::ReadOptions::default();
    db.get_cf(&ro, cf, key.as_bytes())
        .unwrap()
        .map(|v| U64Add::decode(&v).unwrap())
}

/// Adds `1..=n` to counters `c0..c9` of `cf`, flushing every 100 adds.
fn add(db: &Db, cf: &CfHandle, n: u64) {
    let wo = WriteOptions::default();
    for i in 1..=n {
        let key = format!("c{}", i % 10);
        db.merge_cf(&wo, cf, key.as_bytes(), &U64Add::operand(i))
            .unwrap();
        if i % 100 == 0 {
            db.flush_cf(cf).unwrap();
        }
    }
}

/// The sum of `i` in `1..=n` with `i % 10 == r`.
fn sum(n: u64, r: u64) -> u64 {
    (1..=n).filter(|i| i % 10 == r).sum()
}

#[test]
fn a_family_created_with_records_opens_as_they_say_every_time() {
    let dir = tempfile::tempdir().unwrap();
    let kinds = Arc::new(Kinds::new());
    let db = open(dir.path(), &kinds);
    let family = db
        .inner
        .create_family(
            "t",
            &CfOptions::default(),
            vec![(KIND, b"counter".to_vec())],
        )
        .unwrap();
    let t = CfHandle { family };
    let plain = db.create_cf("plain", CfOptions::default()).unwrap();
    // The records are in the family's first version, and the family holds the policy
    // and operator they call for; the unclaimed family keeps the database's.
    assert_eq!(
        t.family.versions.current().record(KIND),
        Some(&b"counter"[..])
    );
    let counting = Arc::clone(&kinds.policy) as Arc<dyn CompactionPolicy>;
    assert!(Arc::ptr_eq(&t.family.policy, &counting));
    assert!(Arc::ptr_eq(&plain.family.policy, &db.inner.policy));
    assert!(plain.family.opts.merge_operator.is_none());
    // Background compactions of `t` are planned by its policy.
    add(&db, &t, 1000);
    db.wait_for_compactions().unwrap();
    let picks = kinds.policy.picks.load(Ordering::Relaxed);
    assert!(picks > 0, "t's compactions were planned by another policy");
    assert!(
        !t.family.versions.current().files(1).is_empty(),
        "nothing compacted"
    );
    // Unflushed operands: the reopen replays them from the WAL with the operator.
    add(&db, &t, 50);
    let expect = |r: u64| sum(1000, r) + sum(50, r);
    assert_eq!(counter(&db, &t, "c3"), Some(expect(3)));
    db.close().unwrap();

    // A plain open, with no options for `t`: configured again from the records.
    let db = open(dir.path(), &kinds);
    let t = db.cf("t").unwrap();
    assert!(Arc::ptr_eq(&t.family.policy, &counting));
    for r in 0..10 {
        assert_eq!(counter(&db, &t, &format!("c{r}")), Some(expect(r)), "c{r}");
    }
    // Options given for the family cannot take the operator away.
    db.close().unwrap();
    let db = DbBuilder::new()
        .family_kinds(Arc::clone(&kinds) as Arc<dyn FamilyKinds>)
        .open_cf(dir.path(), opts(), &[("t", CfOptions::default())])
        .unwrap();
    let t = db.cf("t").unwrap();
    assert_eq!(counter(&db, &t, "c9"), Some(expect(9)));
    db.close().unwrap();
    // A read-only open reads through the records too.
    let ro = DbBuilder::new()
        .family_kinds(Arc::clone(&kinds) as Arc<dyn FamilyKinds>)
        .open_read_only(dir.path(), opts())
        .unwrap();
    let t = ro.cf("t").unwrap();
    assert_eq!(counter(&ro, &t, "c0"), Some(expect(0)));
    drop(ro);
    // Without the component, the family's operands cannot be read: it is the
    // records, through the kinds, that make the family readable. (Fresh operands
    // first, written last before the close: background compactions of the opens
    // above may have folded every older operand into a value, which reads without
    // an operator; CI saw that once.)
    let db = open(dir.path(), &kinds);
    let t = db.cf("t").unwrap();
    add(&db, &t, 5);
    db.close().unwrap();
    let db = Db::open(dir.path(), opts()).unwrap();
    let t = db.cf("t").unwrap();
    let ro = crate::options::ReadOptions::default();
    assert!(db.get_cf(&ro, &t, b"c1").is_err());
}

#[test]
fn records_the_kinds_refuse_create_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let kinds = Arc::new(Kinds::new());
    let db = open(dir.path(), &kinds);
    for (kind, what) in [(&b"bogus"[..], "unknown kind"), (b"levels", "num_levels")] {
        let err = db
            .inner
            .create_family("t", &CfOptions::default(), vec![(KIND, kind.to_vec())])
            .err()
            .unwrap();
        assert!(err.to_string().contains(what), "{err}");
        assert!(db.cf("t").is_none());
    }
    // The database is not poisoned, and the name is still free.
    db.create_cf("t", CfOptions::default()).unwrap();
    db.close().unwrap();
    assert_eq!(
        Db::list_cfs(dir.path()).unwrap(),
        vec!["default".to_owned(), "t".to_owned()]
    );
    // Records refused as the user's error (a key twice) create nothing either.
    let db = open(dir.path(), &kinds);
    let twice = vec![(1, b"a".to_vec()), (1, b"b".to_vec())];
    let err = db
        .inner
        .create_family("u", &CfOptions::default(), twice)
        .err();
    assert!(matches!(err, Some(Error::InvalidArgument(_))), "{err:?}");
    assert!(db.cf("u").is_none());
    assert_eq!(kinds.configured.load(Ordering::Relaxed), 2);
}
