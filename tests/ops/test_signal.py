"""TFLite Micro's signal library ops (the audio front end's custom ops), each in a single-op model
built with tflite_writer (custom options as the flexbuffer map TFLM's kernels read), bit-exact with
the `tflite-micro` interpreter over several frames (5 for the stateful ones) on the host and the
Cortex-M4."""
import numpy as np
import pytest

from edgecc.tflite_writer import ModelBuilder
from opcheck import check_frames

TFLM = "tflite-micro"


def single(op, ins, outs, options, consts=()):
    """A model of one custom op: `ins` (name, shape, dtype) inputs, then `consts` arrays,
    `outs` (name, shape, dtype)."""
    mb = ModelBuilder()
    xs = [mb.tensor(name, shape, dt) for name, shape, dt in ins]
    cs = [mb.const(f"c{i}", c) for i, c in enumerate(consts)]
    ys = [mb.tensor(name, shape, dt) for name, shape, dt in outs]
    mb.op("CUSTOM:" + op, xs + cs, ys, options)
    return mb.finish(xs, ys)


@pytest.mark.parametrize("shape,shift", [((3, 16), 12), ((40,), 0), ((2, 2, 8), 15)])
def test_window(shape, shift):
    rng = np.random.default_rng(5000 + shape[-1])
    w = rng.integers(-32768, 32768, shape[-1]).astype(np.int16)
    check_frames(single("SignalWindow", [("x", shape, "int16")], [("y", shape, "int16")],
                        {"shift": shift}, [w]), TFLM)


@pytest.mark.parametrize("rows,size,step,frames,prefill", [
    (1, 8, 4, 1, True), (2, 10, 4, 3, True), (1, 6, 6, 2, False), (3, 25, 10, 2, True)])
def test_framer(rows, size, step, frames, prefill):
    """Stateful: the overlap carries from one run to the next (5 frames)."""
    shape = (rows, frames * step) if rows > 1 else (frames * step,)
    out = (*shape[:-1], frames, size)
    check_frames(single("SignalFramer", [("x", shape, "int16")],
                        [("y", out, "int16"), ("valid", (), "bool")],
                        {"frame_size": size, "frame_step": step, "prefill": prefill}),
                 TFLM, frames=5)


@pytest.mark.parametrize("shape,fft", [((2, 16), 16), ((24,), 32), ((3, 64), 64), ((1, 480), 512)])
def test_rfft(shape, fft):
    """KISS FFT's fixed-point real FFT (radix-4 and radix-2 stages), zero padding included."""
    check_frames(single("SignalRfft", [("x", shape, "int16")],
                        [("y", (*shape[:-1], fft + 2), "int16")], {"T": 7, "fft_length": fft}),
                 TFLM)


@pytest.mark.parametrize("bins,lo,hi", [(9, 0, 9), (33, 0, 33)])
def test_energy(bins, lo, hi):
    check_frames(single("SignalEnergy", [("x", (2 * bins,), "int16")], [("y", (bins,), "uint32")],
                        {"end_index": hi, "start_index": lo}), TFLM)


def mel_tables(rng, bins, channels):
    """Filter bank tables shaped like the audio front end's: channel i covers bins fs[i] ..
    fs[i] + wd[i], its weights at ws[i]; channel 0 is the unweighted-only scratch channel."""
    wd = rng.integers(1, 5, channels + 1).astype(np.int16)
    fs = np.minimum(np.cumsum(np.concatenate([[0], wd[:-1]])), bins - wd).astype(np.int16)
    ws = np.concatenate([[0], np.cumsum(wd[:-1])]).astype(np.int16)
    w = rng.integers(0, 4096, int(wd.sum())).astype(np.int16)
    return [w, (4096 - w).astype(np.int16), fs, ws, wd]


@pytest.mark.parametrize("bins,channels", [(33, 6), (257, 40)])
def test_filter_bank(bins, channels):
    rng = np.random.default_rng(5100 + channels)
    check_frames(single("SignalFilterBank", [("e", (bins,), "uint32")],
                        [("y", (channels,), "uint64")], {"num_channels": channels},
                        mel_tables(rng, bins, channels)), TFLM)


@pytest.mark.parametrize("shift", [0, 7])
def test_filter_bank_square_root(shift):
    check_frames(single("SignalFilterBankSquareRoot", [("x", (40,), "uint64")],
                        [("y", (40,), "uint32")], {}, [np.array(shift, np.int32)]), TFLM)


@pytest.mark.parametrize("bits,scale", [(0, 1600), (3, 1600), (0, 65535)])
def test_filter_bank_log(bits, scale):
    check_frames(single("SignalFilterBankLog", [("x", (40,), "uint32")], [("y", (40,), "int16")],
                        {"input_correction_bits": bits, "output_scale": scale}), TFLM)


@pytest.mark.parametrize("clamping", [False, True])
def test_filter_bank_spectral_subtraction(clamping):
    """Stateful: the noise estimate carries over 5 frames."""
    ch = 12
    opts = {"alternate_one_minus_smoothing": 15729, "alternate_smoothing": 655,
            "clamping": clamping, "min_signal_remaining": 655, "num_channels": ch,
            "one_minus_smoothing": 15073, "smoothing": 1311, "smoothing_bits": 10,
            "spectral_subtraction_bits": 14}
    check_frames(single("SignalFilterBankSpectralSubtraction", [("x", (ch,), "uint32")],
                        [("y", (ch,), "uint32"), ("noise", (ch,), "uint32")], opts), TFLM, frames=5)


@pytest.mark.parametrize("shift", [6, 12])
def test_pcan(shift):
    """Filter bank energies and a noise estimate as inputs, a random gain table (|v| < 2^13 so
    that the int32 polynomial cannot overflow, as the front end's real table)."""
    rng = np.random.default_rng(5200 + shift)
    lut = rng.integers(-8000, 8000, 125).astype(np.int16)
    mb = ModelBuilder()
    x, noise = mb.tensor("x", (24,), "uint32"), mb.tensor("noise", (24,), "uint32")
    table = mb.const("lut", lut)
    y = mb.tensor("y", (24,), "uint32")
    mb.op("CUSTOM:SignalPCAN", [x, noise, table], [y], {"snr_shift": shift})
    check_frames(mb.finish([x, noise], [y]), TFLM)


def test_audio_front_end_pipeline():
    """The audio front end as one model (framer -> window -> rfft -> energy -> filter bank ->
    square root -> spectral subtraction -> PCAN -> log), so each op meets the value ranges the
    one before produces; 5 frames carry the framer's and the noise estimate's state."""
    rng = np.random.default_rng(5300)
    size, step, fft, ch = 400, 160, 512, 40
    mb = ModelBuilder()
    x = mb.tensor("audio", (step,), "int16")
    frames, valid = mb.tensor("frames", (1, size), "int16"), mb.tensor("valid", (), "bool")
    mb.op("CUSTOM:SignalFramer", [x], [frames, valid],
          {"frame_size": size, "frame_step": step, "prefill": True})
    hann = (np.hanning(size) * 16384).astype(np.int16)
    win = mb.tensor("windowed", (1, size), "int16")
    mb.op("CUSTOM:SignalWindow", [frames, mb.const("hann", hann)], [win], {"shift": 12})
    spec = mb.tensor("spectrum", (1, fft + 2), "int16")
    mb.op("CUSTOM:SignalRfft", [win], [spec], {"T": 7, "fft_length": fft})
    flat = mb.tensor("flat", (fft + 2,), "int16")
    mb.op("RESHAPE", [spec, mb.const("shape", np.array([fft + 2], np.int32))], [flat],
          {"new_shape": [fft + 2]})
    energy = mb.tensor("energy", (fft // 2 + 1,), "uint32")
    mb.op("CUSTOM:SignalEnergy", [flat], [energy], {"end_index": fft // 2 + 1, "start_index": 0})
    tables = [mb.const(f"fb{i}", t) for i, t in enumerate(mel_tables(rng, fft // 2 + 1, ch))]
    fb = mb.tensor("fb", (ch,), "uint64")
    mb.op("CUSTOM:SignalFilterBank", [energy, *tables], [fb], {"num_channels": ch})
    root = mb.tensor("root", (ch,), "uint32")
    mb.op("CUSTOM:SignalFilterBankSquareRoot", [fb, mb.const("bits", np.array(7, np.int32))],
          [root])
    clean, noise = mb.tensor("clean", (ch,), "uint32"), mb.tensor("noise", (ch,), "uint32")
    mb.op("CUSTOM:SignalFilterBankSpectralSubtraction", [root], [clean, noise],
          {"alternate_one_minus_smoothing": 15729, "alternate_smoothing": 655,
           "clamping": False, "min_signal_remaining": 655, "num_channels": ch,
           "one_minus_smoothing": 15073, "smoothing": 1311, "smoothing_bits": 10,
           "spectral_subtraction_bits": 14})
    lut = rng.integers(-8000, 8000, 125).astype(np.int16)
    gained = mb.tensor("gained", (ch,), "uint32")
    mb.op("CUSTOM:SignalPCAN", [clean, noise, mb.const("lut", lut)], [gained], {"snr_shift": 6})
    logs = mb.tensor("log", (ch,), "int16")
    mb.op("CUSTOM:SignalFilterBankLog", [gained], [logs],
          {"input_correction_bits": 3, "output_scale": 1600})
    check_frames(mb.finish([x], [logs, root]), TFLM, frames=5)


@pytest.mark.parametrize("shape,delay", [((8,), 3), ((2, 4), 6), ((3, 5), 5)])
def test_delay(shape, delay):
    """Stateful: delays shorter than, longer than and equal to the frame, over 5 frames."""
    check_frames(single("SignalDelay", [("x", shape, "int16")], [("y", shape, "int16")],
                        {"delay_length": delay}), TFLM, frames=5)


@pytest.mark.parametrize("dtype,code,shape,step", [("int16", 7, (3, 8), 3), ("int16", 7, (2, 2, 6), 6),
                                                    ("float32", 0, (2, 10), 4)])
def test_overlap_add(dtype, code, shape, step):
    """Stateful: int16 saturates (full-range frames overflow often), float32 adds; 5 frames."""
    out = (*shape[:-2], shape[-2] * step)
    check_frames(single("SignalOverlapAdd", [("x", shape, dtype)], [("y", out, dtype)],
                        {"T": code, "frame_step": step}), TFLM, frames=5)


@pytest.mark.parametrize("ch,left", [(4, 2), (10, 0), (3, 5)])
def test_stacker(ch, left):
    """Stateful: the first vector padded to the left context, then a sliding stack; 5 frames."""
    check_frames(single("SignalStacker", [("x", (ch,), "int16")],
                        [("y", (ch * (left + 1),), "int16"), ("valid", (), "bool")],
                        {"num_channels": ch, "stacker_left_context": left,
                         "stacker_right_context": 0, "stacker_step": 1}), TFLM, frames=5)


@pytest.mark.parametrize("op,ins,outs,options,words", [
    ("SignalFramer", [("x", (8,), "int16")], [("y", (2, 8), "int16"), ("v", (), "bool")],
     {"frame_size": 8, "frame_step": 4, "prefill": False}, "prefill must be set"),
    ("SignalStacker", [("x", (4,), "int16")], [("y", (20,), "int16"), ("v", (), "bool")],
     {"num_channels": 4, "stacker_left_context": 2, "stacker_right_context": 2,
      "stacker_step": 1}, "stacker_right_context must be 0"),
    ("SignalRfft", [("x", (48,), "int16")], [("y", (50,), "int16")],
     {"T": 7, "fft_length": 48}, "fft_length must be a power of two"),
    ("SignalFramer", [("x", (8,), "int16")], [("y", (2, 8), "int16"), ("v", (), "bool")],
     {"frame_size": 2**31 - 1, "frame_step": 4, "prefill": True}, "over edgecc's limit"),
])
def test_refused_in_one_line(op, ins, outs, options, words, tmp_path, capsys):
    """Settings whose TFLite Micro output no generated code can match, or that edgecc lacks,
    are refused naming the op and the setting (exit 2)."""
    from test_internal_errors import run_cli
    model = tmp_path / "m.tflite"
    model.write_bytes(single(op, ins, outs, options))
    code, _, err = run_cli(["compile", model, "-o", tmp_path / "out"], capsys)
    assert code == 2 and len(err.splitlines()) == 1, err
    assert f"CUSTOM:{op}" in err and "op 0" in err and words in err, err
