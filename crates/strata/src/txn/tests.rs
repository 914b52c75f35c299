//! The indexed batch and its iterator against a `BTreeMap` model: a database (part of
//! it flushed to a table, some writes after the snapshot) with a random batch laid
//! over it, read through random seeks and steps in both directions, with bounds.

use super::*;
use crate::env::FaultFs;
use crate::{Options, WriteBatch};
use proptest::prelude::*;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

fn key(i: u8) -> Vec<u8> {
    format!("k{i:02}").into_bytes()
}

/// A seek target: a key of the key space, or one between two of them.
fn target(i: u8, between: bool) -> Vec<u8> {
    let mut t = key(i);
    if between {
        t.push(b'm');
    }
    t
}

#[derive(Clone, Debug)]
enum Move {
    First,
    Last,
    Seek(Vec<u8>),
    SeekForPrev(Vec<u8>),
    Next,
    Prev,
}

fn updates(max: usize) -> impl Strategy<Value = Vec<(u8, Option<u8>)>> {
    prop::collection::vec((0..20u8, prop::option::weighted(0.7, any::<u8>())), 0..max)
}

fn moves() -> impl Strategy<Value = Vec<Move>> {
    let t = || (0..22u8, any::<bool>()).prop_map(|(i, b)| target(i, b));
    let m = prop_oneof![
        1 => Just(Move::First),
        1 => Just(Move::Last),
        2 => t().prop_map(Move::Seek),
        2 => t().prop_map(Move::SeekForPrev),
        4 => Just(Move::Next),
        4 => Just(Move::Prev),
    ];
    prop::collection::vec(m, 1..40)
}

fn apply(model: &mut Model, batch: &mut WriteBatch, updates: &[(u8, Option<u8>)]) {
    for (k, v) in updates {
        match v {
            Some(v) => {
                batch.put(&key(*k), &[*v]);
                model.insert(key(*k), vec![*v]);
            }
            None => {
                batch.delete(&key(*k));
                model.remove(&key(*k));
            }
        }
    }
}

/// Where the model's cursor lands after `m`, from `cur`, over `view` (already bounded).
fn model_move(view: &Model, cur: Option<Vec<u8>>, m: &Move) -> Option<Vec<u8>> {
    use std::ops::Bound::{Excluded, Included, Unbounded};
    let first_from = |b| view.range::<Vec<u8>, _>((b, Unbounded)).next();
    let last_to = |b| view.range::<Vec<u8>, _>((Unbounded, b)).next_back();
    let found = match m {
        Move::First => view.iter().next(),
        Move::Last => view.iter().next_back(),
        Move::Seek(t) => first_from(Included(t)),
        Move::SeekForPrev(t) => last_to(Included(t)),
        Move::Next => match &cur {
            Some(c) => first_from(Excluded(c)),
            None => return None,
        },
        Move::Prev => match &cur {
            Some(c) => last_to(Excluded(c)),
            None => return None,
        },
    };
    found.map(|(k, _)| k.clone())
}

fn check(
    before_flush: &[(u8, Option<u8>)],
    before_snapshot: &[(u8, Option<u8>)],
    after_snapshot: &[(u8, Option<u8>)],
    delta: &[(u8, Option<u8>)],
    lower: Option<u8>,
    upper: Option<u8>,
    moves: &[Move],
) -> Result<(), TestCaseError> {
    let fs = FaultFs::new();
    let db = Db::builder()
        .file_system(Arc::new(fs))
        .open(Path::new("/db"), Options::default())
        .unwrap();
    let wo = WriteOptions::default();
    let mut model = Model::new();
    for (i, part) in [before_flush, before_snapshot].into_iter().enumerate() {
        let mut b = WriteBatch::new();
        apply(&mut model, &mut b, part);
        db.write(&wo, b).unwrap();
        if i == 0 {
            db.flush().unwrap();
        }
    }
    let snapshot = db.snapshot();
    let mut later = WriteBatch::new();
    apply(&mut Model::new(), &mut later, after_snapshot);
    db.write(&wo, later).unwrap();

    let mut batch = WriteBatchWithIndex::new();
    for (k, v) in delta {
        match v {
            Some(v) => {
                batch.put(&key(*k), &[*v]).unwrap();
                model.insert(key(*k), vec![*v]);
            }
            None => {
                batch.delete(&key(*k)).unwrap();
                model.remove(&key(*k));
            }
        }
    }
    let (lower, upper) = (lower.map(key), upper.map(key));
    model.retain(|k, _| {
        lower.as_ref().is_none_or(|l| k >= l) && upper.as_ref().is_none_or(|u| k < u)
    });
    let ro = ReadOptions::default()
        .with_snapshot(snapshot)
        .with_lower_bound(lower)
        .with_upper_bound(upper);
    let mut it = batch.iter(&db, &ro).unwrap();
    let mut cur: Option<Vec<u8>> = None;
    for (step, m) in moves.iter().enumerate() {
        cur = model_move(&model, cur, m);
        match m {
            Move::First => it.seek_to_first(),
            Move::Last => it.seek_to_last(),
            Move::Seek(t) => it.seek(t),
            Move::SeekForPrev(t) => it.seek_for_prev(t),
            Move::Next => it.next(),
            Move::Prev => it.prev(),
        }
        let got = it.valid().then(|| (it.key().to_vec(), it.value().to_vec()));
        let want = cur.as_ref().map(|k| (k.clone(), model[k].clone()));
        prop_assert_eq!(got, want, "step {} {:?}", step, m);
        prop_assert!(it.status().is_ok());
    }
    // Point reads agree with the model too (inside the bounds).
    for k in model.keys() {
        let got = batch.get_from_batch_and_db(&db, &ro, k).unwrap();
        prop_assert_eq!(got.as_ref(), model.get(k));
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(if cfg!(miri) { 2 } else { 96 }))]

    #[test]
    fn base_delta_iterator_matches_the_model(
        before_flush in updates(30),
        before_snapshot in updates(20),
        after_snapshot in updates(10),
        delta in updates(25),
        lower in prop::option::of(0..21u8),
        upper in prop::option::of(0..21u8),
        moves in moves(),
    ) {
        check(&before_flush, &before_snapshot, &after_snapshot, &delta, lower, upper, &moves)?;
    }
}

/// A fixed case that crosses every kind of tie: a delete hiding a base key, a put over
/// a base key, a delete of a key the base lacks, direction changes on delta-only and
/// base-only keys.
#[test]
fn deletes_hide_base_keys_and_puts_shadow_them_in_both_directions() {
    let base = [(1, Some(1)), (2, Some(2)), (3, Some(3)), (5, Some(5))];
    let delta = [
        (2, None),
        (3, Some(33)),
        (4, Some(44)),
        (6, None),
        (7, Some(77)),
    ];
    let moves = [
        Move::First,
        Move::Next,
        Move::Next,
        Move::Prev,
        Move::Next,
        Move::Next,
        Move::Next,
        Move::Next,
        Move::Last,
        Move::Prev,
        Move::Prev,
        Move::Next,
        Move::Prev,
        Move::Prev,
        Move::Prev,
        Move::Prev,
        Move::SeekForPrev(key(2)),
        Move::Seek(key(2)),
        Move::SeekForPrev(key(6)),
        Move::Next,
    ];
    check(&base, &[], &[], &delta, None, None, &moves).unwrap();
    check(&base, &[], &[], &delta, Some(2), Some(5), &moves).unwrap();
}
