//! A table's layout: per level, rows or a partition of the columns into column
//! groups, and the containment rule between levels (the paper's §3.2).
//!
//! Level 0 (with the memtable) always holds rows. The last level given extends to every
//! deeper level, as `Options::levels` does. A group of level i+1 must lie inside one
//! group of level i (a row level is one group of every column): why the engine needs
//! it, and not only the paper's simplification, is in docs/ARCHITECTURE.md §19.
//!
//! # The layout record (catalog record [`super::catalog::LAYOUT`])
//!
//! ```text
//! +---------+----------+--------+--------------------------+--------+---------------------+
//! | version | epoch    | groups | per group: id varint32,  | levels | per level: u8 0 row |
//! | u8 = 1  | varint64 | var32  | n varint32, n columns    | var32  | or 1, n, n group ids |
//! +---------+----------+--------+--------------------------+--------+---------------------+
//! ```
//! Groups are every group any layout of the table ever used, by id (ids start at 1,
//! never reused, never redefined: a file keeps the id it was written with, and its
//! columns stay readable after a layout change). The epoch counts layout changes.
//! Frozen fixture in `tests.rs`.

use crate::coding::{put_varint32, put_varint64, Decoder};
use crate::error::{Error, Result};
use std::collections::BTreeMap;

const FORMAT_VERSION: u8 = 1;

/// One level's layout.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LevelLayout {
    /// Whole rows.
    Row,
    /// Column groups: a partition of the columns (column numbers, each group
    /// ascending, the groups ordered by their first column).
    Groups(Vec<Vec<u32>>),
}

/// Per level, rows or column groups. See the module docs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    levels: Vec<LevelLayout>,
}

impl Layout {
    /// Rows at every level.
    pub fn row() -> Layout {
        Layout {
            levels: vec![LevelLayout::Row],
        }
    }

    /// A layout of `levels` (level 0 first; the last extends downward).
    ///
    /// # Errors
    /// As [`Layout::check`].
    pub fn new(levels: Vec<LevelLayout>, columns: usize) -> Result<Layout> {
        let layout = Layout { levels };
        layout.check(columns)?;
        Ok(layout)
    }

    /// Parses the `strata table create --layout` form for a table of `columns`
    /// columns: levels separated by `;`, each `row` or comma-separated group widths
    /// over the columns in schema order (`15,15` is columns 0–14 and 15–29).
    ///
    /// # Errors
    /// `InvalidArgument` naming the level that does not parse, or as
    /// [`Layout::check`].
    pub fn parse(text: &str, columns: usize) -> Result<Layout> {
        Layout::new(parse_levels(text, columns)?, columns)
    }

    /// [`Layout::parse`], then [`Layout::refined`]: the coarsest layout with
    /// containment inside the one `text` asks for.
    ///
    /// # Errors
    /// As [`Layout::parse`], except containment.
    pub fn parse_refined(text: &str, columns: usize) -> Result<Layout> {
        Layout::refined(parse_levels(text, columns)?, columns)
    }

    /// The coarsest layout with containment inside `levels`: from level 1 down, each
    /// group is cut along the groups of the (refined) level above it, and a row level
    /// under column groups takes the groups above it. A layout that already has
    /// containment is returned as it is.
    ///
    /// # Errors
    /// As [`Layout::check`], except containment.
    pub fn refined(levels: Vec<LevelLayout>, columns: usize) -> Result<Layout> {
        let all: Vec<u32> = (0..u32::try_from(columns).unwrap_or(u32::MAX)).collect();
        let mut out: Vec<LevelLayout> = Vec::with_capacity(levels.len());
        for level in levels {
            let above = match out.last() {
                None | Some(LevelLayout::Row) => {
                    out.push(level);
                    continue;
                }
                Some(LevelLayout::Groups(g)) => g.clone(),
            };
            let wanted = match level {
                LevelLayout::Row => vec![all.clone()],
                LevelLayout::Groups(g) => g,
            };
            let mut cut: Vec<Vec<u32>> = Vec::new();
            for g in &wanted {
                for u in &above {
                    let part: Vec<u32> = g.iter().copied().filter(|c| u.contains(c)).collect();
                    if !part.is_empty() {
                        cut.push(part);
                    }
                }
            }
            cut.sort_by_key(|g| g.first().copied());
            out.push(LevelLayout::Groups(cut));
        }
        Layout::new(out, columns)
    }
}

/// The levels of a `--layout` text for a table of `columns` columns, unchecked
/// beyond their widths fitting.
///
/// # Errors
/// `InvalidArgument` naming the level that does not parse.
fn parse_levels(text: &str, columns: usize) -> Result<Vec<LevelLayout>> {
    let mut levels = Vec::new();
    for (i, level) in text.split(';').map(str::trim).enumerate() {
        if level == "row" {
            levels.push(LevelLayout::Row);
            continue;
        }
        let mut groups = Vec::new();
        let mut next = 0u32;
        for width in level.split(',').map(str::trim) {
            let w: u32 = width.parse().ok().filter(|&w| w > 0).ok_or_else(|| {
                Error::InvalidArgument(format!(
                    "layout level {i}: `{width}` is not a group width (a number > 0, \
                     or the level is `row`)"
                ))
            })?;
            let end = next
                .checked_add(w)
                .filter(|&e| usize::try_from(e).is_ok_and(|e| e <= columns))
                .ok_or_else(|| {
                    Error::InvalidArgument(format!(
                        "layout level {i}: the widths add up past the table's {columns} columns"
                    ))
                })?;
            groups.push((next..end).collect());
            next = end;
        }
        levels.push(LevelLayout::Groups(groups));
    }
    Ok(levels)
}

impl Layout {
    /// `Ok` iff the layout fits a table of `columns` columns: level 0 holds rows;
    /// every group level partitions exactly the columns `0..columns` into non-empty
    /// groups, each listing its columns in ascending order; and every group of level
    /// i+1 lies inside one group of level i.
    ///
    /// # Errors
    /// `InvalidArgument` naming the level (and, for containment, the two levels and
    /// the columns that break it).
    pub fn check(&self, columns: usize) -> Result<()> {
        let bad = |msg: String| Err(Error::InvalidArgument(format!("layout: {msg}")));
        match self.levels.first() {
            Some(LevelLayout::Row) => {}
            Some(LevelLayout::Groups(_)) => return bad("level 0 always holds rows".into()),
            None => return bad("no level".into()),
        }
        for (i, level) in self.levels.iter().enumerate() {
            let LevelLayout::Groups(groups) = level else {
                continue;
            };
            let mut seen = vec![false; columns];
            for g in groups {
                if g.is_empty() {
                    return bad(format!("level {i} has an empty group"));
                }
                if g.windows(2).any(|w| w.first() >= w.get(1)) {
                    return bad(format!(
                        "level {i}: group {g:?} does not list its columns in ascending order"
                    ));
                }
                for &c in g {
                    match usize::try_from(c).ok().and_then(|c| seen.get_mut(c)) {
                        Some(s) if !*s => *s = true,
                        Some(_) => return bad(format!("level {i}: column {c} in two groups")),
                        None => {
                            return bad(format!("level {i}: column {c}, the table has {columns}"))
                        }
                    }
                }
            }
            if let Some(c) = seen.iter().position(|s| !s) {
                return bad(format!("level {i}: column {c} is in no group"));
            }
        }
        let all: Vec<u32> = (0..u32::try_from(columns).unwrap_or(u32::MAX)).collect();
        let groups_of = |l: &LevelLayout| match l {
            LevelLayout::Row => vec![all.clone()],
            LevelLayout::Groups(g) => g.clone(),
        };
        for (i, pair) in self.levels.windows(2).enumerate() {
            let [upper, lower] = pair else { continue };
            let up = groups_of(upper);
            for g in groups_of(lower) {
                if !up.iter().any(|u| g.iter().all(|c| u.contains(c))) {
                    return bad(format!(
                        "level {}'s group of columns {g:?} lies in no one group of level {i} \
                         ({up:?}); each group must lie inside one group of the level above",
                        i + 1
                    ));
                }
            }
        }
        Ok(())
    }

    /// The layout of level `level` (the last given, for a deeper one).
    pub fn level(&self, level: usize) -> &LevelLayout {
        self.levels
            .get(level)
            .or(self.levels.last())
            .unwrap_or(&LevelLayout::Row)
    }

    /// Whether any level holds column groups.
    pub fn has_groups(&self) -> bool {
        self.levels
            .iter()
            .any(|l| matches!(l, LevelLayout::Groups(_)))
    }

    /// The `--layout` form of the layout.
    pub fn to_text(&self) -> String {
        let level = |l: &LevelLayout| match l {
            LevelLayout::Row => "row".to_owned(),
            LevelLayout::Groups(g) => g
                .iter()
                .map(|g| g.len().to_string())
                .collect::<Vec<_>>()
                .join(","),
        };
        self.levels.iter().map(level).collect::<Vec<_>>().join(";")
    }
}

/// A layout as the catalog records it: with group ids and the epoch. See the module
/// docs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct LayoutRecord {
    /// Layout changes so far (0 at creation).
    pub epoch: u64,
    /// Every group ever used, by id.
    pub groups: BTreeMap<u32, Vec<u32>>,
    /// Per level: `None` for rows, else the ids of its groups.
    pub levels: Vec<Option<Vec<u32>>>,
}

impl LayoutRecord {
    /// The record of `layout` at creation: epoch 0, its groups numbered from 1 in
    /// order of first use.
    pub fn first(layout: &Layout) -> LayoutRecord {
        let mut record = LayoutRecord {
            epoch: 0,
            groups: BTreeMap::new(),
            levels: Vec::new(),
        };
        record.levels = layout
            .levels
            .iter()
            .map(|l| match l {
                LevelLayout::Row => None,
                LevelLayout::Groups(groups) => {
                    Some(groups.iter().map(|g| record.id_of(g)).collect())
                }
            })
            .collect();
        record
    }

    /// The id of group `columns`, defining it if no group has those columns.
    fn id_of(&mut self, columns: &[u32]) -> u32 {
        if let Some((&id, _)) = self.groups.iter().find(|(_, c)| c.as_slice() == columns) {
            return id;
        }
        let id = self.groups.keys().next_back().map_or(1, |&k| k + 1);
        self.groups.insert(id, columns.to_vec());
        id
    }

    /// The layout the record describes.
    ///
    /// # Errors
    /// What is wrong (a level naming an undefined group), for a `Corruption`.
    pub fn layout(&self) -> std::result::Result<Layout, String> {
        let levels = self
            .levels
            .iter()
            .map(|l| match l {
                None => Ok(LevelLayout::Row),
                Some(ids) => ids
                    .iter()
                    .map(|id| {
                        self.groups
                            .get(id)
                            .cloned()
                            .ok_or_else(|| format!("undefined column group {id}"))
                    })
                    .collect::<std::result::Result<_, _>>()
                    .map(LevelLayout::Groups),
            })
            .collect::<std::result::Result<_, _>>()?;
        Ok(Layout { levels })
    }

    /// The record's bytes (see the module docs).
    pub fn encode(&self) -> Vec<u8> {
        let len = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        let mut out = vec![FORMAT_VERSION];
        put_varint64(&mut out, self.epoch);
        put_varint32(&mut out, len(self.groups.len()));
        for (id, columns) in &self.groups {
            put_varint32(&mut out, *id);
            put_varint32(&mut out, len(columns.len()));
            columns.iter().for_each(|&c| put_varint32(&mut out, c));
        }
        put_varint32(&mut out, len(self.levels.len()));
        for level in &self.levels {
            match level {
                None => out.push(0),
                Some(ids) => {
                    out.push(1);
                    put_varint32(&mut out, len(ids.len()));
                    ids.iter().for_each(|&id| put_varint32(&mut out, id));
                }
            }
        }
        out
    }

    /// Decodes a layout record.
    ///
    /// # Errors
    /// What is wrong with it, for a `Corruption` naming the family.
    pub fn decode(src: &[u8]) -> std::result::Result<LayoutRecord, String> {
        let mut d = Decoder::new(src);
        let version = d.u8().ok_or("empty layout record")?;
        if version != FORMAT_VERSION {
            return Err(format!(
                "layout record version {version}, this build reads 1"
            ));
        }
        let epoch = d.varint64().ok_or("truncated epoch")?;
        let list = |d: &mut Decoder<'_>| -> std::result::Result<Vec<u32>, String> {
            let n = d.varint32().ok_or("truncated list length")?;
            (0..n)
                .map(|_| d.varint32().ok_or_else(|| "truncated list".to_owned()))
                .collect()
        };
        let mut groups = BTreeMap::new();
        for _ in 0..d.varint32().ok_or("truncated group count")? {
            let id = d.varint32().ok_or("truncated group id")?;
            if groups.insert(id, list(&mut d)?).is_some() {
                return Err(format!("column group {id} defined twice"));
            }
        }
        let mut levels = Vec::new();
        for _ in 0..d.varint32().ok_or("truncated level count")? {
            levels.push(match d.u8().ok_or("truncated level")? {
                0 => None,
                1 => Some(list(&mut d)?),
                t => return Err(format!("level kind {t}")),
            });
        }
        if !d.is_empty() {
            return Err("bytes after the layout record".into());
        }
        let record = LayoutRecord {
            epoch,
            groups,
            levels,
        };
        record.layout()?;
        Ok(record)
    }
}

#[cfg(test)]
mod tests;
