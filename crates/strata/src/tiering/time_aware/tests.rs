//! The sequence clock on hand-made times: what counts as old, how samples thin out.

use super::*;

#[test]
fn a_record_is_old_once_a_sample_above_it_is_a_window_old() {
    let w = Duration::from_secs(64);
    let clock = SeqClock::new(w, 10);
    let t0 = Instant::now() + Duration::from_secs(1000);
    let at = |s: u64| t0 + Duration::from_secs(s);
    // Nothing is a window old yet: only what the database held at open is old.
    assert_eq!(clock.sample(at(0), 100), 10);
    assert_eq!(clock.sample(at(30), 200), 10);
    // At 64 s the sample of 0 s is a window old: records up to 100 are old.
    assert_eq!(clock.sample(at(64), 300), 100);
    // A sample that shows nothing new changes no sample.
    assert_eq!(clock.sample(at(93), 300), 100);
    assert_eq!(clock.sample(at(94), 250), 200);
    assert_eq!(clock.sample(at(200), 400), 300);
}

#[test]
fn samples_closer_than_the_spacing_replace_each_other() {
    // Spacing 1 s.
    let clock = SeqClock::new(Duration::from_secs(64), 0);
    let t0 = Instant::now() + Duration::from_secs(1000);
    for i in 0..1000u64 {
        clock.sample(t0 + Duration::from_millis(10 * i), i + 1);
    }
    // Ten seconds of samples 10 ms apart: about one per second survives.
    assert!((9..=12).contains(&clock.len()), "{}", clock.len());
    // And old samples go once a later one is past the cutoff.
    for i in 0..200u64 {
        clock.sample(t0 + Duration::from_secs(10 + i), 2000 + i);
    }
    assert!(clock.len() <= 66, "{}", clock.len());
    // Conservative: at 209 s the cutoff is 145 s, and the sample at or before it
    // holds sequence number 2000 + 135.
    assert_eq!(clock.sample(t0 + Duration::from_secs(209), 5000), 2135);
}

#[test]
fn before_the_window_has_passed_since_boot_only_the_open_counts() {
    // An instant less than a window after the clock's origin cannot look back a
    // window: only what the database held at open is old.
    let clock = SeqClock::new(Duration::from_secs(u64::MAX / 4), 7);
    assert_eq!(clock.sample(Instant::now(), 100), 7);
}
