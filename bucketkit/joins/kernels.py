"""Match pairs for an equi-join on one integer key, compiled with numba.

Most bucketed tables are bucketed on one integer-like key (``user_id bigint``). For those, a
chained open-addressing hash table built on the smaller side finds every matching (left row,
right row) pair several times faster than Acero's general hash join, and leaves more of the two
cores to the JVM, which must turn every joined row into a Spark row anyway. Every join type is
derived from the pairs plus "matched" flags (see :func:`join_indices`). NULL keys never match.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["join_indices"]

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)  # Fibonacci hashing multiplier


@njit(cache=True)
def _build(keys, valid):
    n = len(keys)
    bits = 1
    while (1 << bits) < 2 * n:
        bits += 1
    mask = (1 << bits) - 1
    shift = np.uint64(64 - bits)
    slots = np.full(1 << bits, -1, np.int64)  # first row of each distinct key
    chain = np.full(n, -1, np.int64)          # next row with the same key
    for i in range(n):
        if not valid[i]:
            continue
        k = keys[i]
        h = np.int64((np.uint64(k) * _GOLDEN) >> shift)
        while slots[h] != -1 and keys[slots[h]] != k:
            h = (h + 1) & mask
        chain[i] = slots[h]
        slots[h] = i
    return slots, chain, shift, mask


# _build and _probe repeat the four-line probing loop on purpose: calling a shared njit helper
# measured ~15% slower on 10M x 10M rows (0.65-0.80 s vs 0.57-0.63 s), even with inline="always".
@njit(cache=True)
def _probe(pkeys, pvalid, bkeys, slots, chain, shift, mask):
    n = len(pkeys)
    heads = np.full(n, -1, np.int64)
    total = 0
    for i in range(n):
        if not pvalid[i]:
            continue
        k = pkeys[i]
        h = np.int64((np.uint64(k) * _GOLDEN) >> shift)
        while slots[h] != -1 and bkeys[slots[h]] != k:
            h = (h + 1) & mask
        j = slots[h]
        heads[i] = j
        while j != -1:
            total += 1
            j = chain[j]
    return heads, total


@njit(cache=True)
def _pairs(heads, chain, total, nbuild):
    pi = np.empty(total, np.int64)
    bi = np.empty(total, np.int64)
    bmatched = np.zeros(nbuild, np.bool_)
    pos = 0
    for i in range(len(heads)):
        j = heads[i]
        while j != -1:
            pi[pos] = i
            bi[pos] = j
            bmatched[j] = True
            pos += 1
            j = chain[j]
    return pi, bi, bmatched


def join_indices(lkeys: np.ndarray, lvalid: np.ndarray, rkeys: np.ndarray, rvalid: np.ndarray,
                 how: str) -> tuple[np.ndarray | None, np.ndarray | None]:
    """Row indices of the joined output: ``(left_idx, right_idx)``, -1 where a side is NULL.

    Args:
        lkeys, rkeys: int64 keys of each side (values under NULLs are ignored).
        lvalid, rvalid: bool arrays, False where the key is NULL.
        how: ``inner``, ``left``, ``right``, ``full``, ``left_semi`` or ``left_anti``.

    Returns:
        For semi/anti joins ``(left_idx, None)``; otherwise both index arrays, same length.
    """
    build_left = len(lkeys) < len(rkeys) and how not in ("left_semi", "left_anti")
    bkeys, bvalid, pkeys, pvalid = (lkeys, lvalid, rkeys, rvalid) if build_left else (rkeys, rvalid, lkeys, lvalid)
    slots, chain, shift, mask = _build(bkeys, bvalid)
    heads, total = _probe(pkeys, pvalid, bkeys, slots, chain, shift, mask)
    if how in ("left_semi", "left_anti"):
        hit = heads != -1
        return np.flatnonzero(hit if how == "left_semi" else ~hit), None
    pi, bi, bmatched = _pairs(heads, chain, total, len(bkeys))
    li, ri = (bi, pi) if build_left else (pi, bi)
    lmatched, rmatched = (bmatched, heads != -1) if build_left else (heads != -1, bmatched)
    parts_l, parts_r = [li], [ri]
    if how in ("left", "full"):
        extra = np.flatnonzero(~lmatched)
        parts_l.append(extra)
        parts_r.append(np.full(len(extra), -1, np.int64))
    if how in ("right", "full"):
        extra = np.flatnonzero(~rmatched)
        parts_l.append(np.full(len(extra), -1, np.int64))
        parts_r.append(extra)
    if len(parts_l) == 1:
        return li, ri
    return np.concatenate(parts_l), np.concatenate(parts_r)
