# MindSpore's ms_function example: a @static function is converted to a graph once and called
# from eager code as one static call.
@static
def add_and_relu(x, y):
    z = x + y
    return relu(z)

def main(x, y):
    a = add_and_relu(x, y)
    print("add_and_relu:", a)
    return add_and_relu(a, -y)
