#!/usr/bin/env python3
"""Writes the small dense inputs of the examples (FROSTT .tns, 1-based).

Seeded, so running it again reproduces the committed files byte for byte.
Values are uniform in [-1, 1] with zero excluded, so no example runs on
all-zero data. Also writes cage5_rot.mtx, the transpose of cage5.mtx with its
columns rotated by 3 (entry (i, j) goes to (j, (i + 3) mod 37)), as a second
operand of the same shape whose pattern overlaps cage5's only in part, for the
element-wise examples, and
tensor4_5x6x4x5.tns, a sparse order-4 tensor.
"""
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))


def value(rng):
    v = 0.0
    while v == 0.0:
        v = rng.uniform(-1.0, 1.0)
    return v


def write_dense(name, dims, seed):
    rng = random.Random(seed)
    lines = []
    def walk(prefix):
        if len(prefix) == len(dims):
            coords = " ".join(str(c + 1) for c in prefix)
            lines.append(f"{coords} {value(rng)!r}")
            return
        for c in range(dims[len(prefix)]):
            walk(prefix + [c])
    walk([])
    with open(os.path.join(HERE, name), "w") as f:
        f.write("\n".join(lines) + "\n")


def write_sparse4(name, dims, count, seed):
    rng = random.Random(seed)
    coords = set()
    # The last coordinate of every mode appears once so the file fixes the shape.
    coords.add(tuple(d - 1 for d in dims))
    while len(coords) < count:
        coords.add(tuple(rng.randrange(d) for d in dims))
    with open(os.path.join(HERE, name), "w") as f:
        for c in sorted(coords):
            f.write(" ".join(str(x + 1) for x in c) + f" {value(rng)!r}\n")


def write_rotated_transpose(source, target, shift):
    with open(os.path.join(HERE, source)) as f:
        lines = f.read().splitlines()
    out = []
    header_done = False
    for line in lines:
        if line.startswith("%"):
            out.append(line)
        elif not header_done:
            rows, cols, nnz = line.split()
            out.append(f"{cols} {rows} {nnz}")
            n = int(rows)
            header_done = True
        else:
            i, j, v = line.split()
            out.append(f"{j} {(int(i) - 1 + shift) % n + 1} {v}")
    with open(os.path.join(HERE, target), "w") as f:
        f.write("\n".join(out) + "\n")


write_dense("x18.tns", [18], 1)          # LF10 columns
write_dense("x37.tns", [37], 2)          # cage5 columns
write_dense("dense37x8.tns", [37, 8], 3)   # SpMM right operand, SDDMM left factor
write_dense("dense8x37.tns", [8, 37], 4)   # SDDMM right factor
write_dense("dense37x37.tns", [37, 37], 5)  # dense operand of mixed element-wise ops
write_dense("c8.tns", [8], 6)            # TTV vector (mode 3 of tensor3)
write_dense("dense5x8.tns", [5, 8], 7)     # TTM matrix
write_dense("dense10x4.tns", [10, 4], 8)   # MTTKRP factor of mode 2
write_dense("dense8x4.tns", [8, 4], 9)     # MTTKRP factor of mode 3
write_dense("dense6x4x5x3.tns", [6, 4, 5, 3], 10)  # 4-tensor contraction right operand
write_sparse4("tensor4_5x6x4x5.tns", [5, 6, 4, 5], 60, 11)
write_rotated_transpose("cage5.mtx", "cage5_rot.mtx", 3)
