//! `--sandbox` on Linux: the framework runs in new user, mount, network and
//! PID namespaces made with plain system calls, nothing installed.
//!
//! Between fork and exec, the child tcrunner starts (still in tcrunner's
//! process group, so signals to the group reach the framework as before):
//! unshares the four namespaces and maps the caller's uid and gid onto
//! themselves; brings up `lo` in the empty network namespace; makes every
//! mount read-only (`mount_setattr(AT_RECURSIVE)`) after putting a fresh
//! tmpfs on `/tmp` and `/dev/shm` (with the few folders of the host's `/tmp`
//! the run needs reattached read-only: the project, our reporter's files, an
//! interpreter kept there) and binding the writable paths onto themselves,
//! which alone are made writable again. It then forks the namespace's PID 1,
//! which mounts a `/proc` of its own, sets no-new-privileges and forks the
//! framework. PID 1 stays as a minimal init: it reaps orphans and, when the
//! framework exits, hands its wait status to the process tcrunner waits for
//! and exits, which makes the kernel kill everything left in the namespace.
//! That outer process ignores SIGINT/SIGTERM/SIGHUP (the framework gets them
//! through the group) and ends the way the framework ended: with its exit
//! code, or by its signal.
//!
//! Everything after the fork is async-signal-safe: raw system calls on
//! strings and buffers prepared before it ([`Prepared`]).
use std::ffi::{CString, OsStr};
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// The test hook that makes a step of the set-up fail as if the kernel
/// refused it (`user-namespace`, `id-map`, `loopback`, `filesystem`,
/// `pid-namespace`, `proc`, `no-new-privileges`, `landlock`): the refusal of a machine
/// without user namespaces, reproducible on one that has them.
pub(crate) const REFUSE_VAR: &str = "TCRUNNER_SANDBOX_REFUSE";

/// What a sandboxed run may write and must still see.
#[derive(Debug, Clone, Default)]
pub(crate) struct Sandbox {
    /// Left writable (absolute, existing).
    pub writable: Vec<PathBuf>,
    /// Paths the run reads (its program, folder, reporter files): those
    /// under `/tmp` stay visible, read-only, under the private `/tmp`.
    pub visible: Vec<PathBuf>,
    /// Folders of the host's `/tmp` the run may write (a framework's cache,
    /// jest's) whose writes go to a private layer over them (overlayfs),
    /// gone with the run: a sandboxed run reads the host's cache but never
    /// leaves the next run a changed one.
    pub scratch: Vec<PathBuf>,
}

/// A folder of the host's `/tmp` under a private overlay: the strings its
/// mount needs, made before the fork.
struct Scratch {
    path: CString,
    /// `/tmp/.tcrunner-scratch-N`, its `upper` and `work` folders.
    dirs: [CString; 3],
    options: CString,
}

/// One step of the set-up, named in the refusal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
enum Step {
    UserNamespace,
    IdMap,
    Loopback,
    Filesystem,
    PidNamespace,
    Proc,
    NoNewPrivileges,
    Landlock,
}

impl Step {
    const ALL: [Step; 8] = [
        Step::UserNamespace,
        Step::IdMap,
        Step::Loopback,
        Step::Filesystem,
        Step::PidNamespace,
        Step::Proc,
        Step::NoNewPrivileges,
        Step::Landlock,
    ];

    /// The hook's name for it.
    fn name(self) -> &'static str {
        match self {
            Step::UserNamespace => "user-namespace",
            Step::IdMap => "id-map",
            Step::Loopback => "loopback",
            Step::Filesystem => "filesystem",
            Step::PidNamespace => "pid-namespace",
            Step::Proc => "proc",
            Step::NoNewPrivileges => "no-new-privileges",
            Step::Landlock => "landlock",
        }
    }

    /// What the machine lacks when it fails.
    fn missing(self) -> &'static str {
        match self {
            Step::UserNamespace => {
                "unprivileged user namespaces are not available (kernel.unprivileged_userns_clone, \
                 user.max_user_namespaces or an AppArmor/SELinux policy forbids them)"
            }
            Step::IdMap => "the user namespace's uid/gid map cannot be written",
            Step::Loopback => "the loopback interface of a new network namespace cannot be brought up",
            Step::Filesystem => {
                "a private read-only view of the filesystem cannot be mounted (mount_setattr, Linux 5.12)"
            }
            Step::PidNamespace => "a new PID namespace cannot be started",
            Step::Proc => "a /proc of its own cannot be mounted (a container that masks /proc?)",
            Step::NoNewPrivileges => "no-new-privileges cannot be set",
            Step::Landlock => "the kernel has Landlock but refused its rules",
        }
    }
}

/// A step that failed, with the system's error.
#[derive(Debug, Clone, Copy)]
struct Failure {
    step: Step,
    errno: i32,
}

/// Everything the child needs, made before the fork (no allocation after it).
pub(crate) struct Prepared {
    uid_map: Vec<u8>,
    gid_map: Vec<u8>,
    /// Top-level folders (or files) of the host's `/tmp` to reattach, and
    /// whether each is a folder.
    keep: Vec<(CString, bool)>,
    writable: Vec<CString>,
    scratch: Vec<Scratch>,
    cwd: CString,
    shm: bool,
    /// `/run` is a folder to hide.
    run: bool,
    refuse: Option<Step>,
}

impl Sandbox {
    /// The strings and buffers the child uses; `cwd` is the framework's folder.
    pub(crate) fn prepare(&self, cwd: &Path) -> io::Result<Prepared> {
        // SAFETY: getuid and getgid cannot fail and touch no memory.
        let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
        let mut keep: Vec<(CString, bool)> = Vec::new();
        for path in self
            .visible
            .iter()
            .chain(&self.writable)
            .chain(&self.scratch)
        {
            let Some(top) = under_tmp(path) else { continue };
            let c = cstring(top.as_os_str())?;
            if !keep.iter().any(|(k, _)| *k == c) && top.exists() {
                keep.push((c, top.is_dir()));
            }
        }
        if keep.len() > MAX_KEEP {
            return Err(io::Error::other(format!(
                "more than {MAX_KEEP} folders of /tmp to keep visible"
            )));
        }
        let refuse = std::env::var(REFUSE_VAR)
            .ok()
            .and_then(|name| Step::ALL.into_iter().find(|s| s.name() == name));
        Ok(Prepared {
            uid_map: format!("{uid} {uid} 1\n").into_bytes(),
            gid_map: format!("{gid} {gid} 1\n").into_bytes(),
            keep,
            writable: self
                .writable
                .iter()
                .map(|p| cstring(p.as_os_str()))
                .collect::<io::Result<_>>()?,
            scratch: (self.scratch.iter().enumerate())
                .filter(|(_, path)| path.is_dir())
                .map(|(i, path)| {
                    let dir = format!("/tmp/.tcrunner-scratch-{i}");
                    let options = format!(
                        "lowerdir={},upperdir={dir}/upper,workdir={dir}/work",
                        path.display()
                    );
                    Ok(Scratch {
                        path: cstring(path.as_os_str())?,
                        dirs: [
                            cstring(OsStr::new(&dir))?,
                            cstring(OsStr::new(&format!("{dir}/upper")))?,
                            cstring(OsStr::new(&format!("{dir}/work")))?,
                        ],
                        options: cstring(OsStr::new(&options))?,
                    })
                })
                .collect::<io::Result<_>>()?,
            cwd: cstring(cwd.as_os_str())?,
            shm: Path::new("/dev/shm").is_dir(),
            run: Path::new("/run").is_dir() && !self.needs_run(),
            refuse,
        })
    }
}

impl Sandbox {
    /// The sandbox for running `spec`: `writable` left writable, and the
    /// paths `spec` names (its program, folder, arguments and environment
    /// values that are absolute paths) kept visible.
    pub(crate) fn for_spec(spec: &super::Spec, writable: Vec<PathBuf>) -> Sandbox {
        let mut visible = vec![spec.cwd.clone(), spec.program.clone()];
        let values = spec.env.iter().flat_map(|(_, v)| std::env::split_paths(v));
        // `--reporter=/tmp/…` names a path too.
        let args = spec.args.iter().map(|arg| {
            let bytes = arg.as_bytes();
            let value = match bytes.iter().position(|&b| b == b'=') {
                Some(at) if bytes.starts_with(b"-") => &bytes[at + 1..],
                _ => bytes,
            };
            PathBuf::from(OsStr::from_bytes(value))
        });
        visible.extend(args.chain(values).filter(|p| p.is_absolute()));
        Sandbox {
            writable,
            visible,
            scratch: Vec::new(),
        }
    }
}

impl Sandbox {
    /// Whether something the run needs or writes lives under `/run`, which
    /// is then left in view.
    fn needs_run(&self) -> bool {
        self.visible
            .iter()
            .chain(&self.writable)
            .any(|p| p.starts_with("/run") || p.starts_with("/var/run"))
    }
}

/// `/tmp/<first component>` of a path under `/tmp` (also through a
/// symbolic link), the folder the private `/tmp` must show again.
fn under_tmp(path: &Path) -> Option<PathBuf> {
    let canonical = path.canonicalize().ok();
    [Some(path.to_path_buf()), canonical]
        .into_iter()
        .flatten()
        .find_map(|p| {
            let rest = p.strip_prefix("/tmp").ok()?;
            let first = rest.components().next()?;
            Some(Path::new("/tmp").join(first))
        })
}

fn cstring(text: &OsStr) -> io::Result<CString> {
    CString::new(text.as_bytes()).map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))
}

/// Whether the kernel gives a sandbox here: the whole set-up runs in a
/// throw-away child, which exits instead of starting anything. The error is
/// the one line to show.
pub(crate) fn probe(sandbox: &Sandbox, cwd: &Path) -> Result<(), String> {
    let prepared = sandbox
        .prepare(cwd)
        .map_err(|e| format!("--sandbox: {e}"))?;
    let (read, write) = io::pipe().map_err(|e| format!("--sandbox: {e}"))?;
    use std::os::fd::AsRawFd as _;
    let report = write.as_raw_fd();
    // SAFETY: the child only makes async-signal-safe system calls on memory
    // prepared before the fork, then exits with _exit.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(format!("--sandbox: fork: {}", io::Error::last_os_error()));
    }
    if pid == 0 {
        // SAFETY: as above; `report` is the pipe's write end, open here.
        unsafe {
            let code = match enter(&prepared, true) {
                Ok(()) => 0,
                Err(failure) => {
                    let mut record = [0u8; 5];
                    record[0] = failure.step as u8;
                    record[1..].copy_from_slice(&failure.errno.to_ne_bytes());
                    libc::write(report, record.as_ptr().cast(), record.len());
                    1
                }
            };
            libc::_exit(code);
        }
    }
    drop(write);
    let mut status = 0;
    // SAFETY: waits for the child just forked.
    while unsafe { libc::waitpid(pid, &mut status, 0) } < 0 {
        if io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
            break;
        }
    }
    let mut record = Vec::new();
    let _ = io::Read::read_to_end(&mut &read, &mut record);
    if record.len() >= 5 {
        let step = Step::ALL[usize::from(record[0]).min(Step::ALL.len() - 1)];
        let errno = i32::from_ne_bytes([record[1], record[2], record[3], record[4]]);
        return Err(format!(
            "--sandbox: {} ({})",
            step.missing(),
            io::Error::from_raw_os_error(errno)
        ));
    }
    if libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0 {
        Ok(())
    } else {
        Err(format!(
            "--sandbox: the set-up ended with wait status {status:#x}"
        ))
    }
}

/// Turns a failed step into the error `pre_exec` hands back to the spawn.
pub(crate) fn enter_for_exec(prepared: &Prepared) -> io::Result<()> {
    // SAFETY: called between fork and exec, as `enter` requires.
    unsafe { enter(prepared, false) }.map_err(|f| io::Error::from_raw_os_error(f.errno))
}

/// The errno of the last failed call.
fn errno() -> i32 {
    io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}

/// Fails `step` unless `ok`, or when the test hook asks it to.
fn check(prepared: &Prepared, step: Step, ok: bool) -> Result<(), Failure> {
    if prepared.refuse == Some(step) {
        return Err(Failure {
            step,
            errno: libc::EPERM,
        });
    }
    if ok {
        Ok(())
    } else {
        Err(Failure {
            step,
            errno: errno(),
        })
    }
}

/// Sets the namespaces up and returns in the process that is to exec the
/// framework; the two processes above it never return. With `probe`, PID 1
/// exits once everything is in place.
///
/// # Safety
/// Only in a freshly forked, single-threaded child.
unsafe fn enter(p: &Prepared, probe: bool) -> Result<(), Failure> {
    let flags = libc::CLONE_NEWUSER | libc::CLONE_NEWNS | libc::CLONE_NEWNET | libc::CLONE_NEWPID;
    check(p, Step::UserNamespace, libc::unshare(flags) == 0)?;
    let maps = write_file(c"/proc/self/setgroups", b"deny")
        && write_file(c"/proc/self/uid_map", &p.uid_map)
        && write_file(c"/proc/self/gid_map", &p.gid_map);
    check(p, Step::IdMap, maps)?;
    check(p, Step::Loopback, loopback_up())?;
    check(p, Step::Filesystem, mounts(p))?;
    let mut status_pipe = [0; 2];
    check(
        p,
        Step::PidNamespace,
        libc::pipe2(status_pipe.as_mut_ptr(), libc::O_CLOEXEC) == 0,
    )?;
    let [status_read, status_write] = status_pipe;
    let init = libc::fork();
    check(p, Step::PidNamespace, init >= 0)?;
    if init > 0 {
        libc::close(status_write);
        outer_waiter(init, status_read);
    }
    // PID 1 of the new namespace.
    libc::close(status_read);
    libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
    let proc_flags = libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
    let proc = libc::mount(
        c"proc".as_ptr(),
        c"/proc".as_ptr(),
        c"proc".as_ptr(),
        proc_flags,
        std::ptr::null(),
    );
    check(p, Step::Proc, proc == 0)?;
    check(
        p,
        Step::NoNewPrivileges,
        libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0,
    )?;
    check(p, Step::Landlock, landlock(p))?;
    if probe {
        libc::_exit(0);
    }
    let framework = libc::fork();
    check(p, Step::PidNamespace, framework >= 0)?;
    if framework == 0 {
        return Ok(()); // on to exec
    }
    init_loop(framework, status_write)
}

/// The process tcrunner waits for: ends as the framework ended.
///
/// # Safety
/// Only between fork and exec, in the child [`enter`] runs in.
unsafe fn outer_waiter(init: libc::pid_t, status_read: libc::c_int) -> ! {
    // Only the status pipe: the spawn's own pipes must close when the
    // framework execs or fails to.
    close_all_but(status_read);
    for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        libc::signal(signal, libc::SIG_IGN);
    }
    let mut init_status = 0;
    while libc::waitpid(init, &mut init_status, 0) < 0 && errno() == libc::EINTR {}
    let mut bytes = [0u8; 4];
    let got = libc::read(status_read, bytes.as_mut_ptr().cast(), bytes.len());
    let status = if got == 4 {
        i32::from_ne_bytes(bytes)
    } else {
        init_status
    };
    if libc::WIFSIGNALED(status) {
        let signal = libc::WTERMSIG(status);
        // Dying of the framework's SIGSEGV must not dump this process's core.
        let no_core = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        libc::setrlimit(libc::RLIMIT_CORE, &no_core);
        libc::signal(signal, libc::SIG_DFL);
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, signal);
        libc::sigprocmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
        libc::kill(libc::getpid(), signal);
        libc::_exit(128 + signal);
    }
    libc::_exit(if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        1
    })
}

/// PID 1: reaps every orphan until the framework exits, then passes its
/// status on and exits, taking the rest of the namespace with it.
///
/// # Safety
/// Only between fork and exec, in the child [`enter`] runs in.
unsafe fn init_loop(framework: libc::pid_t, status_write: libc::c_int) -> ! {
    close_all_but(status_write);
    loop {
        let mut status = 0;
        let pid = libc::waitpid(-1, &mut status, 0);
        if pid == framework {
            let bytes = status.to_ne_bytes();
            libc::write(status_write, bytes.as_ptr().cast(), bytes.len());
            libc::_exit(0);
        }
        if pid < 0 && errno() != libc::EINTR {
            libc::_exit(1);
        }
    }
}

/// Closes every descriptor above stderr except `keep`.
///
/// # Safety
/// Only between fork and exec, in the child [`enter`] runs in.
unsafe fn close_all_but(keep: libc::c_int) {
    let max = libc::c_uint::MAX;
    let keep = keep as libc::c_uint;
    if keep > 3 {
        libc::syscall(libc::SYS_close_range, 3 as libc::c_uint, keep - 1, 0);
    }
    libc::syscall(libc::SYS_close_range, keep + 1, max, 0);
}

/// Writes `content` to the file at `path`.
///
/// # Safety
/// Only between fork and exec, in the child [`enter`] runs in.
unsafe fn write_file(path: &std::ffi::CStr, content: &[u8]) -> bool {
    let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
    if fd < 0 {
        return false;
    }
    let written = libc::write(fd, content.as_ptr().cast(), content.len());
    libc::close(fd);
    written == content.len() as isize
}

/// `ip link set lo up`, through the ioctl.
///
/// # Safety
/// Only between fork and exec, in the child [`enter`] runs in.
unsafe fn loopback_up() -> bool {
    let socket = libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0);
    if socket < 0 {
        return false;
    }
    let mut request: libc::ifreq = std::mem::zeroed();
    for (slot, byte) in request.ifr_name.iter_mut().zip(b"lo\0") {
        *slot = *byte as libc::c_char;
    }
    request.ifr_ifru.ifru_flags = (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short;
    let ok = libc::ioctl(socket, libc::SIOCSIFFLAGS as _, &request) == 0;
    libc::close(socket);
    ok
}

/// `struct mount_attr` of `mount_setattr(2)`.
#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

const MOUNT_ATTR_RDONLY: u64 = 0x1;
const AT_RECURSIVE: libc::c_int = 0x8000;
const OPEN_TREE_CLONE: libc::c_uint = 1;
const MOVE_MOUNT_F_EMPTY_PATH: libc::c_uint = 0x4;
/// The most folders of the host's `/tmp` reattached (a run needs two or three).
const MAX_KEEP: usize = 16;

///
/// # Safety
/// Only between fork and exec, in the child [`enter`] runs in.
unsafe fn set_read_only(path: &std::ffi::CStr, read_only: bool, flags: libc::c_int) -> bool {
    let attr = MountAttr {
        attr_set: if read_only { MOUNT_ATTR_RDONLY } else { 0 },
        attr_clr: if read_only { 0 } else { MOUNT_ATTR_RDONLY },
        propagation: 0,
        userns_fd: 0,
    };
    libc::syscall(
        libc::SYS_mount_setattr,
        libc::AT_FDCWD,
        path.as_ptr(),
        flags as libc::c_uint,
        &attr as *const MountAttr,
        std::mem::size_of::<MountAttr>(),
    ) == 0
}

/// The filesystem view: private `/tmp` with the kept folders, writable
/// binds, everything else read-only.
///
/// # Safety
/// Only between fork and exec, in the child [`enter`] runs in.
unsafe fn mounts(p: &Prepared) -> bool {
    let none = std::ptr::null::<libc::c_char>();
    // Nothing done here reaches the host's mounts.
    if libc::mount(
        none,
        c"/".as_ptr(),
        none,
        libc::MS_REC | libc::MS_PRIVATE,
        std::ptr::null(),
    ) != 0
    {
        return false;
    }
    let mut kept = [-1 as libc::c_int; MAX_KEEP];
    for (slot, (path, _)) in kept.iter_mut().zip(&p.keep) {
        let flags =
            OPEN_TREE_CLONE | libc::O_CLOEXEC as libc::c_uint | AT_RECURSIVE as libc::c_uint;
        *slot =
            libc::syscall(libc::SYS_open_tree, libc::AT_FDCWD, path.as_ptr(), flags) as libc::c_int;
        if *slot < 0 {
            return false;
        }
    }
    let tmpfs_flags = libc::MS_NOSUID | libc::MS_NODEV;
    if libc::mount(
        c"tmpfs".as_ptr(),
        c"/tmp".as_ptr(),
        c"tmpfs".as_ptr(),
        tmpfs_flags,
        c"mode=1777".as_ptr().cast(),
    ) != 0
    {
        return false;
    }
    for (&fd, (path, is_dir)) in kept.iter().zip(&p.keep) {
        let made = if *is_dir {
            libc::mkdir(path.as_ptr(), 0o755) == 0
        } else {
            let file = libc::open(
                path.as_ptr(),
                libc::O_CREAT | libc::O_WRONLY | libc::O_CLOEXEC,
                0o644,
            );
            file >= 0 && libc::close(file) == 0
        };
        let moved = made
            && libc::syscall(
                libc::SYS_move_mount,
                fd,
                c"".as_ptr(),
                libc::AT_FDCWD,
                path.as_ptr(),
                MOVE_MOUNT_F_EMPTY_PATH,
            ) == 0;
        libc::close(fd);
        if !moved {
            return false;
        }
    }
    // A private layer over each scratch folder, where the kernel allows
    // overlayfs in a user namespace (Linux 5.11); elsewhere an empty
    // private folder (a cold cache), never the host's for writing.
    for scratch in &p.scratch {
        let [dir, upper, work] = &scratch.dirs;
        let overlaid = libc::mkdir(dir.as_ptr(), 0o700) == 0
            && libc::mkdir(upper.as_ptr(), 0o755) == 0
            && libc::mkdir(work.as_ptr(), 0o755) == 0
            && libc::mount(
                c"overlay".as_ptr(),
                scratch.path.as_ptr(),
                c"overlay".as_ptr(),
                tmpfs_flags,
                scratch.options.as_ptr().cast(),
            ) == 0;
        let private = overlaid
            || libc::mount(
                c"tmpfs".as_ptr(),
                scratch.path.as_ptr(),
                c"tmpfs".as_ptr(),
                tmpfs_flags,
                c"mode=755".as_ptr().cast(),
            ) == 0;
        if !private {
            return false;
        }
    }
    if p.run {
        // The host's daemons listen on sockets there (Docker's, D-Bus's),
        // which a read-only mount does not keep a test from connecting to.
        let flags = tmpfs_flags | libc::MS_NOEXEC;
        let run = libc::mount(
            c"tmpfs".as_ptr(),
            c"/run".as_ptr(),
            c"tmpfs".as_ptr(),
            flags,
            c"mode=755".as_ptr().cast(),
        );
        if run != 0 {
            return false;
        }
    }
    for path in &p.writable {
        if libc::mount(
            path.as_ptr(),
            path.as_ptr(),
            none,
            libc::MS_BIND | libc::MS_REC,
            std::ptr::null(),
        ) != 0
        {
            return false;
        }
    }
    if !set_read_only(c"/", true, AT_RECURSIVE) || !set_read_only(c"/tmp", false, 0) {
        return false;
    }
    for path in p.writable.iter().chain(p.scratch.iter().map(|s| &s.path)) {
        if !set_read_only(path, false, 0) {
            return false;
        }
    }
    if p.shm {
        // Shared memory (Python's multiprocessing, node's workers) stays usable.
        libc::mount(
            c"tmpfs".as_ptr(),
            c"/dev/shm".as_ptr(),
            c"tmpfs".as_ptr(),
            tmpfs_flags,
            c"mode=1777".as_ptr().cast(),
        );
    }
    // The folder the spawn entered is the one under the new mounts now.
    libc::chdir(p.cwd.as_ptr()) == 0
}

/// Landlock's filesystem rights that change something (`LANDLOCK_ACCESS_FS_*`
/// of ABI 1: `WRITE_FILE`, then `REMOVE_DIR` to `MAKE_SYM`), then `REFER`
/// (ABI 2) and `TRUNCATE` (ABI 3). Executing (bit 0) and reading (bits 2
/// and 3) stay allowed everywhere.
const LANDLOCK_WRITE_V1: u64 = 0x1ff2;
/// The write rights the kernel lets a rule on a file (not a folder) hold.
const LANDLOCK_WRITE_FILE: u64 = 1 << 1;
const LANDLOCK_REFER: u64 = 1 << 13;
const LANDLOCK_TRUNCATE: u64 = 1 << 14;
const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
const LANDLOCK_RULE_PATH_BENEATH: libc::c_int = 1;

/// `struct landlock_path_beneath_attr`, packed as the kernel declares it.
#[repr(C, packed)]
struct PathBeneath {
    allowed_access: u64,
    parent_fd: i32,
}

/// The second layer, where the kernel has Landlock: writing is allowed only
/// beneath `/tmp`, the writable paths, `/dev` (`/dev/null`, terminals,
/// `/dev/shm`) and the namespace's own `/proc`, whatever the mounts say.
/// Without Landlock (an old kernel, or the LSM not enabled) the namespaces
/// stand alone.
///
/// # Safety
/// Only between fork and exec, in the child [`enter`] runs in.
unsafe fn landlock(p: &Prepared) -> bool {
    let abi = libc::syscall(
        libc::SYS_landlock_create_ruleset,
        std::ptr::null::<u64>(),
        0usize,
        LANDLOCK_CREATE_RULESET_VERSION,
    );
    if abi < 1 {
        return true;
    }
    let mut handled = LANDLOCK_WRITE_V1;
    if abi >= 2 {
        handled |= LANDLOCK_REFER;
    }
    if abi >= 3 {
        handled |= LANDLOCK_TRUNCATE;
    }
    // Only `handled_access_fs`: the network is a namespace of its own already.
    let ruleset = libc::syscall(
        libc::SYS_landlock_create_ruleset,
        &handled as *const u64,
        std::mem::size_of::<u64>(),
        0,
    ) as libc::c_int;
    if ruleset < 0 {
        return false;
    }
    let fixed = [c"/tmp", c"/dev", c"/proc"];
    let paths = fixed
        .iter()
        .copied()
        .chain(p.writable.iter().map(CString::as_c_str));
    for path in paths {
        let fd = libc::open(path.as_ptr(), libc::O_PATH | libc::O_CLOEXEC);
        if fd < 0 {
            continue; // nothing there to write to
        }
        // A rule on a file may hold only the rights a file has: writing and
        // truncating it (the kernel refuses the folder ones with EINVAL).
        let mut stat: libc::stat = std::mem::zeroed();
        let is_dir =
            libc::fstat(fd, &mut stat) == 0 && stat.st_mode & libc::S_IFMT == libc::S_IFDIR;
        let allowed_access = if is_dir {
            handled
        } else {
            handled & (LANDLOCK_WRITE_FILE | LANDLOCK_TRUNCATE)
        };
        let rule = PathBeneath {
            allowed_access,
            parent_fd: fd,
        };
        let added = libc::syscall(
            libc::SYS_landlock_add_rule,
            ruleset,
            LANDLOCK_RULE_PATH_BENEATH,
            &rule as *const PathBeneath,
            0,
        );
        libc::close(fd);
        if added != 0 {
            libc::close(ruleset);
            return false;
        }
    }
    let restricted = libc::syscall(libc::SYS_landlock_restrict_self, ruleset, 0) == 0;
    libc::close(ruleset);
    restricted
}
