def f(n):
    if n <= 1:
        return 1
    return n * f(n - 1)

def main():
    x = f(n - 1)

def main():
    x = tensor([1.0, 2.0, 3.0])
    a = x[1] + f(51) or a == 3
    c = [1, (2, 3), "s", None, True, False]
    return a, conat([x, x], axis=1), where(x > 1.5, x, -x), gather(x, tensor([0, 2]))
