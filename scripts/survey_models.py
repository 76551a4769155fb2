#!/usr/bin/python3
"""Exports common torchvision backbones, small transformer layers and small audio (1-D conv),
super-resolution (PReLU, pixel shuffle) and GroupNorm blocks to ONNX (opset 13, random
weights, small inputs) for the op survey: `weft show MODEL.onnx` on each says which ops weft
refuses. Run by hand (needs Debian's python3-torch, python3-torchvision); never by the tests.

    /usr/bin/python3 scripts/survey_models.py OUT_DIR [NAME ...]
    for f in OUT_DIR/*.onnx; do build/rel/weft show "$f" >/dev/null; done

Per model it also writes the input it exported with and PyTorch's outputs for it (raw
little-endian, C order): NAME.in.in0.bin, NAME.in.in1.bin ... (the names `weft bench model`
looks for next to a model: it times with them instead of zeros, which matters for TopK and
other data-dependent ops) and NAME.out0.bin ...; the ONNX inputs and outputs are named in0,
in1, ... and out0, out1, ..., so
    build/rel/weft run OUT_DIR/NAME.onnx --input in0=OUT_DIR/NAME.in.in0.bin --output DIR/
writes DIR/out0.bin ... to compare with them; `survey_models.py --check build/rel/weft OUT_DIR
[NAME ...]` does that for every model and prints the largest relative difference;
`survey_models.py --time-pytorch NAME [THREADS]` prints PyTorch's median time for one model.
"""
import math
import os
import sys

import torch
import torchvision
from torch import nn

torch.manual_seed(0)
tvm = torchvision.models


class BertLayer(nn.Module):
    """A BERT-style encoder layer written out: token embedding + positions, Q/K/V projections,
    heads by reshape/transpose, additive mask from an attention mask, erf GELU, LayerNorm."""

    def __init__(self, vocab=100, d=64, heads=4, ff=128, seq=16):
        super().__init__()
        self.h, self.dh = heads, d // heads
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Parameter(torch.randn(1, seq, d))
        self.q, self.k, self.v, self.o = (nn.Linear(d, d) for _ in range(4))
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.f1, self.f2 = nn.Linear(d, ff), nn.Linear(ff, d)

    def forward(self, ids, mask):
        x = self.tok(ids) + self.pos
        b, s, d = x.shape

        def heads(t):
            return t.view(b, s, self.h, self.dh).transpose(1, 2)

        q, k, v = heads(self.q(x)), heads(self.k(x)), heads(self.v(x))
        att = q @ k.transpose(-1, -2) / math.sqrt(self.dh)
        att = att.masked_fill(mask[:, None, None, :] == 0, -1e4)
        ctx = att.softmax(-1) @ v
        x = self.ln1(x + self.o(ctx.transpose(1, 2).reshape(b, s, d)))
        return self.ln2(x + self.f2(nn.functional.gelu(self.f1(x))))


def fpn():
    from torchvision.models.detection.backbone_utils import resnet_fpn_backbone

    body = resnet_fpn_backbone(backbone_name="resnet18", weights=None, trainable_layers=5)

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.b = body

        def forward(self, x):
            return tuple(self.b(x).values())

    return M()


def decoder():
    """A segmentation-style decoder head: two stride-2 ConvTranspose, bilinear x2, reflect Pad."""
    return nn.Sequential(
        nn.ConvTranspose2d(64, 32, 4, stride=2, padding=1), nn.ReLU(),
        nn.ConvTranspose2d(32, 16, 4, stride=2, padding=1), nn.ReLU(),
        nn.Upsample(scale_factor=2, mode="bilinear"), nn.ReflectionPad2d(1), nn.Conv2d(16, 3, 3))


class Seg(nn.Module):
    """A torchvision segmentation model returning its "out" tensor."""

    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, x):
        return self.m(x)["out"]


def audio_cnn():
    """An M5-style raw-audio classifier: 1-D convs with BatchNorm, ReLU and max pooling, a global
    average over time, a Linear; the 1-D ops of speech and sensor models."""
    def block(ci, co, k, s=1):
        return [nn.Conv1d(ci, co, k, stride=s, padding=k // 2), nn.BatchNorm1d(co), nn.ReLU(), nn.MaxPool1d(4)]
    return nn.Sequential(*block(1, 32, 79, 4), *block(32, 32, 3), *block(32, 64, 3), *block(64, 64, 3),
                         nn.AdaptiveAvgPool1d(1), nn.Flatten(), nn.Linear(64, 35))


def super_res():
    """An ESPCN-style x3 super-resolution net: convs with PReLU, then a pixel shuffle
    (DepthToSpace)."""
    return nn.Sequential(nn.Conv2d(1, 64, 5, padding=2), nn.PReLU(64), nn.Conv2d(64, 32, 3, padding=1),
                         nn.PReLU(32), nn.Conv2d(32, 9, 3, padding=1), nn.PixelShuffle(3))


class GNBlock(nn.Module):
    """A diffusion-UNet-style residual block: GroupNorm, SiLU, 3x3 convs, a 1x1 skip, then an
    ELU head; GroupNorm exports as Reshape + InstanceNormalization + Reshape + Mul + Add."""

    def __init__(self, ci=32, co=64):
        super().__init__()
        self.n1, self.c1 = nn.GroupNorm(8, ci), nn.Conv2d(ci, co, 3, padding=1)
        self.n2, self.c2 = nn.GroupNorm(8, co), nn.Conv2d(co, co, 3, padding=1)
        self.skip = nn.Conv2d(ci, co, 1)

    def forward(self, x):
        h = self.c1(nn.functional.silu(self.n1(x)))
        h = self.c2(nn.functional.silu(self.n2(h)))
        return nn.functional.elu(h + self.skip(x))


class CausalLM(nn.Module):
    """A GPT-style decoder: token + position embeddings, two pre-norm blocks with causal
    self-attention (a triu mask, masked_fill, softmax) and a GELU MLP, tied output projection."""

    def __init__(self, vocab=200, d=64, heads=4, seq=24, layers=2):
        super().__init__()
        self.tok, self.pos, self.h = nn.Embedding(vocab, d), nn.Parameter(torch.randn(seq, d) * 0.02), heads
        self.ln = nn.ModuleList(nn.LayerNorm(d) for _ in range(2 * layers + 1))
        self.qkv = nn.ModuleList(nn.Linear(d, 3 * d) for _ in range(layers))
        self.proj = nn.ModuleList(nn.Linear(d, d) for _ in range(layers))
        self.mlp = nn.ModuleList(nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
                                 for _ in range(layers))

    def forward(self, ids):
        b, t = ids.shape
        x = self.tok(ids) + self.pos[:t]
        mask = torch.triu(torch.ones(t, t, dtype=torch.bool), 1)
        for i in range(len(self.qkv)):
            q, k, v = self.qkv[i](self.ln[2 * i](x)).split(x.shape[-1], -1)
            q, k, v = (z.reshape(b, t, self.h, -1).transpose(1, 2) for z in (q, k, v))
            a = (q @ k.transpose(-1, -2)) / (q.shape[-1] ** 0.5)
            a = a.masked_fill(mask, float("-inf")).softmax(-1)
            x = x + self.proj[i]((a @ v).transpose(1, 2).reshape(b, t, -1))
            x = x + self.mlp[i](self.ln[2 * i + 1](x))
        return self.ln[-1](x) @ self.tok.weight.t()


class TCN(nn.Module):
    """A temporal convolutional network: causal dilated 1-D convs (dilation 1, 2, 4, 8) with
    weight norm, ReLU and residual 1x1 convs, a linear head on the last step."""

    def __init__(self, ci=16, ch=48, k=3):
        super().__init__()
        self.convs, self.skips, self.k = nn.ModuleList(), nn.ModuleList(), k
        for i, d in enumerate((1, 2, 4, 8)):
            c = ci if i == 0 else ch
            self.convs.append(nn.utils.weight_norm(nn.Conv1d(c, ch, k, dilation=d)))
            self.skips.append(nn.Conv1d(c, ch, 1) if c != ch else nn.Identity())
        self.head = nn.Linear(ch, 10)

    def forward(self, x):
        for i, (c, s) in enumerate(zip(self.convs, self.skips)):
            d = 2 ** i
            x = torch.relu(c(nn.functional.pad(x, ((self.k - 1) * d, 0))) + s(x))
        return self.head(x[:, :, -1])


class Conformer(nn.Module):
    """A Conformer block on 51 frames: half-step feed-forward (SiLU), multi-head self-attention
    (nn.MultiheadAttention), a conv module (pointwise conv, GLU, depthwise conv1d, BatchNorm,
    SiLU, pointwise), a second half-step feed-forward, LayerNorm."""

    def __init__(self, d=64, heads=4, k=15):
        super().__init__()
        ff = lambda: nn.Sequential(nn.LayerNorm(d), nn.Linear(d, 4 * d), nn.SiLU(), nn.Linear(4 * d, d))
        self.ff1, self.ff2 = ff(), ff()
        self.ln_att, self.att = nn.LayerNorm(d), nn.MultiheadAttention(d, heads, batch_first=True)
        self.ln_conv = nn.LayerNorm(d)
        self.pw1, self.dw = nn.Conv1d(d, 2 * d, 1), nn.Conv1d(d, d, k, padding=k // 2, groups=d)
        self.bn, self.pw2 = nn.BatchNorm1d(d), nn.Conv1d(d, d, 1)
        self.ln_out = nn.LayerNorm(d)

    def forward(self, x):
        x = x + 0.5 * self.ff1(x)
        a = self.ln_att(x)
        x = x + self.att(a, a, a, need_weights=False)[0]
        c = self.ln_conv(x).transpose(1, 2)
        c = nn.functional.glu(self.pw1(c), dim=1)
        c = self.pw2(nn.functional.silu(self.bn(self.dw(c))))
        x = x + c.transpose(1, 2)
        x = x + 0.5 * self.ff2(x)
        return self.ln_out(x)


class UNet(nn.Module):
    """A three-level U-Net: conv-BN-ReLU pairs, max pooling down, stride-2 ConvTranspose up,
    skip connections by concatenation, a 1x1 conv to 2 classes."""

    def __init__(self, c=16):
        super().__init__()
        two = lambda a, b: nn.Sequential(nn.Conv2d(a, b, 3, padding=1), nn.BatchNorm2d(b), nn.ReLU(),
                                         nn.Conv2d(b, b, 3, padding=1), nn.BatchNorm2d(b), nn.ReLU())
        self.d1, self.d2, self.mid = two(3, c), two(c, 2 * c), two(2 * c, 4 * c)
        self.u2, self.c2 = nn.ConvTranspose2d(4 * c, 2 * c, 2, 2), two(4 * c, 2 * c)
        self.u1, self.c1 = nn.ConvTranspose2d(2 * c, c, 2, 2), two(2 * c, c)
        self.out = nn.Conv2d(c, 2, 1)

    def forward(self, x):
        a = self.d1(x)
        b = self.d2(nn.functional.max_pool2d(a, 2))
        m = self.mid(nn.functional.max_pool2d(b, 2))
        b = self.c2(torch.cat([self.u2(m), b], 1))
        return self.out(self.c1(torch.cat([self.u1(b), a], 1)))


class StyleNet(nn.Module):
    """A fast-neural-style transfer net: reflection padding, InstanceNorm (affine), residual
    blocks, nearest x2 upsampling before convs, a 9x9 output conv."""

    def __init__(self):
        super().__init__()
        def conv(a, b, k, s=1, up=False):
            layers = [nn.Upsample(scale_factor=2, mode="nearest")] if up else []
            return nn.Sequential(*layers, nn.ReflectionPad2d(k // 2), nn.Conv2d(a, b, k, s),
                                 nn.InstanceNorm2d(b, affine=True), nn.ReLU())
        self.down = nn.Sequential(conv(3, 16, 9), conv(16, 32, 3, 2), conv(32, 64, 3, 2))
        self.res = nn.ModuleList(nn.Sequential(conv(64, 64, 3), nn.ReflectionPad2d(1), nn.Conv2d(64, 64, 3),
                                               nn.InstanceNorm2d(64, affine=True)) for _ in range(3))
        self.up = nn.Sequential(conv(64, 32, 3, up=True), conv(32, 16, 3, up=True))
        self.out = nn.Sequential(nn.ReflectionPad2d(4), nn.Conv2d(16, 3, 9))

    def forward(self, x):
        x = self.down(x)
        for r in self.res:
            x = x + r(x)
        return self.out(self.up(x))


class PointNet(nn.Module):
    """A PointNet classifier on 1000 points: an input transform net (3x3 matrix from a shared
    MLP, max over points, FCs; applied with bmm), shared 1-D conv MLP 3->64->128->512 with
    BatchNorm, global max over points, FC head."""

    def __init__(self):
        super().__init__()
        mlp = lambda *c: nn.Sequential(*[m for a, b in zip(c, c[1:]) for m in (nn.Conv1d(a, b, 1), nn.BatchNorm1d(b), nn.ReLU())])
        self.t_mlp, self.t_fc = mlp(3, 64, 128, 256), nn.Sequential(nn.Linear(256, 64), nn.ReLU(), nn.Linear(64, 9))
        self.mlp = mlp(3, 64, 128, 512)
        self.head = nn.Sequential(nn.Linear(512, 128), nn.BatchNorm1d(128), nn.ReLU(), nn.Linear(128, 10))

    def forward(self, x):
        t = self.t_fc(self.t_mlp(x).amax(2)).view(-1, 3, 3) + torch.eye(3)
        x = torch.bmm(t, x)
        return self.head(self.mlp(x).amax(2))


class GCN(nn.Module):
    """A two-layer graph convolution on 100 nodes and 400 fixed edges: messages gathered by
    source index, summed into destinations with scatter_add (ScatterElements, reduction add),
    degree normalisation, ReLU, then a mean over nodes."""

    def __init__(self, n=100, e=400, ci=16, ch=32):
        super().__init__()
        g = torch.Generator().manual_seed(3)
        self.register_buffer("src", torch.randint(0, n, (e,), generator=g))
        self.register_buffer("dst", torch.randint(0, n, (e,), generator=g))
        self.l1, self.l2, self.n = nn.Linear(ci, ch), nn.Linear(ch, ch), n

    def conv(self, x, lin):
        h = lin(x)
        deg = torch.zeros(self.n).scatter_add(0, self.dst, torch.ones(self.dst.shape[0])) + 1
        idx = self.dst[:, None].expand(-1, h.shape[1])
        agg = torch.zeros_like(h).scatter_add(0, idx, h[self.src])
        return (agg + h) / deg[:, None]

    def forward(self, x):
        return self.conv(torch.relu(self.conv(x, self.l1)), self.l2).mean(0)


class Yolo(nn.Module):
    """A YOLOv5-style detector at 96x96: Conv-BN-SiLU, C3-like blocks with concatenated branches,
    an SPPF (three chained 5x5 stride-1 max pools), nearest upsampling, and a head that reshapes
    to (anchors, grid, 5 + classes), applies sigmoid and decodes boxes against a grid."""

    def __init__(self, nc=8):
        super().__init__()
        cbs = lambda a, b, k=1, s=1: nn.Sequential(nn.Conv2d(a, b, k, s, k // 2, bias=False), nn.BatchNorm2d(b), nn.SiLU())
        self.stem = nn.Sequential(cbs(3, 16, 3, 2), cbs(16, 32, 3, 2), cbs(32, 64, 3, 2), cbs(64, 128, 3, 2))
        self.a, self.b, self.m = cbs(128, 64), cbs(128, 64), nn.Sequential(cbs(64, 64), cbs(64, 64, 3))
        self.cat = cbs(128, 128)
        self.sppf_in, self.sppf_out = cbs(128, 64), cbs(256, 128)
        self.up_conv = cbs(128 + 64, 64, 3)
        self.no, self.na = 5 + nc, 3
        self.head = nn.Conv2d(64, self.no * self.na, 1)

    def forward(self, x):
        x = self.stem[:3](x)
        p3 = x
        x = self.stem[3](x)
        x = self.cat(torch.cat([self.m(self.a(x)) + self.a(x), self.b(x)], 1))
        y = self.sppf_in(x)
        y1 = nn.functional.max_pool2d(y, 5, 1, 2)
        y2 = nn.functional.max_pool2d(y1, 5, 1, 2)
        y3 = nn.functional.max_pool2d(y2, 5, 1, 2)
        x = self.sppf_out(torch.cat([y, y1, y2, y3], 1))
        x = self.up_conv(torch.cat([nn.functional.interpolate(x, scale_factor=2.0, mode="nearest"), p3], 1))
        b, _, h, w = x.shape
        p = self.head(x).view(b, self.na, self.no, h, w).permute(0, 1, 3, 4, 2).sigmoid()
        gy, gx = torch.meshgrid(torch.arange(h, dtype=torch.float32), torch.arange(w, dtype=torch.float32), indexing="ij")
        grid = torch.stack((gx, gy), 2).view(1, 1, h, w, 2)
        xy = (p[..., :2] * 2 - 0.5 + grid) * 8.0
        wh = (p[..., 2:4] * 2) ** 2 * 16.0
        return torch.cat((xy, wh, p[..., 4:]), -1).view(b, -1, self.no)


class Raft(nn.Module):
    """torchvision's RAFT (small) on a pair of 128x128 frames with 3 flow updates (at 64x64 PyTorch itself gives NaN): correlation
    pyramid, grid_sample lookups, ConvGRU updates, convex upsampling (opset 16)."""

    def __init__(self):
        super().__init__()
        self.m = tvm.optical_flow.raft_small()

    def forward(self, a, b):
        return self.m(a, b, num_flow_updates=3)[-1]


class Mixer(nn.Module):
    """An MLP-Mixer on 64x64 images with 8x8 patches: token-mixing MLPs (on the transposed
    token axis, 64 tokens) and channel-mixing MLPs, GELU, LayerNorm, mean pooling."""

    def __init__(self, d=128, depth=4):
        super().__init__()
        self.patch = nn.Conv2d(3, d, 8, 8)
        mlp = lambda n, h: nn.Sequential(nn.Linear(n, h), nn.GELU(), nn.Linear(h, n))
        self.tok = nn.ModuleList(mlp(64, 96) for _ in range(depth))
        self.ch = nn.ModuleList(mlp(d, 4 * d) for _ in range(depth))
        self.ln = nn.ModuleList(nn.LayerNorm(d) for _ in range(2 * depth + 1))
        self.head = nn.Linear(d, 100)

    def forward(self, x):
        x = self.patch(x).flatten(2).transpose(1, 2)
        for i in range(len(self.tok)):
            x = x + self.tok[i](self.ln[2 * i](x).transpose(1, 2)).transpose(1, 2)
            x = x + self.ch[i](self.ln[2 * i + 1](x))
        return self.head(self.ln[-1](x).mean(1))


class Crnn(nn.Module):
    """A CRNN text recognizer (OCR): a small conv stack over a 32x100 line image, the height
    pooled away, then a 2-layer bidirectional LSTM over the 25 columns and a per-step Linear
    to 37 classes (CTC logits)."""

    def __init__(self):
        super().__init__()
        c = lambda a, b: (nn.Conv2d(a, b, 3, padding=1), nn.BatchNorm2d(b), nn.ReLU())
        self.cnn = nn.Sequential(*c(1, 32), nn.MaxPool2d(2), *c(32, 64), nn.MaxPool2d(2), *c(64, 128),
                                 nn.MaxPool2d((2, 1)), *c(128, 128), nn.AdaptiveAvgPool2d((1, None)))
        self.rnn = nn.LSTM(128, 96, num_layers=2, bidirectional=True)
        self.fc = nn.Linear(192, 37)

    def forward(self, x):
        f = self.cnn(x).squeeze(2).permute(2, 0, 1)  # [W, N, C]
        return self.fc(self.rnn(f)[0])


class SpeechGru(nn.Module):
    """A DeepSpeech-style acoustic model: a strided 2-D conv over an 80-bin spectrogram of 120
    frames, then 3 bidirectional GRU layers (hidden 160) summed per direction pair, a Linear
    to 29 characters and log_softmax."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(1, 16, (11, 5), stride=(2, 2), padding=(5, 2)), nn.Hardtanh(0, 20))
        self.gru = nn.GRU(16 * 40, 160, num_layers=3, bidirectional=True)
        self.fc = nn.Linear(320, 29)

    def forward(self, x):
        f = self.conv(x)  # [N, 16, 40, 60]
        n, c, h, w = f.shape
        f = f.reshape(n, c * h, w).permute(2, 0, 1)
        return self.fc(self.gru(f)[0]).log_softmax(-1)


class LstmBatchFirst(nn.Module):
    """A 2-layer LSTM with batch_first=True over 4 sequences of 50 steps (exported with
    Transposes around the LSTM nodes), a Linear on every step."""

    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(40, 128, num_layers=2, batch_first=True)
        self.fc = nn.Linear(128, 12)

    def forward(self, x):
        y, (h, c) = self.lstm(x)
        return self.fc(y), h, c


class RnnRelu(nn.Module):
    """nn.RNN(nonlinearity='relu'), 2 layers, with an initial state."""

    def __init__(self):
        super().__init__()
        self.rnn = nn.RNN(24, 48, num_layers=2, nonlinearity="relu")

    def forward(self, x, h0):
        return self.rnn(x, h0)


class PackedLstm(nn.Module):
    """An LSTM over a padded batch of 3 sequences of lengths 20, 13, 7 (pack_padded_sequence:
    the export passes sequence_lens), the final hidden state to a Linear."""

    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(16, 32, bidirectional=True)
        self.fc = nn.Linear(64, 4)

    def forward(self, x):
        lens = torch.tensor([20, 13, 7])
        p = nn.utils.rnn.pack_padded_sequence(x, lens)
        _, (h, _) = self.lstm(p)
        return self.fc(torch.cat((h[0], h[1]), 1))


class PackedGruIO(nn.Module):
    """A bidirectional GRU over a padded batch whose lengths are a model input (sorted, as
    pack_padded_sequence wants them), padded back with pad_packed_sequence: every output row
    past a sequence's length is zero."""

    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(16, 24, bidirectional=True)

    def forward(self, x, lens):
        p = nn.utils.rnn.pack_padded_sequence(x, lens)
        y, h = self.gru(p)
        return nn.utils.rnn.pad_packed_sequence(y, total_length=x.shape[0])[0], h


class AttnDecoder(nn.Module):
    """One step of a Bahdanau/Luong-style attention decoder: GRUCell on the embedded token and
    the previous context, dot-product attention over 40 encoder states, Linear to a
    vocabulary of 3000 from cat(h, context)."""

    def __init__(self, vocab=3000, e=128, h=256):
        super().__init__()
        self.emb, self.cell = nn.Embedding(vocab, e), nn.GRUCell(e + h, h)
        self.out = nn.Linear(2 * h, vocab)

    def forward(self, tok, ctx, h, enc):
        h = self.cell(torch.cat((self.emb(tok), ctx), 1), h)  # [B, h]
        a = torch.softmax(torch.einsum("bh,tbh->bt", h, enc), 1)
        ctx = torch.einsum("bt,tbh->bh", a, enc)
        return self.out(torch.cat((h, ctx), 1)).log_softmax(1), h, ctx


class LstmCellLoop(nn.Module):
    """An LSTMCell unrolled 12 steps in Python (the export holds 12 copies of the cell's
    MatMuls and gates), as hand-written decoders export."""

    def __init__(self):
        super().__init__()
        self.cell = nn.LSTMCell(32, 64)

    def forward(self, x):
        h = c = torch.zeros(x.shape[1], 64)
        ys = []
        for t in range(x.shape[0]):
            h, c = self.cell(x[t], (h, c))
            ys.append(h)
        return torch.stack(ys)


class Seq2SeqTransformer(nn.Module):
    """nn.Transformer (2 encoder, 2 decoder layers, d 64) with a causal target mask and a
    source key-padding mask given as a bool input."""

    def __init__(self):
        super().__init__()
        self.t = nn.Transformer(64, 4, 2, 2, 128, dropout=0.0)

    def forward(self, src, tgt, pad):
        mask = self.t.generate_square_subsequent_mask(tgt.shape[0])
        return self.t(src, tgt, tgt_mask=mask, src_key_padding_mask=pad, memory_key_padding_mask=pad)


class ClipText(nn.Module):
    """A CLIP-style text encoder: token and position embeddings, pre-LN layers with a causal
    mask and GELU, the feature at each sequence's highest token id (x[arange, ids.argmax]),
    a projection and an L2 normalisation."""

    def __init__(self, vocab=300, d=64, seq=16):
        super().__init__()
        self.tok, self.pos = nn.Embedding(vocab, d), nn.Parameter(torch.randn(seq, d) * 0.1)
        layer = nn.TransformerEncoderLayer(d, 4, 128, dropout=0.0, activation="gelu", norm_first=True)
        self.enc = nn.TransformerEncoder(layer, 2)
        self.ln, self.proj = nn.LayerNorm(d), nn.Parameter(torch.randn(d, 32) * 0.1)
        self.register_buffer("mask", torch.full((seq, seq), float("-inf")).triu(1))

    def forward(self, ids):
        x = (self.tok(ids) + self.pos).transpose(0, 1)
        x = self.ln(self.enc(x, mask=self.mask).transpose(0, 1))
        f = x[torch.arange(x.shape[0]), ids.argmax(-1)] @ self.proj
        return f / f.norm(dim=-1, keepdim=True)


class Wav2VecFE(nn.Module):
    """A wav2vec2-style front end: strided Conv1d stack with GroupNorm(64, 64) and GELU, a
    LayerNorm and projection, a grouped positional Conv1d (kernel 32, 8 groups, its last
    output dropped), then a transformer layer."""

    def __init__(self):
        super().__init__()
        convs = [nn.Conv1d(1, 64, 10, 5, bias=False), nn.GroupNorm(64, 64), nn.GELU()]
        for _ in range(4):
            convs += [nn.Conv1d(64, 64, 3, 2, bias=False), nn.GELU()]
        self.fe = nn.Sequential(*convs)
        self.ln, self.proj = nn.LayerNorm(64), nn.Linear(64, 96)
        self.pos = nn.Conv1d(96, 96, 32, padding=16, groups=8)
        self.ln2 = nn.LayerNorm(96)
        self.layer = nn.TransformerEncoderLayer(96, 4, 192, dropout=0.0, activation="gelu", batch_first=True)

    def forward(self, wav):
        x = self.proj(self.ln(self.fe(wav[:, None]).transpose(1, 2)))
        p = nn.functional.gelu(self.pos(x.transpose(1, 2))[:, :, :-1]).transpose(1, 2)
        return self.layer(self.ln2(x + p))


class SdBlock(nn.Module):
    """A Stable-Diffusion-style UNet block: sinusoidal timestep embedding, ResBlock with
    GroupNorm(32) and SiLU, spatial self-attention and cross-attention to a context, GEGLU
    feed-forward, nearest 2x upsampling and a conv."""

    def __init__(self, c=64, ctx=32):
        super().__init__()
        self.temb = nn.Sequential(nn.Linear(64, 128), nn.SiLU(), nn.Linear(128, c))
        self.n1, self.c1 = nn.GroupNorm(32, c), nn.Conv2d(c, c, 3, padding=1)
        self.n2, self.c2 = nn.GroupNorm(32, c), nn.Conv2d(c, c, 3, padding=1)
        self.n3, self.pin = nn.GroupNorm(32, c), nn.Conv2d(c, c, 1)
        self.l1, self.l2, self.l3 = nn.LayerNorm(c), nn.LayerNorm(c), nn.LayerNorm(c)
        self.sa = nn.MultiheadAttention(c, 4, batch_first=True)
        self.ca = nn.MultiheadAttention(c, 4, kdim=ctx, vdim=ctx, batch_first=True)
        self.ff1, self.ff2 = nn.Linear(c, 4 * c * 2), nn.Linear(4 * c, c)
        self.pout, self.up = nn.Conv2d(c, c, 1), nn.Conv2d(c, c, 3, padding=1)

    def forward(self, x, t, ctx):
        half = 32
        f = torch.exp(-math.log(10000.0) * torch.arange(half, dtype=torch.float32) / half)
        e = t[:, None] * f[None]
        e = self.temb(torch.cat((torch.sin(e), torch.cos(e)), 1))
        h = self.c1(nn.functional.silu(self.n1(x))) + e[:, :, None, None]
        x = x + self.c2(nn.functional.silu(self.n2(h)))
        b, c, hh, ww = x.shape
        s = self.pin(self.n3(x)).flatten(2).transpose(1, 2)
        q = self.l1(s)
        s = s + self.sa(q, q, q, need_weights=False)[0]
        s = s + self.ca(self.l2(s), ctx, ctx, need_weights=False)[0]
        a, g = self.ff1(self.l3(s)).chunk(2, -1)
        s = s + self.ff2(a * nn.functional.gelu(g))
        x = x + self.pout(s.transpose(1, 2).reshape(b, c, hh, ww))
        return self.up(nn.functional.interpolate(x, scale_factor=2.0, mode="nearest"))


class MobileVitBlock(nn.Module):
    """A MobileViT block: local 3x3 and 1x1 convs, 2x2 patches unfolded by reshape/transpose
    into tokens, two transformer layers, folded back, fused with the input by a 3x3 conv."""

    def __init__(self, c=32, d=64):
        super().__init__()
        self.local = nn.Sequential(nn.Conv2d(c, c, 3, padding=1), nn.BatchNorm2d(c), nn.SiLU(), nn.Conv2d(c, d, 1))
        layer = nn.TransformerEncoderLayer(d, 4, 128, dropout=0.0, activation="gelu", batch_first=True,
                                           norm_first=True)
        self.tr = nn.TransformerEncoder(layer, 2)
        self.proj = nn.Conv2d(d, c, 1)
        self.fuse = nn.Conv2d(2 * c, c, 3, padding=1)

    def forward(self, x):
        y = self.local(x)
        b, d, h, w = y.shape
        p = y.reshape(b, d, h // 2, 2, w // 2, 2).permute(0, 3, 5, 2, 4, 1).reshape(b * 4, h * w // 4, d)
        p = self.tr(p)
        y = p.reshape(b, 2, 2, h // 2, w // 2, d).permute(0, 5, 3, 1, 4, 2).reshape(b, d, h, w)
        return self.fuse(torch.cat((x, self.proj(y)), 1))


class WhisperEnc(nn.Module):
    """A Whisper-style audio encoder: two Conv1d with GELU (the second stride 2) over 80 mel
    bins, sinusoidal positions, two pre-LN attention layers over 300 frames, a final LN."""

    def __init__(self, d=128, frames=300):
        super().__init__()
        self.c1, self.c2 = nn.Conv1d(80, d, 3, padding=1), nn.Conv1d(d, d, 3, 2, padding=1)
        pos = torch.arange(frames)[:, None] * torch.exp(-math.log(10000) * torch.arange(d // 2) / (d // 2 - 1))
        self.register_buffer("pos", torch.cat((pos.sin(), pos.cos()), 1))
        layer = nn.TransformerEncoderLayer(d, 4, 4 * d, dropout=0.0, activation="gelu", batch_first=True,
                                           norm_first=True)
        self.enc, self.ln = nn.TransformerEncoder(layer, 2), nn.LayerNorm(d)

    def forward(self, mel):
        x = nn.functional.gelu(self.c2(nn.functional.gelu(self.c1(mel))))
        return self.ln(self.enc(x.transpose(1, 2) + self.pos))


class T5Layer(nn.Module):
    """A T5 encoder layer: RMSNorm (pow, mean, rsqrt), attention without scaling plus a
    relative position bias from bucketed distances (abs, log, min, where, an embedding
    gather computed in the graph), ReLU feed-forward without biases."""

    def __init__(self, d=64, heads=4, buckets=32, max_dist=128):
        super().__init__()
        self.h, self.nb, self.md = heads, buckets, max_dist
        self.q, self.k, self.v, self.o = (nn.Linear(d, d, bias=False) for _ in range(4))
        self.rel = nn.Embedding(buckets, heads)
        self.w1, self.w2 = nn.Linear(d, 4 * d, bias=False), nn.Linear(4 * d, d, bias=False)
        self.g1, self.g2 = nn.Parameter(torch.ones(d) + 0.1 * torch.randn(d)), nn.Parameter(torch.ones(d))

    def rms(self, x, g):
        return g * x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)

    def bias(self, n):
        pos = torch.arange(n)
        rel = pos[None, :] - pos[:, None]
        nb = self.nb // 2
        b = (rel > 0).long() * nb
        rel = rel.abs()
        exact = nb // 2
        large = exact + (torch.log(rel.float() / exact) / math.log(self.md / exact) * (nb - exact)).long()
        large = torch.min(large, torch.full_like(large, nb - 1))
        b = b + torch.where(rel < exact, rel, large)
        return self.rel(b).permute(2, 0, 1)[None]

    def forward(self, x):
        b, n, d = x.shape
        y = self.rms(x, self.g1)
        q, k, v = (m(y).view(b, n, self.h, -1).transpose(1, 2) for m in (self.q, self.k, self.v))
        a = torch.softmax(q @ k.transpose(-1, -2) + self.bias(n), -1)
        x = x + self.o((a @ v).transpose(1, 2).reshape(b, n, d))
        return x + self.w2(torch.relu(self.w1(self.rms(x, self.g2))))


class Gpt2Step(nn.Module):
    """One decoding step of a GPT-2-style block with a KV cache: past keys and values are
    inputs, the new token's are concatenated to them and returned; tanh-approximated GELU,
    tied input/output embedding."""

    def __init__(self, vocab=500, d=64, heads=4):
        super().__init__()
        self.h = heads
        self.wte, self.wpe = nn.Embedding(vocab, d), nn.Embedding(64, d)
        self.ln1, self.ln2, self.lnf = nn.LayerNorm(d), nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.o = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.f1, self.f2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, ids, pk, pv):
        b, n = ids.shape
        t0 = pk.shape[2]
        x = self.wte(ids) + self.wpe(torch.arange(t0, t0 + n)[None])
        q, k, v = self.qkv(self.ln1(x)).split(x.shape[-1], -1)
        q, k, v = (z.view(b, n, self.h, -1).transpose(1, 2) for z in (q, k, v))
        k, v = torch.cat((pk, k), 2), torch.cat((pv, v), 2)
        a = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1]), -1)
        x = x + self.o((a @ v).transpose(1, 2).reshape(b, n, -1))
        x = x + self.f2(nn.functional.gelu(self.f1(self.ln2(x)), approximate="tanh"))
        return self.lnf(x) @ self.wte.weight.t(), k, v


class HrFuse(nn.Module):
    """HRNet-style exchange between a full- and a half-resolution branch: down by a strided
    conv, up by a 1x1 conv and bilinear upsampling, sums and ReLUs, twice; the head
    concatenates both upsampled branches."""

    def __init__(self, c=32):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, c, 3, 2, 1), nn.BatchNorm2d(c), nn.ReLU())
        self.split = nn.Conv2d(c, 2 * c, 3, 2, 1)
        blk = lambda ci: nn.Sequential(nn.Conv2d(ci, ci, 3, padding=1), nn.BatchNorm2d(ci), nn.ReLU())
        self.hi, self.lo = nn.ModuleList(blk(c) for _ in range(2)), nn.ModuleList(blk(2 * c) for _ in range(2))
        self.down = nn.ModuleList(nn.Conv2d(c, 2 * c, 3, 2, 1) for _ in range(2))
        self.upc = nn.ModuleList(nn.Conv2d(2 * c, c, 1) for _ in range(2))
        self.head = nn.Conv2d(3 * c, 10, 1)

    def forward(self, x):
        h = self.stem(x)
        l = self.split(h)
        for i in range(2):
            h, l = self.hi[i](h), self.lo[i](l)
            up = nn.functional.interpolate(self.upc[i](l), scale_factor=2.0, mode="bilinear", align_corners=False)
            h, l = torch.relu(h + up), torch.relu(l + self.down[i](h))
        l = nn.functional.interpolate(l, size=h.shape[2:], mode="bilinear", align_corners=False)
        return self.head(torch.cat((h, l), 1))


class DetrHead(nn.Module):
    """A DETR-style detector: a small conv backbone, a 1x1 projection to 64 channels, the
    feature map flattened to tokens with a sine position embedding, a 2-layer transformer
    decoder over 10 learned queries, class logits and sigmoid boxes from an MLP."""

    def __init__(self, d=64, q=10):
        super().__init__()
        self.bb = nn.Sequential(nn.Conv2d(3, 32, 3, 2, 1), nn.ReLU(), nn.Conv2d(32, 64, 3, 2, 1), nn.ReLU(),
                                nn.Conv2d(64, 128, 3, 2, 1), nn.ReLU())
        self.proj = nn.Conv2d(128, d, 1)
        self.query = nn.Parameter(torch.randn(q, 1, d))
        layer = nn.TransformerDecoderLayer(d, 4, 128, dropout=0.0)
        self.dec = nn.TransformerDecoder(layer, 2)
        self.cls, self.box = nn.Linear(d, 6), nn.Sequential(nn.Linear(d, d), nn.ReLU(), nn.Linear(d, 4))

    def forward(self, x):
        f = self.proj(self.bb(x))
        b, d, h, w = f.shape
        ys = torch.arange(h, dtype=torch.float32)[:, None].expand(h, w)
        xs = torch.arange(w, dtype=torch.float32)[None, :].expand(h, w)
        dim = torch.arange(d // 4, dtype=torch.float32)
        t = 10000 ** (2 * dim / (d // 2))
        py, px = ys[..., None] / t, xs[..., None] / t
        pos = torch.cat((py.sin(), py.cos(), px.sin(), px.cos()), -1).reshape(h * w, 1, d)
        mem = f.flatten(2).permute(2, 0, 1) + pos
        o = self.dec(self.query.expand(-1, b, -1), mem)
        return self.cls(o), self.box(o).sigmoid()


class Dlrm(nn.Module):
    """A DLRM-style recommender: a bottom MLP on dense features, three embedding tables
    summed over 4 ids per table, pairwise dot-product interaction (bmm, the strictly lower
    triangle taken by constant indices), a top MLP and a sigmoid."""

    def __init__(self):
        super().__init__()
        self.bot = nn.Sequential(nn.Linear(13, 64), nn.ReLU(), nn.Linear(64, 32), nn.ReLU())
        self.emb = nn.ModuleList(nn.Embedding(n, 32) for n in (1000, 200, 50))
        li, lj = torch.tril_indices(4, 4, -1)
        self.register_buffer("li", li)
        self.register_buffer("lj", lj)
        self.top = nn.Sequential(nn.Linear(32 + 6, 64), nn.ReLU(), nn.Linear(64, 1))

    def forward(self, dense, ids):
        x = self.bot(dense)
        fs = [x] + [e(ids[:, i]).sum(1) for i, e in enumerate(self.emb)]
        t = torch.stack(fs, 1)
        z = t @ t.transpose(1, 2)
        return torch.sigmoid(self.top(torch.cat((x, z[:, self.li, self.lj]), 1)))


class Moe(nn.Module):
    """A mixture-of-experts feed-forward: a gate, top-2 experts per token (TopK), softmax over
    the two, weights scattered into a dense [tokens, experts] matrix (scatter with run-time
    indices), every expert computed and mixed by an einsum."""

    def __init__(self, d=64, e=4):
        super().__init__()
        self.gate = nn.Linear(d, e)
        self.w1, self.w2 = nn.Parameter(torch.randn(e, d, 128) * 0.1), nn.Parameter(torch.randn(e, 128, d) * 0.1)

    def forward(self, x):
        v, i = self.gate(x).topk(2, -1)
        w = torch.zeros(x.shape[0], self.w1.shape[0]).scatter(1, i, v.softmax(-1))
        h = torch.relu(torch.einsum("td,edf->etf", x, self.w1))
        return torch.einsum("te,etd->td", w, torch.einsum("etf,efd->etd", h, self.w2))


class LlamaBlock(nn.Module):
    """A LLaMA-style decoder block: RMSNorm, rotary position embedding (rotate-half by slices
    and a concat), grouped-query attention (2 key/value heads shared by 8 query heads through
    repeat_interleave), a causal mask, a SwiGLU feed-forward."""

    def __init__(self, d=128, heads=8, kv=2, ff=344, n=40):
        super().__init__()
        self.h, self.kv, self.dh = heads, kv, d // heads
        self.q, self.o = nn.Linear(d, d, bias=False), nn.Linear(d, d, bias=False)
        self.k, self.v = (nn.Linear(d, kv * self.dh, bias=False) for _ in range(2))
        self.w1, self.w3 = (nn.Linear(d, ff, bias=False) for _ in range(2))
        self.w2 = nn.Linear(ff, d, bias=False)
        self.g1, self.g2 = nn.Parameter(torch.rand(d) + 0.5), nn.Parameter(torch.rand(d) + 0.5)
        t = torch.arange(n)[:, None] * (10000.0 ** (-torch.arange(0, self.dh, 2) / self.dh))[None]
        self.register_buffer("cos", torch.cat((t.cos(), t.cos()), -1))
        self.register_buffer("sin", torch.cat((t.sin(), t.sin()), -1))
        self.register_buffer("mask", torch.full((n, n), float("-inf")).triu(1))

    def rms(self, x, g):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * g

    def rope(self, x):
        h = x.shape[-1] // 2
        return x * self.cos + torch.cat((-x[..., h:], x[..., :h]), -1) * self.sin

    def forward(self, x):
        b, n, d = x.shape
        y = self.rms(x, self.g1)
        q = self.rope(self.q(y).view(b, n, self.h, self.dh).transpose(1, 2))
        k = self.rope(self.k(y).view(b, n, self.kv, self.dh).transpose(1, 2))
        v = self.v(y).view(b, n, self.kv, self.dh).transpose(1, 2)
        k, v = (z.repeat_interleave(self.h // self.kv, 1) for z in (k, v))
        a = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(self.dh) + self.mask, -1)
        x = x + self.o((a @ v).transpose(1, 2).reshape(b, n, d))
        y = self.rms(x, self.g2)
        return x + self.w2(nn.functional.silu(self.w1(y)) * self.w3(y))


class Rrdb(nn.Module):
    """An ESRGAN residual-in-residual dense block: five 3x3 convs, each reading the concat of
    all earlier outputs, LeakyReLU(0.2), residuals scaled by 0.2; then a 2x pixel-shuffle
    upsampler."""

    def __init__(self, c=32, g=16):
        super().__init__()
        self.first = nn.Conv2d(3, c, 3, padding=1)
        self.convs = nn.ModuleList(nn.Conv2d(c + i * g, g if i < 4 else c, 3, padding=1) for i in range(5))
        self.up = nn.Conv2d(c, 3 * 4, 3, padding=1)

    def forward(self, x):
        x = self.first(x)
        for _ in range(2):
            feats = [x]
            for i, conv in enumerate(self.convs):
                y = conv(torch.cat(feats, 1))
                feats.append(nn.functional.leaky_relu(y, 0.2) if i < 4 else y)
            x = x + 0.2 * feats[-1]
        return nn.functional.pixel_shuffle(self.up(x), 2)


class ConvTasNet(nn.Module):
    """A Conv-TasNet separator: a strided 1-D encoder, global layer norm (GroupNorm with one
    group), blocks of 1x1 conv, PReLU, dilated depthwise conv, PReLU, 1x1 conv with residuals,
    sigmoid masks for two sources and a transposed-conv decoder."""

    def __init__(self, n=64, b=32, h=64, k=16):
        super().__init__()
        self.enc = nn.Conv1d(1, n, k, k // 2, bias=False)
        self.norm, self.bott = nn.GroupNorm(1, n), nn.Conv1d(n, b, 1)
        self.blocks = nn.ModuleList(
            nn.Sequential(nn.Conv1d(b, h, 1), nn.PReLU(), nn.GroupNorm(1, h),
                          nn.Conv1d(h, h, 3, padding=d, dilation=d, groups=h), nn.PReLU(), nn.GroupNorm(1, h),
                          nn.Conv1d(h, b, 1)) for d in (1, 2, 4, 8))
        self.mask = nn.Conv1d(b, 2 * n, 1)
        self.dec = nn.ConvTranspose1d(n, 1, k, k // 2, bias=False)

    def forward(self, x):
        w = torch.relu(self.enc(x))
        y = self.bott(self.norm(w))
        for blk in self.blocks:
            y = y + blk(y)
        m = torch.sigmoid(self.mask(y)).view(x.shape[0], 2, w.shape[1], -1)
        s = (m * w[:, None]).view(-1, w.shape[1], w.shape[2])
        return self.dec(s).view(x.shape[0], 2, -1)


class CbamNet(nn.Module):
    """A small ResNet whose blocks carry CBAM attention: channel attention from average- and
    max-pooled descriptors through a shared MLP, spatial attention from the channel mean and
    max through a 7x7 conv."""

    def __init__(self, c=32):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, c, 3, 2, 1), nn.BatchNorm2d(c), nn.ReLU())
        self.body = nn.ModuleList(
            nn.Sequential(nn.Conv2d(c, c, 3, padding=1), nn.BatchNorm2d(c), nn.ReLU(),
                          nn.Conv2d(c, c, 3, padding=1), nn.BatchNorm2d(c)) for _ in range(2))
        self.mlp = nn.ModuleList(nn.Sequential(nn.Conv2d(c, c // 8, 1), nn.ReLU(), nn.Conv2d(c // 8, c, 1))
                                 for _ in range(2))
        self.sp = nn.ModuleList(nn.Conv2d(2, 1, 7, padding=3) for _ in range(2))
        self.fc = nn.Linear(c, 10)

    def forward(self, x):
        x = self.stem(x)
        for body, mlp, sp in zip(self.body, self.mlp, self.sp):
            y = body(x)
            y = y * torch.sigmoid(mlp(y.mean((2, 3), keepdim=True)) + mlp(y.amax((2, 3), keepdim=True)))
            y = y * torch.sigmoid(sp(torch.cat((y.mean(1, keepdim=True), y.amax(1, keepdim=True)), 1)))
            x = torch.relu(x + y)
        return self.fc(x.mean((2, 3)))


class GhostNet(nn.Module):
    """GhostNet-style bottlenecks: a ghost module is a 1x1 conv to half the channels plus a
    cheap 3x3 depthwise conv of those, concatenated; a strided depthwise conv between two ghost
    modules, squeeze-excite with hard sigmoid, shortcut by depthwise + 1x1."""

    class Ghost(nn.Module):
        def __init__(self, ci, co, relu=True):
            super().__init__()
            self.p = nn.Sequential(nn.Conv2d(ci, co // 2, 1, bias=False), nn.BatchNorm2d(co // 2),
                                   nn.ReLU() if relu else nn.Identity())
            self.c = nn.Sequential(nn.Conv2d(co // 2, co // 2, 3, padding=1, groups=co // 2, bias=False),
                                   nn.BatchNorm2d(co // 2), nn.ReLU() if relu else nn.Identity())

        def forward(self, x):
            y = self.p(x)
            return torch.cat((y, self.c(y)), 1)

    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, 2, 1, bias=False), nn.BatchNorm2d(16), nn.ReLU())
        cfg = [(16, 48, 24, 2), (24, 72, 24, 1), (24, 72, 40, 2), (40, 120, 40, 1), (40, 240, 80, 2)]
        self.blocks = nn.ModuleList()
        for ci, mid, co, s in cfg:
            blk = nn.Module()
            blk.g1 = GhostNet.Ghost(ci, mid)
            blk.dw = (nn.Sequential(nn.Conv2d(mid, mid, 3, s, 1, groups=mid, bias=False), nn.BatchNorm2d(mid))
                      if s > 1 else nn.Identity())
            blk.se = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Conv2d(mid, mid // 4, 1), nn.ReLU(),
                                   nn.Conv2d(mid // 4, mid, 1), nn.Hardsigmoid())
            blk.g2 = GhostNet.Ghost(mid, co, relu=False)
            blk.sc = (nn.Identity() if ci == co and s == 1 else
                      nn.Sequential(nn.Conv2d(ci, ci, 3, s, 1, groups=ci, bias=False), nn.BatchNorm2d(ci),
                                    nn.Conv2d(ci, co, 1, bias=False), nn.BatchNorm2d(co)))
            self.blocks.append(blk)
        self.head = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(80, 100))

    def forward(self, x):
        x = self.stem(x)
        for b in self.blocks:
            y = b.dw(b.g1(x))
            y = b.g2(y * b.se(y))
            x = y + b.sc(x)
        return self.head(x)


class PvtStage(nn.Module):
    """A Pyramid Vision Transformer stage: an overlapping patch embedding (7x7 stride-4 conv),
    attention whose keys and values come from a spatially reduced map (a stride-4 conv and a
    LayerNorm), a Mix-FFN (1x1, 3x3 depthwise, GELU) over tokens reshaped back to an image."""

    def __init__(self, d=64, heads=2, r=4):
        super().__init__()
        self.h = heads
        self.embed, self.ln0 = nn.Conv2d(3, d, 7, 4, 3), nn.LayerNorm(d)
        self.ln1, self.ln2, self.lnr = nn.LayerNorm(d), nn.LayerNorm(d), nn.LayerNorm(d)
        self.q, self.kv, self.o = nn.Linear(d, d), nn.Linear(d, 2 * d), nn.Linear(d, d)
        self.sr = nn.Conv2d(d, d, r, r)
        self.f1, self.dw, self.f2 = nn.Linear(d, 4 * d), nn.Conv2d(4 * d, 4 * d, 3, padding=1, groups=4 * d), \
            nn.Linear(4 * d, d)

    def forward(self, x):
        x = self.embed(x)
        b, d, hh, ww = x.shape
        x = self.ln0(x.flatten(2).transpose(1, 2))
        for _ in range(2):
            y = self.ln1(x)
            q = self.q(y).view(b, -1, self.h, d // self.h).transpose(1, 2)
            r = self.sr(y.transpose(1, 2).reshape(b, d, hh, ww)).flatten(2).transpose(1, 2)
            k, v = self.kv(self.lnr(r)).view(b, -1, 2, self.h, d // self.h).permute(2, 0, 3, 1, 4)
            a = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(d // self.h), -1)
            x = x + self.o((a @ v).transpose(1, 2).reshape(b, -1, d))
            y = self.f1(self.ln2(x))
            y = self.dw(y.transpose(1, 2).reshape(b, -1, hh, ww)).flatten(2).transpose(1, 2)
            x = x + self.f2(nn.functional.gelu(y))
        return x


class Dgcnn(nn.Module):
    """A DGCNN EdgeConv layer pair over a point cloud: pairwise distances, the k nearest
    neighbours by TopK, neighbour features gathered by index, a shared MLP on
    (x_j - x_i, x_i) and a max over neighbours; a global max pool and a classifier."""

    def __init__(self, k=10):
        super().__init__()
        self.k = k
        self.e1 = nn.Sequential(nn.Conv2d(6, 32, 1, bias=False), nn.BatchNorm2d(32), nn.LeakyReLU(0.2))
        self.e2 = nn.Sequential(nn.Conv2d(64, 32, 1, bias=False), nn.BatchNorm2d(32), nn.LeakyReLU(0.2))
        self.fc = nn.Linear(64, 10)

    def edge(self, x, conv):
        b, c, n = x.shape
        inner = -2 * x.transpose(2, 1) @ x
        xx = (x * x).sum(1, keepdim=True)
        idx = (-xx - inner - xx.transpose(2, 1)).topk(self.k, -1)[1]  # b, n, k
        idx = (idx + torch.arange(b).view(-1, 1, 1) * n).view(-1)
        f = x.transpose(2, 1).reshape(b * n, c)[idx].view(b, n, self.k, c)
        xi = x.transpose(2, 1).unsqueeze(2).expand(b, n, self.k, c)
        return conv(torch.cat((f - xi, xi), 3).permute(0, 3, 1, 2)).amax(-1)

    def forward(self, x):
        x1 = self.edge(x, self.e1)
        x2 = self.edge(x1, self.e2)
        return self.fc(torch.cat((x1, x2), 1).amax(-1))


class Unet3d(nn.Module):
    """A two-level 3-D U-Net for volumes: Conv3d + InstanceNorm3d + LeakyReLU, a stride-2
    Conv3d down, a ConvTranspose3d up, a skip concat and a 1x1x1 head."""

    def __init__(self, c=8):
        super().__init__()
        blk = lambda ci, co: nn.Sequential(nn.Conv3d(ci, co, 3, padding=1), nn.InstanceNorm3d(co, affine=True),
                                           nn.LeakyReLU(0.01))
        self.e1, self.down, self.e2 = blk(1, c), nn.Conv3d(c, 2 * c, 3, 2, 1), blk(2 * c, 2 * c)
        self.up, self.d1, self.head = nn.ConvTranspose3d(2 * c, c, 2, 2), blk(2 * c, c), nn.Conv3d(c, 3, 1)

    def forward(self, x):
        a = self.e1(x)
        b = self.e2(self.down(a))
        return self.head(self.d1(torch.cat((a, self.up(b)), 1)))


class DeepCross(nn.Module):
    """A Deep & Cross network for tabular data: embeddings of 4 categorical fields concatenated
    with dense features, 3 cross layers x0 * (x . w) + b + x beside a 3-layer MLP, a sigmoid
    head."""

    def __init__(self, dense=10, fields=(30, 20, 40, 25), e=8):
        super().__init__()
        self.emb = nn.ModuleList(nn.Embedding(n, e) for n in fields)
        d = dense + e * len(fields)
        self.cw = nn.Parameter(torch.randn(3, d) * 0.1)
        self.cb = nn.Parameter(torch.randn(3, d) * 0.1)
        self.mlp = nn.Sequential(nn.Linear(d, 128), nn.ReLU(), nn.Linear(128, 64), nn.ReLU(), nn.Linear(64, 32))
        self.out = nn.Linear(d + 32, 1)

    def forward(self, dense, cat):
        x0 = torch.cat([dense] + [m(cat[:, i]) for i, m in enumerate(self.emb)], 1)
        x = x0
        for i in range(3):
            x = x0 * (x @ self.cw[i])[:, None] + self.cb[i] + x
        return torch.sigmoid(self.out(torch.cat((x, self.mlp(x0)), 1)))


class CenterNet(nn.Module):
    """A CenterNet head: a small strided backbone, three ConvTranspose2d 2x upsamplers with
    BatchNorm and ReLU, heatmap / size / offset heads, and the peak test of decoding
    (a 3x3 max pool with stride 1 compared with the heatmap)."""

    def __init__(self, c=32, classes=8):
        super().__init__()
        layers, ci = [], 3
        for co in (c, 2 * c, 4 * c):
            layers += [nn.Conv2d(ci, co, 3, 2, 1), nn.BatchNorm2d(co), nn.ReLU()]
            ci = co
        for co in (2 * c, c, c):
            layers += [nn.ConvTranspose2d(ci, co, 4, 2, 1, bias=False), nn.BatchNorm2d(co), nn.ReLU()]
            ci = co
        self.body = nn.Sequential(*layers)
        head = lambda co: nn.Sequential(nn.Conv2d(c, c, 3, padding=1), nn.ReLU(), nn.Conv2d(c, co, 1))
        self.heat, self.wh, self.off = head(classes), head(2), head(2)

    def forward(self, x):
        y = self.body(x)
        h = torch.sigmoid(self.heat(y))
        peaks = h * (nn.functional.max_pool2d(h, 3, 1, 1) == h).float()
        return peaks, self.wh(y), self.off(y)


class Perceiver(nn.Module):
    """A Perceiver block: 24 learned latents cross-attend to 150 input tokens (keys and values
    from the inputs), then two latent self-attention layers, a mean over latents and a
    classifier."""

    def __init__(self, d_in=32, d=64, latents=24):
        super().__init__()
        self.lat = nn.Parameter(torch.randn(1, latents, d))
        self.cross = nn.MultiheadAttention(d, 1, kdim=d_in, vdim=d_in, batch_first=True)
        self.self_layers = nn.ModuleList(
            nn.TransformerEncoderLayer(d, 4, 128, activation="gelu", batch_first=True, norm_first=True)
            for _ in range(2))
        self.ln = nn.LayerNorm(d)
        self.fc = nn.Linear(d, 10)

    def forward(self, x):
        z = self.lat.expand(x.shape[0], -1, -1)
        z = z + self.cross(z, x, x, need_weights=False)[0]
        for layer in self.self_layers:
            z = layer(z)
        return self.fc(self.ln(z).mean(1))


class LevitAttn(nn.Module):
    """LeViT-style attention with learned relative position biases: a bias table indexed by a
    constant table of |dy|, |dx| offsets (a Gather), added per head to the scores; Hardswish
    on the values; BatchNorm-folded linear layers as 1x1 convs over a 7x7 map."""

    def __init__(self, d=64, heads=4, kd=16, res=7):
        super().__init__()
        self.h, self.kd, self.res = heads, kd, res
        self.qkv = nn.Conv2d(d, heads * (2 * kd + 2 * kd), 1)
        self.proj = nn.Conv2d(heads * 2 * kd, d, 1)
        pts = [(i, j) for i in range(res) for j in range(res)]
        offs, idx = {}, []
        for p in pts:
            for q in pts:
                o = (abs(p[0] - q[0]), abs(p[1] - q[1]))
                idx.append(offs.setdefault(o, len(offs)))
        self.bias = nn.Parameter(torch.randn(heads, len(offs)) * 0.1)
        self.register_buffer("idx", torch.tensor(idx).view(res * res, res * res))

    def forward(self, x):
        b, _, hh, ww = x.shape
        q, k, v = self.qkv(x).view(b, self.h, -1, hh * ww).split([self.kd, self.kd, 2 * self.kd], 2)
        a = (q.transpose(-1, -2) @ k) * self.kd ** -0.5 + self.bias[:, self.idx]
        y = (v @ a.softmax(-1).transpose(-1, -2)).reshape(b, -1, hh, ww)
        return x + self.proj(nn.functional.hardswish(y))


class SkNet(nn.Module):
    """Selective-kernel blocks: 3x3 and dilated 3x3 grouped branches, their sum pooled and
    squeezed, per-branch attention by a softmax across the branches, the weighted sum."""

    def __init__(self, c=64):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, c, 3, 2, 1), nn.BatchNorm2d(c), nn.ReLU())
        self.br = nn.ModuleList(nn.ModuleList(
            nn.Sequential(nn.Conv2d(c, c, 3, padding=d, dilation=d, groups=8, bias=False), nn.BatchNorm2d(c),
                          nn.ReLU()) for d in (1, 2)) for _ in range(2))
        self.fz = nn.ModuleList(nn.Sequential(nn.Linear(c, 32), nn.ReLU()) for _ in range(2))
        self.fa = nn.ModuleList(nn.Linear(32, 2 * c) for _ in range(2))
        self.fc = nn.Linear(c, 10)

    def forward(self, x):
        x = self.stem(x)
        for br, fz, fa in zip(self.br, self.fz, self.fa):
            u = torch.stack([m(x) for m in br], 1)  # b, 2, c, h, w
            z = fz(u.sum(1).mean((2, 3)))
            a = fa(z).view(x.shape[0], 2, -1).softmax(1)[..., None, None]
            x = x + (u * a).sum(1)
        return self.fc(x.mean((2, 3)))


class DcganGen(nn.Module):
    """A DCGAN generator: a 100-d latent through ConvTranspose2d 4x4 (1x1 -> 4x4), then three
    stride-2 ConvTranspose2d with BatchNorm and ReLU, Tanh at 64x64."""

    def __init__(self, z=100, c=64):
        super().__init__()
        self.net = nn.Sequential(
            nn.ConvTranspose2d(z, 4 * c, 4, 1, 0, bias=False), nn.BatchNorm2d(4 * c), nn.ReLU(),
            nn.ConvTranspose2d(4 * c, 2 * c, 4, 2, 1, bias=False), nn.BatchNorm2d(2 * c), nn.ReLU(),
            nn.ConvTranspose2d(2 * c, c, 4, 2, 1, bias=False), nn.BatchNorm2d(c), nn.ReLU(),
            nn.ConvTranspose2d(c, c // 2, 4, 2, 1, bias=False), nn.BatchNorm2d(c // 2), nn.ReLU(),
            nn.ConvTranspose2d(c // 2, 3, 4, 2, 1, bias=False), nn.Tanh())

    def forward(self, z):
        return self.net(z)


class ConvMixer(nn.Module):
    """ConvMixer-256/4 at 224x224: a 7x7 stride-7 patch conv, then blocks of a residual 9x9
    depthwise conv, GELU, BatchNorm and a 1x1 conv, GELU, BatchNorm; mean pool and a classifier."""

    def __init__(self, d=256, depth=4, k=9, p=7):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, d, p, p), nn.GELU(), nn.BatchNorm2d(d))
        self.dw = nn.ModuleList(nn.Sequential(nn.Conv2d(d, d, k, groups=d, padding=k // 2), nn.GELU(),
                                              nn.BatchNorm2d(d)) for _ in range(depth))
        self.pw = nn.ModuleList(nn.Sequential(nn.Conv2d(d, d, 1), nn.GELU(), nn.BatchNorm2d(d))
                                for _ in range(depth))
        self.fc = nn.Linear(d, 1000)

    def forward(self, x):
        x = self.stem(x)
        for dw, pw in zip(self.dw, self.pw):
            x = pw(x + dw(x))
        return self.fc(x.mean((2, 3)))


class PoolFormer(nn.Module):
    """PoolFormer-style stages: GroupNorm(1, C), a 3x3 average pool without padded zeros
    counted minus its input as the token mixer, layer scale, a 1x1-conv GELU MLP; a strided
    conv between stages."""

    def __init__(self, dims=(64, 128), depth=2):
        super().__init__()
        self.stem = nn.Conv2d(3, dims[0], 7, 4, 2)
        self.down = nn.Conv2d(dims[0], dims[1], 3, 2, 1)
        self.blocks = nn.ModuleList(nn.ModuleList(nn.ModuleList([
            nn.GroupNorm(1, c), nn.GroupNorm(1, c),
            nn.Sequential(nn.Conv2d(c, 4 * c, 1), nn.GELU(), nn.Conv2d(4 * c, c, 1))]) for _ in range(depth))
            for c in dims)
        self.s1 = nn.ParameterList(nn.Parameter(torch.rand(c, 1, 1)) for c in dims for _ in range(depth))
        self.pool = nn.AvgPool2d(3, 1, 1, count_include_pad=False)
        self.head = nn.Linear(dims[1], 10)

    def forward(self, x):
        x, i = self.stem(x), 0
        for s, stage in enumerate(self.blocks):
            if s:
                x = self.down(x)
            for n1, n2, mlp in stage:
                y = n1(x)
                x = x + self.s1[i] * (self.pool(y) - y)
                x = x + mlp(n2(x))
                i += 1
        return self.head(x.mean((2, 3)))


class Gmlp(nn.Module):
    """gMLP: patch tokens, blocks of LayerNorm, a GELU projection to 2 x ff, a spatial gating
    unit (split, LayerNorm, a Linear across the token axis, product) and a projection back."""

    def __init__(self, d=128, ff=256, n=64, depth=2):
        super().__init__()
        self.patch = nn.Conv2d(3, d, 4, 4)
        self.ln = nn.ModuleList(nn.LayerNorm(d) for _ in range(depth))
        self.up = nn.ModuleList(nn.Linear(d, 2 * ff) for _ in range(depth))
        self.sln = nn.ModuleList(nn.LayerNorm(ff) for _ in range(depth))
        self.sp = nn.ModuleList(nn.Linear(n, n) for _ in range(depth))
        self.dn = nn.ModuleList(nn.Linear(ff, d) for _ in range(depth))
        self.fc = nn.Linear(d, 10)

    def forward(self, x):
        x = self.patch(x).flatten(2).transpose(1, 2)
        for ln, up, sln, sp, dn in zip(self.ln, self.up, self.sln, self.sp, self.dn):
            u, v = nn.functional.gelu(up(ln(x))).chunk(2, -1)
            v = sp(sln(v).transpose(1, 2)).transpose(1, 2)
            x = x + dn(u * v)
        return self.fc(x.mean(1))


class CapsNet(nn.Module):
    """A capsule network: conv, primary capsules (a strided conv reshaped to 8-d vectors,
    squashed), a prediction per (primary, class) pair, three rounds of dynamic routing
    (softmax over classes, weighted sums, squash, agreement) unrolled; capsule lengths out."""

    def __init__(self, types=16, classes=10):
        super().__init__()
        self.conv = nn.Conv2d(1, 64, 9)
        self.prim = nn.Conv2d(64, types * 8, 9, 2)
        self.W = nn.Parameter(0.1 * torch.randn(1, types * 36, classes, 16, 8))
        self.classes = classes

    @staticmethod
    def squash(s):
        n2 = (s * s).sum(-1, keepdim=True)
        return n2 / (1 + n2) * s / torch.sqrt(n2 + 1e-8)

    def forward(self, x):
        b = x.shape[0]
        u = self.prim(torch.relu(self.conv(x)))  # b, types*8, 6, 6
        u = self.squash(u.view(b, -1, 8, 36).permute(0, 1, 3, 2).reshape(b, -1, 8))
        uh = (self.W @ u[:, :, None, :, None]).squeeze(-1)  # b, n, classes, 16
        logits = torch.zeros(b, uh.shape[1], self.classes)
        for r in range(3):
            c = logits.softmax(2)
            v = self.squash((c[..., None] * uh).sum(1))  # b, classes, 16
            if r < 2:
                logits = logits + (uh * v[:, None]).sum(-1)
        return v.norm(dim=-1)


class ConvLstm(nn.Module):
    """A ConvLSTM over 6 frames: each step a 3x3 conv of [x_t, h] to four gates, sigmoid/tanh
    cell update; the last hidden state through a 1x1 conv."""

    def __init__(self, ci=8, ch=32):
        super().__init__()
        self.ch = ch
        self.gates = nn.Conv2d(ci + ch, 4 * ch, 3, padding=1)
        self.out = nn.Conv2d(ch, 1, 1)

    def forward(self, x):
        b, t, _, hh, ww = x.shape
        h = torch.zeros(b, self.ch, hh, ww)
        c = torch.zeros_like(h)
        for s in range(t):
            i, f, g, o = self.gates(torch.cat([x[:, s], h], 1)).chunk(4, 1)
            c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
            h = torch.sigmoid(o) * torch.tanh(c)
        return self.out(h), c


class Nerf(nn.Module):
    """A NeRF MLP on 2048 samples: sin/cos positional encodings (10 and 4 frequencies), eight
    256-wide ReLU layers with the encoding concatenated again at the fifth, density and a
    view-dependent colour head."""

    def __init__(self, w=256):
        super().__init__()
        self.l = nn.ModuleList([nn.Linear(63, w)] + [nn.Linear(w + (63 if i == 4 else 0), w) for i in range(1, 8)])
        self.sigma = nn.Linear(w, 1)
        self.feat = nn.Linear(w, w)
        self.rgb = nn.Sequential(nn.Linear(w + 27, w // 2), nn.ReLU(), nn.Linear(w // 2, 3), nn.Sigmoid())

    @staticmethod
    def enc(x, n):
        f = 2.0 ** torch.arange(n, dtype=torch.float32) * math.pi
        xf = (x[..., None] * f).flatten(-2)
        return torch.cat([x, torch.sin(xf), torch.cos(xf)], -1)

    def forward(self, pts, dirs):
        e = self.enc(pts, 10)
        h = e
        for i, l in enumerate(self.l):
            if i == 4:
                h = torch.cat([h, e], -1)
            h = torch.relu(l(h))
        rgb = self.rgb(torch.cat([self.feat(h), self.enc(dirs, 4)], -1))
        return torch.relu(self.sigma(h)), rgb


class AlibiLM(nn.Module):
    """A BLOOM-style decoder layer: positions from the attention mask's cumsum, ALiBi biases
    (per-head slope x key position), a causal mask built in the graph, padding masked with
    where; LayerNorm, fused QKV, GELU MLP."""

    def __init__(self, vocab=400, d=128, heads=4):
        super().__init__()
        self.h, self.dh = heads, d // heads
        self.emb = nn.Embedding(vocab, d)
        self.ln0, self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.o = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.f1, self.f2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
        self.register_buffer("slopes", torch.tensor([2.0 ** (-8 * (i + 1) / heads) for i in range(heads)]))

    def forward(self, ids, mask):
        b, s = ids.shape
        x = self.ln0(self.emb(ids))
        pos = (mask.cumsum(-1) - 1).clamp(min=0) * mask  # b, s
        alibi = self.slopes[None, :, None, None] * pos[:, None, None, :].float()  # b, h, 1, s
        q, k, v = self.qkv(self.ln1(x)).view(b, s, 3, self.h, self.dh).permute(2, 0, 3, 1, 4)
        att = q @ k.transpose(-1, -2) / math.sqrt(self.dh) + alibi
        causal = torch.ones(s, s, dtype=torch.bool).triu(1)
        bad = causal[None, None] | (mask[:, None, None, :] == 0)
        att = torch.where(bad, torch.full_like(att, -1e9), att)
        y = (att.softmax(-1) @ v).transpose(1, 2).reshape(b, s, -1)
        x = x + self.o(y)
        return x + self.f2(nn.functional.gelu(self.f1(self.ln2(x))))


class AxialAttn(nn.Module):
    """Axial attention written with einsum: attention along rows, then along columns of a
    32x32 map of 64 channels (4 heads), a 1x1 projection and BatchNorm."""

    def __init__(self, c=64, heads=4):
        super().__init__()
        self.h = heads
        self.qkv_r, self.qkv_c = nn.Conv2d(c, 3 * c, 1), nn.Conv2d(c, 3 * c, 1)
        self.proj = nn.Sequential(nn.Conv2d(c, c, 1), nn.BatchNorm2d(c))

    def axis(self, x, qkv, rows):
        b, c, hh, ww = x.shape
        q, k, v = qkv(x).view(b, 3, self.h, c // self.h, hh, ww).unbind(1)
        if rows:
            a = torch.einsum("bndhw,bndhv->bnhwv", q, k).softmax(-1)
            return torch.einsum("bnhwv,bndhv->bndhw", a, v).reshape(b, c, hh, ww)
        a = torch.einsum("bndhw,bndgw->bnwhg", q, k).softmax(-1)
        return torch.einsum("bnwhg,bndgw->bndhw", a, v).reshape(b, c, hh, ww)

    def forward(self, x):
        x = x + self.axis(x, self.qkv_r, True)
        x = x + self.axis(x, self.qkv_c, False)
        return x + self.proj(x)


class Siamese(nn.Module):
    """A metric-learning head: a small CNN embeds a query image, L2-normalised, cosine
    similarity against a gallery of 200 stored embeddings, the best match's index (as float)
    and the pairwise distance to it."""

    def __init__(self, d=128):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(3, 32, 3, 2, 1), nn.ReLU(), nn.Conv2d(32, 64, 3, 2, 1), nn.ReLU(),
                                 nn.Conv2d(64, 128, 3, 2, 1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                                 nn.Linear(128, d))
        self.gallery = nn.Parameter(nn.functional.normalize(torch.randn(200, d), dim=1))

    def forward(self, x):
        e = nn.functional.normalize(self.net(x), dim=1)
        sim = e @ self.gallery.t()
        best = sim.argmax(1)
        dist = nn.functional.pairwise_distance(e, self.gallery[best])
        return sim, best.float(), dist


class FtTransformer(nn.Module):
    """An FT-Transformer for tabular data: each of 24 numeric features becomes a token (value
    x weight + bias), 4 categorical ones are embedded, a CLS token is prepended; two pre-norm
    encoder layers; a head on the CLS token. Batch 32."""

    def __init__(self, nnum=24, cards=(10, 7, 30, 5), d=64):
        super().__init__()
        self.w, self.b = nn.Parameter(torch.randn(nnum, d)), nn.Parameter(torch.randn(nnum, d))
        self.embs = nn.ModuleList(nn.Embedding(n, d) for n in cards)
        self.cls = nn.Parameter(torch.randn(1, 1, d))
        self.enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(d, 4, 2 * d, activation="relu",
                                                                    batch_first=True, norm_first=True), 2)
        self.head = nn.Sequential(nn.LayerNorm(d), nn.ReLU(), nn.Linear(d, 1))

    def forward(self, num, cat):
        t = num[..., None] * self.w + self.b
        c = torch.stack([e(cat[:, i]) for i, e in enumerate(self.embs)], 1)
        x = torch.cat([self.cls.expand(num.shape[0], -1, -1), t, c], 1)
        return self.head(self.enc(x)[:, 0])


class Ecapa(nn.Module):
    """An ECAPA-TDNN speaker encoder (reduced): a 1-D conv over 80 mel bins, SE-Res2Net blocks
    (1x1 conv, four dilated 3-tap convs over chained channel splits, 1x1 conv, squeeze-excite),
    multi-layer aggregation, attentive statistics pooling (softmax over time, weighted mean
    and standard deviation), BatchNorm and an embedding Linear."""

    def __init__(self, c=256, scale=4):
        super().__init__()
        self.c, self.s = c, scale
        self.l0 = nn.Sequential(nn.Conv1d(80, c, 5, padding=2), nn.ReLU(), nn.BatchNorm1d(c))
        self.a = nn.ModuleList(nn.Sequential(nn.Conv1d(c, c, 1), nn.ReLU(), nn.BatchNorm1d(c)) for _ in range(2))
        self.res = nn.ModuleList(nn.ModuleList(nn.Sequential(
            nn.Conv1d(c // scale, c // scale, 3, padding=d, dilation=d), nn.ReLU(), nn.BatchNorm1d(c // scale))
            for _ in range(scale - 1)) for d in (2, 3))
        self.b = nn.ModuleList(nn.Sequential(nn.Conv1d(c, c, 1), nn.ReLU(), nn.BatchNorm1d(c)) for _ in range(2))
        self.se = nn.ModuleList(nn.Sequential(nn.Conv1d(c, 64, 1), nn.ReLU(), nn.Conv1d(64, c, 1), nn.Sigmoid())
                                for _ in range(2))
        self.mfa = nn.Sequential(nn.Conv1d(2 * c, 2 * c, 1), nn.ReLU())
        self.att = nn.Sequential(nn.Conv1d(6 * c, 128, 1), nn.ReLU(), nn.BatchNorm1d(128), nn.Tanh(),
                                 nn.Conv1d(128, 2 * c, 1))
        self.bn = nn.BatchNorm1d(4 * c)
        self.fc = nn.Linear(4 * c, 192)

    def forward(self, x):
        x = self.l0(x)
        outs = []
        for a, res, b, se in zip(self.a, self.res, self.b, self.se):
            y = a(x)
            parts = list(y.chunk(self.s, 1))
            prev, ys = None, [parts[0]]
            for i, m in enumerate(res):
                prev = m(parts[i + 1] if prev is None else parts[i + 1] + prev)
                ys.append(prev)
            y = b(torch.cat(ys, 1))
            y = y * se(y.mean(2, keepdim=True))
            x = x + y
            outs.append(x)
        h = self.mfa(torch.cat(outs, 1))
        t = h.shape[2]
        g = torch.cat([h, h.mean(2, keepdim=True).expand(-1, -1, t),
                       h.var(2, keepdim=True, unbiased=False).clamp(min=1e-4).sqrt().expand(-1, -1, t)], 1)
        w = self.att(g).softmax(2)
        mu = (h * w).sum(2)
        sd = ((h * h * w).sum(2) - mu * mu).clamp(min=1e-4).sqrt()
        return self.fc(self.bn(torch.cat([mu, sd], 1)))


class BiFpn(nn.Module):
    """One BiFPN layer over three levels (64 channels at 32, 16 and 8 pixels): fast normalised
    weighted fusion (ReLU weights over their sum), nearest 2x upsampling top-down, 3x3 stride-2
    max pooling bottom-up, depthwise-separable convs with BatchNorm and SiLU."""

    def __init__(self, c=64):
        super().__init__()
        self.w = nn.ParameterList(nn.Parameter(torch.rand(n) + 0.5) for n in (2, 2, 3, 2))
        self.conv = nn.ModuleList(nn.Sequential(nn.Conv2d(c, c, 3, padding=1, groups=c, bias=False),
                                                nn.Conv2d(c, c, 1, bias=False), nn.BatchNorm2d(c), nn.SiLU())
                                  for _ in range(4))

    @staticmethod
    def fuse(w, xs):
        w = torch.relu(w)
        w = w / (w.sum() + 1e-4)
        return sum(w[i] * x for i, x in enumerate(xs))

    def forward(self, p3, p4, p5):
        up = lambda t: nn.functional.interpolate(t, scale_factor=2.0, mode="nearest")
        down = lambda t: nn.functional.max_pool2d(t, 3, 2, 1)
        p4td = self.conv[0](self.fuse(self.w[0], [p4, up(p5)]))
        p3o = self.conv[1](self.fuse(self.w[1], [p3, up(p4td)]))
        p4o = self.conv[2](self.fuse(self.w[2], [p4, p4td, down(p3o)]))
        p5o = self.conv[3](self.fuse(self.w[3], [p5, down(p4o)]))
        return p3o, p4o, p5o


class SegformerHead(nn.Module):
    """SegFormer's all-MLP decoder: four feature levels (1/4 .. 1/32 of a 256x256 image), each
    through a Linear (as a 1x1 conv), bilinearly upsampled to 1/4, concatenated, fused by a 1x1
    conv with BatchNorm and ReLU, classified into 19 classes."""

    def __init__(self, dims=(32, 64, 160, 256), d=128):
        super().__init__()
        self.proj = nn.ModuleList(nn.Conv2d(c, d, 1) for c in dims)
        self.fuse = nn.Sequential(nn.Conv2d(4 * d, d, 1, bias=False), nn.BatchNorm2d(d), nn.ReLU())
        self.cls = nn.Conv2d(d, 19, 1)

    def forward(self, *xs):
        size = xs[0].shape[2:]
        ys = [nn.functional.interpolate(p(x), size=size, mode="bilinear", align_corners=False)
              for p, x in zip(self.proj, xs)]
        return self.cls(self.fuse(torch.cat(ys[::-1], 1)))


class RetinaHead(nn.Module):
    """RetinaNet's heads over three FPN levels: four 3x3 conv + ReLU towers shared across
    levels, class logits through a sigmoid and box deltas, each permuted to (N, H*W*A, K) and
    concatenated across levels."""

    def __init__(self, c=64, anchors=9, classes=20):
        super().__init__()
        tower = lambda: nn.Sequential(*[m for _ in range(4) for m in (nn.Conv2d(c, c, 3, padding=1), nn.ReLU())])
        self.cls_t, self.box_t = tower(), tower()
        self.cls = nn.Conv2d(c, anchors * classes, 3, padding=1)
        self.box = nn.Conv2d(c, anchors * 4, 3, padding=1)
        self.k = classes

    def forward(self, *ps):
        cl, bx = [], []
        for p in ps:
            n = p.shape[0]
            cl.append(self.cls(self.cls_t(p)).permute(0, 2, 3, 1).reshape(n, -1, self.k))
            bx.append(self.box(self.box_t(p)).permute(0, 2, 3, 1).reshape(n, -1, 4))
        return torch.sigmoid(torch.cat(cl, 1)), torch.cat(bx, 1)


class LinearAttn(nn.Module):
    """Causal linear attention (a linear transformer layer): elu(x) + 1 feature maps, running
    sums of k v^T and of k by CumSum over the sequence, then a GLU feed-forward."""

    def __init__(self, d=64, heads=4, n=96):
        super().__init__()
        self.h, self.dh = heads, d // heads
        self.qkv, self.o = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.ff1, self.ff2 = nn.Linear(d, 4 * d), nn.Linear(2 * d, d)

    def forward(self, x):
        b, s, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, s, 3, self.h, self.dh).unbind(2)
        q, k = nn.functional.elu(q) + 1, nn.functional.elu(k) + 1
        kv = torch.cumsum(k[..., :, None] * v[..., None, :], 1)  # b, s, h, dh, dh
        z = 1 / ((q * torch.cumsum(k, 1)).sum(-1, keepdim=True) + 1e-6)
        y = (q[..., None, :] @ kv).squeeze(-2) * z
        x = x + self.o(y.reshape(b, s, d))
        a, g = self.ff1(self.ln2(x)).chunk(2, -1)
        return x + self.ff2(a * torch.sigmoid(g))


class VqVae(nn.Module):
    """A VQ-VAE bottleneck: a strided conv encoder, nearest codebook entry by squared distance
    (argmin), the codes looked up again (Gather), a ConvTranspose decoder; the indices out as
    float."""

    def __init__(self, c=64, codes=128):
        super().__init__()
        self.enc = nn.Sequential(nn.Conv2d(3, c, 4, 2, 1), nn.ReLU(), nn.Conv2d(c, c, 4, 2, 1))
        self.book = nn.Parameter(torch.randn(codes, c))
        self.dec = nn.Sequential(nn.ConvTranspose2d(c, c, 4, 2, 1), nn.ReLU(), nn.ConvTranspose2d(c, 3, 4, 2, 1))

    def forward(self, x):
        z = self.enc(x)
        n, c, h, w = z.shape
        f = z.permute(0, 2, 3, 1).reshape(-1, c)
        d = (f * f).sum(1, keepdim=True) - 2 * f @ self.book.t() + (self.book * self.book).sum(1)
        idx = d.argmin(1)
        q = self.book[idx].view(n, h, w, c).permute(0, 3, 1, 2)
        return self.dec(q), idx.float()


class WaveNet(nn.Module):
    """A WaveNet stack: causal dilated 1-D convs (left padding by slicing), tanh x sigmoid gates,
    residual and skip 1x1 convs, dilations 1..64 twice, 8000 samples."""

    def __init__(self, c=32, skip=64):
        super().__init__()
        self.dil = [2 ** i for i in range(7)] * 2
        self.inp = nn.Conv1d(1, c, 1)
        self.f = nn.ModuleList(nn.Conv1d(c, 2 * c, 2, dilation=d) for d in self.dil)
        self.r = nn.ModuleList(nn.Conv1d(c, c, 1) for _ in self.dil)
        self.s = nn.ModuleList(nn.Conv1d(c, skip, 1) for _ in self.dil)
        self.out = nn.Sequential(nn.ReLU(), nn.Conv1d(skip, skip, 1), nn.ReLU(), nn.Conv1d(skip, 256, 1))

    def forward(self, x):
        x = self.inp(x)
        skip = 0
        for d, f, r, s in zip(self.dil, self.f, self.r, self.s):
            a, g = f(nn.functional.pad(x, (d, 0))).chunk(2, 1)
            y = torch.tanh(a) * torch.sigmoid(g)
            x = x + r(y)
            skip = skip + s(y)
        return self.out(skip)


class Spectrogram(nn.Module):
    """A log-mel front end in the graph: an STFT as a strided Conv1d with fixed windowed cosine
    and sine kernels (512 points, hop 160), power, an 80-band mel MatMul, log, then a small
    2-D conv classifier."""

    def __init__(self, nfft=512, hop=160, mels=80):
        super().__init__()
        t = torch.arange(nfft, dtype=torch.float32)
        k = torch.arange(nfft // 2 + 1, dtype=torch.float32)[:, None]
        win = torch.hann_window(nfft)
        self.register_buffer("cosk", (torch.cos(2 * math.pi * k * t / nfft) * win)[:, None, :])
        self.register_buffer("sink", (-torch.sin(2 * math.pi * k * t / nfft) * win)[:, None, :])
        self.register_buffer("mel", torch.rand(mels, nfft // 2 + 1) / 50)
        self.hop = hop
        self.cnn = nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
                                 nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                                 nn.Linear(32, 12))

    def forward(self, wav):
        re = nn.functional.conv1d(wav, self.cosk, stride=self.hop)
        im = nn.functional.conv1d(wav, self.sink, stride=self.hop)
        mel = torch.log(self.mel @ (re * re + im * im) + 1e-6)  # b, mels, frames
        return self.cnn(mel[:, None])


class UnfoldAttn(nn.Module):
    """Local (neighbourhood) attention written with F.unfold: each pixel attends to its 7x7
    window of keys and values (im2col by unfold), softmax over the window, a 1x1 projection."""

    def __init__(self, c=32, k=7):
        super().__init__()
        self.k, self.c = k, c
        self.qkv = nn.Conv2d(c, 3 * c, 1)
        self.proj = nn.Conv2d(c, c, 1)

    def forward(self, x):
        n, c, h, w = x.shape
        q, k, v = self.qkv(x).chunk(3, 1)
        ku = nn.functional.unfold(k, self.k, padding=self.k // 2).view(n, c, self.k * self.k, h * w)
        vu = nn.functional.unfold(v, self.k, padding=self.k // 2).view(n, c, self.k * self.k, h * w)
        att = (q.view(n, c, 1, h * w) * ku).sum(1, keepdim=True) / math.sqrt(c)
        y = (att.softmax(2) * vu).sum(2).view(n, c, h, w)
        return x + self.proj(y)


class SegNet(nn.Module):
    """SegNet: max pools that keep their argmax indices, a decoder that unpools through them
    (a scatter into zeros, as exportable code writes max_unpool2d)."""

    def __init__(self, c=(16, 32, 64)):
        super().__init__()
        cs = (3,) + c
        self.enc = nn.ModuleList(nn.Sequential(nn.Conv2d(cs[i], cs[i + 1], 3, padding=1), nn.BatchNorm2d(cs[i + 1]),
                                               nn.ReLU()) for i in range(3))
        self.dec = nn.ModuleList(nn.Sequential(nn.Conv2d(cs[i + 1], max(cs[i], 8), 3, padding=1),
                                               nn.BatchNorm2d(max(cs[i], 8)), nn.ReLU()) for i in reversed(range(3)))

    def forward(self, x):
        idx, sizes = [], []
        for e in self.enc:
            x = e(x)
            sizes.append(x.shape)
            x, i = nn.functional.max_pool2d(x, 2, return_indices=True)
            idx.append(i)
        for d in self.dec:
            n, c, h, w = sizes.pop()  # max_unpool2d does not export: a scatter through the indices
            x = torch.zeros(n, c, h * w).scatter(2, idx.pop().flatten(2), x.flatten(2)).view(n, c, h, w)
            x = d(x)
        return x


class RoiHead(nn.Module):
    """A two-stage detector's box head: RoIAlign over a conv feature map, two FC layers, class
    scores and box deltas."""

    def __init__(self, c=64, classes=21):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, 32, 3, 2, 1), nn.ReLU(), nn.Conv2d(32, c, 3, 2, 1), nn.ReLU())
        self.fc = nn.Sequential(nn.Flatten(), nn.Linear(c * 7 * 7, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU())
        self.cls, self.box = nn.Linear(256, classes), nn.Linear(256, classes * 4)

    def forward(self, x, boxes):
        f = torchvision.ops.roi_align(self.body(x), boxes, 7, spatial_scale=0.25, sampling_ratio=2, aligned=True)
        h = self.fc(f)
        return self.cls(h).softmax(-1), self.box(h)


def roi_inputs():
    xy = torch.rand(24, 2) * 100
    wh = torch.rand(24, 2) * 60 + 4
    return torch.randn(1, 3, 128, 128), torch.cat([torch.zeros(24, 1), xy, xy + wh], 1)


class QdqCnn(nn.Module):
    """A quantisation-aware-trained CNN as exported for INT8 runtimes: per-channel fake-quantised
    weights and per-tensor fake-quantised activations (QuantizeLinear/DequantizeLinear pairs)."""

    def __init__(self):
        super().__init__()
        self.convs = nn.ModuleList([nn.Conv2d(3, 32, 3, 2, 1), nn.Conv2d(32, 64, 3, 1, 1), nn.Conv2d(64, 64, 3, 2, 1)])
        self.fc = nn.Linear(64, 10)

    @staticmethod
    def fq(x, s=0.05, zp=0):
        return torch.fake_quantize_per_tensor_affine(x, s, zp, -128, 127)

    @staticmethod
    def fqw(w):
        s = (w.detach().abs().amax(dim=tuple(range(1, w.dim()))) / 127).clamp(min=1e-8)
        return torch.fake_quantize_per_channel_affine(w, s, torch.zeros(w.shape[0], dtype=torch.int32), 0, -128, 127)

    def forward(self, x):
        x = self.fq(x)
        for c in self.convs:
            x = self.fq(torch.relu(nn.functional.conv2d(x, self.fqw(c.weight), c.bias, c.stride, c.padding)), 0.02, -128)
        x = x.mean((2, 3))
        return nn.functional.linear(self.fq(x, 0.02), self.fqw(self.fc.weight), self.fc.bias)


class CondConv(nn.Module):
    """Conditionally parameterised convolutions: per-sample routing weights mix 4 expert kernels,
    the conv then runs with the mixed kernel (a weight computed at run time)."""

    def __init__(self, c=32, e=4):
        super().__init__()
        self.stem = nn.Conv2d(3, c, 3, 1, 1)
        self.route = nn.Linear(c, e)
        self.experts = nn.Parameter(torch.randn(e, c * 2, c, 3, 3) * 0.05)
        self.dw_experts = nn.Parameter(torch.randn(e, c * 2, 1, 3, 3) * 0.2)
        self.out = nn.Conv2d(c * 2, c, 1)

    def forward(self, x):
        x = torch.relu(self.stem(x))
        r = torch.sigmoid(self.route(x.mean((2, 3))))[0]  # batch 1
        w = (r.view(-1, 1, 1, 1, 1) * self.experts).sum(0)
        y = torch.relu(nn.functional.conv2d(x, w, padding=1))
        dw = (r.view(-1, 1, 1, 1, 1) * self.dw_experts).sum(0)
        y = torch.relu(nn.functional.conv2d(y, dw, padding=1, groups=y.shape[1]))
        return x + self.out(y)


class TransformerXL(nn.Module):
    """Transformer-XL attention with relative positions: a memory of earlier tokens, sinusoidal
    relative embeddings, the u/v biases and the pad-reshape-slice relative shift."""

    def __init__(self, d=64, heads=4, ff=256):
        super().__init__()
        self.h, self.dh = heads, d // heads
        self.qkv, self.r, self.o = nn.Linear(d, 3 * d, bias=False), nn.Linear(d, d, bias=False), nn.Linear(d, d)
        self.u, self.v = nn.Parameter(torch.randn(heads, self.dh) * 0.1), nn.Parameter(torch.randn(heads, self.dh) * 0.1)
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.ff = nn.Sequential(nn.Linear(d, ff), nn.ReLU(), nn.Linear(ff, d))

    @staticmethod
    def rel_shift(x):
        b, h, q, k = x.shape
        x = nn.functional.pad(x, (1, 0)).view(b, h, k + 1, q)
        return x[:, :, 1:].view(b, h, q, k)

    def forward(self, x, mem):
        b, q, d = x.shape
        cat = torch.cat([mem, x], 1)
        k_len = cat.shape[1]
        pos = torch.arange(k_len - 1, -1, -1.0)
        inv = 1 / (10000 ** (torch.arange(0, d, 2.0) / d))
        pe = torch.cat([torch.sin(pos[:, None] * inv), torch.cos(pos[:, None] * inv)], 1)
        qkv = self.qkv(cat)
        qh, kh, vh = qkv.split(d, -1)
        qh = qh[:, -q:].view(b, q, self.h, self.dh)
        kh, vh = kh.view(b, k_len, self.h, self.dh), vh.view(b, k_len, self.h, self.dh)
        rh = self.r(pe).view(k_len, self.h, self.dh)
        ac = torch.einsum("bqhd,bkhd->bhqk", qh + self.u, kh)
        bd = self.rel_shift(torch.einsum("bqhd,khd->bhqk", qh + self.v, rh))
        mask = torch.ones(q, k_len).triu(1 + k_len - q).bool()
        att = ((ac + bd) / math.sqrt(self.dh)).masked_fill(mask, -1e9).softmax(-1)
        y = torch.einsum("bhqk,bkhd->bqhd", att, vh).reshape(b, q, d)
        x = self.ln1(x + self.o(y))
        return self.ln2(x + self.ff(x))


class Tsm(nn.Module):
    """Temporal shift module in residual blocks: a clip's frames share a batch axis; an eighth of the
    channels shifts one frame back, an eighth one frame forward (zero padded)."""

    def __init__(self, t=8, c=64):
        super().__init__()
        self.t = t
        self.stem = nn.Sequential(nn.Conv2d(3, c, 3, 2, 1), nn.BatchNorm2d(c), nn.ReLU())
        self.blocks = nn.ModuleList(nn.Sequential(nn.Conv2d(c, c, 3, 1, 1), nn.BatchNorm2d(c), nn.ReLU(),
                                                  nn.Conv2d(c, c, 3, 1, 1), nn.BatchNorm2d(c)) for _ in range(2))
        self.fc = nn.Linear(c, 10)

    def shift(self, x):
        nt, c, h, w = x.shape
        x = x.view(nt // self.t, self.t, c, h, w)
        f = c // 8
        z = torch.zeros_like(x[:, :1, :f])
        back = torch.cat([x[:, 1:, :f], z], 1)
        fwd = torch.cat([z, x[:, :-1, f:2 * f]], 1)
        return torch.cat([back, fwd, x[:, :, 2 * f:]], 2).view(nt, c, h, w)

    def forward(self, x):
        x = self.stem(x)
        for b in self.blocks:
            x = torch.relu(x + b(self.shift(x)))
        return self.fc(x.mean((2, 3)).view(-1, self.t, x.shape[1]).mean(1))


class CoordConv(nn.Module):
    """CoordConv layers: x/y coordinate channels built from the input's size are concatenated
    to the features before each conv; an ECA channel attention (1-D conv across channels)."""

    def __init__(self, c=32):
        super().__init__()
        self.c1, self.c2 = nn.Conv2d(5, c, 3, 1, 1), nn.Conv2d(c + 2, c, 3, 2, 1)
        self.eca = nn.Conv1d(1, 1, 5, padding=2, bias=False)

    @staticmethod
    def coords(x):
        n, _, h, w = x.shape
        ys = torch.linspace(-1, 1, h).view(1, 1, h, 1).expand(n, 1, h, w)
        xs = torch.linspace(-1, 1, w).view(1, 1, 1, w).expand(n, 1, h, w)
        return torch.cat([x, ys, xs], 1)

    def forward(self, x):
        x = torch.relu(self.c1(self.coords(x)))
        x = torch.relu(self.c2(self.coords(x)))
        a = torch.sigmoid(self.eca(x.mean((2, 3)).unsqueeze(1))).transpose(1, 2).unsqueeze(-1)
        return x * a


class NeuralOde(nn.Module):
    """A neural ODE integrated by 6 fixed RK4 steps: 24 evaluations of a small tanh MLP whose
    input includes the time."""

    def __init__(self, d=32, hid=64, steps=6):
        super().__init__()
        self.steps = steps
        self.f = nn.Sequential(nn.Linear(d + 1, hid), nn.Tanh(), nn.Linear(hid, hid), nn.Tanh(), nn.Linear(hid, d))

    def dyn(self, t, y):
        return self.f(torch.cat([y, torch.full_like(y[:, :1], t)], 1))

    def forward(self, y):
        h = 1.0 / self.steps
        for i in range(self.steps):
            t = i * h
            k1 = self.dyn(t, y)
            k2 = self.dyn(t + h / 2, y + h / 2 * k1)
            k3 = self.dyn(t + h / 2, y + h / 2 * k2)
            k4 = self.dyn(t + h, y + h * k3)
            y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        return y


class Performer(nn.Module):
    """Performer (FAVOR+) attention: positive random features exp(w.x - |x|^2/2) for queries and
    keys, attention as phi(Q) (phi(K)^T V) with its normaliser; a GELU feed-forward."""

    def __init__(self, d=64, heads=4, m=32, ff=128):
        super().__init__()
        self.h, self.dh = heads, d // heads
        self.qkv, self.o = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.register_buffer("w", torch.randn(m, self.dh))
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.ff = nn.Sequential(nn.Linear(d, ff), nn.GELU(), nn.Linear(ff, d))

    def phi(self, x):
        x = x * self.dh ** -0.25
        return torch.exp(x @ self.w.t() - (x * x).sum(-1, keepdim=True) / 2) / math.sqrt(self.w.shape[0])

    def forward(self, x):
        b, n, d = x.shape
        q, k, v = (t.view(b, n, self.h, self.dh).transpose(1, 2) for t in self.qkv(self.ln1(x)).chunk(3, -1))
        q, k = self.phi(q), self.phi(k)
        kv = k.transpose(-1, -2) @ v
        z = 1 / (q @ k.sum(2, keepdim=True).transpose(-1, -2) + 1e-6)
        y = ((q @ kv) * z).transpose(1, 2).reshape(b, n, d)
        x = x + self.o(y)
        return x + self.ff(self.ln2(x))


class TopkAttn(nn.Module):
    """Sparse attention keeping each query's top 8 scores: the rest masked through a scatter of
    the TopK indices, then softmax."""

    def __init__(self, d=64, heads=4, k=8):
        super().__init__()
        self.h, self.dh, self.k = heads, d // heads, k
        self.qkv, self.o = nn.Linear(d, 3 * d), nn.Linear(d, d)

    def forward(self, x):
        b, n, d = x.shape
        q, k, v = (t.view(b, n, self.h, self.dh).transpose(1, 2) for t in self.qkv(x).chunk(3, -1))
        s = q @ k.transpose(-1, -2) / math.sqrt(self.dh)
        idx = s.topk(self.k, -1).indices
        mask = torch.full_like(s, -1e9).scatter(-1, idx, 0.0)
        y = ((s + mask).softmax(-1) @ v).transpose(1, 2).reshape(b, n, d)
        return x + self.o(y)


class SelectiveScan(nn.Module):
    """A Mamba-style block: input-dependent step sizes, B and C, a causal depthwise conv, and
    the selective scan h_t = exp(dt_t A) h_{t-1} + dt_t B_t x_t written as a loop over 24 steps."""

    def __init__(self, d=32, e=64, s=8, seq=24):
        super().__init__()
        self.seq = seq
        self.inp = nn.Linear(d, 2 * e)
        self.conv = nn.Conv1d(e, e, 4, padding=3, groups=e)
        self.xp = nn.Linear(e, 2 * s + e)
        self.a = nn.Parameter(-torch.rand(e, s) - 0.5)
        self.dskip = nn.Parameter(torch.ones(e))
        self.out = nn.Linear(e, d)
        self.s = s

    def forward(self, x):
        b, n, _ = x.shape
        u, g = self.inp(x).chunk(2, -1)
        u = nn.functional.silu(self.conv(u.transpose(1, 2))[..., :n].transpose(1, 2))
        dt, bm, cm = self.xp(u).split([u.shape[-1], self.s, self.s], -1)
        dt = nn.functional.softplus(dt)
        h = torch.zeros(b, u.shape[-1], self.s)
        ys = []
        for t in range(self.seq):
            da = torch.exp(dt[:, t, :, None] * self.a)
            h = da * h + (dt[:, t, :, None] * bm[:, t, None, :]) * u[:, t, :, None]
            ys.append((h * cm[:, t, None, :]).sum(-1))
        y = torch.stack(ys, 1) + u * self.dskip
        return x + self.out(y * nn.functional.silu(g))


class Gat(nn.Module):
    """A two-layer graph attention network over a run-time edge list: per-edge scores from
    gathered endpoint features, a softmax over each node's incoming edges by scatter-add
    (shifted by the global maximum), messages summed into their targets by scatter-add."""

    def __init__(self, fin=32, hid=16, heads=4, classes=7):
        super().__init__()
        self.l1, self.l2 = nn.Linear(fin, hid * heads, bias=False), nn.Linear(hid * heads, classes, bias=False)
        self.a1 = nn.Parameter(torch.randn(2, heads, hid) * 0.2)
        self.a2 = nn.Parameter(torch.randn(2, 1, classes) * 0.2)
        self.heads, self.hid = heads, hid

    @staticmethod
    def layer(x, edges, a, heads, dim):
        n = x.shape[0]
        h = x.view(n, heads, dim)
        src, dst = edges[0], edges[1]
        hs, hd = h.index_select(0, src), h.index_select(0, dst)
        e = nn.functional.leaky_relu((hs * a[0]).sum(-1) + (hd * a[1]).sum(-1), 0.2)
        w = torch.exp(e - e.max())
        den = torch.zeros(n, heads).scatter_add(0, dst[:, None].expand(-1, heads), w)
        msg = hs * (w / den.index_select(0, dst))[..., None]
        out = torch.zeros(n, heads, dim).scatter_add(0, dst[:, None, None].expand(-1, heads, dim), msg)
        return out

    def forward(self, x, edges):
        h = nn.functional.elu(self.layer(self.l1(x), edges, self.a1, self.heads, self.hid).flatten(1))
        return self.layer(self.l2(h), edges, self.a2, 1, self.l2.out_features).squeeze(1).log_softmax(-1)


def gat_inputs():
    n, e = 300, 2400
    src = torch.randint(0, n, (e,))
    dst = torch.randint(0, n, (e,))
    loops = torch.arange(n)
    return torch.randn(n, 32), torch.stack([torch.cat([src, loops]), torch.cat([dst, loops])])


class HifiGan(nn.Module):
    """A HiFi-GAN-style vocoder generator: transposed 1-D convs upsampling 8x8x2x2 with
    multi-receptive-field blocks of dilated convs and leaky ReLUs, tanh output."""

    def __init__(self, mel=80, ch=128):
        super().__init__()
        self.pre = nn.Conv1d(mel, ch, 7, padding=3)
        self.ups, self.res = nn.ModuleList(), nn.ModuleList()
        c = ch
        for r in (8, 8, 2, 2):
            self.ups.append(nn.ConvTranspose1d(c, c // 2, 2 * r, r, padding=r // 2))
            c //= 2
            self.res.append(nn.ModuleList(nn.Conv1d(c, c, 3, dilation=d, padding=d) for d in (1, 3, 5)))
        self.post = nn.Conv1d(c, 1, 7, padding=3)

    def forward(self, x):
        x = self.pre(x)
        for up, res in zip(self.ups, self.res):
            x = up(nn.functional.leaky_relu(x, 0.1))
            for conv in res:
                x = x + conv(nn.functional.leaky_relu(x, 0.1))
        return torch.tanh(self.post(nn.functional.leaky_relu(x, 0.1)))


class RealNvp(nn.Module):
    """RealNVP density: checkerboard and channel-wise affine couplings (tanh-scaled log-scales
    from small conv nets), a squeeze, and the log-determinant summed per sample."""

    def __init__(self, c=3, hid=32):
        super().__init__()
        self.nets = nn.ModuleList(nn.Sequential(nn.Conv2d(cc, hid, 3, padding=1), nn.ReLU(), nn.Conv2d(hid, hid, 1),
                                                nn.ReLU(), nn.Conv2d(hid, 2 * cc, 3, padding=1))
                                  for cc in (c, c, 2 * c, 2 * c))
        hh = torch.arange(16)[:, None] + torch.arange(16)[None]
        self.register_buffer("mask", (hh % 2).float().view(1, 1, 16, 16))

    def forward(self, x):
        logdet = torch.zeros(x.shape[0])
        for i in range(2):  # checkerboard couplings
            m = self.mask if i == 0 else 1 - self.mask
            s, t = self.nets[i](x * m).chunk(2, 1)
            s = torch.tanh(s) * (1 - m)
            x = x * m + (1 - m) * (x * torch.exp(s) + t)
            logdet = logdet + s.flatten(1).sum(1)
        n, c, h, w = x.shape
        x = x.view(n, c, h // 2, 2, w // 2, 2).permute(0, 1, 3, 5, 2, 4).reshape(n, 4 * c, h // 2, w // 2)
        for i in range(2, 4):  # channel couplings
            a, b = x.chunk(2, 1)
            if i == 3:
                a, b = b, a
            s, t = self.nets[i](a).chunk(2, 1)
            s = torch.tanh(s)
            b = b * torch.exp(s) + t
            x = torch.cat([a, b], 1) if i == 2 else torch.cat([b, a], 1)
            logdet = logdet + s.flatten(1).sum(1)
        prior = -0.5 * (x ** 2).flatten(1).sum(1) - 0.5 * x[0].numel() * math.log(2 * math.pi)
        return x, prior + logdet


class PointNet2(nn.Module):
    """PointNet++ set abstraction: farthest point sampling written as a 32-step loop (argmax of
    the running minimum distance, a gather), 16 nearest neighbours by TopK, grouped local
    coordinates through a shared MLP and a max pool, then a global MLP."""

    def __init__(self, centers=32, k=16):
        super().__init__()
        self.centers, self.k = centers, k
        self.local = nn.Sequential(nn.Conv2d(6, 32, 1), nn.ReLU(), nn.Conv2d(32, 64, 1), nn.ReLU())
        self.glob = nn.Sequential(nn.Linear(67, 128), nn.ReLU(), nn.Linear(128, 10))

    def forward(self, pts, feats):
        b, n, _ = pts.shape
        dist = torch.full((b, n), 1e10)
        far = torch.zeros(b, dtype=torch.long)
        idx = []
        for _ in range(self.centers):
            idx.append(far)
            c = pts.gather(1, far.view(b, 1, 1).expand(b, 1, 3))
            dist = torch.minimum(dist, ((pts - c) ** 2).sum(-1))
            far = dist.argmax(-1)
        cidx = torch.stack(idx, 1)
        cent = pts.gather(1, cidx[..., None].expand(b, self.centers, 3))
        d = ((cent[:, :, None] - pts[:, None]) ** 2).sum(-1)
        nn_idx = d.topk(self.k, -1, largest=False).indices
        flat = (nn_idx + torch.arange(b)[:, None, None] * n).flatten()
        grouped = pts.reshape(b * n, 3)[flat].view(b, self.centers, self.k, 3) - cent[:, :, None]
        gfeat = feats.reshape(b * n, 3)[flat].view(b, self.centers, self.k, 3)
        h = self.local(torch.cat([grouped, gfeat], -1).permute(0, 3, 1, 2)).amax(-1)
        g = torch.cat([h.amax(-1), cent.mean(1)], -1)
        return self.glob(g)


class TokenMerge(nn.Module):
    """ViT blocks with token merging (ToMe): alternate tokens split into two sets, each of one
    set matched to its most similar in the other (cosine, argmax), the 24 best matches merged
    by a scatter-add average, the rest kept, sorted by a gather."""

    def __init__(self, d=64, r=24):
        super().__init__()
        self.r = r
        self.blk = nn.TransformerEncoderLayer(d, 4, 128, batch_first=True)
        self.blk2 = nn.TransformerEncoderLayer(d, 4, 128, batch_first=True)

    def merge(self, x):
        a, b = x[:, ::2], x[:, 1::2]
        an, bn = nn.functional.normalize(a, dim=-1), nn.functional.normalize(b, dim=-1)
        scores = an @ bn.transpose(1, 2)
        best, dst = scores.max(-1)
        order = best.argsort(-1, descending=True)
        src_idx, keep_idx = order[:, :self.r], order[:, self.r:]
        d = x.shape[-1]
        src = a.gather(1, src_idx[..., None].expand(-1, -1, d))
        keep = a.gather(1, keep_idx[..., None].expand(-1, -1, d))
        to = dst.gather(1, src_idx)
        summed = b.scatter_add(1, to[..., None].expand(-1, -1, d), src)
        count = torch.ones(b.shape[:2]).scatter_add(1, to, torch.ones(to.shape))
        return torch.cat([keep, summed / count[..., None]], 1)

    def forward(self, x):
        return self.blk2(self.merge(self.blk(x)))


class SuperPoint(nn.Module):
    """SuperPoint: a VGG encoder to 1/8 resolution (a 120x160 grey image: 15x20 cells), the
    detector's softmax over 65 bins with the dustbin dropped and a pixel shuffle, simple NMS by
    max-pool equality, L2-normalised descriptors upsampled bilinearly."""

    def __init__(self):
        super().__init__()
        chans = (1, 32, 32, 64, 64, 64, 64, 128, 128)
        self.enc = nn.ModuleList(nn.Conv2d(a, b, 3, padding=1) for a, b in zip(chans[:-1], chans[1:]))
        self.det = nn.Sequential(nn.Conv2d(128, 128, 3, padding=1), nn.ReLU(), nn.Conv2d(128, 65, 1))
        self.desc = nn.Sequential(nn.Conv2d(128, 128, 3, padding=1), nn.ReLU(), nn.Conv2d(128, 128, 1))

    def forward(self, x):
        for i, conv in enumerate(self.enc):
            x = torch.relu(conv(x))
            if i in (1, 3, 5):
                x = nn.functional.max_pool2d(x, 2)
        s = self.det(x).softmax(1)[:, :-1]
        s = nn.functional.pixel_shuffle(s, 8)
        keep = (s == nn.functional.max_pool2d(s, 9, 1, 4)).float()
        d = nn.functional.normalize(self.desc(x), dim=1)
        d = nn.functional.interpolate(d, scale_factor=2, mode="bilinear", align_corners=False)
        return s * keep, d


class Sinkhorn(nn.Module):
    """SuperGlue's optimal-transport matcher: a learned projection of both descriptor sets,
    cosine-like scores, a dustbin row and column, 20 log-domain Sinkhorn iterations
    (logsumexp along rows, then columns)."""

    def __init__(self, d=64, iters=20):
        super().__init__()
        self.proj = nn.Conv1d(d, d, 1)
        self.alpha = nn.Parameter(torch.tensor(1.0))
        self.iters = iters

    def forward(self, d0, d1):
        m0, m1 = self.proj(d0), self.proj(d1)
        scores = torch.einsum("bdn,bdm->bnm", m0, m1) / m0.shape[1] ** 0.5
        b, m, n = scores.shape
        bins0 = self.alpha.expand(b, m, 1)
        bins1 = self.alpha.expand(b, 1, n)
        z = torch.cat([torch.cat([scores, bins0], -1), torch.cat([bins1, self.alpha.expand(b, 1, 1)], -1)], 1)
        norm = -math.log(m + n)
        log_mu = torch.cat([torch.full((m,), norm), torch.tensor([math.log(n) + norm])]).expand(b, -1)
        log_nu = torch.cat([torch.full((n,), norm), torch.tensor([math.log(m) + norm])]).expand(b, -1)
        u, v = torch.zeros_like(log_mu), torch.zeros_like(log_nu)
        for _ in range(self.iters):
            u = log_mu - torch.logsumexp(z + v.unsqueeze(1), 2)
            v = log_nu - torch.logsumexp(z + u.unsqueeze(2), 1)
        return z + u.unsqueeze(2) + v.unsqueeze(1) - norm


def sparsemax(z):
    """Sparsemax over the last dim: sort descending, cumulative sums, the support size k,
    the threshold tau, max(z - tau, 0)."""
    zs = z.sort(-1, descending=True).values
    rng = torch.arange(1, z.shape[-1] + 1, dtype=z.dtype)
    support = (1 + rng * zs > zs.cumsum(-1)).to(z.dtype)
    k = support.sum(-1, keepdim=True)
    tau = ((zs * support).sum(-1, keepdim=True) - 1) / k
    return torch.clamp(z - tau, min=0)


class TabNet(nn.Module):
    """TabNet: 3 decision steps, each an attentive transformer (Linear + BatchNorm, scaled by
    the prior, sparsemax) masking the features, then a feature transformer of GLU blocks with
    sqrt(0.5)-scaled residuals; ReLU'd decision outputs summed into a head."""

    def __init__(self, f=32, nd=16, steps=3):
        super().__init__()
        self.steps, self.nd = steps, nd
        self.bn = nn.BatchNorm1d(f)
        self.att = nn.ModuleList(nn.Sequential(nn.Linear(nd, f, bias=False), nn.BatchNorm1d(f)) for _ in range(steps))
        self.glu = nn.ModuleList(nn.ModuleList([nn.Sequential(nn.Linear(f, 4 * nd, bias=False), nn.BatchNorm1d(4 * nd)),
                                                nn.Sequential(nn.Linear(2 * nd, 4 * nd, bias=False), nn.BatchNorm1d(4 * nd))])
                                 for _ in range(steps + 1))
        self.head = nn.Linear(nd, 4)
        with torch.no_grad():
            for mod in self.modules():
                if isinstance(mod, nn.BatchNorm1d):
                    mod.running_mean.normal_(0, 0.1)
                    mod.running_var.uniform_(0.5, 1.5)

    def feat(self, i, x):
        a, b = self.glu[i]
        h = nn.functional.glu(a(x), -1)
        return (h + nn.functional.glu(b(h), -1)) * math.sqrt(0.5)

    def forward(self, x):
        x = self.bn(x)
        prior = torch.ones_like(x)
        a = self.feat(0, x)[:, self.nd:]
        out = 0
        for s in range(self.steps):
            m = sparsemax(self.att[s](a) * prior)
            prior = prior * (1.3 - m)
            h = self.feat(s + 1, x * m)
            out = out + torch.relu(h[:, :self.nd])
            a = h[:, self.nd:]
        return self.head(out)


class PointTransformer(nn.Module):
    """Point Transformer layer: 16 nearest neighbours by TopK, neighbours' keys, values and
    positions gathered by advanced indexing x[batch, idx], vector attention (an MLP of
    q - k + pos, softmax over the neighbours), a sum; two layers and a max pool."""

    def __init__(self, d=64, k=16):
        super().__init__()
        self.k = k
        self.inp = nn.Linear(3, d)
        self.layers = nn.ModuleList(nn.ModuleDict(dict(
            qkv=nn.Linear(d, 3 * d), pos=nn.Sequential(nn.Linear(3, d), nn.ReLU(), nn.Linear(d, d)),
            att=nn.Sequential(nn.Linear(d, d), nn.ReLU(), nn.Linear(d, d)), out=nn.Linear(d, d))) for _ in range(2))
        self.head = nn.Linear(d, 8)

    def forward(self, p):
        b, n, _ = p.shape
        d2 = ((p[:, :, None] - p[:, None]) ** 2).sum(-1)
        idx = d2.topk(self.k, -1, largest=False).indices
        bi = torch.arange(b)[:, None, None]
        rel = p[:, :, None] - p[bi, idx]
        x = self.inp(p)
        for l in self.layers:
            q, k, v = l["qkv"](x).chunk(3, -1)
            pe = l["pos"](rel)
            w = l["att"](q[:, :, None] - k[bi, idx] + pe).softmax(2)
            x = x + l["out"]((w * (v[bi, idx] + pe)).sum(2))
        return self.head(x.amax(1))


class ConvNextV2(nn.Module):
    """ConvNeXt-V2 blocks: depthwise 7x7, LayerNorm channels-last, pointwise MLP with GELU and
    global response normalisation (the L2 norm over H and W, divided by its channel mean),
    downsampling by LayerNorm + 2x2 stride-2 convs, three stages on 128x128."""

    def __init__(self, dims=(32, 64, 128)):
        super().__init__()
        self.stem = nn.Conv2d(3, dims[0], 4, 4)
        self.blocks = nn.ModuleList()
        self.down = nn.ModuleList()
        for i, d in enumerate(dims):
            self.blocks.append(nn.ModuleList(nn.ModuleDict(dict(
                dw=nn.Conv2d(d, d, 7, padding=3, groups=d), ln=nn.LayerNorm(d), f1=nn.Linear(d, 4 * d),
                f2=nn.Linear(4 * d, d))) for _ in range(2)))
            if i + 1 < len(dims):
                self.down.append(nn.Conv2d(d, dims[i + 1], 2, 2))
        self.gamma = nn.ParameterList(nn.Parameter(torch.randn(4 * d) * 0.1) for d in dims for _ in range(2))
        self.beta = nn.ParameterList(nn.Parameter(torch.randn(4 * d) * 0.1) for d in dims for _ in range(2))
        self.head = nn.Linear(dims[-1], 10)

    def forward(self, x):
        x = self.stem(x)
        j = 0
        for i, blocks in enumerate(self.blocks):
            for blk in blocks:
                y = blk["ln"](blk["dw"](x).permute(0, 2, 3, 1))
                y = nn.functional.gelu(blk["f1"](y))
                gx = torch.norm(y, p=2, dim=(1, 2), keepdim=True)
                nx = gx / (gx.mean(-1, keepdim=True) + 1e-6)
                y = self.gamma[j] * (y * nx) + self.beta[j] + y
                x = x + blk["f2"](y).permute(0, 3, 1, 2)
                j += 1
            if i < len(self.down):
                x = self.down[i](x)
        return self.head(x.mean((2, 3)))


class SepConv(nn.Sequential):
    def __init__(self, a, b):
        super().__init__(nn.Conv2d(a, a, 3, padding=1, groups=a, bias=False), nn.Conv2d(a, b, 1, bias=False), nn.BatchNorm2d(b))


class Xception(nn.Module):
    """A reduced Xception on a 149x149 image (odd extents: 74, 72, 36, 18, 9): unpadded
    stem convs, entry-flow blocks of separable convs with a 3x3/2 max pool and a strided 1x1
    shortcut, two middle-flow blocks, global pooling."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 32, 3, 2, bias=False), nn.BatchNorm2d(32), nn.ReLU(),
                                  nn.Conv2d(32, 64, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU())
        self.entry = nn.ModuleList()
        for a, b in ((64, 128), (128, 256), (256, 364)):
            self.entry.append(nn.ModuleDict(dict(body=nn.Sequential(SepConv(a, b), nn.ReLU(), SepConv(b, b), nn.MaxPool2d(3, 2, 1)),
                                                 short=nn.Sequential(nn.Conv2d(a, b, 1, 2, bias=False), nn.BatchNorm2d(b)))))
        self.middle = nn.ModuleList(nn.Sequential(*[m for _ in range(3) for m in (nn.ReLU(), SepConv(364, 364))]) for _ in range(2))
        self.fc = nn.Linear(364, 100)
        with torch.no_grad():
            for mod in self.modules():
                if isinstance(mod, nn.BatchNorm2d):
                    mod.running_mean.normal_(0, 0.1)
                    mod.running_var.uniform_(0.5, 1.5)

    def forward(self, x):
        x = self.stem(x)
        for i, blk in enumerate(self.entry):
            y = torch.relu(x) if i else x
            x = blk["body"](y) + blk["short"](x)
        for blk in self.middle:
            x = x + blk(x)
        return self.fc(torch.relu(x).mean((2, 3)))


class Stn(nn.Module):
    """A spatial transformer network: a localisation CNN regresses a 2x3 affine matrix (started
    at the identity), an affine grid (written out) + grid_sample warp the input, a classifier."""

    def __init__(self):
        super().__init__()
        self.loc = nn.Sequential(nn.Conv2d(1, 8, 7), nn.MaxPool2d(2), nn.ReLU(), nn.Conv2d(8, 10, 5), nn.MaxPool2d(2), nn.ReLU())
        self.theta = nn.Sequential(nn.Linear(10 * 3 * 3, 32), nn.ReLU(), nn.Linear(32, 6))
        with torch.no_grad():
            self.theta[2].weight.mul_(0.1)
            self.theta[2].bias.copy_(torch.tensor([1.0, 0, 0, 0, 1, 0]))
        self.cls = nn.Sequential(nn.Conv2d(1, 16, 5), nn.MaxPool2d(2), nn.ReLU(), nn.Conv2d(16, 32, 5), nn.MaxPool2d(2), nn.ReLU(),
                                 nn.Flatten(), nn.Linear(32 * 4 * 4, 10))

    def forward(self, x):
        theta = self.theta(self.loc(x).flatten(1)).view(-1, 2, 3)
        # affine_grid does not export (PyTorch 1.13): the base grid of pixel centres times theta
        n, _, h, w = x.shape
        ys = (torch.arange(h, dtype=torch.float32) * 2 + 1) / h - 1
        xs = (torch.arange(w, dtype=torch.float32) * 2 + 1) / w - 1
        base = torch.stack([xs.expand(h, w), ys[:, None].expand(h, w), torch.ones(h, w)], -1)
        grid = (base.view(1, h * w, 3) @ theta.transpose(1, 2)).view(n, h, w, 2)
        return self.cls(nn.functional.grid_sample(x, grid, align_corners=False)).log_softmax(-1)


class VNet(nn.Module):
    """A small 3-D segmentation net: strided 3-D convs down, trilinear upsampling (a 5-D Resize
    over three axes) and skip concatenations up, PReLU activations, 32^3 input."""

    def __init__(self, c=8):
        super().__init__()
        self.e1 = nn.Sequential(nn.Conv3d(1, c, 3, padding=1), nn.PReLU(c))
        self.e2 = nn.Sequential(nn.Conv3d(c, 2 * c, 2, 2), nn.PReLU(2 * c), nn.Conv3d(2 * c, 2 * c, 3, padding=1), nn.PReLU(2 * c))
        self.e3 = nn.Sequential(nn.Conv3d(2 * c, 4 * c, 2, 2), nn.PReLU(4 * c), nn.Conv3d(4 * c, 4 * c, 3, padding=1), nn.PReLU(4 * c))
        self.d2 = nn.Sequential(nn.Conv3d(6 * c, 2 * c, 3, padding=1), nn.PReLU(2 * c))
        self.d1 = nn.Sequential(nn.Conv3d(3 * c, c, 3, padding=1), nn.PReLU(c))
        self.out = nn.Conv3d(c, 2, 1)

    def forward(self, x):
        up = lambda t: nn.functional.interpolate(t, scale_factor=2, mode="trilinear", align_corners=False)
        a = self.e1(x)
        b = self.e2(a)
        c = self.e3(b)
        y = self.d2(torch.cat([up(c), b], 1))
        y = self.d1(torch.cat([up(y), a], 1))
        return self.out(y).softmax(1)


class Gin(nn.Module):
    """A graph isomorphism network over a batch of 8 graphs (300 nodes, 1200 run-time edges):
    neighbour sums by scatter_add, (1 + eps) x + sum through 2-layer MLPs with BatchNorm, a
    per-graph readout by scatter_add over a batch vector, a classifier over the layers' sums."""

    def __init__(self, f=16, d=64, layers=3, graphs=8):
        super().__init__()
        self.graphs = graphs
        self.eps = nn.Parameter(torch.randn(layers) * 0.1)
        self.mlps = nn.ModuleList(nn.Sequential(nn.Linear(f if i == 0 else d, d), nn.BatchNorm1d(d), nn.ReLU(), nn.Linear(d, d), nn.ReLU())
                                  for i in range(layers))
        self.cls = nn.Linear(d * layers, 5)

    def forward(self, x, edges, batch):
        src, dst = edges[0], edges[1]
        pooled = []
        for i, mlp in enumerate(self.mlps):
            agg = torch.zeros_like(x).scatter_add(0, dst[:, None].expand(-1, x.shape[1]), x[src])
            x = mlp((1 + self.eps[i]) * x + agg)
            pooled.append(torch.zeros(self.graphs, x.shape[1]).scatter_add(0, batch[:, None].expand(-1, x.shape[1]), x))
        return self.cls(torch.cat(pooled, 1))


def gin_inputs():
    n, e = 300, 1200
    batch = torch.sort(torch.randint(0, 8, (n,))).values
    return torch.randn(n, 16), torch.randint(0, n, (2, e)), batch


class CtcGreedy(nn.Module):
    """A speech recogniser with greedy CTC decoding in the graph: 1-D conv front end, a
    bidirectional GRU, log-softmax over 29 symbols, argmax, repeats collapsed by comparing with
    the previous frame, blanks masked to -1 (returned as float)."""

    def __init__(self, mel=40, d=96, sym=29):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv1d(mel, d, 5, 2, 2), nn.ReLU(), nn.Conv1d(d, d, 3, padding=1), nn.ReLU())
        self.gru = nn.GRU(d, d, batch_first=True, bidirectional=True)
        self.fc = nn.Linear(2 * d, sym)

    def forward(self, x):
        h, _ = self.gru(self.conv(x).transpose(1, 2))
        lp = self.fc(h).log_softmax(-1)
        best = lp.argmax(-1)
        prev = torch.cat([torch.full_like(best[:, :1], -1), best[:, :-1]], 1)
        keep = (best != prev) & (best != 0)
        return lp, torch.where(keep, best, torch.full_like(best, -1)).float()


class SwinV2Attn(nn.Module):
    """Swin-V2 window attention: cosine attention (normalised q and k, a clamped learned
    logit scale), a continuous position bias from a small MLP over log-spaced relative
    coordinates, gathered per window pair and squashed by 16 sigmoid; 7x7 windows on 28x28."""

    def __init__(self, d=64, heads=4, win=7):
        super().__init__()
        self.h, self.win = heads, win
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.logit_scale = nn.Parameter(torch.log(10 * torch.ones(heads, 1, 1)))
        self.cpb = nn.Sequential(nn.Linear(2, 128), nn.ReLU(), nn.Linear(128, heads, bias=False))
        r = torch.arange(-(win - 1), win, dtype=torch.float32)
        table = torch.stack(torch.meshgrid(r, r, indexing="ij"), -1)[None] / (win - 1) * 8
        self.register_buffer("table", torch.sign(table) * torch.log2(table.abs() + 1) / math.log2(8))
        c = torch.stack(torch.meshgrid(torch.arange(win), torch.arange(win), indexing="ij")).flatten(1)
        rel = (c[:, :, None] - c[:, None]).permute(1, 2, 0) + (win - 1)
        self.register_buffer("index", rel[..., 0] * (2 * win - 1) + rel[..., 1])
        self.ln = nn.LayerNorm(d)

    def forward(self, x):
        b, hh, ww, d = x.shape
        w = self.win
        t = x.view(b, hh // w, w, ww // w, w, d).permute(0, 1, 3, 2, 4, 5).reshape(-1, w * w, d)
        q, k, v = self.qkv(t).view(t.shape[0], w * w, 3, self.h, d // self.h).permute(2, 0, 3, 1, 4)
        att = nn.functional.normalize(q, dim=-1) @ nn.functional.normalize(k, dim=-1).transpose(-2, -1)
        att = att * torch.clamp(self.logit_scale, max=math.log(100.0)).exp()
        bias = self.cpb(self.table).view(-1, self.h)[self.index.view(-1)].view(w * w, w * w, -1).permute(2, 0, 1)
        att = att + 16 * torch.sigmoid(bias)
        y = (att.softmax(-1) @ v).transpose(1, 2).reshape(t.shape[0], w * w, d)
        y = self.proj(y).view(b, hh // w, ww // w, w, w, d).permute(0, 1, 3, 2, 4, 5).reshape(b, hh, ww, d)
        return x + self.ln(y)


class Tft(nn.Module):
    """Temporal Fusion Transformer pieces: a variable selection network (a gated residual
    network per input variable: Linear, ELU, Linear, GLU, LayerNorm; softmax weights over 8
    variables), an LSTM encoder, interpretable multi-head attention (shared values, heads
    averaged) with a causal mask, GLU gates and a quantile head."""

    def __init__(self, nv=8, d=32, heads=4, t=48):
        super().__init__()
        self.nv, self.h, self.d = nv, heads, d
        self.emb = nn.Linear(1, d)
        self.grn = nn.ModuleList(nn.ModuleList([nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, 2 * d), nn.LayerNorm(d)]) for _ in range(nv))
        self.sel = nn.ModuleList([nn.Linear(nv * d, d), nn.Linear(d, d), nn.Linear(d, 2 * nv), nn.LayerNorm(nv), nn.Linear(nv * d, nv)])
        self.lstm = nn.LSTM(d, d, batch_first=True)
        self.q = nn.Linear(d, d)
        self.k = nn.Linear(d, d)
        self.v = nn.Linear(d, d // heads)
        self.o = nn.Linear(d // heads, d)
        self.gate = nn.Linear(d, 2 * d)
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, 3)
        self.register_buffer("causal", torch.triu(torch.full((t, t), float("-inf")), 1))

    @staticmethod
    def grn_apply(m, x, skip):
        l1, l2, l3, ln = m
        h = l2(nn.functional.elu(l1(x)))
        return ln(skip + nn.functional.glu(l3(h), -1))

    def forward(self, x):
        b, t, nv = x.shape
        e = self.emb(x.unsqueeze(-1))  # b t nv d
        per = torch.stack([self.grn_apply(self.grn[i], e[:, :, i], e[:, :, i]) for i in range(nv)], -2)
        flat = e.reshape(b, t, nv * self.d)
        l1, l2, l3, ln, skip = self.sel
        w = ln(skip(flat) + nn.functional.glu(l3(l2(nn.functional.elu(l1(flat)))), -1)).softmax(-1)
        v_in = (per * w.unsqueeze(-1)).sum(-2)
        h, _ = self.lstm(v_in)
        q = self.q(h).view(b, t, self.h, -1).transpose(1, 2)
        k = self.k(h).view(b, t, self.h, -1).transpose(1, 2)
        att = (q @ k.transpose(-1, -2) / math.sqrt(self.d // self.h) + self.causal).softmax(-1)
        y = self.o((att @ self.v(h).unsqueeze(1)).mean(1))
        y = self.ln(h + nn.functional.glu(self.gate(y), -1))
        return self.head(y)


def img(s=64):
    return (torch.randn(1, 3, s, s),)


MODELS = {
    "resnet18": (lambda: tvm.resnet18(), img),
    "mobilenet_v2": (lambda: tvm.mobilenet_v2(), img),
    "mobilenet_v3_small": (lambda: tvm.mobilenet_v3_small(), img),
    "efficientnet_b0": (lambda: tvm.efficientnet_b0(), img),
    "densenet121": (lambda: tvm.densenet121(), img),
    "squeezenet1_1": (lambda: tvm.squeezenet1_1(), img),
    "shufflenet_v2_x0_5": (lambda: tvm.shufflenet_v2_x0_5(), img),
    "regnet_y_400mf": (lambda: tvm.regnet_y_400mf(), img),
    "mnasnet0_5": (lambda: tvm.mnasnet0_5(), img),
    "googlenet": (lambda: tvm.googlenet(aux_logits=False, init_weights=True), img),
    "convnext_tiny": (lambda: tvm.convnext_tiny(), img),
    "swin_t": (lambda: tvm.swin_t(), lambda: img(224)),
    "resnet18_fpn": (fpn, img),
    "lraspp_mobilenet_v3": (lambda: Seg(tvm.segmentation.lraspp_mobilenet_v3_large(weights_backbone=None)), img),
    "deeplabv3_mobilenet_v3": (
        lambda: Seg(tvm.segmentation.deeplabv3_mobilenet_v3_large(weights_backbone=None, aux_loss=False)), img),
    "decoder": (decoder, lambda: (torch.randn(1, 64, 32, 32),)),
    "vit_tiny": (
        lambda: torchvision.models.vision_transformer.VisionTransformer(
            image_size=32, patch_size=8, num_layers=2, num_heads=4, hidden_dim=64, mlp_dim=128, num_classes=10),
        lambda: img(32),
    ),
    "bert_layer": (
        lambda: BertLayer(),
        lambda: (torch.randint(0, 100, (1, 16)), torch.ones(1, 16, dtype=torch.int64)),
    ),
    # vgg's adaptive pooling to 7x7 exports only when 7 divides the feature size: 224x224
    "vgg11": (lambda: tvm.vgg11(), lambda: img(224)),
    "audio_cnn": (audio_cnn, lambda: (torch.randn(1, 1, 8000),)),
    "super_res": (super_res, lambda: (torch.randn(1, 1, 64, 64),)),
    "gn_block": (lambda: GNBlock(), lambda: (torch.randn(1, 32, 32, 32),)),
    # second batch (ninth round): grouped convs, fused MBConv, Inception, video, a causal LM
    "resnext50_32x4d": (lambda: tvm.resnext50_32x4d(), img),
    "mobilenet_v3_large": (lambda: tvm.mobilenet_v3_large(), img),
    "efficientnet_v2_s": (lambda: tvm.efficientnet_v2_s(), img),
    "regnet_x_400mf": (lambda: tvm.regnet_x_400mf(), img),
    "shufflenet_v2_x1_0": (lambda: tvm.shufflenet_v2_x1_0(), img),
    "inception_v3": (lambda: tvm.inception_v3(aux_logits=False, init_weights=True), lambda: img(96)),
    "alexnet": (lambda: tvm.alexnet(), lambda: img(224)),
    "fcn_resnet50": (lambda: Seg(tvm.segmentation.fcn_resnet50(weights_backbone=None, aux_loss=False)), img),
    "r3d_18": (lambda: tvm.video.r3d_18(), lambda: (torch.randn(1, 3, 8, 56, 56),)),
    "r2plus1d_18": (lambda: tvm.video.r2plus1d_18(), lambda: (torch.randn(1, 3, 8, 56, 56),)),
    "causal_lm": (lambda: CausalLM(), lambda: (torch.randint(0, 200, (1, 24)),), 14),
    "transformer_encoder": (
        lambda: nn.TransformerEncoder(nn.TransformerEncoderLayer(64, 4, 128, activation="gelu", batch_first=True), 2),
        lambda: (torch.randn(1, 16, 64),),
    ),
    "maxvit_t": (lambda: tvm.maxvit_t(), lambda: img(224)),
    "swin_v2_t": (lambda: tvm.swin_v2_t(), lambda: img(256), 17),
    "mc3_18": (lambda: tvm.video.mc3_18(), lambda: (torch.randn(1, 3, 8, 56, 56),)),
    "s3d": (lambda: tvm.video.s3d(), lambda: (torch.randn(1, 3, 16, 224, 224),)),
    "tcn": (TCN, lambda: (torch.randn(1, 16, 200),)),
    "conformer": (Conformer, lambda: (torch.randn(1, 51, 64),)),
    "unet": (UNet, img),
    "style_net": (StyleNet, img),
    "pointnet": (PointNet, lambda: (torch.randn(1, 3, 1000),)),
    "gcn": (GCN, lambda: (torch.randn(100, 16),), 16),
    "yolo": (Yolo, lambda: img(96)),
    "raft_small": (Raft, lambda: (torch.randn(1, 3, 128, 128), torch.randn(1, 3, 128, 128)), 16),
    "mlp_mixer": (Mixer, img),
    "mobilenet_v2_224": (lambda: tvm.mobilenet_v2(), lambda: img(224)),
    "efficientnet_b0_224": (lambda: tvm.efficientnet_b0(), lambda: img(224)),
    "resnet50_224": (lambda: tvm.resnet50(), lambda: img(224)),
    "vit_b_16": (lambda: tvm.vit_b_16(), lambda: img(224)),
    # fourth batch (eleventh round): recurrent and sequence models
    "crnn": (Crnn, lambda: (torch.randn(1, 1, 32, 100),)),
    "speech_gru": (SpeechGru, lambda: (torch.randn(1, 1, 80, 120),)),
    "lstm_batch_first": (LstmBatchFirst, lambda: (torch.randn(4, 50, 40),)),
    "rnn_relu": (RnnRelu, lambda: (torch.randn(30, 2, 24), torch.randn(2, 2, 48))),
    "packed_lstm": (PackedLstm, lambda: (torch.randn(20, 3, 16),)),
    "packed_gru_io": (PackedGruIO, lambda: (torch.randn(15, 4, 16), torch.tensor([15, 11, 6, 2]))),
    "attn_decoder": (AttnDecoder, lambda: (torch.randint(0, 3000, (2,)), torch.randn(2, 256), torch.randn(2, 256),
                                           torch.randn(40, 2, 256))),
    "lstm_cell_loop": (LstmCellLoop, lambda: (torch.randn(12, 2, 32),)),
    "gru_large": (lambda: nn.GRU(512, 1024), lambda: (torch.randn(16, 1, 512),)),
    "lstm_3layer": (lambda: nn.LSTM(64, 256, num_layers=3), lambda: (torch.randn(100, 1, 64),)),
    # fifth batch: sequence-to-sequence, audio, diffusion, recommender and mixture-of-experts layers
    "seq2seq_transformer": (Seq2SeqTransformer, lambda: (torch.randn(10, 2, 64), torch.randn(7, 2, 64),
                                                          torch.tensor([[False] * 10, [False] * 7 + [True] * 3])), 14),
    "clip_text": (ClipText, lambda: (torch.randint(0, 300, (2, 16)),)),
    "wav2vec_fe": (Wav2VecFE, lambda: (torch.randn(1, 8000),)),
    "sd_block": (SdBlock, lambda: (torch.randn(1, 64, 16, 16), torch.tensor([500.0]), torch.randn(1, 8, 32))),
    "mobilevit_block": (MobileVitBlock, lambda: (torch.randn(1, 32, 32, 32),)),
    "whisper_enc": (WhisperEnc, lambda: (torch.randn(1, 80, 600),)),
    "t5_layer": (T5Layer, lambda: (torch.randn(1, 20, 64),)),
    "gpt2_step": (Gpt2Step, lambda: (torch.randint(0, 500, (1, 1)), torch.randn(1, 4, 15, 16), torch.randn(1, 4, 15, 16))),
    "hrnet_fuse": (HrFuse, img),
    "detr": (DetrHead, img),
    "dlrm": (Dlrm, lambda: (torch.randn(8, 13), torch.stack([torch.randint(0, n, (8, 4)) for n in (50, 50, 50)], 1))),
    "moe": (Moe, lambda: (torch.randn(24, 64),)),
    # sixth batch: LLaMA, super-resolution, speech separation, attention CNNs, point clouds, 3-D, tabular
    "llama_block": (LlamaBlock, lambda: (torch.randn(1, 40, 128),), 14),
    "rrdb": (Rrdb, lambda: (torch.randn(1, 3, 48, 48),)),
    "conv_tasnet": (ConvTasNet, lambda: (torch.randn(1, 1, 8000),)),
    "cbam_net": (CbamNet, img),
    "ghostnet": (GhostNet, lambda: img(128)),
    "pvt_stage": (PvtStage, lambda: img(128)),
    "dgcnn": (Dgcnn, lambda: (torch.randn(2, 3, 256),)),
    "unet3d": (Unet3d, lambda: (torch.randn(1, 1, 24, 32, 32),)),
    "deep_cross": (DeepCross, lambda: (torch.randn(16, 10), torch.stack([torch.randint(0, n, (16,)) for n in (30, 20, 40, 25)], 1))),
    "centernet": (CenterNet, lambda: img(128)),
    "perceiver": (Perceiver, lambda: (torch.randn(2, 150, 32),)),
    "levit_attn": (LevitAttn, lambda: (torch.randn(1, 64, 7, 7),)),
    "sknet": (SkNet, img),
    "dcgan_gen": (DcganGen, lambda: (torch.randn(1, 100, 1, 1),)),
    # seventh batch: ConvMixer, PoolFormer, gMLP, capsules, ConvLSTM, NeRF, ALiBi, axial attention,
    # metric learning, tabular transformer, speaker embedding, BiFPN, SegFormer
    "convmixer": (ConvMixer, lambda: img(224)),
    "poolformer": (PoolFormer, lambda: img(224)),
    "gmlp": (Gmlp, lambda: img(32)),
    "capsnet": (CapsNet, lambda: (torch.randn(1, 1, 28, 28),)),
    "convlstm": (ConvLstm, lambda: (torch.randn(1, 6, 8, 32, 32),)),
    "nerf": (Nerf, lambda: (torch.randn(2048, 3), nn.functional.normalize(torch.randn(2048, 3), dim=1))),
    "alibi_lm": (AlibiLM, lambda: (torch.randint(0, 400, (2, 48)),
                                   torch.cat([torch.ones(1, 48), torch.cat([torch.zeros(1, 8), torch.ones(1, 40)], 1)]).long()), 14),
    "axial_attn": (AxialAttn, lambda: (torch.randn(1, 64, 32, 32),)),
    "siamese": (Siamese, img),
    "ft_transformer": (FtTransformer, lambda: (torch.randn(32, 24), torch.stack([torch.randint(0, n, (32,)) for n in (10, 7, 30, 5)], 1))),
    "ecapa": (Ecapa, lambda: (torch.randn(1, 80, 200),)),
    "bifpn": (BiFpn, lambda: (torch.randn(1, 64, 32, 32), torch.randn(1, 64, 16, 16), torch.randn(1, 64, 8, 8))),
    "segformer_head": (SegformerHead, lambda: tuple(torch.randn(1, c, s, s) for c, s in ((32, 64), (64, 32), (160, 16), (256, 8)))),
    # eighth batch: detection heads, linear attention, vector quantisation, WaveNet, STFT, unfold
    "retina_head": (RetinaHead, lambda: tuple(torch.randn(1, 64, s, s) for s in (32, 16, 8))),
    "linear_attn": (LinearAttn, lambda: (torch.randn(2, 96, 64),)),
    "vq_vae": (VqVae, img),
    "wavenet": (WaveNet, lambda: (torch.randn(1, 1, 8000),)),
    "spectrogram": (Spectrogram, lambda: (torch.randn(1, 1, 16000),)),
    "unfold_attn": (UnfoldAttn, lambda: (torch.randn(1, 32, 32, 32),)),
    # ninth batch: unpooling, RoIAlign, fake-quantised INT8, run-time conv weights, relative
    # positions, temporal shift, coordinate channels, neural ODE, Performer, top-k attention, a scan
    "segnet": (SegNet, img),
    "roi_head": (RoiHead, roi_inputs, 16),
    "qdq_cnn": (QdqCnn, img),
    "condconv": (CondConv, img),
    "transformer_xl": (TransformerXL, lambda: (torch.randn(2, 24, 64), torch.randn(2, 40, 64)), 14),
    "tsm": (Tsm, lambda: (torch.randn(8, 3, 64, 64),)),
    "coordconv": (CoordConv, lambda: (torch.randn(1, 3, 96, 96),)),
    "neural_ode": (NeuralOde, lambda: (torch.randn(64, 32),)),
    "performer": (Performer, lambda: (torch.randn(2, 256, 64),)),
    "topk_attn": (TopkAttn, lambda: (torch.randn(2, 64, 64),)),
    "selective_scan": (SelectiveScan, lambda: (torch.randn(2, 24, 32),)),
    # tenth batch: graph attention, a vocoder, a normalizing flow, PointNet++, token merging
    "gat": (Gat, gat_inputs, 16),
    "hifigan": (HifiGan, lambda: (torch.randn(1, 80, 32),)),
    "realnvp": (RealNvp, lambda: (torch.randn(4, 3, 16, 16),)),
    "pointnet2": (PointNet2, lambda: (torch.randn(2, 512, 3), torch.randn(2, 512, 3))),
    "token_merge": (TokenMerge, lambda: (torch.randn(2, 98, 64),), 16),
    # eleventh batch: keypoints and matching, sparsemax, point attention, GRN, odd extents,
    # affine warps, trilinear upsampling, graph sums, CTC decoding, cosine window attention, TFT
    "superpoint": (SuperPoint, lambda: (torch.randn(1, 1, 120, 160),)),
    "sinkhorn": (Sinkhorn, lambda: (torch.randn(2, 64, 100), torch.randn(2, 64, 90))),
    "tabnet": (TabNet, lambda: (torch.randn(256, 32),)),
    "point_transformer": (PointTransformer, lambda: (torch.randn(2, 256, 3),)),
    "convnext_v2": (ConvNextV2, lambda: (torch.randn(1, 3, 128, 128),)),
    "xception": (Xception, lambda: (torch.randn(1, 3, 149, 149),)),
    "stn": (Stn, lambda: (torch.randn(4, 1, 28, 28),), 16),
    "vnet": (VNet, lambda: (torch.randn(1, 1, 32, 32, 32),)),
    "gin": (Gin, gin_inputs, 16),
    "ctc_greedy": (CtcGreedy, lambda: (torch.randn(2, 40, 200),)),
    "swinv2_attn": (SwinV2Attn, lambda: (torch.randn(1, 28, 28, 64),)),
    "tft": (Tft, lambda: (torch.randn(4, 48, 8),)),
}


def check(weft, out, names):
    """Runs each exported model with `weft run` (1 thread) and compares every output with
    PyTorch's: max |weft - torch| <= 1e-4 * max(1, max |torch|). Prints one line per model."""
    import subprocess
    import tempfile

    import numpy as np

    for name in names:
        path = os.path.join(out, name + ".onnx")
        if not os.path.exists(path):
            print("%-22s not exported" % name)
            continue
        ins = sorted(f for f in os.listdir(out) if f.startswith(name + ".in.") and f.endswith(".bin"))
        outs = sorted(f for f in os.listdir(out) if f.startswith(name + ".out") and f.endswith(".bin"))
        with tempfile.TemporaryDirectory() as tmp:
            cmd = [weft, "run", path, "--threads", "1", "--output", tmp + "/"]
            for f in ins:
                cmd += ["--input", "%s=%s" % (f.split(".")[-2], os.path.join(out, f))]
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode != 0:
                print("%-22s FAILED: %s" % (name, r.stderr.strip().splitlines()[-1][:200]))
                continue
            worst, scale = 0.0, 0.0
            for f in outs:
                ref = np.fromfile(os.path.join(out, f), np.float32)
                got = np.fromfile(os.path.join(tmp, f.split(".")[-2] + ".bin"), np.float32)
                if got.size != ref.size:
                    worst = float("inf")
                    break
                mx = float(np.abs(ref).max())
                scale = max(scale, mx)
                worst = max(worst, float(np.abs(got - ref).max()) / (mx if mx > 0 else 1.0))  # all-zero: absolute
            print("%-22s %d output(s), max |torch| %.3g, max |weft - torch| / max |torch| = %.2g %s"
                  % (name, len(outs), scale, worst, "ok" if worst <= 1e-4 else "MISMATCH"), flush=True)


def time_pytorch(name, threads):
    """Median of 50 runs of model NAME in PyTorch (eval, inference_mode, after 5 warm-up runs)."""
    import time

    torch.set_num_threads(threads)
    torch.manual_seed(0)
    m = MODELS[name][0]().eval()
    xs = MODELS[name][1]()
    with torch.inference_mode():
        for _ in range(5):
            m(*xs)
        ts = []
        for _ in range(50):
            t = time.perf_counter()
            m(*xs)
            ts.append(time.perf_counter() - t)
    ts.sort()
    print("%s pytorch %d thread(s): median %.3f ms" % (name, threads, ts[len(ts) // 2] * 1e3))


def main():
    if len(sys.argv) > 2 and sys.argv[1] == "--time-pytorch":
        # survey_models.py --time-pytorch NAME [THREADS]
        time_pytorch(sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 1)
        return
    if len(sys.argv) > 2 and sys.argv[1] == "--check":
        # survey_models.py --check WEFT OUT_DIR [NAME ...]
        check(sys.argv[2], sys.argv[3], sys.argv[4:] or list(MODELS))
        return
    out = sys.argv[1]
    names = sys.argv[2:] or list(MODELS)
    os.makedirs(out, exist_ok=True)
    for name in names:
        build, inputs = MODELS[name][:2]
        opset = MODELS[name][2] if len(MODELS[name]) > 2 else 13
        m = build().eval()
        with torch.no_grad():  # zero-initialised heads (ViT's) would make every output 0
            for p in m.parameters():
                if p.dim() >= 2 and not p.any():
                    p.normal_(0, 0.02)
        # not under torch.no_grad(): there nn.MultiheadAttention takes its fused fast path,
        # which does not export
        torch.manual_seed(1)
        xs = inputs()
        try:
            with torch.no_grad():
                ys = m(*xs)
            flat = lambda y: sum((flat(z) for z in y), ()) if isinstance(y, (tuple, list)) else (y,)
            ys = flat(ys)  # nn.LSTM returns (y, (h, c)); the export flattens it the same way
            torch.onnx.export(m, xs, os.path.join(out, name + ".onnx"), opset_version=opset,
                              input_names=["in%d" % i for i in range(len(xs))],
                              output_names=["out%d" % i for i in range(len(ys))])
            for i, x in enumerate(xs):
                x.numpy().tofile(os.path.join(out, "%s.in.in%d.bin" % (name, i)))
            for i, y in enumerate(ys):
                y.numpy().tofile(os.path.join(out, "%s.out%d.bin" % (name, i)))
            print(name, flush=True)
        except Exception as e:  # noqa: BLE001  (the survey records export failures too)
            print(name, "export failed:", str(e).splitlines()[0], flush=True)


if __name__ == "__main__":
    main()
