def main():
    x = ones([2, 3])
    steps = 0
    while reduce_sum(x) < 100.0:
        x = x * 2.0
        steps += 1
    for i in range(3):
        if i % 2 == 0:
            x = x - 1.0
        elif i == 1:
            x = x + 0.5
        else:
            pass
    return x, steps
