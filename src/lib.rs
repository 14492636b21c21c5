//! tcrunner: runs pytest, jest or vitest and streams a TeamCity service-message tree.
//!
//! The binary (`src/main.rs`) only calls [`main`]; everything lives here so
//! the fuzz targets in `fuzz/` can reach the parsers, through the `fuzzing`
//! module that only the `fuzzing` feature (enabled by the fuzz crate alone)
//! makes public.
mod check;
mod cli;
mod convert;
mod doctor;
mod event;
mod exit;
mod frameworks;
#[cfg(any(test, feature = "fuzzing"))]
#[doc(hidden)]
pub mod fuzzing;
mod hash;
mod history;
mod ide;
mod input;
mod process;
mod report;
mod run;
mod runners;
mod tree;
mod view;

use clap::Parser as _;

/// Parses the command line, runs the command and returns the exit code.
pub fn main() -> i32 {
    let args = match cli::RawArgs::try_parse() {
        Ok(args) => args,
        Err(e) => {
            let code = if e.use_stderr() {
                exit::USAGE
            } else {
                exit::SUCCESS
            };
            let _ = e.print();
            return code;
        }
    };
    let config = cli::Config::from_args_in(args, &cli::Env::current());
    dispatch(config)
}

/// Runs the command; every failure becomes one `tcrunner: ...` line and a code.
fn dispatch(config: cli::Config) -> i32 {
    // Buffered: the run loop flushes whenever it runs out of input, convert
    // and check at the end, so a burst of events costs one write, not one per line.
    let stdout = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    let result = match config {
        cli::Config::Run(run) => {
            run::run(run, stdout).map_err(|e| (e.exit_code(), anyhow::Error::new(e)))
        }
        cli::Config::Convert(convert) => {
            convert::run(&convert, stdout).map_err(|e| (e.exit_code(), anyhow::Error::new(e)))
        }
        cli::Config::Check(check) => {
            check::run(&check, stdout).map_err(|e| (e.exit_code(), anyhow::Error::new(e)))
        }
        cli::Config::View(view) => {
            view::run(&view, stdout).map_err(|e| (e.exit_code(), anyhow::Error::new(e)))
        }
        cli::Config::Completions(shell) => {
            let mut stdout = stdout;
            clap_complete::generate(shell, &mut cli::command(), "tcrunner", &mut stdout);
            finish_output(stdout)
        }
        cli::Config::IdeInstall(dir) => {
            ide::install(&dir, stdout).map_err(|e| (e.exit_code(), anyhow::Error::new(e)))
        }
        cli::Config::Doctor(doctor) => {
            doctor::run(&doctor, stdout).map_err(|e| (e.exit_code(), anyhow::Error::new(e)))
        }
        cli::Config::History {
            project,
            dir,
            framework,
        } => {
            let name = framework.map(|f| f.framework().name());
            match project.filter(|p| !p.is_dir()) {
                Some(project) => Err((
                    exit::NO_INPUT,
                    anyhow::anyhow!("--project {}: no such directory", project.display()),
                )),
                None => history::show(&dir, name, stdout)
                    .map_err(|e| (exit::IO_ERROR, anyhow::Error::new(e))),
            }
        }
        cli::Config::Man => {
            let mut stdout = stdout;
            clap_mangen::Man::new(cli::command())
                .render(&mut stdout)
                .map_err(|e| (exit::IO_ERROR, anyhow::Error::new(e)))
                .and_then(|()| finish_output(stdout))
        }
        cli::Config::PromptfooProvider => {
            let mut stdout = stdout;
            std::io::Write::write_all(&mut stdout, PROMPTFOO_PROVIDER.as_bytes())
                .map_err(|e| (exit::IO_ERROR, anyhow::Error::new(e)))
                .and_then(|()| finish_output(stdout))
        }
    };
    let code = match result {
        Ok(code) => code,
        // The reader of our output went away (an IDE stopping the run, `| head`):
        // nothing to say, and nobody to say it to.
        Err((_, error)) if is_broken_pipe(&error) => exit::SIGNAL_BASE + libc::SIGPIPE,
        Err((code, error)) => {
            report::stderr_line(&format!("tcrunner: {error:#}"));
            code
        }
    };
    // A run's stderr is written by a thread of its own, which ends with us.
    report::flush_stderr(std::time::Duration::from_secs(1));
    code
}

/// The Promptfoo provider, embedded as the reporters are.
const PROMPTFOO_PROVIDER: &str = include_str!("../integrations/promptfoo_provider.py");

/// Flushes a command's output; exit 0 when it is all written.
fn finish_output(mut out: impl std::io::Write) -> Result<i32, (i32, anyhow::Error)> {
    out.flush()
        .map(|()| exit::SUCCESS)
        .map_err(|e| (exit::IO_ERROR, anyhow::Error::new(e)))
}

fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
