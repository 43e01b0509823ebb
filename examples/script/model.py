# A data-dependent branch: which weight is used depends on a tensor's value.
#   tessera script model.py --entry model --input X=x.npy --input flag=f.npy
#   --mode trace: records only the branch taken (wrong for the other flag)
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
