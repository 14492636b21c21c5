//! The test history tcrunner keeps per project (`.tcrunner/`): what each
//! test did last, read before a run to choose what runs (`--lf`, `--ff`,
//! `--sw`), and updated after it with what ran.
mod merge;
mod select;
mod shard;
mod show;
mod store;
pub(crate) mod teamcity;

pub(crate) use merge::{merge, RanTest};
pub(crate) use select::{failed_tests, plan, Options, Plan};
pub(crate) use shard::{split, Shard};
pub(crate) use show::show;
pub(crate) use store::{
    load, load_stamped, lock, path, save, Entry, History, ShardRound, Stamp, Verdict, DEFAULT_DIR,
};
