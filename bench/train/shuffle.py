"""The epoch order of `tessera train` in Python (tools/train/trainer.h, shuffle_order), so that a
PyTorch run can take exactly Tessera's batches.

  MT19937_64(seed)      std::mt19937_64: the 64-bit Mersenne Twister of the C++ standard
                        ([rand.predef]: with the default seed 5489 the 10000th output is
                        9981545732273789042), written from its published parameters.
  shuffle(order, rng)   in place: for i = n-1 down to 1: j = rng() % (i + 1); swap(order[i], order[j])
  epoch_orders(n, seed) yields one list per epoch, each the previous one shuffled again with the
                        same generator (what `tessera train --seed SEED` does over n samples).

Run as a script: `shuffle.py N SEED [EPOCHS]` prints each epoch's order on one line.
"""
import sys

_MASK = (1 << 64) - 1
_N, _M = 312, 156
_MATRIX_A = 0xB5026F5AA96619E9
_UPPER, _LOWER = 0xFFFFFFFF80000000, 0x7FFFFFFF


class MT19937_64:
    def __init__(self, seed=5489):
        self.state = [seed & _MASK]
        for i in range(1, _N):
            prev = self.state[-1]
            self.state.append((6364136223846793005 * (prev ^ (prev >> 62)) + i) & _MASK)
        self.index = _N

    def _twist(self):
        s = self.state
        for i in range(_N):
            x = (s[i] & _UPPER) | (s[(i + 1) % _N] & _LOWER)
            s[i] = s[(i + _M) % _N] ^ (x >> 1) ^ (_MATRIX_A if x & 1 else 0)
        self.index = 0

    def __call__(self):
        if self.index >= _N:
            self._twist()
        y = self.state[self.index]
        self.index += 1
        y ^= (y >> 29) & 0x5555555555555555
        y ^= (y << 17) & 0x71D67FFFEDA60000
        y ^= (y << 37) & 0xFFF7EEE000000000
        return y ^ (y >> 43)


def shuffle(order, rng):
    for i in range(len(order) - 1, 0, -1):
        j = rng() % (i + 1)
        order[i], order[j] = order[j], order[i]


def epoch_orders(n, seed):
    rng, order = MT19937_64(seed), list(range(n))
    while True:
        shuffle(order, rng)
        yield list(order)


if __name__ == "__main__":
    n, seed = int(sys.argv[1]), int(sys.argv[2])
    epochs = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    orders = epoch_orders(n, seed)
    for _ in range(epochs):
        print(" ".join(map(str, next(orders))))
