//! The sequence clock on hand-made times: what counts as old, how samples thin out.

use super::*;

#[test]
fn a_record_is_old_once_a_sample_above_it_is_a_window_old() {
    let w = Duration::from_secs(64);
    let t0 = Instant::now() + Duration::from_secs(1000);
    let at = |s: u64| t0 + Duration::from_secs(s);
    // Opened at t0 holding sequence numbers up to 10: those count as written then.
    let clock = SeqClock::new(w, (t0, 10));
    // Nothing is a window old yet, not even what the database held at open.
    assert_eq!(clock.sample(at(0), 100), 0);
    assert_eq!(clock.sample(at(30), 200), 0);
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
    let t0 = Instant::now() + Duration::from_secs(1000);
    let clock = SeqClock::new(Duration::from_secs(64), (t0, 0));
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
fn what_the_database_held_at_open_is_recent_for_one_window() {
    let t0 = Instant::now() + Duration::from_secs(1000);
    let clock = SeqClock::new(Duration::from_secs(10), (t0, 7));
    assert_eq!(clock.sample(t0 + Duration::from_secs(9), 7), 0);
    assert_eq!(clock.sample(t0 + Duration::from_secs(10), 7), 7);
    // An instant less than a window after the machine's clock origin cannot look
    // back a window: nothing is old.
    let clock = SeqClock::new(Duration::from_secs(u64::MAX / 4), (Instant::now(), 7));
    assert_eq!(clock.sample(Instant::now(), 100), 0);
}
