//! Splitting a suite into `--shard K/N` parts of about equal time: longest
//! first into the least loaded shard (LPT), by the recorded durations.
//!
//! Deterministic: the same units and durations give the same split on
//! every machine (ties are broken by name, then by the lowest shard). A
//! unit with no recorded duration weighs the mean of those recorded; with
//! none recorded at all every unit weighs the same, and the split is by
//! count. pytest's plugin splits its items the same way
//! (`runners/_tcrunner_pytest_order.py`).

/// `--shard K/N`: shard `index` (0-based) of `count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Shard {
    pub index: usize,
    pub count: usize,
}

impl Shard {
    /// Reads `K/N` (1 ≤ K ≤ N).
    pub(crate) fn parse(text: &str) -> Result<Shard, String> {
        let bad = || format!("--shard {text}: expected K/N with 1 <= K <= N, such as 2/4");
        let (k, n) = text.split_once('/').ok_or_else(bad)?;
        let k: usize = k.trim().parse().map_err(|_| bad())?;
        let n: usize = n.trim().parse().map_err(|_| bad())?;
        if k == 0 || n == 0 || k > n {
            return Err(bad());
        }
        Ok(Shard {
            index: k - 1,
            count: n,
        })
    }
}

/// The split: for each unit (in the order given) its shard, and each
/// shard's planned load (shards past the number of units, which get
/// nothing, are not listed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Split {
    pub shard_of: Vec<usize>,
    pub loads: Vec<u64>,
}

/// Splits `units` (name, recorded duration in ms) into `count` shards.
pub(crate) fn split(units: &[(&str, Option<u64>)], count: usize) -> Split {
    let recorded: Vec<u64> = units.iter().filter_map(|(_, d)| *d).collect();
    let fallback = if recorded.is_empty() {
        1
    } else {
        (recorded.iter().fold(0, |a: u64, &b| a.saturating_add(b)) / recorded.len() as u64).max(1)
    };
    let weight = |d: Option<u64>| d.unwrap_or(fallback).max(1);
    let mut order: Vec<usize> = (0..units.len()).collect();
    order.sort_by(|&a, &b| {
        weight(units[b].1)
            .cmp(&weight(units[a].1))
            .then_with(|| units[a].0.cmp(units[b].0))
    });
    // No more shards than units are ever chosen (the rest stay empty, and
    // are left out of `loads`), so a huge count costs nothing.
    let mut loads = vec![0u64; count.min(units.len()).max(1)];
    let mut shard_of = vec![0; units.len()];
    for unit in order {
        let (lightest, _) = loads
            .iter()
            .enumerate()
            .min_by_key(|(i, load)| (**load, *i))
            .expect("at least one shard");
        loads[lightest] = loads[lightest].saturating_add(weight(units[unit].1));
        shard_of[unit] = lightest;
    }
    Split { shard_of, loads }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_parse_as_k_of_n() {
        assert_eq!(Shard::parse("2/4"), Ok(Shard { index: 1, count: 4 }));
        for bad in ["0/4", "5/4", "4", "a/b", "1/0", "/"] {
            assert!(Shard::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn every_unit_is_in_exactly_one_shard_and_the_longest_spread_out() {
        let units = [
            ("a", Some(100)),
            ("b", Some(90)),
            ("c", Some(10)),
            ("d", Some(10)),
            ("e", None),
            ("f", Some(80)),
        ];
        let split = split(&units, 3);
        assert_eq!(split.shard_of.len(), units.len());
        // a, b, f open the three shards; the short ones fill the lightest.
        assert_ne!(split.shard_of[0], split.shard_of[1]);
        assert_ne!(split.shard_of[0], split.shard_of[5]);
        let total: u64 = split.loads.iter().sum();
        // e weighs the mean of the recorded: 290 / 5 = 58.
        assert_eq!(total, 100 + 90 + 10 + 10 + 58 + 80);
        // a (100), b (90), f (80) open the shards; e (58) joins f, the
        // lightest; c and d (10 each) then b and a.
        assert_eq!(split.shard_of, [0, 1, 1, 0, 2, 2]);
        assert_eq!(split.loads, [110, 100, 138]);
        // The same input, the same split.
        assert_eq!(super::split(&units, 3), split);
    }

    #[test]
    fn without_durations_the_split_is_by_count() {
        let names: Vec<String> = (0..10).map(|i| format!("t{i}")).collect();
        let units: Vec<(&str, Option<u64>)> = names.iter().map(|n| (n.as_str(), None)).collect();
        let split = split(&units, 4);
        assert_eq!(split.loads, [3, 3, 2, 2]);
    }

    #[test]
    fn more_shards_than_units_give_each_unit_its_own_at_no_cost() {
        let units = [("a", Some(5)), ("b", Some(7)), ("c", None)];
        let split = split(&units, usize::MAX);
        // b (7), c (the mean, 6), a (5): longest first.
        assert_eq!(split.shard_of, [2, 0, 1]);
        assert_eq!(split.loads, [7, 6, 5]);
    }
}
