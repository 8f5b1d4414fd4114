"""`python -m bench [NAME…] [--quick]`: run every benchmark (or the named ones), print one JSON report.

Options (words starting with `--`) are passed to every benchmark's `main`.
"""

import importlib
import json
import pkgutil
import sys

import bench


def main(argv: list[str]) -> int:
    available = sorted(m.name[len("bench_"):] for m in pkgutil.iter_modules(bench.__path__) if m.name.startswith("bench_"))
    options = [arg for arg in argv if arg.startswith("--")]
    wanted = [arg for arg in argv if not arg.startswith("--")] or available
    unknown = [name for name in wanted if name not in available]
    if unknown:
        print(f"unknown benchmark(s): {', '.join(unknown)}; available: {', '.join(available)}", file=sys.stderr)
        return 2
    report = {}
    for name in wanted:
        print(f"running bench {name} …", file=sys.stderr, flush=True)
        report[name] = importlib.import_module(f"bench.bench_{name}").main(options)
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
