#!/usr/bin/env python3
"""How far Winograd F(mh x mw, 3x3) convolutions in float32 land from the
exact result, in units of u S (u = 2^-24, S the sum of the products'
magnitudes): the measure of the conv tolerance in docs/testing.md (16 u S),
for choosing a tile form and its interpolation points before building it.

    python3 tools/winograd_error.py [--channels 16] [--tiles 20000] [--seed 3] [--points 0,1,-1,1/2,-2 ...]

Needs numpy (pip). Each form's matrices come from its points (plus the point
at infinity): A^T evaluates at them, G divides by the points' products, and
B^T is solved from the identity the three must satisfy. Simulated as the CPU
plugin runs its forms (plugins/cpu/winograd.cpp): the transforms rounded to
float32, each transform point's product summed over the channels in float32,
in the forward and in the filter gradient (dW = G^T (sum over tiles of V Z)
G). Random inputs and filters in [-1, 1]; prints the largest error and the
99.9th percentile over the tiles. Against kernels measured (docs/testing.md,
plugins/cpu/README.md): the plugin's F(2x2), 3.6 u S at most over the kernel
tests' shapes, passes and instruction sets (1.9 here); its F(4x2) at 0, +-1,
2, -1/2, 7.9 in the forward and input gradient (5.3 here), but 15.5 in a
filter gradient from a pooled, mostly zero dy (dense random dy here: 1.7;
S shrinks with the zeros, the rounding does not); an F(4x4) built once,
23 u S in the forward at 28x28x16 with the points 0, +-1, 2, -1/2 (12.4
here) and 175 with 0, +-1, +-2 (35 here). A kernel's worst case is about
twice the figure here, or more: figures for ranking forms and points, never
verdicts; a form is ready when the kernel tests pass.

--points adds F(4x2) and F(4x4) at other points. With --tiles 3000, where
0, +-1, 2, -1/2 gave F(4x4) 10.6: 0, +-1, 1/2, -2 11.1; 0, +-1, 3/2, -1/2
12.5; 0, +-1, 2/3, -3/2 14.8; 0, +-1, +-1/2 26.8. None of them would bring
a kernel's F(4x4) (about twice these) under 16 u S."""
import argparse
import sys
from fractions import Fraction as Fr

import numpy as np

U = 2.0 ** -24


def fail(message):
    print(f"winograd_error.py: {message}", file=sys.stderr)
    sys.exit(2)


def matrices(points, m, r=3):
    """(A^T [m, n], G [n, r], B^T [n, n]) in float64 for F(m, r) at the finite points and infinity."""
    n = m + r - 1
    if len(points) != n - 1:
        fail(f"F({m}, {r}) needs {n - 1} finite points, got {len(points)}")
    at = np.zeros((m, n))
    g = np.zeros((n, r))
    for i, p in enumerate(points):
        f = Fr(1)
        for q in points:
            if q != p:
                f *= p - q
        for j in range(m):
            at[j, i] = float(p ** j)
        for k in range(r):
            g[i, k] = float(p ** k / f)
    at[m - 1, n - 1] = 1.0
    g[n - 1, r - 1] = 1.0
    # sum_i at[j, i] g[i, k] bt[i, l] = [l == j + k] for all j, k, l: linear in bt.
    rows, rhs = [], []
    for j in range(m):
        for k in range(r):
            for ell in range(n):
                row = np.zeros((n, n))
                row[:, ell] = at[j, :] * g[:, k]
                rows.append(row.ravel())
                rhs.append(1.0 if ell == j + k else 0.0)
    sol, *_ = np.linalg.lstsq(np.array(rows), np.array(rhs), rcond=None)
    bt = sol.reshape(n, n)
    if np.abs(np.array(rows) @ sol - np.array(rhs)).max() > 1e-9:
        fail(f"no B^T for F({m}, {r}) at points {points}")
    return at, g, bt


def f32(a):
    return np.asarray(a, dtype=np.float32)


def forward_error(h, w, channels, tiles, rng):
    (ath, gh, bth), (atw, gw, btw) = h, w
    mh, mw, nh, nw = ath.shape[0], atw.shape[0], bth.shape[0], btw.shape[0]
    d = rng.uniform(-1, 1, (tiles, channels, nh, nw)).astype(np.float32)
    f = rng.uniform(-1, 1, (tiles, channels, 3, 3)).astype(np.float32)
    want, s = np.zeros((tiles, mh, mw)), np.zeros((tiles, mh, mw))
    for i in range(mh):
        for j in range(mw):
            prod = d[:, :, i:i + 3, j:j + 3].astype(np.float64) * f
            want[:, i, j] = prod.sum(axis=(1, 2, 3))
            s[:, i, j] = np.abs(prod).sum(axis=(1, 2, 3))
    v = f32(np.einsum("jl,tcil->tcij", f32(btw), f32(np.einsum("ik,tckl->tcil", f32(bth), d))))
    u = f32(np.einsum("jl,tcil->tcij", f32(gw), f32(np.einsum("ik,tckl->tcil", f32(gh), f))))
    m = np.zeros((tiles, nh, nw), dtype=np.float32)
    for c in range(channels):
        m = f32(m + v[:, c] * u[:, c])
    y = f32(np.einsum("jl,til->tij", f32(atw), f32(np.einsum("ik,tkl->til", f32(ath), m))))
    return np.abs(y.astype(np.float64) - want) / (U * s)


def filter_gradient_error(h, w, tiles, pairs, rng):
    (ath, gh, bth), (atw, gw, btw) = h, w
    mh, mw, nh, nw = ath.shape[0], atw.shape[0], bth.shape[0], btw.shape[0]
    errors = []
    for _ in range(pairs):
        x = rng.uniform(-1, 1, (tiles, nh, nw)).astype(np.float32)
        dy = rng.uniform(-1, 1, (tiles, mh, mw)).astype(np.float32)
        want, s = np.zeros((3, 3)), np.zeros((3, 3))
        for kh in range(3):
            for kw in range(3):
                prod = dy.astype(np.float64) * x[:, kh:kh + mh, kw:kw + mw]
                want[kh, kw], s[kh, kw] = prod.sum(), np.abs(prod).sum()
        v = f32(np.einsum("jl,til->tij", f32(btw), f32(np.einsum("ik,tkl->til", f32(bth), x))))
        z = f32(np.einsum("lj,til->tij", f32(atw), f32(np.einsum("ki,tkl->til", f32(ath), dy))))
        acc = np.zeros((nh, nw), dtype=np.float32)
        for t in range(tiles):
            acc = f32(acc + v[t] * z[t])
        dw = f32(f32(f32(gh).T @ acc) @ f32(gw))
        errors.append((np.abs(dw.astype(np.float64) - want) / (U * s)).ravel())
    return np.concatenate(errors)


FORMS = [  # name, (mh, points), (mw, points)
    ("F(2x2)", (2, [Fr(0), Fr(1), Fr(-1)]), (2, [Fr(0), Fr(1), Fr(-1)])),
    ("F(4x2) at 0, +-1, +-2", (4, [Fr(0), Fr(1), Fr(-1), Fr(2), Fr(-2)]), (2, [Fr(0), Fr(1), Fr(-1)])),
    ("F(4x2) at 0, +-1, 2, -1/2", (4, [Fr(0), Fr(1), Fr(-1), Fr(2), Fr(-1, 2)]), (2, [Fr(0), Fr(1), Fr(-1)])),
    ("F(4x4) at 0, +-1, +-2", (4, [Fr(0), Fr(1), Fr(-1), Fr(2), Fr(-2)]),
     (4, [Fr(0), Fr(1), Fr(-1), Fr(2), Fr(-2)])),
    ("F(4x4) at 0, +-1, 2, -1/2", (4, [Fr(0), Fr(1), Fr(-1), Fr(2), Fr(-1, 2)]),
     (4, [Fr(0), Fr(1), Fr(-1), Fr(2), Fr(-1, 2)])),
]


def parse_points(text):
    """Five distinct finite points for F(4, 3), e.g. "0,1,-1,1/2,-2"."""
    try:
        points = [Fr(t.strip()) for t in text.split(",")]
    except (ValueError, ZeroDivisionError):
        fail(f"--points: {text!r} is not a comma-separated list of numbers or fractions")
    if len(points) != 5 or len(set(points)) != 5:
        fail(f"--points: F(4, 3) needs 5 distinct finite points (infinity is added), got {text!r}")
    return points


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--channels", type=int, default=16, help="input channels summed per output (forward)")
    ap.add_argument("--tiles", type=int, default=20000, help="output tiles (forward); tiles per sum (filter gradient)")
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--points", action="append", default=[], metavar="P",
                    help="also F(4x2) and F(4x4) at these 5 finite points of F(4, 3), e.g. 0,1,-1,1/2,-2 (repeatable)")
    a = ap.parse_args()
    if a.channels < 1 or a.tiles < 1:
        fail("--channels and --tiles must be at least 1")
    forms = list(FORMS)
    two = [Fr(0), Fr(1), Fr(-1)]
    for text in a.points:
        p = parse_points(text)
        label = ", ".join(str(x) for x in p)
        forms += [(f"F(4x2) at {label}", (4, p), (2, two)), (f"F(4x4) at {label}", (4, p), (4, p))]
    print(f"error in u S (u = 2^-24); the conv tolerance is 16 u S + u |want|; {a.channels} channels, {a.tiles} tiles")
    print(f"{'form':28s} {'forward max':>12s} {'99.9%':>7s} {'filter gradient max':>20s}")
    for name, (mh, ph), (mw, pw) in forms:
        rng = np.random.default_rng(a.seed)
        h, w = matrices(ph, mh), matrices(pw, mw)
        fwd = forward_error(h, w, a.channels, a.tiles, rng)
        fg = filter_gradient_error(h, w, min(a.tiles, 4096), 16, rng)
        print(f"{name:28s} {fwd.max():12.2f} {np.percentile(fwd, 99.9):7.2f} {fg.max():20.2f}")


if __name__ == "__main__":
    main()
