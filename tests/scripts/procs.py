"""procs.py - what the test drivers need to know of /proc (launcher.py, attack.py, tests/mpirun/lost.py)."""
import os


def live_procs(token, with_cmd=False):
    """pids (with their command lines, if with_cmd) of non-zombie processes other than this one whose command line
    contains token."""
    found = []
    for p in os.listdir('/proc'):
        if not p.isdigit() or int(p) == os.getpid():
            continue
        try:
            with open(f'/proc/{p}/cmdline', 'rb') as f:
                cmd = f.read()
            with open(f'/proc/{p}/stat') as f:
                state = f.read().rsplit(')', 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if token.encode() in cmd and state not in ('Z', 'X'):
            found.append((int(p), cmd.replace(b'\0', b' ').decode(errors='replace').strip()) if with_cmd else int(p))
    return found
