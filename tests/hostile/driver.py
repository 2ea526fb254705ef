"""Runs one hostile case in its own process (so that its peak memory can be measured alone) and
prints one JSON line: {"ok": ...} for a correct result, {"error": class, "message": text} for
an fpgaprof error. Anything else (a bare TypeError, a crash) leaves a traceback and a non-zero
status, which the test reports as a failure.

    driver.py load PATH...        fpgaprof.load each; a bytes path is given as hex:<hex>
    driver.py hlo PATH            fpgaprof.hlo.analyze of the file's bytes
    driver.py cli ARG...          fpgaprof's command line (its exit status is the process')
    driver.py py CODE             exec CODE (for the environment cases)
"""

from __future__ import annotations

import json
import sys


def _path(arg: str) -> str | bytes:
    return bytes.fromhex(arg[4:]) if arg.startswith("hex:") else arg


def _error(e: BaseException) -> dict:
    return {"error": type(e).__name__, "message": str(e)}


def main(argv: list[str]) -> int:
    action, args = argv[0], argv[1:]
    if action == "cli":
        from fpgaprof.cli import main as cli_main

        return cli_main(args)
    import fpgaprof

    results = []
    if action == "load":
        for a in args:
            try:
                p = fpgaprof.load(_path(a))
                results.append({"ok": {"kernels": len(p.kernels), "transfers": len(p.transfers)}})
            except fpgaprof.FpgaprofError as e:
                results.append(_error(e))
    elif action == "hlo":
        with open(args[0], "rb") as f:
            data = f.read()
        text = data.decode("utf-8", "surrogateescape") if args[1:] == ["str"] else data
        try:
            m = fpgaprof.hlo.analyze(text)
            results.append(
                {"ok": {"bytes": [i.bytes_accessed for i in m.instructions], "name": m.name}}
            )
        except fpgaprof.FpgaprofError as e:
            results.append(_error(e))
    elif action == "py":
        scope: dict = {"fpgaprof": fpgaprof, "results": results}
        exec(args[0], scope)  # noqa: S102 - the tests' own code
    else:
        raise SystemExit(f"unknown action {action}")
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
