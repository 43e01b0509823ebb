def layer(x, w, b=0.0):
    return relu(matmul(x, w) + b)

def main():
    x = randn([4, 8], seed=1)
    w = randn([8, 8], seed=2)
    h = layer(x, w)
    h = layer(h, transpose(w, perm=[1, 0]), 0.1)
    s = reduce_sum(h, [1], keepdims=0)
    m = max(1, 2) + min(3.0, 4) + abs(-2) + len([1, 2, 3])
    y = cast(s, to="f64") ** 2 // 3 % 5
    a, b = split(h, num_outputs=2)
    return y, m, a[0], softmax(b, axis=-1), zeros([2], dtype="i64"), tensor([[1, 2], [3, 4]]) @ tensor([[1], [1]])
