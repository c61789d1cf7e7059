"""`edgecc verify MODEL --inputs FILE`: validation on the user's own samples.

Owns: reading samples (.npy with a leading sample axis, .npz with one array per model input, or a
folder of .npy files, one sample each; float data for an integer input is quantized with the
input's scale and zero point as the model's format does, as NAME.h's quantize helpers and
edgecc.run do: edgecc/numerics/io.py), running all of them
through one build of the generated C (one QEMU boot for all, unless their bytes do not fit the
board's flash: then one build per chunk), comparing each sample with the reference, and the
metrics: samples bit-exact, max |difference| per output and, for float outputs, RMSE and cosine
similarity.
"""
from __future__ import annotations

import time
import zipfile
from pathlib import Path

import numpy as np

from edgecc.build.boards import board_options, default_board
from edgecc.build.harness import parse_frames
from edgecc.compiler import compile_model
from edgecc.errors import EdgeccError
from edgecc.fileio import check_regular, work_folder
from edgecc.ir import Graph
from edgecc.numerics.io import HALF_AWAY, quantizable, quantize, rounding_of
from edgecc.options import CompileOptions
from edgecc.progress import progress as bar
from edgecc.verify import VerifyResult, _build_and_run
from edgecc.verify.reference import run_reference

MAX_SAMPLES_BYTES = 1 << 31  # an --inputs file (uncompressed), checked from its headers first
CHUNK_BYTES = 8 << 20  # embedded sample bytes per build at most (host; boards: half their flash)


def _as_samples(a: np.ndarray, shape: tuple[int, ...], what: str) -> list[np.ndarray]:
    a = np.asarray(a)
    shape = tuple(shape)
    if a.shape == shape:
        return [a]
    if a.shape[1:] == shape:
        return list(a)
    if shape and shape[0] == 1 and a.shape[1:] == shape[1:]:
        return [x.reshape(shape) for x in a]
    raise EdgeccError(f"{what}: shape {list(a.shape)} is neither the input's {list(shape)} nor "
                      f"[N, {', '.join(map(str, shape))}]")


def _convert(x: np.ndarray, g: Graph, v: str, what: str, rounding: str) -> np.ndarray:
    t = g.type(v)
    if x.dtype == t.dtype.np:
        return x
    if x.dtype.kind == "f" and t.dtype.np.kind in "iu" and quantizable(t):
        return quantize(x, t, rounding)
    if x.dtype.kind in "iu" and t.dtype.np.kind == x.dtype.kind:
        info = np.iinfo(t.dtype.np)
        if x.size and (x.min() < info.min or x.max() > info.max):
            raise EdgeccError(f"{what}: values outside {t.dtype.np.name}")
        return x.astype(t.dtype.np)
    raise EdgeccError(f"{what}: dtype {x.dtype} does not match the input's {t.dtype.np.name}")


def load_samples(path: str | Path, g: Graph, rounding: str = HALF_AWAY) -> list[list[np.ndarray]]:
    """Samples as lists of input arrays, in the model's input order (float data for a quantized
    input quantized by `rounding`, the model format's rule)."""
    path = Path(path)
    ins = list(g.inputs)
    if not path.exists():
        raise EdgeccError(f"{path}: no such file or folder")
    if path.is_dir():
        files = sorted(path.glob("*.npy"))
        if not files:
            raise EdgeccError(f"{path}: no .npy files in the folder")
        per_input = [[x for f in files for x in _as_samples(_load(f), g.type(ins[0]).shape, str(f))]]
    elif path.suffix == ".npz":
        _check_npz(path)
        with np.load(path, allow_pickle=False) as z:
            keys = list(z.keys())
            per_input = []
            for k, v in enumerate(ins):
                label = g.value(v).label
                key = label if label in keys else (keys[k] if len(keys) == len(ins) else None)
                if key is None:
                    raise EdgeccError(f"{path}: no array for input {k} ('{label}'); arrays: "
                                      f"{', '.join(keys)}")
                per_input.append(_as_samples(z[key], g.type(v).shape, f"{path}[{key}]"))
    elif path.suffix == ".npy":
        per_input = [_as_samples(_load(path), g.type(ins[0]).shape, str(path))]
    else:
        raise EdgeccError(f"{path}: --inputs takes a .npy, a .npz or a folder of .npy files")
    if len(per_input) != len(ins):
        raise EdgeccError(f"{path}: the model has {len(ins)} inputs: give a .npz with one array "
                          f"per input")
    counts = {len(p) for p in per_input}
    if len(counts) != 1:
        raise EdgeccError(f"{path}: the inputs have different sample counts {sorted(counts)}")
    return [[_convert(np.ascontiguousarray(per_input[k][s]), g, v, f"{path} sample {s}",
                      rounding)
             for k, v in enumerate(ins)] for s in range(counts.pop())]


def _claimed_bytes(fp, what: str) -> int:
    """Bytes of the array whose .npy header `fp` is at (read from the header alone)."""
    try:
        version = np.lib.format.read_magic(fp)
        read = {(1, 0): np.lib.format.read_array_header_1_0,
                (2, 0): np.lib.format.read_array_header_2_0}.get(version)
        if read is None:
            raise ValueError(f"unsupported .npy version {version}")
        shape, _, dtype = read(fp)
    except (ValueError, OSError, EOFError) as e:
        raise EdgeccError(f"{what}: not a numpy array file ({e})") from None
    if dtype.hasobject:
        raise EdgeccError(f"{what}: holds Python objects, not numbers")
    n = dtype.itemsize
    for d in shape:
        n *= int(d)
    return n


def _check_npy(f: Path) -> None:
    """A regular .npy file whose header claims no more bytes than the file has (a header claiming
    2^40 elements is refused before numpy allocates them)."""
    size = check_regular(f, "--inputs", MAX_SAMPLES_BYTES)
    with open(f, "rb") as fp:
        claimed = _claimed_bytes(fp, str(f))
        if claimed > size - fp.tell():
            raise EdgeccError(f"{f}: the header claims {claimed:,} bytes of data, the file has "
                              f"{max(size - fp.tell(), 0):,}")


def _check_npz(path: Path) -> None:
    """A regular .npz whose members, uncompressed, stay under MAX_SAMPLES_BYTES together and
    whose headers claim no more than each member holds (no zip bomb, no 2^40-element claim)."""
    check_regular(path, "--inputs", MAX_SAMPLES_BYTES)
    try:
        with zipfile.ZipFile(path) as z:
            infos = z.infolist()
            if sum(i.file_size for i in infos) > MAX_SAMPLES_BYTES:
                raise EdgeccError(f"{path}: over {MAX_SAMPLES_BYTES:,} bytes uncompressed")
            for i in infos:
                with z.open(i) as fp:
                    claimed = _claimed_bytes(fp, f"{path}[{i.filename}]")
                    if claimed > i.file_size:
                        raise EdgeccError(f"{path}[{i.filename}]: the header claims "
                                          f"{claimed:,} bytes of data, the member has "
                                          f"{i.file_size:,}")
    except (zipfile.BadZipFile, OSError, EOFError) as e:
        raise EdgeccError(f"{path}: not a .npz file ({e})") from None


def _load(f: Path) -> np.ndarray:
    _check_npy(f)
    try:
        return np.load(f, allow_pickle=False)
    except ValueError as e:
        raise EdgeccError(f"{f}: not a numpy array file ({e})") from None


def compare(got: list[list[bytes]], ref: list[list[np.ndarray]]) -> dict:
    """Per-output metrics over all samples, and which samples are bit-exact."""
    exact = [all(g == np.ascontiguousarray(r).tobytes() for g, r in zip(gs, rs))
             for gs, rs in zip(got, ref)]
    outputs = []
    for i in range(len(ref[0]) if ref else 0):
        dt = ref[0][i].dtype
        a = np.stack([np.frombuffer(gs[i], dtype=dt) for gs in got]).astype(np.float64)
        b = np.stack([np.ascontiguousarray(rs[i]).ravel() for rs in ref]).astype(np.float64)
        row = dict(index=i, dtype=dt.name, max_abs_diff=float(np.max(np.abs(a - b), initial=0)))
        if dt.kind == "f":
            row["rmse"] = float(np.sqrt(np.mean((a - b) ** 2))) if a.size else 0.0
            na, nb = np.linalg.norm(a, axis=1), np.linalg.norm(b, axis=1)
            cos = np.where(na * nb > 0, np.sum(a * b, axis=1) / np.maximum(na * nb, 1e-300),
                           (na == nb).astype(np.float64))
            row["cosine_mean"], row["cosine_min"] = float(np.mean(cos)), float(np.min(cos))
        outputs.append(row)
    return dict(samples=len(exact), samples_exact=sum(exact), outputs=outputs,
                mismatched_samples=[s for s, e in enumerate(exact) if not e][:20])


def _chunks(samples: list[list[np.ndarray]], board) -> list[list[list[np.ndarray]]]:
    limit = CHUNK_BYTES
    if board is not None and board.bare_metal and board.flash_bytes:
        limit = min(limit, board.flash_bytes // 2)
    out, cur, size = [], [], 0
    for s in samples:
        b = sum(x.nbytes for x in s)
        if cur and size + b > limit:
            out.append(cur)
            cur, size = [], 0
        cur.append(s)
        size += b
    return out + ([cur] if cur else [])


def verify_inputs(model: str | Path, target, inputs: str | Path, cc: str | None = None,
                  name: str = "model", keep: Path | None = None, board=None,
                  progress: bool = False, options: CompileOptions | None = None):
    """verify on the samples of `inputs`: a VerifyResult whose extra holds the metrics."""
    t0 = time.perf_counter()
    c = compile_model(model, target, name, board_options(options, board))
    samples = load_samples(inputs, c.graph, rounding_of(model))
    if not samples:
        raise EdgeccError(f"{inputs}: no samples")
    n_out = len(c.graph.outputs)
    ref, oracle = [], ""
    for s in bar(samples, desc="reference", unit="sample", json_mode=not progress):
        r, oracle = run_reference(model, s, n_out)
        ref.append(r)
    t_ref = time.perf_counter() - t0
    got: list[list[bytes]] = []
    chunks = _chunks(samples, board if board is not None else _default_board(target))
    with work_folder(keep, "edgecc-verify-") as top:
        for k, chunk in enumerate(chunks):
            work = top / f"chunk{k}"
            work.mkdir(parents=True, exist_ok=True)
            text = _build_and_run(c, work, None, target, cc, trace=False, board=board,
                                  frames=chunk, reset_each=True)
            outs, done = parse_frames(text)
            if not done or len(outs) != len(chunk) or any(len(o) != n_out for o, _ in outs):
                raise EdgeccError(f"{Path(model).name}: the program did not finish normally")
            got += [[o[i] for i in range(n_out)] for o, _ in outs]
    m = compare(got, ref)
    bad = sum(sum(a != b for a, b in zip(g, np.ascontiguousarray(r).tobytes()))
              for gs, rs in zip(got, ref) for g, r in zip(gs, rs))
    total = sum(np.asarray(r).nbytes for rs in ref for r in rs)
    m.update(builds=len(chunks), reference_seconds=round(t_ref, 3),
             seconds=round(time.perf_counter() - t0, 3), inputs=str(inputs))
    m["planned_peak_bytes"] = c.plan.lower_bound
    return VerifyResult(str(model), target.name, bad == 0, bad, total, c.plan.arena,
                        c.plan.model_lower_bound, c.weights_bytes, None, oracle, extra=m)


def _default_board(target):
    if target.runner == "host":
        return None
    return default_board(target.name)
