#!/usr/bin/python3
"""Writes the recurrent reference models (run by hand; no test or build runs it).

Models (PyTorch modules exported by torch.onnx.export, opset 13; torch.manual_seed per model):
  gru_enc_bB   Embedding + 1-layer GRU encoder; input 'tokens' int64 [seq, B];
               outputs 'output' [seq, B, hidden], 'hidden' [1, B, hidden]
  gru_dec_bB   one decoder step: GRU on cat(embedded, context) [1, B, hidden+embed] from
               'hidden', then Linear(cat(embedded, h, context): hidden*2+embed -> vocab);
               inputs 'embedded' [1, B, embed], 'context' [1, B, hidden], 'hidden' [1, B, hidden];
               outputs 'logits' [B, vocab], 'hidden_out' [1, B, hidden]
  lstm_cls     Embedding + 2-layer bidirectional LSTM + Linear on the last layer's final
               states; input 'tokens' int64 [seq, 2]; outputs 'logits' [2, 5], 'output'
               [seq, 2, 2*hidden]
  rnn_tanh     1-layer bidirectional tanh RNN with an initial state; inputs 'x' [seq, 2, in],
               'h0' [2, 2, hidden]; outputs 'output' [seq, 2, 2*hidden], 'h_n' [2, 2, hidden]
  rnn_relu     2-layer ReLU RNN (activations 'Relu') with an initial state; inputs 'x'
               [seq, 3, in], 'h0' [2, 3, hidden]; outputs 'output', 'h_n'
  packed_gru   bidirectional GRU over pack_padded_sequence(x, lens), padded back: inputs 'x'
               [seq, 4, embed], 'lens' int64 [4] (a run-time sequence_lens); outputs 'output'
               [seq, 4, 2*hidden] (zero past each length), 'h_n' [2, 4, hidden]
Each NAME.onnx comes with NAME.in.INPUT.bin (numpy default_rng(seed), tokens uniform in the
vocabulary) and NAME.out.OUTPUT.bin (PyTorch's outputs under torch.no_grad()): raw
little-endian C order, float32 (tokens int64).

  --size small  (default) small sizes for the tests, into tests/data/rnn (committed)
  --size full   the issue's sizes (GRU embed 256, hidden 512, seq 32, vocab 8000 at batch 1
                and 16; LSTM embed 128, hidden 256, seq 64; RNN hidden 256, seq 64) into
                bench/rnn (git-ignored), for benchmarks

Needs python3-torch, python3-onnx, python3-numpy (Debian 12):
  /usr/bin/python3 scripts/gen_rnn.py [--size small|full] [--out DIR] [NAME ...]
"""
import argparse
import os

import numpy as np
import torch
from torch import nn

SIZES = {
    "small": dict(vocab=40, gru_e=16, gru_h=24, gru_t=6, batches=(1, 3), lstm_e=12, lstm_h=16, lstm_t=9,
                  rnn_in=10, rnn_h=12, rnn_t=5),
    "full": dict(vocab=8000, gru_e=256, gru_h=512, gru_t=32, batches=(1, 16), lstm_e=128, lstm_h=256, lstm_t=64,
                 rnn_in=128, rnn_h=256, rnn_t=64),
}


class GruEncoder(nn.Module):
    def __init__(self, vocab, e, h):
        super().__init__()
        self.emb = nn.Embedding(vocab, e)
        self.gru = nn.GRU(e, h)

    def forward(self, tokens):
        return self.gru(self.emb(tokens))


class GruDecoderStep(nn.Module):
    def __init__(self, vocab, e, h):
        super().__init__()
        self.gru = nn.GRU(e + h, h)
        self.out = nn.Linear(2 * h + e, vocab)

    def forward(self, embedded, context, hidden):
        y, h = self.gru(torch.cat((embedded, context), dim=2), hidden)
        logits = self.out(torch.cat((embedded.squeeze(0), y.squeeze(0), context.squeeze(0)), dim=1))
        return logits, h


class LstmClassifier(nn.Module):
    def __init__(self, vocab, e, h, classes=5):
        super().__init__()
        self.emb = nn.Embedding(vocab, e)
        self.lstm = nn.LSTM(e, h, num_layers=2, bidirectional=True)
        self.fc = nn.Linear(2 * h, classes)

    def forward(self, tokens):
        y, (h, c) = self.lstm(self.emb(tokens))
        return self.fc(torch.cat((h[-2], h[-1]), dim=1)), y


class TanhRnn(nn.Module):
    def __init__(self, i, h):
        super().__init__()
        self.rnn = nn.RNN(i, h, nonlinearity="tanh", bidirectional=True)

    def forward(self, x, h0):
        return self.rnn(x, h0)


class ReluRnn(nn.Module):
    def __init__(self, i, h):
        super().__init__()
        self.rnn = nn.RNN(i, h, num_layers=2, nonlinearity="relu")

    def forward(self, x, h0):
        return self.rnn(x, h0)


class PackedGru(nn.Module):
    """A bidirectional GRU over a padded batch whose lengths are an input (sorted, longest
    first, as pack_padded_sequence wants them), padded back to seq_len: rows past a length are
    zero, and each direction's final state is the one its sequence ends with."""

    def __init__(self, i, h):
        super().__init__()
        self.gru = nn.GRU(i, h, bidirectional=True)

    def forward(self, x, lens):
        y, h = self.gru(nn.utils.rnn.pack_padded_sequence(x, lens))
        return nn.utils.rnn.pad_packed_sequence(y, total_length=x.shape[0])[0], h


def export(out, name, model, inputs, in_names, out_names, seed):
    import onnx

    model.eval()
    path = os.path.join(out, name + ".onnx")
    with torch.no_grad():
        torch.onnx.export(model, tuple(torch.from_numpy(x) for x in inputs), path, opset_version=13,
                          input_names=in_names, output_names=out_names)
        refs = model(*(torch.from_numpy(x) for x in inputs))
    onnx.checker.check_model(onnx.load(path), full_check=True)
    for n, x in zip(in_names, inputs):
        x.tofile(os.path.join(out, "%s.in.%s.bin" % (name, n)))
    for n, y in zip(out_names, refs):
        y.numpy().astype(np.float32).tofile(os.path.join(out, "%s.out.%s.bin" % (name, n)))
    print("%s: seed %d, inputs %s, outputs %s" % (name, seed, [x.shape for x in inputs], [tuple(y.shape) for y in refs]))


def names(size):
    """The model names gen_rnn.py writes at size (a key of SIZES)."""
    b = SIZES[size]["batches"]
    return ["gru_enc_b%d" % x for x in b] + ["gru_dec_b%d" % x for x in b] + ["lstm_cls", "rnn_tanh", "rnn_relu",
                                                                               "packed_gru"]


def seeded(seed):
    """Seeds PyTorch (the weights) and returns numpy's generator for the inputs."""
    torch.manual_seed(seed)
    return np.random.default_rng(seed)


def build(name, size):
    """(model, inputs, input names, output names, seed) of model `name` at `size`, with the weights
    and inputs main() exports (torch.manual_seed and numpy's default_rng(seed) per model)."""
    s = SIZES[size]
    if name.startswith("gru_enc_b") or name.startswith("gru_dec_b"):
        b = int(name[len("gru_enc_b"):])
        seed = (10 if name.startswith("gru_enc") else 20) + b
        rng = seeded(seed)
        if name.startswith("gru_enc"):
            m = GruEncoder(s["vocab"], s["gru_e"], s["gru_h"])
            tokens = rng.integers(0, s["vocab"], (s["gru_t"], b)).astype(np.int64)
            return m, [tokens], ["tokens"], ["output", "hidden"], seed
        m = GruDecoderStep(s["vocab"], s["gru_e"], s["gru_h"])
        ins = [rng.standard_normal((1, b, s["gru_e"])).astype(np.float32),
               rng.standard_normal((1, b, s["gru_h"])).astype(np.float32),
               rng.standard_normal((1, b, s["gru_h"])).astype(np.float32)]
        return m, ins, ["embedded", "context", "hidden"], ["logits", "hidden_out"], seed
    if name == "lstm_cls":
        rng = seeded(30)
        m = LstmClassifier(s["vocab"], s["lstm_e"], s["lstm_h"])
        return m, [rng.integers(0, s["vocab"], (s["lstm_t"], 2)).astype(np.int64)], ["tokens"], ["logits", "output"], 30
    if name in ("rnn_tanh", "rnn_relu"):
        tanh = name == "rnn_tanh"
        seed, b = (40, 2) if tanh else (50, 3)
        rng = seeded(seed)
        m = (TanhRnn if tanh else ReluRnn)(s["rnn_in"], s["rnn_h"])
        # h0 [2, b, hidden]: two directions of one layer (tanh), two layers of one direction (relu)
        ins = [rng.standard_normal((s["rnn_t"], b, s["rnn_in"])).astype(np.float32),
               rng.standard_normal((2, b, s["rnn_h"])).astype(np.float32)]
        return m, ins, ["x", "h0"], ["output", "h_n"], seed
    if name == "packed_gru":
        rng = seeded(60)
        t, b = s["gru_t"], 4
        m = PackedGru(s["gru_e"], s["gru_h"])
        lens = np.array([t, t - 1, t // 2 + 1, 1], dtype=np.int64)
        ins = [rng.standard_normal((t, b, s["gru_e"])).astype(np.float32), lens]
        return m, ins, ["x", "lens"], ["output", "h_n"], 60
    raise KeyError(name)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", choices=sorted(SIZES), default="small")
    ap.add_argument("--out")
    ap.add_argument("names", nargs="*", help="only these models (default: all)")
    args = ap.parse_args()
    out = args.out or os.path.join(here, "..", "tests/data/rnn" if args.size == "small" else "bench/rnn")
    os.makedirs(out, exist_ok=True)
    torch.set_num_threads(1)
    for name in args.names or names(args.size):
        m, ins, in_names, out_names, seed = build(name, args.size)
        export(out, name, m, ins, in_names, out_names, seed)

if __name__ == "__main__":
    main()
