"""The scratch policy: with 'fit', an optimized kernel whose scratch would grow the arena gives way
to the portable kernel, so the arena stays at the activations' own peak."""
from edgecc.options import CompileOptions
from edgecc.compiler import compile_model, scratch_budget
from edgecc.plan.liveness import buffers_for, lower_bound
from edgecc.lower import alias_ops, stream_saving
from edgecc.targets import get_target

from conftest import shared_model


def test_fit_keeps_arena_at_activation_peak():
    m = shared_model("kws_ref_model")
    c = compile_model(m, get_target("cortex-m4"), "kws", CompileOptions(scratch="fit"))
    peak = lower_bound(buffers_for(c.graph, {}, alias_ops()))
    assert c.plan.arena <= peak + 16
    budget = scratch_budget(c.graph)
    for lw in c.lowered:
        i = c.graph.nodes.index(lw.node)
        # a streaming kernel's scratch may also take what its output overlapping its input frees
        free = budget[i] + (stream_saving(c.graph, i, lw.kernel.streams) if lw.kernel.streams else 0)
        assert lw.kernel.scratch <= free or lw.template_path.startswith("c/"), lw.template_path


def test_any_takes_fastest_kernel_and_fit_says_why():
    m = shared_model("kws_ref_model")
    fast = compile_model(m, get_target("cortex-m4"), "kws", CompileOptions(scratch="any"))
    fit = compile_model(m, get_target("cortex-m4"), "kws", CompileOptions(scratch="fit"))
    swapped = [lw for lw in fit.lowered if "dead at this step" in lw.kernel.reason]
    assert fast.plan.arena >= fit.plan.arena
    if swapped:  # a kernel's scratch did not fit in the bytes dead at its step
        assert fast.plan.arena > fit.plan.arena
    else:  # every SIMD kernel's scratch fits in dead bytes (streaming overlaps): same kernels
        assert [lw.template_path for lw in fit.lowered] == [lw.template_path for lw in fast.lowered]
        assert fast.plan.arena == fit.plan.arena
