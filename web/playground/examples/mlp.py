# A 2-D classifier for the Train panel:
#   2 -> 16 (tanh) -> 16 (tanh) -> 2 logits.
# The Train panel converts `mlp` to a graph, builds its train_step
# graph from it (forward, autodiff backward, Adam update); the
# module-level tensors below are the weights it trains.
W1 = randn([2, 16], seed=1) * 0.7
b1 = zeros([16])
W2 = randn([16, 16], seed=2) * 0.25
b2 = zeros([16])
W3 = randn([16, 2], seed=3) * 0.25
b3 = zeros([2])

def mlp(X):
    h = tanh(X @ W1 + b1)
    h = tanh(h @ W2 + b2)
    return h @ W3 + b3
