//! All process control: the framework runs in its own process group with
//! stdin closed; stdout, stderr and the event side channel are read by one
//! polling thread into one bounded channel, in the order they were written
//! as far as it can be known, so no pipe can fill up and block the
//! framework; the group is stopped with SIGTERM, a grace period, then SIGKILL.
mod reader;
mod unix;

pub(crate) use unix::{describe, signal_name, stdout_gone, Child, Input, Spec};
