"""Inline random generator for Numba kernels: xoshiro256** seeded by SplitMix64.

The generator state is owned by the kernel, as a 4-element ``uint64`` array (``d6(state)``) or as
words the kernel keeps itself and steps with ``next_reg`` (the Epic kernel's lanes); it is never a
NumPy ``Generator``.  Streams are keyed by ``(key0, key1, index)``, the index fixed by the block of
``BLOCK_TRIALS`` trials (and the Epic kernel's lane), so results do not depend on the chunk size or
on the thread count.
"""
from typing import NamedTuple

import numpy as np
from numba import njit

#: Trials drawn from one RNG stream.  Chunks are always whole numbers of blocks.
BLOCK_TRIALS = 4096


class Run(NamedTuple):
    """What a call of the GdB or T9A kernel runs (a runner's chunk): ``n_trials`` trials from stream block
    ``first_block`` of the streams of ``(key0, key1)``."""

    key0: np.uint64
    key1: np.uint64
    first_block: int
    n_trials: int

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_MULT5 = np.uint64(5)
_MULT9 = np.uint64(9)
_LOW32 = np.uint64(0xFFFFFFFF)
_ONE = np.uint64(1)
_THREE = np.uint64(3)
_FOUR = np.uint64(4)
_SIX = np.uint64(6)
_U11 = np.uint64(11)
_U17 = np.uint64(17)
_U27 = np.uint64(27)
_U30 = np.uint64(30)
_U31 = np.uint64(31)
_U32 = np.uint64(32)
_U45 = np.uint64(45)
_U7 = np.uint64(7)
_U64 = np.uint64(64)
_INV53 = 1.0 / 9007199254740992.0


@njit(cache=True, inline="always")
def _splitmix64(x):
    """One SplitMix64 output for the counter value ``x`` (already advanced by the caller)."""
    z = x
    z = (z ^ (z >> _U30)) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    return z ^ (z >> _U31)


@njit(cache=True, inline="always")
def _rotl(x, k):
    return (x << k) | (x >> (_U64 - k))


@njit(cache=True)
def seed_stream(state, key0, key1, block):
    """Fill ``state`` (uint64[4]) with the stream keyed by ``(key0, key1, block)``."""
    x = np.uint64(key0) ^ _splitmix64(np.uint64(key1) + _splitmix64(np.uint64(block) + _GOLDEN))
    for i in range(4):
        x = x + _GOLDEN
        state[i] = _splitmix64(x)


# The generator on state the kernel holds itself (takes and returns s0, s1, s2, s3).

@njit(cache=True, inline="always")
def next_reg(s0, s1, s2, s3):
    """Next 64-bit word of xoshiro256** and the new state."""
    result = _rotl(s1 * _MULT5, _U7) * _MULT9
    t = s1 << _U17
    s2 ^= s0
    s3 ^= s1
    s1 ^= s2
    s0 ^= s3
    s2 ^= t
    s3 = _rotl(s3, _U45)
    return result, s0, s1, s2, s3


@njit(cache=True, inline="always")
def d6_reg(s0, s1, s2, s3):
    """One D6 (1..6: Lemire's exact multiply-shift on the word's high 32 bits, a draw whose low 32 bits of
    ``h * 6`` are below 4 rejected) and the new state.  A kernel that holds its state in local words keeps it
    in registers, where a state array passed in might share memory with the counts as far as LLVM knows."""
    while True:
        word, s0, s1, s2, s3 = next_reg(s0, s1, s2, s3)
        m = (word >> _U32) * _SIX
        if (m & _LOW32) >= _FOUR:
            return np.int64(m >> _U32) + 1, s0, s1, s2, s3


# The same generator on a uint64[4] state array.

@njit(cache=True, inline="always")
def next_u64(state):
    """Next 64-bit word of xoshiro256**."""
    result, state[0], state[1], state[2], state[3] = next_reg(state[0], state[1], state[2], state[3])
    return result


@njit(cache=True, inline="always")
def die(state, sides):
    """Uniform integer in 1..sides (Lemire multiply-shift on 32 bits, exact rejection)."""
    n = np.uint64(sides)
    threshold = (np.uint64(1) << _U32) % n
    while True:
        m = (next_u64(state) >> _U32) * n
        if (m & _LOW32) >= threshold:
            return np.int64(m >> _U32) + 1


@njit(cache=True, inline="always")
def d6(state):
    """One D6 (1..6)."""
    face, state[0], state[1], state[2], state[3] = d6_reg(state[0], state[1], state[2], state[3])
    return face


@njit(cache=True, inline="always")
def uniform(state):
    """Uniform float in [0, 1) with 53 random bits."""
    return np.float64(next_u64(state) >> _U11) * _INV53
