"""summary.json's op rows carry XLA's program id, so the compilations of one jitted function
(same module and op names) can be told apart."""

from pathlib import Path

import fpgaprof
from fpgaprof.report import collect

TRACE = Path(__file__).resolve().parents[1] / "data" / "traces" / "mbirjax_sweep_32_64_run_h100.fpgaprof"


def test_op_rows_are_told_apart_by_program_id():
    items = collect(fpgaprof.load(str(TRACE)))["ops"]["items"]
    keys = [(r["module"], r["op"], r["program_id"]) for r in items if r["kernel_count"]]
    assert len(keys) == len(set(keys))
    # From the raw markers: jit_sort's `fusion` thunk ran 23 kernels, 603,368 ns, inside
    # XlaModule:#hlo_module=jit_sort,program_id=130518# and 189,063 ns in program 13257.
    sort = {r["program_id"]: r["total_s"] for r in items if (r["module"], r["op"]) == ("jit_sort", "fusion")}
    assert round(sort[130518] * 1e9) == 603368
    assert round(sort[13257] * 1e9) == 189063
