# A Transformer-style stack: one block n times, per-layer weights.
#   --mode convert: unrolls the host-integer range (n blocks)
#   --mode convert --no-unroll: one Loop over the stacked weights
def block(h, w, g):
    a = softmax(h @ w, axis=-1)
    return relu(a @ w) * g + h

def stack(X, Ws, gains, n=3):
    h = X
    for layer in range(n):
        h = block(h, Ws[layer], gains[layer])
    return h
