//! All process control: the framework runs in its own process group with
//! stdin closed; stdout, stderr and the event side channel are polled by the
//! run loop itself and handed out in the order they were written as far as
//! it can be known; nothing is read ahead of the loop, so a slow consumer
//! slows the framework down instead of growing our memory; the group is
//! stopped with SIGTERM, a grace period, then SIGKILL.
mod input;
mod reader;
#[cfg_attr(not(target_os = "linux"), path = "sandbox_unsupported.rs")]
mod sandbox;
mod unix;

pub(crate) use input::Input;
pub(crate) use sandbox::{probe as probe_sandbox, Sandbox};
pub(crate) use unix::{describe, listen_for_signals, signal_name, stdout_gone, Child, Spec};
