//! What a compaction from the last fast level into the first slow one may write back
//! to the last fast level, shared by every mode that retains (HotRAP's hot keys,
//! time-aware tiering's recent ones): the fast inputs' key range, the fast stream
//! bounded to it, and the room it may fill. Which keys go back is the router's rule
//! (`router.rs`).

use super::router::{Keep, RetentionRouter, FAST, SLOW};
use crate::compaction::executor::key_after;
use crate::compaction::picker::Busy;
use crate::compaction::plan::Routing;
use crate::compaction::plan::{Action, Input, KeyRange, OutputStream, Partitioning, Plan};
use crate::key::{self, ValueKind, MAX_SEQUENCE};
use crate::options::Options;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

/// What a plan out of the last fast level may write back there.
pub(crate) struct Retention {
    /// The smallest and largest user key of the fast inputs.
    pub lo: Vec<u8>,
    pub hi: Vec<u8>,
    /// The largest sequence number among the fast inputs.
    pub newest: u64,
    /// The fast stream's bounds.
    pub range: KeyRange,
    /// The bytes it may write (router.rs, Room), and the least a key is charged.
    pub room: u64,
    pub min_charge: u64,
}

impl Retention {
    /// The retention of `plan`, a compaction out of `last_fast_level`: `None` if
    /// `plan` is not a rewrite from that level into the next with the picker's one
    /// unbounded stream (or a stream [`Retention::add_to`] added), or splits records
    /// among its streams.
    pub fn of(plan: &Plan, last_fast_level: usize) -> Option<Retention> {
        let level = last_fast_level;
        let fast_inputs = match plan.inputs.first() {
            Some(Input::Files { level: l, files }) if *l == level => files,
            _ => return None,
        };
        let slow = plan.outputs.first()?;
        // A plan splitting records among streams (column groups) is not re-routed:
        // retention routes keys whole.
        if plan.action != Action::Rewrite
            || matches!(plan.routing, Routing::Records(_))
            || plan.range.is_some()
            || slow.level != level + 1
            || slow.bounds.is_some()
        {
            return None;
        }
        let lo = fast_inputs.iter().map(|f| f.smallest_user_key()).min()?;
        let hi = fast_inputs.iter().map(|f| f.largest_user_key()).max()?;
        let newest = fast_inputs.iter().map(|f| f.largest_seqno).max()?;
        // What retention may write back: half the fast inputs' bytes, each retained
        // key charged at least the inputs' bytes per entry, so that each compaction
        // shrinks the level by about half its fast inputs (router.rs, Room).
        let input_bytes: u64 = fast_inputs.iter().map(|f| f.size).sum();
        let entries: u64 = fast_inputs.iter().map(|f| f.num_entries).sum();
        let room = input_bytes / 2;
        let min_charge = input_bytes / entries.max(1);
        // The range ends after the largest key, unless a file's largest key is a
        // range-tombstone end sentinel: that end is exclusive, and the next file of the
        // level may start at that very key (retaining it would overlap that file).
        let end = fast_inputs
            .iter()
            .map(|f| match key::parse_internal_key(&f.largest) {
                Some(k) if k.kind == ValueKind::RangeDelete && k.seq == MAX_SEQUENCE => {
                    k.user_key.to_vec()
                }
                _ => key_after(f.largest_user_key()),
            })
            .max()?;
        let range = KeyRange {
            start: Some(lo.to_vec()),
            end: Some(end),
        };
        Some(Retention {
            lo: lo.to_vec(),
            hi: hi.to_vec(),
            newest,
            range,
            room,
            min_charge,
        })
    }

    /// The router of a retaining plan: `keep` says which keys go back, `retained`
    /// counts the bytes of kept keys that were not promoted.
    pub fn router(&self, keep: Keep, retained: Arc<AtomicU64>) -> Arc<RetentionRouter> {
        Arc::new(RetentionRouter::new(
            keep,
            self.range.clone(),
            (self.room, self.min_charge),
            retained,
        ))
    }

    /// Makes `plan` retaining: a second stream into `last_fast_level` on `fast_path`,
    /// bounded to the fast inputs' range, and `router`; unless that stream would
    /// conflict with a running job (then `plan` is left as it was and false returned).
    pub fn add_to(
        &self,
        plan: &mut Plan,
        (opts, last_fast_level, fast_path): (&Options, usize, u32),
        router: Arc<RetentionRouter>,
        busy: &Busy,
    ) -> bool {
        let fast = OutputStream {
            bounds: Some(self.range.clone()),
            ..OutputStream::for_level(
                opts,
                last_fast_level,
                fast_path,
                Partitioning::Fixed {
                    target: opts.target_file_size_base,
                },
            )
        };
        let mut adjusted = plan.clone();
        adjusted.outputs.push(fast);
        debug_assert_eq!((SLOW, FAST), (0, adjusted.outputs.len() - 1));
        adjusted.routing = Routing::Keys(router);
        if busy.conflicts(&adjusted) {
            return false;
        }
        *plan = adjusted;
        true
    }
}
