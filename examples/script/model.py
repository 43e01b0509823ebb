# The seeds' data-dependent branch: which weight is used depends on a tensor's value.
#   tessera script examples/script/model.py --entry model --input X=x.npy --input flag=flag.npy --mode eager
#   ... --mode trace   -o traced.tsr     (records only the branch taken: wrong for the other flag)
#   ... --mode convert -o converted.tsr  (an If node: right for both)
W1 = tensor([[1.0, 2.0, 0.0], [0.0, 1.0, -1.0]])
W2 = tensor([[-1.0, 0.0, 1.0], [2.0, -2.0, 0.5]])
b = tensor([0.5, -1.0, 0.25])

def model(X, flag):
    if flag > 0:
        y = X @ W1
    else:
        y = X @ W2
    return relu(y + b)
