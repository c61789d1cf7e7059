"""What TFLite Micro's signal library ops (the custom ops "Signal*" of its audio front end,
signal/micro/kernels/ in tflite-micro) share in edgecc.

Owns: reading their options (the flexbuffer map the importer turned into attrs), the type checks
they repeat, and the OpDef builder that names them as the importer does ("CUSTOM:SignalWindow").
Each op's meaning is its own module (edgecc/ops/signal_<op>.py); the oracle is the `tflite-micro`
package's interpreter, which registers these kernels itself. Stateful ones (framer, delay,
overlap-add, spectral subtraction) keep their state as a variable input the importer adds
(OpDef.state), so it lives in the arena's state region and `name_reset()` restores it, as TFLite
Micro's Reset does.
"""
from __future__ import annotations

from typing import Callable

from edgecc.ir import DType, Graph, Node
from edgecc.ops import OpDef, in_type, out_type

PREFIX = "CUSTOM:"


def opt(n: Node, key: str, default=0) -> int:
    """An integer option of the node (a flexbuffer map entry), `default` when absent."""
    v = n.attrs.get(key, default)
    return int(v) if isinstance(v, (int, float, bool)) else default


def flag(n: Node, key: str, default: bool = False) -> bool:
    v = n.attrs.get(key, default)
    return bool(v) if isinstance(v, (int, bool)) else default


def types_are(ins: tuple[DType, ...], outs: tuple[DType, ...]) -> Callable[[Graph, Node], bool]:
    """A constraint: the node's inputs (those given) and outputs have exactly these types."""
    words = lambda ts: ", ".join(t.value[0] for t in ts)  # noqa: E731

    def check(g: Graph, n: Node) -> bool:
        own = [v for v in n.inputs if v is not None and not g.value(v).variable]
        return (len(own) == len(ins) and len(n.outputs) == len(outs)
                and all(g.type(v).dtype == t for v, t in zip(own, ins))
                and all(g.type(v).dtype == t for v, t in zip(n.outputs, outs)))
    check.__doc__ = f"inputs must be {words(ins)} and outputs {words(outs)}"
    return check


def last_dim(g: Graph, n: Node, i: int = 0, out: bool = False) -> int:
    t = out_type(g, n, i) if out else in_type(g, n, i)
    return int(t.shape[-1]) if t.shape else 1


def signal_op(name: str, *args, **kw) -> OpDef:
    """The OpDef of the signal op `name` (e.g. "SignalWindow"), oracle TFLite Micro."""
    return OpDef(PREFIX + name, *args, reference_oracle="TFLite Micro (its signal library)", **kw)
