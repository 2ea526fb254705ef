"""Where a gather inside a fusion reads card memory (docs/fpga-model.md, "What an op asks of
the card"): one that reads a slice of a fused parameter reads it at random, as one that reads
the parameter itself does (MBIRJAX's forward projection gathers rows of a slice of its table);
one of an array computed on chip from scalars reads nothing; one of what inner gathers compute
evaluates them at each element it takes (MBIRJAX's cone back projection). Expected figures come
from the HLO's shapes."""

from fpgaprof import fpga

GATHER = """HloModule m

fused {
  p0 = f32[%(rows)d,128]{1,0} parameter(0)
  %(slice)s
  idx = s32[100000,1]{1,0} parameter(1)
  ROOT g = f32[100000,1,128]{2,1,0} gather(%(src)s, idx), offset_dims={1,2}, collapsed_slice_dims={}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,128}
}

ENTRY e {
  a = f32[%(rows)d,128]{1,0} parameter(0)
  i = s32[100000,1]{1,0} parameter(1)
  ROOT f = f32[100000,1,128]{2,1,0} fusion(a, i), kind=kLoop, calls=fused
}
"""


def _op(text):
    return fpga.estimate_hlo(text, target="alveo-u55c").to_pandas().iloc[0]


def test_a_gather_through_a_slice_of_a_parameter_is_random_traffic():
    direct = _op(GATHER % dict(rows=8192, slice="", src="p0"))
    sliced = _op(GATHER % dict(
        rows=12644, src="s",
        slice="s = f32[8192,128]{1,0} slice(p0), slice={[4452:12644], [0:128]}"))
    # 100,000 accesses of one 128-float row (512 B): 51.2 MB gathered, either way.
    assert direct["random_bytes"] == 100000 * 512
    assert sliced["random_bytes"] == direct["random_bytes"]
    # The same accesses cost the same card time (the sliced one streams its 4 MiB slice and
    # the indices as the direct one streams its table and indices).
    assert sliced["card_time_s"] >= 0.99 * direct["card_time_s"]


def test_mbirjax_forward_projection_counts_its_gather_of_a_slice():
    """input_scatter_fusion of the H200 XLA trace: gather.17.5 reads f32[3145728,1,128] rows of
    slice.9.1 (a slice of param_4.58) and scatter.6.1 adds 3,145,728 rows of 128 floats into
    its target (read and write). From the HLO's shapes: 3,145,728 x 512 B gathered plus
    2 x 3,145,728 x 512 B scattered."""
    import os

    import fpgaprof

    path = os.path.join(os.path.dirname(__file__), "..", "data", "traces",
                        "mbirjax073_parallel_128_xla_h200.fpgaprof")
    df = fpgaprof.load(path).fpga_candidates("alveo-u55c").to_pandas()
    (row,) = df[(df["op"] == "input_scatter_fusion")
                & (df["module"] == "jit__sparse_forward_project")].itertuples()
    assert row.random_bytes == 3 * 3_145_728 * 512


def test_a_gather_of_an_iota_clamped_by_scalar_parameters_reads_no_card_memory():
    # clamp takes scalar bounds in HLO (no broadcast): the gathered array is computed on chip
    # from two scalars, as the iota alone is; no random card traffic.
    text = """HloModule m

fused {
  lo = s32[] parameter(0)
  hi = s32[] parameter(1)
  io = s32[8192,128]{1,0} iota(), iota_dimension=0
  c = s32[8192,128]{1,0} clamp(lo, io, hi)
  idx = s32[100000,1]{1,0} parameter(2)
  ROOT g = s32[100000,1,128]{2,1,0} gather(c, idx), offset_dims={1,2}, collapsed_slice_dims={}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,128}
}

ENTRY e {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  i = s32[100000,1]{1,0} parameter(2)
  ROOT f = s32[100000,1,128]{2,1,0} fusion(a, b, i), kind=kLoop, calls=fused
}
"""
    assert _op(text)["random_bytes"] == 0


def test_mbirjax_cone_back_projection_evaluates_its_inner_gathers_per_element_taken():
    """input_cosine_transpose_fusion of the H200 cone XLA trace: gathers 59, 60 and 61 each
    take 8,388,608 single floats of add.348.11, a sum of gathers 53, 54 and 55 of the volume
    (param_5.476), which is never materialized: each element taken reads one float of the
    volume per inner gather. From the HLO's shapes: 3 x 8,388,608 x 3 reads of 4 B."""
    import os

    import fpgaprof

    path = os.path.join(os.path.dirname(__file__), "..", "data", "traces",
                        "mbirjax073_cone_64_xla_counters_h200.fpgaprof")
    df = fpgaprof.load(path).fpga_candidates("alveo-u55c").to_pandas()
    (row,) = df[df["op"] == "input_cosine_transpose_fusion"].itertuples()
    assert row.random_bytes == 3 * 8_388_608 * 3 * 4


def test_mbirjax_gather_through_a_broadcast_table_reads_the_table():
    """loop_gather_select_fusion of the H200 Pallas trace at 128³: gather.24.1 takes
    f32[4855296,1,1] single floats of a [128,37932] view of a [128,3,12644] array computed per
    element from broadcasts, one of them of param_1.483 (f32[128,12644], dimensions {0,2}
    kept). Its indices are the rows (an iota) and data-dependent columns, which land on the
    kept dimension 2: each float taken reads param_1.483 at random. From the HLO's shapes:
    4,855,296 reads of 4 B, from an array of 128 x 12644 x 4 B. The 128-float vectors
    broadcast along the rows only are walked in order, not at random."""
    import os

    import fpgaprof

    path = os.path.join(os.path.dirname(__file__), "..", "data", "traces",
                        "mbirjax073_parallel_128_pallas_h200.fpgaprof")
    df = fpgaprof.load(path).fpga_candidates("alveo-u55c").to_pandas()
    (row,) = df[df["op"] == "loop_gather_select_fusion"].itertuples()
    assert row.random_bytes == 4_855_296 * 4
