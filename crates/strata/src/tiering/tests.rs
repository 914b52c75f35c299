//! Tier layouts and placement on hand-made options: which levels are fast, how far the
//! last fast level is stretched, and what validation refuses.

use super::*;
use crate::compaction::picker::level_targets;
use crate::options::DbPath;

/// L1 = 100, fanout 10, six levels; a fast path with target `fast` and a slow path.
fn opts(fast: u64, tiering: Option<Tiering>) -> Options {
    Options::default()
        .with_max_bytes_for_level_base(100)
        .with_max_bytes_for_level_multiplier(10.0)
        .with_num_levels(6)
        .with_db_paths(vec![DbPath::new("/fast", fast), DbPath::new("/slow", 0)])
        .with_tiering(tiering)
}

fn placement(o: &Options) -> Vec<u32> {
    let v = Version::new(o.num_levels);
    (0..o.num_levels)
        .map(|l| Tiered.path_for_level(&v, o, l))
        .collect()
}

/// Series: L0 (as L1) 100, L1 100, L2 1000, L3 10^4, L4 10^5, L5 10^6.
#[test]
fn the_last_fast_level_is_stretched_to_fill_the_budget() {
    // 1000 bytes: L0 + L1 = 200 fit, L2 does not; L1 grows to 900 (× 9).
    let o = opts(1000, Some(Tiering::fat()));
    let layout = TierLayout::of(&o).expect("layout");
    assert_eq!(layout.last_fast_level, 1);
    assert_eq!(layout.stretch, 9.0);
    assert_eq!(
        level_targets(&o),
        [0, 900, 9000, 90_000, 900_000, 9_000_000]
    );
    assert_eq!(placement(&o), [0, 0, 1, 1, 1, 1]);

    // An explicit budget overrides the path's target: 5000 holds L0..L2 (1200), and L2
    // grows to 5000 − 200 = 4800.
    let o = opts(1000, Some(Tiering::fat().with_fd_size(5000)));
    let layout = TierLayout::of(&o).expect("layout");
    assert_eq!((layout.last_fast_level, layout.stretch), (2, 4.8));
    assert_eq!(level_targets(&o)[..4], [0, 100, 4800, 48_000]);
    assert_eq!(placement(&o), [0, 0, 0, 1, 1, 1]);

    // A budget that the series fills exactly is not stretched.
    let o = opts(1200, Some(Tiering::fat()));
    let layout = TierLayout::of(&o).expect("layout");
    assert_eq!((layout.last_fast_level, layout.stretch), (2, 1.0));

    // The last level is never fast, however large the budget.
    let o = opts(u64::MAX, Some(Tiering::fat()));
    assert_eq!(TierLayout::of(&o).expect("layout").last_fast_level, 4);
    assert_eq!(placement(&o), [0, 0, 0, 0, 0, 1]);
}

/// The fast levels' targets (L0 counted as L1's unstretched target) add up to the
/// budget, for budgets across several layouts.
#[test]
fn fast_targets_add_up_to_the_budget() {
    for budget in [200, 201, 999, 1000, 1200, 1201, 13_000, 77_777, 5_000_000] {
        let o = opts(budget, Some(Tiering::fat()));
        let layout = TierLayout::of(&o).expect("layout");
        let targets = level_targets(&o);
        let fast: u64 = 100 + targets[1..=layout.last_fast_level].iter().sum::<u64>();
        assert!(
            budget - fast <= layout.last_fast_level as u64,
            "budget {budget}: fast levels hold {fast} ({targets:?})"
        );
        assert!(layout.stretch >= 1.0);
    }
}

#[test]
fn without_tiering_placement_is_by_level() {
    let o = opts(200, None);
    assert_eq!(TierLayout::of(&o), None);
    let v = Version::new(o.num_levels);
    for level in 0..o.num_levels {
        assert_eq!(
            Tiered.path_for_level(&v, &o, level),
            ByLevel.path_for_level(&v, &o, level)
        );
    }
    assert_eq!(
        level_targets(&o),
        [0, 100, 1000, 10_000, 100_000, 1_000_000]
    );
}

#[test]
fn validation_names_the_bad_field() {
    // `Options::validate` wants L1 >= 1 KiB: the series 1024, 10240, ...
    let opts = |fast: u64, t: Tiering| opts(fast, Some(t)).with_max_bytes_for_level_base(1024);
    let refused = |o: Options, field: &str| {
        let err = o.validate().expect_err("invalid").to_string();
        assert!(err.contains(field), "{field}: {err}");
    };
    refused(
        opts(10_000, Tiering::fat()).with_db_paths(Vec::new()),
        "tiering.fast_path",
    );
    refused(
        opts(10_000, Tiering::fat().with_slow_path(2)),
        "tiering.slow_path",
    );
    refused(
        opts(10_000, Tiering::fat().with_slow_path(0)),
        "must differ",
    );
    refused(opts(2047, Tiering::fat()), "tiering.fd_size=`2047`");
    refused(
        opts(10_000, Tiering::fat().with_fd_size(1500)),
        "tiering.fd_size=`1500` must hold L0 and L1 (>= 2 × max_bytes_for_level_base = 2048)",
    );
    opts(2048, Tiering::fat())
        .validate()
        .expect("L0 and L1 fit");
}
