//! tcrunner: runs pytest, jest or vitest and streams a TeamCity service-message tree.
mod check;
mod cli;
mod convert;
mod event;
mod exit;
mod report;
mod tree;

use clap::Parser as _;

fn main() {
    let args = cli::RawArgs::parse();
    let teamcity_version = std::env::var("TEAMCITY_VERSION").ok();
    let config = cli::Config::from_args(args, teamcity_version.as_deref());
    let _ = config;
    std::process::exit(exit::SUCCESS);
}
