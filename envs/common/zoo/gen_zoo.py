#!/usr/bin/env python3
"""gen_zoo.py - builds the hwgym workload zoo (docs/zoo.md).

Writes, for every built-in model, envs/common/zoo/<model>.csv (the documented zoo format that
hw_zoo_load_file reads) and envs/common/zoo_models.c (the same tables as static const C data).
Both outputs are committed; `make` never runs this script.  Run it from the repository root
after changing a model:  python3 envs/common/zoo/gen_zoo.py

Conventions (MAESTRO's): Y, X = INPUT rows/cols, Yo, Xo = output rows/cols, K = output channels,
C = input channels, R x S = filter rows x cols.  pad = row padding, pad_x = column padding.
"""
import os
import sys

OPS = ["conv", "dwconv", "fc", "matmul", "pool", "eltwise", "softmax", "norm", "concat",
       "upsample", "embed"]
OP_ENUM = {o: "HW_OP_" + o.upper() for o in OPS}
COLS = ["name", "op", "N", "K", "C", "R", "S", "Y", "X", "Yo", "Xo", "stride", "pad", "pad_x",
        "dilation", "groups", "inputs"]


class Graph:
    def __init__(self, name, title, source):
        self.name, self.title, self.source = name, title, source
        self.L = []

    def last(self):
        return len(self.L) - 1

    def add(self, name, op, ins, K=1, C=1, R=1, S=1, Y=1, X=1, stride=1, pad=0, pad_x=None,
            dilation=1, groups=1, N=1, Yo=None, Xo=None):
        assert op in OPS, op
        if pad_x is None:
            pad_x = pad
        if Yo is None or Xo is None:
            if op in ("conv", "dwconv", "pool"):
                Yo = (Y + 2 * pad - dilation * (R - 1) - 1) // stride + 1
                Xo = (X + 2 * pad_x - dilation * (S - 1) - 1) // stride + 1
            elif op == "upsample":
                Yo, Xo = Y * stride, X * stride
            else:
                Yo, Xo = Y, X
        ins = [ins] if isinstance(ins, int) else list(ins)
        assert 1 <= len(ins) <= 4 and all(-1 <= i < len(self.L) for i in ins), (name, ins)
        if op == "dwconv":
            assert K == C == groups, name
        self.L.append(dict(name=name, op=op, N=N, K=K, C=C, R=R, S=S, Y=Y, X=X, Yo=Yo, Xo=Xo,
                           stride=stride, pad=pad, pad_x=pad_x, dilation=dilation,
                           groups=groups, inputs=ins))
        return len(self.L) - 1

    # shape helpers ------------------------------------------------------------------------
    def out(self, i):
        l = self.L[i]
        return l["K"], l["Yo"], l["Xo"]

    def conv(self, name, src, K, R, S=None, stride=1, pad=None, pad_x=None, extra=()):
        S = R if S is None else S
        C, Y, X = self.out(src) if src >= 0 else self.input_shape
        if pad is None:  # "same" padding for odd kernels
            pad, pad_x = (R - 1) // 2, (S - 1) // 2
        return self.add(name, "conv", [src] + list(extra), K=K, C=C, R=R, S=S, Y=Y, X=X,
                        stride=stride, pad=pad, pad_x=pad_x)

    def dw(self, name, src, R, stride=1):
        C, Y, X = self.out(src)
        return self.add(name, "dwconv", [src], K=C, C=C, R=R, S=R, Y=Y, X=X, stride=stride,
                        pad=(R - 1) // 2, groups=C)

    def pool(self, name, src, R, stride, pad=0, glob=False):
        C, Y, X = self.out(src)
        if glob:
            return self.add(name, "pool", [src], K=C, C=C, R=Y, S=X, Y=Y, X=X, stride=1, pad=0)
        return self.add(name, "pool", [src], K=C, C=C, R=R, S=R, Y=Y, X=X, stride=stride,
                        pad=pad)

    def fc(self, name, src, K, C=None, rows=1, extra=()):
        if C is None:
            c, y, x = self.out(src)
            C = c * y * x
        return self.add(name, "fc", [src] + list(extra), K=K, C=C, Y=rows, X=1)

    def elt(self, name, srcs, op="eltwise"):
        srcs = [srcs] if isinstance(srcs, int) else srcs
        C, Y, X = self.out(srcs[0])
        l0 = self.L[srcs[0]]
        return self.add(name, op, srcs, K=C, C=C, Y=Y, X=X, N=l0["N"])

    def concat(self, name, srcs):
        shapes = [self.out(s) for s in srcs]
        C = sum(s[0] for s in shapes)
        Y, X = shapes[0][1], shapes[0][2]
        assert all(s[1] == Y and s[2] == X for s in shapes), (name, shapes)
        return self.add(name, "concat", srcs, K=C, C=C, Y=Y, X=X)


# --------------------------------------------------------------------------------------------
# MobileNet-v2: MAESTRO's layer list (data/model/MobileNetV2_model.m), verbatim order, names and
# dimensions, including MAESTRO's quirks (1x1 CONV1, "Residual" adds modelled as 1x1 DSCONV,
# Bottleneck5_2_3 appearing twice, CONV2D_3 as a 7x7 conv over the 7x7 map).
MAESTRO_MV2 = [  # name, type, K (MAESTRO file; 1 for DSCONV), C, R(=S), Y(=X), stride
    ("CONV1", "conv", 32, 3, 1, 224, 2),
    ("Bottleneck1_1_1", "conv", 32, 32, 1, 112, 1),
    ("Bottleneck1_1_2", "dw", 1, 32, 3, 112, 1),
    ("Bottleneck1_1_3", "conv", 16, 32, 1, 112, 1),
    ("Bottleneck1_1_Residual", "dw", 1, 16, 1, 112, 1),
    ("Bottleneck2_1_1", "conv", 96, 16, 1, 112, 1),
    ("Bottleneck2_1_2", "dw", 1, 96, 3, 112, 2),
    ("Bottleneck2_1_3", "conv", 96, 96, 1, 56, 1),
    ("Bottleneck2_2_1", "conv", 96, 96, 1, 56, 1),
    ("Bottleneck2_2_2", "dw", 1, 96, 3, 56, 1),
    ("Bottleneck2_2_3", "conv", 24, 96, 1, 56, 1),
    ("Bottleneck3_1_1", "conv", 144, 24, 1, 56, 1),
    ("Bottleneck3_1_2", "dw", 1, 144, 3, 56, 2),
    ("Bottleneck3_1_3", "conv", 144, 144, 1, 28, 1),
    ("Bottleneck3_2_1", "conv", 144, 144, 1, 28, 1),
    ("Bottleneck3_2_2", "dw", 1, 144, 3, 28, 1),
    ("Bottleneck3_2_3", "conv", 144, 144, 1, 28, 1),
    ("Bottleneck3_2_Residual", "dw", 1, 144, 1, 28, 1),
    ("Bottleneck3_3_1", "conv", 144, 144, 1, 28, 1),
    ("Bottleneck3_3_2", "dw", 1, 144, 3, 28, 1),
    ("Bottleneck3_3_3", "conv", 32, 144, 1, 28, 1),
    ("Bottleneck4_1_1", "conv", 192, 32, 1, 28, 1),
    ("Bottleneck4_1_2", "dw", 1, 192, 3, 28, 2),
    ("Bottleneck4_1_3", "conv", 192, 192, 1, 14, 1),
    ("Bottleneck4_2_1", "conv", 192, 192, 1, 14, 1),
    ("Bottleneck4_2_2", "dw", 1, 192, 3, 14, 1),
    ("Bottleneck4_2_3", "conv", 192, 192, 1, 14, 1),
    ("Bottleneck4_2_Residual", "dw", 1, 192, 1, 14, 1),
    ("Bottleneck4_3_1", "conv", 192, 192, 1, 14, 1),
    ("Bottleneck4_3_2", "dw", 1, 192, 3, 14, 1),
    ("Bottleneck4_3_3", "conv", 192, 192, 1, 14, 1),
    ("Bottleneck4_3_Residual", "dw", 1, 192, 1, 14, 1),
    ("Bottleneck4_4_1", "conv", 192, 192, 1, 14, 1),
    ("Bottleneck4_4_2", "dw", 1, 192, 3, 14, 1),
    ("Bottleneck4_4_3", "conv", 64, 192, 1, 14, 1),
    ("Bottleneck5_1_1", "conv", 384, 64, 1, 14, 1),
    ("Bottleneck5_1_2", "dw", 1, 384, 3, 14, 1),
    ("Bottleneck5_1_3", "conv", 384, 384, 1, 14, 1),
    ("Bottleneck5_2_1", "conv", 384, 384, 1, 14, 1),
    ("Bottleneck5_2_2", "dw", 1, 384, 3, 14, 1),
    ("Bottleneck5_2_3", "conv", 96, 384, 1, 14, 1),
    ("Bottleneck6_1_1", "conv", 576, 96, 1, 14, 1),
    ("Bottleneck6_1_2", "dw", 1, 576, 3, 14, 2),
    ("Bottleneck5_2_3", "conv", 576, 576, 1, 7, 1),
    ("Bottleneck6_2_1", "conv", 576, 576, 1, 7, 1),
    ("Bottleneck6_2_2", "dw", 1, 576, 3, 7, 1),
    ("Bottleneck6_2_3", "conv", 576, 576, 1, 7, 1),
    ("Bottleneck6_2_Residual", "dw", 1, 576, 1, 7, 1),
    ("Bottleneck6_3_1", "conv", 576, 576, 1, 7, 1),
    ("Bottleneck6_3_2", "dw", 1, 576, 3, 7, 1),
    ("Bottleneck6_3_3", "conv", 160, 576, 1, 7, 1),
    ("Bottleneck7_1_1", "conv", 960, 160, 1, 7, 1),
    ("Bottleneck7_1_2", "dw", 1, 960, 3, 7, 1),
    ("Bottleneck7_1_3", "conv", 320, 960, 1, 7, 1),
    ("CONV2D_2", "conv", 1280, 320, 1, 7, 1),
    ("CONV2D_3", "conv", 1000, 1280, 7, 7, 1),
]


def mobilenet_v2():
    g = Graph("mobilenet_v2", "MobileNet-v2 (MAESTRO's layer list)",
              "MAESTRO data/model/MobileNetV2_model.m, as run in the MAESTRO reference CSV")
    block_in = {}
    for name, t, K, C, R, Y, s in MAESTRO_MV2:
        prev = g.last()
        if name.endswith("_1") and name.startswith("Bottleneck"):
            block_in[name[:-2]] = prev
        ins = [prev]
        if name.endswith("_Residual"):
            ins.append(block_in[name[: -len("_Residual")]])
        pad = 0 if R == 1 or name == "CONV2D_3" else (R - 1) // 2
        if t == "dw":
            g.add(name, "dwconv", ins, K=C, C=C, R=R, S=R, Y=Y, X=Y, stride=s, pad=pad, groups=C)
        else:
            g.add(name, "conv", ins, K=K, C=C, R=R, S=R, Y=Y, X=Y, stride=s, pad=pad)
    return g


# --------------------------------------------------------------------------------------------
def vgg16():
    # MAESTRO data/model/vgg16_model.m (13 convs, same names) + the three FC layers.  The five
    # 2x2 max-pools are folded into the edges (the consumer's Y/X is the pooled size) so that
    # the layer index is MAESTRO's conv index: index 2 = CONV3 (K128 C64 3x3 on 112x112).
    g = Graph("vgg16", "VGG16 (conv + FC layers; pools folded)",
              "Simonyan & Zisserman 2015, config D; conv names/dims of MAESTRO vgg16_model.m")
    cfg = [(64, 224), (64, 224), (128, 112), (128, 112), (256, 56), (256, 56), (256, 56),
           (512, 28), (512, 28), (512, 28), (512, 14), (512, 14), (512, 14)]
    C = 3
    for i, (K, Y) in enumerate(cfg):
        g.add("CONV%d" % (i + 1), "conv", [g.last()], K=K, C=C, R=3, S=3, Y=Y, X=Y, pad=1)
        C = K
    g.add("FC6", "fc", [g.last()], K=4096, C=512 * 7 * 7)
    g.add("FC7", "fc", [g.last()], K=4096, C=4096)
    g.add("FC8", "fc", [g.last()], K=1000, C=4096)
    return g


def alexnet():
    # Krizhevsky et al. 2012, single-tower form (groups = 1), 227x227 input; 3x3/2 max-pools
    # folded into the edges like vgg16.
    g = Graph("alexnet", "AlexNet (conv + FC layers; pools folded)",
              "Krizhevsky et al. 2012 (single tower, 227x227 input)")
    g.add("CONV1", "conv", [-1], K=96, C=3, R=11, S=11, Y=227, X=227, stride=4)     # -> 55
    g.add("CONV2", "conv", [0], K=256, C=96, R=5, S=5, Y=27, X=27, pad=2)           # pool 55->27
    g.add("CONV3", "conv", [1], K=384, C=256, R=3, S=3, Y=13, X=13, pad=1)          # pool 27->13
    g.add("CONV4", "conv", [2], K=384, C=384, R=3, S=3, Y=13, X=13, pad=1)
    g.add("CONV5", "conv", [3], K=256, C=384, R=3, S=3, Y=13, X=13, pad=1)
    g.add("FC6", "fc", [4], K=4096, C=256 * 6 * 6)                                  # pool 13->6
    g.add("FC7", "fc", [5], K=4096, C=4096)
    g.add("FC8", "fc", [6], K=1000, C=4096)
    return g


# --------------------------------------------------------------------------------------------
def resnet(depth):
    # torchvision ResNet v1.5 (stride on the 3x3 conv), 224x224 input.  One node per conv
    # (BN + ReLU folded), the residual add fused into the block's last conv (its 2nd input is
    # the shortcut), plus maxpool, avgpool, fc and softmax.  ResNet-50 -> 57 nodes, ResNet-101
    # -> 108 nodes (EGRL's counts).
    blocks = {18: [2, 2, 2, 2], 50: [3, 4, 6, 3], 101: [3, 4, 23, 3]}[depth]
    bottleneck = depth >= 50
    g = Graph("resnet%d" % depth, "ResNet-%d" % depth,
              "He et al. 2016, torchvision resnet%d (v1.5)" % depth)
    g.input_shape = (3, 224, 224)
    x = g.conv("conv1", -1, 64, 7, stride=2, pad=3)
    x = g.pool("maxpool", x, 3, 2, pad=1)
    inplanes = 64
    for li, n in enumerate(blocks):
        planes = 64 << li
        for b in range(n):
            s = 2 if (b == 0 and li > 0) else 1
            p = "layer%d.%d." % (li + 1, b)
            outp = planes * 4 if bottleneck else planes
            if bottleneck:
                y = g.conv(p + "conv1", x, planes, 1)
                y = g.conv(p + "conv2", y, planes, 3, stride=s)
            else:
                y = g.conv(p + "conv1", x, planes, 3, stride=s)
            sc = x
            if s != 1 or inplanes != outp:
                sc = g.conv(p + "downsample", x, outp, 1, stride=s, pad=0)
            last = "conv3" if bottleneck else "conv2"
            y = g.conv(p + last, y, outp, 1 if bottleneck else 3, extra=[sc])
            x = y
            inplanes = outp
    x = g.pool("avgpool", x, 0, 1, glob=True)
    x = g.fc("fc", x, 1000)
    g.elt("softmax", x, op="softmax")
    return g


# --------------------------------------------------------------------------------------------
def bert_base(seq=128):
    # BERT-base (L=12, H=768, A=12, FFN 3072), batch 1, sequence 128.  One node per operator of a
    # PyTorch BertModel export with LayerNorm and GELU as single ops: 31 nodes per encoder layer,
    # plus embeddings (1 EMBED node: word+position+type lookups and their sum) and its LayerNorm,
    # plus the pooler (dense + tanh) = 2 + 12*31 + 2 = 376 nodes (EGRL's count).
    H, A, F, V, P, T = 768, 12, 3072, 30522, 512, 2
    D = H // A
    g = Graph("bert_base", "BERT-base (seq 128)", "Devlin et al. 2019, HF transformers BertModel")
    e = g.add("embeddings", "embed", [-1], K=H, C=V + P + T, Y=seq, X=1)
    x = g.add("embeddings.LayerNorm", "norm", [e], K=H, C=H, Y=seq, X=1)

    def tok(name, src, ins=None, op="eltwise", Hd=H, N=1, Y=seq):
        return g.add(name, op, ins if ins is not None else [src], K=Hd, C=Hd, Y=Y, X=1, N=N)

    for i in range(12):
        p = "layer%d." % i
        heads = {}
        for t in ("q", "k", "v"):
            m = g.add(p + t + ".matmul", "fc", [x], K=H, C=H, Y=seq, X=1)
            b = tok(p + t + ".bias", m)
            r = tok(p + t + ".reshape", b)
            tr = tok(p + t + ".transpose", r)
            if t == "k":
                tr = tok(p + "k.transpose_t", tr)
            heads[t] = tr
        sc = g.add(p + "scores.matmul", "matmul", [heads["q"], heads["k"]], N=A, Y=seq, C=D, K=seq,
                   X=1)
        sc = g.add(p + "scores.div", "eltwise", [sc], N=A, K=seq, C=seq, Y=seq, X=1)
        sc = g.add(p + "scores.mask", "eltwise", [sc, -1], N=A, K=seq, C=seq, Y=seq, X=1)
        pr = g.add(p + "probs.softmax", "softmax", [sc], N=A, K=seq, C=seq, Y=seq, X=1)
        cx = g.add(p + "ctx.matmul", "matmul", [pr, heads["v"]], N=A, Y=seq, C=seq, K=D, X=1)
        cx = tok(p + "ctx.transpose", cx)
        cx = tok(p + "ctx.reshape", cx)
        o = g.add(p + "attn_out.matmul", "fc", [cx], K=H, C=H, Y=seq, X=1)
        o = tok(p + "attn_out.bias", o)
        o = tok(p + "attn_out.residual", o, ins=[o, x])
        x = tok(p + "attn_out.LayerNorm", o, op="norm")
        f = g.add(p + "ffn1.matmul", "fc", [x], K=F, C=H, Y=seq, X=1)
        f = tok(p + "ffn1.bias", f, Hd=F)
        f = tok(p + "ffn1.gelu", f, Hd=F)
        f = g.add(p + "ffn2.matmul", "fc", [f], K=H, C=F, Y=seq, X=1)
        f = tok(p + "ffn2.bias", f)
        f = tok(p + "ffn2.residual", f, ins=[f, x])
        x = tok(p + "ffn2.LayerNorm", f, op="norm")
    pl = g.add("pooler.dense", "fc", [x], K=H, C=H, Y=1, X=1)
    g.add("pooler.tanh", "eltwise", [pl], K=H, C=H, Y=1, X=1)
    return g


# --------------------------------------------------------------------------------------------
def yolov3():
    # Darknet yolov3.cfg at 416x416: one node per darknet layer except the 2 single-input route
    # layers (pure aliases): 75 conv, 23 shortcut adds, 2 upsample, 2 concat (2-input routes),
    # 3 yolo output layers (decoding, ELTWISE) = 105 nodes.
    g = Graph("yolov3", "YOLOv3 (416x416)", "Redmon & Farhadi 2018, darknet yolov3.cfg")
    g.input_shape = (3, 416, 416)
    n = [0]

    def conv(src, K, R, s=1):
        n[0] += 1
        return g.conv("conv%d" % n[0], src, K, R, stride=s)

    res = [0]

    def residual(x, K):
        y = conv(x, K // 2, 1)
        y = conv(y, K, 3)
        res[0] += 1
        return g.elt("shortcut%d" % res[0], [y, x])

    x = conv(-1, 32, 3)
    for K, reps in ((64, 1), (128, 2), (256, 8), (512, 8), (1024, 4)):
        x = conv(x, K, 3, 2)
        for _ in range(reps):
            x = residual(x, K)
        if K == 256:
            route36 = x
        if K == 512:
            route61 = x
    outs = []
    skips = [route61, route36]
    for si, K in enumerate((512, 256, 128)):
        for _ in range(2):
            x = conv(x, K, 1)
            x = conv(x, K * 2, 3)
        x = conv(x, K, 1)
        branch = x
        y = conv(x, K * 2, 3)
        det = g.add("conv%d" % (n[0] + 1), "conv", [y], K=255, C=K * 2, R=1, S=1,
                    Y=g.out(y)[1], X=g.out(y)[2])
        n[0] += 1
        outs.append(g.elt("yolo%d" % (si + 1), det))
        if si < 2:
            y = conv(branch, K // 2, 1)
            C, Y, X = g.out(y)
            up = g.add("upsample%d" % (si + 1), "upsample", [y], K=C, C=C, Y=Y, X=X, stride=2)
            x = g.concat("route%d" % (si + 1), [up, skips[si]])
    return g


# --------------------------------------------------------------------------------------------
def inception_v4():
    # Szegedy et al. 2017, 299x299 input.  One node per conv (149), pool, concat, plus the final
    # global avgpool, fc and softmax.
    g = Graph("inception_v4", "Inception-v4 (299x299)",
              "Szegedy et al. 2017, Inception-v4 (figures 3-9)")
    g.input_shape = (3, 299, 299)

    def cv(name, src, K, R, S=None, s=1, valid=False):
        S = R if S is None else S
        if valid:
            return g.conv(name, src, K, R, S, stride=s, pad=0, pad_x=0)
        return g.conv(name, src, K, R, S, stride=s)

    x = cv("stem.conv1", -1, 32, 3, s=2, valid=True)          # 149
    x = cv("stem.conv2", x, 32, 3, valid=True)                # 147
    x = cv("stem.conv3", x, 64, 3)                            # 147
    a = g.pool("stem.pool1", x, 3, 2)                         # 73
    b = cv("stem.conv4", x, 96, 3, s=2, valid=True)           # 73
    x = g.concat("stem.concat1", [a, b])                      # 160
    a = cv("stem.conv5", x, 64, 1)
    a = cv("stem.conv6", a, 96, 3, valid=True)                # 71
    b = cv("stem.conv7", x, 64, 1)
    b = cv("stem.conv8", b, 64, 7, 1)
    b = cv("stem.conv9", b, 64, 1, 7)
    b = cv("stem.conv10", b, 96, 3, valid=True)               # 71
    x = g.concat("stem.concat2", [a, b])                      # 192
    a = cv("stem.conv11", x, 192, 3, s=2, valid=True)         # 35
    b = g.pool("stem.pool2", x, 3, 2)                         # 35
    x = g.concat("stem.concat3", [a, b])                      # 384

    def avgpool_same(name, src):
        return g.pool(name, src, 3, 1, pad=1)

    for i in range(4):
        p = "incA%d." % (i + 1)
        b1 = cv(p + "b1.conv", avgpool_same(p + "b1.avgpool", x), 96, 1)
        b2 = cv(p + "b2.conv", x, 96, 1)
        b3 = cv(p + "b3.conv2", cv(p + "b3.conv1", x, 64, 1), 96, 3)
        b4 = cv(p + "b4.conv1", x, 64, 1)
        b4 = cv(p + "b4.conv2", b4, 96, 3)
        b4 = cv(p + "b4.conv3", b4, 96, 3)
        x = g.concat(p + "concat", [b1, b2, b3, b4])
    p = "redA."
    b1 = g.pool(p + "b1.maxpool", x, 3, 2)
    b2 = cv(p + "b2.conv", x, 384, 3, s=2, valid=True)
    b3 = cv(p + "b3.conv1", x, 192, 1)
    b3 = cv(p + "b3.conv2", b3, 224, 3)
    b3 = cv(p + "b3.conv3", b3, 256, 3, s=2, valid=True)
    x = g.concat(p + "concat", [b1, b2, b3])                  # 17x17x1024
    for i in range(7):
        p = "incB%d." % (i + 1)
        b1 = cv(p + "b1.conv", avgpool_same(p + "b1.avgpool", x), 128, 1)
        b2 = cv(p + "b2.conv", x, 384, 1)
        b3 = cv(p + "b3.conv1", x, 192, 1)
        b3 = cv(p + "b3.conv2", b3, 224, 1, 7)
        b3 = cv(p + "b3.conv3", b3, 256, 7, 1)
        b4 = cv(p + "b4.conv1", x, 192, 1)
        b4 = cv(p + "b4.conv2", b4, 192, 1, 7)
        b4 = cv(p + "b4.conv3", b4, 224, 7, 1)
        b4 = cv(p + "b4.conv4", b4, 224, 1, 7)
        b4 = cv(p + "b4.conv5", b4, 256, 7, 1)
        x = g.concat(p + "concat", [b1, b2, b3, b4])
    p = "redB."
    b1 = g.pool(p + "b1.maxpool", x, 3, 2)
    b2 = cv(p + "b2.conv1", x, 192, 1)
    b2 = cv(p + "b2.conv2", b2, 192, 3, s=2, valid=True)
    b3 = cv(p + "b3.conv1", x, 256, 1)
    b3 = cv(p + "b3.conv2", b3, 256, 1, 7)
    b3 = cv(p + "b3.conv3", b3, 320, 7, 1)
    b3 = cv(p + "b3.conv4", b3, 320, 3, s=2, valid=True)
    x = g.concat(p + "concat", [b1, b2, b3])                  # 8x8x1536
    for i in range(3):
        p = "incC%d." % (i + 1)
        b1 = cv(p + "b1.conv", avgpool_same(p + "b1.avgpool", x), 256, 1)
        b2 = cv(p + "b2.conv", x, 256, 1)
        b3 = cv(p + "b3.conv1", x, 384, 1)
        b3a = cv(p + "b3.conv2a", b3, 256, 1, 3)
        b3b = cv(p + "b3.conv2b", b3, 256, 3, 1)
        b4 = cv(p + "b4.conv1", x, 384, 1)
        b4 = cv(p + "b4.conv2", b4, 448, 1, 3)
        b4 = cv(p + "b4.conv3", b4, 512, 3, 1)
        b4a = cv(p + "b4.conv4a", b4, 256, 3, 1)
        b4b = cv(p + "b4.conv4b", b4, 256, 1, 3)
        x = g.concat(p + "concat", [b1, b2, b3a, b3b])
        # CONCAT takes at most 4 inputs: the 6-way concat is two chained concat nodes.
        x = g.concat(p + "concat2", [x, b4a, b4b])
    x = g.pool("avgpool", x, 0, 1, glob=True)
    x = g.fc("fc", x, 1000)
    g.elt("softmax", x, op="softmax")
    return g


# --------------------------------------------------------------------------------------------
def make_div(v, d=8):
    n = max(d, int(v + d / 2) // d * d)
    if n < 0.9 * v:
        n += d
    return n


def mobilenet_v3():
    # MobileNetV3-Large (Howard et al. 2019, Table 1), torchvision layout, 224x224 input.
    # Nodes: stem conv; per bneck: expand conv (when exp != in), depthwise conv, SE (global pool,
    # fc1, fc2, channel-scale eltwise), project conv, residual add; then conv 960, avgpool,
    # fc 1280, fc 1000, softmax.
    g = Graph("mobilenet_v3", "MobileNet-v3 Large (224x224)",
              "Howard et al. 2019, Table 1 (MobileNetV3-Large), torchvision mobilenet_v3_large")
    g.input_shape = (3, 224, 224)
    x = g.conv("stem.conv", -1, 16, 3, stride=2)
    cfg = [(3, 16, 16, 0, 1), (3, 64, 24, 0, 2), (3, 72, 24, 0, 1), (5, 72, 40, 1, 2),
           (5, 120, 40, 1, 1), (5, 120, 40, 1, 1), (3, 240, 80, 0, 2), (3, 200, 80, 0, 1),
           (3, 184, 80, 0, 1), (3, 184, 80, 0, 1), (3, 480, 112, 1, 1), (3, 672, 112, 1, 1),
           (5, 672, 160, 1, 2), (5, 960, 160, 1, 1), (5, 960, 160, 1, 1)]
    cin = 16
    for i, (k, exp, out, se, s) in enumerate(cfg):
        p = "bneck%d." % (i + 1)
        inp = x
        y = x
        if exp != cin:
            y = g.conv(p + "expand", y, exp, 1)
        y = g.dw(p + "dw", y, k, stride=s)
        if se:
            sq = make_div(exp // 4)
            z = g.pool(p + "se.pool", y, 0, 1, glob=True)
            z = g.add(p + "se.fc1", "fc", [z], K=sq, C=exp)
            z = g.add(p + "se.fc2", "fc", [z], K=exp, C=sq)
            C, Y, X = g.out(y)
            y = g.add(p + "se.scale", "eltwise", [y, z], K=C, C=C, Y=Y, X=X)
        y = g.conv(p + "project", y, out, 1)
        if s == 1 and cin == out:
            y = g.elt(p + "add", [y, inp])
        x = y
        cin = out
    x = g.conv("last.conv", x, 960, 1)
    x = g.pool("avgpool", x, 0, 1, glob=True)
    x = g.fc("classifier.fc1", x, 1280)
    x = g.fc("classifier.fc2", x, 1000)
    g.elt("softmax", x, op="softmax")
    return g


def resnet18():
    return resnet(18)


def resnet50():
    return resnet(50)


def resnet101():
    return resnet(101)


MODELS = [mobilenet_v2, vgg16, resnet18, resnet50, alexnet, resnet101, bert_base, yolov3,
          inception_v4, mobilenet_v3]


# --------------------------------------------------------------------------------------------
def write_csv(g, path):
    with open(path, "w") as f:
        f.write("# model: %s\n# %s\n# source: %s\n" % (g.name, g.title, g.source))
        f.write(",".join(COLS) + "\n")
        for l in g.L:
            row = []
            for c in COLS:
                if c == "inputs":
                    row.append(";".join(str(i) for i in l["inputs"]))
                else:
                    row.append(str(l[c]))
            f.write(",".join(row) + "\n")


def write_c(models, path):
    o = []
    o.append("/* zoo_models.c - the built-in workload zoo tables (docs/zoo.md).\n"
             " * GENERATED by envs/common/zoo/gen_zoo.py from its model builders; do not edit by\n"
             " * hand: change the script and rerun it (python3 envs/common/zoo/gen_zoo.py). The\n"
             " * same tables are in envs/common/zoo/<model>.csv. */\n")
    o.append('#include "zoo_internal.h"\n')
    for g in models:
        o.append("\n/* %s: %s; %d nodes. Source: %s */\n" % (g.name, g.title, len(g.L), g.source))
        o.append("static const hw_layer L_%s[%d] = {\n" % (g.name, len(g.L)))
        for l in g.L:
            ins = ", ".join(str(i) for i in l["inputs"])
            o.append('    {"%s", %s, %d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %d, {%s}, %d},\n'
                     % (l["name"], OP_ENUM[l["op"]], l["N"], l["K"], l["C"], l["R"], l["S"],
                        l["Y"], l["X"], l["Yo"], l["Xo"], l["stride"], l["pad"], l["dilation"],
                        l["groups"], len(l["inputs"]), ins, l["pad_x"]))
        o.append("};\n")
    o.append("\nconst hw_model hw_zoo_builtin[HW_ZOO_NBUILTIN] = {\n")
    for g in models:
        o.append('    {"%s", %d, L_%s},\n' % (g.name, len(g.L), g.name))
    o.append("};\n")
    with open(path, "w") as f:
        f.write("".join(o))


def main():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))))
    models = [m() for m in MODELS]
    for g in models:
        write_csv(g, os.path.join(root, "envs/common/zoo/%s.csv" % g.name))
        print("%-14s %4d nodes" % (g.name, len(g.L)), file=sys.stderr)
    write_c(models, os.path.join(root, "envs/common/zoo_models.c"))


if __name__ == "__main__":
    main()
