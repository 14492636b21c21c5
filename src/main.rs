//! The `tcrunner` binary: everything is in the library (`src/lib.rs`).

fn main() {
    std::process::exit(tcrunner::main());
}
