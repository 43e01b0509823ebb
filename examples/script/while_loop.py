# A while loop on a tensor condition: converts to a Loop node.
def double_until(x, limit):
    steps = 0
    while reduce_sum(x) < limit:
        x = x * 2.0
        steps += 1
    return x, steps
