// Gradient rules of the losses (core/ops/families/loss.cpp). Each is one fused Tessera op
// (NegativeLogLikelihoodLossGrad / SoftmaxCrossEntropyLossGrad): a decomposition would build a
// one-hot of the labels, a softmax and a weighted mean, several [N, C, ...] temporaries per step.
// Labels are integers and get no gradient; class weights get none either (an error if wanted).
#include "core/ops/grad.h"

namespace tsr::ops {
namespace {

// loss = reduce(-w[t] * X[n, t, d]) (NLL) or the same over LogSoftmax(X, axis=1) (SCE):
// dX[n, k, d] = c * ([SCE] softmax(X)[n, k, d] - [k = t]), c = w[t] * dLoss (/ sum(w) for mean).
// SCE's log_prob output adds the LogSoftmax VJP of its gradient.
Status loss_grad(GradContext& g, const char* grad_op, bool softmax) {
  Emitter& e = g.emitter();
  if (g.wants(2)) return g.error("the gradient with respect to the class weights (input 2) is not supported");
  std::vector<Value> terms;
  if (const Value dl = g.grad_output(0); dl.valid())
    terms.push_back(e.emit(grad_op, {dl, g.input(0), g.input(1), g.input(2)},
                           copy_attrs(g.node(), {"reduction", "ignore_index"})));
  if (const Value dlp = g.grad_output(1); softmax && dlp.valid())
    terms.push_back(log_softmax_vjp(e, g.output(1), dlp, 1));
  if (!terms.empty()) g.set_grad(0, add_n(e, terms));
  return ok_status();
}

Status nll_grad(GradContext& g) { return loss_grad(g, "NegativeLogLikelihoodLossGrad", false); }
Status softmax_cross_entropy_grad(GradContext& g) { return loss_grad(g, "SoftmaxCrossEntropyLossGrad", true); }

}  // namespace

void register_loss_grads(OpRegistry& r) {
  r.set_grad("NegativeLogLikelihoodLoss", &nll_grad);
  r.set_grad("SoftmaxCrossEntropyLoss", &softmax_cross_entropy_grad);
}

}  // namespace tsr::ops
