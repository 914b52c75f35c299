//! Protects: `strata table` on the real engine: create (with a layout refined to
//! containment, and refused with --strict_layout), CSV load, get with a column range
//! and list, update of some columns (and of a missing row, which stays absent),
//! delete, scans both ways with bounds, compact, a reopen's answers, show's runs, and
//! one-line errors for bad input; `advise` on the synthetic workload.

mod common;

use common::{db_flag, fails_with as fails, ok};

#[test]
fn tables_are_created_loaded_read_updated_and_shown() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let db = db_flag(&tmp.path().join("db"));
    let t = ["table", db.as_str()];
    let run = |args: &[&str], input: Option<&str>| ok(&[&t[..], args].concat(), input);
    // 6 columns; level 2's groups of 3 break containment under level 1's 2,4.
    let schema = "--schema=id:u64,a1:i32,a2:i32,a3:i64?,a4:f64,a5:bytes?,a6:fixed2";
    let err = fails(
        &[
            &t[..],
            &[
                "create",
                "--name=t",
                schema,
                "--layout=row;2,4;3,3",
                "--strict_layout",
            ],
        ]
        .concat(),
        None,
    );
    assert!(err.contains("lies in no one group of level 1"), "{err}");
    let printed = run(
        &["create", "--name=t", schema, "--layout=row;2,4;3,3"],
        None,
    );
    assert_eq!(printed, "layout refined to row;2,4;2,1,3\n");
    // 40 rows; key k has a1 = k, a2 = -k, a3 = NULL for odd k.
    let mut csv = String::new();
    for k in 0..40 {
        let a3 = if k % 2 == 1 {
            "NULL".to_owned()
        } else {
            (k * 1000).to_string()
        };
        csv += &format!("{k},{k},-{k},{a3},{}.5,note{k},xy\n", k);
    }
    assert_eq!(run(&["load", "--name=t"], Some(&csv)), "loaded 40 rows\n");
    assert_eq!(
        run(&["get", "--name=t", "--key=7", "--columns=a2..a5"], None),
        "-7, NULL, 7.5, note7\n"
    );
    assert_eq!(
        run(&["get", "--name=t", "--key=8", "--columns=a6,a1"], None),
        "xy, 8\n"
    );
    run(
        &["update", "--name=t", "--key=8", "--set=a1=80,a5=NULL"],
        None,
    );
    run(&["update", "--name=t", "--key=99", "--set=a1=1"], None);
    run(&["delete", "--name=t", "--key=9"], None);
    run(&["compact", "--name=t"], None);
    assert_eq!(
        run(&["get", "--name=t", "--key=8", "--columns=a1,a5,a2"], None),
        "80, NULL, -8\n"
    );
    assert_eq!(run(&["get", "--name=t", "--key=99"], None), "(no row)\n");
    assert_eq!(run(&["get", "--name=t", "--key=9"], None), "(no row)\n");
    assert_eq!(
        run(
            &["scan", "--name=t", "--from=7", "--to=10", "--columns=a1"],
            None
        ),
        "7, 7\n8, 80\n10, 10\n"
    );
    assert_eq!(
        run(
            &["scan", "--name=t", "--from=36", "--columns=a2", "--reverse"],
            None
        ),
        "39, -39\n38, -38\n37, -37\n36, -36\n"
    );
    let show = run(&["show", "--name=t"], None);
    assert!(show.contains("layout: row;2,4;2,1,3"), "{show}");
    assert!(show.contains("group"), "{show}");
    // Bad input, one line each, nothing written.
    let e = fails(&[&t[..], &["get", "--name=t", "--key=x"]].concat(), None);
    assert!(e.contains("key"), "{e}");
    let e = fails(
        &[&t[..], &["update", "--name=t", "--key=1", "--set=a1=big"]].concat(),
        None,
    );
    assert!(e.contains("a1"), "{e}");
    let e = fails(
        &[&t[..], &["get", "--name=t", "--key=1", "--columns=zz"]].concat(),
        None,
    );
    assert!(e.contains("zz"), "{e}");
    let e = fails(&[&t[..], &["load", "--name=t"]].concat(), Some("1,2,3\n"));
    assert!(e.contains("line 1"), "{e}");
    let e = fails(&[&t[..], &["get", "--name=nope", "--key=1"]].concat(), None);
    assert!(e.contains("nope"), "{e}");
    assert_eq!(
        run(&["get", "--name=t", "--key=1", "--columns=a1"], None),
        "1\n"
    );
}

/// `advise` needs no database: the synthetic workload's layout keeps L0 rows and
/// every deeper level inside the one above (it parses as a contained layout), the
/// JSON line says how the search went, and a call without a workload is refused.
#[test]
fn advise_prints_a_contained_layout_for_the_synthetic_workload() {
    let out = ok(&["table", "advise", "--columns=30", "--levels=7"], None);
    let layout = out
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("layout: "))
        .unwrap_or_else(|| panic!("{out}"));
    strata::table::Layout::parse(layout, 30).unwrap_or_else(|e| panic!("{layout}: {e}"));
    assert!(out.contains("total"), "{out}");
    let json = ok(
        &["table", "advise", "--columns=12", "--levels=4", "--json"],
        None,
    );
    let v: serde_json::Value = serde_json::from_str(json.trim()).expect("one JSON line");
    assert_eq!(v["columns"], 12);
    assert!(v["exact"].is_boolean() && v["seconds"].as_f64().is_some());
    let err = fails(&["table", "advise"], None);
    assert!(err.contains("--workload=FILE or --columns=N"), "{err}");
}
