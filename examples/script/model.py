# A data-dependent branch: the weight depends on a tensor's value.
#   tessera script model.py --entry model -i X=x.npy -i flag=f.npy
#   --mode trace: only the branch taken (wrong for the other flag)
#   --mode convert: an If node (right for both flags)
W1 = tensor([[1.0, 2.0, 0.0], [0.0, 1.0, -1.0]])
W2 = tensor([[-1.0, 0.0, 1.0], [2.0, -2.0, 0.5]])
b = tensor([0.5, -1.0, 0.25])

def model(X, flag):
    if flag > 0:
        y = X @ W1
    else:
        y = X @ W2
    return relu(y + b)
