//! Where the service messages go: stdout, or the socket an IDE opened for
//! them. The newest PyCharm runners, and the IDEs' jest and vitest
//! reporters, send every message over one connection when the IDE sets
//! `JB_TEAMCITY_SOCKET_PATH` (a Unix socket, which takes precedence) or
//! `JB_TEAMCITY_SOCKET_PORT` with `JB_TEAMCITY_SOCKET_HOST` (default
//! `localhost`); plain text stays on stdout. An empty variable counts as
//! unset, as the IDE's own reporters read them.
use std::ffi::OsString;
use std::fmt;
use std::io::{self, Write};
use std::net::TcpStream;
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;

use rustix::event::{PollFd, PollFlags, Timespec};
use rustix::net::RecvFlags;

use super::outlet::Outlet;

/// The variable naming a Unix socket.
const PATH_VAR: &str = "JB_TEAMCITY_SOCKET_PATH";
/// The variable naming a TCP port.
const PORT_VAR: &str = "JB_TEAMCITY_SOCKET_PORT";
/// The variable naming the TCP port's host.
const HOST_VAR: &str = "JB_TEAMCITY_SOCKET_HOST";

/// The socket the environment asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Endpoint {
    /// `JB_TEAMCITY_SOCKET_PATH`.
    Unix(PathBuf),
    /// `JB_TEAMCITY_SOCKET_PORT` on `JB_TEAMCITY_SOCKET_HOST`.
    Tcp { host: String, port: u16 },
}

impl fmt::Display for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Endpoint::Unix(path) => write!(f, "{} ({PATH_VAR})", path.display()),
            Endpoint::Tcp { host, port } => {
                write!(f, "{host}:{port} ({HOST_VAR}, {PORT_VAR})")
            }
        }
    }
}

/// Why the IDE's socket could not be used.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SocketError {
    #[error("{PORT_VAR}={0:?} is not a port number")]
    BadPort(String),
    #[error("cannot connect to the IDE's socket {endpoint}")]
    Connect {
        endpoint: Endpoint,
        #[source]
        source: io::Error,
    },
}

impl Endpoint {
    /// The socket the environment names, if any.
    pub(crate) fn from_env() -> Result<Option<Endpoint>, SocketError> {
        Endpoint::from_vars(|name| std::env::var_os(name))
    }

    /// [`Endpoint::from_env`] over any lookup of variables.
    fn from_vars(var: impl Fn(&str) -> Option<OsString>) -> Result<Option<Endpoint>, SocketError> {
        let set = |name| var(name).filter(|value| !value.is_empty());
        if let Some(path) = set(PATH_VAR) {
            return Ok(Some(Endpoint::Unix(path.into())));
        }
        let Some(port) = set(PORT_VAR) else {
            return Ok(None);
        };
        let port = port.to_string_lossy();
        let port = port
            .trim()
            .parse()
            .map_err(|_| SocketError::BadPort(port.clone().into_owned()))?;
        let host = set(HOST_VAR).map_or_else(
            || "localhost".to_owned(),
            |host| host.to_string_lossy().into_owned(),
        );
        Ok(Some(Endpoint::Tcp { host, port }))
    }

    /// Connects to the socket.
    pub(crate) fn connect(&self) -> Result<Socket, SocketError> {
        let connected = match self {
            Endpoint::Unix(path) => UnixStream::connect(path).map(Socket::Unix),
            Endpoint::Tcp { host, port } => {
                TcpStream::connect((host.as_str(), *port)).map(|stream| {
                    // Each batch of messages as soon as it is written, as the
                    // IDE's own reporters send them.
                    let _ = stream.set_nodelay(true);
                    Socket::Tcp(stream)
                })
            }
        };
        connected.map_err(|source| SocketError::Connect {
            endpoint: self.clone(),
            source,
        })
    }
}

/// A connection to the IDE's socket.
#[derive(Debug)]
pub(crate) enum Socket {
    Unix(UnixStream),
    Tcp(TcpStream),
}

impl Socket {
    /// A second handle on the same connection, for watching it.
    pub(crate) fn try_clone(&self) -> io::Result<Socket> {
        match self {
            Socket::Unix(stream) => stream.try_clone().map(Socket::Unix),
            Socket::Tcp(stream) => stream.try_clone().map(Socket::Tcp),
        }
    }

    fn fd(&self) -> BorrowedFd<'_> {
        match self {
            Socket::Unix(stream) => stream.as_fd(),
            Socket::Tcp(stream) => stream.as_fd(),
        }
    }

    /// Whether the IDE closed its end (it stopped the run), without
    /// blocking: a write would fail too, this is for quiet stretches. The
    /// IDE sends nothing, so a readable socket whose next read would be
    /// the end of the stream is a closed one.
    pub(crate) fn gone(&self) -> bool {
        let fd = self.fd();
        let mut fds = [PollFd::new(&fd, PollFlags::IN)];
        // A zero timeout never blocks.
        if rustix::event::poll(&mut fds, Some(&Timespec::default())) != Ok(1) {
            return false;
        }
        if fds[0].revents().intersects(PollFlags::ERR | PollFlags::HUP) {
            return true;
        }
        let mut byte = [0u8; 1];
        matches!(
            rustix::net::recv(fd, &mut byte, RecvFlags::PEEK | RecvFlags::DONTWAIT),
            Ok((0, _))
        )
    }
}

/// A connection the reader closed is told as a closed pipe, whichever way
/// the system words it, so that the run ends as it does when stdout's
/// reader goes away.
fn as_closed(error: io::Error) -> io::Error {
    match error.kind() {
        io::ErrorKind::ConnectionReset | io::ErrorKind::ConnectionAborted => {
            io::Error::new(io::ErrorKind::BrokenPipe, error)
        }
        _ => error,
    }
}

impl Write for Socket {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Socket::Unix(stream) => stream.write(buf),
            Socket::Tcp(stream) => stream.write(buf),
        }
        .map_err(as_closed)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Where a stream's messages and plain text are written.
pub(crate) enum Transport<W: Write> {
    /// Both on `W` (stdout), interleaved in order.
    Stdout(W),
    /// The messages on the IDE's socket, the text on `W`.
    Socket {
        /// Writes to the socket from a thread of its own.
        messages: Outlet,
        /// The same socket, watched for the IDE closing it.
        watch: Socket,
        text: W,
    },
}

impl<W: Write> Transport<W> {
    /// The sink the environment asks for: the IDE's socket, connected now,
    /// when it names one and there are messages to send, else `out` alone.
    pub(crate) fn from_env(out: W, messages: bool) -> Result<Self, SocketError> {
        if !messages {
            return Ok(Transport::Stdout(out));
        }
        match Endpoint::from_env()? {
            None => Ok(Transport::Stdout(out)),
            Some(endpoint) => {
                let socket = endpoint.connect()?;
                let cannot = |source| SocketError::Connect {
                    endpoint: endpoint.clone(),
                    source,
                };
                let watch = socket.try_clone().map_err(cannot)?;
                Ok(Transport::Socket {
                    messages: Outlet::spawn("socket", socket).map_err(cannot)?,
                    watch,
                    text: out,
                })
            }
        }
    }

    /// The writer the messages go to when it is not stdout's, for
    /// waiting until its reader has them all.
    pub(crate) fn messages_apart(&self) -> Option<&Outlet> {
        match self {
            Transport::Stdout(_) => None,
            Transport::Socket { messages, .. } => Some(messages),
        }
    }

    /// A handle on the socket, if the messages go to one, for noticing
    /// that its reader went away.
    pub(crate) fn socket(&self) -> io::Result<Option<Socket>> {
        match self {
            Transport::Stdout(_) => Ok(None),
            Transport::Socket { watch, .. } => watch.try_clone().map(Some),
        }
    }

    /// The writer of plain text, for an output that writes no messages
    /// (the human view): a socket is let go.
    pub(crate) fn into_text(self) -> W {
        match self {
            Transport::Stdout(out) | Transport::Socket { text: out, .. } => out,
        }
    }

    /// Where plain text goes when it does not go with the messages.
    #[inline]
    pub(super) fn text_apart(&mut self) -> Option<&mut W> {
        match self {
            Transport::Stdout(_) => None,
            Transport::Socket { text, .. } => Some(text),
        }
    }
}

/// Writes are the messages'; text apart goes through [`Transport::text_apart`].
impl<W: Write> Write for Transport<W> {
    #[inline]
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Transport::Stdout(out) => out.write(buf),
            Transport::Socket { messages, .. } => messages.write(buf),
        }
    }

    #[inline]
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        match self {
            Transport::Stdout(out) => out.write_all(buf),
            Transport::Socket { messages, .. } => messages.write_all(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Transport::Stdout(out) => out.flush(),
            Transport::Socket { messages, text, .. } => {
                let messages = messages.flush();
                text.flush().and(messages)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    fn vars<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<OsString> + 'a {
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| OsString::from(v))
        }
    }

    #[test]
    fn the_path_wins_over_the_port_and_empty_means_unset() {
        let both = [(PATH_VAR, "/tmp/s"), (PORT_VAR, "9")];
        assert_eq!(
            Endpoint::from_vars(vars(&both)).unwrap(),
            Some(Endpoint::Unix("/tmp/s".into()))
        );
        let empty_path = [(PATH_VAR, ""), (PORT_VAR, "9")];
        assert_eq!(
            Endpoint::from_vars(vars(&empty_path)).unwrap(),
            Some(Endpoint::Tcp {
                host: "localhost".into(),
                port: 9
            })
        );
        let host = [(PORT_VAR, "9"), (HOST_VAR, "127.0.0.1")];
        assert_eq!(
            Endpoint::from_vars(vars(&host)).unwrap(),
            Some(Endpoint::Tcp {
                host: "127.0.0.1".into(),
                port: 9
            })
        );
        assert_eq!(Endpoint::from_vars(vars(&[(HOST_VAR, "h")])).unwrap(), None);
        assert!(matches!(
            Endpoint::from_vars(vars(&[(PORT_VAR, "x1")])),
            Err(SocketError::BadPort(port)) if port == "x1"
        ));
    }

    #[test]
    fn messages_go_to_the_socket_and_text_apart() {
        let (socket, mut ide) = UnixStream::pair().unwrap();
        let watch = Socket::Unix(socket.try_clone().unwrap());
        let mut sink = Transport::Socket {
            messages: Outlet::spawn("test", Socket::Unix(socket)).unwrap(),
            watch,
            text: Vec::new(),
        };
        assert!(!sink.socket().unwrap().unwrap().gone());
        sink.write_all(b"##teamcity[testingStarted]\n").unwrap();
        sink.text_apart().unwrap().write_all(b"text\n").unwrap();
        let mut got = [0; 27];
        ide.read_exact(&mut got).unwrap();
        assert_eq!(&got, b"##teamcity[testingStarted]\n");
        let Transport::Socket { text, .. } = sink else {
            unreachable!()
        };
        assert_eq!(text, b"text\n");
    }

    #[test]
    fn a_closed_socket_is_gone_and_writes_to_it_are_a_closed_pipe() {
        let (ours, theirs) = UnixStream::pair().unwrap();
        let mut socket = Socket::Unix(ours);
        assert!(!socket.gone());
        drop(theirs);
        assert!(socket.gone());
        let error = socket.write_all(b"x\n").unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::BrokenPipe);
    }

    #[test]
    fn a_refused_connection_names_the_socket() {
        let missing = std::env::temp_dir().join("tcrunner-no-such-socket");
        let error = Endpoint::Unix(missing.clone()).connect().unwrap_err();
        assert_eq!(
            error.to_string(),
            format!(
                "cannot connect to the IDE's socket {} (JB_TEAMCITY_SOCKET_PATH)",
                missing.display()
            )
        );
    }
}
