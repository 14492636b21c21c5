//! The hash maps keyed by our own ids (source ids, node ids, flow names).
//!
//! FxHash, rustc's hasher, from `rustc-hash`: these keys are never
//! attacker-chosen in a way that matters (a hostile report can at worst slow
//! its own conversion), and SipHash was ~9% of `convert`'s instructions.
use std::collections::{HashMap, HashSet};

use rustc_hash::FxBuildHasher;

/// A map keyed by our own ids.
pub(crate) type FastMap<K, V> = HashMap<K, V, FxBuildHasher>;
/// A set of our own ids.
pub(crate) type FastSet<K> = HashSet<K, FxBuildHasher>;
