"""Which process owns a file it is still writing: its host, pid and start time.

A pid alone is reused, and jobs on two cluster nodes can have the same one; with the host and
the time the process started, an owner names one process only. A file whose owner ran on
another host counts as live (this host cannot see that process); on this host, as live while
a process of that pid and start time runs.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path

SEPARATOR = "~"  # between the fields of an owner, which host names never hold


def _started(pid: int) -> str | None:
    """When process `pid` started, in clock ticks since boot (proc(5)); None where no such
    process runs; "0" for a running one on a system without /proc (the pid alone tells)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except FileNotFoundError:
        if Path("/proc/self/stat").exists():
            return None
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return None
        except PermissionError:
            pass  # it runs, as another user
        return "0"
    return fields[19]  # field 22 of proc(5), counted after the command's name


def this_process() -> str:
    """This process as an owner: `<host>~<pid>~<start time>`."""
    pid = os.getpid()
    return SEPARATOR.join([socket.gethostname(), str(pid), _started(pid) or "0"])


def is_dead(owner: str) -> bool:
    """Whether process `owner` (as `this_process` names one) has ended; False for one of
    another host, and True for a name that is no owner's."""
    host, _, rest = owner.partition(SEPARATOR)
    pid, _, started = rest.partition(SEPARATOR)
    if not (pid.isdigit() and started):
        return True
    if host != socket.gethostname():
        return False
    return _started(int(pid)) != started
