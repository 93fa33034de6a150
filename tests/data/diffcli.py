"""The command line of the randomized differential scripts
(tests/data/*/diff_*.py: Parquet, Arrow IPC, JSON Lines, MinHash dedup, DNA):
--n, --seed, --case, --start, --sluice, --work, --keep, -v, and where a
script has them --minimize and --avoid. Standard library only: the scripts
run in different virtual environments. A script puts tests/data on sys.path
and calls case_args."""
import argparse
import os
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def case_args(doc, prefix, n=100, avoidable=None, minimize=True, more=None):
    """Parses the command line: returns the arguments, the set of --avoid
    classes (each one of avoidable), the sluice binary's absolute path (it
    must be executable), the work folder (made; a temporary one named
    prefix... without --work) and the case numbers. doc is the script's
    docstring (its first paragraph the description), n the default of --n;
    more(ap) adds a script's own options."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=n, help="cases to run (default %d)" % n)
    ap.add_argument("--seed", default="1", help="seed (default 1)")
    ap.add_argument("--case", type=int, help="run only this case of the seed")
    ap.add_argument("--start", type=int, default=0, help="first case number")
    ap.add_argument("--sluice", default=os.environ.get("SLUICE", os.path.join(ROOT, "build", "sluice")),
                    help="the binary (default $SLUICE or build/sluice)")
    ap.add_argument("--work", help="folder for files (default: a temporary one)")
    ap.add_argument("--keep", action="store_true", help="keep each failing case under --work")
    if minimize:
        ap.add_argument("--minimize", action="store_true", help="shrink each failing case (with --case)")
    if avoidable is not None:
        ap.add_argument("--avoid", default="", help="known discrepancies not to generate: " + ", ".join(avoidable))
    if more:
        more(ap)
    ap.add_argument("-v", "--verbose", action="store_true", help="one line per case")
    a = ap.parse_args()
    avoid = set(x for x in getattr(a, "avoid", "").split(",") if x)
    for x in avoid:
        if x not in avoidable:
            ap.error("--avoid: unknown %r (known: %s)" % (x, ", ".join(avoidable)))
    sluice = os.path.abspath(a.sluice)
    if not os.access(sluice, os.X_OK):
        ap.error("no sluice binary at %s (--sluice)" % sluice)
    work = a.work or tempfile.mkdtemp(prefix=prefix)
    os.makedirs(work, exist_ok=True)
    cases = [a.case] if a.case is not None else range(a.start, a.start + a.n)
    return a, avoid, sluice, work, cases
