"""The Python package's layers (docs/architecture.md, CONTRIBUTING.md; the import contracts
in pyproject.toml run in CI as `lint-imports`): `import fpgaprof` loads no renderer, every
top-level module is a layer or a named public re-export, and no module reaches into another
module's private (underscore) names."""
import ast
import json
import pathlib
import subprocess
import sys

import fpgaprof

REPO = pathlib.Path(__file__).resolve().parents[2]
SOURCE = REPO / "python" / "fpgaprof"
LAYERS = ("base", "capture", "analysis", "views", "api", "report", "cli")
RENDERERS = ("fpgaprof.report.html", "fpgaprof.report.digest", "fpgaprof.report.summary_json",
             "fpgaprof.report.timeline", "fpgaprof.report.parquet", "fpgaprof.report.xspace")
# The public modules of the old layout, kept as re-exports of their layer's module.
REEXPORTS = ("calibrate", "counters", "errors", "fpga", "fpga_validation", "hlo", "roofline")
# Private names of the compiled core that only tests call (its bindings' own test helpers).
CORE_TEST_HOOKS = {"_raise_error"}


def test_import_fpgaprof_loads_no_renderer_and_no_cli():
    code = "import json, sys, fpgaprof; print(json.dumps(sorted(sys.modules)))"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    loaded = set(json.loads(r.stdout.strip().splitlines()[-1]))
    assert not loaded & set(RENDERERS)
    assert not {m for m in loaded if m == "fpgaprof.report" or m.startswith("fpgaprof.report.")}
    assert not {m for m in loaded if m == "fpgaprof.cli" or m.startswith("fpgaprof.cli.")}
    assert {"fpgaprof.api.profile", "fpgaprof.api.trace"} <= loaded


def test_every_top_level_module_is_a_layer_or_a_named_reexport():
    names = {p.stem for p in SOURCE.glob("*.py")} | {p.name for p in SOURCE.iterdir()
                                                       if (p / "__init__.py").is_file()}
    assert names == {"__init__", "__main__", *LAYERS, *REEXPORTS}


def test_reexports_are_the_layer_objects():
    from fpgaprof.api import fpga, roofline
    from fpgaprof.base import errors
    assert fpgaprof.fpga.FpgaTarget is fpga.FpgaTarget
    assert fpgaprof.roofline.Table is roofline.Table
    assert fpgaprof.errors.FpgaprofError is errors.FpgaprofError is fpgaprof.FpgaprofError


def _private_uses(path: pathlib.Path) -> list[str]:
    """Underscore names of fpgaprof modules that `path` imports or reads as attributes of an
    imported fpgaprof module (dunder names and IPython's _repr_*_ hooks are not private)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    rel = path.relative_to(REPO).as_posix()

    def private(name: str) -> bool:
        return (name.startswith("_") and not name.startswith("__")
                and not (name.startswith("_repr_") and name.endswith("_")))

    out = []
    aliases: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "fpgaprof":
            for a in node.names:
                aliases.add(a.asname or a.name)
                # the compiled core is reached through fpgaprof.base.core only
                core = (node.module == "fpgaprof" and a.name == "_core"
                        and rel == "python/fpgaprof/base/core.py")
                if private(a.name) and not core:
                    out.append(f"{rel}:{node.lineno}: from {node.module} import {a.name}")
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] == "fpgaprof":
                    aliases.add(a.asname or a.name.split(".")[0])
                    if any(private(part) for part in a.name.split(".")):
                        out.append(f"{rel}:{node.lineno}: import {a.name}")
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and private(node.attr)
                and node.attr not in CORE_TEST_HOOKS):
            base = node.value
            while isinstance(base, ast.Attribute):
                base = base.value
            if isinstance(base, ast.Name) and base.id in aliases:
                out.append(f"{rel}:{node.lineno}: {ast.unparse(node)}")
    return out


def test_no_module_uses_another_modules_private_names():
    files = sorted(SOURCE.rglob("*.py")) + sorted((REPO / "tests").rglob("*.py"))
    files = [f for f in files if "_bootstrap" not in f.parts]
    found = [use for f in files for use in _private_uses(f)]
    assert not found, "\n".join(found)
