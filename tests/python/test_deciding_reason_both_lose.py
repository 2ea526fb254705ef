"""The answer's "why" when the host link alone and the card alone each lose against the GPU:
both are named, the larger first, so that "host link alone" does not send the user to keep the
data on the card (inputs_cross_link=False) when the card by itself is slower still."""

from __future__ import annotations

from pathlib import Path

import pytest

TRACES = Path(__file__).resolve().parents[1] / "data" / "traces"
XLA = TRACES / "mbirjax073_parallel_128_xla_h200.fpgaprof"


def _row(**kw):
    row = {
        "verdict": "no",
        "gpu_time_ns": 1e6,
        "transfer_s": 3e-3,
        "transfer_low_s": 2e-3,
        "transfer_high_s": 4e-3,
        "card_time_s": 50e-3,
        "card_time_low_s": 30e-3,
        "card_time_high_s": 90e-3,
        "restructured_card_time_s": 20e-3,
        "restructured_card_time_low_s": 9e-3,
        "restructured_card_time_high_s": 60e-3,
        "card_limit": "random access",
        "estimate_basis": "static",
    }
    row.update(kw)
    return row


def test_both_losing_alone_are_named_the_larger_first():
    from fpgaprof.api.fpga import deciding_reason

    # card (restructured, 20 ms) far slower than the link (3 ms): the card comes first, and
    # without the as-compiled time's "random access" limit, which is not this time's
    assert deciding_reason(_row()) == (
        "card 20.00 ms (9.0-60 ms) and host link 3.00 ms (2.0-4.0 ms), each alone slower than"
        " 1.00 ms on the GPU"
    )
    # the link larger: it comes first
    row = _row(
        restructured_card_time_s=1.5e-3,
        restructured_card_time_low_s=1.2e-3,
        restructured_card_time_high_s=2e-3,
    )
    assert deciding_reason(row) == (
        "host link 3.00 ms (2.0-4.0 ms) and card 1.50 ms (1.2-2.0 ms), each alone slower than"
        " 1.00 ms on the GPU"
    )
    # the card's fast end reaches below the GPU time: the link alone decides, as before
    row = _row(restructured_card_time_low_s=0.5e-3)
    assert deciding_reason(row) == (
        "card 20.00 ms (0.50-60 ms) + link 3.00 ms (2.0-4.0 ms) vs 1.00 ms on the GPU"
        " (the host link alone is slower)"
    )


@pytest.mark.skipif(not XLA.exists(), reason="saved H200 trace not present")
def test_the_h200_back_projection_names_the_card_it_would_still_lose_on():
    """MBIRJAX 0.7.3's XLA back projection at 128 on a V80 (the answer's best card): the link
    takes 4.45 ms (3.1 ms at its fast end), the restructured card 22.59 ms (9.7 ms), the GPU
    2.88 ms. The reason read "host link alone 4.45 ms ... vs 2.88 ms"; with the data on the
    card the verdict stays "no", decided by the card."""
    import fpgaprof
    from fpgaprof.api.fpga import deciding_reason

    prof = fpgaprof.load(str(XLA))
    (row,) = [r for r in prof.fpga_candidates("versal-v80", by="region") if r["region"] == "back_project"]
    why = deciding_reason(row)
    assert why.startswith("card 22.59 ms (9.7-69 ms) and host link 4.45 ms"), why
    assert why.endswith("each alone slower than 2.88 ms on the GPU"), why
    (resident,) = [
        r
        for r in prof.fpga_candidates("versal-v80", by="region", inputs_cross_link=False)
        if r["region"] == "back_project"
    ]
    assert resident["verdict"] == "no"
    assert deciding_reason(resident).startswith("card 22.59 ms")


def test_a_split_design_says_what_stays_on_the_gpu_and_what_the_link_carries_for_it():
    """A region whose kernels without a cost stay on the GPU (kept_gpu_s, inside card_time_s)
    and whose link carries hand-offs between them and the card (handoff_bytes, inside
    transfer_bytes): the reason says how much of each, so that a "no" is read as a split
    design's. By hand: 0.6 ms kept of 1.0 ms on the GPU = 60.0 %; 30 of 40 MB = 75.0 %."""
    from fpgaprof.api.fpga import deciding_reason

    row = _row(
        restructured_card_time_s=0.9e-3,
        restructured_card_time_low_s=0.8e-3,
        restructured_card_time_high_s=2e-3,
        kept_gpu_s=0.6e-3,
        handoff_bytes=30e6,
        transfer_bytes=40e6,
    )
    assert deciding_reason(row) == (
        "card 0.900 ms (0.80-2.0 ms), 600.0 µs of it kept on the GPU (60.0 % of the GPU time has no"
        " cost) + link 3.00 ms (2.0-4.0 ms), 75.0 % of its bytes hand-offs with the kernels kept on"
        " the GPU vs 1.00 ms on the GPU (the host link alone is slower)"
    )
    # nothing kept, nothing handed off: the reason as before
    plain = _row(restructured_card_time_s=0.9e-3, restructured_card_time_low_s=0.8e-3,
                 restructured_card_time_high_s=2e-3, kept_gpu_s=0.0, handoff_bytes=0.0, transfer_bytes=40e6)
    assert deciding_reason(plain) == (
        "card 0.900 ms (0.80-2.0 ms) + link 3.00 ms (2.0-4.0 ms) vs 1.00 ms on the GPU"
        " (the host link alone is slower)"
    )


PALLAS = TRACES / "mbirjax073_parallel_128_pallas_h200.fpgaprof"


@pytest.mark.skipif(not PALLAS.exists(), reason="saved H200 trace not present")
def test_the_pallas_forward_projections_answer_says_its_projector_kernels_stay_on_the_gpu():
    """MBIRJAX 0.7.3's Pallas forward projection at 128 on an H200: its Pallas and sort custom
    calls have no static cost, so the region's "card" keeps them on the GPU; the answer's reason
    says how much of its time that is and how much of the link is hand-offs with them."""
    import fpgaprof

    prof = fpgaprof.load(str(PALLAS))
    (row,) = [r for r in prof.fpga_candidates("versal-v80", by="region") if r["region"] == "forward_project"]
    share = row["kept_gpu_s"] / (row["gpu_time_ns"] * 1e-9)
    hand = row["handoff_bytes"] / row["transfer_bytes"]
    assert 0.5 < share < 1 and 0.5 < hand < 1  # most of both: the answer must say so
    # the answer's row for it (the first lines of the summary), with the best card's figures
    line = next(ln for ln in prof.summary().splitlines() if ln.strip().startswith("forward_project"))
    assert "versal-v80" in line
    assert f"({100 * share:.1f} % of the GPU time has no cost)" in line, line
    assert f"{100 * hand:.1f} % of its bytes hand-offs with the kernels kept on the GPU" in line, line
