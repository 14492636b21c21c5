//! The `tcrunner` binary: everything is in the library (`src/lib.rs`).

/// mimalloc instead of the system's allocator: `convert` allocates and
/// frees a few small strings and nodes per test, where glibc's malloc spent
/// 15% of the instructions of a 100,000-test vitest report (1.29 → 1.15 G
/// instructions; jest's report 1.58 → 1.43 G). Without transparent huge
/// pages (`no_thp`): with them, its first arena took 34 MB of memory and
/// the time to clear it, making JUnit XML slower than before.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    std::process::exit(tcrunner::main());
}
