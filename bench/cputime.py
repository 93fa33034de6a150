#!/usr/bin/env python3
"""cputime.py OUT CMD [ARGS...]: runs the command (its standard input, output and
error are this script's) and writes one line to OUT: wall seconds, user CPU
seconds and system CPU seconds, as GNU time's `-f "%e %U %S"` does, but to the
microsecond: GNU time prints CPU seconds with two decimals, a 10 ms step that
is 14 % of a 70 ms run (the benches' sluice runs on 2-8 MB corpora). The CPU
time is the command's and its waited-for descendants' (wait4), not this
script's RUSAGE_CHILDREN: a Python started through a shim (pyenv) inherits
the CPU time of the shim's own children. No peak RSS: a process forked from
Python starts with Python's resident pages in its maximum; a bench that wants
RSS wraps the command in GNU time inside this one. Exits with the command's
status (128 + the signal when a signal ended it)."""
import os
import subprocess
import sys
import time


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    out, cmd = sys.argv[1], sys.argv[2:]
    t0 = time.perf_counter()
    try:
        p = subprocess.Popen(cmd)
    except OSError as e:
        print("cputime.py: %s: %s" % (cmd[0], e.strerror), file=sys.stderr)
        sys.exit(127)
    _, status, r = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    with open(out, "w") as f:
        f.write("%.6f %.6f %.6f\n" % (wall, r.ru_utime, r.ru_stime))
    sys.exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status))


if __name__ == "__main__":
    main()
