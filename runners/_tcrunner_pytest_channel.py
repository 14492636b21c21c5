"""The side channel to tcrunner: whole event lines written to a file
descriptor, or framed into pytest's stdout."""

import os
import select
import sys

from _tcrunner_pytest_common import _encode

#: The most bytes one write to a pipe puts there whole, whatever else writes to it.
_PIPE_BUF = getattr(select, "PIPE_BUF", 512)

#: Python's own, taken as the plugin loads: a test that patches ``os.write``
#: (``mock.patch("os.write", return_value=0)`` for a module) must not take
#: the events with it, nor leave a write that never moves on.
_write = os.write


def _ident(fd):
    """The device and inode of what ``fd`` is open on, or None when it is closed."""
    try:
        st = os.fstat(fd)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


class _Writer:
    """Writes whole lines with os.write; goes quiet for good once the reader is gone.

    Each event is written as it happens, one line per write call, except
    what is gathered: the declarations at the end of collection, and a test's
    ``finished``, which goes out with the next test's ``started`` (one write
    and one wake-up of tcrunner per test).
    """

    def __init__(self, fd):
        self.fd = fd
        self.ident = _ident(fd)  # what the descriptor is: see _still_ours
        self.batch = None  # a list while gathering lines
        self.inband = False  # see to_stdout
        self.stdout = 1  # where in-band frames go: see _stdout
        self.stdout_ident = None
        self.writing = False  # finishing a cut-short write, which a signal's handler must not cut into

    def to_stdout(self):
        """Writes the lines into pytest's stdout from now on, in frames
        tcrunner takes out (src/process/reader.rs): where tests write straight
        to stdout (-s), the one pipe keeps their text and the events in the
        order they happened. Each frame is one write of at most PIPE_BUF
        bytes, which no other writer to the pipe can cut into, and carries
        the run's key, so that no test's text is taken for one.

        Lines sent to the event pipe before are marked off from the frames
        by an empty frame first: tcrunner may read the stdout pipe before
        the event pipe, and the frames must not come before those lines."""
        self.sync()
        self.inband = True
        try:
            held = os.dup(1)  # not inheritable: tests' processes do not get it
        except OSError:
            held = 1
        self.stdout, self.stdout_ident = held, _ident(held)
        self.frame_open = ("\x1b_tcrunner;%s;" % os.environ.get("TCRUNNER_INBAND_KEY", "")).encode("ascii", "replace")

    @classmethod
    def open(cls):
        try:
            fd_text = os.environ.get("TCRUNNER_EVENT_FD")
            if fd_text:
                fd = int(fd_text)
                os.fstat(fd)  # is it open at all?
            else:
                fd = os.open(os.environ["TCRUNNER_EVENT_FILE"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            # Processes that tests start must not hold the pipe open after
            # pytest exits (xdist's workers get the variable, not the fd).
            os.set_inheritable(fd, False)
        except (ValueError, KeyError, OSError):
            return None
        return cls(fd)

    def send(self, event):
        self.write(_encode(event) + "\n")

    def write(self, line):
        """Writes complete lines (the text ends with a newline)."""
        if self.batch is not None:
            self.batch.append(line)
            return
        fd = self.fd
        if fd is None:
            return
        data = line.encode("utf-8", "replace")  # lone surrogates become "?"
        if not self.inband and not self._still_ours():
            # A test closed the pipe's descriptor (`os.closerange(3, …)`, as
            # daemons do): the events go on in pytest's stdout, which
            # tcrunner reads as well.
            self.to_stdout()
        if self.inband:
            fd = self._stdout()
            try:
                sys.stdout.flush()  # what the test printed goes first
            except Exception:
                pass
            opening = self.frame_open
            room = _PIPE_BUF - len(opening) - 2
            # A signal's handler must not put frames of its own between these.
            writing, self.writing = self.writing, True
            try:
                for at in range(0, len(data), room):
                    self._write_all(fd, b"".join((opening, data[at : at + room], b"\x1b\\")))
            finally:
                self.writing = writing
            return
        self._write_all(fd, data)

    def _write_all(self, fd, data):
        try:
            written = _write(fd, data)
            if written < len(data):
                self._write_rest(fd, data, written)
        except (BlockingIOError, InterruptedError):
            self._write_rest(fd, data, 0)
        except OSError:
            self.fd = None  # EPIPE and friends: tcrunner is gone; the run goes on

    def _still_ours(self):
        """Whether the descriptor is still the pipe it was opened as. A test
        that closed it may have opened a file since, which took its number:
        writing there would lose the events and spoil the file. One fstat
        a write, under a microsecond."""
        return _ident(self.fd) == self.ident

    def _stdout(self):
        """pytest's stdout as it was when the events moved there, through a
        descriptor of our own: a test that points descriptor 1 elsewhere
        (`os.dup2(devnull, 1)`) sends its own text there, not the events. If
        ours went too (`os.closerange`), descriptor 1."""
        if self.stdout != 1 and _ident(self.stdout) != self.stdout_ident:
            self.stdout = 1
        return self.stdout

    def _write_rest(self, fd, data, written):
        # A signal's handler that writes must wait for the rest of this line
        # (one whole `os.write` it cannot cut into).
        writing, self.writing = self.writing, True
        view = memoryview(data)[written:]
        try:
            while view:
                try:
                    view = view[_write(fd, view) :]
                except (BlockingIOError, InterruptedError):
                    select.select([], [fd], [], 1.0)
        except (OSError, ValueError):
            self.fd = None
        finally:
            self.writing = writing

    def sync(self):
        """Writes an empty frame into pytest's stdout: a point both pipes
        share. Every line sent so far is in the event pipe before it, so
        tcrunner passes them on before the text pytest prints after it (its
        summary), however late it reads the two (src/process/reader.rs).
        Needless in band, where the one pipe keeps the order already."""
        key = os.environ.get("TCRUNNER_INBAND_KEY")
        if self.fd is None or self.inband or self.batch is not None or not key:
            return
        try:
            sys.stdout.flush()  # what pytest printed so far goes first
        except Exception:
            pass
        try:
            _write(1, ("\x1b_tcrunner;%s;\x1b\\" % key).encode("ascii", "replace"))
        except OSError:
            pass

    def silence(self):
        """Writes nothing more (in a forked child: the pipe is the parent's)."""
        self.fd = None
        self.batch = None

    def gather(self):
        self.batch = []

    def flush(self, last=""):
        """Writes the lines gathered, and ``last`` after them."""
        lines, self.batch = self.batch, None
        if lines:
            lines.append(last)
            self.write("".join(lines))
        elif last:
            self.write(last)
