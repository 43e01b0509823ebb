// Runs every registered gradient case (see grad_check.h); grad_coverage_test.cpp checks that
// every op with a gradient rule has at least one.
#include "tests/unit/grad_check.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <random>

#include "tessera/session.h"
#include "core/ops/graph_builder.h"
#include "core/passes/verify_model.h"
#include "core/ops/op_def.h"
#include "core/passes/autodiff.h"

namespace tsr::gradcheck {

std::vector<Family>& families() {
  static std::vector<Family> f;
  return f;
}

Registrar::Registrar(const char* family, CaseFn fn) { families().push_back({family, fn}); }

Tensor uniform(const Shape& shape, uint64_t seed, double lo, double hi) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> d(lo, hi);
  std::vector<double> v(static_cast<size_t>(shape_numel(shape)));
  for (double& x : v) x = d(rng);
  return Tensor::from<double>(shape, v);
}

Tensor away_from_zero(const Shape& shape, uint64_t seed, double margin, double hi) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> d(margin, hi);
  std::bernoulli_distribution sign(0.5);
  std::vector<double> v(static_cast<size_t>(shape_numel(shape)));
  for (double& x : v) x = sign(rng) ? d(rng) : -d(rng);
  return Tensor::from<double>(shape, v);
}

Tensor as_f32(const Tensor& t) {
  std::vector<float> v(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) v[static_cast<size_t>(i)] = static_cast<float>(t.scalar_f64(i));
  return Tensor::from<float>(t.shape(), v);
}

Case as_f32_case(Case c, double atol, double rtol) {
  for (Input& in : c.inputs)
    if (in.value.defined() && dtype_is_float(in.value.dtype())) in.value = as_f32(in.value);
  c.label += " (f32)";
  c.step = 1e-2;
  c.atol = atol;
  c.rtol = rtol;
  return c;
}

namespace {

using ops::GraphBuilder;
using ops::Value;

Expected<std::unique_ptr<Session>> session_for(ir::Model m) {
  TSR_RETURN_IF_ERROR(passes::verify_model(m));
  return Session::create(std::make_shared<ir::Model>(std::move(m)));
}

}  // namespace

namespace {

// Tensor t (f64) as f32.
Tensor to_f32(const Tensor& t) {
  std::vector<float> v(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) v[static_cast<size_t>(i)] = static_cast<float>(t.scalar_f64(i));
  return Tensor::from<float>(t.shape(), v);
}

// The model of case `c` (its node and the weighted-sum loss, see grad_check.h) with the f64
// inputs given as `dtype`; fills the feeds and the names of the differentiated inputs. Returns
// "" or an error.
std::string build_case(const Case& c, DType dtype, ir::Model& m, std::vector<Tensor>& feeds,
                       std::vector<std::string>& wrt_names) {
  GraphBuilder b(m);
  std::vector<Value> ins;
  auto as_dtype = [&](const Tensor& t) { return dtype == DType::kF32 && t.dtype() == DType::kF64 ? to_f32(t) : t; };
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    const Input& in = c.inputs[i];
    if (!in.value.defined()) {
      ins.push_back(Value{});
      continue;
    }
    if (in.constant) {
      ins.push_back(b.constant(in.value, str_cat("c", i)));
      continue;
    }
    const std::string name = str_cat("x", i);
    const Tensor v = as_dtype(in.value);
    ins.push_back(b.input(name, v.dtype(), v.shape()));
    if (in.wrt) wrt_names.push_back(name);
    feeds.push_back(v);
  }
  const std::vector<Value> ys = b.op_n(c.op, ins, c.num_outputs, c.attrs);
  if (!b.status().ok()) return str_cat("building the node: ", b.status().to_string());
  Value loss;
  for (size_t k = 0; k < ys.size(); ++k) {
    const ops::ValueType t = b.type(ys[k]);
    if (!dtype_is_float(t.dtype)) continue;
    if (!t.fully_known()) return str_cat("output ", k, " has no static shape: ", t.str());
    Value r = b.constant(uniform(t.shape, 1000 + k, 0.5, 1.5));
    if (t.dtype != DType::kF64) r = b.op("Cast", {r}, {ir::Attribute::make_int("to", static_cast<int64_t>(t.dtype))});
    Value term = b.op("ReduceSum", {b.op("Mul", {ys[k], r})}, {ir::Attribute::make_int("keepdims", 0)});
    loss = loss.valid() ? b.op("Add", {loss, term}) : term;
  }
  if (!loss.valid()) return "the node has no floating-point output";
  b.output(loss, "loss");
  if (!b.status().ok()) return str_cat("building the loss: ", b.status().to_string());
  return "";
}

// The gradients of case `c` with inputs as `dtype`, computed on `num_threads` threads.
Expected<std::vector<Tensor>> case_gradients(const Case& c, DType dtype, int num_threads) {
  ir::Model m;
  std::vector<Tensor> feeds;
  std::vector<std::string> wrt;
  const std::string err = build_case(c, dtype, m, feeds, wrt);
  if (!err.empty()) return internal_error(err);
  TSR_ASSIGN_OR_RETURN(ir::Model gm, passes::gradient_model(std::move(m), {"loss", wrt}));
  TSR_RETURN_IF_ERROR(passes::verify_model(gm));
  SessionOptions opts;
  opts.num_threads = num_threads;
  TSR_ASSIGN_OR_RETURN(auto s, Session::create(std::make_shared<ir::Model>(std::move(gm)), opts));
  TSR_ASSIGN_OR_RETURN(std::vector<Tensor> out, s->run(feeds));
  out.erase(out.begin());  // the loss
  return out;
}

}  // namespace

std::string check(const Case& c) {
  ir::Model m;
  std::vector<Tensor> feeds;
  std::vector<std::string> wrt_names;
  const std::string err = build_case(c, DType::kF64, m, feeds, wrt_names);
  if (!err.empty()) return err;
  return check_model(m, feeds, wrt_names, c.atol, c.rtol, c.step);
}

std::string check_f32(const Case& c, int num_threads, double atol, double rtol) {
  auto ref = case_gradients(c, DType::kF64, 1);
  if (!ref.ok()) return str_cat("float64 gradients: ", ref.status().to_string());
  auto got = case_gradients(c, DType::kF32, num_threads);
  if (!got.ok()) return str_cat("float32 gradients: ", got.status().to_string());
  if (got->size() != ref->size()) return "gradient counts differ";
  for (size_t w = 0; w < ref->size(); ++w) {
    const Tensor& r = (*ref)[w];
    const Tensor& g = (*got)[w];
    if (g.dtype() != DType::kF32 || g.shape() != r.shape())
      return str_cat("gradient ", w, ": ", dtype_name(g.dtype()), shape_str(g.shape()), ", expected f32", shape_str(r.shape()));
    for (int64_t i = 0; i < r.numel(); ++i) {
      const double a = g.scalar_f64(i), e = r.scalar_f64(i);
      if (!(std::abs(a - e) <= atol + rtol * std::abs(e)))
        return str_cat("gradient ", w, "[", i, "]: float32 ", a, ", float64 ", e);
    }
  }
  return "";
}

std::string check_model(const ir::Model& m, const std::vector<Tensor>& feeds, const std::vector<std::string>& wrt_names,
                        double atol, double rtol, double step) {
  const ir::Graph& g0 = m.main();
  std::vector<size_t> wrt_inputs;
  for (const std::string& name : wrt_names)
    for (size_t k = 0; k < g0.inputs.size(); ++k)
      if (g0.tensors[static_cast<size_t>(g0.inputs[k])].name == name) wrt_inputs.push_back(k);
  if (wrt_inputs.size() != wrt_names.size()) return "a wrt name is not a graph input";
  const std::string loss_name = g0.tensors[static_cast<size_t>(g0.outputs[0])].name;
  auto grad_model = passes::gradient_model(m, {loss_name, wrt_names});
  if (!grad_model.ok()) return str_cat("gradient_model: ", grad_model.status().to_string());
  auto gs = session_for(std::move(grad_model).value());
  if (!gs.ok()) return str_cat("gradient session: ", gs.status().to_string());
  auto fs = session_for(m);
  if (!fs.ok()) return str_cat("forward session: ", fs.status().to_string());
  auto analytic = (*gs)->run(feeds);
  if (!analytic.ok()) return str_cat("running the gradient: ", analytic.status().to_string());

  auto loss_at = [&](const std::vector<Tensor>& f) -> Expected<double> {
    TSR_ASSIGN_OR_RETURN(std::vector<Tensor> out, (*fs)->run(f));
    return out[0].scalar_f64(0);
  };
  for (size_t w = 0; w < wrt_inputs.size(); ++w) {
    const Tensor base = feeds[wrt_inputs[w]];
    const Tensor& g = (*analytic)[g0.outputs.size() + w];
    if (g.shape() != base.shape())
      return str_cat(wrt_names[w], ": gradient shape ", shape_str(g.shape()), ", input shape ", shape_str(base.shape()));
    double worst = 0;
    std::string worst_msg;
    for (int64_t i = 0; i < base.numel(); ++i) {
      std::vector<Tensor> f = feeds;
      double v[2];
      for (int s = 0; s < 2; ++s) {
        std::vector<double> data(static_cast<size_t>(base.numel()));
        for (int64_t k = 0; k < base.numel(); ++k) data[static_cast<size_t>(k)] = base.scalar_f64(k);
        data[static_cast<size_t>(i)] += s == 0 ? step : -step;
        Tensor p = Tensor::from<double>(base.shape(), data);
        if (base.dtype() != DType::kF64) {
          std::vector<float> fdata(data.begin(), data.end());
          p = Tensor::from<float>(base.shape(), fdata);
        }
        f[wrt_inputs[w]] = p;
        auto l = loss_at(f);
        if (!l.ok()) return str_cat("finite difference run: ", l.status().to_string());
        v[s] = *l;
      }
      const double fd = (v[0] - v[1]) / (2 * step), an = g.scalar_f64(i);
      const double excess = std::abs(an - fd) - (atol + rtol * std::abs(fd));
      if (!(excess <= worst)) {
        worst = std::isnan(excess) ? INFINITY : excess;
        worst_msg = str_cat(wrt_names[w], "[", i, "]: analytic ", an, ", finite difference ", fd);
      }
    }
    if (!worst_msg.empty()) return worst_msg;
  }
  return "";
}

}  // namespace tsr::gradcheck

using namespace tsr;

TEST_CASE("gradient rules match central finite differences (float64)", "[grad]") {
  for (const auto& fam : gradcheck::families()) {
    for (const auto& c : fam.cases()) {
      INFO(fam.name << ": " << c.op << " " << c.label);
      CHECK(gradcheck::check(c) == "");
    }
  }
}
