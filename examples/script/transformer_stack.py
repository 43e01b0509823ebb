# A Transformer-style stack: the same block applied n times, with per-layer weights.
#   --mode convert             unrolls the host-integer range (n copies of the block)
#   --mode convert --no-unroll makes it one Loop whose body indexes the stacked weights
def block(h, w, g):
    a = softmax(h @ w, axis=-1)
    return relu(a @ w) * g + h

def stack(X, Ws, gains, n=3):
    h = X
    for layer in range(n):
        h = block(h, Ws[layer], gains[layer])
    return h
