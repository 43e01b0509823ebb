// The installed C++ API (tessera/tessera.h) from a consumer's point of view: load the model
// given on the command line, run it once on zero inputs whose dynamic dims are DIM (default 1),
// print the outputs. Usage: consumer_cpp [MODEL.tsr [DIM]]
#include <cstdlib>
#include <cstring>
#include <iostream>

#include "tessera/tessera.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cout << "consumer (C++): no model given; API version check only\n";
    return tsr::Model().empty() ? 0 : 1;
  }
  auto model = tsr::Model::load(argv[1]);
  if (!model.ok()) {
    std::cerr << "consumer (C++): " << model.status().message() << "\n";
    return 1;
  }
  const int64_t dynamic = argc > 2 ? std::atoll(argv[2]) : 1;
  tsr::NamedTensors inputs;
  for (const tsr::ValueInfo& in : model->inputs()) {
    tsr::Shape shape = in.shape;
    for (int64_t& d : shape) d = d < 0 ? dynamic : d;
    auto t = tsr::Tensor::empty(in.dtype, shape);
    if (!t.ok()) {
      std::cerr << "consumer (C++): " << in.str() << ": " << t.status().message() << "\n";
      return 1;
    }
    if (t->nbytes()) std::memset(t->raw_mut(), 0, t->nbytes());
    inputs.emplace_back(in.name, std::move(t).value());
  }
  auto session = tsr::Session::create(*model);
  if (!session.ok()) {
    std::cerr << "consumer (C++): " << session.status().message() << "\n";
    return 1;
  }
  auto outputs = (*session)->run(inputs);
  if (!outputs.ok()) {
    std::cerr << "consumer (C++): " << outputs.status().message() << "\n";
    return 1;
  }
  for (const auto& [name, value] : *outputs)
    std::cout << "consumer (C++): " << name << " " << tsr::dtype_name(value.dtype()) << tsr::shape_str(value.shape())
              << "\n";
  return outputs->empty() ? 1 : 0;
}
