//! Version set: file references decide what becomes obsolete; a failed MANIFEST write
//! stops every later edit; roll-over queues the old MANIFEST.

use super::*;
use crate::env::{FaultFs, FaultKinds, FaultRule, PosixFs};
use crate::version::FileMetaData;

fn empty(fs: Arc<dyn FileSystem>, dir: &Path, max_manifest: u64) -> VersionSet {
    let vs = VersionSet::create(fs, Dirs::new(dir, []), max_manifest, 4, Vec::new())
        .expect("version set");
    vs.start_manifest(&[], &[], 1).expect("first manifest");
    vs
}

/// A new table `(ref, metadata)` covering `[lo, hi]`, created through the set.
fn table(vs: &VersionSet, lo: &str, hi: &str) -> (Arc<FileRef>, FileMetaData) {
    let (r, _file) = vs.new_table(0).expect("new table");
    let meta = FileMetaData::for_test(r.number(), lo, hi, 1, 1, 100);
    (r, meta)
}

fn add(
    vs: &VersionSet,
    level: usize,
    files: Vec<(Arc<FileRef>, FileMetaData)>,
) -> Result<Arc<Version>> {
    let mut edit = VersionEdit::default();
    let mut refs = Vec::new();
    for (r, m) in files {
        edit.new_files.push((level, m));
        refs.push(r);
    }
    vs.log_and_apply(&vs.default_family(), edit, &refs, |_| {})
}

fn tables(q: &ObsoleteFiles) -> Vec<u64> {
    let mut n: Vec<u64> = q
        .take()
        .into_iter()
        .filter_map(|o| match o {
            Obsolete::Table { number, .. } => Some(number),
            _ => None,
        })
        .collect();
    n.sort_unstable();
    n
}

#[test]
fn a_file_is_obsolete_only_when_no_version_names_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let vs = empty(Arc::new(PosixFs), dir.path(), u64::MAX);
    let (a, b) = (table(&vs, "a", "b"), table(&vs, "c", "d"));
    let (na, nb) = (a.0.number(), b.0.number());
    let v1 = add(&vs, 1, vec![a, b]).expect("add");
    assert_eq!(v1.num_refs(), 2);
    // Trivial move of `a` to L2: same file, no new reference needed.
    let mut edit = VersionEdit::default();
    edit.deleted_files.push((1, na));
    edit.new_files
        .push((2, FileMetaData::clone(&v1.files(1)[0])));
    let v2 = vs
        .log_and_apply(&vs.default_family(), edit, &[], |_| {})
        .expect("move");
    // Delete `b`: a reader still holds v1 (and v2 names b too).
    let mut edit = VersionEdit::default();
    edit.deleted_files.push((1, nb));
    let v3 = vs
        .log_and_apply(&vs.default_family(), edit, &[], |_| {})
        .expect("delete");
    assert!(tables(vs.obsolete()).is_empty(), "v1 and v2 still name b");
    drop(v2);
    assert!(tables(vs.obsolete()).is_empty(), "v1 still names b");
    drop(v1);
    assert_eq!(tables(vs.obsolete()), vec![nb]);
    assert_eq!(v3.num_refs(), 1);
    assert_eq!(v3.files(2)[0].number, na);
}

#[test]
fn an_abandoned_output_is_obsolete() {
    let dir = tempfile::tempdir().expect("tempdir");
    let vs = empty(Arc::new(PosixFs), dir.path(), u64::MAX);
    let (r, _meta) = table(&vs, "a", "b");
    let n = r.number();
    drop(r);
    assert_eq!(tables(vs.obsolete()), vec![n]);
}

#[test]
fn an_edit_naming_an_unreferenced_file_is_an_internal_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let vs = empty(Arc::new(PosixFs), dir.path(), u64::MAX);
    let mut edit = VersionEdit::default();
    edit.new_files
        .push((1, FileMetaData::for_test(99, "a", "b", 1, 1, 1)));
    let err = vs
        .log_and_apply(&vs.default_family(), edit, &[], |_| {})
        .expect_err("no ref");
    assert_eq!(err.kind(), crate::ErrorKind::Internal, "{err}");
    assert_eq!(vs.current().num_files(), 0);
}

#[test]
fn after_a_failed_manifest_write_no_edit_is_accepted() {
    let fault = Arc::new(FaultFs::new());
    fault.create_dir_all(Path::new("/db")).expect("mkdir");
    let vs = empty(fault.clone(), Path::new("/db"), u64::MAX);
    let a = table(&vs, "a", "b");
    fault.inject(FaultRule::once(FaultKinds::SYNC, 0).on_path("MANIFEST"));
    let mut installed = false;
    assert!(add(&vs, 1, vec![a]).is_err());
    fault.clear_faults();
    let b = table(&vs, "c", "d");
    let err = vs
        .log_and_apply(
            &vs.default_family(),
            {
                let mut e = VersionEdit::default();
                e.new_files.push((1, b.1.clone()));
                e
            },
            &[b.0],
            |_| installed = true,
        )
        .expect_err("writer failed earlier");
    // The refusal carries the failed write's error, so a caller can trace it to the disk.
    assert_eq!(err.kind(), crate::ErrorKind::Poisoned, "{err}");
    let mut chain = Vec::new();
    let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(&err);
    while let Some(e) = cur {
        chain.push(e.to_string());
        cur = e.source();
    }
    assert!(
        chain.iter().any(|c| c.contains("injected fault")),
        "{chain:?}"
    );
    assert!(!installed);
    assert_eq!(vs.current().num_files(), 0, "nothing installed");
}

#[test]
fn roll_over_names_a_new_manifest_and_queues_the_old() {
    let dir = tempfile::tempdir().expect("tempdir");
    let vs = empty(Arc::new(PosixFs), dir.path(), 1);
    let first = vs.manifest_number();
    let a = table(&vs, "a", "b");
    add(&vs, 1, vec![a]).expect("add");
    assert!(vs.manifest_number() > first);
    assert!(vs.obsolete().take().contains(&Obsolete::Manifest(first)));
    let r = crate::version::manifest::recover(&PosixFs, dir.path(), &|_| 4)
        .expect("recover")
        .expect("exists");
    assert_eq!(r.manifest_number, vs.manifest_number());
    assert_eq!(r.families[0].version.num_files(), 1);
    assert!(r.next_file_number >= vs.next_file_number());
}

/// Invariant 5: an edit records the last sequence as of its MANIFEST write, not as of
/// when its job started; a roll-over snapshot carries the newest value too.
#[test]
fn an_edit_records_the_last_sequence_when_it_is_written() {
    let dir = tempfile::tempdir().expect("tempdir");
    let vs = empty(Arc::new(PosixFs), dir.path(), u64::MAX);
    let recovered_sequence = |dir: &Path| {
        crate::version::manifest::recover(&PosixFs, dir, &|_| 4)
            .expect("recover")
            .expect("exists")
            .last_sequence
    };
    vs.set_last_sequence(7);
    add(&vs, 1, vec![table(&vs, "a", "b")]).expect("append");
    assert_eq!(recovered_sequence(dir.path()), 7);

    let dir2 = tempfile::tempdir().expect("tempdir");
    let rolling = empty(Arc::new(PosixFs), dir2.path(), 1);
    rolling.set_last_sequence(40);
    add(&rolling, 1, vec![table(&rolling, "a", "b")]).expect("roll over");
    assert_eq!(recovered_sequence(dir2.path()), 40);
}

/// A parent stays referenced while any version names a virtual table over it, survives
/// recovery (through appended edits and through roll-over snapshots), and becomes
/// obsolete when the last table naming it goes.
#[test]
fn virtual_tables_hold_their_parents_through_versions_and_recovery() {
    for max_manifest in [u64::MAX, 1] {
        let dir = tempfile::tempdir().expect("tempdir");
        let vs = empty(Arc::new(PosixFs), dir.path(), max_manifest);
        let (a, b) = (table(&vs, "a", "c"), table(&vs, "k", "p"));
        let (na, nb) = (a.0.number(), b.0.number());
        let (pa, pb) = (a.1.clone(), b.1.clone());
        let v1 = add(&vs, 1, vec![a, b]).expect("add");
        let (t1, t2) = (vs.new_file_number(), vs.new_file_number());
        let edit = VersionEdit {
            deleted_files: vec![(1, na), (1, nb)],
            new_files: vec![
                (
                    2,
                    FileMetaData::virtual_for_test(
                        t1,
                        "a",
                        "m",
                        &[(na, "a", "c", 100), (nb, "k", "m", 60)],
                    ),
                ),
                (
                    2,
                    FileMetaData::virtual_for_test(t2, "n", "p", &[(nb, "n", "p", 40)]),
                ),
            ],
            new_parents: vec![pa, pb],
            ..Default::default()
        };
        let v2 = vs
            .log_and_apply(&vs.default_family(), edit, &[], |_| {})
            .expect("virtualize");
        drop(v1);
        assert!(
            tables(vs.obsolete()).is_empty(),
            "the virtual tables hold both parents"
        );
        assert_eq!(v2.parent_refs(2, 0), [na, nb]);
        assert_eq!(v2.parent_refs(2, 1), [nb]);

        // Recovery: the same levels and parents, one reference per parent.
        let (again, _) = VersionSet::recover(
            Arc::new(PosixFs),
            Dirs::new(dir.path(), []),
            u64::MAX,
            &|_| 4,
        )
        .expect("recover")
        .expect("exists");
        let r = again.current();
        r.check_invariants().expect("invariants");
        assert_eq!(r.parents().map(|p| p.number).collect::<Vec<_>>(), [na, nb]);
        assert_eq!(r.parent_refs(2, 0), [na, nb]);
        assert!(
            again.next_file_number() > t2,
            "virtual table numbers are used"
        );
        drop((r, again));

        // Table t2 goes: parent nb stays for t1.
        let edit = VersionEdit {
            deleted_files: vec![(2, t2)],
            ..Default::default()
        };
        let v3 = vs
            .log_and_apply(&vs.default_family(), edit, &[], |_| {})
            .expect("drop t2");
        drop(v2);
        assert!(
            tables(vs.obsolete()).is_empty(),
            "t1 still names both parents"
        );
        // Table t1 goes: both parents are obsolete once no version names t1.
        let edit = VersionEdit {
            deleted_files: vec![(2, t1)],
            ..Default::default()
        };
        let v4 = vs
            .log_and_apply(&vs.default_family(), edit, &[], |_| {})
            .expect("drop t1");
        assert!(tables(vs.obsolete()).is_empty(), "v3 still names t1");
        drop(v3);
        assert_eq!(tables(vs.obsolete()), {
            let mut n = vec![na, nb];
            n.sort_unstable();
            n
        });
        assert_eq!(v4.num_files(), 0);
    }
}
